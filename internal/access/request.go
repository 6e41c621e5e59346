package access

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/shardstore/shardstore/internal/policy"
)

// Kind is what sort of caller a request comes from; it decides which
// rules apply (see the package comment).
type Kind int

const (
	// Anonymous is an unsigned request.
	Anonymous Kind = iota
	// User is a signed request of a user without Permissions: one of the
	// users file. Ownership, ACLs and bucket policies decide for it.
	User
	// Identity is a user, access key or session of the identity store:
	// its Permissions (identity policies) and bucket policies decide.
	Identity
	// Root is the server's root user, allowed everything.
	Root
	// Service is an AWS service principal acting on the server's behalf
	// (ServiceCaller): server access logging writing its log objects as
	// policy.LoggingService. It has no account and owns nothing: a bucket
	// policy naming it ({"Service": name} or "*") or, for the logging
	// service, a WRITE grant to the LogDelivery group lets it in.
	Service
)

func (k Kind) String() string {
	switch k {
	case Anonymous:
		return "anonymous"
	case User:
		return "user"
	case Identity:
		return "identity"
	case Root:
		return "root"
	case Service:
		return "service"
	}
	return "unknown"
}

// ServiceCaller is the caller of a request a service principal makes,
// e.g. ServiceCaller(policy.LoggingService) for a log object written
// into a target bucket. Its request names the resource as any other
// (Op WriteObject, Action "s3:PutObject") and carries the condition keys
// AWS sets for service requests (ServiceConditions).
func ServiceCaller(name string) Caller { return Caller{Kind: Service, Name: name} }

// ServiceConditions are the condition keys of a request service makes on
// behalf of a source bucket: aws:SourceArn (the source bucket's ARN),
// aws:SourceAccount (its owner, by canonical id and by access key, so a
// policy may name either), aws:PrincipalServiceName and
// aws:PrincipalIsAWSService.
func ServiceConditions(service, sourceBucket, sourceOwner string) map[string][]string {
	m := map[string][]string{
		"aws:principalservicename":  {service},
		"aws:principalisawsservice": {"true"},
		"aws:sourcearn":             {"arn:aws:s3:::" + sourceBucket},
	}
	if sourceOwner != "" {
		m["aws:sourceaccount"] = []string{CanonicalID(sourceOwner), sourceOwner}
	}
	return m
}

// Caller is who asks.
type Caller struct {
	Kind Kind
	// AccessKey is the key the request was signed with. Owners are
	// recorded by access key, and ACL grants name users by the
	// CanonicalID of one, so ownership and grants match callers by it.
	AccessKey string
	// Name is who policies know the caller by (a Principal's "AWS"
	// value, ${aws:username}): an identity's user name, else the access
	// key; for a Service caller, the service principal's name.
	Name string
	// Account, for an Identity, is the owner recorded for what it
	// creates (the root user's access key): a bucket of that owner is in
	// the identity's own account.
	Account string
	// Permissions, for an Identity, are its policies.
	Permissions Permissions
}

// CanonicalID is the canonical user id of the user with access key
// accessKey: what ListBuckets and Get*Acl show as Owner/ID and what ACL
// grants to a user name. It is a stable 64-hex-digit hash, so owner ids
// look like S3's without revealing the key.
func CanonicalID(accessKey string) string {
	sum := sha256.Sum256([]byte("shardstore-owner:" + accessKey))
	return hex.EncodeToString(sum[:])
}

// is reports whether c is the signed-in user with access key owner.
func (c Caller) is(owner string) bool {
	return c.Kind != Anonymous && c.Kind != Service && c.AccessKey != "" && c.AccessKey == owner
}

// Operation is what a request does, as far as ownership and ACLs care;
// the S3 action (Request.Action) names it for policies.
type Operation int

const (
	// ListBucket: ListObjects(V2), ListObjectVersions,
	// ListMultipartUploads, HeadBucket, GetBucketLocation. Bucket READ.
	ListBucket Operation = iota
	// WriteObject: PutObject, DeleteObject, each key of DeleteObjects,
	// CopyObject's and UploadPartCopy's destination,
	// CreateMultipartUpload, UploadPart, CompleteMultipartUpload. Bucket
	// WRITE; the object's ACL plays no part.
	WriteObject
	// ManageUpload: ListParts, AbortMultipartUpload. The bucket owner or
	// the upload's initiator (Resource.ObjectOwner), as S3 allows by
	// default.
	ManageUpload
	// ReadObject: GetObject, HeadObject, and reading an object as the
	// source of CopyObject or UploadPartCopy. Object READ.
	ReadObject
	// ObjectACL: GetObjectAcl. Object READ_ACP, which canned ACLs give
	// only with FULL_CONTROL.
	ObjectACL
	// BucketAdmin: DeleteBucket and the bucket's configuration (policy,
	// CORS, ...). The bucket owner.
	BucketAdmin
	// PutObjectACL: PutObjectAcl. Object WRITE_ACP.
	PutObjectACL
	// BucketACL: GetBucketAcl. Bucket READ_ACP (the owner has it).
	BucketACL
	// PutBucketACL: PutBucketAcl. Bucket WRITE_ACP (the owner has it).
	PutBucketACL
	// ObjectTagging: GetObjectTagging, and whether GET and HEAD show
	// x-amz-tagging-count. The object's owner: S3 maps no ACL permission
	// to the tagging actions, so grants (FULL_CONTROL included) give none.
	ObjectTagging
	// PutObjectTagging: PutObjectTagging, DeleteObjectTagging, and the
	// tag half of a write that sets tags (Request.PartOfWrite). The
	// object's owner, as ObjectTagging.
	PutObjectTagging
	// ObjectRetention and ObjectLegalHold: GetObjectRetention,
	// GetObjectLegalHold, and whether GET and HEAD show a version's
	// x-amz-object-lock-* headers. PutObjectRetention and
	// PutObjectLegalHold: PutObjectRetention, PutObjectLegalHold, and
	// the object lock half of a write that sets them. S3 maps no ACL
	// permission to them: without a policy, the object's owner or the
	// bucket's (whose governance object lock is).
	ObjectRetention
	PutObjectRetention
	ObjectLegalHold
	PutObjectLegalHold
	// BypassGovernance: s3:BypassGovernanceRetention, which lets a
	// request with x-amz-bypass-governance-retention weaken GOVERNANCE
	// retention. Without a policy, the bucket's owner only.
	BypassGovernance
	// AccountAction: an action on no bucket of its own (CreateBucket,
	// ListAllMyBuckets). An identity's policies alone decide.
	AccountAction
	// AdminAction: an "admin:" action of the admin API, on AdminResource.
	// An identity's policies alone decide.
	AdminAction
)

func (o Operation) String() string {
	switch o {
	case ListBucket:
		return "list"
	case WriteObject:
		return "write"
	case ManageUpload:
		return "manage-upload"
	case ReadObject:
		return "read"
	case ObjectACL:
		return "object-acl"
	case BucketAdmin:
		return "bucket-admin"
	case PutObjectACL:
		return "put-object-acl"
	case BucketACL:
		return "bucket-acl"
	case PutBucketACL:
		return "put-bucket-acl"
	case ObjectTagging:
		return "object-tagging"
	case PutObjectTagging:
		return "put-object-tagging"
	case ObjectRetention:
		return "object-retention"
	case PutObjectRetention:
		return "put-object-retention"
	case ObjectLegalHold:
		return "object-legal-hold"
	case PutObjectLegalHold:
		return "put-object-legal-hold"
	case BypassGovernance:
		return "bypass-governance"
	case AccountAction:
		return "account"
	case AdminAction:
		return "admin"
	}
	return "unknown"
}

// OnObject reports whether o acts on an object, whose ARN is the
// object's rather than the bucket's.
func (o Operation) OnObject() bool {
	switch o {
	case ReadObject, WriteObject, ManageUpload, ObjectACL, PutObjectACL, ObjectTagging, PutObjectTagging,
		ObjectRetention, PutObjectRetention, ObjectLegalHold, PutObjectLegalHold, BypassGovernance:
		return true
	}
	return false
}

// Ownership is a bucket's ObjectOwnership setting (its ownership
// controls).
type Ownership string

const (
	// ObjectWriter: the writer of an object owns it; ACLs apply. A
	// bucket without ownership controls is ObjectWriter here.
	ObjectWriter Ownership = "ObjectWriter"
	// BucketOwnerPreferred: as ObjectWriter for access; it changes only
	// who owns new objects, which the S3 layer decides as it writes them.
	BucketOwnerPreferred Ownership = "BucketOwnerPreferred"
	// BucketOwnerEnforced: ACLs are off. The bucket owner owns every
	// object and no grant counts.
	BucketOwnerEnforced Ownership = "BucketOwnerEnforced"
)

// Resource is what a request acts on, with everything stored about it
// that a decision reads.
type Resource struct {
	// Bucket and Key name it in ARNs: a bucket operation's resource is
	// arn:aws:s3:::Bucket, an object operation's arn:aws:s3:::Bucket/Key,
	// an account action's the bucket's, or arn:aws:s3:::* for none.
	Bucket, Key string
	// BucketOwner and ObjectOwner are access keys. ObjectOwner is the
	// object's owner (for ManageUpload, the upload's initiator); "" for
	// an object means the bucket owner's (one written anonymously).
	BucketOwner, ObjectOwner string
	// BucketACL and ObjectACL are the grants of the stored ACLs beside
	// the owner's own FULL_CONTROL (see CannedGrants).
	BucketACL, ObjectACL []Grant
	// Policy is the bucket's policy, nil when it has none.
	Policy *policy.Policy
	// Ownership is the bucket's ObjectOwnership ("" is ObjectWriter).
	Ownership Ownership
	// PublicAccessBlock is the bucket's public access block.
	PublicAccessBlock PublicAccessBlock
}

// Request is one access question: may Caller perform Action (Op) on
// Resource, given the request's condition keys?
type Request struct {
	Caller Caller
	Op     Operation
	// Action is the action policies are asked about, as AWS's service
	// authorization reference names it ("s3:GetObject",
	// "s3:GetObjectVersion" when a version is named, "admin:Heal").
	Action   string
	Resource Resource
	// Conditions are the request's condition key values by lower-cased
	// name ("aws:sourceip", "s3:prefix", ...; see policy.Request). They
	// are read only when a policy is evaluated (NeedsConditions).
	Conditions map[string][]string
	// SetsACL marks a WriteObject that also sets the object's ACL
	// (x-amz-acl, x-amz-grant-*): AWS asks an identity for
	// s3:PutObjectAcl besides.
	SetsACL bool
	// PartOfWrite marks the second action of a write that also sets
	// something with an action of its own (tags, a retention, a legal
	// hold), asked after the write itself was allowed: ACLs grant none of
	// these actions, so where no policy speaks the write's own permission
	// is enough.
	PartOfWrite bool
	// OwnAccessKeys marks an admin call that manages access keys of the
	// caller's own user (lists them, creates one for itself, removes
	// one), made with that user's own long-term key, not a session or
	// another access key: self-service, allowed where no policy speaks
	// (a Deny still refuses). The admin API tells what a call manages.
	OwnAccessKeys bool
}

// NeedsConditions reports whether Decide evaluates a policy for r, and
// so reads r.Conditions. Condition keys cost allocations (times, header
// copies), so builders compute them only then.
func (r *Request) NeedsConditions() bool {
	switch {
	case r.Caller.Kind == Root:
		return false
	case r.Caller.Kind == Identity:
		return true
	case r.Op == AccountAction || r.Op == AdminAction:
		return false // only identities have policies for these
	}
	return r.Resource.Policy != nil
}

// AdminResource is the resource admin actions are evaluated on. Admin
// actions act on the server, not on S3 resources: a statement on
// "arn:aws:s3:::*" does not reach them, "*" (or no Resource) does.
const AdminResource = "arn:shardstore:admin:::server"

// arn is the resource policies see.
func (r *Request) arn() string {
	switch {
	case r.Op == AdminAction:
		return AdminResource
	case r.Op == AccountAction && r.Resource.Bucket == "":
		return "arn:aws:s3:::*"
	case r.Op.OnObject():
		return "arn:aws:s3:::" + r.Resource.Bucket + "/" + r.Resource.Key
	}
	return "arn:aws:s3:::" + r.Resource.Bucket
}

// policyRequest is r as package policy evaluates it.
func (r *Request) policyRequest() *policy.Request {
	c := r.Caller
	pr := &policy.Request{Action: r.Action, Resource: r.arn(), Anonymous: c.Kind == Anonymous, AccessKey: c.Name,
		Root: c.Kind == Root, Conditions: r.Conditions}
	switch {
	case c.Kind == Service:
		// A service is named by its service principal only.
		pr.AccessKey, pr.Service = "", c.Name
	case c.Kind != Anonymous && r.Op != AdminAction:
		// Admin actions never had canonical ids: identity policies name
		// no principals, so nothing reads it there.
		pr.CanonicalID = CanonicalID(c.Name)
	}
	return pr
}
