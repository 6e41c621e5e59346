package s3api

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/objectlock"
	"github.com/shardstore/shardstore/internal/sse"
)

// fakeStore is a small in-memory ObjectStore for handler tests. It keeps
// to the engine's documented contract closely enough for the HTTP layer's
// behaviour to be checked; it is not a second engine.
//
// Encryption at rest is kept to the contract without encrypting: an
// encrypted version keeps its plaintext, its Cipher and Sealed map, and
// the object key each part was written under. A read or a part needs
// Unseal (ErrEncrypted without it; its error is returned as is), and
// the key it gives is compared with the remembered one: another key
// fails the read with ErrDataAuth and no byte, as the engine's
// authenticated decryption does.
type fakeStore struct {
	mu      sync.Mutex
	buckets map[string]*fakeBucket
	uploads map[string]*fakeUpload
	seq     int
	ready   bool // every set has write quorum
	readOK  bool // every set has read quorum
	now     func() time.Time
}

// fakeBucket keeps, like the engine, each key's current version in
// objects (a delete marker included) and its noncurrent versions,
// newest first, in older.
type fakeBucket struct {
	info    engine.BucketInfo
	objects map[string]*fakeObject
	older   map[string][]*fakeObject
}

type fakeObject struct {
	info engine.ObjectInfo
	data []byte
	// uploadID names the multipart upload that made the version, so a
	// repeated completion is answered as the engine answers it.
	uploadID string
	// enc is an encrypted version's encryption (its object key and
	// HideETag); partKeys the key each part's data was written under
	// (one for a PUT), which a read's unsealed key must equal.
	enc      *engine.Encryption
	partKeys [][]byte
}

// readableWith reports whether the bytes [start, start+n) of fo were
// written under key, as the engine's decryption of them would find.
func (fo *fakeObject) readableWith(key []byte, start, n int64) bool {
	sizes := []int64{fo.info.Size}
	if len(fo.info.Parts) == len(fo.partKeys) && len(fo.partKeys) > 0 {
		sizes = sizes[:0]
		for _, p := range fo.info.Parts {
			sizes = append(sizes, p.Size)
		}
	}
	off := int64(0)
	for i, size := range sizes {
		if off < start+n && start < off+size {
			if i >= len(fo.partKeys) || !bytes.Equal(fo.partKeys[i], key) {
				return false
			}
		}
		off += size
	}
	return true
}

type fakeUpload struct {
	info  engine.MultipartInfo
	opts  engine.PutOptions
	parts map[int][]byte
	// partETags are the parts' ETags (keyed digests when the upload
	// hides them), partKeys the keys encrypted parts were written under.
	partETags map[int]string
	partKeys  map[int][]byte
}

// etag is part n's ETag: as stored, else its data's MD5.
func (u *fakeUpload) etag(n int) string {
	if e, ok := u.partETags[n]; ok {
		return e
	}
	sum := md5.Sum(u.parts[n])
	return hex.EncodeToString(sum[:])
}

// fakeEncryption copies what a write's Encryption keeps (nil: none).
func fakeEncryption(e *engine.Encryption) *engine.Encryption {
	if e == nil {
		return nil
	}
	c := *e
	c.Key, c.Sealed = bytes.Clone(e.Key), maps.Clone(e.Sealed)
	return &c
}

// fakeShownETag is the ETag of data whose MD5 is md5hex, written under
// key with enc: the engine's keyed digest when enc hides ETags.
func fakeShownETag(enc *engine.Encryption, key []byte, md5hex string) string {
	if enc != nil && enc.HideETag {
		return sse.HiddenETag(key, md5hex)
	}
	return md5hex
}

// fakeUnseal asks unseal for the key of an encrypted version or upload
// as the engine does: ErrEncrypted without unseal, its error as it is,
// ErrDataAuth for a key that cannot be one.
func fakeUnseal(unseal engine.UnsealFunc, info engine.ObjectInfo) ([]byte, error) {
	if unseal == nil {
		return nil, fmt.Errorf("fake: %s/%s: %w", info.Bucket, info.Key, engine.ErrEncrypted)
	}
	key, err := unseal(info)
	if err != nil {
		return nil, err
	}
	if len(key) != sse.KeySize {
		return nil, fmt.Errorf("fake: %s/%s: unsealed key of %d bytes: %w", info.Bucket, info.Key, len(key), engine.ErrDataAuth)
	}
	return key, nil
}

func newFakeStore() *fakeStore {
	return &fakeStore{buckets: map[string]*fakeBucket{}, uploads: map[string]*fakeUpload{}, ready: true, readOK: true,
		now: func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }}
}

func (f *fakeStore) Status() engine.Status {
	return engine.Status{Drives: 4, DrivesOnline: 4, Sets: 1, WriteQuorumOK: f.ready, ReadQuorumOK: f.readOK}
}

func (f *fakeStore) MakeBucket(_ context.Context, b string, o engine.BucketOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !fakeBucketName(b) {
		return engine.ErrInvalidBucketName
	}
	if _, ok := f.buckets[b]; ok {
		return engine.ErrBucketExists
	}
	f.buckets[b] = &fakeBucket{info: engine.BucketInfo{Name: b, Created: f.now(), Owner: o.Owner, ACL: o.ACL, Location: o.Location,
		OwnershipControls: o.OwnershipControls},
		objects: map[string]*fakeObject{}, older: map[string][]*fakeObject{}}
	if o.ObjectLock {
		// As the engine: object lock comes with versioning Enabled.
		f.buckets[b].info.ObjectLock = objectlock.Config{}.Marshal("")
		f.buckets[b].info.Versioning = engine.VersioningEnabled
	}
	return nil
}

// fakeBucketName applies S3's bucket naming rules, as the engine does.
func fakeBucketName(b string) bool {
	if len(b) < 3 || len(b) > 63 {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	for i := 0; i < len(b); i++ {
		if c := b[i]; !alnum(c) && c != '.' && c != '-' {
			return false
		}
	}
	if _, err := netip.ParseAddr(b); err == nil {
		return false
	}
	return alnum(b[0]) && alnum(b[len(b)-1]) && !strings.Contains(b, "..") && !strings.Contains(b, ".-") &&
		!strings.Contains(b, "-.") && !strings.HasPrefix(b, "xn--") && !strings.HasPrefix(b, "sthree-") &&
		!strings.HasSuffix(b, "-s3alias") && !strings.HasSuffix(b, "--ol-s3") && b != "shardstore"
}

func (f *fakeStore) bucket(b string) (*fakeBucket, error) {
	fb, ok := f.buckets[b]
	if !ok {
		return nil, fmt.Errorf("fake: %q: %w", b, engine.ErrBucketNotFound)
	}
	return fb, nil
}

func (f *fakeStore) BucketInfo(_ context.Context, b string) (engine.BucketInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fb, err := f.bucket(b)
	if err != nil {
		return engine.BucketInfo{}, err
	}
	return fb.info, nil
}

func (f *fakeStore) ListBuckets(context.Context) ([]engine.BucketInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []engine.BucketInfo
	for _, b := range f.buckets {
		out = append(out, b.info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *fakeStore) DeleteBucket(_ context.Context, b string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	fb, err := f.bucket(b)
	if err != nil {
		return err
	}
	if len(fb.objects) > 0 {
		return engine.ErrBucketNotEmpty
	}
	delete(f.buckets, b)
	// As the engine: uploads in progress go with the bucket.
	for id, u := range f.uploads {
		if u.info.Bucket == b {
			delete(f.uploads, id)
		}
	}
	return nil
}

func (f *fakeStore) SetBucketACL(_ context.Context, b, acl string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	fb, err := f.bucket(b)
	if err != nil {
		return err
	}
	fb.info.ACL = acl
	return nil
}

func (f *fakeStore) SetBucketConfig(_ context.Context, b string, which engine.BucketConfig, doc string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	fb, err := f.bucket(b)
	if err != nil {
		return err
	}
	switch which {
	case engine.BucketConfigCORS:
		fb.info.CORS = doc
	case engine.BucketConfigOwnershipControls:
		fb.info.OwnershipControls = doc
	case engine.BucketConfigWebsite:
		fb.info.Website = doc
	case engine.BucketConfigPolicy:
		fb.info.Policy = doc
	case engine.BucketConfigPublicAccessBlock:
		fb.info.PublicAccessBlock = doc
	case engine.BucketConfigTagging:
		fb.info.Tagging = doc
	case engine.BucketConfigEncryption:
		fb.info.Encryption = doc
	case engine.BucketConfigLogging:
		fb.info.Logging = doc
	case engine.BucketConfigNotification:
		fb.info.Notification = doc
	case engine.BucketConfigLifecycle:
		fb.info.Lifecycle = doc
	case engine.BucketConfigVersioning:
		switch {
		case doc == "" && fb.info.Versioning == "":
		case fb.info.ObjectLock != "" && doc != engine.VersioningEnabled:
			return fmt.Errorf("fake: object lock keeps versioning Enabled: %w", engine.ErrInvalidBucketState)
		case doc == engine.VersioningEnabled, doc == engine.VersioningSuspended:
			fb.info.Versioning = doc
		default: // "" once configured, as the engine refuses it
			return engine.ErrInvalidArgument
		}
	case engine.BucketConfigObjectLock:
		if doc == "" || fb.info.Versioning != engine.VersioningEnabled {
			return fmt.Errorf("fake: object lock needs versioning Enabled and stays: %w", engine.ErrInvalidBucketState)
		}
		cfg, err := objectlock.Parse([]byte(doc))
		if err != nil {
			return fmt.Errorf("fake: %w: %v", engine.ErrInvalidArgument, err)
		}
		fb.info.ObjectLock = cfg.Marshal("")
	default:
		return engine.ErrInvalidArgument
	}
	return nil
}

// validKey accepts the keys the engine stores: every key S3 accepts,
// path-like ones ("..", "a/./b") as they are; not NUL, not invalid UTF-8.
func validKey(k string) bool {
	return k != "" && len(k) <= engine.MaxKeyLength && utf8.ValidString(k) && !strings.ContainsRune(k, 0)
}

func (f *fakeStore) PutObject(_ context.Context, b, k string, body io.Reader, size int64, o engine.PutOptions) (engine.ObjectInfo, error) {
	if !validKey(k) {
		return engine.ObjectInfo{}, engine.ErrInvalidObjectName
	}
	if err := fakeCheckPutOptions(o); err != nil {
		return engine.ObjectInfo{}, err
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return engine.ObjectInfo{}, fmt.Errorf("fake: read body: %w", err)
	}
	if err := fakeCheckSize(len(data), size); err != nil {
		return engine.ObjectInfo{}, err
	}
	sum := md5.Sum(data)
	if o.ContentMD5 != nil && !bytes.Equal(o.ContentMD5, sum[:]) {
		return engine.ObjectInfo{}, engine.ErrBadDigest
	}
	// The engine records what S3 reports for a PUT that names no storage
	// class or ACL.
	sc, acl := o.StorageClass, o.ACL
	if sc == "" {
		sc = "STANDARD"
	}
	if acl == "" {
		acl = "private"
	}
	enc := fakeEncryption(o.Encryption)
	info := engine.ObjectInfo{Bucket: b, Key: k, Size: int64(len(data)), ContentType: o.ContentType, StorageClass: sc, Owner: o.Owner, ACL: acl,
		Headers: o.Headers, UserMeta: o.UserMeta, Tags: fakeTags(o.Tags)}
	fo := &fakeObject{data: data, enc: enc}
	if enc != nil {
		info.ETag = fakeShownETag(enc, enc.Key, hex.EncodeToString(sum[:]))
		info.Cipher, info.Sealed = string(enc.Cipher), enc.Sealed
		fo.partKeys = [][]byte{enc.Key}
	} else {
		info.ETag = hex.EncodeToString(sum[:])
	}
	if len(o.Tags) > engine.MaxObjectTags {
		return engine.ObjectInfo{}, engine.ErrInvalidArgument
	}
	if o.ChecksumAlgorithm != "" {
		h, err := hashing.NewChecksum(o.ChecksumAlgorithm)
		if err != nil {
			return engine.ObjectInfo{}, fmt.Errorf("fake: %w: %w", engine.ErrInvalidArgument, err)
		}
		h.Write(data)
		got := base64.StdEncoding.EncodeToString(h.Sum(nil))
		if o.ExpectedChecksum != nil {
			want, err := o.ExpectedChecksum()
			if err != nil {
				return engine.ObjectInfo{}, fmt.Errorf("fake: expected checksum: %w", err)
			}
			if want != "" && want != got {
				return engine.ObjectInfo{}, engine.ErrChecksumMismatch
			}
		}
		info.Checksum = engine.Checksum{Algorithm: o.ChecksumAlgorithm, Value: got, Type: "FULL_OBJECT"}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fb, err := f.bucket(b)
	if err != nil {
		return engine.ObjectInfo{}, err
	}
	if err := fakePutConditions(fb, k, o); err != nil {
		return engine.ObjectInfo{}, err
	}
	if info.Lock, err = f.newLock(fb.info, o.Lock); err != nil {
		return engine.ObjectInfo{}, err
	}
	info.ModTime = f.tick(fb, &info)
	fo.info = info
	fb.add(k, fo)
	info.IsLatest = true
	return info, nil
}

// fakeCheckPutOptions refuses what the engine refuses of a PUT's or an
// upload's options.
func fakeCheckPutOptions(o engine.PutOptions) error {
	n := 0
	for k, v := range o.UserMeta {
		n += len(k) + len(v)
	}
	switch {
	case n > engine.MaxUserMetaLen, len(o.Tags) > engine.MaxObjectTags:
		return engine.ErrInvalidArgument
	case o.StorageClass != "" && o.StorageClass != "STANDARD" && o.StorageClass != "REDUCED_REDUNDANCY":
		return fmt.Errorf("fake: storage class %q: %w", o.StorageClass, engine.ErrInvalidArgument)
	}
	if o.ChecksumAlgorithm != "" {
		if _, err := hashing.NewChecksum(o.ChecksumAlgorithm); err != nil {
			return fmt.Errorf("fake: %w: %w", engine.ErrInvalidArgument, err)
		}
	}
	if e := o.Encryption; e != nil {
		if _, err := sse.ParseCipher(string(e.Cipher)); err != nil {
			return fmt.Errorf("fake: %w: %w", engine.ErrInvalidArgument, err)
		}
		if len(e.Key) != sse.KeySize {
			return fmt.Errorf("fake: %w: object key of %d bytes", engine.ErrInvalidArgument, len(e.Key))
		}
	}
	return nil
}

// fakeCheckSize compares a body's length with its declared size (-1:
// unknown) as the engine does: short is an incomplete body, long an
// invalid request.
func fakeCheckSize(got int, size int64) error {
	switch {
	case size < 0 || int64(got) == size:
		return nil
	case int64(got) < size:
		return engine.ErrIncompleteBody
	}
	return fmt.Errorf("fake: body longer than the declared %d bytes: %w", size, engine.ErrInvalidArgument)
}

// tick advances the fake clock and, in a versioning-enabled bucket,
// gives info a new version id; elsewhere it is the null version ("").
func (f *fakeStore) tick(fb *fakeBucket, info *engine.ObjectInfo) time.Time {
	f.seq++
	if fb.info.Versioning == engine.VersioningEnabled {
		info.VersionID = fmt.Sprintf("fv%08d", f.seq)
	}
	return f.now().Add(time.Duration(f.seq) * time.Second)
}

// versions are k's versions, newest first.
func (fb *fakeBucket) versions(k string) []*fakeObject {
	cur, ok := fb.objects[k]
	if !ok {
		return nil
	}
	return append([]*fakeObject{cur}, fb.older[k]...)
}

func (fb *fakeBucket) setVersions(k string, vs []*fakeObject) {
	delete(fb.objects, k)
	delete(fb.older, k)
	if len(vs) > 0 {
		fb.objects[k] = vs[0]
	}
	if len(vs) > 1 {
		fb.older[k] = vs[1:]
	}
}

// add makes fo k's current version; a null version replaces the one
// there was, as S3's writes to unversioned and suspended buckets do.
func (fb *fakeBucket) add(k string, fo *fakeObject) {
	vs := []*fakeObject{fo}
	for _, v := range fb.versions(k) {
		if fo.info.VersionID != "" || v.info.VersionID != "" {
			vs = append(vs, v)
		}
	}
	fb.setVersions(k, vs)
}

// fakeVersionID reads a versionId as the engine does: "null" is the
// null version, and the fake's ids start with "fv"; anything else is
// malformed.
func fakeVersionID(id string) (string, error) {
	switch {
	case id == engine.NullVersionID:
		return "", nil
	case strings.HasPrefix(id, "fv"):
		return id, nil
	}
	return "", fmt.Errorf("fake: version id %q: %w", id, engine.ErrInvalidArgument)
}

// fakePutConditions applies a write's If-Match / If-None-Match as the
// engine does: If-Match on a missing key is ErrObjectNotFound.
func fakePutConditions(fb *fakeBucket, k string, o engine.PutOptions) error {
	if fb == nil {
		return nil
	}
	cur, ok := fb.objects[k]
	if ok && cur.info.DeleteMarker {
		ok = false
	}
	listed := func(list string) bool {
		for _, e := range strings.Split(list, ",") {
			if e = strings.TrimSpace(e); e == "*" || trimETag(e) == cur.info.ETag {
				return true
			}
		}
		return false
	}
	switch {
	case o.IfMatch != "" && !ok:
		return engine.ErrObjectNotFound
	case o.IfMatch != "" && !listed(o.IfMatch):
		return engine.ErrPreconditionFailed
	case ok && o.IfNoneMatchAny, ok && o.IfNoneMatch != "" && listed(o.IfNoneMatch):
		return engine.ErrPreconditionFailed
	}
	return nil
}

func checkConditions(oi engine.ObjectInfo, c engine.Conditions) error {
	if c.IfMatch != "" && trimETag(c.IfMatch) != oi.ETag && c.IfMatch != "*" {
		return engine.ErrPreconditionFailed
	}
	if c.IfMatch == "" && c.IfUnmodifiedSince != nil && oi.ModTime.After(*c.IfUnmodifiedSince) {
		return engine.ErrPreconditionFailed
	}
	if c.IfNoneMatch != "" && (trimETag(c.IfNoneMatch) == oi.ETag || c.IfNoneMatch == "*") {
		return engine.ErrNotModified
	}
	if c.IfNoneMatch == "" && c.IfModifiedSince != nil && !oi.ModTime.After(*c.IfModifiedSince) {
		return engine.ErrNotModified
	}
	return nil
}

// object is k's current version; a current delete marker reads as
// deleted, as the engine reports it.
func (f *fakeStore) object(b, k string) (*fakeObject, error) {
	return f.version(b, k, "")
}

// version is the version of k that id names ("" the current one),
// answering the engine's errors: ErrNoSuchVersion, a malformed id's
// ErrInvalidArgument, and a DeleteMarkerError for a delete marker.
func (f *fakeStore) version(b, k, id string) (*fakeObject, error) {
	fb, err := f.bucket(b)
	if err != nil {
		return nil, err
	}
	if id == "" {
		fo, ok := fb.objects[k]
		if !ok {
			return nil, engine.ErrObjectNotFound
		}
		if fo.info.DeleteMarker {
			return nil, &engine.DeleteMarkerError{Marker: fb.infoOf(k, fo), Err: engine.ErrObjectNotFound}
		}
		return fo, nil
	}
	want, err := fakeVersionID(id)
	if err != nil {
		return nil, err
	}
	for _, fo := range fb.versions(k) {
		if fo.info.VersionID != want {
			continue
		}
		if fo.info.DeleteMarker {
			return nil, &engine.DeleteMarkerError{Marker: fb.infoOf(k, fo), Err: engine.ErrMethodNotAllowed}
		}
		return fo, nil
	}
	return nil, engine.ErrNoSuchVersion
}

// infoOf is fo's info with IsLatest set as the engine sets it.
func (fb *fakeBucket) infoOf(k string, fo *fakeObject) engine.ObjectInfo {
	info := fo.info
	info.IsLatest = fb.objects[k] == fo
	return info
}

func (f *fakeStore) GetObject(_ context.Context, b, k string, o engine.GetOptions) (*engine.ObjectReader, error) {
	f.mu.Lock()
	rd, fo, err := f.openObject(b, k, o)
	f.mu.Unlock()
	if err != nil || fo.enc == nil {
		return rd, err
	}
	// As the engine, Unseal is called outside the lock, and a key that
	// is not the version's fails the read, not the GET.
	key, err := fakeUnseal(o.Unseal, rd.Info)
	if err != nil {
		return nil, err
	}
	if !fo.readableWith(key, rd.Start, rd.Length) {
		rd.ReadCloser = io.NopCloser(iotest.ErrReader(fmt.Errorf("fake: %s/%s: %w", b, k, engine.ErrDataAuth)))
	}
	return rd, nil
}

// openObject is GetObject but for the key of an encrypted version.
// f.mu is held.
func (f *fakeStore) openObject(b, k string, o engine.GetOptions) (*engine.ObjectReader, *fakeObject, error) {
	fo, err := f.version(b, k, o.VersionID)
	if err != nil {
		return nil, nil, err
	}
	if err := checkConditions(fo.info, o.Conditions); err != nil {
		return nil, nil, err
	}
	start, n := int64(0), fo.info.Size
	partial := false
	if o.Range != nil || o.PartNumber > 0 {
		var ok bool
		start, n, ok = resolvePart(fo.info, o)
		if !ok && o.PartNumber > 0 {
			return nil, nil, engine.ErrInvalidPartNumber
		}
		if !ok {
			return nil, nil, engine.ErrInvalidRange
		}
		partial = true
	}
	return &engine.ObjectReader{Info: f.buckets[b].infoOf(k, fo), Start: start, Length: n, Partial: partial,
		ReadCloser: io.NopCloser(bytes.NewReader(fo.data[start : start+n]))}, fo, nil
}

func (f *fakeStore) HeadObject(_ context.Context, b, k string, o engine.GetOptions) (engine.ObjectInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fo, err := f.version(b, k, o.VersionID)
	if err != nil {
		return engine.ObjectInfo{}, err
	}
	if err := checkConditions(fo.info, o.Conditions); err != nil {
		return engine.ObjectInfo{}, err
	}
	// As the engine, HEAD resolves a range or part as GET does.
	if o.Range != nil || o.PartNumber > 0 {
		if _, _, ok := resolvePart(fo.info, o); !ok {
			if o.PartNumber > 0 {
				return engine.ObjectInfo{}, engine.ErrInvalidPartNumber
			}
			return engine.ObjectInfo{}, engine.ErrInvalidRange
		}
	}
	return f.buckets[b].infoOf(k, fo), nil
}

func (f *fakeStore) DeleteObject(ctx context.Context, b, k string) error {
	_, err := f.DeleteObjectVersion(ctx, b, k, engine.DeleteOptions{})
	return err
}

// DeleteObjectVersion deletes as the engine's contract says: a named
// version goes for good; otherwise an unversioned bucket loses the
// object and a versioned one gets a delete marker (the null one when
// suspended), even for a key that has no version.
func (f *fakeStore) DeleteObjectVersion(_ context.Context, b, k string, o engine.DeleteOptions) (engine.DeleteResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fb, err := f.bucket(b)
	if err != nil {
		return engine.DeleteResult{}, err
	}
	if o.VersionID != "" {
		want, err := fakeVersionID(o.VersionID)
		if err != nil {
			return engine.DeleteResult{}, err
		}
		vs := fb.versions(k)
		for i, v := range vs {
			if v.info.VersionID == want {
				if err := f.checkRemovable(v, o.BypassGovernance); err != nil {
					return engine.DeleteResult{}, err
				}
				fb.setVersions(k, append(vs[:i:i], vs[i+1:]...))
				return engine.DeleteResult{VersionID: want, DeleteMarker: v.info.DeleteMarker}, nil
			}
		}
		return engine.DeleteResult{}, engine.ErrNoSuchVersion
	}
	if fb.info.Versioning == "" {
		cur, ok := fb.objects[k]
		if !ok {
			return engine.DeleteResult{}, engine.ErrObjectNotFound
		}
		if err := f.checkRemovable(cur, false); err != nil {
			return engine.DeleteResult{}, err
		}
		fb.setVersions(k, nil)
		return engine.DeleteResult{}, nil
	}
	m := engine.ObjectInfo{Bucket: b, Key: k, DeleteMarker: true}
	m.ModTime = f.tick(fb, &m)
	fb.add(k, &fakeObject{info: m})
	return engine.DeleteResult{VersionID: m.VersionID, DeleteMarker: true}, nil
}

func (f *fakeStore) SetObjectACL(_ context.Context, b, k, versionID, acl string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	fo, err := f.version(b, k, versionID)
	if err != nil {
		return err
	}
	fo.info.ACL = acl
	return nil
}

// SetObjectTags replaces the tags of a version in place, as the engine
// does: the version (ETag, ModTime) stays.
func (f *fakeStore) SetObjectTags(_ context.Context, b, k, versionID string, tags map[string]string) (engine.ObjectInfo, error) {
	if len(tags) > engine.MaxObjectTags {
		return engine.ObjectInfo{}, engine.ErrInvalidArgument
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fo, err := f.version(b, k, versionID)
	if err != nil {
		return engine.ObjectInfo{}, err
	}
	fo.info.Tags = fakeTags(tags)
	return f.buckets[b].infoOf(k, fo), nil
}

// newLock is the object lock a new version in bucket bi gets from its
// request's l, checked as the engine checks it: only in a bucket with
// object lock, a retention with both a known mode and a future date,
// a known legal hold; the bucket's default retention when l names none.
func (f *fakeStore) newLock(bi engine.BucketInfo, l objectlock.Lock) (objectlock.Lock, error) {
	now := f.now()
	if l != (objectlock.Lock{}) {
		switch {
		case bi.ObjectLock == "":
			return l, fmt.Errorf("fake: bucket %s: %w", bi.Name, engine.ErrObjectLockNotEnabled)
		case (l.Mode == "") != l.RetainUntil.IsZero(),
			l.Mode != "" && (!objectlock.ValidMode(l.Mode) || !l.RetainUntil.After(now)),
			l.LegalHold != "" && l.LegalHold != objectlock.HoldOn && l.LegalHold != objectlock.HoldOff:
			return l, fmt.Errorf("fake: object lock %+v: %w", l, engine.ErrInvalidArgument)
		}
	}
	cfg, _, err := bi.ObjectLockConfig()
	if err != nil {
		return l, err
	}
	if l.Mode == "" && cfg.HasDefault() {
		d := cfg.Default(now)
		l.Mode, l.RetainUntil = d.Mode, d.RetainUntil
	}
	return l, nil
}

// checkRemovable refuses, as the engine does, to remove a version its
// object lock protects at the fake's clock.
func (f *fakeStore) checkRemovable(fo *fakeObject, bypass bool) error {
	if fo.info.DeleteMarker {
		return nil
	}
	if err := fo.info.Lock.CheckRemove(f.now(), bypass); err != nil {
		return fmt.Errorf("fake: %s version %q: %w", fo.info.Key, fo.info.VersionID, err)
	}
	return nil
}

// lockVersion is the version of k that an object lock call names, in a
// bucket that must have object lock.
func (f *fakeStore) lockVersion(b, k, versionID string) (*fakeObject, error) {
	fb, err := f.bucket(b)
	if err != nil {
		return nil, err
	}
	if fb.info.ObjectLock == "" {
		return nil, fmt.Errorf("fake: bucket %s: %w", b, engine.ErrObjectLockNotEnabled)
	}
	return f.version(b, k, versionID)
}

// SetObjectRetention replaces a version's retention in place as the
// engine does: objectlock.CheckChange decides, the legal hold stays.
func (f *fakeStore) SetObjectRetention(_ context.Context, b, k, versionID string, r objectlock.Lock, bypass bool) (engine.ObjectInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fo, err := f.lockVersion(b, k, versionID)
	if err != nil {
		return engine.ObjectInfo{}, err
	}
	next := objectlock.Lock{Mode: r.Mode, RetainUntil: r.RetainUntil, LegalHold: fo.info.Lock.LegalHold}
	if (next.Mode == "") != next.RetainUntil.IsZero() || (next.Mode != "" && !next.RetainUntil.After(f.now())) {
		return engine.ObjectInfo{}, fmt.Errorf("fake: retention %+v: %w", r, engine.ErrInvalidArgument)
	}
	if err := objectlock.CheckChange(fo.info.Lock, next, f.now(), bypass); err != nil {
		return engine.ObjectInfo{}, fmt.Errorf("fake: %s/%s: %w", b, k, err)
	}
	fo.info.Lock = next
	return f.buckets[b].infoOf(k, fo), nil
}

// SetObjectLegalHold puts a version's legal hold ON or OFF in place.
func (f *fakeStore) SetObjectLegalHold(_ context.Context, b, k, versionID, status string) (engine.ObjectInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fo, err := f.lockVersion(b, k, versionID)
	if err != nil {
		return engine.ObjectInfo{}, err
	}
	if status != objectlock.HoldOn && status != objectlock.HoldOff {
		return engine.ObjectInfo{}, fmt.Errorf("fake: legal hold %q: %w", status, engine.ErrInvalidArgument)
	}
	fo.info.Lock.LegalHold = status
	return f.buckets[b].infoOf(k, fo), nil
}

// ListObjectVersions lists every version and delete marker: keys in
// byte order, each key's versions newest first, resuming after
// KeyMarker (or after its version VersionIDMarker).
func (f *fakeStore) ListObjectVersions(_ context.Context, b string, o engine.ListVersionsOptions) (engine.ListVersionsResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fb, err := f.bucket(b)
	if err != nil {
		return engine.ListVersionsResult{}, err
	}
	if o.MaxKeys <= 0 || o.MaxKeys > 1000 {
		o.MaxKeys = 1000
	}
	markerVersion := ""
	if o.VersionIDMarker != "" {
		if markerVersion, err = fakeVersionID(o.VersionIDMarker); err != nil {
			return engine.ListVersionsResult{}, err
		}
	}
	keys := make([]string, 0, len(fb.objects))
	for k := range fb.objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var res engine.ListVersionsResult
	n := 0
	full := func() bool {
		if n == o.MaxKeys {
			res.IsTruncated = true
			return true
		}
		n++
		return false
	}
	seen := map[string]bool{}
keys:
	for _, k := range keys {
		if !strings.HasPrefix(k, o.Prefix) || k < o.KeyMarker || (k == o.KeyMarker && o.VersionIDMarker == "") {
			continue
		}
		if o.Delimiter != "" {
			if i := strings.Index(k[len(o.Prefix):], o.Delimiter); i >= 0 {
				cp := k[:len(o.Prefix)+i+len(o.Delimiter)]
				if seen[cp] || strings.HasPrefix(o.KeyMarker, cp) {
					continue
				}
				if full() {
					break
				}
				seen[cp] = true
				res.CommonPrefixes = append(res.CommonPrefixes, cp)
				res.NextKeyMarker, res.NextVersionIDMarker = cp, ""
				continue
			}
		}
		skip := k == o.KeyMarker
		for _, v := range fb.versions(k) {
			if skip {
				skip = v.info.VersionID != markerVersion
				continue
			}
			if full() {
				break keys
			}
			res.Versions = append(res.Versions, fb.infoOf(k, v))
			res.NextKeyMarker, res.NextVersionIDMarker = k, v.info.VersionID
		}
	}
	if !res.IsTruncated {
		res.NextKeyMarker, res.NextVersionIDMarker = "", ""
	}
	return res, nil
}

// fakeTags is the engine's stored form of a tag set: a copy, nil when empty.
func fakeTags(tags map[string]string) map[string]string {
	if len(tags) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range tags {
		out[k] = v
	}
	return out
}

func (f *fakeStore) CopyObject(ctx context.Context, sb, sk, db, dk string, o engine.CopyOptions) (engine.ObjectInfo, error) {
	f.mu.Lock()
	// As the engine: a copy onto itself in an unversioned bucket that
	// keeps the data as it is (no new checksum, no new encryption) is
	// a metadata change, which must bring new metadata.
	fb, ok := f.buckets[db]
	inPlace := ok && sb == db && sk == dk && o.SourceVersionID == "" && fb.info.Versioning == "" &&
		o.Put.ChecksumAlgorithm == "" && (o.KeepEncryption || o.Put.Encryption == nil)
	if inPlace && !o.ReplaceMetadata {
		f.mu.Unlock()
		return engine.ObjectInfo{}, fmt.Errorf("fake: copying an object onto itself needs new metadata: %w", engine.ErrInvalidArgument)
	}
	fo, err := f.version(sb, sk, o.SourceVersionID)
	var srcInfo engine.ObjectInfo
	if err == nil {
		srcInfo = f.buckets[sb].infoOf(sk, fo)
		err = checkConditions(fo.info, o.SourceConditions)
		if err == engine.ErrNotModified { //nolint:errorlint // fake returns sentinels unwrapped
			err = engine.ErrPreconditionFailed
		}
	}
	f.mu.Unlock()
	if err != nil {
		return engine.ObjectInfo{}, err
	}
	put := o.Put
	// The engine changes only the metadata of such a copy when its data
	// stays encrypted as it is (or plaintext) and has a checksum: no key
	// is needed. Otherwise the source is read as a GET reads it.
	if inPlace && (o.KeepEncryption || fo.enc == nil) && srcInfo.Checksum.Algorithm != "" {
		put.Encryption = fakeEncryption(fo.enc)
	} else if fo.enc != nil {
		key, err := fakeUnseal(o.SourceUnseal, srcInfo)
		if err != nil {
			return engine.ObjectInfo{}, err
		}
		if !fo.readableWith(key, 0, int64(len(fo.data))) {
			return engine.ObjectInfo{}, fmt.Errorf("fake: copy source %s/%s: %w", sb, sk, engine.ErrDataAuth)
		}
		if o.KeepEncryption {
			// The sealed key is bound to its object.
			if sb != db || sk != dk {
				return engine.ObjectInfo{}, fmt.Errorf("fake: only a copy onto itself keeps its source's encryption: %w", engine.ErrInvalidArgument)
			}
			put.Encryption = fakeEncryption(fo.enc)
			put.Encryption.Sealed = srcInfo.Sealed
		}
	}
	if !o.ReplaceMetadata {
		put.ContentType, put.Headers, put.UserMeta = fo.info.ContentType, fo.info.Headers, fo.info.UserMeta
		if put.StorageClass == "" {
			put.StorageClass = fo.info.StorageClass
		}
	}
	if !o.ReplaceTags {
		put.Tags = fo.info.Tags
	}
	// As the engine (and S3): every copy gets a FULL_OBJECT checksum of
	// its data, the requested algorithm, else the source's, else
	// CRC64NVME.
	if put.ChecksumAlgorithm == "" {
		put.ChecksumAlgorithm = fo.info.Checksum.Algorithm
	}
	if put.ChecksumAlgorithm == "" {
		put.ChecksumAlgorithm = hashing.CRC64NVME
	}
	put.ContentMD5, put.ExpectedChecksum = nil, nil
	return f.PutObject(ctx, db, dk, bytes.NewReader(fo.data), int64(len(fo.data)), put)
}

func (f *fakeStore) ListObjects(_ context.Context, b string, o engine.ListOptions) (engine.ListResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fb, err := f.bucket(b)
	if err != nil {
		return engine.ListResult{}, err
	}
	if o.MaxKeys <= 0 || o.MaxKeys > 1000 {
		o.MaxKeys = 1000
	}
	keys := make([]string, 0, len(fb.objects))
	for k := range fb.objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var res engine.ListResult
	seen := map[string]bool{}
	for _, k := range keys {
		if !strings.HasPrefix(k, o.Prefix) || k <= o.After || fb.objects[k].info.DeleteMarker {
			continue
		}
		entry, isPrefix := k, false
		if o.Delimiter != "" {
			if i := strings.Index(k[len(o.Prefix):], o.Delimiter); i >= 0 {
				entry, isPrefix = k[:len(o.Prefix)+i+len(o.Delimiter)], true
			}
		}
		if isPrefix && (seen[entry] || strings.HasPrefix(o.After, entry)) {
			continue
		}
		if len(res.Objects)+len(res.CommonPrefixes) == o.MaxKeys {
			res.IsTruncated = true
			break
		}
		if isPrefix {
			seen[entry] = true
			res.CommonPrefixes = append(res.CommonPrefixes, entry)
		} else {
			res.Objects = append(res.Objects, fb.objects[k].info)
		}
		res.NextAfter = entry
	}
	return res, nil
}

func (f *fakeStore) NewMultipartUpload(_ context.Context, b, k string, o engine.PutOptions) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fb, err := f.bucket(b)
	if err != nil {
		return "", err
	}
	if !validKey(k) {
		return "", engine.ErrInvalidObjectName
	}
	if err := fakeCheckPutOptions(o); err != nil {
		return "", err
	}
	if _, err := f.newLock(fb.info, o.Lock); err != nil {
		return "", err
	}
	sc := o.StorageClass
	if sc == "" {
		sc = "STANDARD"
	}
	f.seq++
	id := fmt.Sprintf("upload-%d", f.seq)
	f.uploads[id] = &fakeUpload{info: engine.MultipartInfo{Bucket: b, Key: k, UploadID: id, Initiated: f.now(),
		StorageClass: sc, Owner: o.Owner, ChecksumAlgorithm: o.ChecksumAlgorithm}, opts: o, parts: map[int][]byte{},
		partETags: map[int]string{}, partKeys: map[int][]byte{}}
	f.uploads[id].opts.Encryption = fakeEncryption(o.Encryption)
	return id, nil
}

func (f *fakeStore) upload(b, k, id string) (*fakeUpload, error) {
	u, ok := f.uploads[id]
	if !ok || u.info.Bucket != b || u.info.Key != k {
		return nil, engine.ErrNoSuchUpload
	}
	return u, nil
}

func (f *fakeStore) PutObjectPart(_ context.Context, b, k, id string, part int, body io.Reader, size int64, po engine.PartOptions) (engine.PartInfo, error) {
	if part < 1 || part > engine.MaxPartNumber {
		return engine.PartInfo{}, engine.ErrInvalidPartNumber
	}
	// An encrypted upload's parts need its key, asked for (outside the
	// lock) as the engine asks: with the upload's sealed map. The fake
	// cannot tell a wrong key here, nor can the engine: the part is
	// written under it, and reads of it fail.
	f.mu.Lock()
	u, err := f.upload(b, k, id)
	var enc *engine.Encryption
	var upInfo engine.ObjectInfo
	if err == nil && u.opts.Encryption != nil {
		enc = u.opts.Encryption
		upInfo = engine.ObjectInfo{Bucket: b, Key: k, ContentType: u.opts.ContentType, StorageClass: u.info.StorageClass,
			Owner: u.opts.Owner, Cipher: string(enc.Cipher), Sealed: enc.Sealed}
	}
	f.mu.Unlock()
	if err != nil {
		return engine.PartInfo{}, err
	}
	var key []byte
	if enc != nil {
		if key, err = fakeUnseal(po.Unseal, upInfo); err != nil {
			return engine.PartInfo{}, err
		}
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return engine.PartInfo{}, fmt.Errorf("fake: read part: %w", err)
	}
	if err := fakeCheckSize(len(data), size); err != nil {
		return engine.PartInfo{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if u, err = f.upload(b, k, id); err != nil {
		return engine.PartInfo{}, err
	}
	sum := md5.Sum(data)
	etag := fakeShownETag(enc, key, hex.EncodeToString(sum[:]))
	u.parts[part], u.partETags[part], u.partKeys[part] = data, etag, key
	return engine.PartInfo{Number: part, Size: int64(len(data)), ETag: etag, ModTime: f.now()}, nil
}

func (f *fakeStore) ListObjectParts(_ context.Context, b, k, id string, marker, maxParts int) (engine.ListPartsResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, err := f.upload(b, k, id)
	if err != nil {
		return engine.ListPartsResult{}, err
	}
	if maxParts <= 0 || maxParts > 1000 {
		maxParts = 1000
	}
	res := engine.ListPartsResult{Upload: u.info}
	var nums []int
	for n := range u.parts {
		if n > marker {
			nums = append(nums, n)
		}
	}
	sort.Ints(nums)
	for _, n := range nums {
		if len(res.Parts) == maxParts {
			res.IsTruncated = true
			break
		}
		res.Parts = append(res.Parts, engine.PartInfo{Number: n, Size: int64(len(u.parts[n])),
			ETag: u.etag(n), ModTime: f.now()})
		res.NextPartNumberMarker = n
	}
	return res, nil
}

func (f *fakeStore) CompleteMultipartUpload(ctx context.Context, b, k, id string, parts []engine.CompletePart, po engine.PutOptions) (engine.ObjectInfo, error) {
	// The list is checked first, as the engine checks it.
	if len(parts) == 0 {
		return engine.ObjectInfo{}, engine.ErrMalformedCompletion
	}
	for i, p := range parts {
		if p.Number < 1 || p.Number > engine.MaxPartNumber {
			return engine.ObjectInfo{}, engine.ErrInvalidPart
		}
		if i > 0 && p.Number <= parts[i-1].Number {
			return engine.ObjectInfo{}, engine.ErrInvalidPartOrder
		}
	}
	f.mu.Lock()
	u, err := f.upload(b, k, id)
	if err != nil {
		defer f.mu.Unlock()
		if oi, ok := f.completedUpload(b, k, id, parts); ok {
			return oi, nil
		}
		return engine.ObjectInfo{}, err
	}
	if err := fakePutConditions(f.buckets[b], k, po); err != nil {
		f.mu.Unlock()
		return engine.ObjectInfo{}, err
	}
	var all []byte
	var md5s []byte
	var objParts []engine.ObjectPart
	var partKeys [][]byte
	for i, p := range parts {
		data, ok := u.parts[p.Number]
		etag := u.etag(p.Number)
		if !ok || etag != trimETag(p.ETag) {
			f.mu.Unlock()
			return engine.ObjectInfo{}, engine.ErrInvalidPart
		}
		if i < len(parts)-1 && len(data) < engine.MinPartSize {
			f.mu.Unlock()
			return engine.ObjectInfo{}, engine.ErrEntityTooSmall
		}
		all = append(all, data...)
		// As the engine (and S3): the MD5 of the parts' ETags, hidden
		// ones included.
		raw, _ := hex.DecodeString(etag)
		md5s = append(md5s, raw...)
		objParts = append(objParts, engine.ObjectPart{Number: p.Number, Size: int64(len(data)), ETag: etag})
		partKeys = append(partKeys, u.partKeys[p.Number])
	}
	delete(f.uploads, id)
	opts := u.opts
	f.mu.Unlock()
	oi, err := f.PutObject(ctx, b, k, bytes.NewReader(all), int64(len(all)), opts)
	if err != nil {
		return oi, err
	}
	sum := md5.Sum(md5s)
	f.mu.Lock()
	defer f.mu.Unlock()
	fo, _ := f.object(b, k)
	fo.info.ETag = fmt.Sprintf("%s-%d", hex.EncodeToString(sum[:]), len(parts))
	fo.info.Parts = objParts
	fo.uploadID = id
	if fo.enc != nil {
		fo.partKeys = partKeys
	}
	return f.buckets[b].infoOf(k, fo), nil
}

// completedUpload answers a completion of an upload that completed
// already (a client retrying after a lost answer) as the engine does:
// with the key's current version, if that upload made it from the same
// part list. f.mu is held.
func (f *fakeStore) completedUpload(b, k, id string, parts []engine.CompletePart) (engine.ObjectInfo, bool) {
	fo, err := f.object(b, k)
	if err != nil || fo.uploadID != id || len(fo.info.Parts) != len(parts) {
		return engine.ObjectInfo{}, false
	}
	for i, p := range parts {
		if fo.info.Parts[i].Number != p.Number || fo.info.Parts[i].ETag != trimETag(p.ETag) {
			return engine.ObjectInfo{}, false
		}
	}
	return f.buckets[b].infoOf(k, fo), true
}

func (f *fakeStore) AbortMultipartUpload(_ context.Context, b, k, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.upload(b, k, id); err != nil {
		return err
	}
	delete(f.uploads, id)
	return nil
}

// ListMultipartUploads lists as the engine does: by key (then by
// initiation), after the key and upload id markers, common prefixes
// collapsed and counted in MaxUploads (0 means 1000).
func (f *fakeStore) ListMultipartUploads(_ context.Context, b string, o engine.ListUploadsOptions) (engine.ListUploadsResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.bucket(b); err != nil {
		return engine.ListUploadsResult{}, err
	}
	var all []engine.MultipartInfo
	for _, u := range f.uploads {
		k := u.info.Key
		if u.info.Bucket != b || !strings.HasPrefix(k, o.Prefix) || k < o.KeyMarker ||
			(k == o.KeyMarker && (o.UploadIDMarker == "" || u.info.UploadID <= o.UploadIDMarker)) {
			continue
		}
		all = append(all, u.info)
	}
	sort.Slice(all, func(i, j int) bool {
		a, c := all[i], all[j]
		if a.Key != c.Key {
			return a.Key < c.Key
		}
		if !a.Initiated.Equal(c.Initiated) {
			return a.Initiated.Before(c.Initiated)
		}
		return a.UploadID < c.UploadID
	})
	max := o.MaxUploads
	if max <= 0 || max > 1000 {
		max = 1000
	}
	var res engine.ListUploadsResult
	for _, u := range all {
		cp := ""
		if o.Delimiter != "" {
			if i := strings.Index(u.Key[len(o.Prefix):], o.Delimiter); i >= 0 {
				cp = u.Key[:len(o.Prefix)+i+len(o.Delimiter)]
				if n := len(res.CommonPrefixes); n > 0 && res.CommonPrefixes[n-1] == cp {
					continue
				}
			}
		}
		if len(res.Uploads)+len(res.CommonPrefixes) == max {
			res.IsTruncated = true
			break
		}
		if cp != "" {
			res.CommonPrefixes = append(res.CommonPrefixes, cp)
			res.NextKeyMarker, res.NextUploadIDMarker = cp, ""
			continue
		}
		res.Uploads = append(res.Uploads, u)
		res.NextKeyMarker, res.NextUploadIDMarker = u.Key, u.UploadID
	}
	return res, nil
}
