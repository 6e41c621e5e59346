package s3api

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/engine"
)

// testAuth trusts an X-Test-User header: "root" is root, absent is anonymous.
var testAuth = AuthenticatorFunc(func(r *http.Request) (*AuthResult, error) {
	u := r.Header.Get("X-Test-User")
	switch u {
	case "":
		return &AuthResult{Caller: Caller{Anonymous: true}, ContentLength: r.ContentLength}, nil
	case "bad":
		return nil, errorf("SignatureDoesNotMatch", http.StatusForbidden, "bad signature")
	}
	// X-Test-Signed-Payload stands for a body whose SHA-256 the signature
	// covers (AuthResult.PayloadSigned).
	return &AuthResult{Caller: Caller{AccessKey: u, Root: u == "root"}, ContentLength: r.ContentLength,
		PayloadSigned: r.Header.Get("X-Test-Signed-Payload") != ""}, nil
})

// testUsers is the user directory of the handler tests: the users whose
// names the tests use, by canonical id.
var testUsers = newTestDirectory("root", "alice", "bob", "carol", "dave", "eve")

// testDirectory is a UserDirectory holding users (access keys).
type testDirectory map[string]string

func newTestDirectory(users ...string) testDirectory {
	d := testDirectory{}
	for _, u := range users {
		d[canonicalID(u)] = u
	}
	return d
}

func (d testDirectory) LookupCanonicalID(id string) (string, bool) {
	ak, ok := d[id]
	return ak, ok
}

type harness struct {
	t     *testing.T
	store *fakeStore
	srv   *Server
}

func newHarness(t *testing.T, mod func(*Config)) *harness {
	t.Helper()
	st := newFakeStore()
	cfg := Config{Store: st, Auth: testAuth, Users: testUsers}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, store: st, srv: srv}
}

// do sends a request as user ("" = anonymous) and returns the recorder.
func (h *harness) do(user, method, target string, body []byte, hdr ...string) *httptest.ResponseRecorder {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	if body == nil {
		req.ContentLength = 0
	}
	if user != "" {
		req.Header.Set("X-Test-User", user)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, req)
	return rec
}

// expect checks status and, for error answers, the S3 error code.
func (h *harness) expect(rec *httptest.ResponseRecorder, status int, code string) {
	h.t.Helper()
	if rec.Code != status {
		h.t.Fatalf("status %d, want %d; body: %s", rec.Code, status, rec.Body.String())
	}
	if rec.Header().Get("X-Amz-Request-Id") == "" || rec.Header().Get("X-Amz-Id-2") == "" {
		h.t.Fatalf("missing request id headers: %v", rec.Header())
	}
	if code == "" {
		return
	}
	var e xmlError
	if err := xml.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		h.t.Fatalf("error body is not S3 XML: %v: %q", err, rec.Body.String())
	}
	if e.Code != code {
		h.t.Fatalf("code %q, want %q (%s)", e.Code, code, e.Message)
	}
	if e.RequestID != rec.Header().Get("X-Amz-Request-Id") || e.Resource == "" {
		h.t.Fatalf("error body lacks request id/resource: %+v", e)
	}
}

func TestRoute(t *testing.T) {
	cases := []struct {
		method, bucket, key, query, header, api string
	}{
		{"GET", "", "", "", "", "ListBuckets"},
		{"GET", "b", "", "", "", "ListObjects"},
		{"GET", "b", "", "list-type=2", "", "ListObjectsV2"},
		{"GET", "b", "", "location", "", "GetBucketLocation"},
		{"GET", "b", "", "uploads", "", "ListMultipartUploads"},
		{"GET", "b", "", "versions", "", "ListObjectVersions"},
		{"GET", "b", "", "acl", "", "GetBucketAcl"},
		{"PUT", "b", "", "", "", "CreateBucket"},
		{"PUT", "b", "", "acl", "", "PutBucketAcl"},
		{"HEAD", "b", "", "", "", "HeadBucket"},
		{"DELETE", "b", "", "", "", "DeleteBucket"},
		{"POST", "b", "", "delete", "", "DeleteObjects"},
		{"GET", "b", "k", "", "", "GetObject"},
		{"GET", "b", "k", "x-id=GetObject", "", "GetObject"},
		{"GET", "b", "k", "uploadId=u", "", "ListParts"},
		{"GET", "b", "k", "torrent", "", "GetObjectTorrent"},
		{"GET", "b", "k", "acl", "", "GetObjectAcl"},
		{"HEAD", "b", "k", "", "", "HeadObject"},
		{"PUT", "b", "k", "", "", "PutObject"},
		{"PUT", "b", "k", "", "src/x", "CopyObject"},
		{"PUT", "b", "k", "partNumber=1&uploadId=u", "", "UploadPart"},
		{"PUT", "b", "k", "partNumber=1&uploadId=u", "src/x", "UploadPartCopy"},
		{"PUT", "b", "k", "acl", "", "PutObjectAcl"},
		{"POST", "b", "k", "uploads", "", "CreateMultipartUpload"},
		{"POST", "b", "k", "uploadId=u", "", "CompleteMultipartUpload"},
		{"DELETE", "b", "k", "uploadId=u", "", "AbortMultipartUpload"},
		{"DELETE", "b", "k", "", "", "DeleteObject"},
		{"GET", "b", "", "versioning", "", "GetBucketVersioning"},
		{"PUT", "b", "", "versioning", "", "PutBucketVersioning"},
		{"DELETE", "b", "", "versioning", "", "MethodNotAllowed"},
		{"POST", "b", "", "versioning", "", "MethodNotAllowed"},
		{"GET", "b", "k", "versionId=v1", "", "GetObject"},
		{"DELETE", "b", "k", "versionId=v1", "", "DeleteObject"},
		{"GET", "b", "", "versions&key-marker=k&version-id-marker=v", "", "ListObjectVersions"},
		{"PUT", "b", "", "lifecycle", "", "PutBucketLifecycleConfiguration"},
		{"GET", "b", "", "lifecycle", "", "GetBucketLifecycleConfiguration"},
		{"DELETE", "b", "", "lifecycle", "", "DeleteBucketLifecycle"},
		{"GET", "b", "", "analytics", "", "NotImplemented"},
		{"GET", "b", "", "policy", "", "GetBucketPolicy"},
		{"PUT", "b", "", "policy", "", "PutBucketPolicy"},
		{"DELETE", "b", "", "policy", "", "DeleteBucketPolicy"},
		{"GET", "b", "", "policyStatus", "", "GetBucketPolicyStatus"},
		{"GET", "b", "", "publicAccessBlock", "", "GetPublicAccessBlock"},
		{"PUT", "b", "", "publicAccessBlock", "", "PutPublicAccessBlock"},
		{"DELETE", "b", "", "publicAccessBlock", "", "DeletePublicAccessBlock"},
		{"GET", "b", "", "replication", "", "NotImplemented"},
		{"PUT", "b", "k", "tagging", "", "PutObjectTagging"},
		{"PUT", "b", "k", "tagging", "src/x", "PutObjectTagging"},
		{"GET", "b", "k", "tagging", "", "GetObjectTagging"},
		{"GET", "b", "k", "tagging&versionId=null", "", "GetObjectTagging"},
		{"DELETE", "b", "k", "tagging", "", "DeleteObjectTagging"},
		{"DELETE", "b", "k", "tagging&uploadId=u", "", "AbortMultipartUpload"},
		{"GET", "b", "", "tagging", "", "GetBucketTagging"},
		{"PUT", "b", "", "tagging", "", "PutBucketTagging"},
		{"DELETE", "b", "", "tagging", "", "DeleteBucketTagging"},
		{"HEAD", "b", "k", "tagging", "", "HeadObject"},
		{"POST", "b", "k", "tagging", "", "MethodNotAllowed"},
		{"GET", "b", "", "cors", "", "GetBucketCors"},
		{"PUT", "b", "", "cors", "", "PutBucketCors"},
		{"DELETE", "b", "", "cors", "", "DeleteBucketCors"},
		{"GET", "b", "", "ownershipControls", "", "GetBucketOwnershipControls"},
		{"PUT", "b", "", "ownershipControls", "", "PutBucketOwnershipControls"},
		{"DELETE", "b", "", "ownershipControls", "", "DeleteBucketOwnershipControls"},
		{"GET", "b", "", "website", "", "GetBucketWebsite"},
		{"PUT", "b", "", "website", "", "PutBucketWebsite"},
		{"DELETE", "b", "", "website", "", "DeleteBucketWebsite"},
		{"OPTIONS", "b", "k", "", "", "PreflightRequest"},
		{"OPTIONS", "b", "", "lifecycle", "", "PreflightRequest"},
		{"OPTIONS", "", "", "", "", "MethodNotAllowed"},
		{"GET", "b", "", "someunknownthing", "", "NotImplemented"},
		{"GET", "b", "", "prefix=a&someparam=1", "", "ListObjects"},
		{"POST", "b", "k", "select&select-type=2", "", "NotImplemented"},
		{"PATCH", "b", "k", "", "", "MethodNotAllowed"},
		{"PUT", "", "", "", "", "MethodNotAllowed"},
		{"GET", "b", "", "object-lock", "", "GetObjectLockConfiguration"},
		{"PUT", "b", "", "object-lock", "", "PutObjectLockConfiguration"},
		{"DELETE", "b", "", "object-lock", "", "MethodNotAllowed"},
		{"POST", "b", "", "object-lock", "", "MethodNotAllowed"},
		{"GET", "b", "k", "retention", "", "GetObjectRetention"},
		{"GET", "b", "k", "retention&versionId=v1", "", "GetObjectRetention"},
		{"PUT", "b", "k", "retention", "", "PutObjectRetention"},
		{"PUT", "b", "k", "retention", "src/x", "PutObjectRetention"},
		{"DELETE", "b", "k", "retention", "", "MethodNotAllowed"},
		{"HEAD", "b", "k", "retention", "", "HeadObject"},
		{"GET", "b", "k", "legal-hold", "", "GetObjectLegalHold"},
		{"PUT", "b", "k", "legal-hold&versionId=v1", "", "PutObjectLegalHold"},
		{"DELETE", "b", "k", "legal-hold", "", "MethodNotAllowed"},
		{"POST", "b", "k", "legal-hold", "", "MethodNotAllowed"},
		{"PUT", "b", "", "retention", "", "NotImplemented"},
		{"DELETE", "b", "", "legal-hold", "", "NotImplemented"},
		{"PUT", "b", "k", "object-lock", "", "NotImplemented"},
		{"DELETE", "b", "k", "object-lock", "", "NotImplemented"},
		{"GET", "b", "", "logging", "", "GetBucketLogging"},
		{"PUT", "b", "", "logging", "", "PutBucketLogging"},
		{"DELETE", "b", "", "logging", "", "MethodNotAllowed"},
		{"GET", "b", "k", "logging", "", "NotImplemented"},
		{"GET", "b", "", "notification", "", "GetBucketNotificationConfiguration"},
		{"PUT", "b", "", "notification", "", "PutBucketNotificationConfiguration"},
		{"DELETE", "b", "", "notification", "", "MethodNotAllowed"},
		{"POST", "b", "", "notification", "", "MethodNotAllowed"},
		{"PUT", "b", "k", "notification", "", "NotImplemented"},
	}
	for _, c := range cases {
		q := map[string][]string{}
		if c.query != "" {
			for _, kv := range strings.Split(c.query, "&") {
				k, v, _ := strings.Cut(kv, "=")
				q[k] = append(q[k], v)
			}
		}
		h := http.Header{}
		if c.header != "" {
			h.Set("X-Amz-Copy-Source", c.header)
		}
		got := route(c.method, c.bucket, c.key, q, h)
		if got.api != c.api {
			t.Errorf("%s /%s/%s?%s: api %q, want %q", c.method, c.bucket, c.key, c.query, got.api, c.api)
		}
		if (got.err == nil) == (got.handler == nil) {
			t.Errorf("%s: exactly one of handler and err must be set", c.api)
		}
	}
}

func TestErrorMapping(t *testing.T) {
	cases := []struct {
		err    error
		code   string
		status int
	}{
		{engine.ErrInvalidBucketName, "InvalidBucketName", 400},
		{engine.ErrBucketNotFound, "NoSuchBucket", 404},
		{engine.ErrBucketExists, "BucketAlreadyExists", 409},
		{engine.ErrBucketNotEmpty, "BucketNotEmpty", 409},
		{engine.ErrInvalidObjectName, "InvalidArgument", 400},
		{engine.ErrObjectNotFound, "NoSuchKey", 404},
		{engine.ErrInvalidRange, "InvalidRange", 416},
		{engine.ErrPreconditionFailed, "PreconditionFailed", 412},
		{engine.ErrNotModified, "NotModified", 304},
		{engine.ErrWriteQuorum, "ServiceUnavailable", 503},
		{engine.ErrReadQuorum, "ServiceUnavailable", 503},
		{engine.ErrBadDigest, "BadDigest", 400},
		{engine.ErrChecksumMismatch, "BadDigest", 400},
		{engine.ErrIncompleteBody, "IncompleteBody", 400},
		{io.ErrUnexpectedEOF, "IncompleteBody", 400},
		{engine.ErrEntityTooLarge, "EntityTooLarge", 400},
		{engine.ErrEntityTooSmall, "EntityTooSmall", 400},
		{engine.ErrNoSuchUpload, "NoSuchUpload", 404},
		{engine.ErrInvalidPart, "InvalidPart", 400},
		{engine.ErrInvalidPartOrder, "InvalidPartOrder", 400},
		{engine.ErrInvalidPartNumber, "InvalidArgument", 400},
		{engine.ErrInvalidArgument, "InvalidArgument", 400},
		{engine.ErrStorageFull, CodeStorageFull, 507},
		{engine.ErrMalformedCompletion, "MalformedXML", 400},
		{engine.ErrObjectLocked, "AccessDenied", 403},
		{engine.ErrObjectLockNotEnabled, "InvalidRequest", 400},
		{engine.ErrInvalidBucketState, "InvalidBucketState", 409},
		{errors.New("boom"), "InternalError", 500},
		{errorf("SignatureDoesNotMatch", 403, "x"), "SignatureDoesNotMatch", 403},
	}
	for _, c := range cases {
		for _, err := range []error{c.err, fmt.Errorf("wrapped: %w", c.err)} {
			got := toAPIError(err)
			if got.Code != c.code || got.Status != c.status {
				t.Errorf("%v: got %s/%d, want %s/%d", err, got.Code, got.Status, c.code, c.status)
			}
		}
	}
}

func TestBuckets(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/abucket", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/abucket", nil), 200, "") // S3 in us-east-1; see TestCreateBucketAgain
	h.expect(h.do("bob", "PUT", "/abucket", nil), 409, "BucketAlreadyExists")
	h.expect(h.do("bob", "PUT", "/shardstore", nil), 400, "InvalidBucketName")
	h.expect(h.do("bob", "PUT", "/Bad_Name", nil), 400, "InvalidBucketName")
	h.expect(h.do("", "PUT", "/anon", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "PUT", "/bbucket", []byte("<CreateBucketConfiguration><LocationConstraint>us-east-1</LocationConstraint></CreateBucketConfiguration>")), 200, "")
	h.expect(h.do("bob", "PUT", "/cbucket", []byte("<CreateBucketConfiguration><Location")), 400, "MalformedXML")
	h.expect(h.do("bob", "PUT", "/cbucket", []byte("<CreateBucketConfiguration><LocationConstraint>Not a region</LocationConstraint></CreateBucketConfiguration>")), 400, "InvalidLocationConstraint")

	var lb xmlListAllMyBuckets
	rec := h.do("alice", "GET", "/", nil)
	h.expect(rec, 200, "")
	if err := xml.Unmarshal(rec.Body.Bytes(), &lb); err != nil || len(lb.Buckets) != 1 || lb.Buckets[0].Name != "abucket" {
		t.Fatalf("alice sees %+v (%v)", lb.Buckets, err)
	}
	rec = h.do("root", "GET", "/", nil)
	lb = xmlListAllMyBuckets{}
	if err := xml.Unmarshal(rec.Body.Bytes(), &lb); err != nil || len(lb.Buckets) != 2 {
		t.Fatalf("root sees %+v (%v)", lb.Buckets, err)
	}
	h.expect(h.do("", "GET", "/", nil), 403, "AccessDenied")

	h.expect(h.do("alice", "HEAD", "/abucket", nil), 200, "")
	rec = h.do("bob", "HEAD", "/abucket", nil)
	if rec.Code != 403 || rec.Body.Len() != 0 {
		t.Fatalf("HEAD denied: %d %q", rec.Code, rec.Body.String())
	}
	rec = h.do("alice", "HEAD", "/nobucket", nil)
	if rec.Code != 404 || rec.Body.Len() != 0 {
		t.Fatalf("HEAD missing: %d %q", rec.Code, rec.Body.String())
	}
	rec = h.do("alice", "GET", "/abucket?location", nil)
	h.expect(rec, 200, "")
	if !strings.Contains(rec.Body.String(), "<LocationConstraint") {
		t.Fatalf("location: %s", rec.Body.String())
	}
	h.expect(h.do("alice", "PUT", "/abucket/k", []byte("x")), 200, "")
	h.expect(h.do("bob", "DELETE", "/abucket", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "DELETE", "/abucket", nil), 409, "BucketNotEmpty")
	h.expect(h.do("alice", "DELETE", "/abucket/k", nil), 204, "")
	h.expect(h.do("alice", "DELETE", "/abucket", nil), 204, "")
	h.expect(h.do("alice", "DELETE", "/abucket", nil), 404, "NoSuchBucket")
}

func TestObjectRoundTripHeaders(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	body := []byte("hello, shardstore")
	rec := h.do("alice", "PUT", "/bk1/dir/obj.txt", body, "Content-Type", "text/plain", "X-Amz-Meta-Color", "blue",
		"Cache-Control", "max-age=60", "Content-Disposition", "inline", "Content-Encoding", "aws-chunked,gzip",
		"Expires", "Thu, 01 Dec 2094 16:00:00 GMT", "Content-Language", "en")
	h.expect(rec, 200, "")
	sum := md5.Sum(body)
	wantETag := fmt.Sprintf(`"%x"`, sum)
	if rec.Header().Get("ETag") != wantETag {
		t.Fatalf("PUT ETag %q want %q", rec.Header().Get("ETag"), wantETag)
	}
	rec = h.do("alice", "GET", "/bk1/dir/obj.txt", nil)
	h.expect(rec, 200, "")
	if rec.Body.String() != string(body) {
		t.Fatalf("body %q", rec.Body.String())
	}
	want := map[string]string{
		"ETag": wantETag, "Content-Type": "text/plain", "Content-Length": fmt.Sprint(len(body)),
		"Accept-Ranges": "bytes", "x-amz-meta-color": "blue", "Cache-Control": "max-age=60",
		"Content-Disposition": "inline", "Content-Encoding": "gzip", "Content-Language": "en",
		"Expires": "Thu, 01 Dec 2094 16:00:00 GMT",
	}
	for k, v := range want {
		got := rec.Header().Get(k)
		if strings.HasPrefix(k, "x-amz-meta-") {
			got = strings.Join(rec.Header()[k], ",") // sent lower-case, not canonicalised
		}
		if got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if _, err := http.ParseTime(rec.Header().Get("Last-Modified")); err != nil {
		t.Errorf("Last-Modified %q: %v", rec.Header().Get("Last-Modified"), err)
	}

	rec = h.do("alice", "GET", "/bk1/dir/obj.txt", nil, "Range", "bytes=7-10")
	h.expect(rec, 206, "")
	if rec.Body.String() != "shar" || rec.Header().Get("Content-Range") != fmt.Sprintf("bytes 7-10/%d", len(body)) {
		t.Fatalf("range: %q %q", rec.Body.String(), rec.Header().Get("Content-Range"))
	}
	rec = h.do("alice", "GET", "/bk1/dir/obj.txt", nil, "Range", "bytes=-5")
	if rec.Code != 206 || rec.Body.String() != "store" {
		t.Fatalf("suffix range: %d %q", rec.Code, rec.Body.String())
	}
	rec = h.do("alice", "GET", "/bk1/dir/obj.txt", nil, "Range", "bytes=100-")
	h.expect(rec, 416, "InvalidRange")
	if rec.Header().Get("Content-Range") != fmt.Sprintf("bytes */%d", len(body)) {
		t.Fatalf("416 Content-Range %q", rec.Header().Get("Content-Range"))
	}
	rec = h.do("alice", "HEAD", "/bk1/dir/obj.txt", nil, "Range", "bytes=0-4")
	if rec.Code != 206 || rec.Header().Get("Content-Length") != "5" || rec.Body.Len() != 0 {
		t.Fatalf("HEAD range: %d %v", rec.Code, rec.Header())
	}
	rec = h.do("alice", "GET", "/bk1/dir/obj.txt?partNumber=1", nil)
	if rec.Code != 206 || rec.Body.String() != string(body) {
		t.Fatalf("partNumber=1: %d", rec.Code)
	}
	h.expect(h.do("alice", "GET", "/bk1/dir/obj.txt?partNumber=0", nil), 400, "InvalidArgument")

	// Conditionals.
	rec = h.do("alice", "GET", "/bk1/dir/obj.txt", nil, "If-None-Match", wantETag)
	if rec.Code != 304 || rec.Body.Len() != 0 || rec.Header().Get("ETag") != wantETag || rec.Header().Get("Last-Modified") == "" {
		t.Fatalf("If-None-Match: %d %q %v", rec.Code, rec.Body.String(), rec.Header())
	}
	h.expect(h.do("alice", "GET", "/bk1/dir/obj.txt", nil, "If-Match", `"nope"`), 412, "PreconditionFailed")
	h.expect(h.do("alice", "GET", "/bk1/dir/obj.txt", nil, "If-Match", wantETag), 200, "")
	past := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Format(http.TimeFormat)
	h.expect(h.do("alice", "GET", "/bk1/dir/obj.txt", nil, "If-Unmodified-Since", past), 412, "PreconditionFailed")
	future := time.Now().Add(24 * time.Hour).UTC().Format(http.TimeFormat)
	if rec := h.do("alice", "GET", "/bk1/dir/obj.txt", nil, "If-Modified-Since", future); rec.Code != 304 {
		t.Fatalf("If-Modified-Since future: %d", rec.Code)
	}

	// Overrides.
	rec = h.do("alice", "GET", "/bk1/dir/obj.txt?response-content-type=application/json&response-cache-control=no-cache", nil)
	if rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("overrides: %v", rec.Header())
	}
	// Missing key: GET has an XML body, HEAD none.
	h.expect(h.do("alice", "GET", "/bk1/missing", nil), 404, "NoSuchKey")
	rec = h.do("alice", "HEAD", "/bk1/missing", nil)
	if rec.Code != 404 || rec.Body.Len() != 0 {
		t.Fatalf("HEAD missing: %d %q", rec.Code, rec.Body.String())
	}
	h.expect(h.do("alice", "GET", "/bk1/dir/obj.txt?versionId=abc", nil), 400, "InvalidArgument")
	h.expect(h.do("alice", "GET", "/bk1/dir/obj.txt?versionId=null", nil), 200, "")
}

func TestPutIntegrity(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	good := []byte("the original data")
	h.expect(h.do("alice", "PUT", "/bk1/k", good), 200, "")

	bad := []byte("replacement data!")
	otherMD5 := md5.Sum([]byte("something else"))
	h.expect(h.do("alice", "PUT", "/bk1/k", bad, "Content-MD5", base64.StdEncoding.EncodeToString(otherMD5[:])), 400, "BadDigest")
	h.expect(h.do("alice", "PUT", "/bk1/k", bad, "Content-MD5", "not-base64!"), 400, "InvalidDigest")
	h.expect(h.do("alice", "PUT", "/bk1/k", bad, "Content-MD5", base64.StdEncoding.EncodeToString([]byte("short"))), 400, "InvalidDigest")

	wrongCRC := make([]byte, 4)
	h.expect(h.do("alice", "PUT", "/bk1/k", bad, "X-Amz-Checksum-Crc32", base64.StdEncoding.EncodeToString(wrongCRC)), 400, "BadDigest")
	h.expect(h.do("alice", "PUT", "/bk1/k", bad, "X-Amz-Checksum-Crc32", "AAAA"), 400, "InvalidRequest")
	h.expect(h.do("alice", "PUT", "/bk1/k", bad, "X-Amz-Checksum-Crc32", "AAAAAA==", "X-Amz-Checksum-Sha1", "AAAAAA=="), 400, "InvalidRequest")

	if rec := h.do("alice", "GET", "/bk1/k", nil); rec.Body.String() != string(good) {
		t.Fatalf("data changed by bad requests: %q", rec.Body.String())
	}

	crc := make([]byte, 4)
	v := crc32.ChecksumIEEE(bad)
	crc[0], crc[1], crc[2], crc[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	crcB64 := base64.StdEncoding.EncodeToString(crc)
	rec := h.do("alice", "PUT", "/bk1/k", bad, "X-Amz-Checksum-Crc32", crcB64)
	h.expect(rec, 200, "")
	if rec.Header().Get("X-Amz-Checksum-Crc32") != crcB64 {
		t.Fatalf("PUT answer lacks checksum: %v", rec.Header())
	}
	rec = h.do("alice", "HEAD", "/bk1/k", nil)
	if rec.Header().Get("X-Amz-Checksum-Crc32") != "" {
		t.Fatal("checksum returned without x-amz-checksum-mode")
	}
	rec = h.do("alice", "HEAD", "/bk1/k", nil, "X-Amz-Checksum-Mode", "ENABLED")
	if rec.Header().Get("X-Amz-Checksum-Crc32") != crcB64 {
		t.Fatalf("checksum mode: %v", rec.Header())
	}
	rec = h.do("alice", "GET", "/bk1/k", nil, "X-Amz-Checksum-Mode", "ENABLED", "Range", "bytes=0-3")
	if rec.Code != 206 || rec.Header().Get("X-Amz-Checksum-Crc32") != "" {
		t.Fatalf("whole-object checksum sent for a range: %d %v", rec.Code, rec.Header())
	}
	// Conditional create.
	h.expect(h.do("alice", "PUT", "/bk1/k", good, "If-None-Match", "*"), 412, "PreconditionFailed")
	h.expect(h.do("alice", "PUT", "/bk1/new", good, "If-None-Match", "*"), 200, "")
	// No length at all.
	req := httptest.NewRequest("PUT", "/bk1/nolen", strings.NewReader("abc"))
	req.ContentLength = -1
	req.Header.Set("X-Test-User", "alice")
	rw := httptest.NewRecorder()
	h.srv.ServeHTTP(rw, req)
	h.expect(rw, 411, "MissingContentLength")
	// Path-like keys are not path tricks: the store keeps every key S3
	// accepts as it is (as the engine does; the fake used to refuse them),
	// so this one is stored and read back under its literal name.
	h.expect(h.do("alice", "PUT", "/bk1/a/../../etc", good), 200, "")
	if rec := h.do("alice", "GET", "/bk1/a/../../etc", nil); rec.Code != 200 || rec.Body.String() != string(good) {
		t.Fatalf("GET of the literal key a/../../etc: %d %q", rec.Code, rec.Body.String())
	}
	h.expect(h.do("alice", "PUT", "/bk1/k", good, "X-Amz-Storage-Class", "GLACIER"), 400, "InvalidStorageClass")
	h.expect(h.do("alice", "PUT", "/bk1/k", good, "X-Amz-Meta-Big", strings.Repeat("x", 3000)), 400, "MetadataTooLarge")
	h.expect(h.do("alice", "PUT", "/bk1/k", good, "X-Amz-Server-Side-Encryption", "aws:kms"), 501, "NotImplemented")
}

func TestAccessControl(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/priv", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/pub", nil, "X-Amz-Acl", "public-read"), 200, "")
	h.expect(h.do("alice", "PUT", "/pubrw", nil, "X-Amz-Acl", "public-read-write"), 200, "")
	h.expect(h.do("alice", "PUT", "/bad", nil, "X-Amz-Acl", "world-writable"), 400, "InvalidArgument")
	for _, b := range []string{"priv", "pub", "pubrw"} {
		h.expect(h.do("alice", "PUT", "/"+b+"/k", []byte("data")), 200, "")
	}
	// Private bucket: others and anonymous are denied, root is not.
	for _, u := range []string{"", "bob"} {
		h.expect(h.do(u, "GET", "/priv/k", nil), 403, "AccessDenied")
		h.expect(h.do(u, "GET", "/priv/missing", nil), 403, "AccessDenied")
		h.expect(h.do(u, "GET", "/priv", nil), 403, "AccessDenied")
		h.expect(h.do(u, "PUT", "/priv/x", []byte("x")), 403, "AccessDenied")
		// A public-read bucket lets anyone list it, not read its private
		// objects (issue #12); a missing key there is NoSuchKey.
		h.expect(h.do(u, "GET", "/pub/k", nil), 403, "AccessDenied")
		h.expect(h.do(u, "HEAD", "/pub/k", nil), 403, "")
		h.expect(h.do(u, "GET", "/pub/missing", nil), 404, "NoSuchKey")
		h.expect(h.do(u, "GET", "/pub?list-type=2", nil), 200, "")
		h.expect(h.do(u, "PUT", "/pub/x", []byte("x")), 403, "AccessDenied")
		h.expect(h.do(u, "DELETE", "/pub/k", nil), 403, "AccessDenied")
		h.expect(h.do(u, "PUT", "/pubrw/x"+u, []byte("x")), 200, "")
		h.expect(h.do(u, "DELETE", "/pub", nil), 403, "AccessDenied")
		h.expect(h.do(u, "GET", "/pub?acl", nil), 403, "AccessDenied")
	}
	h.expect(h.do("root", "GET", "/priv/k", nil), 200, "")
	h.expect(h.do("alice", "GET", "/priv/k", nil), 200, "")
	// A public-read object in a private bucket is readable by anyone.
	h.expect(h.do("alice", "PUT", "/priv/open", []byte("o"), "X-Amz-Acl", "public-read"), 200, "")
	h.expect(h.do("", "GET", "/priv/open", nil), 200, "")
	h.expect(h.do("", "GET", "/priv/open?response-content-type=x/y", nil), 400, "InvalidRequest")
	// Changing ACLs.
	h.expect(h.do("alice", "PUT", "/priv/k?acl", nil, "X-Amz-Acl", "public-read"), 200, "")
	h.expect(h.do("", "GET", "/priv/k", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/pub?acl", nil, "X-Amz-Acl", "private"), 200, "")
	h.expect(h.do("", "GET", "/pub?list-type=2", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "PUT", "/priv?acl", nil, "X-Amz-Acl", "public-read"), 403, "AccessDenied")
	h.expect(h.do("alice", "PUT", "/priv?acl", nil), 400, "MissingSecurityHeader")
	rec := h.do("alice", "GET", "/priv/open?acl", nil)
	h.expect(rec, 200, "")
	if !strings.Contains(rec.Body.String(), "AllUsers") || !strings.Contains(rec.Body.String(), "FULL_CONTROL") {
		t.Fatalf("object acl: %s", rec.Body.String())
	}
	var acl xmlACL
	if err := xml.Unmarshal(h.do("alice", "GET", "/priv?acl", nil).Body.Bytes(), &acl); err != nil || len(acl.Grants) != 1 {
		t.Fatalf("bucket acl: %+v %v", acl, err)
	}
	h.expect(h.do("bad", "GET", "/priv/k", nil), 403, "SignatureDoesNotMatch")
}

func TestNotImplementedAndPanics(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	for _, target := range []string{"/bk1?analytics", "/bk1?replication", "/bk1?torrent", "/bk1?whatever",
		"/bk1?retention", "/bk1?legal-hold", "/bk1/k?object-lock"} {
		h.expect(h.do("alice", "GET", target, nil), 501, "NotImplemented")
	}
	h.expect(h.do("alice", "POST", "/bk1", nil), 412, "PreconditionFailed") // not a form upload
	h.expect(h.do("alice", "PATCH", "/bk1/k", nil), 405, "MethodNotAllowed")

	ph := newHarness(t, func(c *Config) { c.Store = panicStore{newFakeStore()} })
	ph.expect(ph.do("alice", "GET", "/", nil), 500, "InternalError")
	// The server keeps serving after a panic.
	ph.expect(ph.do("", "GET", "/shardstore/health/live", nil), 200, "")
}

type panicStore struct{ *fakeStore }

func (panicStore) ListBuckets(context.Context) ([]engine.BucketInfo, error) { panic("kaboom") }

func TestListing(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	keys := []string{"a/1", "a/2", "b", "c/x/y", "d e+f", "z"}
	for _, k := range keys {
		h.expect(h.do("alice", "PUT", "/bk1/"+strings.ReplaceAll(k, " ", "%20"), []byte(k)), 200, "")
	}
	var v2 xmlListBucketV2
	rec := h.do("alice", "GET", "/bk1?list-type=2&delimiter=/", nil)
	h.expect(rec, 200, "")
	if err := xml.Unmarshal(rec.Body.Bytes(), &v2); err != nil {
		t.Fatal(err)
	}
	if len(v2.Contents) != 3 || len(v2.CommonPrefixes) != 2 || v2.KeyCount != 5 || v2.IsTruncated {
		t.Fatalf("delimiter listing: %s", rec.Body.String())
	}
	// Paginate two at a time with the continuation token.
	var got []string
	token := ""
	for page := 0; page < 10; page++ {
		target := "/bk1?list-type=2&max-keys=2"
		if token != "" {
			target += "&continuation-token=" + token
		}
		var r xmlListBucketV2
		if err := xml.Unmarshal(h.do("alice", "GET", target, nil).Body.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Contents {
			got = append(got, string(c.Key))
		}
		if !r.IsTruncated {
			break
		}
		token = r.NextContinuationToken
	}
	if strings.Join(got, ",") != strings.Join(keys, ",") {
		t.Fatalf("paged keys %v", got)
	}
	h.expect(h.do("alice", "GET", "/bk1?list-type=2&continuation-token=%21%21", nil), 400, "InvalidArgument")
	// An empty token is the first page, and is echoed (empty).
	var first xmlListBucketV2
	rec = h.do("alice", "GET", "/bk1?list-type=2&max-keys=2&continuation-token=", nil)
	h.expect(rec, 200, "")
	if err := xml.Unmarshal(rec.Body.Bytes(), &first); err != nil || len(first.Contents) != 2 ||
		string(first.Contents[0].Key) != keys[0] || first.ContinuationToken == nil || *first.ContinuationToken != "" {
		t.Fatalf("empty continuation-token: %s", rec.Body.String())
	}
	// Without one, there is no ContinuationToken element.
	rec = h.do("alice", "GET", "/bk1?list-type=2&max-keys=2", nil)
	if strings.Contains(rec.Body.String(), "<ContinuationToken") {
		t.Fatalf("no continuation-token sent, one answered: %s", rec.Body.String())
	}
	h.expect(h.do("alice", "GET", "/bk1?max-keys=-1", nil), 400, "InvalidArgument")
	h.expect(h.do("alice", "GET", "/bk1?encoding-type=zip", nil), 400, "InvalidArgument")
	rec = h.do("alice", "GET", "/bk1?list-type=2&max-keys=0", nil)
	v2 = xmlListBucketV2{}
	if err := xml.Unmarshal(rec.Body.Bytes(), &v2); err != nil || len(v2.Contents) != 0 || v2.IsTruncated {
		t.Fatalf("max-keys=0: %s", rec.Body.String())
	}
	rec = h.do("alice", "GET", "/bk1?list-type=2&prefix=d&encoding-type=url", nil)
	if !strings.Contains(rec.Body.String(), "<Key>d%20e%2Bf</Key>") {
		t.Fatalf("url encoding: %s", rec.Body.String())
	}
	// V1 with marker and NextMarker (delimiter set).
	var v1 xmlListBucketV1
	rec = h.do("alice", "GET", "/bk1?marker=a/2&max-keys=2&delimiter=/", nil)
	if err := xml.Unmarshal(rec.Body.Bytes(), &v1); err != nil || v1.Contents[0].Key != "b" || !v1.IsTruncated || v1.NextMarker == "" {
		t.Fatalf("v1: %s", rec.Body.String())
	}
	// Versions (unversioned form).
	rec = h.do("alice", "GET", "/bk1?versions&prefix=a/", nil)
	h.expect(rec, 200, "")
	var lv xmlListVersions
	if err := xml.Unmarshal(rec.Body.Bytes(), &lv); err != nil || len(lv.Entries) != 2 || lv.Entries[0].VersionID != "null" {
		t.Fatalf("versions: %s", rec.Body.String())
	}
	h.expect(h.do("alice", "GET", "/nob?list-type=2", nil), 404, "NoSuchBucket")
}

func TestDeleteObjects(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	for _, k := range []string{"a", "b", "c"} {
		h.expect(h.do("alice", "PUT", "/bk1/"+k, []byte(k)), 200, "")
	}
	body := []byte(`<Delete><Object><Key>a</Key></Object><Object><Key>nothere</Key></Object></Delete>`)
	sum := md5.Sum(body)
	md5h := base64.StdEncoding.EncodeToString(sum[:])
	h.expect(h.do("alice", "POST", "/bk1?delete", body), 400, "InvalidRequest")
	h.expect(h.do("alice", "POST", "/bk1?delete", body, "Content-MD5", base64.StdEncoding.EncodeToString(make([]byte, 16))), 400, "BadDigest")
	rec := h.do("alice", "POST", "/bk1?delete", body, "Content-MD5", md5h)
	h.expect(rec, 200, "")
	var res xmlDeleteResult
	if err := xml.Unmarshal(rec.Body.Bytes(), &res); err != nil || len(res.Deleted) != 2 || len(res.Errors) != 0 {
		t.Fatalf("delete result: %s", rec.Body.String())
	}
	quiet := []byte(`<Delete><Quiet>true</Quiet><Object><Key>b</Key></Object></Delete>`)
	crc := crc32.ChecksumIEEE(quiet)
	crcB64 := base64.StdEncoding.EncodeToString([]byte{byte(crc >> 24), byte(crc >> 16), byte(crc >> 8), byte(crc)})
	rec = h.do("alice", "POST", "/bk1?delete", quiet, "X-Amz-Checksum-Crc32", crcB64)
	h.expect(rec, 200, "")
	if strings.Contains(rec.Body.String(), "<Deleted>") {
		t.Fatalf("quiet mode listed deletions: %s", rec.Body.String())
	}
	var big bytes.Buffer
	big.WriteString("<Delete>")
	for i := 0; i < 1001; i++ {
		fmt.Fprintf(&big, "<Object><Key>k%d</Key></Object>", i)
	}
	big.WriteString("</Delete>")
	bsum := md5.Sum(big.Bytes())
	h.expect(h.do("alice", "POST", "/bk1?delete", big.Bytes(), "Content-MD5", base64.StdEncoding.EncodeToString(bsum[:])), 400, "MalformedXML")
	garbage := []byte("<Delete><Object>")
	gsum := md5.Sum(garbage)
	h.expect(h.do("alice", "POST", "/bk1?delete", garbage, "Content-MD5", base64.StdEncoding.EncodeToString(gsum[:])), 400, "MalformedXML")
	if rec := h.do("alice", "GET", "/bk1/c", nil); rec.Body.String() != "c" {
		t.Fatal("untouched object lost")
	}
}

func TestCopyObject(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/bk1/src%20key", []byte("payload"), "X-Amz-Meta-A", "1", "Content-Type", "text/x"), 200, "")
	rec := h.do("alice", "PUT", "/bk1/dst", nil, "X-Amz-Copy-Source", "/bk1/src%20key")
	h.expect(rec, 200, "")
	var cr xmlCopyObjectResult
	if err := xml.Unmarshal(rec.Body.Bytes(), &cr); err != nil || !strings.HasPrefix(cr.ETag, `"`) {
		t.Fatalf("copy result: %s", rec.Body.String())
	}
	rec = h.do("alice", "GET", "/bk1/dst", nil)
	if rec.Body.String() != "payload" || rec.Header()["x-amz-meta-a"][0] != "1" || rec.Header().Get("Content-Type") != "text/x" {
		t.Fatalf("copied object: %q %v", rec.Body.String(), rec.Header())
	}
	h.expect(h.do("alice", "PUT", "/bk1/dst2", nil, "X-Amz-Copy-Source", "bk1/src%20key", "X-Amz-Metadata-Directive", "REPLACE", "X-Amz-Meta-B", "2"), 200, "")
	rec = h.do("alice", "HEAD", "/bk1/dst2", nil)
	if len(rec.Header()["x-amz-meta-b"]) != 1 || rec.Header()["x-amz-meta-b"][0] != "2" || rec.Header()["x-amz-meta-a"] != nil {
		t.Fatalf("replace directive: %v", rec.Header())
	}
	h.expect(h.do("alice", "PUT", "/bk1/dst", nil, "X-Amz-Copy-Source", "/bk1/dst"), 400, "InvalidRequest")
	h.expect(h.do("alice", "PUT", "/bk1/dst", nil, "X-Amz-Copy-Source", "/bk1/missing"), 404, "NoSuchKey")
	h.expect(h.do("alice", "PUT", "/bk1/dst", nil, "X-Amz-Copy-Source", "/bk1/src%20key", "X-Amz-Copy-Source-If-Match", `"zzz"`), 412, "PreconditionFailed")
	h.expect(h.do("alice", "PUT", "/bk1/dst", nil, "X-Amz-Copy-Source", "nokey"), 400, "InvalidArgument")
	h.expect(h.do("alice", "PUT", "/bk1/dst", nil, "X-Amz-Copy-Source", "/bk1/src%20key", "X-Amz-Metadata-Directive", "MOVE"), 400, "InvalidArgument")
	// bob cannot copy alice's private object into his bucket.
	h.expect(h.do("bob", "PUT", "/bobs", nil), 200, "")
	h.expect(h.do("bob", "PUT", "/bobs/x", nil, "X-Amz-Copy-Source", "/bk1/src%20key"), 403, "AccessDenied")
}

func TestMultipart(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	rec := h.do("alice", "POST", "/bk1/big?uploads", nil, "X-Amz-Checksum-Algorithm", "crc32")
	h.expect(rec, 200, "")
	var init xmlInitiateMultipart
	if err := xml.Unmarshal(rec.Body.Bytes(), &init); err != nil || init.UploadID == "" {
		t.Fatalf("initiate: %s", rec.Body.String())
	}
	id := init.UploadID
	part1 := bytes.Repeat([]byte("a"), engine.MinPartSize)
	part2 := []byte("tail")
	r1 := h.do("alice", "PUT", "/bk1/big?partNumber=1&uploadId="+id, part1)
	h.expect(r1, 200, "")
	r2 := h.do("alice", "PUT", "/bk1/big?partNumber=2&uploadId="+id, part2)
	h.expect(r2, 200, "")
	h.expect(h.do("alice", "PUT", "/bk1/big?partNumber=10001&uploadId="+id, part2), 400, "InvalidArgument")
	h.expect(h.do("alice", "PUT", "/bk1/big?partNumber=1&uploadId=nope", part2), 404, "NoSuchUpload")

	rec = h.do("alice", "GET", "/bk1/big?uploadId="+id, nil)
	h.expect(rec, 200, "")
	var lp xmlListParts
	if err := xml.Unmarshal(rec.Body.Bytes(), &lp); err != nil || len(lp.Parts) != 2 {
		t.Fatalf("list parts: %s", rec.Body.String())
	}
	rec = h.do("alice", "GET", "/bk1?uploads", nil)
	if !strings.Contains(rec.Body.String(), id) {
		t.Fatalf("list uploads: %s", rec.Body.String())
	}
	complete := func(parts ...string) []byte {
		return []byte("<CompleteMultipartUpload>" + strings.Join(parts, "") + "</CompleteMultipartUpload>")
	}
	p := func(n int, etag string) string {
		return fmt.Sprintf("<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>", n, etag)
	}
	e1, e2 := r1.Header().Get("ETag"), r2.Header().Get("ETag")
	h.expect(h.do("alice", "POST", "/bk1/big?uploadId="+id, []byte("<Complete")), 400, "MalformedXML")
	h.expect(h.do("alice", "POST", "/bk1/big?uploadId="+id, complete()), 400, "MalformedXML")
	h.expect(h.do("alice", "POST", "/bk1/big?uploadId="+id, complete(p(2, e2), p(1, e1))), 400, "InvalidPartOrder")
	h.expect(h.do("alice", "POST", "/bk1/big?uploadId="+id, complete(p(1, e1), p(2, `"bad"`))), 400, "InvalidPart")
	var many []string
	for i := 1; i <= 10001; i++ {
		many = append(many, p(i, e1))
	}
	h.expect(h.do("alice", "POST", "/bk1/big?uploadId="+id, complete(many...)), 400, "MalformedXML")
	rec = h.do("alice", "POST", "/bk1/big?uploadId="+id, complete(p(1, e1), p(2, e2)))
	h.expect(rec, 200, "")
	var cr xmlCompleteResult
	if err := xml.Unmarshal(rec.Body.Bytes(), &cr); err != nil || !strings.HasSuffix(cr.ETag, `-2"`) {
		t.Fatalf("complete: %s", rec.Body.String())
	}
	rec = h.do("alice", "GET", "/bk1/big", nil)
	if rec.Body.Len() != len(part1)+len(part2) {
		t.Fatalf("assembled size %d", rec.Body.Len())
	}
	// UploadPartCopy with a range, then abort.
	rec = h.do("alice", "POST", "/bk1/copy?uploads", nil)
	_ = xml.Unmarshal(rec.Body.Bytes(), &init)
	rec = h.do("alice", "PUT", "/bk1/copy?partNumber=1&uploadId="+init.UploadID, nil, "X-Amz-Copy-Source", "/bk1/big", "X-Amz-Copy-Source-Range", "bytes=0-9")
	h.expect(rec, 200, "")
	if !strings.Contains(rec.Body.String(), "<CopyPartResult") {
		t.Fatalf("part copy: %s", rec.Body.String())
	}
	h.expect(h.do("alice", "PUT", "/bk1/copy?partNumber=2&uploadId="+init.UploadID, nil, "X-Amz-Copy-Source", "/bk1/big", "X-Amz-Copy-Source-Range", "bytes=5-"), 400, "InvalidArgument")
	h.expect(h.do("alice", "DELETE", "/bk1/copy?uploadId="+init.UploadID, nil), 204, "")
	h.expect(h.do("alice", "DELETE", "/bk1/copy?uploadId="+init.UploadID, nil), 404, "NoSuchUpload")
}

func TestHealthAndReserved(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("", "GET", "/shardstore/health/live", nil), 200, "")
	h.expect(h.do("", "GET", "/shardstore/health/ready", nil), 200, "")
	h.expect(h.do("", "GET", "/shardstore/health/read", nil), 200, "")
	h.store.ready = false // writes lost quorum, reads not
	h.expect(h.do("", "GET", "/shardstore/health/ready", nil), 503, "")
	h.expect(h.do("", "GET", "/shardstore/health/read", nil), 200, "")
	h.expect(h.do("", "GET", "/shardstore/health/live", nil), 200, "")
	// MinIO's probe paths answer the same, GET and HEAD.
	for path, want := range map[string]int{
		"/minio/health/live": 200, "/minio/health/ready": 503,
		"/minio/health/cluster": 503, "/minio/health/cluster/read": 200,
	} {
		h.expect(h.do("", "GET", path, nil), want, "")
		h.expect(h.do("", "HEAD", path, nil), want, "")
	}
	h.store.readOK = false
	h.expect(h.do("", "GET", "/shardstore/health/read", nil), 503, "")
	h.expect(h.do("", "GET", "/minio/health/cluster/read", nil), 503, "")
	// Only those paths and methods: anything else under /minio/ is S3
	// (bucket "minio", which does not exist here).
	h.expect(h.do("", "PUT", "/minio/health/live", nil), 404, "NoSuchBucket")
	h.expect(h.do("", "GET", "/minio/health/other", nil), 404, "NoSuchBucket")
	h.expect(h.do("", "GET", "/shardstore/admin/info", nil), 501, "NotImplemented")
	rec := h.do("", "GET", "/shardstore/metrics", nil)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "shardstore_s3_requests_total") {
		t.Fatalf("metrics: %d %s", rec.Code, rec.Body.String())
	}
}

// TestMetricsAuth: with MetricsAuth set, a request without a bearer
// token is 401 with a Bearer challenge, a refused one 403, neither sees a
// metric; an allowed one gets them.
func TestMetricsAuth(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.MetricsAuth = func(r *http.Request) error {
			switch r.Header.Get("Authorization") {
			case "":
				return fmt.Errorf("wrapped: %w", auth.ErrNoBearer)
			case "Bearer good":
				return nil
			}
			return errors.New("not allowed admin:Prometheus")
		}
	})
	for _, c := range []struct {
		auth   string
		status int
	}{{"", 401}, {"Bearer bad", 403}, {"Bearer good", 200}} {
		rec := h.do("", "GET", "/shardstore/metrics", nil, "Authorization", c.auth)
		metrics := strings.Contains(rec.Body.String(), "shardstore_s3_requests_total")
		if rec.Code != c.status || metrics != (c.status == 200) {
			t.Fatalf("%q: %d %s", c.auth, rec.Code, rec.Body.String())
		}
		if c.status == 401 && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("401 without a Bearer challenge: %v", rec.Header())
		}
	}
}

func TestVirtualHost(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Domain = "s3.example.test" })
	h.expect(h.do("alice", "PUT", "/vbucket", nil), 200, "")
	req := httptest.NewRequest("PUT", "/dir/key", strings.NewReader("vh"))
	req.Host = "vbucket.s3.example.test:9000"
	req.Header.Set("X-Test-User", "alice")
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, req)
	h.expect(rec, 200, "")
	if got := h.do("alice", "GET", "/vbucket/dir/key", nil); got.Body.String() != "vh" {
		t.Fatalf("path-style read of vhost write: %q", got.Body.String())
	}
	// A key named like a reserved path is an object under virtual hosting.
	req = httptest.NewRequest("GET", "/shardstore/health/live", nil)
	req.Host = "vbucket.s3.example.test"
	req.Header.Set("X-Test-User", "alice")
	rec = httptest.NewRecorder()
	h.srv.ServeHTTP(rec, req)
	h.expect(rec, 404, "NoSuchKey")
}

func TestServeTwiceAndShutdown(t *testing.T) {
	for i := 0; i < 2; i++ {
		h := newHarness(t, nil)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- h.srv.Serve(ln) }()
		resp, err := http.Get("http://" + ln.Addr().String() + "/shardstore/health/live")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("live: %d", resp.StatusCode)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := h.srv.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Serve after Shutdown: %v", err)
		}
	}
}

func TestParseRange(t *testing.T) {
	cases := []struct {
		in     string
		ok     bool
		s, e   int64
		nilRng bool
	}{
		{"bytes=0-9", true, 0, 9, false},
		{"bytes=5-", true, 5, -1, false},
		{"bytes=-3", true, -3, -1, false},
		{"bytes=-0", true, 0, 0, true},
		{"bytes=9-1", false, 0, 0, true},
		{"bytes=0-1,3-4", false, 0, 0, true},
		{"items=0-1", false, 0, 0, true},
		{"bytes=a-b", false, 0, 0, true},
	}
	for _, c := range cases {
		r, ok := parseRange(c.in)
		if ok != c.ok || (r == nil) != c.nilRng || (r != nil && (r.Start != c.s || r.End != c.e)) {
			t.Errorf("parseRange(%q) = %+v, %v", c.in, r, ok)
		}
	}
}
