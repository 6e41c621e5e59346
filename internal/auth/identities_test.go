package auth

import (
	"net/http/httptest"
	"testing"
	"time"
)

// fakeIdentities holds one refused key and one session.
type fakeIdentities struct{}

var refusedID = Identity{AccessKey: "SSAKREFUSED", SecretKey: "refused-secret", User: "u",
	Refusal: InvalidAccessKey("The user is disabled.")}

func (fakeIdentities) Lookup(ak string) (Identity, error) {
	if ak == refusedID.AccessKey {
		return refusedID, nil
	}
	return Identity{}, InvalidAccessKey("")
}

func (fakeIdentities) LookupSession(ak, token string) (Identity, error) {
	if ak == "SSTSOK" && token == "good-token" {
		return Identity{AccessKey: ak, SecretKey: "session-secret", User: "u", Session: true}, nil
	}
	return Identity{}, InvalidToken()
}

// TestIdentityStoreLookups: keys of the identity store verify like the
// users file's; a refused key says why only to a caller whose signature
// matched; a session token is checked on every signing form.
func TestIdentityStoreLookups(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	v := &Verifier{Users: NewUsers(testID), Identities: fakeIdentities{}, Now: func() time.Time { return now }}
	code := func(err error) string {
		if ae, ok := err.(*Error); ok { //nolint:errorlint // Verify returns *Error unwrapped
			return ae.Code + ": " + ae.Message
		}
		return ""
	}

	r := httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k", nil)
	SignRequest(r, Identity{AccessKey: refusedID.AccessKey, SecretKey: "a-guessed-secret"}, "us-east-1", now, "")
	if _, err := v.Verify(r); code(err) != CodeSignatureDoesNotMatch+": "+msgSignatureDoesNotMatch {
		t.Fatalf("a refused key with a wrong secret: %v, want SignatureDoesNotMatch (nothing about the key)", err)
	}
	r = httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k", nil)
	SignRequest(r, refusedID, "us-east-1", now, "")
	if _, err := v.Verify(r); code(err) != CodeInvalidAccessKeyID+": The user is disabled." {
		t.Fatalf("a refused key with its secret: %v", err)
	}

	session := Identity{AccessKey: "SSTSOK", SecretKey: "session-secret"}
	for name, tc := range map[string]struct {
		token string
		want  string
	}{"good": {"good-token", ""}, "bad": {"bad-token", CodeInvalidToken}} {
		r = httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k", nil)
		r.Header.Set("X-Amz-Security-Token", tc.token)
		SignRequest(r, session, "us-east-1", now, "")
		req, err := v.Verify(r)
		switch {
		case tc.want == "" && (err != nil || !req.Identity.Session):
			t.Errorf("%s token in the header: %v", name, err)
		case tc.want != "" && (err == nil || err.(*Error).Code != tc.want): //nolint:errorlint // as above
			t.Errorf("%s token in the header: %v, want %s", name, err, tc.want)
		}
		r = httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k?X-Amz-Security-Token="+tc.token, nil)
		u := PresignURL(r, session, "us-east-1", now, time.Hour)
		req, err = v.Verify(httptest.NewRequest("GET", u, nil))
		switch {
		case tc.want == "" && (err != nil || !req.Identity.Session):
			t.Errorf("%s token in a presigned URL: %v", name, err)
		case tc.want != "" && (err == nil || err.(*Error).Code != tc.want): //nolint:errorlint // as above
			t.Errorf("%s token in a presigned URL: %v, want %s", name, err, tc.want)
		}
	}
	// Without an identity store every token is refused.
	r = httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k", nil)
	r.Header.Set("X-Amz-Security-Token", "good-token")
	SignRequest(r, testID, "us-east-1", now, "")
	if _, err := (&Verifier{Users: NewUsers(testID), Now: v.Now}).Verify(r); code(err) == "" || err.(*Error).Code != CodeInvalidToken { //nolint:errorlint // as above
		t.Fatalf("a token without an identity store: %v", err)
	}
}
