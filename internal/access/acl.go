package access

import "github.com/shardstore/shardstore/internal/policy"

// Permission is an ACL permission.
type Permission int

const (
	PermRead Permission = iota
	PermWrite
	PermReadACP
	PermWriteACP
	PermFullControl
)

// String is S3's name of the permission.
func (p Permission) String() string {
	switch p {
	case PermRead:
		return "READ"
	case PermWrite:
		return "WRITE"
	case PermReadACP:
		return "READ_ACP"
	case PermWriteACP:
		return "WRITE_ACP"
	case PermFullControl:
		return "FULL_CONTROL"
	}
	return ""
}

// Grantee is who an ACL grant names.
type Grantee int

const (
	AllUsers           Grantee = iota // everyone, anonymous requests included
	AuthenticatedUsers                // any signed request from a known user
	BucketOwnerGrantee                // the owner of the object's bucket (canned bucket-owner-* ACLs)
	CanonicalUser                     // one user, by canonical id (Grant.ID)
	LogDelivery                       // S3's log delivery group: the server access logging service (policy.LoggingService)
)

// Grant is one ACL grant.
type Grant struct {
	To   Grantee
	ID   string // the canonical user id, for CanonicalUser
	Perm Permission
}

// Public reports whether g opens the resource to callers S3 calls the
// public: everyone, or every authenticated user.
func (g Grant) Public() bool { return g.To == AllUsers || g.To == AuthenticatedUsers }

// Gives reports whether g gives permission p (FULL_CONTROL gives all).
func (g Grant) Gives(p Permission) bool { return g.Perm == p || g.Perm == PermFullControl }

// The grants of the canned ACLs, shared: callers must not change them.
var (
	publicRead       = []Grant{{To: AllUsers, Perm: PermRead}}
	publicReadWrite  = []Grant{{To: AllUsers, Perm: PermRead}, {To: AllUsers, Perm: PermWrite}}
	authRead         = []Grant{{To: AuthenticatedUsers, Perm: PermRead}}
	ownerRead        = []Grant{{To: BucketOwnerGrantee, Perm: PermRead}}
	ownerFullControl = []Grant{{To: BucketOwnerGrantee, Perm: PermFullControl}}
	logDeliveryWrite = []Grant{{To: LogDelivery, Perm: PermWrite}, {To: LogDelivery, Perm: PermReadACP}}
)

// CannedGrants lists what a canned ACL grants beyond the owner's
// FULL_CONTROL, per S3's "Canned ACL" table, in the order S3 lists them.
// onObject selects the object reading of the bucket-owner-* ACLs, which
// mean nothing on a bucket, and of log-delivery-write, which means
// nothing on an object.
// The slice is shared: callers must not change it.
func CannedGrants(acl string, onObject bool) []Grant {
	switch acl {
	case "public-read":
		return publicRead
	case "public-read-write":
		return publicReadWrite
	case "authenticated-read":
		return authRead
	case "bucket-owner-read":
		if onObject {
			return ownerRead
		}
	case "bucket-owner-full-control":
		if onObject {
			return ownerFullControl
		}
	case "log-delivery-write":
		if !onObject {
			return logDeliveryWrite
		}
	}
	// private, aws-exec-read (its READ goes to EC2, which is not a
	// caller here), and anything unknown.
	return nil
}

// holds reports whether grants gs give c the permission p: a grant to a
// group, to c's canonical id or, on objects, to the bucket owner
// (bucketOwner: c owns the object's bucket). ignorePublic
// (IgnorePublicAcls) drops the grants to AllUsers and AuthenticatedUsers.
func holds(gs []Grant, p Permission, c Caller, bucketOwner, ignorePublic bool) bool {
	id := ""
	for _, g := range gs {
		if !g.Gives(p) || (ignorePublic && g.Public()) {
			continue
		}
		switch g.To {
		case AllUsers:
			return true
		case AuthenticatedUsers:
			// Signed requests of users; a service principal is none.
			if c.Kind != Anonymous && c.Kind != Service {
				return true
			}
		case LogDelivery:
			if c.Kind == Service && c.Name == policy.LoggingService {
				return true
			}
		case BucketOwnerGrantee:
			if bucketOwner {
				return true
			}
		case CanonicalUser:
			if id == "" {
				// Computed once, and only when a grant names a user.
				if c.Kind == Anonymous || c.AccessKey == "" {
					continue
				}
				id = CanonicalID(c.AccessKey)
			}
			if g.ID == id {
				return true
			}
		}
	}
	return false
}

// aclDecision is the ownership and ACL stage: may c do op on r by
// ownership and ACL grants? Owners keep every permission on what they
// own whatever its ACL says. With BucketOwnerEnforced, ACLs are off: the
// bucket owner owns every object and no grant counts.
func aclDecision(c Caller, op Operation, r *Resource) Decision {
	bucketOwner := c.is(r.BucketOwner)
	if r.Ownership == BucketOwnerEnforced {
		if bucketOwner {
			return allow(ReasonOwner)
		}
		if op == ManageUpload && c.is(r.ObjectOwner) {
			return allow(ReasonOwner)
		}
		return deny(ReasonACLsDisabled)
	}
	objectOwner := r.ObjectOwner
	if objectOwner == "" {
		objectOwner = r.BucketOwner
	}
	ignorePublic := r.PublicAccessBlock.IgnorePublicAcls
	// ownerOr: the owner, or a grant of p in gs.
	ownerOr := func(owns bool, gs []Grant, p Permission) Decision {
		switch {
		case owns:
			return allow(ReasonOwner)
		case holds(gs, p, c, bucketOwner, ignorePublic):
			return allow(ReasonACLGrant)
		}
		return deny(ReasonNoGrant)
	}
	// ownerOnly: actions no ACL permission covers.
	ownerOnly := func(owns bool) Decision {
		if owns {
			return allow(ReasonOwner)
		}
		return deny(ReasonNoGrant)
	}
	switch op {
	case ListBucket:
		return ownerOr(bucketOwner, r.BucketACL, PermRead)
	case WriteObject:
		return ownerOr(bucketOwner, r.BucketACL, PermWrite)
	case BucketACL:
		return ownerOr(bucketOwner, r.BucketACL, PermReadACP)
	case PutBucketACL:
		return ownerOr(bucketOwner, r.BucketACL, PermWriteACP)
	case ReadObject:
		return ownerOr(c.is(objectOwner), r.ObjectACL, PermRead)
	case ObjectACL:
		return ownerOr(c.is(objectOwner), r.ObjectACL, PermReadACP)
	case PutObjectACL:
		return ownerOr(c.is(objectOwner), r.ObjectACL, PermWriteACP)
	case ObjectTagging, PutObjectTagging:
		// Tags: the object's owner only.
		return ownerOnly(c.is(objectOwner))
	case ManageUpload, ObjectRetention, PutObjectRetention, ObjectLegalHold, PutObjectLegalHold:
		// The upload's initiator or the object's owner, or the bucket's
		// (whose governance object lock is).
		return ownerOnly(bucketOwner || c.is(objectOwner))
	case BypassGovernance, BucketAdmin:
		return ownerOnly(bucketOwner)
	}
	return deny(ReasonNoGrant)
}
