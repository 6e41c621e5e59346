package minioformat

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

const drives = 16

func drivePath(dir string, d int) string { return filepath.Join(dir, fmt.Sprintf("drive%d", d+1)) }

// objectDir is where MinIO keeps a key: a key ending in "/" is stored with
// the suffix __XLDIR__ instead.
func objectDir(bucket, key string) string {
	if strings.HasSuffix(key, "/") {
		key = strings.TrimSuffix(key, "/") + "__XLDIR__"
	}
	return filepath.Join(bucket, filepath.FromSlash(key))
}

// formats reads every drive's format.json.
func formats(t *testing.T, dir string) []*Format {
	t.Helper()
	var fs []*Format
	for d := range drives {
		b, err := os.ReadFile(filepath.Join(drivePath(dir, d), ".minio.sys", "format.json"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := ParseFormat(b)
		if err != nil {
			t.Fatalf("drive%d: %v", d+1, err)
		}
		fs = append(fs, f)
	}
	return fs
}

func TestFixtureFormat(t *testing.T) {
	dir, _ := fixture(t)
	fs := formats(t, dir)
	for d, f := range fs {
		if err := fs[0].SameDeployment(f); err != nil {
			t.Errorf("drive%d: %v", d+1, err)
		}
		set, idx, err := f.Position()
		if err != nil || set != 0 || idx != d {
			t.Errorf("drive%d: position set %d index %d (%v), want 0, %d: MinIO orders a fresh set as its arguments", d+1, set, idx, err, d)
		}
		if f.Backend != "xl" || f.DistributionAlgo != "SIPMOD+PARITY" || f.SetDriveCount() != drives {
			t.Errorf("drive%d: %+v", d+1, f)
		}
	}
}

// objectMetas decodes one key's xl.meta on every drive (nil where absent).
func objectMetas(t *testing.T, dir, rel string) []*Meta {
	t.Helper()
	ms := make([]*Meta, drives)
	for d := range drives {
		b, err := os.ReadFile(filepath.Join(drivePath(dir, d), rel, "xl.meta"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(b)
		if err != nil {
			t.Fatalf("%s on drive%d: %v", rel, d+1, err)
		}
		ms[d] = m
	}
	return ms
}

// TestFixtureVersions decodes every key's xl.meta on every drive and
// compares each version with what MinIO answered (ListObjectVersions,
// HEAD, GetObjectTagging) before it was stopped.
func TestFixtureVersions(t *testing.T) {
	dir, exp := fixture(t)
	checked := 0
	for _, b := range exp.Buckets {
		byKey := map[string][]expVersion{}
		var keys []string
		for _, v := range b.Versions {
			if byKey[v.Key] == nil {
				keys = append(keys, v.Key)
			}
			byKey[v.Key] = append(byKey[v.Key], v)
		}
		onDisk := keysOnDisk(t, drivePath(dir, 0), b.Name)
		sort.Strings(keys)
		if strings.Join(onDisk, "\n") != strings.Join(keys, "\n") {
			t.Errorf("bucket %s: keys on drive1 %q, MinIO listed %q", b.Name, onDisk, keys)
		}
		for _, key := range keys {
			ms := objectMetas(t, dir, objectDir(b.Name, key))
			for d, m := range ms {
				if m == nil {
					t.Fatalf("%s/%s: no xl.meta on drive%d", b.Name, key, d+1)
				}
				compareVersions(t, b.Name+"/"+key, d, m, byKey[key])
				checked++
			}
		}
	}
	if checked < 20*drives {
		t.Fatalf("checked only %d xl.meta files", checked)
	}
}

// keysOnDisk lists the object keys under a bucket directory: every
// directory holding an xl.meta (__XLDIR__ mapped back to "/").
func keysOnDisk(t *testing.T, drive, bucket string) []string {
	t.Helper()
	root := filepath.Join(drive, bucket)
	var keys []string
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.Name() == "xl.meta" {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			k := filepath.ToSlash(rel)
			if strings.HasSuffix(k, "__XLDIR__") {
				k = strings.TrimSuffix(k, "__XLDIR__") + "/"
			}
			keys = append(keys, k)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	return keys
}

func compareVersions(t *testing.T, name string, d int, m *Meta, want []expVersion) {
	t.Helper()
	if len(m.Versions) != len(want) {
		t.Errorf("%s drive%d: %d versions, MinIO listed %d", name, d+1, len(m.Versions), len(want))
		return
	}
	if m.Major != 1 || m.Minor != 3 || m.HeaderVersion != 3 || m.MetaVersion != 3 {
		t.Errorf("%s drive%d: format %d.%d header %d meta %d", name, d+1, m.Major, m.Minor, m.HeaderVersion, m.MetaVersion)
	}
	for i, w := range want {
		v := &m.Versions[i]
		where := fmt.Sprintf("%s drive%d version %d (%s)", name, d+1, i, w.VersionID)
		if v.ID() != w.VersionID {
			t.Errorf("%s: version id %s", where, v.ID())
		}
		if got := v.ModTime().Format("2006-01-02T15:04:05.000Z"); got != w.LastModified {
			t.Errorf("%s: modified %s, MinIO said %s", where, got, w.LastModified)
		}
		if (v.Kind == KindDeleteMarker) != w.DeleteMarker {
			t.Errorf("%s: kind %s, delete marker %v", where, v.Kind, w.DeleteMarker)
		}
		if len(v.Unknown) > 0 {
			t.Errorf("%s: unknown fields %v", where, v.Unknown)
		}
		if v.Kind != KindObject {
			continue
		}
		o := v.Object
		if len(o.Unknown) > 0 {
			t.Errorf("%s: unknown object fields %v", where, o.Unknown)
		}
		if o.Size != w.Size {
			t.Errorf("%s: size %d, MinIO said %d", where, o.Size, w.Size)
		}
		if `"`+o.ETag()+`"` != w.ETag {
			t.Errorf("%s: etag %q, MinIO said %s", where, o.ETag(), w.ETag)
		}
		if int(o.Distribution[d]) != o.Index {
			t.Errorf("%s: drive holds shard %d, distribution says %d", where, o.Index, o.Distribution[d])
		}
		if o.DataBlocks != 12 || o.ParityBlocks != 4 || o.BlockSize != 1<<20 {
			t.Errorf("%s: %d+%d, block %d", where, o.DataBlocks, o.ParityBlocks, o.BlockSize)
		}
		inline := m.InlineData(v.ID())
		if o.Inline() != (inline != nil) || o.Inline() != (v.Header.Flags&FlagInlineData != 0) {
			t.Errorf("%s: inline flag %v, header flags %d, inline data %d bytes", where, o.Inline(), v.Header.Flags, len(inline))
		}
		if inline != nil && int64(len(inline)) != o.ShardFileSize(o.Size) {
			t.Errorf("%s: inline shard of %d bytes, want %d", where, len(inline), o.ShardFileSize(o.Size))
		}
		if w.Head == nil {
			t.Errorf("%s: no HEAD recorded", where)
			continue
		}
		compareHead(t, where, o, w)
	}
}

func compareHead(t *testing.T, where string, o *Object, w expVersion) {
	h := w.Head
	std := map[string]string{
		"content-type": h.ContentType, "content-disposition": h.ContentDisposition, "content-encoding": h.ContentEncoding,
		"content-language": h.ContentLanguage, "cache-control": h.CacheControl,
		"x-amz-object-lock-mode": h.LockMode, "x-amz-object-lock-legal-hold": h.LegalHold,
	}
	got := map[string]string{}
	user := map[string]string{}
	var dec mime.WordDecoder
	for k, v := range o.MetaUser {
		lk := strings.ToLower(k)
		switch {
		case strings.HasPrefix(lk, "x-amz-meta-"):
			user[lk[len("x-amz-meta-"):]] = v
		case lk == "etag":
		case lk == "x-amz-tagging":
			q, err := url.ParseQuery(v)
			if err != nil {
				t.Errorf("%s: tagging %q: %v", where, v, err)
			}
			if len(q) != len(h.Tags) {
				t.Errorf("%s: %d tags, MinIO said %d", where, len(q), len(h.Tags))
			}
			for tk, tv := range h.Tags {
				if q.Get(tk) != tv {
					t.Errorf("%s: tag %s=%q, MinIO said %q", where, tk, q.Get(tk), tv)
				}
			}
		case lk == "x-amz-object-lock-retain-until-date":
			ts, err := time.Parse(time.RFC3339Nano, v)
			if err != nil || ts.UTC().Format("2006-01-02T15:04:05.000Z") != h.LockRetainUntil {
				t.Errorf("%s: retain until %q, MinIO said %q", where, v, h.LockRetainUntil)
			}
		default:
			got[lk] = v
		}
	}
	if len(h.Tags) > 0 && o.MetaUser["X-Amz-Tagging"] == "" {
		t.Errorf("%s: tags %v not stored", where, h.Tags)
	}
	if h.LockRetainUntil != "" && o.MetaUser["x-amz-object-lock-retain-until-date"] == "" {
		t.Errorf("%s: retention not stored", where)
	}
	for k, v := range std {
		if got[k] != v {
			t.Errorf("%s: %s %q, MinIO said %q", where, k, got[k], v)
		}
		delete(got, k)
	}
	if len(got) > 0 {
		t.Errorf("%s: metadata not accounted for: %v", where, got)
	}
	if len(user) != len(h.Metadata) {
		t.Errorf("%s: user metadata %v, MinIO said %v", where, user, h.Metadata)
	}
	for k, v := range h.Metadata {
		// MinIO keeps the raw UTF-8 and sends non-ASCII values RFC 2047 encoded.
		want, err := dec.DecodeHeader(v)
		if err != nil {
			t.Errorf("%s: %s: %v", where, k, err)
		}
		if user[k] != want && user[k] != v {
			t.Errorf("%s: x-amz-meta-%s %q, MinIO said %q", where, k, user[k], v)
		}
	}
	cs, err := o.Checksums()
	if err != nil {
		t.Errorf("%s: checksums: %v", where, err)
	}
	gotCS := map[string]string{}
	for _, c := range cs {
		gotCS[c.Algorithm] = c.String()
		gotCS["type"] = c.Type()
	}
	if len(gotCS) != len(h.Checksums) {
		t.Errorf("%s: checksums %v, MinIO said %v", where, gotCS, h.Checksums)
	}
	for k, v := range h.Checksums {
		if gotCS[k] != v {
			t.Errorf("%s: checksum %s %q, MinIO said %q", where, k, gotCS[k], v)
		}
	}
}

// shardStreams opens a version's shard streams on every drive, indexed by
// erasure index: the part file, or the inline data. skip lists drives
// treated as gone.
func shardStreams(t *testing.T, dir, rel string, ms []*Meta, vi, part int, skip map[int]bool) (*Object, []io.Reader, func()) {
	t.Helper()
	var o *Object
	streams := make([]io.Reader, drives)
	var files []*os.File
	for d, m := range ms {
		v := &m.Versions[vi]
		if v.Object == nil {
			t.Fatalf("%s version %d is not an object", rel, vi)
		}
		if o == nil {
			o = v.Object
		}
		if skip[d] {
			continue
		}
		k := v.Object.Index - 1
		if v.Object.Inline() {
			streams[k] = bytes.NewReader(m.InlineData(v.ID()))
			continue
		}
		p := filepath.Join(drivePath(dir, d), rel, v.Object.DataDirString(), fmt.Sprintf("part.%d", v.Object.Parts[part].Number))
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := f.Stat(); st.Size() != v.Object.ShardFileSize(v.Object.Parts[part].Size) {
			t.Errorf("%s: %d bytes, want %d", p, st.Size(), v.Object.ShardFileSize(v.Object.Parts[part].Size))
		}
		files = append(files, f)
		streams[k] = f
	}
	return o, streams, func() {
		for _, f := range files {
			f.Close()
		}
	}
}

// readVersion reassembles a version from the drives and returns the
// SHA-256 of its bytes.
func readVersion(t *testing.T, dir, rel string, ms []*Meta, vi int, skip map[int]bool) (string, error) {
	t.Helper()
	h := sha256.New()
	o := ms[0].Versions[vi].Object
	for p := range o.Parts {
		_, streams, done := shardStreams(t, dir, rel, ms, vi, p, skip)
		err := DecodePart(h, o, p, streams)
		done()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// TestFixtureData reassembles every object version of the fixture from
// its shards (inline or part files, verifying every chunk checksum) and
// compares the SHA-256 with the body MinIO served; then again with four
// drives gone, the data shards' first.
func TestFixtureData(t *testing.T) {
	dir, exp := fixture(t)
	kinds := map[string]int{}
	for _, b := range exp.Buckets {
		idx := map[string]int{}
		for _, w := range b.Versions {
			vi := idx[w.Key]
			idx[w.Key]++
			if w.DeleteMarker {
				continue
			}
			rel := objectDir(b.Name, w.Key)
			ms := objectMetas(t, dir, rel)
			o := ms[0].Versions[vi].Object
			switch {
			case o.Inline():
				kinds["inline"]++
			case len(o.Parts) > 1:
				kinds["multipart"]++
			case o.Size > o.BlockSize:
				kinds["multi-block"]++
			default:
				kinds["part file"]++
			}
			sum, err := readVersion(t, dir, rel, ms, vi, nil)
			if err != nil {
				t.Errorf("%s@%s: %v", rel, w.VersionID, err)
			} else if sum != w.SHA256 {
				t.Errorf("%s@%s: sha256 %s, MinIO served %s", rel, w.VersionID, sum, w.SHA256)
			}
			// Lose the drives holding data shards 1-4.
			gone := map[int]bool{}
			for d, s := range o.Distribution {
				if s <= 4 {
					gone[d] = true
				}
			}
			if sum, err := readVersion(t, dir, rel, ms, vi, gone); err != nil || sum != w.SHA256 {
				t.Errorf("%s@%s without 4 drives: %s, %v", rel, w.VersionID, sum, err)
			}
			gone[firstNotIn(gone)] = true
			if _, err := readVersion(t, dir, rel, ms, vi, gone); err == nil && o.Size > 0 {
				t.Errorf("%s@%s read with 5 of 16 drives gone", rel, w.VersionID)
			}
		}
	}
	for _, k := range []string{"inline", "multipart", "multi-block", "part file"} {
		if kinds[k] == 0 {
			t.Errorf("the fixture has no %s object", k)
		}
	}
	t.Logf("versions read: %v", kinds)
}

func firstNotIn(m map[int]bool) int {
	for d := range drives {
		if !m[d] {
			return d
		}
	}
	return -1
}

// TestFixtureCorruptChunk flips one byte of a part file: its reader
// reports that chunk, and DecodePart rebuilds the block from parity.
func TestFixtureCorruptChunk(t *testing.T) {
	dir, exp := fixture(t)
	var want string
	for _, b := range exp.Buckets {
		for _, v := range b.Versions {
			if b.Name == "plain" && v.Key == "multi-block.bin" {
				want = v.SHA256
			}
		}
	}
	rel := objectDir("plain", "multi-block.bin")
	ms := objectMetas(t, dir, rel)
	o := ms[0].Versions[0].Object
	if o.Inline() || o.Size < 3*o.BlockSize {
		t.Fatalf("plain/multi-block.bin is not a multi-block part file object")
	}
	_, streams, done := shardStreams(t, dir, rel, ms, 0, 0, nil)
	defer done()
	// Shard 2's file, corrupted in the third chunk's data.
	data, err := io.ReadAll(streams[1])
	if err != nil {
		t.Fatal(err)
	}
	off := 2*(ChecksumSize+o.ShardSize()) + ChecksumSize + 1000
	data[off] ^= 0x40
	sr, err := NewShardReader(bytes.NewReader(data), o.ShardSize(), o.ShardDataSize(o.Size))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		_, err := sr.Next(nil)
		if i < 2 && err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if i == 2 {
			if !errors.Is(err, ErrChecksum) {
				t.Fatalf("corrupted chunk read with %v, want ErrChecksum", err)
			}
			break
		}
	}
	if err := VerifyStream(bytes.NewReader(data), o.ShardSize(), o.ShardDataSize(o.Size)); !errors.Is(err, ErrChecksum) {
		t.Fatalf("VerifyStream: %v", err)
	}
	// The same stream in DecodePart: rebuilt from parity.
	_, streams2, done2 := shardStreams(t, dir, rel, ms, 0, 0, nil)
	defer done2()
	streams2[1] = bytes.NewReader(data)
	h := sha256.New()
	if err := DecodePart(h, o, 0, streams2); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Fatalf("sha256 %s after rebuilding a corrupt chunk, want %s", got, want)
	}
	// A truncated stream is an error, not a short read.
	sr, _ = NewShardReader(bytes.NewReader(data[:len(data)-1]), o.ShardSize(), o.ShardDataSize(o.Size))
	var last error
	for last == nil {
		_, last = sr.Next(nil)
	}
	if !errors.Is(last, ErrChecksum) && !errors.Is(last, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated stream ended with %v", last)
	}
}

// TestFixtureBucketMetadata reads every bucket's .metadata.bin through
// its xl.meta and compares the configuration with MinIO's answers.
func TestFixtureBucketMetadata(t *testing.T) {
	dir, exp := fixture(t)
	for _, b := range exp.Buckets {
		rel := filepath.Join(".minio.sys", "buckets", b.Name, ".metadata.bin")
		ms := objectMetas(t, dir, rel)
		for d, m := range ms {
			if m == nil {
				t.Fatalf("%s: missing on drive%d", rel, d+1)
			}
		}
		o := ms[0].Versions[0].Object
		if o.DataBlocks != 8 || o.ParityBlocks != 8 {
			t.Errorf("%s: %d+%d, MinIO keeps its configuration at maximum parity", rel, o.DataBlocks, o.ParityBlocks)
		}
		var buf bytes.Buffer
		_, streams, done := shardStreams(t, dir, rel, ms, 0, 0, nil)
		err := DecodePart(&buf, o, 0, streams)
		done()
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		bm, err := DecodeBucketMetadata(buf.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if bm.Name != b.Name || bm.Created.Format("2006-01-02T15:04:05.000Z") != b.Created || len(bm.Unknown) > 0 {
			t.Errorf("%s: name %q created %s unknown %v; want %q, %s", rel, bm.Name, bm.Created, bm.Unknown, b.Name, b.Created)
		}
		if !jsonEqual(bm.Policy, b.Policy) {
			t.Errorf("%s: policy %s, MinIO said %s", rel, bm.Policy, b.Policy)
		}
		for _, id := range b.LifecycleRules {
			if !bytes.Contains(bm.Lifecycle, []byte("<ID>"+id+"</ID>")) {
				t.Errorf("%s: lifecycle %s lacks rule %s", rel, bm.Lifecycle, id)
			}
		}
		if len(b.LifecycleRules) == 0 && bm.Lifecycle != nil {
			t.Errorf("%s: lifecycle %s", rel, bm.Lifecycle)
		}
		for k, v := range b.Tags {
			if !bytes.Contains(bm.Tagging, []byte("<Key>"+k+"</Key><Value>"+v+"</Value>")) {
				t.Errorf("%s: tagging %s lacks %s=%s", rel, bm.Tagging, k, v)
			}
		}
		if (b.Versioning == "Enabled") != bytes.Contains(bm.Versioning, []byte("<Status>Enabled</Status>")) {
			t.Errorf("%s: versioning %s, MinIO said %q", rel, bm.Versioning, b.Versioning)
		}
		if (b.ObjectLock == "Enabled") != bytes.Contains(bm.ObjectLock, []byte("<ObjectLockEnabled>Enabled</ObjectLockEnabled>")) {
			t.Errorf("%s: object lock %s, MinIO said %q", rel, bm.ObjectLock, b.ObjectLock)
		}
		if b.LockDefault != "" && !bytes.Contains(bm.ObjectLock, []byte("<Days>3650</Days>")) {
			t.Errorf("%s: object lock %s, MinIO said %s", rel, bm.ObjectLock, b.LockDefault)
		}
	}
}

func jsonEqual(a []byte, b string) bool {
	if len(a) == 0 || b == "" {
		return len(a) == 0 && b == ""
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return bytes.Equal(xs, ys)
}

// TestFixtureSystemObjects decodes every other xl.meta on the drives:
// MinIO's configuration, pool and multipart-upload records, and the
// unfinished upload's part.
func TestFixtureSystemObjects(t *testing.T) {
	dir, exp := fixture(t)
	n := 0
	err := filepath.WalkDir(drivePath(dir, 0), func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.Name() != "xl.meta" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if _, err := Decode(b); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var uploads int
	for _, b := range exp.Buckets {
		uploads += len(b.Uploads)
	}
	if uploads == 0 {
		t.Errorf("the fixture has no unfinished upload")
	}
	t.Logf("%d xl.meta files on drive1 decoded", n)
}
