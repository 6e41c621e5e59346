package console

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/iam"
	"github.com/shardstore/shardstore/internal/ldapidp"
	"github.com/shardstore/shardstore/internal/s3api"
	"github.com/shardstore/shardstore/internal/sts"
)

// tableDirectory signs in users of a table (password: name + "-pw").
// The real directory is exercised by the e2e tests against slapd
// (TestLDAPConsoleInBrowser); this pins the console's side.
type tableDirectory struct {
	mu    sync.Mutex
	users map[string]ldapidp.Identity
	down  bool
}

func (d *tableDirectory) Lookup(_ context.Context, name string) (ldapidp.Identity, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down {
		return ldapidp.Identity{}, ldapidp.ErrUnavailable
	}
	id, ok := d.users[name]
	if !ok {
		return ldapidp.Identity{}, ldapidp.ErrInvalidCredentials
	}
	return id, nil
}

func (d *tableDirectory) Authenticate(ctx context.Context, name, password string) (ldapidp.Identity, error) {
	id, err := d.Lookup(ctx, name)
	if err == nil && password != name+"-pw" {
		return ldapidp.Identity{}, ldapidp.ErrInvalidCredentials
	}
	return id, err
}

func TestDirectoryLogin(t *testing.T) {
	dir := t.TempDir()
	eng, err := engine.New(engine.Config{Paths: []string{filepath.Join(dir, "d1"), filepath.Join(dir, "d2"),
		filepath.Join(dir, "d3"), filepath.Join(dir, "d4")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	root := auth.Identity{AccessKey: rootKey, SecretKey: rootSecret, DisplayName: "root", Root: true}
	users := auth.NewUsers(root)
	d := &tableDirectory{users: map[string]ldapidp.Identity{"alice": {Username: "alice", DN: "uid=alice,dc=example,dc=org"}}}
	ids, err := iam.Open(context.Background(), iam.Options{Backend: eng, Root: root, Directory: d})
	if err != nil {
		t.Fatal(err)
	}
	if err := ids.AttachLDAPPolicies(context.Background(), "root", "uid=alice,dc=example,dc=org", []string{"readonly"}, true); err != nil {
		t.Fatal(err)
	}
	if err := eng.MakeBucket(context.Background(), "shared", engine.BucketOptions{Owner: rootKey}); err != nil {
		t.Fatal(err)
	}
	verifier := &auth.Verifier{Users: users, Identities: ids}
	deny := func(*http.Request, string, func(admin.Actor) bool) (admin.Actor, error) {
		return admin.Actor{}, admin.ErrDenied
	}
	srv, err := s3api.New(s3api.Config{Store: eng, Auth: s3api.SigV4{Verifier: verifier}, Admin: admin.NewHandler(eng, deny, ids),
		STS: &sts.Handler{Verifier: verifier, Issuer: ids, LDAP: d, LDAPIssuer: ids}})
	if err != nil {
		t.Fatal(err)
	}
	s3 := httptest.NewServer(srv)
	t.Cleanup(s3.Close)
	c, err := New(Config{S3: srv, ShareEndpoint: s3.URL, LDAP: true})
	if err != nil {
		t.Fatal(err)
	}
	cs := httptest.NewServer(c)
	t.Cleanup(cs.Close)
	r := &rig{t: t, eng: eng, s3: s3, console: cs}

	b := r.browser()
	if code, m := b.json("GET", "/api/login-options", nil); code != 200 || m["ldap"] != true {
		t.Fatalf("login options: %d %v", code, m)
	}
	if code, m := b.json("POST", "/api/login", map[string]string{"ldapUsername": "alice", "ldapPassword": "wrong"}); code != http.StatusUnauthorized || m["code"] != "InvalidCredentials" {
		t.Fatalf("wrong password: %d %v", code, m)
	}
	if code, m := b.json("POST", "/api/login", map[string]string{"ldapUsername": "alice"}); code != http.StatusBadRequest {
		t.Fatalf("no password: %d %v", code, m)
	}
	code, m := b.json("POST", "/api/login", map[string]string{"ldapUsername": "alice", "ldapPassword": "alice-pw"})
	if code != 200 || m["user"] != "alice" {
		t.Fatalf("alice: %d %v", code, m)
	}
	b.csrf = m["csrf"].(string)
	if code, out, _ := b.do("GET", "/api/buckets", nil, nil); code != 200 || !strings.Contains(string(out), "shared") {
		t.Fatalf("alice lists buckets: %d %s", code, out)
	}
	if code, m := b.json("POST", "/api/buckets", map[string]string{"name": "alices"}); code != http.StatusForbidden {
		t.Fatalf("alice creates a bucket with readonly: %d %v", code, m)
	}
	r.put("shared", "doc.txt", "hello")
	code, m = b.json("POST", "/api/share", map[string]any{"bucket": "shared", "key": "doc.txt", "expiresSeconds": 600})
	link, _ := m["url"].(string)
	if code != 200 || !strings.Contains(link, "X-Amz-Security-Token=") {
		t.Fatalf("share link of a directory session: %d %v", code, m)
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello" {
		t.Fatalf("share link: %d %s", resp.StatusCode, body)
	}
	// alice leaves the directory: the console session is refused.
	d.mu.Lock()
	delete(d.users, "alice")
	d.mu.Unlock()
	if code, out, _ := b.do("GET", "/api/buckets", nil, nil); code < 400 || !strings.Contains(string(out), "InvalidAccessKeyId") {
		t.Fatalf("alice removed: %d %s", code, out)
	}
	// The directory is down: the login says so.
	d.mu.Lock()
	d.down = true
	d.mu.Unlock()
	if code, m := r.browser().json("POST", "/api/login", map[string]string{"ldapUsername": "alice", "ldapPassword": "alice-pw"}); code != http.StatusServiceUnavailable || m["code"] != "DirectoryUnavailable" {
		t.Fatalf("directory down: %d %v", code, m)
	}
}
