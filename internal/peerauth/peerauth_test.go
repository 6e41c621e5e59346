package peerauth

import (
	"errors"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

func TestSignVerify(t *testing.T) {
	k := Derive("root", "secret")
	r := httptest.NewRequest("POST", "http://n1:9000/_shardstore/drive/v1/apply?drive=3", nil)
	k.Sign(r, BodyHash([]byte("body")))
	h, err := k.Verify(r, time.Now())
	if err != nil || h != BodyHash([]byte("body")) {
		t.Fatalf("verify = %q, %v", h, err)
	}

	// Another root secret, a changed query, an old date: all refused.
	if _, err := Derive("root", "other").Verify(r, time.Now()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("other key: %v", err)
	}
	r2 := r.Clone(r.Context())
	r2.URL.RawQuery = "drive=4"
	if _, err := k.Verify(r2, time.Now()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("changed query: %v", err)
	}
	if _, err := k.Verify(r, time.Now().Add(2*MaxSkew)); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("late: %v", err)
	}
	r3 := r.Clone(r.Context())
	r3.Header.Set(HeaderDate, strconv.FormatInt(time.Now().UnixNano()+1, 10))
	if _, err := k.Verify(r3, time.Now()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("changed date: %v", err)
	}
	r4 := httptest.NewRequest("GET", "http://n1:9000/x", nil)
	if _, err := k.Verify(r4, time.Now()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("unsigned: %v", err)
	}
	if _, err := (Key{}).Verify(r, time.Now()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("zero key: %v", err)
	}
}
