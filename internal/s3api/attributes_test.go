package s3api

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/engine"
)

func TestRouteGetObjectAttributes(t *testing.T) {
	r := route("GET", "b", "k", map[string][]string{"attributes": {""}}, http.Header{})
	if r.err != nil || r.api != "GetObjectAttributes" {
		t.Fatalf("route: api %q err %v", r.api, r.err)
	}
}

// attrHarness makes bucket b (owned by alice) holding "multi", a
// three-part COMPOSITE CRC32 object, "full", a two-part FULL_OBJECT
// CRC32C object, and "plain", a single PUT with no checksum.
func attrHarness(t *testing.T) *harness {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bkt", nil), http.StatusOK, "")
	fb := h.store.buckets["bkt"]
	mod := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	fb.objects["multi"] = &fakeObject{info: engine.ObjectInfo{Bucket: "bkt", Key: "multi", Size: 30, ETag: "0123456789abcdef0123456789abcdef-3",
		ModTime: mod, Owner: "alice", ACL: "private", StorageClass: "STANDARD",
		Checksum: engine.Checksum{Algorithm: "CRC32", Value: "AAAAAA==-3", Type: "COMPOSITE"},
		Parts: []engine.ObjectPart{{Number: 1, Size: 10, Checksum: "AQAAAA=="}, {Number: 2, Size: 10, Checksum: "AgAAAA=="},
			{Number: 3, Size: 10, Checksum: "AwAAAA=="}}}, data: make([]byte, 30)}
	fb.objects["full"] = &fakeObject{info: engine.ObjectInfo{Bucket: "bkt", Key: "full", Size: 20, ETag: "0123456789abcdef0123456789abcdef-2",
		ModTime: mod, Owner: "alice", ACL: "private", StorageClass: "STANDARD",
		Checksum: engine.Checksum{Algorithm: "CRC32C", Value: "AAAAAQ==", Type: "FULL_OBJECT"},
		Parts:    []engine.ObjectPart{{Number: 1, Size: 10, Checksum: "AQAAAA=="}, {Number: 2, Size: 10, Checksum: "AgAAAA=="}}}, data: make([]byte, 20)}
	fb.objects["plain"] = &fakeObject{info: engine.ObjectInfo{Bucket: "bkt", Key: "plain", Size: 5, ETag: "5d41402abc4b2a76b9719d911017c592",
		ModTime: mod, Owner: "alice", ACL: "private"}, data: []byte("hello")}
	return h
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func decodeAttrs(t *testing.T, body string) xmlObjectAttributes {
	t.Helper()
	var out xmlObjectAttributes
	if err := xml.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("decode %q: %v", body, err)
	}
	return out
}

func TestGetObjectAttributes(t *testing.T) {
	h := attrHarness(t)
	all := "ETag,Checksum,ObjectParts,StorageClass,ObjectSize"
	rec := h.do("alice", "GET", "/bkt/multi?attributes", nil, "X-Amz-Object-Attributes", all)
	h.expect(rec, http.StatusOK, "")
	if rec.Header().Get("ETag") != "" {
		t.Fatalf("ETag header sent: clients take it for a GetObject answer")
	}
	if lm := rec.Header().Get("Last-Modified"); lm != "Tue, 04 Mar 2025 05:06:07 GMT" {
		t.Fatalf("Last-Modified %q", lm)
	}
	body := rec.Body.String()
	if !strings.Contains(body, "<GetObjectAttributesResponse") || !strings.Contains(body, "<PartsCount>3</PartsCount>") {
		t.Fatalf("body %s", body)
	}
	a := decodeAttrs(t, body)
	if a.ETag != "0123456789abcdef0123456789abcdef-3" || a.StorageClass != "STANDARD" || a.ObjectSize == nil || *a.ObjectSize != 30 {
		t.Fatalf("attributes %+v", a)
	}
	if a.Checksum == nil || a.Checksum.ChecksumCRC32 != "AAAAAA==" || a.Checksum.ChecksumType != "COMPOSITE" {
		t.Fatalf("checksum %+v", a.Checksum)
	}
	p := a.ObjectParts
	if p == nil || p.PartsCount != 3 || deref(p.IsTruncated) || deref(p.MaxParts) != 1000 || deref(p.PartNumberMarker) != 0 ||
		deref(p.NextPartNumberMarker) != 3 || len(p.Parts) != 3 ||
		p.Parts[1].PartNumber != 2 || p.Parts[1].Size != 10 || p.Parts[1].ChecksumCRC32 != "AgAAAA==" {
		t.Fatalf("parts %+v", p)
	}

	// Paging with x-amz-max-parts and x-amz-part-number-marker.
	rec = h.do("alice", "GET", "/bkt/multi?attributes", nil, "X-Amz-Object-Attributes", "ObjectParts",
		"X-Amz-Max-Parts", "1", "X-Amz-Part-Number-Marker", "1")
	h.expect(rec, http.StatusOK, "")
	a = decodeAttrs(t, rec.Body.String())
	p = a.ObjectParts
	if a.ETag != "" || a.Checksum != nil || a.ObjectSize != nil || p == nil || !deref(p.IsTruncated) || deref(p.PartNumberMarker) != 1 ||
		deref(p.NextPartNumberMarker) != 2 || deref(p.MaxParts) != 1 || len(p.Parts) != 1 || p.Parts[0].PartNumber != 2 {
		t.Fatalf("page %s", rec.Body.String())
	}
	// The last page is not truncated.
	rec = h.do("alice", "GET", "/bkt/multi?attributes", nil, "X-Amz-Object-Attributes", "ObjectParts",
		"X-Amz-Max-Parts", "5", "X-Amz-Part-Number-Marker", "2")
	p = decodeAttrs(t, rec.Body.String()).ObjectParts
	if p == nil || deref(p.IsTruncated) || deref(p.NextPartNumberMarker) != 3 || len(p.Parts) != 1 || p.Parts[0].ChecksumCRC32 != "AwAAAA==" {
		t.Fatalf("last page %s", rec.Body.String())
	}

	// A FULL_OBJECT multipart object: its checksum, and of its parts only
	// the count, as S3 answers.
	rec = h.do("alice", "GET", "/bkt/full?attributes", nil, "X-Amz-Object-Attributes", all)
	h.expect(rec, http.StatusOK, "")
	body = rec.Body.String()
	a = decodeAttrs(t, body)
	if a.Checksum == nil || a.Checksum.ChecksumCRC32C != "AAAAAQ==" || a.Checksum.ChecksumType != "FULL_OBJECT" ||
		a.ObjectParts == nil || a.ObjectParts.PartsCount != 2 || len(a.ObjectParts.Parts) != 0 ||
		strings.Contains(body, "MaxParts") || strings.Contains(body, "IsTruncated") || strings.Contains(body, "PartNumberMarker") {
		t.Fatalf("full %s", body)
	}

	// A single-PUT object without a checksum: no Checksum, no ObjectParts.
	rec = h.do("alice", "GET", "/bkt/plain?attributes", nil, "X-Amz-Object-Attributes", all)
	h.expect(rec, http.StatusOK, "")
	a = decodeAttrs(t, rec.Body.String())
	if a.Checksum != nil || a.ObjectParts != nil || a.StorageClass != "STANDARD" || *a.ObjectSize != 5 ||
		a.ETag != "5d41402abc4b2a76b9719d911017c592" {
		t.Fatalf("plain %s", rec.Body.String())
	}
}

func TestGetObjectAttributesErrors(t *testing.T) {
	h := attrHarness(t)
	for _, c := range []struct {
		user, key string
		hdr       []string
		status    int
		code      string
	}{
		{"alice", "multi", nil, http.StatusBadRequest, "InvalidArgument"},
		{"alice", "multi", []string{"X-Amz-Object-Attributes", "ETag,Colour"}, http.StatusBadRequest, "InvalidArgument"},
		{"alice", "multi", []string{"X-Amz-Object-Attributes", "ETag", "X-Amz-Max-Parts", "x"}, http.StatusBadRequest, "InvalidArgument"},
		{"alice", "multi", []string{"X-Amz-Object-Attributes", "ETag", "X-Amz-Part-Number-Marker", "-1"}, http.StatusBadRequest, "InvalidArgument"},
		{"alice", "missing", []string{"X-Amz-Object-Attributes", "ETag"}, http.StatusNotFound, "NoSuchKey"},
		{"bob", "multi", []string{"X-Amz-Object-Attributes", "ETag"}, http.StatusForbidden, "AccessDenied"},
		{"", "multi", []string{"X-Amz-Object-Attributes", "ETag"}, http.StatusForbidden, "AccessDenied"},
		{"bob", "missing", []string{"X-Amz-Object-Attributes", "ETag"}, http.StatusForbidden, "AccessDenied"},
	} {
		rec := h.do(c.user, "GET", "/bkt/"+c.key+"?attributes", nil, c.hdr...)
		if rec.Code != c.status {
			t.Fatalf("%+v: status %d: %s", c, rec.Code, rec.Body.String())
		}
		h.expect(rec, c.status, c.code)
	}
	// A public-read object may be read by anyone, as with HeadObject.
	h.store.buckets["bkt"].objects["multi"].info.ACL = "public-read"
	h.expect(h.do("", "GET", "/bkt/multi?attributes", nil, "X-Amz-Object-Attributes", "ObjectSize"), http.StatusOK, "")
}

func TestGetObjectPartChecksum(t *testing.T) {
	h := attrHarness(t)
	rec := h.do("alice", "HEAD", "/bkt/multi?partNumber=2", nil, "X-Amz-Checksum-Mode", "ENABLED")
	h.expect(rec, http.StatusPartialContent, "")
	if got := rec.Header().Get("X-Amz-Checksum-Crc32"); got != "AgAAAA==" {
		t.Fatalf("part 2 checksum %q", got)
	}
	rec = h.do("alice", "GET", "/bkt/multi?partNumber=3", nil, "X-Amz-Checksum-Mode", "ENABLED")
	h.expect(rec, http.StatusPartialContent, "")
	if got := rec.Header().Get("X-Amz-Checksum-Crc32"); got != "AwAAAA==" {
		t.Fatalf("part 3 checksum %q", got)
	}
	if got := rec.Header().Get("X-Amz-Checksum-Type"); got != "COMPOSITE" {
		t.Fatalf("part 3 checksum type %q", got)
	}
	rec = h.do("alice", "HEAD", "/bkt/multi?partNumber=2", nil)
	if got := rec.Header().Get("X-Amz-Checksum-Crc32"); got != "" {
		t.Fatalf("checksum without checksum mode: %q", got)
	}
	// A part of a FULL_OBJECT object: the part's CRC, no type (it is not
	// the object's checksum).
	rec = h.do("alice", "HEAD", "/bkt/full?partNumber=2", nil, "X-Amz-Checksum-Mode", "ENABLED")
	h.expect(rec, http.StatusPartialContent, "")
	if got, typ := rec.Header().Get("X-Amz-Checksum-Crc32c"), rec.Header().Get("X-Amz-Checksum-Type"); got != "AgAAAA==" || typ != "" {
		t.Fatalf("full part 2 checksum %q type %q", got, typ)
	}
	// A full object's checksum is never sent for a range.
	rec = h.do("alice", "GET", "/bkt/full", nil, "X-Amz-Checksum-Mode", "ENABLED", "Range", "bytes=0-4")
	if got := rec.Header().Get("X-Amz-Checksum-Crc32c"); got != "" {
		t.Fatalf("checksum on a range: %q", got)
	}
	rec = h.do("alice", "GET", "/bkt/full", nil, "X-Amz-Checksum-Mode", "ENABLED")
	if got, typ := rec.Header().Get("X-Amz-Checksum-Crc32c"), rec.Header().Get("X-Amz-Checksum-Type"); got != "AAAAAQ==" || typ != "FULL_OBJECT" {
		t.Fatalf("full object checksum %q type %q", got, typ)
	}
}

// completeSpy records the options CompleteMultipartUpload is given.
type completeSpy struct {
	*fakeStore
	opts engine.PutOptions
}

func (c *completeSpy) CompleteMultipartUpload(ctx context.Context, b, k, id string, parts []engine.CompletePart, o engine.PutOptions) (engine.ObjectInfo, error) {
	c.opts = o
	return c.fakeStore.CompleteMultipartUpload(ctx, b, k, id, parts, o)
}

// TestCompleteChecksumHeaders: the whole-object checksum a completion
// carries reaches the store (which verifies it); a malformed one is refused.
func TestCompleteChecksumHeaders(t *testing.T) {
	spy := &completeSpy{fakeStore: newFakeStore()}
	h := newHarness(t, func(c *Config) { c.Store = spy })
	h.expect(h.do("alice", "PUT", "/bkt", nil), http.StatusOK, "")
	start := func() string {
		rec := h.do("alice", "POST", "/bkt/obj?uploads", nil)
		h.expect(rec, http.StatusOK, "")
		var init xmlInitiateMultipart
		if err := xml.Unmarshal(rec.Body.Bytes(), &init); err != nil {
			t.Fatal(err)
		}
		r := h.do("alice", "PUT", "/bkt/obj?partNumber=1&uploadId="+init.UploadID, []byte("tail"))
		h.expect(r, http.StatusOK, "")
		return init.UploadID
	}
	body := func() []byte {
		return []byte("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>" +
			"\"" + md5hex("tail") + "\"</ETag></Part></CompleteMultipartUpload>")
	}
	id := start()
	h.expect(h.do("alice", "POST", "/bkt/obj?uploadId="+id, body(), "X-Amz-Checksum-Crc32c", "not-base64"),
		http.StatusBadRequest, "InvalidRequest")
	if spy.opts.ChecksumAlgorithm != "" {
		t.Fatalf("store called for a malformed checksum: %+v", spy.opts)
	}
	h.expect(h.do("alice", "POST", "/bkt/obj?uploadId="+id, body(), "X-Amz-Checksum-Crc32c", "AAAAAA==",
		"X-Amz-Checksum-Type", "full_object"), http.StatusOK, "")
	if spy.opts.ChecksumAlgorithm != "CRC32C" || spy.opts.ChecksumType != "FULL_OBJECT" || spy.opts.ExpectedChecksum == nil {
		t.Fatalf("options %+v", spy.opts)
	}
	if v, err := spy.opts.ExpectedChecksum(); err != nil || v != "AAAAAA==" {
		t.Fatalf("expected checksum %q %v", v, err)
	}
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// copySpy answers CopyObject with a fixed checksum and records options.
type copySpy struct {
	*fakeStore
	opts engine.CopyOptions
}

func (c *copySpy) CopyObject(_ context.Context, _, _, _, _ string, o engine.CopyOptions) (engine.ObjectInfo, error) {
	c.opts = o
	return engine.ObjectInfo{ETag: "abc", ModTime: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Checksum: engine.Checksum{Algorithm: "CRC32C", Value: "AAAAAA==", Type: "FULL_OBJECT"}}, nil
}

// TestCopyObjectChecksumAnswer: CopyObjectResult carries the copy's
// checksum and its type, and an in-place copy that only asks for a
// checksum algorithm is allowed and passes it on.
func TestCopyObjectChecksumAnswer(t *testing.T) {
	spy := &copySpy{fakeStore: newFakeStore()}
	h := newHarness(t, func(c *Config) { c.Store = spy })
	h.expect(h.do("alice", "PUT", "/bkt", nil), http.StatusOK, "")
	h.expect(h.do("alice", "PUT", "/bkt/k", []byte("data")), http.StatusOK, "")
	rec := h.do("alice", "PUT", "/bkt/k", nil, "X-Amz-Copy-Source", "/bkt/k", "X-Amz-Checksum-Algorithm", "crc32c")
	h.expect(rec, http.StatusOK, "")
	var res xmlCopyObjectResult
	if err := xml.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.ChecksumCRC32C != "AAAAAA==" || res.ChecksumType != "FULL_OBJECT" {
		t.Fatalf("copy result %s", rec.Body.String())
	}
	if spy.opts.Put.ChecksumAlgorithm != "CRC32C" || spy.opts.ReplaceMetadata {
		t.Fatalf("copy options %+v", spy.opts)
	}
	// Without a change, an in-place copy is still refused.
	h.expect(h.do("alice", "PUT", "/bkt/k", nil, "X-Amz-Copy-Source", "/bkt/k"), http.StatusBadRequest, "InvalidRequest")
}
