package auth

import (
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestBearer: tokens made by BearerToken (the form `mc admin prometheus
// generate` makes) authenticate their key; hostile and stale tokens are
// refused.
func TestBearer(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	v := &Verifier{Users: NewUsers(testID), Identities: fakeIdentities{}, Now: func() time.Time { return now }}
	good, err := BearerToken(testID.AccessKey, testID.SecretKey, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	sign := func(m jwt.SigningMethod, claims jwt.Claims, key any) string {
		s, err := jwt.NewWithClaims(m, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	claims := func(sub string, exp time.Time) jwt.RegisteredClaims {
		return jwt.RegisteredClaims{Subject: sub, ExpiresAt: jwt.NewNumericDate(exp)}
	}
	header, payload, _ := strings.Cut(good, ".")
	payload, sig, _ := strings.Cut(payload, ".")
	unsignedAlg := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	for _, c := range []struct {
		name, auth, want string
	}{
		{"good", "Bearer " + good, ""},
		{"lower-case scheme", "bearer " + good, ""},
		{"HS256", "Bearer " + sign(jwt.SigningMethodHS256, claims(testID.AccessKey, now.Add(time.Minute)), []byte(testID.SecretKey)), ""},
		{"no header", "", "no bearer token"},
		{"basic auth", "Basic dXNlcjpwYXNz", "no bearer token"},
		{"expired", "Bearer " + sign(jwt.SigningMethodHS512, claims(testID.AccessKey, now.Add(-time.Minute)), []byte(testID.SecretKey)), "expired"},
		{"no expiry", "Bearer " + sign(jwt.SigningMethodHS512, jwt.RegisteredClaims{Subject: testID.AccessKey}, []byte(testID.SecretKey)), "exp"},
		{"wrong secret", "Bearer " + sign(jwt.SigningMethodHS512, claims(testID.AccessKey, now.Add(time.Hour)), []byte("not the secret")), "signature is invalid"},
		{"unknown key", "Bearer " + sign(jwt.SigningMethodHS512, claims("NOSUCHKEY", now.Add(time.Hour)), []byte("x")), "access key \"NOSUCHKEY\""},
		{"no subject", "Bearer " + sign(jwt.SigningMethodHS512, claims("", now.Add(time.Hour)), []byte(testID.SecretKey)), "no access key"},
		{"disabled key", "Bearer " + sign(jwt.SigningMethodHS512, claims(refusedID.AccessKey, now.Add(time.Hour)), []byte(refusedID.SecretKey)), "disabled"},
		{"alg none", "Bearer " + unsignedAlg + "." + payload + ".", "signing method none is invalid"},
		{"tampered payload", "Bearer " + header + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"AKTESTUSER","exp":9999999999}`)) + "." + sig, "signature is invalid"},
		{"garbage", "Bearer a.b.c", "bearer token refused"},
		{"huge", "Bearer " + strings.Repeat("a", MaxBearerLen+1), "too long"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/shardstore/metrics", nil)
			if c.auth != "" {
				r.Header.Set("Authorization", c.auth)
			}
			id, err := v.VerifyBearer(r)
			if c.want == "" {
				if err != nil || id.AccessKey != testID.AccessKey {
					t.Fatalf("id %q, err %v", id.AccessKey, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// FuzzBearer: hostile tokens never authenticate and never panic.
func FuzzBearer(f *testing.F) {
	good, _ := BearerToken(testID.AccessKey, testID.SecretKey, time.Now().Add(time.Hour))
	f.Add(good)
	f.Add("a.b.c")
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJBS1RFU1RVU0VSIn0.")
	v := &Verifier{Users: NewUsers(testID)}
	f.Fuzz(func(t *testing.T, token string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		if id, err := v.VerifyBearer(r); err == nil && !sameSigned(strings.TrimSpace(token), good) {
			t.Fatalf("token %q authenticated %q", token, id.AccessKey)
		}
	})
}

// sameSigned reports whether two tokens carry the same header and claims
// (base64 allows more than one spelling of the same bytes).
func sameSigned(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	if len(pa) != 3 || len(pb) != 3 {
		return false
	}
	for i := range 2 {
		da, ea := base64.RawURLEncoding.DecodeString(pa[i])
		db, eb := base64.RawURLEncoding.DecodeString(pb[i])
		if ea != nil || eb != nil || string(da) != string(db) {
			return false
		}
	}
	return true
}
