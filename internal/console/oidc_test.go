package console

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/iam"
	"github.com/shardstore/shardstore/internal/oidcidp"
	"github.com/shardstore/shardstore/internal/s3api"
	"github.com/shardstore/shardstore/internal/sts"
)

// fakeOP stands in for the provider's two calls and checks what the
// console sends: the PKCE verifier must hash to the challenge and the
// nonce must be the one of the login. The real provider is driven by
// test/e2e TestOIDCConsoleInBrowser.
type fakeOP struct {
	mu                      sync.Mutex
	state, nonce, challenge string
}

func (f *fakeOP) AuthCodeURL(_ context.Context, redirect, state, nonce, challenge string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state, f.nonce, f.challenge = state, nonce, challenge
	return "https://idp.example/auth?" + url.Values{"state": {state}, "redirect_uri": {redirect}}.Encode(), nil
}

func (f *fakeOP) Exchange(_ context.Context, code, verifier, _, nonce string) (string, oidcidp.Claims, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sum := sha256.Sum256([]byte(verifier))
	if code != "good-code" || base64.RawURLEncoding.EncodeToString(sum[:]) != f.challenge || nonce != f.nonce {
		return "", oidcidp.Claims{}, oidcidp.ErrInvalidToken
	}
	return "alice", oidcidp.Claims{Subject: "alice"}, nil
}

// tokenValidator accepts the token "alice" (the fake provider's).
type tokenValidator struct{}

func (tokenValidator) Validate(_ context.Context, tok, _ string) (oidcidp.Claims, error) {
	if tok != "alice" {
		return oidcidp.Claims{}, oidcidp.ErrInvalidToken
	}
	return oidcidp.Claims{Issuer: "https://idp.example", Subject: "alice", Policies: []string{"readonly"}}, nil
}

func TestOpenIDLoginFlow(t *testing.T) {
	dir := t.TempDir()
	eng, err := engine.New(engine.Config{Paths: []string{filepath.Join(dir, "d1"), filepath.Join(dir, "d2"),
		filepath.Join(dir, "d3"), filepath.Join(dir, "d4")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	root := auth.Identity{AccessKey: rootKey, SecretKey: rootSecret, DisplayName: "root", Root: true}
	ids, err := iam.Open(context.Background(), iam.Options{Backend: eng, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	verifier := &auth.Verifier{Users: auth.NewUsers(root), Identities: ids}
	deny := func(*http.Request, string, func(admin.Actor) bool) (admin.Actor, error) {
		return admin.Actor{}, admin.ErrDenied
	}
	srv, err := s3api.New(s3api.Config{Store: eng, Auth: s3api.SigV4{Verifier: verifier}, Admin: admin.NewHandler(eng, deny, ids),
		STS: &sts.Handler{Verifier: verifier, Issuer: ids, OIDC: tokenValidator{}, OIDCIssuer: ids}})
	if err != nil {
		t.Fatal(err)
	}
	op := &fakeOP{}
	c, err := New(Config{S3: srv, OpenID: []OpenIDProvider{{Name: "Example", Login: op}}})
	if err != nil {
		t.Fatal(err)
	}
	cs := httptest.NewServer(c)
	t.Cleanup(cs.Close)
	browser := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	get := func(hc *http.Client, path string) (int, string) {
		t.Helper()
		resp, err := hc.Get(cs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Location")
	}
	a, b := browser(), browser()
	code, loc := get(a, "/api/oidc/login")
	if code != http.StatusSeeOther || !strings.HasPrefix(loc, "https://idp.example/auth?") || !strings.Contains(loc, url.QueryEscape(cs.URL+"/api/oidc/callback")) {
		t.Fatalf("login: %d %s", code, loc)
	}
	state := op.state
	// Another browser cannot use (or use up) a's state.
	if _, loc := get(b, "/api/oidc/callback?code=good-code&state="+state); !strings.Contains(loc, "sso_error=InvalidState") {
		t.Fatalf("another browser's callback: %s", loc)
	}
	if _, loc := get(browser(), "/api/oidc/callback?code=bad-code&state=nope"); !strings.Contains(loc, "sso_error=InvalidState") {
		t.Fatalf("unknown state: %s", loc)
	}
	// Keep a's pending-login cookie, to replay the callback with it.
	cbURL, _ := url.Parse(cs.URL + "/api/oidc/callback")
	var pendingCookie string
	for _, ck := range a.Jar.Cookies(cbURL) {
		if ck.Name == oidcCookie {
			pendingCookie = ck.Value
		}
	}
	if pendingCookie == "" {
		t.Fatal("no pending-login cookie")
	}
	if _, loc := get(a, "/api/oidc/callback?code=good-code&state="+state); loc != "/#/buckets" {
		t.Fatalf("a's callback: %s", loc)
	}
	req, _ := http.NewRequest("GET", cs.URL+"/api/session", nil)
	resp, err := a.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("session after the callback: %d", resp.StatusCode)
	}
	// A state works once, even with its browser's cookie.
	replay, _ := http.NewRequest("GET", cs.URL+"/api/oidc/callback?code=good-code&state="+state, nil)
	replay.AddCookie(&http.Cookie{Name: oidcCookie, Value: pendingCookie})
	resp, err = browser().Do(replay)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); !strings.Contains(loc, "sso_error=InvalidState") {
		t.Fatalf("replayed state: %s", loc)
	}
	// A code the provider refuses ends in InvalidIdentityToken.
	get(a, "/api/oidc/login")
	if _, loc := get(a, "/api/oidc/callback?code=bad-code&state="+op.state); !strings.Contains(loc, "sso_error=InvalidIdentityToken") {
		t.Fatalf("refused code: %s", loc)
	}
}
