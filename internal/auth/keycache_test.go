package auth

import (
	"bytes"
	"fmt"
	"testing"
)

// The signing key cache answers what signingKey derives, a different key
// for a rotated secret or another scope, and stays bounded.
func TestSigningKeyCache(t *testing.T) {
	var c signingKeys
	s := scope{date: "20260101", region: "us-east-1", service: "s3"}
	for range 2 {
		if got := c.get("secret1", s); !bytes.Equal(got, signingKey("secret1", s)) {
			t.Fatal("cached key differs from the derived one")
		}
	}
	if bytes.Equal(c.get("secret2", s), c.get("secret1", s)) {
		t.Fatal("a rotated secret got the old key")
	}
	next := scope{date: "20260102", region: "us-east-1", service: "s3"}
	if !bytes.Equal(c.get("secret1", next), signingKey("secret1", next)) || bytes.Equal(c.get("secret1", next), c.get("secret1", s)) {
		t.Fatal("the next day's key is wrong")
	}
	for i := range 3 * maxSigningKeys {
		c.get(fmt.Sprint("s", i), s)
	}
	if n := len(c.m); n > maxSigningKeys {
		t.Fatalf("%d keys cached, bound %d", n, maxSigningKeys)
	}
}
