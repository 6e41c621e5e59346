package access

import "github.com/shardstore/shardstore/internal/policy"

// Permissions are what an identity of the identity store may do: its
// user's and groups' policies, narrowed by the access key's or the
// session's own policy. IdentityPolicies is the identity store's.
type Permissions interface {
	// Evaluate is the identity side of an access decision: Denied when
	// any of the identity's policies denies, Allowed when they allow
	// and the narrowing policy (if any) allows as well.
	Evaluate(r *policy.Request) policy.Decision
	// Bounded reports whether the narrowing policy, if any, permits the
	// request; a grant by a bucket policy counts only when it does.
	Bounded(r *policy.Request) bool
}

// IdentityPolicies are Permissions as AWS evaluates an IAM principal's:
// a union of policies (a user's and its groups'), narrowed by bounds (an
// access key's own policy, session policies), every one of which must
// allow. Build one with Add and Narrowed; after that it is read-only and
// shared by every request of the identity.
type IdentityPolicies struct {
	// All marks a root session: everything its bounds allow.
	All      bool
	Policies []*policy.Policy
	Bounds   []*policy.Policy
}

// Add adds one of the identity's policies; nil (one that does not
// exist) adds nothing.
func (p *IdentityPolicies) Add(pol *policy.Policy) {
	if pol != nil {
		p.Policies = append(p.Policies, pol)
	}
}

// Narrowed returns p with one more bound, leaving p as it is.
func (p *IdentityPolicies) Narrowed(bound *policy.Policy) *IdentityPolicies {
	out := &IdentityPolicies{All: p.All, Policies: p.Policies}
	out.Bounds = append(append([]*policy.Policy(nil), p.Bounds...), bound)
	return out
}

// Evaluate implements Permissions: a Deny anywhere refuses, an Allow in
// the policies grants, and every bound must allow too.
func (p *IdentityPolicies) Evaluate(r *policy.Request) policy.Decision {
	d := policy.NotApplicable
	if p.All {
		d = policy.Allowed
	}
	for _, pol := range p.Policies {
		switch pol.Evaluate(r) {
		case policy.Denied:
			return policy.Denied
		case policy.Allowed:
			d = policy.Allowed
		}
	}
	for _, b := range p.Bounds {
		switch b.Evaluate(r) {
		case policy.Denied:
			return policy.Denied
		case policy.NotApplicable:
			if d == policy.Allowed {
				d = policy.NotApplicable
			}
		}
	}
	return d
}

// Bounded implements Permissions.
func (p *IdentityPolicies) Bounded(r *policy.Request) bool {
	for _, b := range p.Bounds {
		if b.Evaluate(r) != policy.Allowed {
			return false
		}
	}
	return true
}

// identityDecision decides pr (the policy question of op on r) for an
// identity as AWS does for an IAM principal ("How Amazon S3 authorizes a
// request"): a Deny in its policies or in the bucket's refuses. In its
// own account (a bucket its Account owns) an Allow in its policies
// grants, and so do, within the bounds of its access key's or session's
// own policy, an Allow in the bucket policy and an ACL grant to everyone
// (AllUsers, AuthenticatedUsers): the account's own FULL_CONTROL is the
// account's, which its identities use only through their policies. In a
// bucket of another owner (a users-file user, an account of its own)
// its policies must allow, and so must the resource: the bucket policy,
// or the ACLs as they answer the identity's account (a grant to its
// canonical id or to everyone, or the account owning the object).
func identityDecision(c Caller, op Operation, r *Resource, pr *policy.Request) Decision {
	mine, bucket := policy.NotApplicable, r.Policy.Evaluate(pr)
	if c.Permissions != nil {
		mine = c.Permissions.Evaluate(pr)
	}
	switch {
	case mine == policy.Denied:
		return explicitDeny(ReasonIdentityPolicy)
	case bucket == policy.Denied:
		return explicitDeny(ReasonBucketPolicy)
	case bucket == policy.Allowed && !policyGrantCounts(c, r):
		// RestrictPublicBuckets: another account's identity gets
		// nothing from a public policy.
		return deny(ReasonPublicPolicy)
	case r.BucketOwner != "" && r.BucketOwner != c.Account:
		switch {
		case mine != policy.Allowed:
		case bucket == policy.Allowed:
			return allow(ReasonBothPolicies)
		case aclDecision(Caller{Kind: User, AccessKey: c.Account, Name: c.Account}, op, r).Allowed:
			return allow(ReasonPolicyAndACL)
		}
		return deny(ReasonOtherAccount)
	case mine == policy.Allowed:
		return allow(ReasonIdentityPolicy)
	case bucket == policy.Allowed:
		if c.Permissions == nil || c.Permissions.Bounded(pr) {
			return allow(ReasonBucketPolicy)
		}
		return deny(ReasonOutsideBounds)
	case aclDecision(Caller{Kind: User}, op, r).Allowed:
		// A caller with no access key is no owner and no grantee by id:
		// only grants to everyone answer it.
		if c.Permissions == nil || c.Permissions.Bounded(pr) {
			return allow(ReasonACLGrant)
		}
		return deny(ReasonOutsideBounds)
	}
	return deny(ReasonNoGrant)
}
