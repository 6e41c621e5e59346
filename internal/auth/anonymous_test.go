package auth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAnonymousStreaming: an unauthenticated request framed as
// aws-chunked STREAMING-UNSIGNED-PAYLOAD-TRAILER (how boto3 >= 1.36 and
// the other current SDKs send an unsigned upload) is decoded and its
// trailer handed on, as for a signed request; hostile framing fails the
// read instead of being stored; chunk-signed modes are refused; a hex
// x-amz-content-sha256 is checked.
func TestAnonymousStreaming(t *testing.T) {
	anon := func(mode, body string, h map[string]string) *http.Request {
		r := httptest.NewRequest("PUT", "http://127.0.0.1/b/k", strings.NewReader(body))
		r.Header.Set("X-Amz-Content-Sha256", mode)
		for k, v := range h {
			r.Header.Set(k, v)
		}
		return r
	}
	framed := "5\r\nhello\r\n0\r\nx-amz-checksum-crc32:NhCmhg==\r\n\r\n"
	trailer := map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32", "X-Amz-Decoded-Content-Length": "5", "Content-Encoding": "aws-chunked"}
	req, body, err := verifyAndRead(testVerifier(), anon(StreamingUnsignedPayloadTrailer, framed, trailer))
	if err != nil || string(body) != "hello" || !req.Anonymous || req.ContentLength != 5 || req.PayloadHash != "" {
		t.Fatalf("anonymous aws-chunked: %q %+v %v", body, req, err)
	}
	if got := req.Trailer().Get("X-Amz-Checksum-Crc32"); got != "NhCmhg==" {
		t.Fatalf("trailer: %q", got)
	}
	for name, bad := range map[string]string{
		"length past the body":   "50\r\nhello\r\n0\r\n\r\n",
		"missing final chunk":    "5\r\nhello\r\n",
		"size not hex":           "zz\r\nhello\r\n0\r\n\r\n",
		"more than declared":     "6\r\nhello!\r\n0\r\nx-amz-checksum-crc32:NhCmhg==\r\n\r\n",
		"undeclared trailer":     "5\r\nhello\r\n0\r\nx-amz-meta-evil:1\r\n\r\n",
		"chunk signature inside": "5;chunk-signature=" + strings.Repeat("0", 64) + "\r\nhello\r\n0\r\n\r\n",
	} {
		if _, _, err := verifyAndRead(testVerifier(), anon(StreamingUnsignedPayloadTrailer, bad, trailer)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for _, mode := range []string{StreamingPayload, StreamingPayloadTrailer} {
		_, err := testVerifier().Verify(anon(mode, framed, trailer))
		wantCodes(t, err, CodeInvalidRequest)
	}
	_, _, err = verifyAndRead(testVerifier(), anon(sha256Hex("another body"), "the real body", nil))
	wantCodes(t, err, CodeXAmzContentSHA256Mismatch)
	if _, body, err := verifyAndRead(testVerifier(), anon(sha256Hex("the body"), "the body", nil)); err != nil || string(body) != "the body" {
		t.Fatalf("anonymous with its digest: %q %v", body, err)
	}
	if _, body, err := verifyAndRead(testVerifier(), anon(UnsignedPayload, "as sent", nil)); err != nil || string(body) != "as sent" {
		t.Fatalf("anonymous UNSIGNED-PAYLOAD: %q %v", body, err)
	}
}
