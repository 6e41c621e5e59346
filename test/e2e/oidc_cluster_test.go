package e2e

import (
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/oidcidp/oidctest"
)

// TestOIDCConsoleLoginAcrossNodes: on a 2-node cluster, a console login
// started on node 1 is sent back by the real provider to node 2 (as a
// load balancer may do: the provider's REDIRECT_URI is node 2's console,
// the browser's cookie is carried over as one host name would carry it),
// and node 2 completes it: the pending login is sealed in the browser's
// cookie with the cluster's identity key, not kept in node 1's memory.
// A replay of the same callback on node 2 is refused.
func TestOIDCConsoleLoginAcrossNodes(t *testing.T) {
	// Each node's console on the same port of its own loopback address
	// (127.0.0.1, 127.0.0.2): the port is registered with the provider
	// before the nodes start.
	var port string
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		l2, err := net.Listen("tcp", "127.0.0.2:"+p)
		l.Close()
		if err == nil {
			l2.Close()
			port = p
			break
		}
	}
	if port == "" {
		t.Fatal("no port free on both 127.0.0.1 and 127.0.0.2")
	}
	node1, node2 := "http://127.0.0.1:"+port, "http://127.0.0.2:"+port
	callbackURL := node2 + "/api/oidc/callback"
	op := oidctest.Start(t, callbackURL)
	t.Setenv("MINIO_IDENTITY_OPENID_CONFIG_URL", op.ConfigURL())
	t.Setenv("MINIO_IDENTITY_OPENID_CLIENT_ID", oidctest.ClientID)
	t.Setenv("MINIO_IDENTITY_OPENID_CLIENT_SECRET", oidctest.ClientSecret)
	t.Setenv("MINIO_IDENTITY_OPENID_REDIRECT_URI", callbackURL)
	dir := t.TempDir()
	s := startClusterIn(t, dir, filepath.Join(dir, "drive"), []string{"server", "--console-address", "127.0.0.{node}:" + port}, 2)
	s.consoleURL(t)
	s.peers[0].consoleURL(t)

	noRedirect := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(node1 + "/api/oidc/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var pending *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == "shardstore_oidc" {
			pending = ck
		}
	}
	authURL := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || pending == nil || !strings.HasPrefix(authURL, op.Issuer) {
		t.Fatalf("login on node 1: %d %s", resp.StatusCode, authURL)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), callbackURL) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	back, err := op.Authorize(browser, authURL, "alice", callbackURL)
	if err != nil {
		t.Fatalf("alice at the provider: %v", err)
	}
	callback := func() *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", back.String(), nil)
		req.AddCookie(&http.Cookie{Name: pending.Name, Value: pending.Value})
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp = callback()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/#/buckets" {
		t.Fatalf("callback on node 2: %d %s\n%s", resp.StatusCode, loc, s.stderr)
	}
	sessionReq, _ := http.NewRequest("GET", node2+"/api/session", nil)
	for _, ck := range resp.Cookies() {
		sessionReq.AddCookie(ck)
	}
	sresp, err := noRedirect.Do(sessionReq)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(sresp.Body)
	sresp.Body.Close()
	if sresp.StatusCode != http.StatusOK || !strings.Contains(string(body), "alice") {
		t.Fatalf("alice's session on node 2: %d %s", sresp.StatusCode, body)
	}
	if loc := callback().Header.Get("Location"); !strings.Contains(loc, "sso_error=InvalidState") {
		t.Fatalf("replayed callback on node 2: %s", loc)
	}
}
