package engine

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/hashing"
)

func TestMultipart(t *testing.T) {
	e, _ := testEngine(t, 8, Config{BlockSize: 64 << 10})
	ctx := context.Background()
	r := rand.New(rand.NewSource(3))
	id, err := e.NewMultipartUpload(ctx, "bucket", "big/object", PutOptions{ContentType: "a/b", UserMeta: map[string]string{"k": "v"}, ChecksumAlgorithm: "CRC32C"})
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[int]int{1: MinPartSize, 3: MinPartSize + 1, 7: 1234}
	bodies := map[int][]byte{}
	var parts []CompletePart
	for _, n := range []int{1, 3, 7} {
		bodies[n] = randBytes(r, sizes[n])
		pi, err := e.PutObjectPart(ctx, "bucket", "big/object", id, n, bytes.NewReader(bodies[n]), int64(sizes[n]), PartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pi.Checksum == "" || pi.ChecksumAlgorithm != "CRC32C" {
			t.Fatalf("part of a CRC32C upload has checksum %q of %q", pi.Checksum, pi.ChecksumAlgorithm)
		}
		parts = append(parts, CompletePart{Number: n, ETag: `"` + pi.ETag + `"`, Checksums: map[string]string{"CRC32C": pi.Checksum}})
	}
	// An unused part that complete must drop.
	if _, err := e.PutObjectPart(ctx, "bucket", "big/object", id, 5, strings.NewReader("unused"), 6, PartOptions{}); err != nil {
		t.Fatal(err)
	}
	lp, err := e.ListObjectParts(ctx, "bucket", "big/object", id, 0, 2)
	if err != nil || len(lp.Parts) != 2 || !lp.IsTruncated || lp.Parts[1].Number != 3 {
		t.Fatalf("list parts: %+v %v", lp, err)
	}
	ups, err := e.ListMultipartUploads(ctx, "bucket", ListUploadsOptions{})
	if err != nil || len(ups.Uploads) != 1 || ups.Uploads[0].UploadID != id {
		t.Fatalf("list uploads: %+v %v", ups, err)
	}
	// S3 names next markers only for a truncated list.
	if ups.IsTruncated || ups.NextKeyMarker != "" || ups.NextUploadIDMarker != "" {
		t.Fatalf("untruncated upload list with next markers: %+v", ups)
	}
	// Errors complete must report.
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "big/object", id, []CompletePart{parts[1], parts[0]}, PutOptions{}); !errors.Is(err, ErrInvalidPartOrder) {
		t.Fatalf("order: %v", err)
	}
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "big/object", id, []CompletePart{{Number: 1, ETag: "bad"}}, PutOptions{}); !errors.Is(err, ErrInvalidPart) {
		t.Fatalf("etag: %v", err)
	}
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "big/object", id, []CompletePart{parts[0], {Number: 8, ETag: parts[0].ETag}}, PutOptions{}); !errors.Is(err, ErrInvalidPart) {
		t.Fatalf("missing part: %v", err)
	}
	small := parts[2]
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "big/object", id, []CompletePart{small, {Number: 9}}, PutOptions{}); err == nil {
		t.Fatal("complete with a missing part after a small one must fail")
	}
	info, err := e.CompleteMultipartUpload(ctx, "bucket", "big/object", id, parts, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	h := md5.New()
	for _, n := range []int{1, 3, 7} {
		all = append(all, bodies[n]...)
		s := md5.Sum(bodies[n])
		h.Write(s[:])
	}
	if want := hex.EncodeToString(h.Sum(nil)) + "-3"; info.ETag != want {
		t.Fatalf("etag %s, want %s", info.ETag, want)
	}
	if !strings.HasSuffix(info.Checksum.Value, "-3") || info.Checksum.Type != "COMPOSITE" {
		t.Fatalf("checksum %+v", info.Checksum)
	}
	got, err := getAll(t, e, "big/object", GetOptions{})
	if err != nil || !bytes.Equal(got, all) {
		t.Fatalf("get: %v equal %v", err, bytes.Equal(got, all))
	}
	// Part 2 of the object (upload part 3) and a range across parts.
	got, err = getAll(t, e, "big/object", GetOptions{PartNumber: 2})
	if err != nil || !bytes.Equal(got, bodies[3]) {
		t.Fatalf("partNumber 2: %v", err)
	}
	got, err = getAll(t, e, "big/object", GetOptions{Range: &Range{Start: MinPartSize - 10, End: 2*MinPartSize + 20}})
	if err != nil || !bytes.Equal(got, all[MinPartSize-10:2*MinPartSize+21]) {
		t.Fatalf("range across parts: %v", err)
	}
	oi, err := e.HeadObject(ctx, "bucket", "big/object", GetOptions{})
	if err != nil || oi.ContentType != "a/b" || oi.UserMeta["k"] != "v" || len(oi.Parts) != 3 {
		t.Fatalf("head: %+v %v", oi, err)
	}
	if _, err := e.PutObjectPart(ctx, "bucket", "big/object", id, 1, strings.NewReader("x"), 1, PartOptions{}); !errors.Is(err, ErrNoSuchUpload) {
		t.Fatalf("part after complete: %v", err)
	}
	// Abort.
	id2, _ := e.NewMultipartUpload(ctx, "bucket", "other", PutOptions{})
	e.PutObjectPart(ctx, "bucket", "other", id2, 1, strings.NewReader("x"), 1, PartOptions{})
	if err := e.AbortMultipartUpload(ctx, "bucket", "other", id2); err != nil {
		t.Fatal(err)
	}
	if err := e.AbortMultipartUpload(ctx, "bucket", "other", id2); !errors.Is(err, ErrNoSuchUpload) {
		t.Fatalf("second abort: %v", err)
	}
	if err := e.AbortMultipartUpload(ctx, "bucket", "other", "../../x"); !errors.Is(err, ErrNoSuchUpload) {
		t.Fatalf("hostile upload id: %v", err)
	}
	if ups, _ := e.ListMultipartUploads(ctx, "bucket", ListUploadsOptions{}); len(ups.Uploads) != 0 {
		t.Fatalf("uploads left: %+v", ups)
	}
}

func TestCopyAndConditions(t *testing.T) {
	e, _ := testEngine(t, 4, Config{BlockSize: 4096})
	ctx := context.Background()
	data := randBytes(rand.New(rand.NewSource(5)), 10000)
	src, err := e.PutObject(ctx, "bucket", "src", bytes.NewReader(data), int64(len(data)), PutOptions{ContentType: "t/s", UserMeta: map[string]string{"a": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	c1, err := e.CopyObject(ctx, "bucket", "src", "bucket", "dst", CopyOptions{})
	if err != nil || c1.ETag != src.ETag || c1.ContentType != "t/s" || c1.UserMeta["a"] != "1" {
		t.Fatalf("copy: %+v %v", c1, err)
	}
	c2, err := e.CopyObject(ctx, "bucket", "src", "bucket", "dst2", CopyOptions{ReplaceMetadata: true, Put: PutOptions{ContentType: "t/r"}})
	if err != nil || c2.ContentType != "t/r" || len(c2.UserMeta) != 0 {
		t.Fatalf("copy replace: %+v %v", c2, err)
	}
	if got, _ := getAll(t, e, "dst2", GetOptions{}); !bytes.Equal(got, data) {
		t.Fatal("copied bytes differ")
	}
	if _, err := e.CopyObject(ctx, "bucket", "src", "bucket", "src", CopyOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("self copy without replace: %v", err)
	}
	self, err := e.CopyObject(ctx, "bucket", "src", "bucket", "src", CopyOptions{ReplaceMetadata: true, Put: PutOptions{ContentType: "new/type"}})
	if err != nil || self.ContentType != "new/type" || self.ETag != src.ETag {
		t.Fatalf("self copy: %+v %v", self, err)
	}
	if _, err := e.CopyObject(ctx, "bucket", "src", "bucket", "d3", CopyOptions{SourceConditions: Conditions{IfMatch: "nope"}}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("copy if-match: %v", err)
	}
	if _, err := e.CopyObject(ctx, "bucket", "src", "bucket", "d3", CopyOptions{SourceConditions: Conditions{IfNoneMatch: src.ETag}}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("copy if-none-match: %v", err)
	}
	if _, err := e.HeadObject(ctx, "bucket", "src", GetOptions{Conditions: Conditions{IfNoneMatch: `"` + src.ETag + `"`}}); !errors.Is(err, ErrNotModified) {
		t.Fatalf("head if-none-match: %v", err)
	}
	if _, err := e.HeadObject(ctx, "bucket", "src", GetOptions{Conditions: Conditions{IfMatch: "x"}}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("head if-match: %v", err)
	}
	if _, err := e.PutObject(ctx, "bucket", "src", strings.NewReader("x"), 1, PutOptions{IfNoneMatchAny: true}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("if-none-match * on existing: %v", err)
	}
	if _, err := e.PutObject(ctx, "bucket", "fresh", strings.NewReader("x"), 1, PutOptions{IfNoneMatchAny: true}); err != nil {
		t.Fatalf("if-none-match * on new key: %v", err)
	}
	if _, err := e.GetObject(ctx, "bucket", "src", GetOptions{Range: &Range{Start: 20000, End: -1}}); !errors.Is(err, ErrInvalidRange) {
		t.Fatalf("range past end: %v", err)
	}
	got, err := getAll(t, e, "src", GetOptions{Range: &Range{Start: -100, End: -1}})
	if err != nil || !bytes.Equal(got, data[len(data)-100:]) {
		t.Fatalf("suffix range: %v", err)
	}
	// Bad digests leave the old object intact.
	if _, err := e.PutObject(ctx, "bucket", "src", strings.NewReader("xyz"), 3, PutOptions{ContentMD5: make([]byte, 16)}); !errors.Is(err, ErrBadDigest) {
		t.Fatalf("bad md5: %v", err)
	}
	if _, err := e.PutObject(ctx, "bucket", "src", strings.NewReader("xy"), 3, PutOptions{}); !errors.Is(err, ErrIncompleteBody) {
		t.Fatalf("short body: %v", err)
	}
	if _, err := e.PutObject(ctx, "bucket", "src", strings.NewReader("xyz"), 3, PutOptions{ChecksumAlgorithm: "SHA256",
		ExpectedChecksum: func() (string, error) { return "AAAA", nil }}); !errors.Is(err, ErrChecksumMismatch) {
		t.Fatalf("bad checksum: %v", err)
	}
	if got, _ := getAll(t, e, "src", GetOptions{}); !bytes.Equal(got, data) {
		t.Fatal("a rejected PUT changed the stored object")
	}
}

// Concurrent writers, readers and deleters of one key: every read sees one
// complete version, never a mix; different keys proceed independently.
func TestConcurrentSameKey(t *testing.T) {
	e, _ := testEngine(t, 8, Config{BlockSize: 4096, InlineLimit: -1})
	ctx := context.Background()
	versions := make([][]byte, 6)
	valid := map[string]bool{}
	for i := range versions {
		versions[i] = bytes.Repeat([]byte{byte('a' + i)}, 20000+i)
		valid[string(versions[i])] = true
	}
	done := make(chan error, 64)
	for w := 0; w < 6; w++ {
		go func() {
			for i := 0; i < 8; i++ {
				v := versions[(w+i)%len(versions)]
				if _, err := e.PutObject(ctx, "bucket", "hot", bytes.NewReader(v), int64(len(v)), PutOptions{}); err != nil {
					done <- err
					return
				}
				if w == 0 && i%3 == 0 {
					if err := e.DeleteObject(ctx, "bucket", "hot"); err != nil && !errors.Is(err, ErrObjectNotFound) {
						done <- err
						return
					}
				}
				key := fmt.Sprintf("cold-%d-%d", w, i)
				if _, err := e.PutObject(ctx, "bucket", key, bytes.NewReader(v), int64(len(v)), PutOptions{}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for rdr := 0; rdr < 4; rdr++ {
		go func() {
			for i := 0; i < 20; i++ {
				got, err := getAll(t, e, "hot", GetOptions{})
				if errors.Is(err, ErrObjectNotFound) {
					continue
				}
				if err != nil {
					done <- err
					return
				}
				if !valid[string(got)] {
					done <- fmt.Errorf("torn read: %d bytes", len(got))
					return
				}
			}
			done <- nil
		}()
	}
	for i := 0; i < 10; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// CRC64NVME uploads get a FULL_OBJECT checksum: the CRC of the whole
// object, combined from the parts, equal to hashing the object directly.
func TestMultipartFullObjectChecksum(t *testing.T) {
	e, _ := testEngine(t, 4, Config{BlockSize: 64 << 10})
	ctx := context.Background()
	r := rand.New(rand.NewSource(9))
	for _, tc := range []struct{ algo, typ, want string }{
		{"CRC64NVME", "", "FULL_OBJECT"}, {"CRC32C", "FULL_OBJECT", "FULL_OBJECT"}, {"CRC32", "", "COMPOSITE"},
	} {
		id, err := e.NewMultipartUpload(ctx, "bucket", "full", PutOptions{ChecksumAlgorithm: tc.algo, ChecksumType: tc.typ})
		if err != nil {
			t.Fatal(err)
		}
		var all []byte
		var parts []CompletePart
		for n, size := range []int{MinPartSize, 777} {
			body := randBytes(r, size)
			all = append(all, body...)
			pi, err := e.PutObjectPart(ctx, "bucket", "full", id, n+1, bytes.NewReader(body), int64(size), PartOptions{})
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, CompletePart{Number: n + 1, ETag: pi.ETag, Checksums: map[string]string{pi.ChecksumAlgorithm: pi.Checksum}})
		}
		info, err := e.CompleteMultipartUpload(ctx, "bucket", "full", id, parts, PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if info.Checksum.Type != tc.want {
			t.Fatalf("%s: checksum type %q, want %q", tc.algo, info.Checksum.Type, tc.want)
		}
		if tc.want == "FULL_OBJECT" {
			h, _ := hashing.NewChecksum(tc.algo)
			h.Write(all)
			if want := base64.StdEncoding.EncodeToString(h.Sum(nil)); info.Checksum.Value != want {
				t.Fatalf("%s: full-object checksum %s, hashing the object gives %s", tc.algo, info.Checksum.Value, want)
			}
		}
	}
	if _, err := e.NewMultipartUpload(ctx, "bucket", "x", PutOptions{ChecksumAlgorithm: "SHA256", ChecksumType: "FULL_OBJECT"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("SHA256 FULL_OBJECT: %v", err)
	}
	if _, err := e.NewMultipartUpload(ctx, "bucket", "x", PutOptions{ChecksumAlgorithm: "CRC64NVME", ChecksumType: "COMPOSITE"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("CRC64NVME COMPOSITE: %v", err)
	}
}

// An upload whose record reached fewer than quorum drives (a create or a
// completion cut short by a crash) can be neither used nor aborted: it is
// not listed, and a full scan removes its remnants once old enough.
func TestUploadWithoutQuorumSwept(t *testing.T) {
	e, _ := testEngine(t, 16, Config{BlockSize: 4096, Heal: HealConfig{Disabled: true, OrphanGrace: time.Nanosecond}})
	ctx := context.Background()
	id, err := e.NewMultipartUpload(ctx, "bucket", "mp", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	part := bytes.Repeat([]byte("p"), 10000)
	if _, err := e.PutObjectPart(ctx, "bucket", "mp", id, 1, bytes.NewReader(part), int64(len(part)), PartOptions{}); err != nil {
		t.Fatal(err)
	}
	set := e.setFor("bucket", "mp")
	for p := 4; p < 16; p++ {
		b := &drive.Batch{}
		b.Delete(drive.TableUploads, drive.UploadKey("bucket", "mp", id))
		if err := set.drives[p].Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.ListMultipartUploads(ctx, "bucket", ListUploadsOptions{})
	if err != nil || len(res.Uploads) != 0 {
		t.Fatalf("an upload without quorum is listed: %+v %v", res.Uploads, err)
	}
	rep, err := e.Heal(ctx, HealRequest{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for p, d := range set.drives {
		if _, err := d.Get(ctx, drive.TableUploads, drive.UploadKey("bucket", "mp", id)); !errors.Is(err, drive.ErrNotFound) {
			t.Fatalf("drive %d still holds the upload record after a scan (%+v): %v", p, rep, err)
		}
		if ents, _ := d.Scan(ctx, drive.TableParts, drive.ScanQuery{Prefix: drive.PartPrefix("bucket", "mp", id)}); len(ents) != 0 {
			t.Fatalf("drive %d still holds %d part records", p, len(ents))
		}
	}
	if rep.Orphans == 0 {
		t.Fatalf("the scan did not report the removal: %+v", rep)
	}
}
