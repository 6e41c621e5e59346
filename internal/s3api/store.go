package s3api

import (
	"context"
	"io"
	"net/http"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/objectlock"
)

// ObjectStore is the part of the object engine the HTTP layer calls.
// *engine.Engine satisfies it; handler tests use an in-memory fake.
type ObjectStore interface {
	Status() engine.Status

	MakeBucket(ctx context.Context, bucket string, opts engine.BucketOptions) error
	BucketInfo(ctx context.Context, bucket string) (engine.BucketInfo, error)
	ListBuckets(ctx context.Context) ([]engine.BucketInfo, error)
	DeleteBucket(ctx context.Context, bucket string) error
	SetBucketACL(ctx context.Context, bucket, acl string) error
	// SetBucketConfig replaces one configuration document of a bucket;
	// "" removes it.
	SetBucketConfig(ctx context.Context, bucket string, which engine.BucketConfig, doc string) error

	PutObject(ctx context.Context, bucket, key string, body io.Reader, size int64, opts engine.PutOptions) (engine.ObjectInfo, error)
	GetObject(ctx context.Context, bucket, key string, opts engine.GetOptions) (*engine.ObjectReader, error)
	HeadObject(ctx context.Context, bucket, key string, opts engine.GetOptions) (engine.ObjectInfo, error)
	DeleteObject(ctx context.Context, bucket, key string) error
	// DeleteObjectVersion deletes as S3 does in the bucket's versioning
	// state: a delete marker, or one version for good (opts.VersionID).
	DeleteObjectVersion(ctx context.Context, bucket, key string, opts engine.DeleteOptions) (engine.DeleteResult, error)
	// SetObjectACL replaces the ACL of a version ("": the current one).
	SetObjectACL(ctx context.Context, bucket, key, versionID, acl string) error
	// SetObjectTags replaces a version's tag set in place (nil removes
	// it); the version, ETag and Last-Modified stay as they are.
	SetObjectTags(ctx context.Context, bucket, key, versionID string, tags map[string]string) (engine.ObjectInfo, error)
	// SetObjectRetention replaces a version's retention in place
	// (r.Mode "" removes it) as the object lock rules allow: weakening
	// GOVERNANCE or changing its mode needs bypass, weakening COMPLIANCE
	// or changing its mode is never allowed
	// (engine.ErrObjectLocked); ErrObjectLockNotEnabled in a bucket
	// without object lock.
	SetObjectRetention(ctx context.Context, bucket, key, versionID string, r objectlock.Lock, bypass bool) (engine.ObjectInfo, error)
	// SetObjectLegalHold puts a version's legal hold ON or OFF in place.
	SetObjectLegalHold(ctx context.Context, bucket, key, versionID, status string) (engine.ObjectInfo, error)
	ListObjectVersions(ctx context.Context, bucket string, opts engine.ListVersionsOptions) (engine.ListVersionsResult, error)
	CopyObject(ctx context.Context, srcBucket, srcKey, dstBucket, dstKey string, opts engine.CopyOptions) (engine.ObjectInfo, error)
	ListObjects(ctx context.Context, bucket string, opts engine.ListOptions) (engine.ListResult, error)

	NewMultipartUpload(ctx context.Context, bucket, key string, opts engine.PutOptions) (string, error)
	PutObjectPart(ctx context.Context, bucket, key, uploadID string, part int, body io.Reader, size int64, opts engine.PartOptions) (engine.PartInfo, error)
	ListObjectParts(ctx context.Context, bucket, key, uploadID string, partMarker, maxParts int) (engine.ListPartsResult, error)
	CompleteMultipartUpload(ctx context.Context, bucket, key, uploadID string, parts []engine.CompletePart, opts engine.PutOptions) (engine.ObjectInfo, error)
	AbortMultipartUpload(ctx context.Context, bucket, key, uploadID string) error
	ListMultipartUploads(ctx context.Context, bucket string, opts engine.ListUploadsOptions) (engine.ListUploadsResult, error)
}

// compile-time check that the real engine fits the seam.
var _ ObjectStore = (*engine.Engine)(nil)

// Caller is who sent a request, as established by the Authenticator.
type Caller struct {
	Anonymous   bool
	AccessKey   string
	DisplayName string
	Root        bool
	// User, Owner and Permissions are set for identities of the
	// identity store (auth.Identity has their meaning): their access is
	// decided as AWS decides an IAM principal's, by their policies, the
	// bucket policy and the ACLs as they answer their account (see
	// package access), and what they create is owned by Owner.
	User        string
	Owner       string
	Permissions auth.Permissions
	// Session marks temporary credentials.
	Session bool
	// Claims are a federated identity's policy variables (auth.Identity).
	Claims map[string]string
}

// owner is the owner recorded for what the caller creates.
func (c Caller) owner() string {
	if c.Owner != "" {
		return c.Owner
	}
	return c.AccessKey
}

// principal is the name policies know the caller by (a user name, or
// the access key of a users-file user).
func (c Caller) principal() string {
	if c.User != "" {
		return c.User
	}
	return c.AccessKey
}

// AccessCaller is c as package access knows callers.
func (c Caller) AccessCaller() access.Caller {
	a := access.Caller{AccessKey: c.AccessKey, Name: c.principal(), Account: c.Owner, Permissions: c.Permissions}
	switch {
	case c.Root:
		a.Kind = access.Root
	case c.Permissions != nil:
		a.Kind = access.Identity
	case c.Anonymous:
		a.Kind = access.Anonymous
	default:
		a.Kind = access.User
	}
	return a
}

// AuthResult is an authenticated request: the caller and the body to read
// (already decoded from aws-chunked and verified, when that applies).
type AuthResult struct {
	Caller Caller
	// Body replaces the request body; nil means use the request's own.
	Body io.ReadCloser
	// ContentLength is the decoded body length, or -1 when unknown.
	ContentLength int64
	// Trailer returns trailing headers once Body has been read to EOF;
	// nil when the request has none.
	Trailer func() http.Header
	// PayloadSigned is set when the signature covers the body's SHA-256
	// (a hex x-amz-content-sha256, or signed aws-chunked chunks), which
	// Body verifies while it is read: an integrity check at least as
	// strong as Content-MD5.
	PayloadSigned bool
}

// Authenticator establishes who sent a request. Errors it returns should
// be *Error (an S3 error) so the client sees the right code; body read
// errors should be *Error too.
type Authenticator interface {
	Authenticate(r *http.Request) (*AuthResult, error)
}

// AuthenticatorFunc adapts a function to the Authenticator interface.
type AuthenticatorFunc func(r *http.Request) (*AuthResult, error)

// Authenticate calls f(r).
func (f AuthenticatorFunc) Authenticate(r *http.Request) (*AuthResult, error) { return f(r) }
