package s3api

import (
	"strings"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
)

// Access control: every handler asks package access, through q.allows
// (bucketpolicy.go builds the question), whether its caller may do an
// operation on a resource. The rules (bucket policies over ACLs, owners,
// identities, the public access block, object lock and tagging) are
// access.Decide's; this file describes the resource from the bucket's
// and the object's records, and aclgrants.go reads and writes the ACLs
// whose grants it hands over.

// resource is what an access decision is about, as a handler knows it:
// the access.Resource (its Key empty: the request's own key), and what
// only the question's builder reads: an existing object's tags, for the
// s3:ExistingObjectTag condition keys, and the version id the request
// names for the object, if any (policy actions differ for one).
type resource struct {
	access.Resource
	ObjectTags map[string]string
	Version    string
	// ProbedKey, on the ListBucket question of a lookup that found no
	// object (missingObject), is the key looked up: policies see it as
	// s3:prefix, so a caller who may list that key learns it is missing.
	ProbedKey string
}

// bucketResource is the resource of a bucket operation (or of a write to
// the request's key, which only the bucket's grants decide).
func (q *request) bucketResource(bi engine.BucketInfo) resource {
	return resource{Resource: q.s.bucketResource(bi)}
}

// bucketResource is what access decisions read of bucket bi.
func (s *Server) bucketResource(bi engine.BucketInfo) access.Resource {
	return access.Resource{Bucket: bi.Name, BucketOwner: bi.Owner,
		BucketACL: s.aclGrants(bi.ACL, false), Policy: s.bucketPolicy(bi),
		Ownership: access.Ownership(objectOwnership(bi)), PublicAccessBlock: publicAccessBlockOf(bi)}
}

// objectResource is the resource of an operation on an existing object.
func (q *request) objectResource(bi engine.BucketInfo, oi engine.ObjectInfo) resource {
	r := q.bucketResource(bi)
	r.ObjectOwner, r.ObjectACL, r.Key, r.ObjectTags = oi.Owner, q.s.aclGrants(oi.ACL, true), oi.Key, oi.Tags
	return r
}

// ownsBucket reports whether the caller may see the bucket in ListBuckets:
// its owner, or root. Bucket policies play no part (the resource has
// none): ListAllMyBuckets is not a bucket action. (CreateBucket compares
// owners directly: root re-creating another user's bucket is told
// BucketAlreadyExists.)
func (q *request) ownsBucket(bi engine.BucketInfo) bool {
	return access.Decide(access.Request{Caller: q.caller.AccessCaller(), Op: access.BucketAdmin,
		Resource: access.Resource{Bucket: bi.Name, BucketOwner: bi.Owner}}).Allowed
}

// bucketAccess loads the bucket and checks the caller may do op on it (a
// bucket-level operation). A missing bucket answers NoSuchBucket, as S3
// does, before any denial.
func (q *request) bucketAccess(bucket string, op access.Operation) (engine.BucketInfo, error) {
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
func (q *request) objectAccess(bi engine.BucketInfo, key, version string, op access.Operation) (engine.ObjectInfo, error) {
	oi, err := q.s.cfg.Store.HeadObject(q.ctx, bi.Name, key, engine.GetOptions{VersionID: version})
	if err != nil {
		return oi, q.missingObject(bi, key, versionError(err, version))
	}
	r := q.objectResource(bi, oi)
	r.Version = version
	if !q.allows(op, r) {
		return oi, errAccessDenied()
	}
	return oi, nil
}

// missingObject turns a failed lookup of key into the answer S3 gives:
// the lookup's own error (NoSuchKey) to a caller who may list the bucket,
// AccessDenied to others. A policy granting s3:ListBucket on a prefix
// (StringLike s3:prefix "public/*") counts for the keys under it: the
// question is asked with s3:prefix set to the key, as listing with that
// prefix would tell the caller the same.
func (q *request) missingObject(bi engine.BucketInfo, key string, err error) error {
	r := q.bucketResource(bi)
	r.ProbedKey = key
	if !q.allows(access.ListBucket, r) {
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
