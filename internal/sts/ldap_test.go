package sts

import (
	"bytes"
	"context"
	"encoding/xml"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/iam"
	"github.com/shardstore/shardstore/internal/ldapidp"
)

// passwordDirectory signs in users whose password is their name + "-pw";
// "down" makes it unavailable. The real directory is tested in
// internal/ldapidp and the e2e tests (slapd).
type passwordDirectory struct{ down bool }

func (d *passwordDirectory) Authenticate(_ context.Context, name, password string) (ldapidp.Identity, error) {
	if d.down {
		return ldapidp.Identity{}, ldapidp.ErrUnavailable
	}
	if err := ldapidp.CheckUsername(name); err != nil {
		return ldapidp.Identity{}, err
	}
	if password != name+"-pw" {
		return ldapidp.Identity{}, ldapidp.ErrInvalidCredentials
	}
	return ldapidp.Identity{Username: name, DN: "uid=" + name + ",dc=example,dc=org"}, nil
}

func (d *passwordDirectory) Lookup(_ context.Context, name string) (ldapidp.Identity, error) {
	return ldapidp.Identity{Username: name, DN: "uid=" + name + ",dc=example,dc=org"}, nil
}

func TestAssumeRoleWithLDAPIdentity(t *testing.T) {
	root := auth.Identity{AccessKey: "rootkey", SecretKey: "rootsecret", Root: true}
	dir := &passwordDirectory{}
	ids, err := iam.Open(context.Background(), iam.Options{Backend: &memConfig{}, Root: root, Directory: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := ids.AttachLDAPPolicies(context.Background(), "root", "uid=alice,dc=example,dc=org", []string{"readonly"}, true); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	v := &auth.Verifier{Users: auth.NewUsers(root), Identities: ids}
	h := &Handler{Verifier: v, Issuer: ids, LDAP: dir, LDAPIssuer: ids, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	post := func(h *Handler, remote string, form url.Values) (int, string, string) {
		t.Helper()
		r := httptest.NewRequest("POST", "http://localhost/", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.RemoteAddr = remote + ":40000"
		if !auth.IsFederatedSTSRequest(r) {
			t.Fatal("an unsigned form POST is not taken for STS")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var e xmlErrorResponse
		_ = xml.Unmarshal(w.Body.Bytes(), &e)
		return w.Code, e.Error.Code, w.Body.String()
	}
	form := func(kv ...string) url.Values {
		f := url.Values{"Action": {"AssumeRoleWithLDAPIdentity"}, "Version": {"2011-06-15"}}
		for i := 0; i+1 < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return f
	}
	tests := []struct {
		name   string
		form   url.Values
		status int
		code   string
	}{
		{"no user", form("LDAPPassword", "x"), 400, "MissingParameter"},
		{"no password", form("LDAPUsername", "alice"), 400, "MissingParameter"},
		{"bad version", url.Values{"Action": {"AssumeRoleWithLDAPIdentity"}, "Version": {"2010"}, "LDAPUsername": {"alice"}, "LDAPPassword": {"alice-pw"}}, 400, "InvalidParameterValue"},
		{"duration", form("LDAPUsername", "alice", "LDAPPassword", "alice-pw", "DurationSeconds", "60"), 400, "ValidationError"},
		{"duration huge", form("LDAPUsername", "alice", "LDAPPassword", "alice-pw", "DurationSeconds", "99999999999999999999"), 400, "ValidationError"},
		{"session policy", form("LDAPUsername", "alice", "LDAPPassword", "alice-pw", "Policy", "{"), 400, "MalformedPolicyDocument"},
		{"unmapped user", form("LDAPUsername", "dave", "LDAPPassword", "dave-pw"), 403, "AccessDenied"},
		{"wrong password", form("LDAPUsername", "alice", "LDAPPassword", "hunter2-secret"), 403, "AccessDenied"},
		{"NUL in name", form("LDAPUsername", "al\x00ice", "LDAPPassword", "x"), 403, "AccessDenied"},
	}
	for _, tc := range tests {
		if status, code, body := post(h, "192.0.2.1", tc.form); status != tc.status || code != tc.code {
			t.Errorf("%s: %d %s, want %d %s\n%s", tc.name, status, code, tc.status, tc.code, body)
		}
	}
	status, _, body := post(h, "192.0.2.1", form("LDAPUsername", "alice", "LDAPPassword", "alice-pw", "DurationSeconds", "900"))
	if status != 200 {
		t.Fatalf("alice: %d %s", status, body)
	}
	var ok xmlLDAPResponse
	if err := xml.Unmarshal([]byte(body), &ok); err != nil || ok.Result.Credentials.SessionToken == "" || ok.Result.SubjectFromToken != "uid=alice,dc=example,dc=org" {
		t.Fatalf("answer: %v %s", err, body)
	}
	id, err := ids.LookupSession(ok.Result.Credentials.AccessKeyID, ok.Result.Credentials.SessionToken)
	if err != nil || id.Refusal != nil || id.DisplayName != "alice" {
		t.Fatalf("session: %+v %v", id, err)
	}
	if strings.Contains(logs.String(), "hunter2-secret") || strings.Contains(logs.String(), "alice-pw") {
		t.Fatalf("a password is in the log:\n%s", logs.String())
	}

	// Failed sign-ins are throttled per source address.
	for range 10 {
		post(h, "198.51.100.7", form("LDAPUsername", "alice", "LDAPPassword", "wrong"))
	}
	if status, code, _ := post(h, "198.51.100.7", form("LDAPUsername", "alice", "LDAPPassword", "alice-pw")); status != 400 || code != "Throttling" {
		t.Fatalf("after 10 failures: %d %s", status, code)
	}
	if status, _, _ := post(h, "198.51.100.8", form("LDAPUsername", "alice", "LDAPPassword", "alice-pw")); status != 200 {
		t.Fatalf("another address: %d", status)
	}

	// The directory is down: a clear error, not a denial.
	dir.down = true
	if status, code, _ := post(h, "192.0.2.2", form("LDAPUsername", "alice", "LDAPPassword", "alice-pw")); status != 400 || code != "IDPCommunicationError" {
		t.Fatalf("directory down: %d %s", status, code)
	}
	// A password in the URL is refused (the body is where it belongs).
	r := httptest.NewRequest("POST", "http://localhost/?LDAPPassword=alice-pw", strings.NewReader(form("LDAPUsername", "alice").Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 400 || !strings.Contains(w.Body.String(), "ValidationError") {
		t.Fatalf("password in the URL: %d %s", w.Code, w.Body.String())
	}
	// Not configured.
	plain := &Handler{Verifier: v, Issuer: ids}
	if status, code, _ := post(plain, "192.0.2.3", form("LDAPUsername", "alice", "LDAPPassword", "alice-pw")); status != 400 || code != "InvalidAction" {
		t.Fatalf("no LDAP: %d %s", status, code)
	}
	// An unsigned call of another action is refused as unsigned.
	if status, code, _ := post(h, "192.0.2.4", url.Values{"Action": {"AssumeRole"}, "Version": {"2011-06-15"}}); status != 403 || code != "AccessDenied" {
		t.Fatalf("unsigned AssumeRole: %d %s", status, code)
	}
}

// TestLimiterStats: failures, throttled refusals and throttled sources
// are counted (the Prometheus metrics of cmd/shardstore).
func TestLimiterStats(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	l := &Limiter{Now: func() time.Time { return now }}
	for range loginFailures {
		l.Failed("192.0.2.1")
	}
	l.Failed("192.0.2.2")
	if !l.Refused("192.0.2.1") || !l.Refused("192.0.2.1") || l.Refused("192.0.2.2") {
		t.Fatal("throttle")
	}
	if st := l.Stats(); st.Failed != loginFailures+1 || st.Refused != 2 || st.Throttled != 1 {
		t.Fatalf("%+v", st)
	}
	now = now.Add(loginWindow + time.Second)
	if st := l.Stats(); st.Failed != loginFailures+1 || st.Refused != 2 || st.Throttled != 0 {
		t.Fatalf("after the window: %+v", st)
	}
}
