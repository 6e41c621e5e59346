// Package engine stores objects erasure-coded across sets of drives: it
// owns buckets, objects, multipart uploads and listing, and enforces
// quorum and per-object locking. It knows nothing of HTTP.
package engine

import (
	"context"
	"io"
	"log/slog"
)

// Config describes the drives and coding policy of one engine.
type Config struct {
	// Paths are the drive directories, already expanded, in slot order.
	Paths []string
	// SetSize is the number of drives per erasure set; 0 picks the largest
	// size in 2..16 that divides len(Paths).
	SetSize int
	// Parity is the number of parity shards for STANDARD objects; 0 picks
	// the default for the set size.
	Parity int
	// InlineLimit is the shard size per drive (bytes) up to which object
	// data is stored inside the metadata file; 0 means the default
	// (128 KiB), negative disables inlining.
	InlineLimit int64
	// Logger receives engine events; nil discards them.
	Logger *slog.Logger
}

// Engine is one running object store. It is safe for concurrent use.
type Engine struct {
	cfg Config
}

// New opens (formatting on first use) the drives in cfg and returns the engine.
func New(cfg Config) (*Engine, error) { panic("engine: not yet written") }

// Close stops background work and releases the drives.
func (e *Engine) Close() error { return nil }

// Status reports drive and quorum health.
func (e *Engine) Status() Status { panic("engine: not yet written") }

// MakeBucket creates a bucket.
func (e *Engine) MakeBucket(ctx context.Context, bucket string, opts BucketOptions) error {
	panic("engine: not yet written")
}

// BucketInfo returns a bucket's settings, or ErrBucketNotFound.
func (e *Engine) BucketInfo(ctx context.Context, bucket string) (BucketInfo, error) {
	panic("engine: not yet written")
}

// ListBuckets lists all buckets sorted by name.
func (e *Engine) ListBuckets(ctx context.Context) ([]BucketInfo, error) {
	panic("engine: not yet written")
}

// DeleteBucket removes an empty bucket (ErrBucketNotEmpty otherwise).
func (e *Engine) DeleteBucket(ctx context.Context, bucket string) error {
	panic("engine: not yet written")
}

// SetBucketACL replaces a bucket's canned ACL.
func (e *Engine) SetBucketACL(ctx context.Context, bucket, acl string) error {
	panic("engine: not yet written")
}

// PutObject stores body (size bytes, or -1 when unknown) as bucket/key.
func (e *Engine) PutObject(ctx context.Context, bucket, key string, body io.Reader, size int64, opts PutOptions) (ObjectInfo, error) {
	panic("engine: not yet written")
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

// GetObject opens an object for reading, evaluating opts.Conditions
// (ErrPreconditionFailed / ErrNotModified) and resolving opts.Range
// (ErrInvalidRange when unsatisfiable).
func (e *Engine) GetObject(ctx context.Context, bucket, key string, opts GetOptions) (*ObjectReader, error) {
	panic("engine: not yet written")
}

// HeadObject returns an object's info, evaluating opts like GetObject.
func (e *Engine) HeadObject(ctx context.Context, bucket, key string, opts GetOptions) (ObjectInfo, error) {
	panic("engine: not yet written")
}

// DeleteObject removes an object; ErrObjectNotFound if it did not exist.
func (e *Engine) DeleteObject(ctx context.Context, bucket, key string) error {
	panic("engine: not yet written")
}

// SetObjectACL replaces an object's canned ACL.
func (e *Engine) SetObjectACL(ctx context.Context, bucket, key, acl string) error {
	panic("engine: not yet written")
}

// CopyObject copies src to dst server side (src == dst with
// ReplaceMetadata updates metadata in place).
func (e *Engine) CopyObject(ctx context.Context, srcBucket, srcKey, dstBucket, dstKey string, opts CopyOptions) (ObjectInfo, error) {
	panic("engine: not yet written")
}

// ListObjects returns one page of keys in byte order.
func (e *Engine) ListObjects(ctx context.Context, bucket string, opts ListOptions) (ListResult, error) {
	panic("engine: not yet written")
}

// NewMultipartUpload starts an upload and returns its id.
func (e *Engine) NewMultipartUpload(ctx context.Context, bucket, key string, opts PutOptions) (string, error) {
	panic("engine: not yet written")
}

// PutObjectPart stores one part (1..10000) of an upload.
func (e *Engine) PutObjectPart(ctx context.Context, bucket, key, uploadID string, part int, body io.Reader, size int64, opts PartOptions) (PartInfo, error) {
	panic("engine: not yet written")
}

// ListObjectParts lists parts after partMarker, at most maxParts (0 = 1000).
func (e *Engine) ListObjectParts(ctx context.Context, bucket, key, uploadID string, partMarker, maxParts int) (ListPartsResult, error) {
	panic("engine: not yet written")
}

// CompleteMultipartUpload assembles the listed parts into the object.
func (e *Engine) CompleteMultipartUpload(ctx context.Context, bucket, key, uploadID string, parts []CompletePart, opts PutOptions) (ObjectInfo, error) {
	panic("engine: not yet written")
}

// AbortMultipartUpload discards an upload and its parts.
func (e *Engine) AbortMultipartUpload(ctx context.Context, bucket, key, uploadID string) error {
	panic("engine: not yet written")
}

// ListMultipartUploads lists in-progress uploads of a bucket.
func (e *Engine) ListMultipartUploads(ctx context.Context, bucket string, opts ListUploadsOptions) (ListUploadsResult, error) {
	panic("engine: not yet written")
}
