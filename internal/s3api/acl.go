package s3api

import (
	"strings"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/policy"
)

// Access control follows S3's model of bucket policies over ACLs. A
// bucket policy is evaluated first (q.allows): an explicit Deny refuses,
// an Allow grants (RestrictPublicBuckets confines a public policy's to
// the bucket owner, publicaccess.go); when no statement applies the ACLs
// decide (aclAllows), canned or explicit grants (aclgrants.go), unless the
// bucket's ownership controls are BucketOwnerEnforced (ACLs off: the
// bucket owner owns everything, bucketconfig.go):
//
//   - A bucket's ACL governs the bucket: READ lets a grantee list it
//     (ListObjects, ListObjectVersions, ListMultipartUploads, HeadBucket);
//     WRITE lets a grantee create, overwrite and delete objects in it.
//   - An object's ACL governs reading the object: GetObject, HeadObject and
//     using it as a copy source need READ on the object itself. A bucket's
//     READ grant never opens an object, and owning the bucket does not
//     either: an object belongs to the user who wrote it.
//   - Owners have FULL_CONTROL of what they own. Only the bucket owner
//     deletes the bucket; the owner and READ_ACP / WRITE_ACP grantees
//     read and change an ACL (so the bucket owner may change an object's
//     when its ACL is bucket-owner-full-control). Grants to canonical
//     users name callers by canonicalID of their access key;
//     IgnorePublicAcls drops grants to AllUsers and AuthenticatedUsers.
//
// shardstore's simplifications, documented in the README: the root user
// is an administrator allowed everything (no policy denies it); a bucket
// policy applies to every object in the bucket, whoever wrote it; the
// bucket owner may always read, replace and delete the bucket policy, so
// a policy cannot lock its owner out; an ACL that leaves its owner out
// does not lock them out either; an object with no recorded owner
// (written anonymously into a public-read-write bucket) belongs to the
// bucket's owner; GetBucketLocation needs only bucket READ.

// cannedGrants lists what a canned ACL grants beyond the owner's
// FULL_CONTROL, per S3's "Canned ACL" table. onObject selects the object
// reading of the bucket-owner-* ACLs, which mean nothing on a bucket.
func cannedGrants(acl string, onObject bool) []grant {
	switch acl {
	case "public-read":
		return []grant{{to: allUsers, perm: permRead}}
	case "public-read-write":
		return []grant{{to: allUsers, perm: permRead}, {to: allUsers, perm: permWrite}}
	case "authenticated-read":
		return []grant{{to: authenticatedUsers, perm: permRead}}
	case "bucket-owner-read":
		if onObject {
			return []grant{{to: bucketOwnerGrantee, perm: permRead}}
		}
	case "bucket-owner-full-control":
		if onObject {
			return []grant{{to: bucketOwnerGrantee, perm: permFullControl}}
		}
	}
	// private, aws-exec-read (its READ goes to EC2, which is not a
	// caller here), and anything unknown.
	return nil
}

// operation is what a request does, as far as access control cares.
type operation int

const (
	// opListBucket: ListObjects(V2), ListObjectVersions,
	// ListMultipartUploads, HeadBucket, GetBucketLocation. Bucket READ.
	opListBucket operation = iota
	// opWriteObject: PutObject, DeleteObject, each key of DeleteObjects,
	// CopyObject's and UploadPartCopy's destination,
	// CreateMultipartUpload, UploadPart, CompleteMultipartUpload. Bucket
	// WRITE; the object's ACL plays no part.
	opWriteObject
	// opManageUpload: ListParts, AbortMultipartUpload. The bucket owner or
	// the upload's initiator (resource.ObjectOwner), as S3 allows by default.
	opManageUpload
	// opReadObject: GetObject, HeadObject, and reading an object as the
	// source of CopyObject or UploadPartCopy. Object READ.
	opReadObject
	// opObjectACL: GetObjectAcl. Object READ_ACP, which canned ACLs
	// give only with FULL_CONTROL.
	opObjectACL
	// opBucketAdmin: DeleteBucket and the bucket's configuration
	// (policy, CORS, ...). The bucket owner.
	opBucketAdmin
	// opPutObjectACL: PutObjectAcl. Object WRITE_ACP.
	opPutObjectACL
	// opBucketACL: GetBucketAcl. Bucket READ_ACP (the owner has it).
	opBucketACL
	// opPutBucketACL: PutBucketAcl. Bucket WRITE_ACP (the owner has it).
	opPutBucketACL
	// opObjectTagging: GetObjectTagging, and whether GET and HEAD show
	// x-amz-tagging-count. The object's owner: S3 maps no ACL permission
	// to the tagging actions, so grants (FULL_CONTROL included) give none.
	opObjectTagging
	// opPutObjectTagging: PutObjectTagging, DeleteObjectTagging, and the
	// tag half of a write that sets tags (checkTagWrite). The object's
	// owner, as opObjectTagging.
	opPutObjectTagging
	// opObjectRetention and opObjectLegalHold: GetObjectRetention,
	// GetObjectLegalHold, and whether GET and HEAD show a version's
	// x-amz-object-lock-* headers. opPutObjectRetention and
	// opPutObjectLegalHold: PutObjectRetention, PutObjectLegalHold, and
	// the object lock half of a write that sets them (checkLockWrite).
	// S3 maps no ACL permission to them: without a policy, the object's
	// owner or the bucket's (whose governance object lock is).
	opObjectRetention
	opPutObjectRetention
	opObjectLegalHold
	opPutObjectLegalHold
	// opBypassGovernance: s3:BypassGovernanceRetention, which lets a
	// request with x-amz-bypass-governance-retention weaken GOVERNANCE
	// retention. Without a policy, the bucket's owner only.
	opBypassGovernance
)

func (o operation) String() string {
	switch o {
	case opListBucket:
		return "list"
	case opWriteObject:
		return "write"
	case opManageUpload:
		return "manage-upload"
	case opReadObject:
		return "read"
	case opObjectACL:
		return "object-acl"
	case opBucketAdmin:
		return "bucket-admin"
	case opPutObjectACL:
		return "put-object-acl"
	case opBucketACL:
		return "bucket-acl"
	case opPutBucketACL:
		return "put-bucket-acl"
	case opObjectTagging:
		return "object-tagging"
	case opPutObjectTagging:
		return "put-object-tagging"
	case opObjectRetention:
		return "object-retention"
	case opPutObjectRetention:
		return "put-object-retention"
	case opObjectLegalHold:
		return "object-legal-hold"
	case opPutObjectLegalHold:
		return "put-object-legal-hold"
	case opBypassGovernance:
		return "bypass-governance"
	}
	return "unknown"
}

// resource is what an access decision is about: the bucket's owner and
// stored ACL and, for object operations, the object's (for
// opManageUpload, ObjectOwner is the upload's initiator). Bucket and Key
// name it for the bucket policy (Key empty: the request's own key), and
// Policy is the bucket's compiled policy, nil when it has none.
// Ownership is the bucket's ObjectOwnership setting and Access its
// public access block. ObjectTags are an existing object's tags, for the
// s3:ExistingObjectTag condition keys. Version is the version id the
// request names for the object, if any (policy actions differ for one).
type resource struct {
	BucketOwner, BucketACL string
	ObjectOwner, ObjectACL string
	ObjectTags             map[string]string
	Bucket, Key            string
	Version                string
	Policy                 *policy.Policy
	Ownership              string
	Access                 publicAccessBlock
}

// isUser reports whether c is the (non-anonymous) user with access key ak.
func isUser(c Caller, ak string) bool {
	return !c.Anonymous && c.AccessKey != "" && c.AccessKey == ak
}

// callerCanonicalID is the canonical id ACL grants name c by; "" for an
// anonymous caller.
func callerCanonicalID(c Caller) string {
	if c.Anonymous || c.AccessKey == "" {
		return ""
	}
	return canonicalID(c.AccessKey)
}

// holds reports whether a stored ACL gives c the permission p through a
// grant: to a group, to c's canonical id or, on objects, to the bucket
// owner. ignorePublic (IgnorePublicAcls) drops the grants to AllUsers
// and AuthenticatedUsers.
func (s *Server) holds(acl string, onObject bool, p permission, c Caller, bucketOwner, ignorePublic bool) bool {
	id := ""
	for _, g := range s.aclGrants(acl, onObject) {
		if !g.allows(p) || (ignorePublic && g.public()) {
			continue
		}
		switch g.to {
		case allUsers:
			return true
		case authenticatedUsers:
			if !c.Anonymous {
				return true
			}
		case bucketOwnerGrantee:
			if bucketOwner {
				return true
			}
		case canonicalUser:
			if id == "" {
				if id = callerCanonicalID(c); id == "" {
					continue
				}
			}
			if g.id == id {
				return true
			}
		}
	}
	return false
}

// aclAllows is the ACL half of the access decision: may caller c do op
// on r by ownership and ACL grants? Owners keep every permission on what
// they own whatever its ACL says. With BucketOwnerEnforced, ACLs are off:
// the bucket owner owns every object and no grant counts.
func (s *Server) aclAllows(c Caller, op operation, r resource) bool {
	if c.Root {
		return true
	}
	bucketOwner := isUser(c, r.BucketOwner)
	if r.Ownership == ownershipEnforced {
		if op == opManageUpload {
			return bucketOwner || isUser(c, r.ObjectOwner)
		}
		return bucketOwner
	}
	objectOwner := r.ObjectOwner
	if objectOwner == "" {
		objectOwner = r.BucketOwner
	}
	bucketHolds := func(p permission) bool {
		return s.holds(r.BucketACL, false, p, c, bucketOwner, r.Access.IgnorePublicAcls)
	}
	objectHolds := func(p permission) bool {
		return s.holds(r.ObjectACL, true, p, c, bucketOwner, r.Access.IgnorePublicAcls)
	}
	switch op {
	case opListBucket:
		return bucketOwner || bucketHolds(permRead)
	case opWriteObject:
		return bucketOwner || bucketHolds(permWrite)
	case opManageUpload:
		return bucketOwner || isUser(c, objectOwner)
	case opReadObject:
		return isUser(c, objectOwner) || objectHolds(permRead)
	case opObjectACL:
		return isUser(c, objectOwner) || objectHolds(permReadACP)
	case opPutObjectACL:
		return isUser(c, objectOwner) || objectHolds(permWriteACP)
	case opObjectTagging, opPutObjectTagging:
		return isUser(c, objectOwner)
	case opObjectRetention, opPutObjectRetention, opObjectLegalHold, opPutObjectLegalHold:
		return bucketOwner || isUser(c, objectOwner)
	case opBypassGovernance:
		return bucketOwner
	case opBucketACL:
		return bucketOwner || bucketHolds(permReadACP)
	case opPutBucketACL:
		return bucketOwner || bucketHolds(permWriteACP)
	case opBucketAdmin:
		return bucketOwner
	}
	return false
}

// bucketResource is the resource of a bucket operation (or of a write to
// the request's key, which only the bucket's grants decide).
func (q *request) bucketResource(bi engine.BucketInfo) resource {
	return resource{BucketOwner: bi.Owner, BucketACL: bi.ACL, Bucket: bi.Name, Policy: q.s.bucketPolicy(bi),
		Ownership: objectOwnership(bi), Access: publicAccessBlockOf(bi)}
}

// objectResource is the resource of an operation on an existing object.
func (q *request) objectResource(bi engine.BucketInfo, oi engine.ObjectInfo) resource {
	r := q.bucketResource(bi)
	r.ObjectOwner, r.ObjectACL, r.Key, r.ObjectTags = oi.Owner, oi.ACL, oi.Key, oi.Tags
	return r
}

// ownsBucket reports whether the caller may see the bucket in ListBuckets:
// its owner, or root. Bucket policies play no part: ListAllMyBuckets is
// not a bucket action. (CreateBucket compares owners directly: root
// re-creating another user's bucket is told BucketAlreadyExists.)
func (q *request) ownsBucket(bi engine.BucketInfo) bool {
	return q.s.aclAllows(q.caller, opBucketAdmin, resource{BucketOwner: bi.Owner, BucketACL: bi.ACL})
}

// bucketAccess loads the bucket and checks the caller may do op on it (a
// bucket-level operation). A missing bucket answers NoSuchBucket, as S3
// does, before any denial.
func (q *request) bucketAccess(bucket string, op operation) (engine.BucketInfo, error) {
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, bucket)
	if err != nil {
		return bi, err
	}
	if !q.allows(op, q.bucketResource(bi)) {
		return bi, errAccessDenied()
	}
	return bi, nil
}

// objectAccess checks the caller may do op on an existing object of bi
// (its version named version, "" for the current one), reading the
// version's owner and ACL. Like S3, a missing object answers NoSuchKey
// (or NoSuchVersion) only to a caller who may list the bucket, and
// AccessDenied to anyone else, so that existence does not leak.
func (q *request) objectAccess(bi engine.BucketInfo, key, version string, op operation) (engine.ObjectInfo, error) {
	oi, err := q.s.cfg.Store.HeadObject(q.ctx, bi.Name, key, engine.GetOptions{VersionID: version})
	if err != nil {
		return oi, q.missingObject(bi, versionError(err, version))
	}
	r := q.objectResource(bi, oi)
	r.Version = version
	if !q.allows(op, r) {
		return oi, errAccessDenied()
	}
	return oi, nil
}

// missingObject turns a failed object lookup into the answer S3 gives:
// the lookup's own error (NoSuchKey) to a caller who may list the bucket,
// AccessDenied to others.
func (q *request) missingObject(bi engine.BucketInfo, err error) error {
	if !q.allows(opListBucket, q.bucketResource(bi)) {
		return errAccessDenied()
	}
	return err
}

// ExpectedBucketOwner headers. The value is compared with the bucket
// owner's canonical id, as ListBuckets and Get*Acl report it in Owner/ID;
// the owner's access key is accepted as well.
const (
	hdrExpectedBucketOwner       = "X-Amz-Expected-Bucket-Owner"
	hdrSourceExpectedBucketOwner = "X-Amz-Source-Expected-Bucket-Owner"
)

// ownerMatches reports whether an expected-bucket-owner value names owner.
func ownerMatches(want, owner string) bool {
	return owner != "" && (want == canonicalID(owner) || want == owner)
}

// checkExpectedOwner answers AccessDenied when header names an expected
// bucket owner that is not bi's owner.
func (q *request) checkExpectedOwner(header string, bi engine.BucketInfo) error {
	want := strings.TrimSpace(q.r.Header.Get(header))
	if want == "" || ownerMatches(want, bi.Owner) {
		return nil
	}
	return errAccessDenied()
}

// expectedBucketOwner enforces x-amz-expected-bucket-owner on every
// bucket and object operation before its handler runs, so a mismatch
// changes nothing. CreateBucket takes no such parameter in S3 and is left
// out; a bucket that cannot be loaded is left to the handler to report.
func (q *request) expectedBucketOwner() error {
	if q.bucket == "" || q.api == "CreateBucket" || q.r.Header.Get(hdrExpectedBucketOwner) == "" {
		return nil
	}
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket)
	if err != nil {
		return nil //nolint:nilerr // the handler answers NoSuchBucket (or the store's error)
	}
	return q.checkExpectedOwner(hdrExpectedBucketOwner, bi)
}
