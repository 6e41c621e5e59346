// Package storetest is the conformance suite of the object store the S3
// layer calls (s3api.ObjectStore): the engine defines the contract, and
// every other implementation (the S3 layer's in-memory fake for handler
// tests) runs the same suite, so a handler test that passes against the
// fake says something about the engine.
//
// The suite lives apart from package s3api because s3api's own tests
// run it against their fake: a package those tests import cannot import
// s3api back. Its ObjectStore is s3api.ObjectStore's method set (s3api's
// tests check both ways that the two stay the same).
package storetest

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/objectlock"
	"github.com/shardstore/shardstore/internal/sse"
)

// ObjectStore is s3api.ObjectStore.
type ObjectStore interface {
	Status() engine.Status

	MakeBucket(ctx context.Context, bucket string, opts engine.BucketOptions) error
	BucketInfo(ctx context.Context, bucket string) (engine.BucketInfo, error)
	ListBuckets(ctx context.Context) ([]engine.BucketInfo, error)
	DeleteBucket(ctx context.Context, bucket string) error
	SetBucketACL(ctx context.Context, bucket, acl string) error
	SetBucketConfig(ctx context.Context, bucket string, which engine.BucketConfig, doc string) error

	PutObject(ctx context.Context, bucket, key string, body io.Reader, size int64, opts engine.PutOptions) (engine.ObjectInfo, error)
	GetObject(ctx context.Context, bucket, key string, opts engine.GetOptions) (*engine.ObjectReader, error)
	HeadObject(ctx context.Context, bucket, key string, opts engine.GetOptions) (engine.ObjectInfo, error)
	DeleteObject(ctx context.Context, bucket, key string) error
	DeleteObjectVersion(ctx context.Context, bucket, key string, opts engine.DeleteOptions) (engine.DeleteResult, error)
	SetObjectACL(ctx context.Context, bucket, key, versionID, acl string) error
	SetObjectTags(ctx context.Context, bucket, key, versionID string, tags map[string]string) (engine.ObjectInfo, error)
	SetObjectRetention(ctx context.Context, bucket, key, versionID string, r objectlock.Lock, bypass bool) (engine.ObjectInfo, error)
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

// Opener returns a new, empty store (no buckets) that is ready for
// writes; the store is released by the Opener's own cleanup.
type Opener func(t *testing.T) ObjectStore

// Run runs the whole suite, each case on a store of its own.
func Run(t *testing.T, open Opener) {
	s := suite{open: open}
	for _, c := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"Status", s.testStatus},
		{"Buckets", s.testBuckets},
		{"BucketNames", s.testBucketNames},
		{"BucketNotEmpty", s.testBucketNotEmpty},
		{"BucketSettings", s.testBucketSettings},
		{"PutGetHead", s.testPutGetHead},
		{"ObjectDefaults", s.testObjectDefaults},
		{"ObjectKeys", s.testObjectKeys},
		{"Ranges", s.testRanges},
		{"Overwrite", s.testOverwrite},
		{"Delete", s.testDelete},
		{"MissingBucketAndKey", s.testMissingBucketAndKey},
		{"BodyChecks", s.testBodyChecks},
		{"ListObjects", s.testListObjects},
		{"ListObjectsPaging", s.testListObjectsPaging},
		{"Versions", s.testVersions},
		{"DeleteMarkers", s.testDeleteMarkers},
		{"ListObjectVersionsPaging", s.testListObjectVersionsPaging},
		{"SuspendedVersioning", s.testSuspendedVersioning},
		{"Multipart", s.testMultipart},
		{"MultipartErrors", s.testMultipartErrors},
		{"MultipartAbort", s.testMultipartAbort},
		{"ListMultipartUploads", s.testListMultipartUploads},
		{"Copy", s.testCopy},
		{"Tags", s.testTags},
		{"ObjectACL", s.testObjectACL},
		{"ConditionalWrites", s.testConditionalWrites},
		{"ConditionalReads", s.testConditionalReads},
		{"LegalHold", s.testLegalHold},
		{"Encryption", s.testEncryption},
		{"EncryptionMultipart", s.testEncryptionMultipart},
		{"EncryptionCopy", s.testEncryptionCopy},
	} {
		t.Run(c.name, c.fn)
	}
}

type suite struct{ open Opener }

var ctx = context.Background()

const bucket = "conformance"

// store opens a store with the suite's bucket in it.
func (s suite) store(t *testing.T) ObjectStore {
	t.Helper()
	st := s.open(t)
	if err := st.MakeBucket(ctx, bucket, engine.BucketOptions{Owner: "owner"}); err != nil {
		t.Fatalf("MakeBucket: %v", err)
	}
	return st
}

// versioned opens a store whose bucket has versioning Enabled.
func (s suite) versioned(t *testing.T) ObjectStore {
	t.Helper()
	st := s.store(t)
	if err := st.SetBucketConfig(ctx, bucket, engine.BucketConfigVersioning, engine.VersioningEnabled); err != nil {
		t.Fatalf("enabling versioning: %v", err)
	}
	return st
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v", what, err, want)
	}
}

func md5hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

func randBytes(seed int64, n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

func put(t *testing.T, st ObjectStore, key string, data []byte, opts engine.PutOptions) engine.ObjectInfo {
	t.Helper()
	oi, err := st.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		t.Fatalf("PutObject(%q, %d bytes): %v", key, len(data), err)
	}
	return oi
}

// get reads an object whole; the reader's fields are returned beside.
func get(st ObjectStore, key string, opts engine.GetOptions) ([]byte, *engine.ObjectReader, error) {
	r, err := st.GetObject(ctx, bucket, key, opts)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	return b, r, err
}

func mustGet(t *testing.T, st ObjectStore, key string, opts engine.GetOptions, want []byte) engine.ObjectInfo {
	t.Helper()
	got, r, err := get(st, key, opts)
	if err != nil {
		t.Fatalf("GetObject(%q, %+v): %v", key, opts, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("GetObject(%q, %+v): %s; want the %d bytes stored", key, opts, describe(got), len(want))
	}
	return r.Info
}

// describe prints what a read returned: short bodies quoted, long ones
// by size.
func describe(b []byte) string {
	if len(b) <= 32 {
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("%d other bytes", len(b))
}

func keysOf(objs []engine.ObjectInfo) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, o.Key)
	}
	return out
}

// --- buckets ---

func (s suite) testStatus(t *testing.T) {
	st := s.open(t)
	if s := st.Status(); !s.WriteQuorumOK || !s.ReadQuorumOK || s.Drives == 0 || s.DrivesOnline != s.Drives {
		t.Fatalf("Status of a new store: %+v, want every drive online and both quorums", s)
	}
}

func (s suite) testBuckets(t *testing.T) {
	st := s.open(t)
	if bs, err := st.ListBuckets(ctx); err != nil || len(bs) != 0 {
		t.Fatalf("ListBuckets of a new store: %+v, %v", bs, err)
	}
	opts := engine.BucketOptions{Owner: "alice", ACL: "public-read", Location: "eu-west-1",
		OwnershipControls: "<OwnershipControls/>"}
	for _, b := range []string{"zeta", "alpha", "mid.dle-1"} {
		if err := st.MakeBucket(ctx, b, opts); err != nil {
			t.Fatalf("MakeBucket(%q): %v", b, err)
		}
	}
	wantErr(t, "MakeBucket of an existing bucket", st.MakeBucket(ctx, "alpha", opts), engine.ErrBucketExists)
	info, err := st.BucketInfo(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "alpha" || info.Owner != "alice" || info.ACL != "public-read" || info.Location != "eu-west-1" ||
		info.OwnershipControls != "<OwnershipControls/>" || info.Created.IsZero() || info.Versioning != "" || info.ObjectLock != "" {
		t.Fatalf("BucketInfo = %+v, not what MakeBucket was given", info)
	}
	bs, err := st.ListBuckets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range bs {
		names = append(names, b.Name)
	}
	if !slices.Equal(names, []string{"alpha", "mid.dle-1", "zeta"}) {
		t.Fatalf("ListBuckets = %q, want the three in name order", names)
	}
	if err := st.DeleteBucket(ctx, "zeta"); err != nil {
		t.Fatalf("DeleteBucket of an empty bucket: %v", err)
	}
	_, err = st.BucketInfo(ctx, "zeta")
	wantErr(t, "BucketInfo of a deleted bucket", err, engine.ErrBucketNotFound)
	wantErr(t, "DeleteBucket of a deleted bucket", st.DeleteBucket(ctx, "zeta"), engine.ErrBucketNotFound)
	// The name is free again.
	if err := st.MakeBucket(ctx, "zeta", engine.BucketOptions{}); err != nil {
		t.Fatalf("MakeBucket of a deleted bucket's name: %v", err)
	}
	// Object lock comes with versioning Enabled.
	if err := st.MakeBucket(ctx, "locked", engine.BucketOptions{ObjectLock: true}); err != nil {
		t.Fatal(err)
	}
	if info, err := st.BucketInfo(ctx, "locked"); err != nil || info.ObjectLock == "" || info.Versioning != engine.VersioningEnabled {
		t.Fatalf("a bucket made with object lock: %+v, %v", info, err)
	}
}

// testBucketNames: names S3 refuses are refused with
// ErrInvalidBucketName.
func (s suite) testBucketNames(t *testing.T) {
	st := s.open(t)
	for _, name := range []string{"", "ab", strings.Repeat("a", 64), "Upper", "under_score", "sp ace", "slash/es",
		"-dash", "dash-", "two..dots", "192.168.1.2"} {
		wantErr(t, fmt.Sprintf("MakeBucket(%q)", name), st.MakeBucket(ctx, name, engine.BucketOptions{}), engine.ErrInvalidBucketName)
	}
	for _, name := range []string{"abc", strings.Repeat("a", 63), "with.dots.and-dashes", "0digits9"} {
		if err := st.MakeBucket(ctx, name, engine.BucketOptions{}); err != nil {
			t.Errorf("MakeBucket(%q): %v", name, err)
		}
	}
}

// testBucketNotEmpty: any version, a delete marker included, keeps a
// bucket from being deleted.
func (s suite) testBucketNotEmpty(t *testing.T) {
	st := s.versioned(t)
	put(t, st, "k", []byte("x"), engine.PutOptions{})
	wantErr(t, "DeleteBucket holding an object", st.DeleteBucket(ctx, bucket), engine.ErrBucketNotEmpty)
	if _, err := st.DeleteObjectVersion(ctx, bucket, "k", engine.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "DeleteBucket holding a noncurrent version and a delete marker", st.DeleteBucket(ctx, bucket), engine.ErrBucketNotEmpty)
	res, err := st.ListObjectVersions(ctx, bucket, engine.ListVersionsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range res.Versions {
		if _, err := st.DeleteObjectVersion(ctx, bucket, v.Key, engine.DeleteOptions{VersionID: versionParam(v.VersionID)}); err != nil {
			t.Fatalf("deleting version %q: %v", v.VersionID, err)
		}
	}
	// An upload in progress does not keep the bucket; it goes with it.
	id, err := st.NewMultipartUpload(ctx, bucket, "upload", engine.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteBucket(ctx, bucket); err != nil {
		t.Fatalf("DeleteBucket once every version is gone (an upload still in progress): %v", err)
	}
	if err := st.MakeBucket(ctx, bucket, engine.BucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if ups, err := st.ListMultipartUploads(ctx, bucket, engine.ListUploadsOptions{}); err != nil || len(ups.Uploads) != 0 {
		t.Fatalf("uploads of a bucket made again under a deleted one's name: %+v, %v", ups.Uploads, err)
	}
	_, err = st.PutObjectPart(ctx, bucket, "upload", id, 1, strings.NewReader("x"), 1, engine.PartOptions{})
	wantErr(t, "a part of an upload of a deleted bucket", err, engine.ErrNoSuchUpload)
}

// versionParam is how a caller names a version: the null version is
// "null".
func versionParam(id string) string {
	if id == "" {
		return engine.NullVersionID
	}
	return id
}

// testBucketSettings: the ACL and each configuration document round-trip
// through BucketInfo, and "" removes a document.
func (s suite) testBucketSettings(t *testing.T) {
	st := s.store(t)
	if err := st.SetBucketACL(ctx, bucket, "public-read-write"); err != nil {
		t.Fatal(err)
	}
	docs := map[engine.BucketConfig]func(engine.BucketInfo) string{
		engine.BucketConfigCORS:              func(b engine.BucketInfo) string { return b.CORS },
		engine.BucketConfigOwnershipControls: func(b engine.BucketInfo) string { return b.OwnershipControls },
		engine.BucketConfigWebsite:           func(b engine.BucketInfo) string { return b.Website },
		engine.BucketConfigPolicy:            func(b engine.BucketInfo) string { return b.Policy },
		engine.BucketConfigPublicAccessBlock: func(b engine.BucketInfo) string { return b.PublicAccessBlock },
		engine.BucketConfigTagging:           func(b engine.BucketInfo) string { return b.Tagging },
		engine.BucketConfigEncryption:        func(b engine.BucketInfo) string { return b.Encryption },
		engine.BucketConfigLogging:           func(b engine.BucketInfo) string { return b.Logging },
		engine.BucketConfigNotification:      func(b engine.BucketInfo) string { return b.Notification },
	}
	for which := range docs {
		if err := st.SetBucketConfig(ctx, bucket, which, "doc of "+string(which)); err != nil {
			t.Fatalf("SetBucketConfig(%s): %v", which, err)
		}
	}
	info, err := st.BucketInfo(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	if info.ACL != "public-read-write" {
		t.Errorf("ACL %q after SetBucketACL", info.ACL)
	}
	for which, field := range docs {
		if got := field(info); got != "doc of "+string(which) {
			t.Errorf("BucketInfo's %s = %q", which, got)
		}
	}
	if err := st.SetBucketConfig(ctx, bucket, engine.BucketConfigCORS, ""); err != nil {
		t.Fatal(err)
	}
	if info, _ := st.BucketInfo(ctx, bucket); info.CORS != "" || info.Website == "" {
		t.Errorf("removing CORS: CORS %q, website %q", info.CORS, info.Website)
	}
	wantErr(t, "SetBucketACL of a missing bucket", st.SetBucketACL(ctx, "missing", "private"), engine.ErrBucketNotFound)
	wantErr(t, "SetBucketConfig of a missing bucket", st.SetBucketConfig(ctx, "missing", engine.BucketConfigCORS, "x"), engine.ErrBucketNotFound)

	// Versioning: Enabled and Suspended, never back to unconfigured.
	for _, state := range []string{engine.VersioningEnabled, engine.VersioningSuspended, engine.VersioningEnabled} {
		if err := st.SetBucketConfig(ctx, bucket, engine.BucketConfigVersioning, state); err != nil {
			t.Fatalf("versioning %s: %v", state, err)
		}
		if info, _ := st.BucketInfo(ctx, bucket); info.Versioning != state {
			t.Fatalf("versioning %q after setting %s", info.Versioning, state)
		}
	}
	if err := st.SetBucketConfig(ctx, bucket, engine.BucketConfigVersioning, ""); err == nil {
		t.Error("versioning set back to unconfigured")
	}
	wantErr(t, "versioning state bogus", st.SetBucketConfig(ctx, bucket, engine.BucketConfigVersioning, "bogus"), engine.ErrInvalidArgument)
	if info, _ := st.BucketInfo(ctx, bucket); info.Versioning != engine.VersioningEnabled {
		t.Errorf("versioning %q after a refused change", info.Versioning)
	}
	wantErr(t, "an unknown configuration document", st.SetBucketConfig(ctx, bucket, engine.BucketConfig("nope"), "x"), engine.ErrInvalidArgument)
}

// --- objects ---

// testPutGetHead: what a PUT stores reads back with its metadata, from
// GET and HEAD alike.
func (s suite) testPutGetHead(t *testing.T) {
	st := s.store(t)
	for i, size := range []int{0, 1, 1000, 64<<10 + 1, 300 << 10} {
		data := randBytes(int64(i), size)
		key := fmt.Sprintf("obj-%d", size)
		opts := engine.PutOptions{ContentType: "application/x-test", Owner: "owner", ACL: "public-read",
			StorageClass: "REDUCED_REDUNDANCY",
			UserMeta:     map[string]string{"color": "blue", "n": fmt.Sprint(i)},
			Headers:      map[string]string{"Content-Disposition": "attachment", "Cache-Control": "no-cache"}}
		pi := put(t, st, key, data, opts)
		if pi.Bucket != bucket || pi.Key != key || pi.Size != int64(size) || pi.ETag != md5hex(data) || pi.ModTime.IsZero() {
			t.Fatalf("PutObject of %d bytes answered %+v", size, pi)
		}
		gi := mustGet(t, st, key, engine.GetOptions{}, data)
		hi, err := st.HeadObject(ctx, bucket, key, engine.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for what, oi := range map[string]engine.ObjectInfo{"GET": gi, "HEAD": hi} {
			if oi.Key != key || oi.Size != int64(size) || oi.ETag != pi.ETag || !oi.ModTime.Equal(pi.ModTime) ||
				oi.ContentType != opts.ContentType || oi.Owner != "owner" || oi.ACL != "public-read" ||
				oi.StorageClass != "REDUCED_REDUNDANCY" || oi.DeleteMarker {
				t.Fatalf("%s of %q = %+v; the PUT answered %+v", what, key, oi, pi)
			}
			if fmt.Sprint(oi.UserMeta) != fmt.Sprint(opts.UserMeta) || fmt.Sprint(oi.Headers) != fmt.Sprint(opts.Headers) {
				t.Fatalf("%s of %q: user metadata %v, headers %v; want %v, %v", what, key, oi.UserMeta, oi.Headers, opts.UserMeta, opts.Headers)
			}
		}
	}
	// A body of unknown size (-1) is read to its end.
	data := randBytes(9, 70000)
	oi, err := st.PutObject(ctx, bucket, "unknown-size", bytes.NewReader(data), -1, engine.PutOptions{})
	if err != nil || oi.Size != int64(len(data)) || oi.ETag != md5hex(data) {
		t.Fatalf("PutObject of unknown size: %+v, %v", oi, err)
	}
	mustGet(t, st, "unknown-size", engine.GetOptions{}, data)
}

// testObjectDefaults: what a PUT that names no storage class or ACL
// stores: STANDARD and private, as S3 reports them.
func (s suite) testObjectDefaults(t *testing.T) {
	st := s.store(t)
	pi := put(t, st, "k", []byte("x"), engine.PutOptions{})
	hi, err := st.HeadObject(ctx, bucket, "k", engine.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for what, oi := range map[string]engine.ObjectInfo{"PUT": pi, "HEAD": hi} {
		if oi.StorageClass != "STANDARD" || oi.ACL != "private" || oi.Tags != nil || oi.VersionID != "" || oi.Lock != (objectlock.Lock{}) {
			t.Errorf("%s of an object put with no options: storage class %q, ACL %q, tags %v, version %q, lock %+v; "+
				"want STANDARD, private, none, the null version, none", what, oi.StorageClass, oi.ACL, oi.Tags, oi.VersionID, oi.Lock)
		}
	}
}

// testObjectKeys: every key S3 accepts is stored as it is, path-like
// ones included; empty, overlong, NUL-bearing and non-UTF-8 keys are
// refused.
func (s suite) testObjectKeys(t *testing.T) {
	st := s.store(t)
	keys := []string{"a", "double//slash", "/leading", "trailing/", "../dotdot", "a/./b", ".", "..", "a/../b",
		"é日本", "sp ace", strings.Repeat("k", engine.MaxKeyLength)}
	for i, k := range keys {
		put(t, st, k, []byte(fmt.Sprint(i)), engine.PutOptions{})
	}
	for i, k := range keys {
		mustGet(t, st, k, engine.GetOptions{}, []byte(fmt.Sprint(i)))
	}
	res, err := st.ListObjects(ctx, bucket, engine.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(keys)
	sort.Strings(want)
	if got := keysOf(res.Objects); !slices.Equal(got, want) {
		t.Fatalf("listing: %q, want exactly the keys put, in byte order: %q", got, want)
	}
	for _, k := range []string{"", strings.Repeat("k", engine.MaxKeyLength+1), "nul\x00byte", "bad\xffutf8"} {
		_, err := st.PutObject(ctx, bucket, k, strings.NewReader("x"), 1, engine.PutOptions{})
		wantErr(t, fmt.Sprintf("PutObject(%q)", short(k)), err, engine.ErrInvalidObjectName)
	}
}

func short(s string) string {
	if len(s) > 20 {
		return fmt.Sprintf("%s... (%d bytes)", s[:10], len(s))
	}
	return s
}

// testRanges: byte ranges (first-last, suffix, open-ended) resolve
// against the size; one that starts past the end is ErrInvalidRange;
// part 1 of a single PUT is the whole object.
func (s suite) testRanges(t *testing.T) {
	st := s.store(t)
	data := randBytes(1, 200000)
	put(t, st, "k", data, engine.PutOptions{})
	n := int64(len(data))
	for _, c := range []struct {
		r             engine.Range
		start, length int64
	}{
		{engine.Range{Start: 0, End: 0}, 0, 1},
		{engine.Range{Start: 10, End: 19}, 10, 10},
		{engine.Range{Start: 65535, End: 65537}, 65535, 3},
		{engine.Range{Start: 100, End: -1}, 100, n - 100},
		{engine.Range{Start: -500, End: -1}, n - 500, 500},
		{engine.Range{Start: n - 1, End: n + 1000}, n - 1, 1},
		{engine.Range{Start: -(n + 10), End: -1}, 0, n},
	} {
		r := c.r
		got, rd, err := get(st, "k", engine.GetOptions{Range: &r})
		if err != nil {
			t.Fatalf("range %+v: %v", c.r, err)
		}
		if rd.Start != c.start || rd.Length != c.length || !rd.Partial || !bytes.Equal(got, data[c.start:c.start+c.length]) {
			t.Fatalf("range %+v: start %d length %d partial %v, %d bytes; want start %d length %d", c.r, rd.Start, rd.Length, rd.Partial, len(got), c.start, c.length)
		}
		if rd.Info.Size != n {
			t.Fatalf("range %+v: the object's size reads %d", c.r, rd.Info.Size)
		}
	}
	for _, r := range []engine.Range{{Start: n, End: -1}, {Start: n + 5, End: n + 10}} {
		_, _, err := get(st, "k", engine.GetOptions{Range: &r})
		wantErr(t, fmt.Sprintf("range %+v of %d bytes", r, n), err, engine.ErrInvalidRange)
	}
	got, rd, err := get(st, "k", engine.GetOptions{PartNumber: 1})
	if err != nil || !bytes.Equal(got, data) || rd.Start != 0 || rd.Length != n {
		t.Fatalf("part 1 of a single PUT: %d bytes, %v", len(got), err)
	}
	_, _, err = get(st, "k", engine.GetOptions{PartNumber: 2})
	wantErr(t, "part 2 of a single PUT", err, engine.ErrInvalidPartNumber)
	// HEAD resolves ranges and parts as GET does.
	_, err = st.HeadObject(ctx, bucket, "k", engine.GetOptions{PartNumber: 2})
	wantErr(t, "HEAD of part 2 of a single PUT", err, engine.ErrInvalidPartNumber)
	_, err = st.HeadObject(ctx, bucket, "k", engine.GetOptions{Range: &engine.Range{Start: n + 5, End: n + 10}})
	wantErr(t, "HEAD of a range past the end", err, engine.ErrInvalidRange)
	// An empty object has no range to give.
	put(t, st, "empty", nil, engine.PutOptions{})
	_, _, err = get(st, "empty", engine.GetOptions{Range: &engine.Range{Start: 0, End: 0}})
	wantErr(t, "a range of an empty object", err, engine.ErrInvalidRange)
}

func (s suite) testOverwrite(t *testing.T) {
	st := s.store(t)
	first := put(t, st, "k", []byte("first version"), engine.PutOptions{UserMeta: map[string]string{"v": "1"}, Tags: map[string]string{"t": "1"}})
	second := put(t, st, "k", []byte("second"), engine.PutOptions{ContentType: "text/plain"})
	if second.ETag == first.ETag || second.ModTime.Before(first.ModTime) {
		t.Fatalf("overwrite answered %+v after %+v", second, first)
	}
	oi := mustGet(t, st, "k", engine.GetOptions{}, []byte("second"))
	if oi.ETag != second.ETag || oi.UserMeta["v"] != "" || oi.Tags != nil || oi.ContentType != "text/plain" {
		t.Fatalf("after the overwrite: %+v; nothing of the first version may remain", oi)
	}
	// Unversioned: the object is the null version, and the overwritten
	// one is gone.
	mustGet(t, st, "k", engine.GetOptions{VersionID: engine.NullVersionID}, []byte("second"))
	res, err := st.ListObjectVersions(ctx, bucket, engine.ListVersionsOptions{})
	if err != nil || len(res.Versions) != 1 || res.Versions[0].ETag != second.ETag || !res.Versions[0].IsLatest {
		t.Fatalf("versions of an overwritten key in an unversioned bucket: %+v, %v", res.Versions, err)
	}
}

func (s suite) testDelete(t *testing.T) {
	st := s.store(t)
	put(t, st, "k", []byte("x"), engine.PutOptions{})
	put(t, st, "other", []byte("y"), engine.PutOptions{})
	if err := st.DeleteObject(ctx, bucket, "k"); err != nil {
		t.Fatal(err)
	}
	_, _, err := get(st, "k", engine.GetOptions{})
	wantErr(t, "GetObject of a deleted key", err, engine.ErrObjectNotFound)
	_, err = st.HeadObject(ctx, bucket, "k", engine.GetOptions{})
	wantErr(t, "HeadObject of a deleted key", err, engine.ErrObjectNotFound)
	mustGet(t, st, "other", engine.GetOptions{}, []byte("y"))
	res, err := st.ListObjects(ctx, bucket, engine.ListOptions{})
	if err != nil || !slices.Equal(keysOf(res.Objects), []string{"other"}) {
		t.Fatalf("listing after the delete: %q, %v", keysOf(res.Objects), err)
	}
	// In an unversioned bucket a delete removes for good: no marker.
	vs, err := st.ListObjectVersions(ctx, bucket, engine.ListVersionsOptions{})
	if err != nil || len(vs.Versions) != 1 {
		t.Fatalf("versions after a delete in an unversioned bucket: %+v, %v", vs.Versions, err)
	}
	dr, err := st.DeleteObjectVersion(ctx, bucket, "other", engine.DeleteOptions{})
	if err != nil || dr.DeleteMarker || dr.VersionID != "" {
		t.Fatalf("DeleteObjectVersion in an unversioned bucket: %+v, %v", dr, err)
	}
	// The null version named by id is the object.
	put(t, st, "null", []byte("x"), engine.PutOptions{})
	if dr, err := st.DeleteObjectVersion(ctx, bucket, "null", engine.DeleteOptions{VersionID: engine.NullVersionID}); err != nil || dr.DeleteMarker {
		t.Fatalf("deleting the null version by id: %+v, %v", dr, err)
	}
	_, err = st.HeadObject(ctx, bucket, "null", engine.GetOptions{})
	wantErr(t, "HEAD after deleting the null version", err, engine.ErrObjectNotFound)
	// A key that is not there is reported (the S3 layer answers 204
	// anyway).
	wantErr(t, "DeleteObject of a missing key", st.DeleteObject(ctx, bucket, "k"), engine.ErrObjectNotFound)
}

// testMissingBucketAndKey: every call on a bucket that does not exist is
// ErrBucketNotFound, on a key that does not exist ErrObjectNotFound.
func (s suite) testMissingBucketAndKey(t *testing.T) {
	st := s.store(t)
	const nb = "no-such-bucket"
	_, err := st.PutObject(ctx, nb, "k", strings.NewReader("x"), 1, engine.PutOptions{})
	wantErr(t, "PutObject", err, engine.ErrBucketNotFound)
	_, err = st.GetObject(ctx, nb, "k", engine.GetOptions{})
	wantErr(t, "GetObject", err, engine.ErrBucketNotFound)
	_, err = st.HeadObject(ctx, nb, "k", engine.GetOptions{})
	wantErr(t, "HeadObject", err, engine.ErrBucketNotFound)
	wantErr(t, "DeleteObject", st.DeleteObject(ctx, nb, "k"), engine.ErrBucketNotFound)
	_, err = st.ListObjects(ctx, nb, engine.ListOptions{})
	wantErr(t, "ListObjects", err, engine.ErrBucketNotFound)
	_, err = st.ListObjectVersions(ctx, nb, engine.ListVersionsOptions{})
	wantErr(t, "ListObjectVersions", err, engine.ErrBucketNotFound)
	_, err = st.NewMultipartUpload(ctx, nb, "k", engine.PutOptions{})
	wantErr(t, "NewMultipartUpload", err, engine.ErrBucketNotFound)
	_, err = st.ListMultipartUploads(ctx, nb, engine.ListUploadsOptions{})
	wantErr(t, "ListMultipartUploads", err, engine.ErrBucketNotFound)
	_, err = st.CopyObject(ctx, nb, "k", bucket, "k", engine.CopyOptions{})
	wantErr(t, "CopyObject from a missing bucket", err, engine.ErrBucketNotFound)

	_, _, err = get(st, "missing", engine.GetOptions{})
	wantErr(t, "GetObject of a missing key", err, engine.ErrObjectNotFound)
	_, err = st.HeadObject(ctx, bucket, "missing", engine.GetOptions{})
	wantErr(t, "HeadObject of a missing key", err, engine.ErrObjectNotFound)
	_, err = st.SetObjectTags(ctx, bucket, "missing", "", map[string]string{"a": "b"})
	wantErr(t, "SetObjectTags of a missing key", err, engine.ErrObjectNotFound)
	wantErr(t, "SetObjectACL of a missing key", st.SetObjectACL(ctx, bucket, "missing", "", "private"), engine.ErrObjectNotFound)
	_, err = st.CopyObject(ctx, bucket, "missing", bucket, "dst", engine.CopyOptions{})
	wantErr(t, "CopyObject of a missing key", err, engine.ErrObjectNotFound)
}

// testBodyChecks: a body that fails a check (Content-MD5, a checksum, its
// declared size) stores nothing, and the version there stays.
func (s suite) testBodyChecks(t *testing.T) {
	st := s.store(t)
	put(t, st, "k", []byte("original"), engine.PutOptions{})
	body := []byte("new body")
	wrongMD5 := md5.Sum([]byte("something else"))
	_, err := st.PutObject(ctx, bucket, "k", bytes.NewReader(body), int64(len(body)), engine.PutOptions{ContentMD5: wrongMD5[:]})
	wantErr(t, "a wrong Content-MD5", err, engine.ErrBadDigest)
	_, err = st.PutObject(ctx, bucket, "k", bytes.NewReader(body), int64(len(body)), engine.PutOptions{ChecksumAlgorithm: "CRC32",
		ExpectedChecksum: func() (string, error) { return "AAAAAA==", nil }})
	wantErr(t, "a wrong CRC32", err, engine.ErrChecksumMismatch)
	_, err = st.PutObject(ctx, bucket, "k", bytes.NewReader(body), int64(len(body))+10, engine.PutOptions{})
	wantErr(t, "a body shorter than its declared size", err, engine.ErrIncompleteBody)
	_, err = st.PutObject(ctx, bucket, "k", bytes.NewReader(body), int64(len(body))-1, engine.PutOptions{})
	wantErr(t, "a body longer than its declared size", err, engine.ErrInvalidArgument)
	bigMeta := map[string]string{"m": strings.Repeat("x", engine.MaxUserMetaLen)}
	for what, opts := range map[string]engine.PutOptions{
		"an unknown storage class":      {StorageClass: "GLACIER"},
		"user metadata over the limit":  {UserMeta: bigMeta},
		"an unknown checksum algorithm": {ChecksumAlgorithm: "MD4"},
	} {
		_, err = st.PutObject(ctx, bucket, "k", bytes.NewReader(body), int64(len(body)), opts)
		wantErr(t, "a PUT with "+what, err, engine.ErrInvalidArgument)
		_, err = st.NewMultipartUpload(ctx, bucket, "k", opts)
		wantErr(t, "an upload with "+what, err, engine.ErrInvalidArgument)
	}
	mustGet(t, st, "k", engine.GetOptions{}, []byte("original"))

	// Right checks store the body, and the checksum with it.
	rightMD5 := md5.Sum(body)
	sum := crc32.ChecksumIEEE(body)
	crc := base64.StdEncoding.EncodeToString([]byte{byte(sum >> 24), byte(sum >> 16), byte(sum >> 8), byte(sum)})
	oi, err := st.PutObject(ctx, bucket, "k", bytes.NewReader(body), int64(len(body)), engine.PutOptions{ContentMD5: rightMD5[:],
		ChecksumAlgorithm: "CRC32", ExpectedChecksum: func() (string, error) { return crc, nil }})
	if err != nil {
		t.Fatal(err)
	}
	hi, err := st.HeadObject(ctx, bucket, "k", engine.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for what, info := range map[string]engine.ObjectInfo{"PUT": oi, "HEAD": hi} {
		if info.Checksum.Algorithm != "CRC32" || info.Checksum.Value != crc || info.Checksum.Type != "FULL_OBJECT" {
			t.Errorf("%s: checksum %+v, want CRC32 %s FULL_OBJECT", what, info.Checksum, crc)
		}
	}
}

// --- listing ---

func (s suite) testListObjects(t *testing.T) {
	st := s.store(t)
	keys := []string{"a", "b/1", "b/2", "b/c/3", "c", "d/", "d/x", "e/f/g", "e/h"}
	for _, k := range keys {
		put(t, st, k, []byte(k), engine.PutOptions{})
	}
	for _, c := range []struct {
		opts     engine.ListOptions
		objects  []string
		prefixes []string
	}{
		{engine.ListOptions{}, keys, nil},
		{engine.ListOptions{Prefix: "b/"}, []string{"b/1", "b/2", "b/c/3"}, nil},
		{engine.ListOptions{Delimiter: "/"}, []string{"a", "c"}, []string{"b/", "d/", "e/"}},
		{engine.ListOptions{Prefix: "b/", Delimiter: "/"}, []string{"b/1", "b/2"}, []string{"b/c/"}},
		{engine.ListOptions{Prefix: "d/", Delimiter: "/"}, []string{"d/", "d/x"}, nil},
		{engine.ListOptions{After: "b/2"}, []string{"b/c/3", "c", "d/", "d/x", "e/f/g", "e/h"}, nil},
		{engine.ListOptions{After: "b/", Delimiter: "/"}, []string{"c"}, []string{"d/", "e/"}},
		{engine.ListOptions{Prefix: "e/", Delimiter: "f"}, []string{"e/h"}, []string{"e/f"}},
		{engine.ListOptions{Prefix: "zzz"}, nil, nil},
	} {
		res, err := st.ListObjects(ctx, bucket, c.opts)
		if err != nil {
			t.Fatalf("ListObjects(%+v): %v", c.opts, err)
		}
		if got := keysOf(res.Objects); !slices.Equal(got, append([]string{}, c.objects...)) ||
			!slices.Equal(append([]string{}, res.CommonPrefixes...), append([]string{}, c.prefixes...)) || res.IsTruncated {
			t.Errorf("ListObjects(%+v) = %q + prefixes %q (truncated %v); want %q + %q", c.opts, got, res.CommonPrefixes,
				res.IsTruncated, c.objects, c.prefixes)
		}
		for _, o := range res.Objects {
			if o.Size != int64(len(o.Key)) || o.ETag != md5hex([]byte(o.Key)) || o.ModTime.IsZero() {
				t.Errorf("listed %q: %+v", o.Key, o)
			}
		}
	}
}

// testListObjectsPaging: pages of MaxKeys entries (objects and common
// prefixes counted alike) continued with NextAfter add up to the whole
// listing, once each.
func (s suite) testListObjectsPaging(t *testing.T) {
	st := s.store(t)
	var keys []string
	for i := range 23 {
		k := fmt.Sprintf("k%02d", i)
		if i%5 == 0 {
			k = fmt.Sprintf("dir%02d/x", i)
			put(t, st, fmt.Sprintf("dir%02d/y", i), nil, engine.PutOptions{})
		}
		keys = append(keys, k)
		put(t, st, k, nil, engine.PutOptions{})
	}
	for _, delim := range []string{"", "/"} {
		var want []string
		for _, k := range keys {
			if delim != "" && strings.Contains(k, delim) {
				k = k[:strings.Index(k, delim)+1]
			}
			want = append(want, k)
		}
		sort.Strings(want)
		if delim == "" {
			for i := 0; i < 23; i += 5 {
				want = append(want, fmt.Sprintf("dir%02d/y", i))
			}
			sort.Strings(want)
		}
		for _, max := range []int{1, 4, 7} {
			var got []string
			after := ""
			for pages := 0; ; pages++ {
				if pages > 100 {
					t.Fatal("paging does not end")
				}
				res, err := st.ListObjects(ctx, bucket, engine.ListOptions{Delimiter: delim, After: after, MaxKeys: max})
				if err != nil {
					t.Fatal(err)
				}
				page := append(keysOf(res.Objects), res.CommonPrefixes...)
				if len(page) > max || (res.IsTruncated && len(page) != max) {
					t.Fatalf("delimiter %q, max %d: a page of %d entries (truncated %v)", delim, max, len(page), res.IsTruncated)
				}
				got = append(got, page...)
				if !res.IsTruncated {
					break
				}
				if res.NextAfter == "" || res.NextAfter <= after {
					t.Fatalf("delimiter %q, max %d: NextAfter %q after %q", delim, max, res.NextAfter, after)
				}
				after = res.NextAfter
			}
			sort.Strings(got)
			if !slices.Equal(got, want) {
				t.Errorf("delimiter %q, max %d: pages add up to %q, want %q", delim, max, got, want)
			}
		}
	}
}

// --- versions ---

// testVersions: in a versioned bucket every PUT makes a version with an
// id of its own; each reads back by id; the newest is current.
func (s suite) testVersions(t *testing.T) {
	st := s.versioned(t)
	var infos []engine.ObjectInfo
	for i := range 3 {
		infos = append(infos, put(t, st, "k", []byte(fmt.Sprintf("version %d", i)), engine.PutOptions{}))
	}
	ids := map[string]bool{}
	for _, oi := range infos {
		if oi.VersionID == "" || oi.VersionID == engine.NullVersionID || ids[oi.VersionID] {
			t.Fatalf("versions answered ids %+v: each must be new and not null", infos)
		}
		ids[oi.VersionID] = true
	}
	for i, oi := range infos {
		got := mustGet(t, st, "k", engine.GetOptions{VersionID: oi.VersionID}, []byte(fmt.Sprintf("version %d", i)))
		if got.VersionID != oi.VersionID || got.IsLatest != (i == 2) || got.ETag != oi.ETag {
			t.Fatalf("version %d read by id: %+v", i, got)
		}
		hi, err := st.HeadObject(ctx, bucket, "k", engine.GetOptions{VersionID: oi.VersionID})
		if err != nil || hi.VersionID != oi.VersionID || hi.IsLatest != (i == 2) {
			t.Fatalf("version %d headed by id: %+v, %v", i, hi, err)
		}
	}
	cur := mustGet(t, st, "k", engine.GetOptions{}, []byte("version 2"))
	if cur.VersionID != infos[2].VersionID {
		t.Fatalf("current version %q, want %q", cur.VersionID, infos[2].VersionID)
	}
	res, err := st.ListObjectVersions(ctx, bucket, engine.ListVersionsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Versions) != 3 {
		t.Fatalf("ListObjectVersions: %+v", res.Versions)
	}
	for i, v := range res.Versions {
		if want := infos[2-i]; v.VersionID != want.VersionID || v.IsLatest != (i == 0) || v.ETag != want.ETag {
			t.Fatalf("version %d listed as %+v, want %s newest first", i, v, want.VersionID)
		}
	}
	// Deleting a noncurrent version removes it alone; deleting the
	// current one makes the newest left current.
	if dr, err := st.DeleteObjectVersion(ctx, bucket, "k", engine.DeleteOptions{VersionID: infos[0].VersionID}); err != nil ||
		dr.VersionID != infos[0].VersionID || dr.DeleteMarker {
		t.Fatalf("deleting a noncurrent version: %+v, %v", dr, err)
	}
	_, _, err = get(st, "k", engine.GetOptions{VersionID: infos[0].VersionID})
	wantErr(t, "reading a deleted version", err, engine.ErrNoSuchVersion)
	_, err = st.DeleteObjectVersion(ctx, bucket, "k", engine.DeleteOptions{VersionID: infos[0].VersionID})
	wantErr(t, "deleting a deleted version", err, engine.ErrNoSuchVersion)
	if _, err := st.DeleteObjectVersion(ctx, bucket, "k", engine.DeleteOptions{VersionID: infos[2].VersionID}); err != nil {
		t.Fatal(err)
	}
	if cur := mustGet(t, st, "k", engine.GetOptions{}, []byte("version 1")); cur.VersionID != infos[1].VersionID || !cur.IsLatest {
		t.Fatalf("after deleting the current version: %+v", cur)
	}
	_, _, err = get(st, "k", engine.GetOptions{VersionID: "not a version id"})
	wantErr(t, "a malformed version id", err, engine.ErrInvalidArgument)
	_, _, err = get(st, "k", engine.GetOptions{VersionID: engine.NullVersionID})
	wantErr(t, "the null version of a key that never had one", err, engine.ErrNoSuchVersion)
}

// testDeleteMarkers: a delete without a version id in a versioned bucket
// makes a delete marker current; reads then answer DeleteMarkerError,
// listings skip the key, and removing the marker brings the object back.
func (s suite) testDeleteMarkers(t *testing.T) {
	st := s.versioned(t)
	v1 := put(t, st, "k", []byte("data"), engine.PutOptions{})
	dr, err := st.DeleteObjectVersion(ctx, bucket, "k", engine.DeleteOptions{})
	if err != nil || !dr.DeleteMarker || dr.VersionID == "" || dr.VersionID == v1.VersionID {
		t.Fatalf("delete in a versioned bucket: %+v, %v; want a new delete marker", dr, err)
	}
	_, _, err = get(st, "k", engine.GetOptions{})
	var dm *engine.DeleteMarkerError
	if !errors.As(err, &dm) || !errors.Is(err, engine.ErrObjectNotFound) || dm.Marker.VersionID != dr.VersionID || !dm.Marker.DeleteMarker {
		t.Fatalf("GET of a key whose current version is a marker: %v; want a DeleteMarkerError (ErrObjectNotFound) naming %s", err, dr.VersionID)
	}
	_, err = st.HeadObject(ctx, bucket, "k", engine.GetOptions{})
	if !errors.As(err, &dm) || !errors.Is(err, engine.ErrObjectNotFound) {
		t.Fatalf("HEAD of a key whose current version is a marker: %v", err)
	}
	_, err = st.HeadObject(ctx, bucket, "k", engine.GetOptions{VersionID: dr.VersionID})
	if !errors.As(err, &dm) || !errors.Is(err, engine.ErrMethodNotAllowed) {
		t.Fatalf("HEAD of the marker by id: %v; want a DeleteMarkerError (ErrMethodNotAllowed)", err)
	}
	mustGet(t, st, "k", engine.GetOptions{VersionID: v1.VersionID}, []byte("data"))
	if res, err := st.ListObjects(ctx, bucket, engine.ListOptions{}); err != nil || len(res.Objects) != 0 {
		t.Fatalf("ListObjects lists a deleted key: %+v, %v", res.Objects, err)
	}
	res, err := st.ListObjectVersions(ctx, bucket, engine.ListVersionsOptions{})
	if err != nil || len(res.Versions) != 2 || !res.Versions[0].DeleteMarker || !res.Versions[0].IsLatest ||
		res.Versions[0].VersionID != dr.VersionID || res.Versions[1].VersionID != v1.VersionID || res.Versions[1].IsLatest {
		t.Fatalf("versions: %+v, %v; want the marker (latest), then the data", res.Versions, err)
	}
	// A common prefix whose keys are all deleted is not listed.
	put(t, st, "dir/a", []byte("x"), engine.PutOptions{})
	if _, err := st.DeleteObjectVersion(ctx, bucket, "dir/a", engine.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if res, err := st.ListObjects(ctx, bucket, engine.ListOptions{Delimiter: "/"}); err != nil || len(res.Objects)+len(res.CommonPrefixes) != 0 {
		t.Fatalf("a delimiter listing of deleted keys: %q + %q, %v", keysOf(res.Objects), res.CommonPrefixes, err)
	}
	// A delete of a key that never existed makes a marker too.
	if dr, err := st.DeleteObjectVersion(ctx, bucket, "never", engine.DeleteOptions{}); err != nil || !dr.DeleteMarker {
		t.Fatalf("delete of a missing key in a versioned bucket: %+v, %v", dr, err)
	}
	// Removing the marker by id brings the data back.
	if rm, err := st.DeleteObjectVersion(ctx, bucket, "k", engine.DeleteOptions{VersionID: dr.VersionID}); err != nil || !rm.DeleteMarker || rm.VersionID != dr.VersionID {
		t.Fatalf("removing the marker: %+v, %v", rm, err)
	}
	if oi := mustGet(t, st, "k", engine.GetOptions{}, []byte("data")); oi.VersionID != v1.VersionID {
		t.Fatalf("after the marker went: %+v", oi)
	}
}

// testListObjectVersionsPaging: pages of one entry continued with the
// next key and version id markers walk every version once, in order.
func (s suite) testListObjectVersionsPaging(t *testing.T) {
	st := s.versioned(t)
	var want []string
	for _, k := range []string{"a", "b", "c/d"} {
		var ids []string
		for i := range 3 {
			oi := put(t, st, k, []byte(fmt.Sprint(i)), engine.PutOptions{})
			ids = append(ids, oi.VersionID)
		}
		for i := len(ids) - 1; i >= 0; i-- {
			want = append(want, k+"@"+ids[i])
		}
	}
	for _, max := range []int{1, 2, 4} {
		var got []string
		opts := engine.ListVersionsOptions{MaxKeys: max}
		for pages := 0; ; pages++ {
			if pages > 50 {
				t.Fatal("paging does not end")
			}
			res, err := st.ListObjectVersions(ctx, bucket, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Versions) > max {
				t.Fatalf("max %d: a page of %d", max, len(res.Versions))
			}
			for _, v := range res.Versions {
				got = append(got, v.Key+"@"+v.VersionID)
			}
			if !res.IsTruncated {
				break
			}
			opts.KeyMarker, opts.VersionIDMarker = res.NextKeyMarker, res.NextVersionIDMarker
		}
		if !slices.Equal(got, want) {
			t.Errorf("max %d: pages list %q, want %q", max, got, want)
		}
	}
	res, err := st.ListObjectVersions(ctx, bucket, engine.ListVersionsOptions{Delimiter: "/"})
	if err != nil || len(res.Versions) != 6 || !slices.Equal(res.CommonPrefixes, []string{"c/"}) {
		t.Fatalf("versions with a delimiter: %d versions, prefixes %q, %v", len(res.Versions), res.CommonPrefixes, err)
	}
	res, err = st.ListObjectVersions(ctx, bucket, engine.ListVersionsOptions{Prefix: "b"})
	if err != nil || len(res.Versions) != 3 || res.Versions[0].Key != "b" {
		t.Fatalf("versions of prefix b: %+v, %v", res.Versions, err)
	}
	res, err = st.ListObjectVersions(ctx, bucket, engine.ListVersionsOptions{KeyMarker: "a"})
	if err != nil || len(res.Versions) != 6 || res.Versions[0].Key != "b" {
		t.Fatalf("versions after key a: %d, first %+v, %v", len(res.Versions), res.Versions, err)
	}
}

// testSuspendedVersioning: writes to a suspended bucket make the null
// version, which the next one replaces; versions made while enabled
// stay.
func (s suite) testSuspendedVersioning(t *testing.T) {
	st := s.versioned(t)
	kept := put(t, st, "k", []byte("enabled"), engine.PutOptions{})
	if err := st.SetBucketConfig(ctx, bucket, engine.BucketConfigVersioning, engine.VersioningSuspended); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"null 1", "null 2"} {
		if oi := put(t, st, "k", []byte(body), engine.PutOptions{}); oi.VersionID != "" {
			t.Fatalf("a PUT to a suspended bucket made version %q, want the null version", oi.VersionID)
		}
	}
	mustGet(t, st, "k", engine.GetOptions{VersionID: engine.NullVersionID}, []byte("null 2"))
	mustGet(t, st, "k", engine.GetOptions{VersionID: kept.VersionID}, []byte("enabled"))
	res, err := st.ListObjectVersions(ctx, bucket, engine.ListVersionsOptions{})
	if err != nil || len(res.Versions) != 2 || res.Versions[0].VersionID != "" || res.Versions[1].VersionID != kept.VersionID {
		t.Fatalf("versions: %+v, %v; want the null version, then the one made while enabled", res.Versions, err)
	}
	// A delete makes the null version a delete marker.
	dr, err := st.DeleteObjectVersion(ctx, bucket, "k", engine.DeleteOptions{})
	if err != nil || !dr.DeleteMarker || dr.VersionID != "" {
		t.Fatalf("delete in a suspended bucket: %+v, %v; want a null delete marker", dr, err)
	}
	if res, err := st.ListObjectVersions(ctx, bucket, engine.ListVersionsOptions{}); err != nil || len(res.Versions) != 2 || !res.Versions[0].DeleteMarker {
		t.Fatalf("versions after the delete: %+v, %v", res.Versions, err)
	}
}

// --- multipart ---

// uploadParts uploads the parts of data split at the given sizes.
func uploadParts(t *testing.T, st ObjectStore, key, id string, parts ...[]byte) []engine.CompletePart {
	t.Helper()
	var out []engine.CompletePart
	for i, p := range parts {
		pi, err := st.PutObjectPart(ctx, bucket, key, id, i+1, bytes.NewReader(p), int64(len(p)), engine.PartOptions{})
		if err != nil {
			t.Fatalf("PutObjectPart %d: %v", i+1, err)
		}
		if pi.Number != i+1 || pi.Size != int64(len(p)) || pi.ETag != md5hex(p) {
			t.Fatalf("part %d answered %+v", i+1, pi)
		}
		out = append(out, engine.CompletePart{Number: pi.Number, ETag: pi.ETag})
	}
	return out
}

// multipartETag is S3's ETag of a multipart object: the MD5 of the
// parts' binary MD5s, then "-" and the number of parts.
func multipartETag(parts ...[]byte) string {
	var sums []byte
	for _, p := range parts {
		s := md5.Sum(p)
		sums = append(sums, s[:]...)
	}
	return fmt.Sprintf("%s-%d", md5hex(sums), len(parts))
}

func (s suite) testMultipart(t *testing.T) {
	st := s.store(t)
	opts := engine.PutOptions{ContentType: "video/test", UserMeta: map[string]string{"m": "1"}, Tags: map[string]string{"t": "v"}}
	id, err := st.NewMultipartUpload(ctx, bucket, "big", opts)
	if err != nil || id == "" {
		t.Fatalf("NewMultipartUpload: %q, %v", id, err)
	}
	p1, p2, p3 := randBytes(1, engine.MinPartSize), randBytes(2, engine.MinPartSize+1), randBytes(3, 1000)
	parts := uploadParts(t, st, "big", id, p1, []byte("replaced below"), p3)
	// A part uploaded again replaces the earlier one.
	pi, err := st.PutObjectPart(ctx, bucket, "big", id, 2, bytes.NewReader(p2), int64(len(p2)), engine.PartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	parts[1].ETag = pi.ETag

	lp, err := st.ListObjectParts(ctx, bucket, "big", id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if lp.Upload.UploadID != id || lp.Upload.Key != "big" || lp.Upload.Bucket != bucket || lp.Upload.StorageClass != "STANDARD" ||
		lp.IsTruncated || len(lp.Parts) != 3 ||
		lp.Parts[1].ETag != md5hex(p2) || lp.Parts[1].Size != int64(len(p2)) || lp.Parts[2].Number != 3 {
		t.Fatalf("ListObjectParts: %+v", lp)
	}
	page, err := st.ListObjectParts(ctx, bucket, "big", id, 0, 2)
	if err != nil || len(page.Parts) != 2 || !page.IsTruncated || page.NextPartNumberMarker != 2 {
		t.Fatalf("ListObjectParts of 2: %+v, %v", page, err)
	}
	page, err = st.ListObjectParts(ctx, bucket, "big", id, page.NextPartNumberMarker, 2)
	if err != nil || len(page.Parts) != 1 || page.Parts[0].Number != 3 || page.IsTruncated {
		t.Fatalf("ListObjectParts after part 2: %+v, %v", page, err)
	}
	if ups, err := st.ListMultipartUploads(ctx, bucket, engine.ListUploadsOptions{}); err != nil || len(ups.Uploads) != 1 ||
		ups.Uploads[0].UploadID != id || ups.Uploads[0].StorageClass != "STANDARD" {
		t.Fatalf("ListMultipartUploads: %+v, %v", ups, err)
	}
	// Nothing is visible before the completion.
	_, err = st.HeadObject(ctx, bucket, "big", engine.GetOptions{})
	wantErr(t, "HEAD of an upload's key before completion", err, engine.ErrObjectNotFound)

	_, err = st.CompleteMultipartUpload(ctx, bucket, "big", id, nil, engine.PutOptions{})
	wantErr(t, "a completion listing no parts", err, engine.ErrMalformedCompletion)
	// Clients send the parts' ETags quoted, as S3 gave them.
	quoted := slices.Clone(parts)
	for i := range quoted {
		quoted[i].ETag = `"` + quoted[i].ETag + `"`
	}
	oi, err := st.CompleteMultipartUpload(ctx, bucket, "big", id, quoted, engine.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if oi.Parts[0].ETag != md5hex(p1) {
		t.Fatalf("the completed object's part 1 has ETag %q, want %q unquoted", oi.Parts[0].ETag, md5hex(p1))
	}
	whole := slices.Concat(p1, p2, p3)
	if oi.ETag != multipartETag(p1, p2, p3) || oi.Size != int64(len(whole)) || len(oi.Parts) != 3 || oi.Parts[1].Size != int64(len(p2)) {
		t.Fatalf("CompleteMultipartUpload answered %+v; want ETag %s, size %d, 3 parts", oi, multipartETag(p1, p2, p3), len(whole))
	}
	got := mustGet(t, st, "big", engine.GetOptions{}, whole)
	if got.ETag != oi.ETag || got.ContentType != "video/test" || got.UserMeta["m"] != "1" || got.Tags["t"] != "v" {
		t.Fatalf("the completed object: %+v; want the upload's metadata and tags", got)
	}
	mustGet(t, st, "big", engine.GetOptions{PartNumber: 2}, p2)
	mustGet(t, st, "big", engine.GetOptions{Range: &engine.Range{Start: int64(len(p1)) - 5, End: int64(len(p1)) + 4}}, whole[len(p1)-5:len(p1)+5])
	_, _, err = get(st, "big", engine.GetOptions{PartNumber: 4})
	wantErr(t, "part 4 of 3", err, engine.ErrInvalidPartNumber)
	if ups, err := st.ListMultipartUploads(ctx, bucket, engine.ListUploadsOptions{}); err != nil || len(ups.Uploads) != 0 {
		t.Fatalf("uploads after completion: %+v, %v", ups, err)
	}
	// A completion repeated (a client that lost the answer) answers the
	// same object.
	again, err := st.CompleteMultipartUpload(ctx, bucket, "big", id, parts, engine.PutOptions{})
	if err != nil || again.ETag != oi.ETag || again.Size != oi.Size {
		t.Fatalf("a repeated completion: %+v, %v; want the object it made", again, err)
	}
	_, err = st.PutObjectPart(ctx, bucket, "big", id, 4, strings.NewReader("x"), 1, engine.PartOptions{})
	wantErr(t, "a part of a completed upload", err, engine.ErrNoSuchUpload)
}

func (s suite) testMultipartErrors(t *testing.T) {
	st := s.store(t)
	id, err := st.NewMultipartUpload(ctx, bucket, "k", engine.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	small, last := []byte("too small to be anything but the last part"), []byte("last")
	parts := uploadParts(t, st, "k", id, small, last)
	for _, c := range []struct {
		what  string
		parts []engine.CompletePart
		want  error
	}{
		{"a part too small before the last", parts, engine.ErrEntityTooSmall},
		{"parts out of order", []engine.CompletePart{parts[1], parts[0]}, engine.ErrInvalidPartOrder},
		{"a wrong ETag", []engine.CompletePart{{Number: 1, ETag: md5hex([]byte("other"))}}, engine.ErrInvalidPart},
		{"a part never uploaded", []engine.CompletePart{{Number: 3, ETag: parts[0].ETag}}, engine.ErrInvalidPart},
	} {
		_, err := st.CompleteMultipartUpload(ctx, bucket, "k", id, c.parts, engine.PutOptions{})
		wantErr(t, "completing with "+c.what, err, c.want)
	}
	// The upload survives its failed completions.
	if oi, err := st.CompleteMultipartUpload(ctx, bucket, "k", id, parts[1:], engine.PutOptions{}); err != nil || oi.ETag != multipartETag(last) {
		t.Fatalf("completing with the last part alone: %+v, %v", oi, err)
	}
	mustGet(t, st, "k", engine.GetOptions{}, last)

	id, err = st.NewMultipartUpload(ctx, bucket, "k2", engine.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, engine.MaxPartNumber + 1} {
		_, err := st.PutObjectPart(ctx, bucket, "k2", id, n, strings.NewReader("x"), 1, engine.PartOptions{})
		wantErr(t, fmt.Sprintf("part number %d", n), err, engine.ErrInvalidPartNumber)
	}
	_, err = st.PutObjectPart(ctx, bucket, "k2", "no-such-upload", 1, strings.NewReader("x"), 1, engine.PartOptions{})
	wantErr(t, "a part of an unknown upload", err, engine.ErrNoSuchUpload)
	_, err = st.PutObjectPart(ctx, bucket, "another-key", id, 1, strings.NewReader("x"), 1, engine.PartOptions{})
	wantErr(t, "a part of an upload under another key", err, engine.ErrNoSuchUpload)
	_, err = st.ListObjectParts(ctx, bucket, "k2", "no-such-upload", 0, 0)
	wantErr(t, "ListObjectParts of an unknown upload", err, engine.ErrNoSuchUpload)
	_, err = st.CompleteMultipartUpload(ctx, bucket, "k2", "no-such-upload", []engine.CompletePart{{Number: 1, ETag: md5hex(nil)}}, engine.PutOptions{})
	wantErr(t, "completing an unknown upload", err, engine.ErrNoSuchUpload)
}

func (s suite) testMultipartAbort(t *testing.T) {
	st := s.store(t)
	id, err := st.NewMultipartUpload(ctx, bucket, "k", engine.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	parts := uploadParts(t, st, "k", id, []byte("part"))
	if err := st.AbortMultipartUpload(ctx, bucket, "k", id); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "aborting again", st.AbortMultipartUpload(ctx, bucket, "k", id), engine.ErrNoSuchUpload)
	_, err = st.CompleteMultipartUpload(ctx, bucket, "k", id, parts, engine.PutOptions{})
	wantErr(t, "completing an aborted upload", err, engine.ErrNoSuchUpload)
	_, err = st.ListObjectParts(ctx, bucket, "k", id, 0, 0)
	wantErr(t, "listing the parts of an aborted upload", err, engine.ErrNoSuchUpload)
	if ups, err := st.ListMultipartUploads(ctx, bucket, engine.ListUploadsOptions{}); err != nil || len(ups.Uploads) != 0 {
		t.Fatalf("uploads after the abort: %+v, %v", ups, err)
	}
	_, err = st.HeadObject(ctx, bucket, "k", engine.GetOptions{})
	wantErr(t, "HEAD of an aborted upload's key", err, engine.ErrObjectNotFound)
	wantErr(t, "aborting an unknown upload", st.AbortMultipartUpload(ctx, bucket, "k", "no-such-upload"), engine.ErrNoSuchUpload)
}

// testListMultipartUploads: uploads listed by key with prefix,
// delimiter and paging by key and upload id markers.
func (s suite) testListMultipartUploads(t *testing.T) {
	st := s.store(t)
	ids := map[string]string{}
	for _, k := range []string{"b", "a/1", "a/2", "c"} {
		id, err := st.NewMultipartUpload(ctx, bucket, k, engine.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids[k] = id
	}
	list := func(opts engine.ListUploadsOptions) engine.ListUploadsResult {
		t.Helper()
		res, err := st.ListMultipartUploads(ctx, bucket, opts)
		if err != nil {
			t.Fatalf("ListMultipartUploads(%+v): %v", opts, err)
		}
		for _, u := range res.Uploads {
			if u.Bucket != bucket || ids[u.Key] != u.UploadID || u.Initiated.IsZero() {
				t.Fatalf("ListMultipartUploads(%+v) lists %+v", opts, u)
			}
		}
		return res
	}
	keys := func(res engine.ListUploadsResult) []string {
		var out []string
		for _, u := range res.Uploads {
			out = append(out, u.Key)
		}
		return out
	}
	if res := list(engine.ListUploadsOptions{}); !slices.Equal(keys(res), []string{"a/1", "a/2", "b", "c"}) || res.IsTruncated {
		t.Errorf("all uploads: %q (truncated %v), want them by key", keys(res), res.IsTruncated)
	}
	if res := list(engine.ListUploadsOptions{Prefix: "a/"}); !slices.Equal(keys(res), []string{"a/1", "a/2"}) {
		t.Errorf("uploads under a/: %q", keys(res))
	}
	if res := list(engine.ListUploadsOptions{Delimiter: "/"}); !slices.Equal(keys(res), []string{"b", "c"}) || !slices.Equal(res.CommonPrefixes, []string{"a/"}) {
		t.Errorf("uploads with delimiter /: %q + prefixes %q", keys(res), res.CommonPrefixes)
	}
	var got []string
	opts := engine.ListUploadsOptions{MaxUploads: 1}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		res := list(opts)
		if len(res.Uploads) != 1 {
			t.Fatalf("a page of MaxUploads 1 with %d uploads", len(res.Uploads))
		}
		got = append(got, res.Uploads[0].Key)
		if !res.IsTruncated {
			break
		}
		opts.KeyMarker, opts.UploadIDMarker = res.NextKeyMarker, res.NextUploadIDMarker
	}
	if !slices.Equal(got, []string{"a/1", "a/2", "b", "c"}) {
		t.Errorf("paging one upload at a time: %q", got)
	}
	if res := list(engine.ListUploadsOptions{KeyMarker: "a/2"}); !slices.Equal(keys(res), []string{"b", "c"}) {
		t.Errorf("uploads after key a/2: %q", keys(res))
	}
}

// --- copy, tags, ACLs, conditions ---

func (s suite) testCopy(t *testing.T) {
	st := s.store(t)
	if err := st.MakeBucket(ctx, "other", engine.BucketOptions{}); err != nil {
		t.Fatal(err)
	}
	data := randBytes(7, 100000)
	src := put(t, st, "src", data, engine.PutOptions{ContentType: "a/b", UserMeta: map[string]string{"m": "src"},
		Tags: map[string]string{"t": "src"}, StorageClass: "REDUCED_REDUNDANCY"})
	// COPY directive: the source's metadata and tags come along.
	oi, err := st.CopyObject(ctx, bucket, "src", "other", "dst", engine.CopyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if oi.ETag != src.ETag || oi.Size != src.Size || oi.Bucket != "other" || oi.Key != "dst" {
		t.Fatalf("CopyObject answered %+v", oi)
	}
	r, err := st.GetObject(ctx, "other", "dst", engine.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if !bytes.Equal(got, data) || r.Info.ContentType != "a/b" || r.Info.UserMeta["m"] != "src" || r.Info.Tags["t"] != "src" ||
		r.Info.StorageClass != "REDUCED_REDUNDANCY" {
		t.Fatalf("the copy: %d bytes, %+v; want the source's metadata, tags and storage class", len(got), r.Info)
	}
	// As S3 gives every copy one, the copy has a checksum of its data:
	// CRC64NVME unless the source has another or the request names one.
	h, err := hashing.NewChecksum(hashing.CRC64NVME)
	if err != nil {
		t.Fatal(err)
	}
	h.Write(data)
	if want := base64.StdEncoding.EncodeToString(h.Sum(nil)); oi.Checksum.Algorithm != hashing.CRC64NVME ||
		oi.Checksum.Value != want || oi.Checksum.Type != "FULL_OBJECT" {
		t.Errorf("the copy's checksum: %+v, want %s %s FULL_OBJECT", oi.Checksum, hashing.CRC64NVME, want)
	}
	// REPLACE directives: the request's metadata and tags instead.
	oi, err = st.CopyObject(ctx, bucket, "src", bucket, "dst2", engine.CopyOptions{ReplaceMetadata: true, ReplaceTags: true,
		Put: engine.PutOptions{ContentType: "c/d", UserMeta: map[string]string{"m": "new"}, Tags: map[string]string{"t": "new"}}})
	if err != nil {
		t.Fatal(err)
	}
	if info := mustGet(t, st, "dst2", engine.GetOptions{}, data); info.ContentType != "c/d" || info.UserMeta["m"] != "new" || info.Tags["t"] != "new" {
		t.Fatalf("a copy with REPLACE: %+v", info)
	}
	// Metadata replaced, tags copied.
	if _, err := st.CopyObject(ctx, bucket, "src", bucket, "dst3", engine.CopyOptions{ReplaceMetadata: true,
		Put: engine.PutOptions{UserMeta: map[string]string{"m": "meta only"}}}); err != nil {
		t.Fatal(err)
	}
	if info := mustGet(t, st, "dst3", engine.GetOptions{}, data); info.UserMeta["m"] != "meta only" || info.Tags["t"] != "src" {
		t.Fatalf("a copy replacing metadata only: %+v", info)
	}
	// A copy onto itself replacing its metadata keeps the data.
	if _, err := st.CopyObject(ctx, bucket, "src", bucket, "src", engine.CopyOptions{ReplaceMetadata: true,
		Put: engine.PutOptions{ContentType: "e/f"}}); err != nil {
		t.Fatalf("a copy onto itself: %v", err)
	}
	if info := mustGet(t, st, "src", engine.GetOptions{}, data); info.ContentType != "e/f" {
		t.Fatalf("after a copy onto itself: %+v", info)
	}
	// Source conditions.
	_, err = st.CopyObject(ctx, bucket, "src", bucket, "dst4", engine.CopyOptions{SourceConditions: engine.Conditions{IfMatch: md5hex([]byte("other"))}})
	wantErr(t, "a copy whose source If-Match fails", err, engine.ErrPreconditionFailed)
	_, err = st.CopyObject(ctx, bucket, "src", bucket, "dst4", engine.CopyOptions{SourceConditions: engine.Conditions{IfNoneMatch: src.ETag}})
	wantErr(t, "a copy whose source If-None-Match fails", err, engine.ErrPreconditionFailed)
	if _, err := st.CopyObject(ctx, bucket, "src", bucket, "dst4", engine.CopyOptions{SourceConditions: engine.Conditions{IfMatch: src.ETag}}); err != nil {
		t.Fatalf("a copy whose source If-Match holds: %v", err)
	}
	_, err = st.CopyObject(ctx, bucket, "src", "no-such-bucket", "dst", engine.CopyOptions{})
	wantErr(t, "a copy into a missing bucket", err, engine.ErrBucketNotFound)
	// A copy onto itself that changes nothing is refused (S3's "needs new
	// metadata"); in a versioned bucket it makes a new version.
	_, err = st.CopyObject(ctx, bucket, "src", bucket, "src", engine.CopyOptions{})
	wantErr(t, "a copy onto itself with nothing new", err, engine.ErrInvalidArgument)
	if err := st.SetBucketConfig(ctx, bucket, engine.BucketConfigVersioning, engine.VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	v1 := put(t, st, "v", []byte("versioned"), engine.PutOptions{})
	v2, err := st.CopyObject(ctx, bucket, "v", bucket, "v", engine.CopyOptions{})
	if err != nil || v2.VersionID == "" || v2.VersionID == v1.VersionID {
		t.Fatalf("a copy onto itself in a versioned bucket: %+v, %v; want a new version", v2, err)
	}
	mustGet(t, st, "v", engine.GetOptions{VersionID: v1.VersionID}, []byte("versioned"))
	mustGet(t, st, "v", engine.GetOptions{}, []byte("versioned"))
	// A copy from a version by id.
	put(t, st, "v", []byte("newer"), engine.PutOptions{})
	if _, err := st.CopyObject(ctx, bucket, "v", bucket, "from-version", engine.CopyOptions{SourceVersionID: v1.VersionID}); err != nil {
		t.Fatal(err)
	}
	mustGet(t, st, "from-version", engine.GetOptions{}, []byte("versioned"))
}

func (s suite) testTags(t *testing.T) {
	st := s.versioned(t)
	v1 := put(t, st, "k", []byte("x"), engine.PutOptions{Tags: map[string]string{"a": "1", "b": "2"}})
	if fmt.Sprint(v1.Tags) != "map[a:1 b:2]" {
		t.Fatalf("PUT answered tags %v", v1.Tags)
	}
	v2 := put(t, st, "k", []byte("y"), engine.PutOptions{})
	// Tags change in place: version, ETag and time stay.
	oi, err := st.SetObjectTags(ctx, bucket, "k", v1.VersionID, map[string]string{"c": "3"})
	if err != nil {
		t.Fatal(err)
	}
	if oi.VersionID != v1.VersionID || oi.ETag != v1.ETag || !oi.ModTime.Equal(v1.ModTime) || fmt.Sprint(oi.Tags) != "map[c:3]" {
		t.Fatalf("SetObjectTags of a noncurrent version answered %+v", oi)
	}
	if hi, _ := st.HeadObject(ctx, bucket, "k", engine.GetOptions{VersionID: v1.VersionID}); fmt.Sprint(hi.Tags) != "map[c:3]" {
		t.Fatalf("tags of the noncurrent version read %v", hi.Tags)
	}
	if hi, _ := st.HeadObject(ctx, bucket, "k", engine.GetOptions{}); hi.Tags != nil || hi.VersionID != v2.VersionID {
		t.Fatalf("the current version's tags: %v (version %q); only the version named changes", hi.Tags, hi.VersionID)
	}
	if oi, err := st.SetObjectTags(ctx, bucket, "k", "", map[string]string{"cur": "1"}); err != nil || oi.VersionID != v2.VersionID {
		t.Fatalf("SetObjectTags of the current version: %+v, %v", oi, err)
	}
	if oi, err := st.SetObjectTags(ctx, bucket, "k", v1.VersionID, nil); err != nil || oi.Tags != nil {
		t.Fatalf("removing tags: %+v, %v", oi, err)
	}
	many := map[string]string{}
	for i := range engine.MaxObjectTags + 1 {
		many[fmt.Sprint(i)] = "v"
	}
	_, err = st.SetObjectTags(ctx, bucket, "k", "", many)
	wantErr(t, "more tags than allowed", err, engine.ErrInvalidArgument)
	_, err = st.PutObject(ctx, bucket, "k2", strings.NewReader("x"), 1, engine.PutOptions{Tags: many})
	wantErr(t, "a PUT with more tags than allowed", err, engine.ErrInvalidArgument)
}

func (s suite) testObjectACL(t *testing.T) {
	st := s.store(t)
	put(t, st, "k", []byte("x"), engine.PutOptions{ACL: "private"})
	etag := md5hex([]byte("x"))
	if err := st.SetObjectACL(ctx, bucket, "k", "", "public-read"); err != nil {
		t.Fatal(err)
	}
	hi, err := st.HeadObject(ctx, bucket, "k", engine.GetOptions{})
	if err != nil || hi.ACL != "public-read" || hi.ETag != etag {
		t.Fatalf("after SetObjectACL: %+v, %v", hi, err)
	}
}

// testConditionalWrites: If-None-Match: * creates only, If-Match
// replaces only the version it names, If-None-Match with ETags refuses
// those; a refused write changes nothing.
func (s suite) testConditionalWrites(t *testing.T) {
	st := s.store(t)
	putIf := func(key, body string, opts engine.PutOptions) error {
		_, err := st.PutObject(ctx, bucket, key, strings.NewReader(body), int64(len(body)), opts)
		return err
	}
	if err := putIf("k", "v1", engine.PutOptions{IfNoneMatchAny: true}); err != nil {
		t.Fatalf("If-None-Match: * on a new key: %v", err)
	}
	wantErr(t, "If-None-Match: * on an existing key", putIf("k", "v2", engine.PutOptions{IfNoneMatchAny: true}), engine.ErrPreconditionFailed)
	wantErr(t, "If-Match with another ETag", putIf("k", "v2", engine.PutOptions{IfMatch: md5hex([]byte("v0"))}), engine.ErrPreconditionFailed)
	wantErr(t, "If-Match on a missing key", putIf("none", "v", engine.PutOptions{IfMatch: md5hex([]byte("v"))}), engine.ErrObjectNotFound)
	wantErr(t, "If-None-Match listing the current ETag", putIf("k", "v2", engine.PutOptions{IfNoneMatch: `"abc", "` + md5hex([]byte("v1")) + `"`}), engine.ErrPreconditionFailed)
	mustGet(t, st, "k", engine.GetOptions{}, []byte("v1"))
	if err := putIf("k", "v2", engine.PutOptions{IfMatch: `"` + md5hex([]byte("v1")) + `"`}); err != nil {
		t.Fatalf("If-Match with the current ETag: %v", err)
	}
	if err := putIf("k", "v3", engine.PutOptions{IfNoneMatch: md5hex([]byte("v1"))}); err != nil {
		t.Fatalf("If-None-Match listing an older ETag: %v", err)
	}
	mustGet(t, st, "k", engine.GetOptions{}, []byte("v3"))
	// The same rules hold for a multipart completion.
	id, err := st.NewMultipartUpload(ctx, bucket, "k", engine.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	parts := uploadParts(t, st, "k", id, []byte("mp"))
	_, err = st.CompleteMultipartUpload(ctx, bucket, "k", id, parts, engine.PutOptions{IfNoneMatchAny: true})
	wantErr(t, "a completion with If-None-Match: * on an existing key", err, engine.ErrPreconditionFailed)
	mustGet(t, st, "k", engine.GetOptions{}, []byte("v3"))
}

// testConditionalReads: the HTTP preconditions of GET and HEAD.
func (s suite) testConditionalReads(t *testing.T) {
	st := s.store(t)
	oi := put(t, st, "k", []byte("x"), engine.PutOptions{})
	before, after := oi.ModTime.Add(-time.Hour), oi.ModTime.Add(time.Hour)
	for _, c := range []struct {
		what string
		c    engine.Conditions
		want error
	}{
		{"If-Match with the ETag", engine.Conditions{IfMatch: oi.ETag}, nil},
		{"If-Match quoted", engine.Conditions{IfMatch: `"` + oi.ETag + `"`}, nil},
		{"If-Match with another ETag", engine.Conditions{IfMatch: md5hex(nil)}, engine.ErrPreconditionFailed},
		{"If-None-Match with the ETag", engine.Conditions{IfNoneMatch: oi.ETag}, engine.ErrNotModified},
		{"If-None-Match with another ETag", engine.Conditions{IfNoneMatch: md5hex(nil)}, nil},
		{"If-Modified-Since before", engine.Conditions{IfModifiedSince: &before}, nil},
		{"If-Modified-Since after", engine.Conditions{IfModifiedSince: &after}, engine.ErrNotModified},
		{"If-Unmodified-Since after", engine.Conditions{IfUnmodifiedSince: &after}, nil},
		{"If-Unmodified-Since before", engine.Conditions{IfUnmodifiedSince: &before}, engine.ErrPreconditionFailed},
		// S3 (RFC 7232): If-Match that holds overrides If-Unmodified-Since.
		{"If-Match holding, If-Unmodified-Since failing", engine.Conditions{IfMatch: oi.ETag, IfUnmodifiedSince: &before}, nil},
		// and If-None-Match that holds overrides If-Modified-Since.
		{"If-None-Match holding, If-Modified-Since failing", engine.Conditions{IfNoneMatch: md5hex(nil), IfModifiedSince: &after}, nil},
	} {
		_, _, gerr := get(st, "k", engine.GetOptions{Conditions: c.c})
		_, herr := st.HeadObject(ctx, bucket, "k", engine.GetOptions{Conditions: c.c})
		for what, err := range map[string]error{"GET": gerr, "HEAD": herr} {
			if c.want == nil && err != nil {
				t.Errorf("%s %s: %v, want success", what, c.what, err)
			} else if c.want != nil {
				wantErr(t, what+" "+c.what, err, c.want)
			}
		}
	}
}

// testLegalHold: a version under legal hold cannot be deleted by id
// until the hold is off; a bucket without object lock refuses holds.
func (s suite) testLegalHold(t *testing.T) {
	st := s.store(t)
	put(t, st, "plain", []byte("x"), engine.PutOptions{})
	_, err := st.SetObjectLegalHold(ctx, bucket, "plain", "", objectlock.HoldOn)
	wantErr(t, "a legal hold in a bucket without object lock", err, engine.ErrObjectLockNotEnabled)
	_, err = st.PutObject(ctx, bucket, "held", strings.NewReader("x"), 1, engine.PutOptions{Lock: objectlock.Lock{LegalHold: objectlock.HoldOn}})
	wantErr(t, "a PUT with a legal hold in a bucket without object lock", err, engine.ErrObjectLockNotEnabled)

	if err := st.MakeBucket(ctx, "locked", engine.BucketOptions{ObjectLock: true}); err != nil {
		t.Fatal(err)
	}
	oi, err := st.PutObject(ctx, "locked", "k", strings.NewReader("x"), 1, engine.PutOptions{Lock: objectlock.Lock{LegalHold: objectlock.HoldOn}})
	if err != nil || oi.Lock.LegalHold != objectlock.HoldOn || oi.VersionID == "" {
		t.Fatalf("a PUT with a legal hold: %+v, %v", oi, err)
	}
	_, err = st.DeleteObjectVersion(ctx, "locked", "k", engine.DeleteOptions{VersionID: oi.VersionID, BypassGovernance: true})
	wantErr(t, "deleting a version under legal hold", err, engine.ErrObjectLocked)
	// A plain delete only adds a marker, which the hold does not stop.
	if dr, err := st.DeleteObjectVersion(ctx, "locked", "k", engine.DeleteOptions{}); err != nil || !dr.DeleteMarker {
		t.Fatalf("a plain delete of a held object: %+v, %v", dr, err)
	}
	if hi, err := st.SetObjectLegalHold(ctx, "locked", "k", oi.VersionID, objectlock.HoldOff); err != nil || hi.Lock.LegalHold != objectlock.HoldOff {
		t.Fatalf("turning the hold off: %+v, %v", hi, err)
	}
	if _, err := st.DeleteObjectVersion(ctx, "locked", "k", engine.DeleteOptions{VersionID: oi.VersionID}); err != nil {
		t.Fatalf("deleting the version once the hold is off: %v", err)
	}
}

// --- encryption at rest ---

// errNoKey is what the suite's failing Unseal returns: a store returns
// an Unseal error as it is.
var errNoKey = errors.New("storetest: no key for this object")

// keyring plays the S3 layer's part in encryption at rest: one object
// key per name, "sealed" as {"name": name} and unsealed by that name.
// It records what each Unseal call was given.
type keyring struct {
	mu   sync.Mutex
	seen []engine.ObjectInfo
}

func objectKey(name string) []byte {
	sum := sha256.Sum256([]byte("storetest object key " + name))
	return sum[:]
}

func (k *keyring) enc(name string, hide bool) *engine.Encryption {
	return &engine.Encryption{Cipher: sse.AES256GCM, Key: objectKey(name), Sealed: map[string]string{"name": name}, HideETag: hide}
}

func (k *keyring) unseal(info engine.ObjectInfo) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.seen = append(k.seen, info)
	name, ok := info.Sealed["name"]
	if !ok {
		return nil, errNoKey
	}
	return objectKey(name), nil
}

// calls returns and forgets what Unseal was given since the last call.
func (k *keyring) calls() []engine.ObjectInfo {
	k.mu.Lock()
	defer k.mu.Unlock()
	seen := k.seen
	k.seen = nil
	return seen
}

// checkUnsealed fails unless Unseal was called, each time with the
// version that has the sealed name.
func (k *keyring) checkUnsealed(t *testing.T, what, key, versionID, name string) {
	t.Helper()
	seen := k.calls()
	if len(seen) == 0 {
		t.Errorf("%s: Unseal was not called", what)
	}
	for _, info := range seen {
		if info.Bucket != bucket || info.Key != key || info.VersionID != versionID || info.Cipher != string(sse.AES256GCM) || info.Sealed["name"] != name {
			t.Errorf("%s: Unseal was given %s/%s version %q cipher %q sealed %v; want %s/%s version %q, %s, sealed name %q",
				what, info.Bucket, info.Key, info.VersionID, info.Cipher, info.Sealed, bucket, key, versionID, sse.AES256GCM, name)
		}
	}
}

// wrongKey unseals every object to a key of the right size that is not
// its own.
func wrongKey(engine.ObjectInfo) ([]byte, error) { return objectKey("not this object's"), nil }

// shortKey unseals every object to a key too short to be one.
func shortKey(engine.ObjectInfo) ([]byte, error) { return objectKey("short")[:16], nil }

// failingUnseal is a key service that is down.
func failingUnseal(engine.ObjectInfo) ([]byte, error) {
	return nil, fmt.Errorf("key service: %w", errNoKey)
}

// noUnseal is an Unseal that must not be called.
func noUnseal(t *testing.T, what string) engine.UnsealFunc {
	return func(info engine.ObjectInfo) ([]byte, error) {
		t.Errorf("%s: Unseal called for %s/%s", what, info.Key, info.VersionID)
		return nil, errNoKey
	}
}

// isHiddenETag reports whether etag is a keyed digest standing in for
// data's MD5: 32 hex digits, not the MD5.
func isHiddenETag(etag string, data []byte) bool {
	b, err := hex.DecodeString(etag)
	return err == nil && len(b) == md5.Size && etag != md5hex(data)
}

// wantNoRead fails unless reading key with opts gives want and no byte.
func wantNoRead(t *testing.T, st ObjectStore, what, key string, opts engine.GetOptions, want error) {
	t.Helper()
	got, _, err := get(st, key, opts)
	if !errors.Is(err, want) || len(got) > 0 {
		t.Errorf("%s: %s, %v; want %v and no byte", what, describe(got), err, want)
	}
}

// testEncryption: a version written with Encryption is reported
// encrypted (Cipher, Sealed) everywhere, reads back only through Unseal
// with its own key, and never yields a byte without it.
func (s suite) testEncryption(t *testing.T) {
	st := s.versioned(t)
	var kr keyring
	// What the store refuses: an unknown cipher, a key not of 32 bytes.
	bad := kr.enc("bad", false)
	bad.Cipher = "ROT13"
	_, err := st.PutObject(ctx, bucket, "bad", strings.NewReader("x"), 1, engine.PutOptions{Encryption: bad})
	wantErr(t, "a PUT with an unknown cipher", err, engine.ErrInvalidArgument)
	bad = kr.enc("bad", false)
	bad.Key = bad.Key[:16]
	_, err = st.PutObject(ctx, bucket, "bad", strings.NewReader("x"), 1, engine.PutOptions{Encryption: bad})
	wantErr(t, "a PUT with a 16-byte object key", err, engine.ErrInvalidArgument)
	_, err = st.HeadObject(ctx, bucket, "bad", engine.GetOptions{})
	wantErr(t, "HEAD after refused encrypted PUTs", err, engine.ErrObjectNotFound)

	// Across the 64 KiB packages encrypted data is sealed in.
	data := randBytes(41, 150000)
	oi := put(t, st, "k", data, engine.PutOptions{ContentType: "a/b", Encryption: kr.enc("k1", false)})
	if oi.Cipher != string(sse.AES256GCM) || oi.Sealed["name"] != "k1" || oi.Size != int64(len(data)) || oi.ETag != md5hex(data) {
		t.Fatalf("an encrypted PUT answered cipher %q sealed %v size %d ETag %s; want %s, the sealed map, the plaintext's size and MD5",
			oi.Cipher, oi.Sealed, oi.Size, oi.ETag, sse.AES256GCM)
	}
	hi, err := st.HeadObject(ctx, bucket, "k", engine.GetOptions{Unseal: noUnseal(t, "HEAD")})
	if err != nil || hi.Cipher != oi.Cipher || hi.Sealed["name"] != "k1" || hi.Size != oi.Size || hi.ETag != oi.ETag ||
		hi.VersionID != oi.VersionID || hi.ContentType != "a/b" {
		t.Fatalf("HEAD of an encrypted object: %+v, %v; want what the PUT answered", hi, err)
	}
	// No key, no byte.
	wantNoRead(t, st, "GET without Unseal", "k", engine.GetOptions{}, engine.ErrEncrypted)
	wantNoRead(t, st, "a range without Unseal", "k", engine.GetOptions{Range: &engine.Range{Start: 0, End: 9}}, engine.ErrEncrypted)
	// The key: the plaintext, whole and in ranges; Unseal is given the version.
	kr.calls()
	info := mustGet(t, st, "k", engine.GetOptions{Unseal: kr.unseal}, data)
	if info.Cipher != oi.Cipher || info.Sealed["name"] != "k1" || info.Size != oi.Size || info.ETag != oi.ETag {
		t.Errorf("GET of an encrypted object reports %+v; want what the PUT answered", info)
	}
	kr.checkUnsealed(t, "GET", "k", oi.VersionID, "k1")
	for _, r := range []engine.Range{{Start: 65530, End: 65545}, {Start: 1, End: 1}, {Start: 100000, End: -1}, {Start: -7, End: -1}} {
		start, end := r.Start, r.End
		if start < 0 {
			start, end = int64(len(data))+start, -1
		}
		if end < 0 {
			end = int64(len(data)) - 1
		}
		mustGet(t, st, "k", engine.GetOptions{Range: &r, Unseal: kr.unseal}, data[start:end+1])
	}
	kr.calls()
	// A wrong key authenticates nothing.
	wantNoRead(t, st, "GET with another object's key", "k", engine.GetOptions{Unseal: wrongKey}, engine.ErrDataAuth)
	wantNoRead(t, st, "a range with another object's key", "k", engine.GetOptions{Unseal: wrongKey, Range: &engine.Range{Start: 65530, End: 65545}}, engine.ErrDataAuth)
	wantNoRead(t, st, "GET with a 16-byte key", "k", engine.GetOptions{Unseal: shortKey}, engine.ErrDataAuth)
	wantNoRead(t, st, "GET whose Unseal fails", "k", engine.GetOptions{Unseal: failingUnseal}, errNoKey)

	// HideETag: a keyed digest, the same wherever the ETag is reported.
	hid := put(t, st, "hidden", data, engine.PutOptions{Encryption: kr.enc("h", true)})
	if !isHiddenETag(hid.ETag, data) {
		t.Fatalf("a PUT with HideETag answered ETag %q; want 32 hex digits, not the MD5", hid.ETag)
	}
	if hi, err := st.HeadObject(ctx, bucket, "hidden", engine.GetOptions{}); err != nil || hi.ETag != hid.ETag {
		t.Errorf("HEAD of a hidden-ETag object: ETag %q, %v; want %q", hi.ETag, err, hid.ETag)
	}
	if info := mustGet(t, st, "hidden", engine.GetOptions{Unseal: kr.unseal}, data); info.ETag != hid.ETag {
		t.Errorf("GET of a hidden-ETag object: ETag %q; want %q", info.ETag, hid.ETag)
	}
	kr.checkUnsealed(t, "GET of the hidden-ETag object", "hidden", hid.VersionID, "h")

	// Versions each keep their own sealed key; a plaintext version needs none.
	data2 := randBytes(42, 3000)
	oi2 := put(t, st, "k", data2, engine.PutOptions{Encryption: kr.enc("k2", false)})
	mustGet(t, st, "k", engine.GetOptions{Unseal: kr.unseal}, data2)
	kr.checkUnsealed(t, "GET of the current version", "k", oi2.VersionID, "k2")
	mustGet(t, st, "k", engine.GetOptions{VersionID: oi.VersionID, Unseal: kr.unseal}, data)
	kr.checkUnsealed(t, "GET of the older version", "k", oi.VersionID, "k1")
	oi3 := put(t, st, "k", []byte("plain"), engine.PutOptions{})
	if oi3.Cipher != "" || oi3.Sealed != nil {
		t.Errorf("a plaintext PUT over encrypted versions answered cipher %q sealed %v", oi3.Cipher, oi3.Sealed)
	}
	mustGet(t, st, "k", engine.GetOptions{Unseal: noUnseal(t, "GET of a plaintext version")}, []byte("plain"))

	// Listings report each version's encryption and ETag.
	want := map[string]engine.ObjectInfo{oi.VersionID: oi, oi2.VersionID: oi2, oi3.VersionID: oi3, hid.VersionID: hid}
	lv, err := st.ListObjectVersions(ctx, bucket, engine.ListVersionsOptions{})
	if err != nil || len(lv.Versions) != 4 {
		t.Fatalf("ListObjectVersions: %d versions, %v; want 4", len(lv.Versions), err)
	}
	for _, v := range lv.Versions {
		w := want[v.VersionID]
		if v.Key != w.Key || v.Cipher != w.Cipher || v.Sealed["name"] != w.Sealed["name"] || v.ETag != w.ETag || v.Size != w.Size {
			t.Errorf("ListObjectVersions reports %s version %s: cipher %q sealed %v ETag %s size %d; want %q %v %s %d",
				v.Key, v.VersionID, v.Cipher, v.Sealed, v.ETag, v.Size, w.Cipher, w.Sealed, w.ETag, w.Size)
		}
	}
	lo, err := st.ListObjects(ctx, bucket, engine.ListOptions{})
	if err != nil || len(lo.Objects) != 2 {
		t.Fatalf("ListObjects: %v, %v; want 2 keys", keysOf(lo.Objects), err)
	}
	for _, o := range lo.Objects {
		w := hid
		if o.Key == "k" {
			w = oi3
		}
		if o.Cipher != w.Cipher || o.Sealed["name"] != w.Sealed["name"] || o.ETag != w.ETag || o.Size != w.Size {
			t.Errorf("ListObjects reports %s: cipher %q sealed %v ETag %s size %d; want %q %v %s %d",
				o.Key, o.Cipher, o.Sealed, o.ETag, o.Size, w.Cipher, w.Sealed, w.ETag, w.Size)
		}
	}
	if calls := kr.calls(); len(calls) > 0 {
		t.Errorf("Unseal called %d times by listings", len(calls))
	}

	// In a versioned bucket a copy onto itself keeping its encryption
	// makes a new version under the same sealed key.
	cp, err := st.CopyObject(ctx, bucket, "hidden", bucket, "hidden", engine.CopyOptions{ReplaceMetadata: true, KeepEncryption: true,
		SourceUnseal: kr.unseal, Put: engine.PutOptions{ContentType: "c/d"}})
	if err != nil || cp.VersionID == hid.VersionID || cp.Cipher != hid.Cipher || cp.Sealed["name"] != "h" || cp.ETag != hid.ETag || cp.ContentType != "c/d" {
		t.Fatalf("a copy onto itself keeping its encryption, versioned: %+v, %v; want a new version, sealed and with ETag as %s", cp, err, hid.VersionID)
	}
	mustGet(t, st, "hidden", engine.GetOptions{Unseal: kr.unseal}, data)
	mustGet(t, st, "hidden", engine.GetOptions{VersionID: hid.VersionID, Unseal: kr.unseal}, data)
}

// compositeETag is a multipart object's ETag made of its parts' ETags.
func compositeETag(etags ...string) string {
	var sums []byte
	for _, e := range etags {
		b, _ := hex.DecodeString(e)
		sums = append(sums, b...)
	}
	return fmt.Sprintf("%s-%d", md5hex(sums), len(etags))
}

// testEncryptionMultipart: an upload created with Encryption takes parts
// only through Unseal, and completes into an encrypted object.
func (s suite) testEncryptionMultipart(t *testing.T) {
	st := s.store(t)
	var kr keyring
	bad := kr.enc("mp", false)
	bad.Key = nil
	_, err := st.NewMultipartUpload(ctx, bucket, "mp", engine.PutOptions{Encryption: bad})
	wantErr(t, "an upload with no object key", err, engine.ErrInvalidArgument)

	id, err := st.NewMultipartUpload(ctx, bucket, "mp", engine.PutOptions{ContentType: "v/x", Encryption: kr.enc("mp", true)})
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := randBytes(51, engine.MinPartSize), randBytes(52, 1000)
	_, err = st.PutObjectPart(ctx, bucket, "mp", id, 1, bytes.NewReader(p1), int64(len(p1)), engine.PartOptions{})
	wantErr(t, "a part of an encrypted upload without Unseal", err, engine.ErrEncrypted)
	_, err = st.PutObjectPart(ctx, bucket, "mp", id, 1, bytes.NewReader(p1), int64(len(p1)), engine.PartOptions{Unseal: failingUnseal})
	wantErr(t, "a part whose Unseal fails", err, errNoKey)
	kr.calls()
	var parts []engine.CompletePart
	var etags []string
	for i, p := range [][]byte{p1, p2} {
		pi, err := st.PutObjectPart(ctx, bucket, "mp", id, i+1, bytes.NewReader(p), int64(len(p)), engine.PartOptions{Unseal: kr.unseal})
		if err != nil {
			t.Fatalf("part %d with Unseal: %v", i+1, err)
		}
		if pi.Number != i+1 || pi.Size != int64(len(p)) || !isHiddenETag(pi.ETag, p) {
			t.Fatalf("part %d answered %+v; want its plaintext size and a hidden ETag", i+1, pi)
		}
		kr.checkUnsealed(t, fmt.Sprintf("part %d", i+1), "mp", "", "mp")
		parts = append(parts, engine.CompletePart{Number: pi.Number, ETag: pi.ETag})
		etags = append(etags, pi.ETag)
	}
	lp, err := st.ListObjectParts(ctx, bucket, "mp", id, 0, 0)
	if err != nil || len(lp.Parts) != 2 || lp.Parts[0].ETag != etags[0] || lp.Parts[1].ETag != etags[1] {
		t.Fatalf("ListObjectParts: %+v, %v; want the parts' hidden ETags %v", lp, err, etags)
	}
	oi, err := st.CompleteMultipartUpload(ctx, bucket, "mp", id, parts, engine.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	whole := slices.Concat(p1, p2)
	if oi.Cipher != string(sse.AES256GCM) || oi.Sealed["name"] != "mp" || oi.Size != int64(len(whole)) ||
		oi.ETag != compositeETag(etags...) || len(oi.Parts) != 2 || oi.Parts[0].ETag != etags[0] || oi.Parts[1].ETag != etags[1] {
		t.Fatalf("the completed upload: %+v; want encrypted, sealed as the upload, ETag %s of the hidden part ETags",
			oi, compositeETag(etags...))
	}
	if hi, err := st.HeadObject(ctx, bucket, "mp", engine.GetOptions{Unseal: noUnseal(t, "HEAD")}); err != nil ||
		hi.Cipher != oi.Cipher || hi.Sealed["name"] != "mp" || hi.ETag != oi.ETag || hi.ContentType != "v/x" {
		t.Fatalf("HEAD of the completed upload: %+v, %v", hi, err)
	}
	wantNoRead(t, st, "GET of the completed upload without Unseal", "mp", engine.GetOptions{}, engine.ErrEncrypted)
	mustGet(t, st, "mp", engine.GetOptions{Unseal: kr.unseal}, whole)
	kr.checkUnsealed(t, "GET of the completed upload", "mp", "", "mp")
	r := engine.Range{Start: int64(len(p1)) - 10, End: int64(len(p1)) + 9}
	mustGet(t, st, "mp", engine.GetOptions{Unseal: kr.unseal, Range: &r}, whole[r.Start:r.End+1])
	mustGet(t, st, "mp", engine.GetOptions{Unseal: kr.unseal, PartNumber: 2}, p2)
	wantNoRead(t, st, "GET of the completed upload with a wrong key", "mp", engine.GetOptions{Unseal: wrongKey}, engine.ErrDataAuth)

	// A part added under a wrong key is refused or never read back.
	id2, err := st.NewMultipartUpload(ctx, bucket, "mp2", engine.PutOptions{Encryption: kr.enc("mp2", false)})
	if err != nil {
		t.Fatal(err)
	}
	pi, err := st.PutObjectPart(ctx, bucket, "mp2", id2, 1, bytes.NewReader(p2), int64(len(p2)), engine.PartOptions{Unseal: wrongKey})
	if err != nil {
		wantErr(t, "a part under a wrong key", err, engine.ErrDataAuth)
	} else {
		if _, err := st.CompleteMultipartUpload(ctx, bucket, "mp2", id2, []engine.CompletePart{{Number: 1, ETag: pi.ETag}}, engine.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		wantNoRead(t, st, "GET of an upload whose part was added under a wrong key", "mp2", engine.GetOptions{Unseal: kr.unseal}, engine.ErrDataAuth)
	}

	// A plaintext upload never asks for a key.
	id3, err := st.NewMultipartUpload(ctx, bucket, "plain", engine.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pi, err = st.PutObjectPart(ctx, bucket, "plain", id3, 1, bytes.NewReader(p2), int64(len(p2)), engine.PartOptions{Unseal: noUnseal(t, "a plaintext part")})
	if err != nil || pi.ETag != md5hex(p2) {
		t.Fatalf("a plaintext part given an Unseal: %+v, %v", pi, err)
	}
}

// testEncryptionCopy: a copy reads an encrypted source only through
// SourceUnseal, and is encrypted as Put.Encryption says, or as its
// source is when a copy onto itself keeps its encryption.
func (s suite) testEncryptionCopy(t *testing.T) {
	st := s.store(t)
	var kr keyring
	data := randBytes(61, 100000)
	src := put(t, st, "src", data, engine.PutOptions{ContentType: "a/b", Encryption: kr.enc("src", true)})

	_, err := st.CopyObject(ctx, bucket, "src", bucket, "plain", engine.CopyOptions{})
	wantErr(t, "a copy of an encrypted source without SourceUnseal", err, engine.ErrEncrypted)
	_, err = st.CopyObject(ctx, bucket, "src", bucket, "plain", engine.CopyOptions{SourceUnseal: failingUnseal})
	wantErr(t, "a copy whose SourceUnseal fails", err, errNoKey)
	_, err = st.CopyObject(ctx, bucket, "src", bucket, "plain", engine.CopyOptions{SourceUnseal: wrongKey})
	wantErr(t, "a copy whose SourceUnseal gives a wrong key", err, engine.ErrDataAuth)
	_, err = st.HeadObject(ctx, bucket, "plain", engine.GetOptions{})
	wantErr(t, "HEAD of the failed copies' destination", err, engine.ErrObjectNotFound)

	// To plaintext.
	kr.calls()
	oi, err := st.CopyObject(ctx, bucket, "src", bucket, "plain", engine.CopyOptions{SourceUnseal: kr.unseal})
	if err != nil || oi.Cipher != "" || oi.Sealed != nil || oi.ETag != md5hex(data) || oi.Size != int64(len(data)) {
		t.Fatalf("a copy to plaintext: %+v, %v; want no encryption and the plaintext's MD5", oi, err)
	}
	kr.checkUnsealed(t, "the copy's SourceUnseal", "src", "", "src")
	mustGet(t, st, "plain", engine.GetOptions{Unseal: noUnseal(t, "GET of the plaintext copy")}, data)

	// Under another key.
	oi, err = st.CopyObject(ctx, bucket, "src", bucket, "re", engine.CopyOptions{SourceUnseal: kr.unseal,
		Put: engine.PutOptions{Encryption: kr.enc("re", false)}})
	if err != nil || oi.Cipher != string(sse.AES256GCM) || oi.Sealed["name"] != "re" || oi.ETag != md5hex(data) {
		t.Fatalf("a copy under another key: %+v, %v", oi, err)
	}
	wantNoRead(t, st, "GET of the re-encrypted copy without Unseal", "re", engine.GetOptions{}, engine.ErrEncrypted)
	mustGet(t, st, "re", engine.GetOptions{Unseal: kr.unseal}, data)
	kr.calls()

	// Plaintext to encrypted needs no SourceUnseal.
	oi, err = st.CopyObject(ctx, bucket, "plain", bucket, "enc", engine.CopyOptions{SourceUnseal: noUnseal(t, "a plaintext source"),
		Put: engine.PutOptions{Encryption: kr.enc("enc", true)}})
	if err != nil || oi.Cipher != string(sse.AES256GCM) || oi.Sealed["name"] != "enc" || !isHiddenETag(oi.ETag, data) {
		t.Fatalf("a copy of a plaintext source encrypted: %+v, %v", oi, err)
	}
	mustGet(t, st, "enc", engine.GetOptions{Unseal: kr.unseal}, data)
	kr.calls()

	// A sealed key is bound to its object: only a copy onto itself keeps it.
	_, err = st.CopyObject(ctx, bucket, "src", bucket, "kept", engine.CopyOptions{KeepEncryption: true, SourceUnseal: kr.unseal})
	wantErr(t, "a copy to another key keeping the source's encryption", err, engine.ErrInvalidArgument)

	// Onto itself keeping its encryption, twice (the first copy gives
	// it a checksum): new metadata, the same sealed key and ETag.
	for _, ct := range []string{"text/new", "text/newer"} {
		oi, err = st.CopyObject(ctx, bucket, "src", bucket, "src", engine.CopyOptions{ReplaceMetadata: true, KeepEncryption: true,
			SourceUnseal: kr.unseal, Put: engine.PutOptions{ContentType: ct}})
		if err != nil || oi.ContentType != ct || oi.Cipher != src.Cipher || oi.Sealed["name"] != "src" || oi.ETag != src.ETag || oi.Size != src.Size {
			t.Fatalf("a copy onto itself keeping its encryption: %+v, %v; want content type %s, the source's encryption and ETag %s", oi, err, ct, src.ETag)
		}
		if info := mustGet(t, st, "src", engine.GetOptions{Unseal: kr.unseal}, data); info.ContentType != ct || info.Sealed["name"] != "src" {
			t.Fatalf("after a copy onto itself keeping its encryption: %+v", info)
		}
		wantNoRead(t, st, "GET after a copy onto itself without Unseal", "src", engine.GetOptions{}, engine.ErrEncrypted)
	}
	kr.calls()

	// Onto itself under a new key: rewritten under it.
	oi, err = st.CopyObject(ctx, bucket, "src", bucket, "src", engine.CopyOptions{ReplaceMetadata: true, SourceUnseal: kr.unseal,
		Put: engine.PutOptions{Encryption: kr.enc("src2", false)}})
	if err != nil || oi.Sealed["name"] != "src2" || oi.ETag != md5hex(data) {
		t.Fatalf("a copy onto itself under a new key: %+v, %v", oi, err)
	}
	kr.checkUnsealed(t, "the re-keying copy's SourceUnseal", "src", "", "src")
	mustGet(t, st, "src", engine.GetOptions{Unseal: kr.unseal}, data)
	kr.checkUnsealed(t, "GET after re-keying", "src", "", "src2")
	wantNoRead(t, st, "GET under the old key after re-keying", "src", engine.GetOptions{Unseal: func(engine.ObjectInfo) ([]byte, error) {
		return objectKey("src"), nil
	}}, engine.ErrDataAuth)

	// Onto itself with no encryption: decrypted.
	oi, err = st.CopyObject(ctx, bucket, "re", bucket, "re", engine.CopyOptions{ReplaceMetadata: true, SourceUnseal: kr.unseal})
	if err != nil || oi.Cipher != "" || oi.Sealed != nil || oi.ETag != md5hex(data) {
		t.Fatalf("a copy onto itself without encryption: %+v, %v", oi, err)
	}
	mustGet(t, st, "re", engine.GetOptions{Unseal: noUnseal(t, "GET of the decrypted object")}, data)
}
