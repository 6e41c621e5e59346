package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/iam"
	"github.com/shardstore/shardstore/internal/s3api"
	"github.com/shardstore/shardstore/internal/sts"
)

// TestOpenIDLoginOnAnotherNode: two consoles sharing the identity store's
// sealing key (two nodes of a cluster) and two providers: a login started
// on one completes on the other, for the provider it was started with; a
// console with its own key (another deployment) refuses the cookie, and
// so do a tampered cookie, another state, an expired login and a replay
// on the node that took it.
func TestOpenIDLoginOnAnotherNode(t *testing.T) {
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
	other, first := &fakeOP{}, &fakeOP{}
	clock := time.Now()
	newConsole := func(sealer StateSealer) *httptest.Server {
		c, err := New(Config{S3: srv, StateSealer: sealer, Now: func() time.Time { return clock },
			OpenID: []OpenIDProvider{{Name: "First", Login: first}, {ID: "OTHER", Name: "Other", Login: other}}})
		if err != nil {
			t.Fatal(err)
		}
		cs := httptest.NewServer(c)
		t.Cleanup(cs.Close)
		return cs
	}
	nodeA, nodeB, elsewhere := newConsole(ids), newConsole(ids), newConsole(nil)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// login starts at node A and returns the state and the sealed cookie.
	login := func(provider *fakeOP, query string) (string, string) {
		t.Helper()
		resp, err := noRedirect.Get(nodeA.URL + "/api/oidc/login" + query)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var cookie string
		for _, ck := range resp.Cookies() {
			if ck.Name == oidcCookie {
				cookie = ck.Value
			}
		}
		provider.mu.Lock()
		defer provider.mu.Unlock()
		if resp.StatusCode != http.StatusSeeOther || cookie == "" || strings.Contains(cookie, provider.state) {
			t.Fatalf("login: %d, cookie %q", resp.StatusCode, cookie)
		}
		return provider.state, cookie
	}
	callback := func(node *httptest.Server, state, cookie string) (string, []*http.Cookie) {
		t.Helper()
		req, _ := http.NewRequest("GET", node.URL+"/api/oidc/callback?code=good-code&state="+url.QueryEscape(state), nil)
		req.AddCookie(&http.Cookie{Name: oidcCookie, Value: cookie})
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("Location"), resp.Cookies()
	}

	state, cookie := login(other, "?provider=OTHER")
	loc, cookies := callback(nodeB, state, cookie)
	if loc != "/#/buckets" {
		t.Fatalf("callback of OTHER's login on node B: %s", loc)
	}
	req, _ := http.NewRequest("GET", nodeB.URL+"/api/session", nil)
	for _, ck := range cookies {
		req.AddCookie(ck)
	}
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("session on node B: %v %v", resp, err)
	}
	if loc, _ := callback(nodeB, state, cookie); !strings.Contains(loc, "sso_error=InvalidState") {
		t.Fatalf("replay on node B: %s", loc)
	}

	state, cookie = login(first, "")
	tampered := []byte(cookie)
	tampered[len(tampered)/2] ^= 1
	for why, tc := range map[string]struct {
		node          *httptest.Server
		state, cookie string
	}{
		"another deployment's key": {elsewhere, state, cookie},
		"tampered cookie":          {nodeB, state, string(tampered)},
		"another state":            {nodeB, "x" + state, cookie},
		"no cookie":                {nodeB, state, ""},
		"huge cookie":              {nodeB, state, strings.Repeat("A", 3900)},
	} {
		if loc, _ := callback(tc.node, tc.state, tc.cookie); !strings.Contains(loc, "sso_error=InvalidState") {
			t.Errorf("%s: %s", why, loc)
		}
	}
	// The login is still good on node A (nothing above used it up).
	if loc, _ := callback(nodeA, state, cookie); loc != "/#/buckets" {
		t.Fatalf("the first provider's login on node A: %s", loc)
	}
	// Expired.
	state, cookie = login(first, "")
	clock = clock.Add(oidcPendingTTL + time.Second)
	if loc, _ := callback(nodeB, state, cookie); !strings.Contains(loc, "sso_error=InvalidState") {
		t.Fatalf("expired login: %s", loc)
	}
	// An unknown provider is refused at the start.
	resp, err := noRedirect.Get(nodeA.URL + "/api/oidc/login?provider=NOPE")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown provider: %d", resp.StatusCode)
	}
}

// FuzzTakeLogin: no cookie and state the console did not seal open as a
// pending login, and none panics.
func FuzzTakeLogin(f *testing.F) {
	sealer, err := newLocalSealer()
	if err != nil {
		f.Fatal(err)
	}
	c := &Console{sealer: sealer}
	good, err := c.sealLogin(loginState{State: "s", Expires: time.Now().Add(time.Hour).Unix()})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good[:len(good)-1]+"A", "s")
	f.Add("", "s")
	f.Add(strings.Repeat("A", 100), "")
	f.Fuzz(func(t *testing.T, cookie, state string) {
		if cookie == good {
			return
		}
		if _, ok := c.takeLogin(cookie, state, time.Now()); ok {
			t.Fatalf("took a login from cookie %q, state %q", cookie, state)
		}
	})
}
