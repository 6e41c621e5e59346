package auth

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The values below are the worked examples of AWS's S3 API reference
// ("Signature Calculations for the Authorization Header", "Authenticating
// Requests: Using Query Parameters", "Transferring Payload in Multiple Chunks").
var (
	exampleID   = Identity{AccessKey: "AKIAIOSFODNN7EXAMPLE", SecretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}
	exampleTime = time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
)

func exampleVerifier() *Verifier {
	return &Verifier{Region: "us-east-1", Users: NewUsers(exampleID), Now: func() time.Time { return exampleTime }}
}

func authHeader(signedHeaders, sig string) string {
	return "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=" + signedHeaders + ",Signature=" + sig
}

// mustReadAll reads the verified body and fails the test on any error.
func mustReadAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading verified body: %v", err)
	}
	return b
}

func TestAWSExampleGetObject(t *testing.T) {
	r := httptest.NewRequest("GET", "http://examplebucket.s3.amazonaws.com/test.txt", nil)
	r.Header.Set("Range", "bytes=0-9")
	r.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("Authorization", authHeader("host;range;x-amz-content-sha256;x-amz-date", "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"))
	req, err := exampleVerifier().Verify(r)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if req.Anonymous || req.Identity.AccessKey != exampleID.AccessKey || !req.Identity.Root {
		t.Fatalf("identity = %+v", req)
	}
	if b := mustReadAll(t, req.Body); len(b) != 0 {
		t.Fatalf("body = %q", b)
	}
}

func TestAWSExamplePutObject(t *testing.T) {
	body := "Welcome to Amazon S3."
	r := httptest.NewRequest("PUT", "http://examplebucket.s3.amazonaws.com/test$file.text", strings.NewReader(body))
	r.Header.Set("Date", "Fri, 24 May 2013 00:00:00 GMT")
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("X-Amz-Storage-Class", "REDUCED_REDUNDANCY")
	r.Header.Set("X-Amz-Content-Sha256", "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
	r.Header.Set("Authorization", authHeader("date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class", "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"))
	req, err := exampleVerifier().Verify(r)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got := string(mustReadAll(t, req.Body)); got != body {
		t.Fatalf("body = %q", got)
	}
}

func TestAWSExampleGetBucketLifecycle(t *testing.T) {
	r := httptest.NewRequest("GET", "http://examplebucket.s3.amazonaws.com/?lifecycle", nil)
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	r.Header.Set("Authorization", authHeader("host;x-amz-content-sha256;x-amz-date", "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"))
	if _, err := exampleVerifier().Verify(r); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

func TestAWSExampleListObjects(t *testing.T) {
	r := httptest.NewRequest("GET", "http://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J", nil)
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	r.Header.Set("Authorization", authHeader("host;x-amz-content-sha256;x-amz-date", "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"))
	if _, err := exampleVerifier().Verify(r); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

func TestAWSExamplePresigned(t *testing.T) {
	const u = "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
	r := httptest.NewRequest("GET", u, nil)
	req, err := exampleVerifier().Verify(r)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !req.Presigned || req.PayloadHash != UnsignedPayload {
		t.Fatalf("request = %+v", req)
	}
	// Our presigner must produce the very same URL.
	g := httptest.NewRequest("GET", "https://examplebucket.s3.amazonaws.com/test.txt", nil)
	g.Header = http.Header{}
	if got := PresignURL(g, exampleID, "us-east-1", exampleTime, 24*time.Hour); got != u {
		t.Fatalf("PresignURL =\n %s\nwant\n %s", got, u)
	}
}

// exampleStreamingRequest is the chunked PUT of the AWS example: 66560 bytes
// of 'a' in a 65536-byte chunk and a 1024-byte chunk.
func exampleStreamingBody() []byte {
	var b bytes.Buffer
	b.WriteString("10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n")
	b.Write(bytes.Repeat([]byte{'a'}, 65536))
	b.WriteString("\r\n400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n")
	b.Write(bytes.Repeat([]byte{'a'}, 1024))
	b.WriteString("\r\n0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n")
	return b.Bytes()
}

func exampleStreamingRequest(body []byte) *http.Request {
	r := httptest.NewRequest("PUT", "http://s3.amazonaws.com/examplebucket/chunkObject.txt", bytes.NewReader(body))
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("X-Amz-Storage-Class", "REDUCED_REDUNDANCY")
	r.Header.Set("X-Amz-Content-Sha256", StreamingPayload)
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Decoded-Content-Length", "66560")
	r.Header.Set("Content-Length", "66824")
	r.Header.Set("Authorization", authHeader("content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class", "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"))
	return r
}

func TestAWSExampleStreaming(t *testing.T) {
	body := exampleStreamingBody()
	if len(body) != 66824 {
		t.Fatalf("example body is %d bytes, the example says 66824", len(body))
	}
	req, err := exampleVerifier().Verify(exampleStreamingRequest(body))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if req.ContentLength != 66560 {
		t.Fatalf("ContentLength = %d", req.ContentLength)
	}
	got := mustReadAll(t, req.Body)
	if !bytes.Equal(got, bytes.Repeat([]byte{'a'}, 66560)) {
		t.Fatalf("decoded %d bytes, not the example's payload", len(got))
	}
}
