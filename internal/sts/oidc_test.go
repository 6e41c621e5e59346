package sts

import (
	"context"
	"encoding/xml"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/iam"
	"github.com/shardstore/shardstore/internal/oidcidp"
)

// namedValidator answers by token: "alice" and "bob" are valid (policy
// readonly, and a policy that does not exist), "expired", "down" and
// anything else refused. Real tokens of a real provider are validated in
// internal/oidcidp and test/e2e/oidc_test.go.
type namedValidator struct{}

func (namedValidator) Validate(_ context.Context, token, roleARN string) (oidcidp.Claims, error) {
	if roleARN == "arn:minio:iam:::role/unknown" {
		return oidcidp.Claims{}, oidcidp.ErrUnknownRole
	}
	switch token {
	case "alice":
		return oidcidp.Claims{Issuer: "https://idp", Subject: "alice", Audience: []string{"c"}, Policies: []string{"readonly"},
			Vars: map[string]string{"sub": "alice", "iss": "https://idp", "email": "alice*@example.org"}}, nil
	case "svc":
		return oidcidp.Claims{Issuer: "https://idp", Subject: "svc-client", Audience: []string{"svc"}, Policies: []string{"readonly"},
			RoleARN: "arn:minio:iam:::role/svc"}, nil
	case "bob":
		return oidcidp.Claims{Issuer: "https://idp", Subject: "bob", Policies: []string{"nosuch"}}, nil
	case "expired":
		return oidcidp.Claims{}, oidcidp.ErrExpiredToken
	case "down":
		return oidcidp.Claims{}, oidcidp.ErrUnavailable
	}
	return oidcidp.Claims{}, oidcidp.ErrInvalidToken
}

func TestAssumeRoleWithWebIdentity(t *testing.T) {
	root := auth.Identity{AccessKey: "rootkey", SecretKey: "rootsecret", Root: true}
	ids, err := iam.Open(context.Background(), iam.Options{Backend: &memConfig{}, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	v := &auth.Verifier{Users: auth.NewUsers(root), Identities: ids}
	h := &Handler{Verifier: v, Issuer: ids, OIDC: namedValidator{}, OIDCIssuer: ids}
	post := func(h *Handler, remote, query string, kv ...string) (int, string, string) {
		t.Helper()
		f := url.Values{"Action": {"AssumeRoleWithWebIdentity"}, "Version": {"2011-06-15"}}
		for i := 0; i+1 < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		r := httptest.NewRequest("POST", "http://localhost/"+query, strings.NewReader(f.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.RemoteAddr = remote + ":1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var e xmlErrorResponse
		_ = xml.Unmarshal(w.Body.Bytes(), &e)
		return w.Code, e.Error.Code, w.Body.String()
	}
	tests := []struct {
		why    string
		query  string
		kv     []string
		status int
		code   string
	}{
		{"no token", "", nil, 400, "MissingParameter"},
		{"invalid", "", []string{"WebIdentityToken", "forged"}, 400, "InvalidIdentityToken"},
		{"expired", "", []string{"WebIdentityToken", "expired"}, 400, "ExpiredTokenException"},
		{"provider down", "", []string{"WebIdentityToken", "down"}, 400, "IDPCommunicationError"},
		{"no existing policy", "", []string{"WebIdentityToken", "bob"}, 403, "AccessDenied"},
		{"bad session name", "", []string{"WebIdentityToken", "alice", "RoleSessionName", "a b"}, 400, "ValidationError"},
		{"bad duration", "", []string{"WebIdentityToken", "alice", "DurationSeconds", "10"}, 400, "ValidationError"},
		{"bad session policy", "", []string{"WebIdentityToken", "alice", "Policy", "["}, 400, "MalformedPolicyDocument"},
		{"token in the URL", "?WebIdentityToken=alice", nil, 400, "ValidationError"},
		{"unknown role", "", []string{"WebIdentityToken", "alice", "RoleArn", "arn:minio:iam:::role/unknown"}, 400, "InvalidParameterValue"},
	}
	for _, tc := range tests {
		if status, code, body := post(h, "192.0.2.1", tc.query, tc.kv...); status != tc.status || code != tc.code {
			t.Errorf("%s: %d %s, want %d %s\n%s", tc.why, status, code, tc.status, tc.code, body)
		}
	}
	status, _, body := post(h, "192.0.2.1", "", "WebIdentityToken", "alice", "RoleArn", "arn:aws:iam::123456789012:role/web", "RoleSessionName", "s1", "DurationSeconds", "900")
	var ok xmlWebIdentityResponse
	if status != 200 || xml.Unmarshal([]byte(body), &ok) != nil || ok.Result.SubjectFromWebIdentityToken != "alice" ||
		ok.Result.AssumedRoleUser.Arn != "arn:aws:sts::123456789012:assumed-role/web/s1" || ok.Result.Provider != "https://idp" {
		t.Fatalf("alice: %d %s", status, body)
	}
	exp, _ := time.Parse(time.RFC3339, ok.Result.Credentials.Expiration)
	if d := time.Until(exp); d < 14*time.Minute || d > 16*time.Minute {
		t.Fatalf("expires in %v, asked 15 minutes", d)
	}
	if id, err := ids.LookupSession(ok.Result.Credentials.AccessKeyID, ok.Result.Credentials.SessionToken); err != nil || id.Refusal != nil || id.User != "alice" ||
		id.Claims["jwt:email"] != "alice*@example.org" || id.Claims["jwt:sub"] != "alice" || id.Claims["jwt:iss"] != "https://idp" {
		t.Fatalf("session: %+v %v", id, err)
	}
	// Refused tokens count against the address.
	for range 10 {
		post(h, "198.51.100.9", "", "WebIdentityToken", "forged")
	}
	if _, code, _ := post(h, "198.51.100.9", "", "WebIdentityToken", "alice"); code != "Throttling" {
		t.Fatalf("after 10 refused tokens: %s", code)
	}
	if _, code, _ := post(&Handler{Verifier: v, Issuer: ids}, "192.0.2.5", "", "WebIdentityToken", "alice"); code != "InvalidAction" {
		t.Fatalf("not configured: %s", code)
	}
}

// TestAssumeRoleWithClientGrants: MinIO's call with Token, the same
// checks and session as AssumeRoleWithWebIdentity, its own answer.
func TestAssumeRoleWithClientGrants(t *testing.T) {
	root := auth.Identity{AccessKey: "rootkey", SecretKey: "rootsecret", Root: true}
	ids, err := iam.Open(context.Background(), iam.Options{Backend: &memConfig{}, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	h := &Handler{Verifier: &auth.Verifier{Users: auth.NewUsers(root), Identities: ids}, Issuer: ids, OIDC: namedValidator{}, OIDCIssuer: ids}
	post := func(query string, kv ...string) (int, string, string) {
		f := url.Values{"Action": {"AssumeRoleWithClientGrants"}, "Version": {"2011-06-15"}}
		for i := 0; i+1 < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		r := httptest.NewRequest("POST", "http://localhost/"+query, strings.NewReader(f.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var e xmlErrorResponse
		_ = xml.Unmarshal(w.Body.Bytes(), &e)
		return w.Code, e.Error.Code, w.Body.String()
	}
	for _, tc := range []struct {
		why    string
		query  string
		kv     []string
		status int
		code   string
	}{
		{"no token", "", nil, 400, "MissingParameter"},
		{"WebIdentityToken instead", "", []string{"WebIdentityToken", "svc"}, 400, "MissingParameter"},
		{"invalid", "", []string{"Token", "forged"}, 400, "InvalidIdentityToken"},
		{"expired", "", []string{"Token", "expired"}, 400, "ExpiredTokenException"},
		{"down", "", []string{"Token", "down"}, 400, "IDPCommunicationError"},
		{"token in the URL", "?Token=svc", nil, 400, "ValidationError"},
		{"unknown role", "", []string{"Token", "svc", "RoleArn", "arn:minio:iam:::role/unknown"}, 400, "InvalidParameterValue"},
		{"bad duration", "", []string{"Token", "svc", "DurationSeconds", "99999999"}, 400, "ValidationError"},
	} {
		if status, code, body := post(tc.query, tc.kv...); status != tc.status || code != tc.code {
			t.Errorf("%s: %d %s, want %d %s\n%s", tc.why, status, code, tc.status, tc.code, body)
		}
	}
	status, _, body := post("", "Token", "svc", "DurationSeconds", "900")
	var ok xmlClientGrantsResponse
	if status != 200 || xml.Unmarshal([]byte(body), &ok) != nil || ok.Result.SubjectFromToken != "svc-client" || ok.Result.Audience != "svc" ||
		ok.Result.Credentials.SessionToken == "" || !strings.Contains(body, "<AssumeRoleWithClientGrantsResponse") {
		t.Fatalf("svc: %d %s", status, body)
	}
	if id, err := ids.LookupSession(ok.Result.Credentials.AccessKeyID, ok.Result.Credentials.SessionToken); err != nil || id.Refusal != nil || id.User != "svc-client" {
		t.Fatalf("session: %+v %v", id, err)
	}
	if _, code, _ := post("", "Token", "svc", "Version", "2010-01-01"); code != "InvalidParameterValue" {
		t.Fatalf("bad version: %s", code)
	}
}
