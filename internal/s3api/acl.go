package s3api

import (
	"net/http"
	"strings"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/policy"
)

// Access control follows S3's model of bucket policies over ACLs (object
// ownership "ObjectWriter"), with canned ACLs only. A bucket policy is
// evaluated first (q.allows): an explicit Deny refuses, an Allow grants;
// when no statement applies the ACLs decide (aclAllows):
//
//   - A bucket's ACL governs the bucket: READ lets a grantee list it
//     (ListObjects, ListObjectVersions, ListMultipartUploads, HeadBucket);
//     WRITE lets a grantee create, overwrite and delete objects in it.
//   - An object's ACL governs reading the object: GetObject, HeadObject and
//     using it as a copy source need READ on the object itself. A bucket's
//     READ grant never opens an object, and owning the bucket does not
//     either: an object belongs to the user who wrote it.
//   - Owners have FULL_CONTROL of what they own. Only the bucket owner
//     deletes the bucket or reads and changes its ACL; only the object
//     owner reads and changes the object's ACL (or the bucket owner, when
//     the object's ACL is bucket-owner-full-control).
//
// shardstore's simplifications, documented in the README: the root user
// is an administrator allowed everything (no policy denies it); a bucket
// policy applies to every object in the bucket, whoever wrote it; the
// bucket owner may always read, replace and delete the bucket policy, so
// a policy cannot lock its owner out; an object with no recorded owner
// (written anonymously into a public-read-write bucket) belongs to the
// bucket's owner; GetBucketLocation needs only bucket READ.

// Canned ACLs S3 accepts. On a bucket, bucket-owner-read,
// bucket-owner-full-control and aws-exec-read grant nothing beyond the
// owner's FULL_CONTROL (S3 ignores the bucket-owner-* ones on buckets).
var cannedACLs = map[string]bool{
	"private": true, "public-read": true, "public-read-write": true,
	"authenticated-read": true, "aws-exec-read": true,
	"bucket-owner-read": true, "bucket-owner-full-control": true,
}

// parseCannedACL reads x-amz-acl; "" when absent. Explicit grant headers
// are not supported.
func parseCannedACL(h http.Header) (string, error) {
	for name := range h {
		if strings.HasPrefix(strings.ToLower(name), "x-amz-grant-") {
			return "", errNotImplemented("x-amz-grant-* headers (use a canned x-amz-acl)")
		}
	}
	acl := strings.TrimSpace(h.Get("X-Amz-Acl"))
	if acl == "" {
		return "", nil
	}
	if !cannedACLs[acl] {
		return "", errInvalidArgument("Invalid canned ACL %q", acl)
	}
	return acl, nil
}

// grantee is a class of callers an ACL grant names, besides the owner.
type grantee int

const (
	allUsers           grantee = iota // everyone, anonymous requests included
	authenticatedUsers                // any signed request from a known user
	bucketOwnerGrantee                // the owner of the object's bucket
)

// permission is an ACL permission.
type permission int

const (
	permRead permission = iota
	permWrite
	permFullControl
)

type grant struct {
	to   grantee
	perm permission
}

// cannedGrants lists what a canned ACL grants beyond the owner's
// FULL_CONTROL, per S3's "Canned ACL" table. onObject selects the object
// reading of the bucket-owner-* ACLs, which mean nothing on a bucket.
func cannedGrants(acl string, onObject bool) []grant {
	switch acl {
	case "public-read":
		return []grant{{allUsers, permRead}}
	case "public-read-write":
		return []grant{{allUsers, permRead}, {allUsers, permWrite}}
	case "authenticated-read":
		return []grant{{authenticatedUsers, permRead}}
	case "bucket-owner-read":
		if onObject {
			return []grant{{bucketOwnerGrantee, permRead}}
		}
	case "bucket-owner-full-control":
		if onObject {
			return []grant{{bucketOwnerGrantee, permFullControl}}
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
	// opObjectACL: Get/PutObjectAcl. Object READ_ACP / WRITE_ACP, which
	// canned ACLs give only with FULL_CONTROL.
	opObjectACL
	// opBucketAdmin: DeleteBucket, Get/PutBucketAcl. The bucket owner.
	opBucketAdmin
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
	}
	return "unknown"
}

// resource is what an access decision is about: the bucket's owner and
// canned ACL and, for object operations, the object's (for
// opManageUpload, ObjectOwner is the upload's initiator). Bucket and Key
// name it for the bucket policy (Key empty: the request's own key), and
// Policy is the bucket's compiled policy, nil when it has none.
type resource struct {
	BucketOwner, BucketACL string
	ObjectOwner, ObjectACL string
	Bucket, Key            string
	Policy                 *policy.Policy
}

// isUser reports whether c is the (non-anonymous) user with access key ak.
func isUser(c Caller, ak string) bool {
	return !c.Anonymous && c.AccessKey != "" && c.AccessKey == ak
}

// holds reports whether a canned ACL gives c the permission p, through a
// grant to a group or, on objects, to the bucket owner.
func holds(acl string, onObject bool, p permission, c Caller, bucketOwner bool) bool {
	for _, g := range cannedGrants(acl, onObject) {
		if g.perm != p && g.perm != permFullControl {
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
		}
	}
	return false
}

// aclAllows is the ACL half of the access decision: may caller c do op
// on r by ownership and canned ACL grants?
func aclAllows(c Caller, op operation, r resource) bool {
	if c.Root {
		return true
	}
	bucketOwner := isUser(c, r.BucketOwner)
	objectOwner := r.ObjectOwner
	if objectOwner == "" {
		objectOwner = r.BucketOwner
	}
	switch op {
	case opListBucket:
		return bucketOwner || holds(r.BucketACL, false, permRead, c, bucketOwner)
	case opWriteObject:
		return bucketOwner || holds(r.BucketACL, false, permWrite, c, bucketOwner)
	case opManageUpload:
		return bucketOwner || isUser(c, objectOwner)
	case opReadObject:
		return isUser(c, objectOwner) || holds(r.ObjectACL, true, permRead, c, bucketOwner)
	case opObjectACL:
		return isUser(c, objectOwner) || holds(r.ObjectACL, true, permFullControl, c, bucketOwner)
	case opBucketAdmin:
		return bucketOwner
	}
	return false
}

// bucketResource is the resource of a bucket operation (or of a write to
// the request's key, which only the bucket's grants decide).
func (q *request) bucketResource(bi engine.BucketInfo) resource {
	return resource{BucketOwner: bi.Owner, BucketACL: bi.ACL, Bucket: bi.Name, Policy: q.s.bucketPolicy(bi)}
}

// objectResource is the resource of an operation on an existing object.
func (q *request) objectResource(bi engine.BucketInfo, oi engine.ObjectInfo) resource {
	r := q.bucketResource(bi)
	r.ObjectOwner, r.ObjectACL, r.Key = oi.Owner, oi.ACL, oi.Key
	return r
}

// ownsBucket reports whether the caller may see the bucket in ListBuckets:
// its owner, or root. Bucket policies play no part: ListAllMyBuckets is
// not a bucket action. (CreateBucket compares owners directly: root
// re-creating another user's bucket is told BucketAlreadyExists.)
func (q *request) ownsBucket(bi engine.BucketInfo) bool {
	return aclAllows(q.caller, opBucketAdmin, resource{BucketOwner: bi.Owner, BucketACL: bi.ACL})
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

// objectAccess checks the caller may do op on an existing object of bi,
// reading the object's owner and ACL. Like S3, a missing object answers
// NoSuchKey only to a caller who may list the bucket, and AccessDenied to
// anyone else, so that existence does not leak.
func (q *request) objectAccess(bi engine.BucketInfo, key string, op operation) (engine.ObjectInfo, error) {
	oi, err := q.s.cfg.Store.HeadObject(q.ctx, bi.Name, key, engine.GetOptions{})
	if err != nil {
		return oi, q.missingObject(bi, err)
	}
	if !q.allows(op, q.objectResource(bi, oi)) {
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

// aclPolicy renders the ACL document of a bucket (object false) or an
// object: the owner's FULL_CONTROL and the canned ACL's grants.
// bucketOwner is the owner named by a bucket-owner-* object ACL.
func aclPolicy(owner, acl string, object bool, bucketOwner string) xmlACL {
	o := ownerOf(owner)
	const xsi = "http://www.w3.org/2001/XMLSchema-instance"
	user := func(u *xmlOwner, perm string) xmlGrant {
		return xmlGrant{Grantee: xmlGrantee{XMLNSXSI: xsi, Type: "CanonicalUser", ID: u.ID, DisplayName: u.DisplayName},
			Permission: perm}
	}
	group := func(uri, perm string) xmlGrant {
		return xmlGrant{Grantee: xmlGrantee{XMLNSXSI: xsi, Type: "Group", URI: uri}, Permission: perm}
	}
	p := xmlACL{NS: s3NS, Owner: o, Grants: []xmlGrant{user(o, "FULL_CONTROL")}}
	for _, g := range cannedGrants(acl, object) {
		perm := map[permission]string{permRead: "READ", permWrite: "WRITE", permFullControl: "FULL_CONTROL"}[g.perm]
		switch g.to {
		case allUsers:
			p.Grants = append(p.Grants, group("http://acs.amazonaws.com/groups/global/AllUsers", perm))
		case authenticatedUsers:
			p.Grants = append(p.Grants, group("http://acs.amazonaws.com/groups/global/AuthenticatedUsers", perm))
		case bucketOwnerGrantee:
			if bucketOwner != "" && bucketOwner != owner {
				p.Grants = append(p.Grants, user(ownerOf(bucketOwner), perm))
			}
		}
	}
	return p
}
