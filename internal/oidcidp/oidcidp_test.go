package oidcidp

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// testIssuer serves discovery and a JWKS from keys made here, so that
// hostile tokens (expired, tampered, wrong audience, alg none, HMAC with
// the public key) can be signed at will. The e2e test runs against a
// real provider (test/e2e/oidc_test.go).
type testIssuer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	keys map[string]any // kid -> private key served (public part)
	down bool
	hits int // requests served or refused
}

func newIssuer(t testing.TB) *testIssuer {
	ti := &testIssuer{keys: map[string]any{}}
	ti.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ti.mu.Lock()
		defer ti.mu.Unlock()
		ti.hits++
		if ti.down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": ti.srv.URL, "jwks_uri": ti.srv.URL + "/jwks"})
		case "/jwks":
			var keys []map[string]string
			for kid, k := range ti.keys {
				keys = append(keys, jwk(kid, k))
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"keys": keys})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ti.srv.Close)
	return ti
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func jwk(kid string, k any) map[string]string {
	switch k := k.(type) {
	case *rsa.PrivateKey:
		return map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
	case *ecdsa.PrivateKey:
		size := (k.Curve.Params().BitSize + 7) / 8
		return map[string]string{"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(k.X.FillBytes(make([]byte, size))), "y": b64(k.Y.FillBytes(make([]byte, size)))}
	}
	return nil
}

func (ti *testIssuer) add(t *testing.T, kid string, ec bool) any {
	var k any
	var err error
	if ec {
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	} else {
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		t.Fatal(err)
	}
	ti.mu.Lock()
	ti.keys[kid] = k
	ti.mu.Unlock()
	return k
}

func sign(t *testing.T, method jwt.SigningMethod, kid string, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestValidate(t *testing.T) {
	ti := newIssuer(t)
	rsaKey := ti.add(t, "r1", false)
	ecKey := ti.add(t, "e1", true)
	now := time.Unix(1_900_000_000, 0)
	clock := now
	var clockMu sync.Mutex
	cfg, ok, err := Parse(map[string]string{"CONFIG_URL": ti.srv.URL + "/.well-known/openid-configuration", "CLIENT_ID": "shardstore"}, nil)
	if !ok || err != nil {
		t.Fatal(err)
	}
	cfg.Now = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
	p := New(cfg)
	ctx := context.Background()
	base := func() jwt.MapClaims {
		return jwt.MapClaims{"iss": ti.srv.URL, "sub": "alice", "aud": "shardstore", "exp": now.Add(time.Hour).Unix(),
			"iat": now.Unix(), "policy": "readonly,diagnostics"}
	}
	with := func(change func(c jwt.MapClaims)) jwt.MapClaims { c := base(); change(c); return c }

	c, err := p.Validate(ctx, sign(t, jwt.SigningMethodRS256, "r1", rsaKey, base()))
	if err != nil || c.Subject != "alice" || !slices.Equal(c.Policies, []string{"readonly", "diagnostics"}) {
		t.Fatalf("valid RS256: %+v %v", c, err)
	}
	arr := with(func(c jwt.MapClaims) { c["policy"] = []string{"readwrite"}; c["aud"] = []string{"other", "shardstore"} })
	if c, err := p.Validate(ctx, sign(t, jwt.SigningMethodES256, "e1", ecKey, arr)); err != nil || !slices.Equal(c.Policies, []string{"readwrite"}) {
		t.Fatalf("valid ES256 with an array claim: %+v %v", c, err)
	}
	azp := with(func(c jwt.MapClaims) { c["aud"] = "api"; c["azp"] = "shardstore" })
	if _, err := p.Validate(ctx, sign(t, jwt.SigningMethodRS256, "r1", rsaKey, azp)); err != nil {
		t.Fatalf("azp names the client: %v", err)
	}
	// Within the leeway a slightly early or late token passes.
	skew := with(func(c jwt.MapClaims) {
		c["nbf"] = now.Add(30 * time.Second).Unix()
		c["iat"] = now.Add(30 * time.Second).Unix()
	})
	if _, err := p.Validate(ctx, sign(t, jwt.SigningMethodRS256, "r1", rsaKey, skew)); err != nil {
		t.Fatalf("30 s of skew: %v", err)
	}

	good := sign(t, jwt.SigningMethodRS256, "r1", rsaKey, base())
	parts := strings.Split(good, ".")
	tamperedPayload, _ := json.Marshal(with(func(c jwt.MapClaims) { c["policy"] = "consoleAdmin" }))
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	pubDER := rsaKey.(*rsa.PrivateKey).N.Bytes()
	refused := map[string]string{
		"expired":         sign(t, jwt.SigningMethodRS256, "r1", rsaKey, with(func(c jwt.MapClaims) { c["exp"] = now.Add(-2 * time.Minute).Unix() })),
		"no expiry":       sign(t, jwt.SigningMethodRS256, "r1", rsaKey, with(func(c jwt.MapClaims) { delete(c, "exp") })),
		"not yet valid":   sign(t, jwt.SigningMethodRS256, "r1", rsaKey, with(func(c jwt.MapClaims) { c["nbf"] = now.Add(10 * time.Minute).Unix() })),
		"issued later":    sign(t, jwt.SigningMethodRS256, "r1", rsaKey, with(func(c jwt.MapClaims) { c["iat"] = now.Add(10 * time.Minute).Unix() })),
		"wrong audience":  sign(t, jwt.SigningMethodRS256, "r1", rsaKey, with(func(c jwt.MapClaims) { c["aud"] = "someone-else" })),
		"wrong issuer":    sign(t, jwt.SigningMethodRS256, "r1", rsaKey, with(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })),
		"no subject":      sign(t, jwt.SigningMethodRS256, "r1", rsaKey, with(func(c jwt.MapClaims) { delete(c, "sub") })),
		"tampered":        parts[0] + "." + base64.RawURLEncoding.EncodeToString(tamperedPayload) + "." + parts[2],
		"other key":       sign(t, jwt.SigningMethodRS256, "r1", other, base()),
		"unknown kid":     sign(t, jwt.SigningMethodRS256, "nope", other, base()),
		"alg none":        sign(t, jwt.SigningMethodNone, "r1", jwt.UnsafeAllowNoneSignatureType, base()),
		"HMAC public key": sign(t, jwt.SigningMethodHS256, "r1", pubDER, base()),
		"garbage":         "a.b.c",
		"empty":           "",
		"two parts":       parts[0] + "." + parts[1],
		"huge":            strings.Repeat("a", maxToken) + ".b.c",
	}
	for why, tok := range refused {
		_, err := p.Validate(ctx, tok)
		want := ErrInvalidToken
		if why == "expired" {
			want = ErrExpiredToken
		}
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", why, err, want)
		} else if tok != "" && strings.Contains(err.Error(), tok) {
			t.Errorf("%s: the error holds the token", why)
		}
	}

	// Key rotation: a token signed with a new key is accepted once the
	// JWKS has it (fetched again for the unknown kid, after refetchEvery).
	k2 := ti.add(t, "r2", false)
	clockMu.Lock()
	clock = clock.Add(refetchEvery)
	now = clock
	clockMu.Unlock()
	if _, err := p.Validate(ctx, sign(t, jwt.SigningMethodRS256, "r2", k2, base())); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	// The provider is down: known keys still verify; an unknown one says
	// the provider is unavailable.
	ti.mu.Lock()
	ti.down = true
	ti.mu.Unlock()
	if _, err := p.Validate(ctx, sign(t, jwt.SigningMethodRS256, "r1", rsaKey, base())); err != nil {
		t.Fatalf("known key with the provider down: %v", err)
	}
	clockMu.Lock()
	clock = clock.Add(refetchEvery)
	now = clock
	clockMu.Unlock()
	k3 := ti.add(t, "r3", false)
	if _, err := p.Validate(ctx, sign(t, jwt.SigningMethodRS256, "r3", k3, base())); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("unknown key with the provider down: %v", err)
	}
}

func TestRolePolicyAndParse(t *testing.T) {
	cfg, ok, err := Parse(map[string]string{"CONFIG_URL": "https://idp.example/.well-known/openid-configuration", "CLIENT_ID": "c",
		"ROLE_POLICY": "readonly, writeonly", "SCOPES": "openid,groups"}, nil)
	if !ok || err != nil || !slices.Equal(cfg.RolePolicy, []string{"readonly", "writeonly"}) || len(cfg.Scopes) != 2 || cfg.RoleARN != RoleARN("c") {
		t.Fatalf("%+v %v %v", cfg, ok, err)
	}
	for _, bad := range []map[string]string{
		{"CLIENT_ID": "c"},
		{"CONFIG_URL": "ftp://x/"},
		{"CONFIG_URL": "not a url"},
		{"CONFIG_URL": "https://idp.example/"},
		{"CONFIG_URL": "https://idp.example/", "CLIENT_ID": "c", "ROLE_POLICY": "readonly", "CLAIM_NAME": "groups"},
	} {
		if _, _, err := Parse(bad, nil); !errors.Is(err, ErrConfig) {
			t.Errorf("Parse(%v): %v", bad, err)
		}
	}
	env := []string{"MINIO_IDENTITY_OPENID_CLIENT_ID=m", "SHARDSTORE_IDENTITY_OPENID_CLIENT_ID=s", "MINIO_IDENTITY_OPENID_CLAIM_NAME=groups"}
	if got, err := EnvProviders(env); err != nil || got[""]["CLIENT_ID"] != "s" || got[""]["CLAIM_NAME"] != "groups" {
		t.Fatalf("EnvProviders: %v %v", got, err)
	}
}

func FuzzValidate(f *testing.F) {
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")
	f.Add("a.b.c")
	ti := &testIssuer{keys: map[string]any{}}
	ti.srv = httptest.NewServer(http.NotFoundHandler())
	defer ti.srv.Close()
	cfg := Config{ConfigURL: ti.srv.URL + "/.well-known/openid-configuration", ClientID: "c", ClaimName: "policy"}
	p := New(cfg)
	f.Fuzz(func(t *testing.T, tok string) {
		if _, err := p.Validate(context.Background(), tok); err == nil {
			t.Fatalf("a fuzzed token validated: %q", tok)
		}
	})
}

func FuzzParseJWK(f *testing.F) {
	f.Add(`{"kty":"RSA","kid":"a","n":"AQAB","e":"AQAB"}`)
	f.Add(`{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}`)
	f.Fuzz(func(t *testing.T, s string) {
		_, _, _ = ParseJWK([]byte(s)) // never panics
	})
}
