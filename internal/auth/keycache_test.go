package auth

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The signing key cache answers what signingKey derives, a different key
// for a rotated secret or another scope, remembers only what it is told
// to (keys whose signature verified), and stays bounded.
func TestSigningKeyCache(t *testing.T) {
	var c signingKeys
	s := scope{date: "20260101", region: "us-east-1", service: "s3"}
	k, known := c.key("secret1", s)
	if known || !bytes.Equal(k, signingKey("secret1", s)) {
		t.Fatalf("first lookup: known %v, key right %v", known, bytes.Equal(k, signingKey("secret1", s)))
	}
	if _, known := c.key("secret1", s); known {
		t.Fatal("a key never verified was remembered")
	}
	c.remember("secret1", s, k)
	if got, known := c.key("secret1", s); !known || !bytes.Equal(got, k) {
		t.Fatal("a remembered key is not answered")
	}
	if got, known := c.key("secret2", s); known || bytes.Equal(got, k) {
		t.Fatal("a rotated secret got the old key")
	}
	next := scope{date: "20260102", region: "us-east-1", service: "s3"}
	if got, known := c.key("secret1", next); known || !bytes.Equal(got, signingKey("secret1", next)) {
		t.Fatal("the next day's key is wrong")
	}
	for i := range 3 * maxSigningKeys {
		c.remember(fmt.Sprint("s", i), s, k)
	}
	if n := len(c.m); n > maxSigningKeys {
		t.Fatalf("%d keys cached, bound %d", n, maxSigningKeys)
	}
}

// A request whose signature does not verify leaves nothing in the cache,
// so unauthenticated requests with made-up scopes cannot fill it.
func TestFailedSignatureIsNotRemembered(t *testing.T) {
	v, r := signedTestRequest(t)
	r.Header.Set("Authorization", r.Header.Get("Authorization")[:len(r.Header.Get("Authorization"))-4]+"0000")
	if _, err := v.Verify(r); err == nil {
		t.Fatal("a bad signature verified")
	}
	if n := len(v.keys.m); n != 0 {
		t.Fatalf("%d keys remembered after a failed verification", n)
	}
	v2, r2 := signedTestRequest(t)
	if _, err := v2.Verify(r2); err != nil {
		t.Fatal(err)
	}
	if n := len(v2.keys.m); n != 1 {
		t.Fatalf("%d keys remembered after a verified request, want 1", n)
	}
}

// signedTestRequest is a GET signed by exampleID and a verifier for it.
func signedTestRequest(t *testing.T) (*Verifier, *http.Request) {
	t.Helper()
	r := httptest.NewRequest("GET", "http://examplebucket.s3.amazonaws.com/test.txt", nil)
	SignRequest(r, exampleID, "us-east-1", exampleTime, UnsignedPayload)
	return exampleVerifier(), r
}
