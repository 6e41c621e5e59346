package engine

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/shardstore/shardstore/internal/objectlock"
	"github.com/shardstore/shardstore/internal/sse"
)

// Errors returned by the engine. Callers match them with errors.Is; the
// s3api layer maps each to its S3 error code.
var (
	ErrInvalidBucketName   = errors.New("invalid bucket name")
	ErrBucketNotFound      = errors.New("bucket not found")
	ErrBucketExists        = errors.New("bucket already exists")
	ErrBucketNotEmpty      = errors.New("bucket not empty")
	ErrInvalidObjectName   = errors.New("invalid object name")
	ErrObjectNotFound      = errors.New("object not found")
	ErrInvalidRange        = errors.New("requested range not satisfiable")
	ErrPreconditionFailed  = errors.New("precondition failed")
	ErrNotModified         = errors.New("not modified")
	ErrWriteQuorum         = errors.New("write quorum not available")
	ErrReadQuorum          = errors.New("read quorum not available")
	ErrBadDigest           = errors.New("content-md5 does not match the body")
	ErrChecksumMismatch    = errors.New("checksum does not match the body")
	ErrIncompleteBody      = errors.New("body shorter than declared length")
	ErrEntityTooLarge      = errors.New("object larger than allowed")
	ErrEntityTooSmall      = errors.New("part smaller than the minimum part size")
	ErrNoSuchUpload        = errors.New("multipart upload not found")
	ErrInvalidPart         = errors.New("part not found or etag mismatch")
	ErrInvalidPartOrder    = errors.New("parts not in ascending order")
	ErrInvalidPartNumber   = errors.New("part number out of range")
	ErrInvalidArgument     = errors.New("invalid argument")
	ErrStorageFull         = errors.New("not enough free space on write quorum drives")
	ErrMalformedCompletion = errors.New("malformed multipart completion")
	ErrBusy                = errors.New("object is busy; retry")
	// ErrNoSuchVersion: a versionId that names no version of the key.
	ErrNoSuchVersion = errors.New("version not found")
	// ErrMethodNotAllowed: GET or HEAD of a version that is a delete
	// marker (S3 answers 405 with x-amz-delete-marker).
	ErrMethodNotAllowed = errors.New("the version is a delete marker")
	// ErrObjectLocked: a retention or legal hold forbids removing the
	// version or weakening its retention (S3: 403 AccessDenied). It is
	// objectlock.ErrLocked, so errors.Is matches either name.
	ErrObjectLocked = objectlock.ErrLocked
	// ErrObjectLockNotEnabled: a retention or legal hold asked for in a
	// bucket without object lock (S3: 400 InvalidRequest).
	ErrObjectLockNotEnabled = errors.New("bucket is missing object lock configuration")
	// ErrEncrypted: reading or adding to encrypted data without its key
	// (no Unseal function was given).
	ErrEncrypted = errors.New("object is encrypted and no key was given")
	// ErrDataAuth: encrypted data that does not authenticate under its
	// key: tampered with beyond what the bitrot checks and parity
	// repair, or unsealed with a wrong key. No byte of it is returned.
	ErrDataAuth = errors.New("encrypted object data does not authenticate")
	// ErrInvalidBucketState: the bucket's state forbids the change
	// (object lock needs versioning Enabled and keeps it so; S3: 409).
	ErrInvalidBucketState = errors.New("invalid bucket state")
)

// DeleteMarkerError is returned when the version a read resolves is a
// delete marker: Err is ErrObjectNotFound when the key's current version
// is one (no versionId asked), ErrMethodNotAllowed when the versionId
// asked for names one. Marker describes the delete marker, so the S3
// layer can send x-amz-delete-marker and x-amz-version-id.
type DeleteMarkerError struct {
	Marker ObjectInfo
	Err    error
}

func (e *DeleteMarkerError) Error() string {
	return fmt.Sprintf("%s/%s: delete marker %s: %v", e.Marker.Bucket, e.Marker.Key, e.Marker.VersionID, e.Err)
}

func (e *DeleteMarkerError) Unwrap() error { return e.Err }

// ChecksumError is a checksum the client sent that the data does not
// have; it matches ErrChecksumMismatch (S3: 400 BadDigest). Algorithm
// is the checksum's (canonical) name. Part is the number of the
// CompleteMultipartUpload entry whose checksum is of another algorithm
// than its upload's, 0 otherwise; Complete marks a completion's
// whole-object checksum, whose S3 message differs from a body's.
type ChecksumError struct {
	Algorithm string
	Part      int
	Complete  bool
	Detail    string // sent and computed values, for logs
}

func (e *ChecksumError) Error() string {
	what := e.Algorithm
	if e.Part > 0 {
		what = fmt.Sprintf("%s of part %d", what, e.Part)
	}
	return fmt.Sprintf("%v: %s: %s", ErrChecksumMismatch, what, e.Detail)
}

func (e *ChecksumError) Unwrap() error { return ErrChecksumMismatch }

// ErrChecksumUse: a multipart request whose checksum algorithm or type
// is not its upload's (see UploadChecksumError).
var ErrChecksumUse = errors.New("checksum does not fit the upload")

// Why an UploadChecksumError refused a request.
const (
	// ChecksumPartAlgorithm: a part sent with a checksum of another
	// algorithm than its upload's.
	ChecksumPartAlgorithm = iota + 1
	// ChecksumCompleteType: a completion naming another checksum type
	// than its upload's.
	ChecksumCompleteType
	// ChecksumPartMissing: a completion of a COMPOSITE upload without
	// the checksum of part Part.
	ChecksumPartMissing
)

// UploadChecksumError is a multipart request whose checksum does not fit
// its upload; it matches ErrChecksumUse (S3: 400 InvalidRequest).
// Algorithm and Type are the upload's ("" when it has none); Sent is
// the algorithm or type the request named.
type UploadChecksumError struct {
	Reason          int
	Algorithm, Type string
	Sent            string
	Part            int
}

func (e *UploadChecksumError) Error() string {
	switch e.Reason {
	case ChecksumPartAlgorithm:
		return fmt.Sprintf("%v: part sent with %s, upload uses %s", ErrChecksumUse, e.Sent, e.Algorithm)
	case ChecksumCompleteType:
		return fmt.Sprintf("%v: completion names type %s, upload has %q", ErrChecksumUse, e.Sent, e.Type)
	default:
		return fmt.Sprintf("%v: completion lacks the %s checksum of part %d", ErrChecksumUse, e.Algorithm, e.Part)
	}
}

func (e *UploadChecksumError) Unwrap() error { return ErrChecksumUse }

// Bucket versioning states (BucketInfo.Versioning). A bucket that never
// had versioning configured has "" and can never return to it.
const (
	VersioningEnabled   = "Enabled"
	VersioningSuspended = "Suspended"
)

// NullVersionID is how S3 names the version that unversioned writes and
// writes to a suspended bucket create; engine values use "" for it and
// accept both spellings as input.
const NullVersionID = "null"

// Limits S3 imposes that the engine enforces.
const (
	MaxObjectSize  = 5 << 40 // 5 TiB
	MaxPutSize     = 5 << 30 // 5 GiB for a single PUT or part
	MinPartSize    = 5 << 20 // 5 MiB, every part but the last
	MaxPartNumber  = 10000
	MaxKeyLength   = 1024
	MaxUserMetaLen = 2 << 10 // S3: 2 KiB of user metadata
	MaxObjectTags  = 10      // S3: at most 10 tags per object
)

// BucketInfo describes one bucket.
type BucketInfo struct {
	Name    string
	Created time.Time
	Owner   string // access key of the creating user
	ACL     string // the S3 layer's ACL: a canned ACL name, or a grant list it encoded
	// Location is the region the bucket was created in (its
	// LocationConstraint, e.g. "eu-west-1"); empty for buckets created
	// before regions were recorded, which belong to the server's region.
	Location string
	// CORS, OwnershipControls and Website are the bucket's configuration
	// documents (see BucketConfig) exactly as the S3 layer stored them;
	// empty when none is set. The engine does not interpret them.
	CORS              string
	OwnershipControls string
	Website           string
	// Policy is the bucket policy (JSON) as the S3 layer stored it.
	Policy string
	// PublicAccessBlock is the bucket's PublicAccessBlockConfiguration
	// as the S3 layer stored it; empty when none is set.
	PublicAccessBlock string
	// Tagging is the bucket's tag set (a Tagging document) as the S3
	// layer stored it; empty when the bucket has no tags.
	Tagging string
	// Lifecycle is the bucket's LifecycleConfiguration (canonical form,
	// internal/lifecycle) as the S3 layer stored it; empty when none is
	// set. The lifecycle runner acts on it (internal/lifecycle/runner.go).
	Lifecycle string
	// Versioning is the bucket's versioning state: "" (never
	// configured), VersioningEnabled or VersioningSuspended. Set with
	// SetBucketConfig(BucketConfigVersioning, state); "" cannot be set
	// again once a state was.
	Versioning string
	// ObjectLock is the bucket's ObjectLockConfiguration in canonical
	// form (objectlock.Config.Marshal); non-empty exactly when object
	// lock is enabled, which it stays for the bucket's life. Versioning
	// is Enabled whenever it is set.
	ObjectLock string
	// Encryption is the bucket's default encryption (a
	// ServerSideEncryptionConfiguration) as the S3 layer stored it.
	Encryption string
	// Logging is the bucket's server access logging configuration (a
	// BucketLoggingStatus with LoggingEnabled) as the S3 layer stored
	// it; empty when logging is off.
	Logging string
	// Notification is the bucket's event notification configuration (a
	// NotificationConfiguration, canonical form) as the S3 layer stored
	// it; empty when no event is sent.
	Notification string
}

// ObjectLockConfig is the bucket's parsed object lock configuration and
// whether object lock is enabled on it.
func (b BucketInfo) ObjectLockConfig() (objectlock.Config, bool, error) {
	if b.ObjectLock == "" {
		return objectlock.Config{}, false, nil
	}
	c, err := objectlock.ParseStored(b.ObjectLock)
	return c, err == nil, err
}

// BucketConfig names a bucket configuration document kept in the bucket
// record (SetBucketConfig).
type BucketConfig string

// The bucket configuration documents.
const (
	BucketConfigCORS              BucketConfig = "cors"
	BucketConfigOwnershipControls BucketConfig = "ownershipControls"
	BucketConfigWebsite           BucketConfig = "website"
	BucketConfigPolicy            BucketConfig = "policy"
	BucketConfigPublicAccessBlock BucketConfig = "publicAccessBlock"
	BucketConfigTagging           BucketConfig = "tagging"
	BucketConfigLifecycle         BucketConfig = "lifecycle"
	BucketConfigVersioning        BucketConfig = "versioning"
	BucketConfigEncryption        BucketConfig = "encryption"
	BucketConfigLogging           BucketConfig = "logging"
	BucketConfigNotification      BucketConfig = "notification"
	// BucketConfigObjectLock takes a canonical ObjectLockConfiguration
	// (objectlock.Config.Marshal("")): on a bucket with versioning
	// Enabled it turns object lock on, or replaces the default
	// retention. It can never be removed (ErrInvalidBucketState).
	BucketConfigObjectLock BucketConfig = "objectLock"
)

// BucketOptions are the settings for MakeBucket.
type BucketOptions struct {
	Owner string
	ACL   string
	// Location is the region to record for the bucket; empty records none.
	Location string
	// OwnershipControls is the bucket's first ownership controls document
	// (BucketInfo.OwnershipControls), stored with the bucket's record so
	// that the bucket never exists without it; empty stores none.
	OwnershipControls string
	// ObjectLock creates the bucket with object lock enabled (and so
	// with versioning Enabled), without a default retention.
	ObjectLock bool
}

// ObjectInfo is everything known about an object version.
type ObjectInfo struct {
	Bucket       string
	Key          string
	Size         int64
	ETag         string // without quotes
	ModTime      time.Time
	ContentType  string
	StorageClass string // STANDARD or REDUCED_REDUNDANCY
	Owner        string
	ACL          string
	// Headers holds the stored system headers that round-trip:
	// Content-Encoding, Content-Disposition, Content-Language,
	// Cache-Control, Expires. Keys are canonical header names.
	Headers map[string]string
	// UserMeta holds x-amz-meta-* values, keys lower-case without prefix.
	UserMeta map[string]string
	// Tags is the object's tag set (key → value); nil when it has none.
	Tags map[string]string
	// Checksum is the S3 flexible checksum stored with the object, if any.
	Checksum Checksum
	// Parts lists part sizes for multipart objects (PartNumber order).
	Parts []ObjectPart
	// DataShards and ParityShards record the erasure geometry used.
	DataShards, ParityShards int
	// VersionID is the S3 version id; "" is the null version (written
	// while the bucket was unversioned or suspended). The S3 layer spells
	// it "null" where versioning is configured.
	VersionID string
	// DeleteMarker marks a delete marker (no data, no metadata).
	DeleteMarker bool
	// IsLatest is set when this is the key's current version (answers
	// of ListObjectVersions and of reads by versionId).
	IsLatest bool
	// Lock is the version's retention and legal hold (zero: none).
	Lock objectlock.Lock
	// Cipher is set when the version is encrypted at rest (sse names
	// it); Sealed is what the S3 layer stored to recover its key.
	Cipher string
	Sealed map[string]string
}

// ObjectPart is one part of a completed multipart object.
type ObjectPart struct {
	Number   int
	Size     int64
	ETag     string
	Checksum string // base64 value of the part's checksum, if any
}

// Checksum is an S3 flexible checksum (x-amz-checksum-*).
type Checksum struct {
	Algorithm string // CRC32, CRC32C, CRC64NVME, SHA1, SHA256; "" means none
	Value     string // base64; for multipart composite checksums ends in "-N"
	Type      string // FULL_OBJECT or COMPOSITE
}

// PutOptions carry what a PUT (or multipart create) stores and verifies.
type PutOptions struct {
	ContentType  string
	Headers      map[string]string // see ObjectInfo.Headers
	UserMeta     map[string]string
	StorageClass string
	Owner        string
	ACL          string
	// Tags is the new object's tag set (at most MaxObjectTags; the S3
	// layer validates keys and values); nil or empty stores none. A
	// multipart upload keeps it for the object it completes.
	Tags map[string]string
	// Lock is the new version's explicit object lock: a retention (Mode
	// and a future RetainUntil, both or neither) and a legal hold
	// (HoldOn, HoldOff or ""). Mode "" gives the version the bucket's
	// default retention, if it has one. Any of it in a bucket without
	// object lock is ErrObjectLockNotEnabled. A multipart upload keeps
	// it for the object it completes; a copy never takes the source's.
	Lock objectlock.Lock

	// ContentMD5 is the client's Content-MD5 (raw 16 bytes); when set the
	// body's MD5 must match or the PUT fails with ErrBadDigest.
	ContentMD5 []byte
	// ChecksumAlgorithm asks the engine to compute and store this checksum.
	ChecksumAlgorithm string
	// ChecksumType is a multipart upload's checksum type, COMPOSITE or
	// FULL_OBJECT; empty picks S3's default for the algorithm.
	ChecksumType string
	// ExpectedChecksum returns the client's base64 checksum value; it is
	// called after the body has been read to EOF, so a value that arrives
	// in an aws-chunked trailer can be supplied. Nil or "" = compute only.
	ExpectedChecksum func() (string, error)

	// IfNoneMatchAny makes the PUT fail with ErrPreconditionFailed when
	// the key already exists (If-None-Match: *). IfMatch requires the
	// current ETag to equal it. Both are checked under the object lock.
	IfNoneMatchAny bool
	IfMatch        string
	// IfNoneMatch is an If-None-Match ETag list other than *: the PUT
	// fails with ErrPreconditionFailed when the current ETag is listed.
	// If-Match on a key that does not exist fails with ErrObjectNotFound.
	IfNoneMatch string

	// Encryption, when set, encrypts the new object (or every part of
	// the new upload) at rest.
	Encryption *Encryption

	// Import, when set, writes a version another store made with its id
	// and time (ImportVersion); only the S3 layer's admin import path
	// sets it.
	Import *ImportVersion

	// Committed, when set, is called with the new version once it is
	// committed, still under the key's lock (PutObject, a CopyObject
	// that writes a new version, CompleteMultipartUpload): calls for
	// one key come in the order the versions were committed. It must
	// not block: the S3 layer queues the write's event there (the
	// queue's sync is awaited after), so events of one key are queued
	// in commit order.
	Committed func(ObjectInfo)
}

// Encryption says how new data is encrypted at rest (see package sse).
// The S3 layer makes the object key and seals it; the engine encrypts
// with it and stores Sealed beside the version, never the key.
type Encryption struct {
	Cipher sse.Cipher
	// Key is the 32-byte object key (of an object, or of a multipart
	// upload's every part).
	Key []byte
	// Sealed is stored with the version as given (ObjectInfo.Sealed).
	Sealed map[string]string
	// HideETag makes ETags keyed digests instead of plaintext MD5s.
	HideETag bool
}

// UnsealFunc returns the object key of an encrypted version (or upload)
// from what was stored with it; the engine calls it before reading or
// adding encrypted data. Its error is returned as it is.
type UnsealFunc func(info ObjectInfo) ([]byte, error)

// GetOptions select what GetObject and HeadObject return.
type GetOptions struct {
	// Range, when non-nil, selects a byte range; resolved against the size.
	Range *Range
	// PartNumber (1-based), when non-zero, selects one part of a
	// multipart object (or the whole object as part 1 of a single PUT).
	PartNumber int
	// Conditions are evaluated against the object under the read lock.
	Conditions Conditions
	// VersionID, when set, reads that version instead of the current one
	// ("null" or NullVersionID names the null version); a version that
	// does not exist is ErrNoSuchVersion.
	VersionID string
	// Unseal gives the key of an encrypted version; GetObject of one
	// without it is ErrEncrypted. HeadObject does not call it.
	Unseal UnsealFunc
}

// DeleteOptions select what DeleteObjectVersion removes.
type DeleteOptions struct {
	// VersionID, when set, removes that version for good (a delete
	// marker included); otherwise a versioned bucket gets a delete marker
	// and an unversioned one loses the object.
	VersionID string
	// BypassGovernance lets the delete remove a version under GOVERNANCE
	// retention (x-amz-bypass-governance-retention; the S3 layer checks
	// the caller's s3:BypassGovernanceRetention). Nothing removes a
	// version under COMPLIANCE retention or legal hold.
	BypassGovernance bool
	// Cond, when set, makes the delete conditional (If-Match and its
	// companions): it is judged under the key's lock on the version the
	// delete would remove or hide, so no write can slip in between.
	Cond *DeleteConditions
	// Committed, when set, is called with the result once the delete is
	// committed (a version or the object removed, a delete marker made),
	// still under the key's lock: calls for one key come in commit
	// order, among themselves and with PutOptions.Committed. It must not
	// block: the S3 layer queues the delete's event there.
	Committed func(DeleteResult)
}

// DeleteConditions are the preconditions of a conditional delete
// (S3 User Guide, "How to perform conditional deletes"). A key without a
// current object (none, or a delete marker current) fails them with
// ErrObjectNotFound (S3's 404 NoSuchKey); a mismatch fails with
// ErrPreconditionFailed (412).
type DeleteConditions struct {
	// IfMatch is the If-Match value: an ETag (quoted or not), a list of
	// them, or "*" (any existing object).
	IfMatch string
	// ModTime, when not zero, must equal the object's Last-Modified to
	// the second (x-amz-if-match-last-modified-time).
	ModTime time.Time
	// Size, when HasSize, must equal the object's size
	// (x-amz-if-match-size).
	Size    int64
	HasSize bool
}

// DeleteResult is what a delete did, as S3 reports it.
type DeleteResult struct {
	// VersionID is the version removed or, when a delete marker was
	// created, the marker's version id ("" = null).
	VersionID string
	// DeleteMarker is set when a delete marker was created, or when the
	// version removed was one.
	DeleteMarker bool
}

// ListVersionsOptions select a page of ListObjectVersions.
type ListVersionsOptions struct {
	Prefix    string
	Delimiter string
	// KeyMarker and VersionIDMarker continue a listing: versions of
	// KeyMarker older than VersionIDMarker, then keys after KeyMarker.
	// Without VersionIDMarker the listing starts after KeyMarker.
	KeyMarker       string
	VersionIDMarker string
	MaxKeys         int // 0 means 1000; capped at 1000
}

// ListVersionsResult is one page of ListObjectVersions: every version
// and delete marker, keys in byte order, each key's versions newest first.
type ListVersionsResult struct {
	Versions       []ObjectInfo
	CommonPrefixes []string
	IsTruncated    bool
	// NextKeyMarker and NextVersionIDMarker continue a truncated page.
	NextKeyMarker       string
	NextVersionIDMarker string
}

// Conditions are the HTTP preconditions of GET, HEAD and copy sources.
type Conditions struct {
	IfMatch           string
	IfNoneMatch       string
	IfModifiedSince   *time.Time
	IfUnmodifiedSince *time.Time
}

// Range is an HTTP byte range. Start < 0 means a suffix of -Start bytes;
// End < 0 means through the end of the object.
type Range struct {
	Start, End int64
}

// CopyOptions control CopyObject.
type CopyOptions struct {
	// ReplaceMetadata selects the REPLACE directive: Put's metadata
	// fields replace the source's. Otherwise the source's are kept.
	ReplaceMetadata bool
	// ReplaceTags selects the REPLACE tagging directive: Put.Tags become
	// the copy's tags. Otherwise the copy keeps the source's tags.
	ReplaceTags bool
	Put         PutOptions
	// SourceVersionID selects the source version (the copy source's
	// ?versionId=); "" copies the current one.
	SourceVersionID string
	// SourceConditions are the x-amz-copy-source-if-* checks.
	SourceConditions Conditions
	// SourceUnseal gives the key of an encrypted source.
	SourceUnseal UnsealFunc
	// KeepEncryption says the copy is encrypted as its source is (same
	// scheme and key): a copy onto itself may then rewrite only the
	// metadata. Otherwise Put.Encryption (or none) applies.
	KeepEncryption bool
}

// ListOptions select a page of ListObjects.
type ListOptions struct {
	Prefix    string
	Delimiter string
	// After lists keys strictly after this one (marker, start-after or
	// a continuation token decoded by the caller).
	After   string
	MaxKeys int // 0 means 1000; capped at 1000
	// ReadAhead says the caller will likely ask for the next page next
	// (a client listing page by page): the engine makes it while the
	// caller works on this one (listahead.go).
	ReadAhead bool
}

// ListResult is one page of a listing, in byte order.
type ListResult struct {
	Objects        []ObjectInfo
	CommonPrefixes []string
	IsTruncated    bool
	// NextAfter is the last key or prefix returned; pass it as After.
	NextAfter string
}

// PartInfo describes an uploaded part.
type PartInfo struct {
	Number  int
	Size    int64
	ETag    string
	ModTime time.Time
	// Checksum is the part's checksum (base64) of ChecksumAlgorithm: the
	// upload's algorithm, or for an upload created without one the
	// algorithm the part was sent with. ListParts shows only the first
	// kind, as S3 does.
	Checksum          string
	ChecksumAlgorithm string
}

// PartOptions are the per-part verifications of UploadPart.
type PartOptions struct {
	ContentMD5 []byte
	// ChecksumAlgorithm is the checksum the client sent with this part;
	// it is verified against ExpectedChecksum and stored when it matches
	// the upload's algorithm.
	ChecksumAlgorithm string
	ExpectedChecksum  func() (string, error)
	// Unseal gives the upload's object key when the upload is
	// encrypted; a part without it is ErrEncrypted.
	Unseal UnsealFunc
}

// CompletePart is one entry of a CompleteMultipartUpload request.
type CompletePart struct {
	Number int
	ETag   string
	// Checksums are the part checksums the entry names (canonical
	// algorithm → base64 value); nil when it names none. One of the
	// upload's algorithm must equal the stored part's (else
	// ErrInvalidPart); see CompleteMultipartUpload for the others.
	Checksums map[string]string
}

// MultipartInfo describes an in-progress multipart upload.
type MultipartInfo struct {
	Bucket            string
	Key               string
	UploadID          string
	Initiated         time.Time
	StorageClass      string
	Owner             string
	ChecksumAlgorithm string
	ChecksumType      string // FULL_OBJECT or COMPOSITE when ChecksumAlgorithm is set
}

// ListPartsResult is one page of ListParts.
type ListPartsResult struct {
	Upload               MultipartInfo
	Parts                []PartInfo
	IsTruncated          bool
	NextPartNumberMarker int
}

// ListUploadsOptions select a page of ListMultipartUploads.
type ListUploadsOptions struct {
	Prefix         string
	Delimiter      string
	KeyMarker      string
	UploadIDMarker string
	MaxUploads     int
}

// ListUploadsResult is one page of ListMultipartUploads.
type ListUploadsResult struct {
	Uploads            []MultipartInfo
	CommonPrefixes     []string
	IsTruncated        bool
	NextKeyMarker      string
	NextUploadIDMarker string
}

// Status reports the health the server exposes on its readiness endpoint.
type Status struct {
	Drives        int  `json:"drives"`
	DrivesOnline  int  `json:"drives_online"`
	Sets          int  `json:"sets"`
	WriteQuorumOK bool `json:"write_quorum_ok"` // every set has at least write quorum drives online
	ReadQuorumOK  bool `json:"read_quorum_ok"`
	// PerSet is the same, set by set.
	PerSet []SetStatus `json:"per_set"`
}

// SetStatus is the health of one erasure set.
type SetStatus struct {
	Set           int  `json:"set"` // 1-based
	Drives        int  `json:"drives"`
	DrivesOnline  int  `json:"drives_online"`
	WriteQuorum   int  `json:"write_quorum"` // drives a write needs
	ReadQuorum    int  `json:"read_quorum"`  // drives a read needs
	WriteQuorumOK bool `json:"write_quorum_ok"`
	ReadQuorumOK  bool `json:"read_quorum_ok"`
}

// Layout is how the deployment places and codes objects.
type Layout struct {
	DeploymentID string `json:"deployment_id"`
	Drives       int    `json:"drives"`
	// Pools is the number of server pools; SetSize, Data, Parity and
	// the quorums below are the first pool's (Engine.Pools has each).
	Pools   int `json:"pools"`
	Sets    int `json:"sets"`
	SetSize int `json:"set_size"`
	// Data and Parity are the shards of a STANDARD object; RRSParity is
	// the parity of REDUCED_REDUNDANCY objects.
	Data        int `json:"data"`
	Parity      int `json:"parity"`
	RRSParity   int `json:"rrs_parity"`
	WriteQuorum int `json:"write_quorum"`
	ReadQuorum  int `json:"read_quorum"`
	// InlineLimit is the per-drive shard size up to which data is kept
	// in the drive index (negative: never).
	InlineLimit int64  `json:"inline_limit"`
	BlockSize   int    `json:"block_size"`
	Bitrot      string `json:"bitrot"`
	// Placement is how an object's set is picked (internal/placement):
	// empty for shardstore's own, "minio-sipmod" on an adopted MinIO
	// deployment.
	Placement string `json:"placement,omitempty"`
}

// DriveStatus is one drive as an operator sees it.
type DriveStatus struct {
	Path  string `json:"path"`
	Set   int    `json:"set"`   // 1-based
	Slot  int    `json:"slot"`  // 1-based position in the set
	State string `json:"state"` // "online" or "offline"
	// Since is when the drive last went online or offline.
	Since time.Time `json:"since"`
	// Error is why it is offline (or the last error it reported).
	Error    string `json:"error"`
	Faults   int64  `json:"faults"`
	Timeouts int64  `json:"timeouts"`
	Total    uint64 `json:"total"` // filesystem capacity; 0 when unknown
	Free     uint64 `json:"free"`
	Used     uint64 `json:"used"`
	// Index is set while the drive's disk is full and its index does not
	// take every write: "read-only" (reads only) or "deletes-only"
	// (reads and deletions; its reserve in use). An online drive either
	// way: it serves reads; writes to it answer as a full drive's.
	Index string `json:"index,omitempty"`
}

// ObjectReader streams (part of) an object; Close must be called.
type ObjectReader struct {
	Info ObjectInfo
	// Start and Length are the resolved byte range being returned.
	Start, Length int64
	// Partial is true when a Range or PartNumber selected the bytes.
	Partial bool
	io.ReadCloser
}

// WriteTo copies the body to w, from the decoded blocks when the body is
// an object's (no intermediate buffer).
func (r *ObjectReader) WriteTo(w io.Writer) (int64, error) {
	if wt, ok := r.ReadCloser.(io.WriterTo); ok {
		return wt.WriteTo(w)
	}
	return io.Copy(w, r.ReadCloser)
}
