package policy

import (
	"encoding/json"
	"fmt"
	"strings"
)

// principalSet is who a statement's Principal names: everyone ("*",
// anonymous callers included), users by access key (from
// "arn:aws:iam::<account>:user/<access key>" or a bare access key), the
// root user ("arn:aws:iam::<account>:root"), canonical user ids, or AWS
// service principals ("Service": "logging.s3.amazonaws.com").
type principalSet struct {
	anyone    bool
	root      bool
	users     map[string]bool
	canonical map[string]bool
	services  map[string]bool
}

func parsePrincipal(v json.RawMessage) (*principalSet, error) {
	ps := &principalSet{users: map[string]bool{}, canonical: map[string]bool{}, services: map[string]bool{}}
	var s string
	if json.Unmarshal(v, &s) == nil {
		if s != "*" {
			return nil, fmt.Errorf("principal string must be *")
		}
		ps.anyone = true
		return ps, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil || len(m) == 0 {
		return nil, fmt.Errorf("principal must be * or an object")
	}
	for kind, raw := range m {
		vals, err := stringOrList(raw)
		if err != nil || len(vals) == 0 {
			return nil, fmt.Errorf("principal values")
		}
		for _, val := range vals {
			switch kind {
			case "AWS":
				if err := ps.addAWS(val); err != nil {
					return nil, err
				}
			case "CanonicalUser":
				if val == "" {
					return nil, fmt.Errorf("empty canonical user")
				}
				ps.canonical[val] = true
			case "Service":
				if !knownService(val) {
					return nil, fmt.Errorf("service principal %q", val)
				}
				ps.services[val] = true
			default:
				// Federated principals name callers this server never
				// has; refuse rather than ignore them.
				return nil, fmt.Errorf("principal type %q", kind)
			}
		}
	}
	return ps, nil
}

func (ps *principalSet) addAWS(v string) error {
	if v == "*" {
		ps.anyone = true
		return nil
	}
	if rest, ok := strings.CutPrefix(v, "arn:aws:iam::"); ok {
		_, name, ok := strings.Cut(rest, ":")
		switch {
		case !ok:
			return fmt.Errorf("iam arn %q", v)
		case name == "root":
			ps.root = true
		case strings.HasPrefix(name, "user/") && len(name) > len("user/"):
			// Users may sit under a path (user/path/name): the last
			// segment is the name.
			ps.users[name[strings.LastIndex(name, "/")+1:]] = true
		default:
			return fmt.Errorf("iam arn %q", v)
		}
		return nil
	}
	if v == "" || strings.ContainsAny(v, ":/*?") {
		return fmt.Errorf("principal %q", v)
	}
	ps.users[v] = true
	return nil
}

// matches reports whether the set names the request's caller. A service
// principal is named by "*" or by its own name, never by an "AWS" or
// "CanonicalUser" value.
func (ps *principalSet) matches(r *Request) bool {
	switch {
	case ps.anyone:
		return true
	case r.Service != "":
		return ps.services[r.Service]
	case r.Anonymous:
		return false
	case ps.root && r.Root:
		return true
	}
	return ps.users[r.AccessKey] || (r.CanonicalID != "" && ps.canonical[r.CanonicalID])
}

// Public reports whether the set is everyone.
func (ps *principalSet) public() bool { return ps != nil && ps.anyone }

// LoggingService is the service principal of S3 server access logging:
// the log objects it writes are requests of this principal, which a
// target bucket's policy grants s3:PutObject.
const LoggingService = "logging.s3.amazonaws.com"

// services are the AWS service principals a bucket policy may name: the
// services that read from or deliver into S3 buckets, as AWS documents
// their bucket policies. S3 refuses a service principal that does not
// exist ("Invalid principal in policy"), so a misspelt one is an error
// here too; of these only LoggingService ever makes a request to this
// server, the rest load so that documents written for AWS load
// unchanged and grant nobody.
var services = map[string]bool{}

func init() {
	for _, s := range strings.Fields(`
		logging.s3.amazonaws.com s3.amazonaws.com batchoperations.s3.amazonaws.com
		storage-lens.s3.amazonaws.com cloudtrail.amazonaws.com config.amazonaws.com
		delivery.logs.amazonaws.com logs.amazonaws.com logdelivery.elasticloadbalancing.amazonaws.com
		elasticloadbalancing.amazonaws.com cloudfront.amazonaws.com billingreports.amazonaws.com
		bcm-data-exports.amazonaws.com guardduty.amazonaws.com macie.amazonaws.com
		securityhub.amazonaws.com securitylake.amazonaws.com inspector2.amazonaws.com
		access-analyzer.amazonaws.com ssm.amazonaws.com firehose.amazonaws.com
		redshift.amazonaws.com ses.amazonaws.com sns.amazonaws.com sqs.amazonaws.com
		lambda.amazonaws.com athena.amazonaws.com glue.amazonaws.com backup.amazonaws.com
		storagegateway.amazonaws.com transfer.amazonaws.com datasync.amazonaws.com
		serverlessrepo.amazonaws.com cloudformation.amazonaws.com ec2.amazonaws.com
		elasticmapreduce.amazonaws.com sagemaker.amazonaws.com es.amazonaws.com
		kinesisanalytics.amazonaws.com dms.amazonaws.com rds.amazonaws.com
		export.rds.amazonaws.com iot.amazonaws.com`) {
		services[s] = true
	}
}

// knownService reports whether s is a service principal of services, or
// a regional one of CloudWatch Logs ("logs.<region>.amazonaws.com"),
// which exports log groups into buckets.
func knownService(s string) bool {
	if services[s] {
		return true
	}
	region, ok := strings.CutPrefix(s, "logs.")
	if !ok {
		return false
	}
	region, ok = strings.CutSuffix(region, ".amazonaws.com")
	return ok && regionName(region)
}

// regionName reports whether s has the form of an AWS region name:
// lower-case letters and digits in dash-separated parts, ending in a
// number ("us-east-1", "us-gov-west-1").
func regionName(s string) bool {
	parts := strings.Split(s, "-")
	if len(s) > 32 || len(parts) < 3 {
		return false
	}
	for i, p := range parts {
		if p == "" {
			return false
		}
		for _, c := range p {
			digit, letter := c >= '0' && c <= '9', c >= 'a' && c <= 'z'
			if (!digit && !letter) || (i == len(parts)-1 && !digit) {
				return false
			}
		}
	}
	return true
}
