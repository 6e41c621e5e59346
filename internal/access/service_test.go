package access

import (
	"testing"

	"github.com/shardstore/shardstore/internal/policy"
)

// logger is the server access logging service writing into alice's "bkt".
var logger = ServiceCaller(policy.LoggingService)

// logWrite is the logging service's PutObject of "log/x" into r, on
// behalf of alice's bucket "src".
func logWrite(r Resource) Request {
	r.Key = "log/x"
	return Request{Caller: logger, Op: WriteObject, Action: "s3:PutObject", Resource: r,
		Conditions: ServiceConditions(policy.LoggingService, "src", alice)}
}

// TestServiceCaller: a service principal gets exactly what a bucket
// policy naming it (or everyone) or, for the logging service, a
// LogDelivery grant gives; it owns nothing and has no account.
func TestServiceCaller(t *testing.T) {
	withPolicy := func(doc string) Resource {
		r := bucketOf("private")
		r.Policy = bucketPolicy(t, doc)
		return r
	}
	logsPolicy := withPolicy(`{"Version":"2012-10-17","Statement":[{"Sid":"S3ServerAccessLogsPolicy","Effect":"Allow",
		"Principal":{"Service":"logging.s3.amazonaws.com"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::bkt/log/*",
		"Condition":{"ArnLike":{"aws:SourceArn":"arn:aws:s3:::src"},"StringEquals":{"aws:SourceAccount":"` + CanonicalID(alice) + `"}}}]}`)
	byAccessKey := withPolicy(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Principal":{"Service":"logging.s3.amazonaws.com"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::bkt/log/*",
		"Condition":{"StringEquals":{"aws:SourceAccount":"alice"}}}]}`)
	otherSource := logWrite(logsPolicy)
	otherSource.Conditions = ServiceConditions(policy.LoggingService, "elsewhere", alice)
	otherOwner := logWrite(logsPolicy)
	otherOwner.Conditions = ServiceConditions(policy.LoggingService, "src", bob)
	everyone := withPolicy(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::bkt/*"}]}`)
	awsNamed := withPolicy(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"logging.s3.amazonaws.com"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::bkt/*"}]}`)
	otherService := withPolicy(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"cloudtrail.amazonaws.com"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::bkt/*"}]}`)
	denied := withPolicy(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":{"Service":"logging.s3.amazonaws.com"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::bkt/*"},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::bkt/log/*"}]}`)

	logDelivery := bucketOf("private")
	logDelivery.BucketACL = []Grant{{To: LogDelivery, Perm: PermWrite}, {To: LogDelivery, Perm: PermReadACP}}
	authenticated := bucketOf("private")
	authenticated.BucketACL = []Grant{{To: AuthenticatedUsers, Perm: PermWrite}}
	enforced := logDelivery
	enforced.Ownership = BucketOwnerEnforced
	restricted := everyone
	restricted.PublicAccessBlock.RestrictPublicBuckets = true

	ask := func(op Operation, action string, r Resource) Request {
		return Request{Caller: logger, Op: op, Action: action, Resource: r}
	}
	run(t, []row{
		{"the logging policy", logWrite(logsPolicy), allowedBy(ReasonBucketPolicy)},
		{"SourceAccount by access key", logWrite(byAccessKey), allowedBy(ReasonBucketPolicy)},
		{"another source bucket", otherSource, deniedBy(ReasonNoGrant)},
		{"another source owner", otherOwner, deniedBy(ReasonNoGrant)},
		{"no policy", logWrite(bucketOf("private")), deniedBy(ReasonNoGrant)},
		{"Principal *", logWrite(everyone), allowedBy(ReasonBucketPolicy)},
		{"an AWS principal spelling the service", logWrite(awsNamed), deniedBy(ReasonNoGrant)},
		{"another service's principal", logWrite(otherService), deniedBy(ReasonNoGrant)},
		{"a Deny wins", logWrite(denied), explicitlyDeniedBy(ReasonBucketPolicy)},

		{"a LogDelivery WRITE grant", logWrite(logDelivery), allowedBy(ReasonACLGrant)},
		{"LogDelivery READ_ACP", ask(BucketACL, "s3:GetBucketAcl", logDelivery), allowedBy(ReasonACLGrant)},
		{"LogDelivery gives no READ", ask(ListBucket, "s3:ListBucket", logDelivery), deniedBy(ReasonNoGrant)},
		{"a service is no authenticated user", logWrite(authenticated), deniedBy(ReasonNoGrant)},
		{"a public-read-write bucket", logWrite(bucketOf("public-read-write")), allowedBy(ReasonACLGrant)},
		{"BucketOwnerEnforced: no grant counts", logWrite(enforced), deniedBy(ReasonACLsDisabled)},
		{"RestrictPublicBuckets spares services", logWrite(restricted), allowedBy(ReasonBucketPolicy)},

		{"owns no bucket", ask(BucketAdmin, "s3:PutBucketPolicy", bucketOf("public-read-write")), deniedBy(ReasonNoGrant)},
		{"owns no object", ask(PutObjectTagging, "s3:PutObjectTagging", objectOf("private", "", "private")), deniedBy(ReasonNoGrant)},
		{"no account actions", ask(AccountAction, "s3:CreateBucket", Resource{Bucket: "new"}), deniedBy(ReasonService)},
		{"no admin actions", ask(AdminAction, "admin:ServerInfo", Resource{}), deniedBy(ReasonService)},
	})

	// Another LogDelivery caller: only the logging service is the group.
	trail := logWrite(logDelivery)
	trail.Caller = ServiceCaller("cloudtrail.amazonaws.com")
	if d := Decide(trail); d.Allowed {
		t.Errorf("LogDelivery grants another service: %+v", d)
	}
	// A service never is an owner, whatever access key it is given.
	fake := logWrite(bucketOf("private"))
	fake.Caller.AccessKey = alice
	if d := Decide(fake); d.Allowed {
		t.Errorf("a service with the owner's access key: %+v", d)
	}
	if lw := logWrite(logsPolicy); !lw.NeedsConditions() {
		t.Error("a service request under a policy needs its conditions")
	}
}

// TestRestrictPublicBucketsAccounts: with RestrictPublicBuckets, a public
// policy grants only service principals and the bucket owner's account:
// the owner, identities of its account (within their bounds), not
// anonymous callers, other users or identities of other accounts.
func TestRestrictPublicBucketsAccounts(t *testing.T) {
	public := bucketPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"},
		{"Effect":"Allow","Principal":{"AWS":"bob"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::bkt/*"}]}`)
	own := objectOf("private", "root", "private")
	own.BucketOwner = "root" // a bucket of the identities' account
	own.Policy = public
	own.PublicAccessBlock.RestrictPublicBuckets = true
	other := objectOf("private", alice, "private")
	other.Policy = public
	other.PublicAccessBlock.RestrictPublicBuckets = true
	open := other
	open.PublicAccessBlock.RestrictPublicBuckets = false

	readAll := identityPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}`)
	noPolicies := identity("ivan", nil)
	bounded := identity("ivan", policies().Narrowed(identityPolicy(t,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:ListBucket","Resource":"*"}]}`)))
	withRead := identity("ivan", policies(readAll))

	run(t, []row{
		{"own account: an identity the policy grants", ask(noPolicies, ReadObject, "s3:GetObject", own), allowedBy(ReasonBucketPolicy)},
		{"own account: outside its bounds", ask(bounded, ReadObject, "s3:GetObject", own), deniedBy(ReasonOutsideBounds)},
		{"other account: even with its own Allow", ask(withRead, ReadObject, "s3:GetObject", other), deniedBy(ReasonPublicPolicy)},
		{"other account: unrestricted, both allow", ask(withRead, ReadObject, "s3:GetObject", open), allowedBy(ReasonBothPolicies)},
		{"anonymous", ask(anon, ReadObject, "s3:GetObject", other), deniedBy(ReasonPublicPolicy)},
		{"bob, named by a statement of a public policy", ask(bobC, WriteObject, "s3:PutObject", other), deniedBy(ReasonPublicPolicy)},
		{"bob, unrestricted", ask(bobC, WriteObject, "s3:PutObject", open), allowedBy(ReasonBucketPolicy)},
		{"the owner", ask(aliceC, ReadObject, "s3:GetObject", other), allowedBy(ReasonBucketPolicy)},
		{"root", ask(rootC, ReadObject, "s3:GetObject", other), allowedBy(ReasonRoot)},
		{"a service", Request{Caller: logger, Op: ReadObject, Action: "s3:GetObject", Resource: other}, allowedBy(ReasonBucketPolicy)},
	})
}
