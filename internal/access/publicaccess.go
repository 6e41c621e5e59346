package access

import "github.com/shardstore/shardstore/internal/policy"

// PublicAccessBlock is a bucket's public access block; the zero value
// blocks nothing. The field names are S3's element names in a
// PublicAccessBlockConfiguration document. shardstore has no accounts,
// so there is no account-level block: the bucket's is the only one.
type PublicAccessBlock struct {
	// BlockPublicAcls refuses storing a public ACL (RefusesACL).
	BlockPublicAcls bool
	// IgnorePublicAcls makes the public grants of the bucket's and its
	// objects' ACLs count for nothing; they are still stored and shown.
	IgnorePublicAcls bool
	// BlockPublicPolicy refuses storing a public policy (RefusesPolicy).
	BlockPublicPolicy bool
	// RestrictPublicBuckets: while the bucket's policy is public, its
	// Allow statements grant only service principals and the bucket
	// owner's account (its owner, identities of its account; root needs
	// none): not anonymous callers, not other users or accounts, as S3
	// blocks all cross-account access to such a bucket.
	RestrictPublicBuckets bool
}

// RefusesACL reports whether the block refuses an ACL making grants gs
// on the bucket or an object in it: BlockPublicAcls refuses one that
// grants anything to AllUsers or AuthenticatedUsers (S3 answers 403
// AccessDenied).
func (b PublicAccessBlock) RefusesACL(gs []Grant) bool {
	if !b.BlockPublicAcls {
		return false
	}
	for _, g := range gs {
		if g.Public() {
			return true
		}
	}
	return false
}

// RefusesPolicy reports whether the block refuses bucket policy p:
// BlockPublicPolicy refuses one GetBucketPolicyStatus calls public.
func (b PublicAccessBlock) RefusesPolicy(p *policy.Policy) bool {
	return b.BlockPublicPolicy && p.IsPublic()
}

// policyGrantCounts reports whether an Allow of r's bucket policy grants
// c anything: always, except that RestrictPublicBuckets confines a
// public policy's grants to service principals and the bucket owner's
// account (S3: "only AWS service principals and authorized users within
// the bucket owner's account").
func policyGrantCounts(c Caller, r *Resource) bool {
	if !r.PublicAccessBlock.RestrictPublicBuckets || !r.Policy.IsPublic() {
		return true
	}
	switch c.Kind {
	case Service:
		return true
	case Identity:
		return r.BucketOwner == "" || r.BucketOwner == c.Account
	}
	return c.is(r.BucketOwner)
}
