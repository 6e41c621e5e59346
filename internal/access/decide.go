package access

import "github.com/shardstore/shardstore/internal/policy"

// Decision is the answer to a Request.
type Decision struct {
	Allowed bool
	// ExplicitDeny marks a refusal by a Deny statement (the identity's
	// policies or the bucket's), which no grant overrides; a refusal
	// because nothing grants the request has it false.
	ExplicitDeny bool
	// Reason is the rule that decided.
	Reason Reason
}

// Reason names the rule that decided a request, for tests, logs and the
// admin API's messages.
type Reason string

const (
	ReasonRoot           Reason = "root is allowed everything"
	ReasonIdentityPolicy Reason = "the identity's policies"
	ReasonBucketPolicy   Reason = "the bucket policy"
	ReasonBothPolicies   Reason = "the identity's policies and the bucket policy of another account"
	ReasonOtherAccount   Reason = "another account's bucket needs both the identity's policies and its bucket policy or ACL"
	ReasonPolicyAndACL   Reason = "the identity's policies and an ACL grant to its account"
	ReasonOutsideBounds  Reason = "the bucket policy or an ACL allows, but the access key's or session's policy does not"
	ReasonPublicPolicy   Reason = "RestrictPublicBuckets: a public policy grants only service principals and the bucket owner's account"
	ReasonOwner          Reason = "the owner"
	ReasonACLGrant       Reason = "an ACL grant"
	ReasonACLsDisabled   Reason = "BucketOwnerEnforced: ACLs are off and the bucket owner owns everything"
	ReasonWriteAllowed   Reason = "the write's own permission (no ACL permission covers this action)"
	ReasonOwnAccount     Reason = "a user of the users file acts in an account of its own"
	ReasonAnonymous      Reason = "anonymous callers have no account"
	ReasonNotIdentity    Reason = "only the root user and identities of the identity store have admin permissions"
	ReasonNoGrant        Reason = "nothing grants it"
	ReasonSelfService    Reason = "a user manages its own access keys with its own key"
	ReasonService        Reason = "a service principal has only what a bucket policy or an ACL grants it"
)

func allow(why Reason) Decision        { return Decision{Allowed: true, Reason: why} }
func deny(why Reason) Decision         { return Decision{Reason: why} }
func explicitDeny(why Reason) Decision { return Decision{ExplicitDeny: true, Reason: why} }

// Decide is the one access decision. It reads nothing but r: no HTTP
// request, no storage. The order of its stages is the package comment's.
func Decide(r Request) Decision {
	c := r.Caller
	switch {
	case c.Kind == Root:
		return allow(ReasonRoot)
	case r.Op == AdminAction || r.Op == AccountAction:
		return decideByIdentityAlone(&r)
	case c.Kind == Identity:
		pr := r.policyRequest()
		d := identityDecision(c, r.Op, &r.Resource, pr)
		if d.Allowed && r.Op == WriteObject && r.SetsACL {
			// Setting an ACL while writing is PutObjectAcl too, in AWS.
			acl := *pr
			acl.Action = "s3:PutObjectAcl"
			return identityDecision(c, r.Op, &r.Resource, &acl)
		}
		return d
	}
	// Anonymous callers, users of the users file and service principals:
	// the bucket policy, then ownership and ACLs.
	if r.Resource.Policy != nil {
		switch r.Resource.Policy.Evaluate(r.policyRequest()) {
		case policy.Denied:
			// The owner keeps control of the policy itself, so that a
			// policy cannot lock its owner out.
			if !(c.is(r.Resource.BucketOwner) && policyActions[r.Action]) {
				return explicitDeny(ReasonBucketPolicy)
			}
		case policy.Allowed:
			if policyGrantCounts(c, &r.Resource) {
				return allow(ReasonBucketPolicy)
			}
			if r.PartOfWrite {
				return allow(ReasonWriteAllowed)
			}
			return markRestricted(aclDecision(c, r.Op, &r.Resource))
		}
	}
	if r.PartOfWrite {
		return allow(ReasonWriteAllowed)
	}
	return aclDecision(c, r.Op, &r.Resource)
}

// markRestricted names RestrictPublicBuckets as the reason for a refusal
// that a public policy's Allow would have prevented.
func markRestricted(d Decision) Decision {
	if !d.Allowed {
		d.Reason = ReasonPublicPolicy
	}
	return d
}

// policyActions are the actions a bucket owner may always perform,
// whatever the bucket policy says.
var policyActions = map[string]bool{"s3:GetBucketPolicy": true, "s3:PutBucketPolicy": true,
	"s3:DeleteBucketPolicy": true, "s3:GetBucketPolicyStatus": true}

// decideByIdentityAlone decides an account or admin action: only an
// identity's policies speak to them (no bucket policy or ACL does).
func decideByIdentityAlone(r *Request) Decision {
	c := r.Caller
	if c.Kind != Identity {
		switch {
		case c.Kind == Service:
			return deny(ReasonService)
		case r.Op == AdminAction:
			return deny(ReasonNotIdentity)
		case c.Kind == Anonymous:
			return deny(ReasonAnonymous)
		}
		// A users-file user creates buckets and lists its own (the S3
		// layer shows it those it owns).
		return allow(ReasonOwnAccount)
	}
	if c.Permissions == nil {
		if r.Op == AdminAction && r.OwnAccessKeys {
			return allow(ReasonSelfService)
		}
		return deny(ReasonNoGrant)
	}
	switch c.Permissions.Evaluate(r.policyRequest()) {
	case policy.Allowed:
		return allow(ReasonIdentityPolicy)
	case policy.Denied:
		return explicitDeny(ReasonIdentityPolicy)
	}
	if r.Op == AdminAction && r.OwnAccessKeys {
		return allow(ReasonSelfService)
	}
	return deny(ReasonNoGrant)
}
