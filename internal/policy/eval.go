package policy

import "strings"

// Request is what a policy is evaluated against.
type Request struct {
	// Action is the S3 action, e.g. "s3:GetObject".
	Action string
	// Resource is the ARN acted on: "arn:aws:s3:::bucket" or
	// "arn:aws:s3:::bucket/key".
	Resource string
	// The caller: anonymous, or a user by access key (and canonical id);
	// Root marks the server's root user. Service, when set, is the AWS
	// service principal making the request (LoggingService writing a log
	// object): only "*" and that service's own Service principal name it.
	Anonymous   bool
	AccessKey   string
	CanonicalID string
	Root        bool
	Service     string
	// Conditions holds the request's condition key values by lower-cased
	// key ("aws:sourceip", "s3:prefix", "aws:username" ...); policy
	// variables are read from it too. An absent key is absent.
	Conditions map[string][]string
}

// Evaluate decides the request: Denied when a Deny statement matches,
// else Allowed when an Allow statement does, else NotApplicable.
func (p *Policy) Evaluate(r *Request) Decision {
	if p == nil {
		return NotApplicable
	}
	action := strings.ToLower(r.Action)
	d := NotApplicable
	for i := range p.Statements {
		st := &p.Statements[i]
		if (st.Effect == Allow && d == Allowed) || !st.matches(action, r) {
			continue
		}
		if st.Effect == Deny {
			return Denied
		}
		d = Allowed
	}
	return d
}

func (st *Statement) matches(action string, r *Request) bool {
	if st.principals != nil && st.principals.matches(r) == st.notPrincipal {
		return false
	}
	if anyMatch(st.actions, action, nil) == st.notAction {
		return false
	}
	if len(st.resources) > 0 && anyMatch(st.resources, r.Resource, r.Conditions) == st.notResource {
		return false
	}
	for i := range st.conditions {
		if !st.conditions[i].holds(r) {
			return false
		}
	}
	return true
}

func anyMatch(ps []pattern, s string, vars map[string][]string) bool {
	for _, p := range ps {
		if p.match(s, vars) {
			return true
		}
	}
	return false
}

// IsPublic reports whether the policy grants anything to everyone, the
// way S3's GetBucketPolicyStatus judges it: an Allow statement whose
// principal is "*" (or a NotPrincipal) that no condition pins to known
// callers (source IP ranges, VPCs, accounts, organizations).
func (p *Policy) IsPublic() bool {
	if p == nil {
		return false
	}
	for i := range p.Statements {
		st := &p.Statements[i]
		if st.Effect != Allow || st.principals == nil {
			continue
		}
		if !st.notPrincipal && !st.principals.public() {
			continue
		}
		if !st.restricted() {
			return true
		}
	}
	return false
}

// restrictingKeys are condition keys that confine a statement to known
// callers, so that a "*" principal under them is not public.
var restrictingKeys = map[string]bool{
	"aws:sourceip": true, "aws:sourcevpc": true, "aws:sourcevpce": true,
	"aws:sourcearn": true, "aws:sourceaccount": true, "aws:sourceowner": true,
	"aws:principalaccount": true, "aws:principalarn": true, "aws:principalorgid": true,
	"aws:userid": true, "aws:username": true, "s3:resourceaccount": true,
}

func (st *Statement) restricted() bool {
	for _, c := range st.conditions {
		if !restrictingKeys[c.key] || c.op.negate || c.set == forAllValues {
			continue
		}
		if c.op.family == famIP {
			for _, n := range c.nets {
				if n.Bits() == 0 {
					return false // 0.0.0.0/0 confines nobody
				}
			}
		}
		if c.op.family == famStringLike || c.op.family == famArnLike {
			for _, p := range c.patterns {
				if p.text == "*" {
					return false
				}
			}
		}
		return true
	}
	return false
}
