package s3api

import (
	"bytes"
	"crypto/tls"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/engine"
)

// Issue #12 (S3 parity): the HTTP layer's part of each item.

func TestParityRangeOnEmptyObject(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/bk1/empty", []byte{}), 200, "")
	for _, rng := range []string{"bytes=0-0", "bytes=0-", "bytes=-1", "bytes=5-10"} {
		h.expect(h.do("alice", "GET", "/bk1/empty", nil, "Range", rng), 416, "InvalidRange")
		rec := h.do("alice", "HEAD", "/bk1/empty", nil, "Range", rng)
		h.expect(rec, 416, "")
		if rec.Body.Len() != 0 {
			t.Fatalf("HEAD %s: body %q", rng, rec.Body.String())
		}
	}
	// Without a range the empty object reads as usual.
	rec := h.do("alice", "GET", "/bk1/empty", nil)
	h.expect(rec, 200, "")
	if rec.Body.Len() != 0 || rec.Header().Get("Content-Length") != "0" {
		t.Fatalf("GET empty: %d bytes, Content-Length %q", rec.Body.Len(), rec.Header().Get("Content-Length"))
	}
}

func TestParityPartNumber(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/bk1/single", []byte("whole object")), 200, "")
	// partNumber=1 of a single-PUT object is the whole object.
	rec := h.do("alice", "GET", "/bk1/single?partNumber=1", nil)
	h.expect(rec, 206, "")
	if rec.Body.String() != "whole object" || rec.Header().Get("Content-Range") != "bytes 0-11/12" {
		t.Fatalf("part 1: %q %v", rec.Body.String(), rec.Header())
	}
	h.expect(h.do("alice", "HEAD", "/bk1/single?partNumber=1", nil), 206, "")
	// Beyond the part count: 416 InvalidPartNumber; HEAD has no body.
	h.expect(h.do("alice", "GET", "/bk1/single?partNumber=2", nil), 416, "InvalidPartNumber")
	rec = h.do("alice", "HEAD", "/bk1/single?partNumber=2", nil)
	h.expect(rec, 416, "")
	if rec.Body.Len() != 0 {
		t.Fatalf("HEAD body: %q", rec.Body.String())
	}
	// Out of 1..10000 is still a bad argument.
	h.expect(h.do("alice", "GET", "/bk1/single?partNumber=0", nil), 400, "InvalidArgument")

	id, etags := parityUpload(t, h, "/bk1/mp", []byte("second"))
	h.expect(h.do("alice", "POST", "/bk1/mp?uploadId="+id, completeBody(etags)), 200, "")
	rec = h.do("alice", "GET", "/bk1/mp?partNumber=2", nil)
	h.expect(rec, 206, "")
	if rec.Body.String() != "second" {
		t.Fatalf("part 2: %q", rec.Body.String())
	}
	h.expect(h.do("alice", "GET", "/bk1/mp?partNumber=3", nil), 416, "InvalidPartNumber")
	h.expect(h.do("alice", "HEAD", "/bk1/mp?partNumber=3", nil), 416, "")
}

// parityUpload starts an upload at path and uploads a 5 MiB first part
// and last; it returns the id and the part ETags.
func parityUpload(t *testing.T, h *harness, path string, last []byte) (string, []string) {
	t.Helper()
	rec := h.do("alice", "POST", path+"?uploads", nil)
	h.expect(rec, 200, "")
	var init xmlInitiateMultipart
	if err := xml.Unmarshal(rec.Body.Bytes(), &init); err != nil {
		t.Fatal(err)
	}
	var etags []string
	for i, body := range [][]byte{bytes.Repeat([]byte("p"), engine.MinPartSize), last} {
		rec := h.do("alice", "PUT", fmt.Sprintf("%s?partNumber=%d&uploadId=%s", path, i+1, init.UploadID), body)
		h.expect(rec, 200, "")
		etags = append(etags, rec.Header().Get("ETag"))
	}
	return init.UploadID, etags
}

func completeBody(etags []string) []byte {
	var b strings.Builder
	b.WriteString("<CompleteMultipartUpload>")
	for i, e := range etags {
		fmt.Fprintf(&b, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>", i+1, e)
	}
	b.WriteString("</CompleteMultipartUpload>")
	return []byte(b.String())
}

func TestParityCompleteLocation(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Domain = "s3.example.test" })
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	location := func(rec *httptest.ResponseRecorder) string {
		t.Helper()
		h.expect(rec, 200, "")
		var cr xmlCompleteResult
		if err := xml.Unmarshal(rec.Body.Bytes(), &cr); err != nil {
			t.Fatal(err)
		}
		return cr.Location
	}
	key := "dir/a b+c%é.txt"
	esc := "dir/a%20b%2Bc%25%C3%A9.txt"
	id, etags := parityUpload(t, h, "/bk1/"+esc, []byte("x"))
	req := httptest.NewRequest("POST", "/bk1/"+esc+"?uploadId="+id, bytes.NewReader(completeBody(etags)))
	req.Host = "localhost:9000"
	req.Header.Set("X-Test-User", "alice")
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, req)
	if got, want := location(rec), "http://localhost:9000/bk1/"+esc; got != want {
		t.Fatalf("path-style Location %q, want %q", got, want)
	}
	// Virtual-host style over TLS: the bucket is in the host.
	id, etags = parityUpload(t, h, "/bk1/"+esc, []byte("y"))
	req = httptest.NewRequest("POST", "/"+esc+"?uploadId="+id, bytes.NewReader(completeBody(etags)))
	req.Host = "bk1.s3.example.test:9000"
	req.TLS = &tls.ConnectionState{}
	req.Header.Set("X-Test-User", "alice")
	rec = httptest.NewRecorder()
	h.srv.ServeHTTP(rec, req)
	if got, want := location(rec), "https://bk1.s3.example.test:9000/"+esc; got != want {
		t.Fatalf("virtual-host Location %q, want %q", got, want)
	}
	if got := h.do("alice", "GET", "/bk1/"+esc, nil); got.Body.Len() != engine.MinPartSize+1 {
		t.Fatalf("object %q: %d bytes", key, got.Body.Len())
	}
}

func TestParityUploadPartCopyRange(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/bk1/src", []byte("0123456789")), 200, "")
	rec := h.do("alice", "POST", "/bk1/dst?uploads", nil)
	var init xmlInitiateMultipart
	if err := xml.Unmarshal(rec.Body.Bytes(), &init); err != nil {
		t.Fatal(err)
	}
	target := "/bk1/dst?partNumber=1&uploadId=" + init.UploadID
	for _, rng := range []string{"bytes=0-10", "bytes=10-12", "bytes=5-100"} {
		h.expect(h.do("alice", "PUT", target, nil, "X-Amz-Copy-Source", "/bk1/src", "X-Amz-Copy-Source-Range", rng), 416, "InvalidRange")
	}
	// The last byte of the source is in range.
	h.expect(h.do("alice", "PUT", target, nil, "X-Amz-Copy-Source", "/bk1/src", "X-Amz-Copy-Source-Range", "bytes=0-9"), 200, "")
	// A malformed range stays a bad argument.
	h.expect(h.do("alice", "PUT", target, nil, "X-Amz-Copy-Source", "/bk1/src", "X-Amz-Copy-Source-Range", "bytes=-3"), 400, "InvalidArgument")
}

func TestParityConditionalWrites(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	// PutObject.
	h.expect(h.do("alice", "PUT", "/bk1/k", []byte("v1"), "If-Match", `"0123"`), 404, "NoSuchKey")
	h.expect(h.do("alice", "PUT", "/bk1/k", []byte("v1"), "If-Match", `*`), 404, "NoSuchKey")
	rec := h.do("alice", "PUT", "/bk1/k", []byte("v1"), "If-None-Match", "*")
	h.expect(rec, 200, "")
	etag := rec.Header().Get("ETag")
	h.expect(h.do("alice", "PUT", "/bk1/k", []byte("v2"), "If-None-Match", "*"), 412, "PreconditionFailed")
	h.expect(h.do("alice", "PUT", "/bk1/k", []byte("v2"), "If-Match", `"0123"`), 412, "PreconditionFailed")
	// An ETag in If-None-Match (501 NotImplemented before): 412 when it
	// is the current ETag, written otherwise.
	h.expect(h.do("alice", "PUT", "/bk1/k", []byte("v2"), "If-None-Match", etag), 412, "PreconditionFailed")
	h.expect(h.do("alice", "PUT", "/bk1/other", []byte("v2"), "If-None-Match", `"0123"`), 200, "")
	// Both headers: If-Match decides first, then If-None-Match.
	h.expect(h.do("alice", "PUT", "/bk1/k", []byte("v2"), "If-Match", etag, "If-None-Match", "*"), 412, "PreconditionFailed")
	h.expect(h.do("alice", "PUT", "/bk1/k", []byte("v2"), "If-Match", etag, "If-None-Match", `"0123"`), 200, "")
	if got := h.do("alice", "GET", "/bk1/k", nil); got.Body.String() != "v2" {
		t.Fatalf("after conditional PUT: %q", got.Body.String())
	}
	etag = h.do("alice", "HEAD", "/bk1/k", nil).Header().Get("ETag")

	// CompleteMultipartUpload: a failed condition keeps the upload.
	id, etags := parityUpload(t, h, "/bk1/k", []byte("mp"))
	h.expect(h.do("alice", "POST", "/bk1/k?uploadId="+id, completeBody(etags), "If-None-Match", "*"), 412, "PreconditionFailed")
	h.expect(h.do("alice", "POST", "/bk1/k?uploadId="+id, completeBody(etags), "If-Match", `"0123"`), 412, "PreconditionFailed")
	h.expect(h.do("alice", "POST", "/bk1/k?uploadId="+id, completeBody(etags), "If-Match", etag), 200, "")
	id, etags = parityUpload(t, h, "/bk1/new-mp", []byte("mp"))
	h.expect(h.do("alice", "POST", "/bk1/new-mp?uploadId="+id, completeBody(etags), "If-Match", etag), 404, "NoSuchKey")
	h.expect(h.do("alice", "POST", "/bk1/new-mp?uploadId="+id, completeBody(etags), "If-None-Match", "*"), 200, "")

	// CopyObject: the conditions apply to the destination.
	h.expect(h.do("alice", "PUT", "/bk1/dst", nil, "X-Amz-Copy-Source", "/bk1/other", "If-None-Match", "*"), 200, "")
	h.expect(h.do("alice", "PUT", "/bk1/dst", nil, "X-Amz-Copy-Source", "/bk1/other", "If-None-Match", "*"), 412, "PreconditionFailed")
	h.expect(h.do("alice", "PUT", "/bk1/dst2", nil, "X-Amz-Copy-Source", "/bk1/other", "If-Match", etag), 404, "NoSuchKey")
	h.expect(h.do("alice", "PUT", "/bk1/dst", nil, "X-Amz-Copy-Source", "/bk1/k", "If-Match", `"0123"`), 412, "PreconditionFailed")
	dstETag := h.do("alice", "HEAD", "/bk1/dst", nil).Header().Get("ETag")
	h.expect(h.do("alice", "PUT", "/bk1/dst", nil, "X-Amz-Copy-Source", "/bk1/k", "If-Match", dstETag), 200, "")
}

// chunkedOnly hides the length of a reader, so the request goes out (and
// is seen by the server) with Transfer-Encoding: chunked.
type chunkedOnly struct{ io.Reader }

func TestParityChunkedPut(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	srv := httptest.NewServer(h.srv)
	defer srv.Close()
	body := bytes.Repeat([]byte("chunked body "), 100000) // 1.3 MB, over a block
	put := func(path string) *http.Response {
		t.Helper()
		req, err := http.NewRequest("PUT", srv.URL+path, chunkedOnly{bytes.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = -1
		req.Header.Set("X-Test-User", "alice")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := put("/bk1/chunked"); resp.StatusCode != 200 {
		t.Fatalf("chunked PUT: %d", resp.StatusCode)
	}
	rec := h.do("alice", "GET", "/bk1/chunked", nil)
	if !bytes.Equal(rec.Body.Bytes(), body) {
		t.Fatalf("stored %d bytes, want %d", rec.Body.Len(), len(body))
	}
	// UploadPart takes a chunked body too.
	rec = h.do("alice", "POST", "/bk1/mp?uploads", nil)
	var init xmlInitiateMultipart
	if err := xml.Unmarshal(rec.Body.Bytes(), &init); err != nil {
		t.Fatal(err)
	}
	if resp := put("/bk1/mp?partNumber=1&uploadId=" + init.UploadID); resp.StatusCode != 200 {
		t.Fatalf("chunked UploadPart: %d", resp.StatusCode)
	}
}

func TestExactBodyUnknownSize(t *testing.T) {
	b := newExactBody(strings.NewReader("hello world"), -1)
	got, err := io.ReadAll(b)
	if err != nil || string(got) != "hello world" {
		t.Fatalf("read %q, %v", got, err)
	}
	if err := b.drain(); err != nil {
		t.Fatalf("drain: %v", err)
	}
	// A failure at EOF (a payload hash mismatch, say) is reported, and
	// the bytes that came with it are dropped.
	fail := errorf("XAmzContentSHA256Mismatch", 400, "mismatch")
	b = newExactBody(io.MultiReader(strings.NewReader("abc"), errReader{fail}), -1)
	if _, err := io.ReadAll(b); err != fail { //nolint:errorlint // the same value must come back
		t.Fatalf("err %v, want %v", err, fail)
	}
	if err := b.drain(); err != fail { //nolint:errorlint // as above
		t.Fatalf("drain %v", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// TestMetaValueEncoding: RFC 2047 words are decoded before storing and
// values outside printable ASCII are returned encoded, round-tripping.
func TestMetaValueEncoding(t *testing.T) {
	for in, stored := range map[string]string{
		"plain":                       "plain",
		"=?UTF-8?B?Wm/Dqw==?=":        "Zoë",
		"=?utf-8?q?Zo=C3=AB?=":        "Zoë",
		"=?UTF-8?B?not base64!?=":     "=?UTF-8?B?not base64!?=",
		"Zoë":                         "Zoë",
		"a =?UTF-8?Q?=E2=82=AC?= b":   "a € b",
		"=?ISO-8859-1?Q?Fran=E7ois?=": "François",
	} {
		if got := decodeMetaValue(in); got != stored {
			t.Errorf("decode %q = %q, want %q", in, got, stored)
		}
	}
	for _, v := range []string{"Zoë", "日本語のメタデータ", "tab\tand\x01control", strings.Repeat("€", 100)} {
		enc := encodeMetaValue(v)
		for i := 0; i < len(enc); i++ {
			if enc[i] >= 0x7f || enc[i] < 0x20 {
				t.Fatalf("encoded %q still has byte %#x: %q", v, enc[i], enc)
			}
		}
		if back := decodeMetaValue(enc); back != v {
			t.Fatalf("round trip of %q: %q -> %q", v, enc, back)
		}
	}
	if encodeMetaValue("ascii only, tab\tok") != "ascii only, tab\tok" {
		t.Fatal("ASCII values must be returned as they are")
	}
}
