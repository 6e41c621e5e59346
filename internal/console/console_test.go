package console

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/iam"
	"github.com/shardstore/shardstore/internal/kms"
	"github.com/shardstore/shardstore/internal/s3api"
	"github.com/shardstore/shardstore/internal/sealing"
	"github.com/shardstore/shardstore/internal/sse"
)

const (
	rootKey, rootSecret = "console-root", "console-root-secret"
	bobKey, bobSecret   = "console-bob", "console-bob-secret"
)

// rig is a real engine on temporary drives, the real S3 server (also on
// a loopback port, for share links) and the console in front of it.
type rig struct {
	t       *testing.T
	eng     *engine.Engine
	s3      *httptest.Server
	console *httptest.Server
}

func newRig(t *testing.T) *rig { t.Helper(); return newRigWith(t, nil) }

// newRigWith is newRig with the S3 server's configuration adjusted by
// adjust (a KMS, say).
func newRigWith(t *testing.T, adjust func(*s3api.Config)) *rig {
	t.Helper()
	dir := t.TempDir()
	eng, err := engine.New(engine.Config{Paths: []string{filepath.Join(dir, "d1"), filepath.Join(dir, "d2"),
		filepath.Join(dir, "d3"), filepath.Join(dir, "d4")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	rootID := auth.Identity{AccessKey: rootKey, SecretKey: rootSecret, DisplayName: "root", Root: true}
	users := auth.NewUsers(rootID)
	if err := users.Add(auth.Identity{AccessKey: bobKey, SecretKey: bobSecret, DisplayName: "bob"}); err != nil {
		t.Fatal(err)
	}
	ids, err := iam.Open(context.Background(), iam.Options{Backend: eng, Root: rootID,
		Taken: func(ak string) bool { _, ok := users.Lookup(ak); return ok }})
	if err != nil {
		t.Fatal(err)
	}
	verifier := &auth.Verifier{Users: users, Identities: ids}
	// Admin calls: root only (the server's own rule also lets identities
	// with admin policies through; that is the server's business).
	authorize := func(r *http.Request, action string, _ func(admin.Actor) bool) (admin.Actor, error) {
		res, err := s3api.SigV4{Verifier: verifier}.Authenticate(r)
		if err != nil {
			return admin.Actor{}, err
		}
		if !res.Caller.Root {
			return admin.Actor{Name: res.Caller.AccessKey}, fmt.Errorf("%w: %s", admin.ErrDenied, action)
		}
		return admin.Actor{Name: "root", Can: func(string) bool { return true }}, nil
	}
	cfg := s3api.Config{Store: eng, Auth: s3api.SigV4{Verifier: verifier}, Admin: admin.NewHandler(eng, authorize, ids)}
	if adjust != nil {
		adjust(&cfg)
	}
	srv, err := s3api.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s3 := httptest.NewServer(srv)
	t.Cleanup(s3.Close)
	c, err := New(Config{S3: srv, ShareEndpoint: s3.URL, Usage: eng.BucketUsage, Metrics: srv.Registry()})
	if err != nil {
		t.Fatal(err)
	}
	cs := httptest.NewServer(c)
	t.Cleanup(cs.Close)
	return &rig{t: t, eng: eng, s3: s3, console: cs}
}

// browser is one cookie jar talking to the console.
type browser struct {
	r    *rig
	c    *http.Client
	csrf string
}

func (r *rig) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{r: r, c: &http.Client{Jar: jar}}
}

// do sends a request with the browser's cookies and CSRF token (when it
// has one) and returns status and body.
func (b *browser) do(method, path string, body io.Reader, hdr map[string]string) (int, []byte, http.Header) {
	b.r.t.Helper()
	req, err := http.NewRequest(method, b.r.console.URL+path, body)
	if err != nil {
		b.r.t.Fatal(err)
	}
	if b.csrf != "" {
		req.Header.Set("X-CSRF-Token", b.csrf)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.r.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out, resp.Header
}

func (b *browser) json(method, path string, v any) (int, map[string]any) {
	b.r.t.Helper()
	var body io.Reader
	if v != nil {
		j, _ := json.Marshal(v)
		body = bytes.NewReader(j)
	}
	code, out, _ := b.do(method, path, body, map[string]string{"Content-Type": "application/json"})
	var m map[string]any
	_ = json.Unmarshal(out, &m)
	return code, m
}

func (b *browser) login(access, secret string) {
	b.r.t.Helper()
	code, m := b.json("POST", "/api/login", map[string]string{"accessKey": access, "secretKey": secret})
	if code != 200 {
		b.r.t.Fatalf("login as %s: %d %v", access, code, m)
	}
	b.csrf = m["csrf"].(string)
}

func (r *rig) bucketExists(name string) bool {
	_, err := r.eng.BucketInfo(context.Background(), name)
	return err == nil
}

func (r *rig) put(bucket, key, body string) {
	r.t.Helper()
	if _, err := r.eng.PutObject(context.Background(), bucket, key, strings.NewReader(body), int64(len(body)), engine.PutOptions{}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) get(bucket, key string) (string, error) {
	or, err := r.eng.GetObject(context.Background(), bucket, key, engine.GetOptions{})
	if err != nil {
		return "", err
	}
	defer or.Close()
	b, err := io.ReadAll(or)
	return string(b), err
}

func TestLoginCookieAndLogout(t *testing.T) {
	r := newRig(t)
	b := r.browser()
	code, m := b.json("POST", "/api/login", map[string]string{"accessKey": rootKey, "secretKey": "wrong"})
	if code != 401 || m["code"] != "InvalidCredentials" {
		t.Fatalf("wrong secret: %d %v", code, m)
	}
	if code, _ := b.json("GET", "/api/session", nil); code != 401 {
		t.Fatalf("session after a failed login: %d", code)
	}
	req, _ := http.NewRequest("POST", r.console.URL+"/api/login", strings.NewReader(`{"accessKey":"`+rootKey+`","secretKey":"`+rootSecret+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ck := resp.Header.Get("Set-Cookie")
	for _, want := range []string{cookieName + "=", "HttpOnly", "SameSite=Strict", "Max-Age=43200", "Path=/"} {
		if !strings.Contains(ck, want) {
			t.Errorf("session cookie %q lacks %q", ck, want)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP = %q", csp)
	}

	b.login(rootKey, rootSecret)
	code, m = b.json("GET", "/api/session", nil)
	if code != 200 || m["user"] != rootKey || m["csrf"] != b.csrf || m["ops"] != true {
		t.Fatalf("session: %d %v", code, m)
	}
	if code, m := b.json("POST", "/api/logout", nil); code != 200 {
		t.Fatalf("logout: %d %v", code, m)
	}
	if code, _ := b.json("GET", "/api/buckets", nil); code != 401 {
		t.Fatalf("buckets after logout: %d, want 401", code)
	}
}

// TestChangesNeedSessionCSRFAndSameOrigin: without a session, with a
// forged or missing CSRF token, or from another origin, nothing changes.
func TestChangesNeedSessionCSRFAndSameOrigin(t *testing.T) {
	r := newRig(t)
	if err := r.eng.MakeBucket(context.Background(), "keep", engine.BucketOptions{Owner: rootKey}); err != nil {
		t.Fatal(err)
	}
	r.put("keep", "obj", "precious")
	create := func(b *browser, hdr map[string]string) (int, string) {
		hdr["Content-Type"] = "application/json"
		code, out, _ := b.do("POST", "/api/buckets", strings.NewReader(`{"name":"made"}`), hdr)
		return code, string(out)
	}
	del := func(b *browser, hdr map[string]string) int {
		hdr["Content-Type"] = "application/json"
		code, _, _ := b.do("POST", "/api/delete", strings.NewReader(`{"bucket":"keep","keys":["obj"]}`), hdr)
		return code
	}

	anon := r.browser()
	if code, out := create(anon, map[string]string{}); code != 401 {
		t.Errorf("no session: %d %s", code, out)
	}
	if code := del(anon, map[string]string{}); code != 401 {
		t.Errorf("delete without session: %d", code)
	}
	if code, _, _ := anon.do("PUT", "/api/upload?bucket=keep&key=obj", strings.NewReader("overwritten"), nil); code != 401 {
		t.Errorf("upload without session: %d", code)
	}

	b := r.browser()
	b.login(rootKey, rootSecret)
	if code, out := create(b, map[string]string{"X-CSRF-Token": ""}); code != 403 || !strings.Contains(out, "InvalidCSRFToken") {
		t.Errorf("missing CSRF token: %d %s", code, out)
	}
	if code, out := create(b, map[string]string{"X-CSRF-Token": "forged-" + b.csrf}); code != 403 {
		t.Errorf("forged CSRF token: %d %s", code, out)
	}
	if code := del(b, map[string]string{"X-CSRF-Token": strings.Repeat("A", len(b.csrf))}); code != 403 {
		t.Errorf("delete with a forged token: %d", code)
	}
	if code, _, _ := b.do("PUT", "/api/upload?bucket=keep&key=obj", strings.NewReader("overwritten"), map[string]string{"X-CSRF-Token": "x"}); code != 403 {
		t.Errorf("upload with a forged token: %d", code)
	}
	if code, out := create(b, map[string]string{"Origin": "http://evil.example"}); code != 403 || !strings.Contains(out, "CrossOrigin") {
		t.Errorf("cross-origin with the right token: %d %s", code, out)
	}
	if code, out := create(b, map[string]string{"Sec-Fetch-Site": "cross-site"}); code != 403 {
		t.Errorf("Sec-Fetch-Site cross-site: %d %s", code, out)
	}
	if r.bucketExists("made") {
		t.Fatal("a refused request created the bucket")
	}
	if got, err := r.get("keep", "obj"); err != nil || got != "precious" {
		t.Fatalf("a refused request changed the object: %q %v", got, err)
	}
	// The same session with its own token, from the console's page, works.
	if code, out := create(b, map[string]string{"Origin": r.console.URL, "Sec-Fetch-Site": "same-origin"}); code != 200 {
		t.Fatalf("a proper request: %d %s", code, out)
	}
	if !r.bucketExists("made") {
		t.Fatal("bucket not created")
	}
	// A login from another site's page is refused too (login CSRF).
	code, out, _ := anon.do("POST", "/api/login", strings.NewReader(`{"accessKey":"`+rootKey+`","secretKey":"`+rootSecret+`"}`),
		map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"})
	if code != 403 {
		t.Errorf("cross-origin login: %d %s", code, out)
	}
	code, out, _ = anon.do("POST", "/api/login", strings.NewReader("accessKey="+rootKey),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if code != 415 {
		t.Errorf("form-encoded login: %d %s", code, out)
	}
}

// TestAnotherUsersSession: a session acts only as its own identity; a
// user's cookie with another user's token, or a user's own session
// reaching for what the user may not touch, changes nothing.
func TestAnotherUsersSession(t *testing.T) {
	r := newRig(t)
	if err := r.eng.MakeBucket(context.Background(), "rootonly", engine.BucketOptions{Owner: rootKey}); err != nil {
		t.Fatal(err)
	}
	r.put("rootonly", "secret.txt", "root data")
	root, bob := r.browser(), r.browser()
	root.login(rootKey, rootSecret)
	bob.login(bobKey, bobSecret)

	// bob's cookie with root's CSRF token.
	mixed := &browser{r: r, c: bob.c, csrf: root.csrf}
	if code, _ := mixed.json("POST", "/api/delete", map[string]any{"bucket": "rootonly", "keys": []string{"secret.txt"}}); code != 403 {
		t.Errorf("bob's cookie with root's token: %d", code)
	}
	// bob's own session: S3 refuses him root's bucket.
	code, m := bob.json("POST", "/api/delete", map[string]any{"bucket": "rootonly", "keys": []string{"secret.txt"}})
	if code == 200 {
		errs, _ := m["errors"].([]any)
		if len(errs) != 1 || errs[0].(map[string]any)["code"] != "AccessDenied" {
			t.Errorf("bob deleting root's object: %d %v", code, m)
		}
	} else if m["code"] != "AccessDenied" {
		t.Errorf("bob deleting root's object: %d %v", code, m)
	}
	if code, m := bob.json("GET", "/api/objects?bucket=rootonly", nil); code != 403 || m["code"] != "AccessDenied" {
		t.Errorf("bob listing root's bucket: %d %v", code, m)
	}
	if code, _, _ := bob.do("GET", "/api/download?bucket=rootonly&key=secret.txt", nil, nil); code != 403 {
		t.Errorf("bob downloading root's object: %d", code)
	}
	if code, m := bob.json("POST", "/api/share", map[string]any{"bucket": "rootonly", "key": "secret.txt"}); code != 403 {
		t.Errorf("bob sharing root's object: %d %v", code, m)
	}
	if code, m := bob.json("DELETE", "/api/buckets?bucket=rootonly", nil); code != 403 {
		t.Errorf("bob deleting root's bucket: %d %v", code, m)
	}
	// Operations are for admins.
	if _, m := bob.json("GET", "/api/session", nil); m["ops"] != false {
		t.Errorf("bob's session offers operations: %v", m)
	}
	for _, p := range []string{"/api/ops/status", "/api/ops/metrics", "/api/ops/errors"} {
		if code, _ := bob.json("GET", p, nil); code != 403 {
			t.Errorf("bob GET %s: %d, want 403", p, code)
		}
	}
	if code, _ := bob.json("POST", "/api/ops/heal", nil); code != 403 {
		t.Errorf("bob starting a heal: %d", code)
	}
	if got, err := r.get("rootonly", "secret.txt"); err != nil || got != "root data" {
		t.Fatalf("root's object changed: %q %v", got, err)
	}
	// bob's buckets list does not show root's bucket.
	_, m = bob.json("GET", "/api/buckets", nil)
	if bs, _ := m["buckets"].([]any); len(bs) != 0 {
		t.Errorf("bob sees buckets %v", bs)
	}
	// root can do all of it.
	if code, m := root.json("GET", "/api/ops/status", nil); code != 200 || m["layout"] == nil {
		t.Errorf("root ops status: %d %v", code, m)
	}
	// This rig's server has no notifier: the call reaches the admin API,
	// which says so (TestNotifyTargets has one).
	if code, _ := root.json("GET", "/api/ops/notify", nil); code != 501 {
		t.Errorf("root listing targets without a notifier: %d", code)
	}
	// A bucket's rules: none, and another's bucket is refused.
	if code, m := root.json("GET", "/api/bucket/notification?bucket=rootonly", nil); code != 200 || len(m["rules"].([]any)) != 0 {
		t.Errorf("root's bucket rules: %d %v", code, m)
	}
	if code, _ := bob.json("GET", "/api/bucket/notification?bucket=rootonly", nil); code != 403 {
		t.Errorf("bob reading root's bucket rules: %d", code)
	}
}

func TestLoginRateLimit(t *testing.T) {
	r := newRig(t)
	b := r.browser()
	for i := 0; i < loginFailures; i++ {
		if code, _ := b.json("POST", "/api/login", map[string]string{"accessKey": rootKey, "secretKey": "guess"}); code != 401 {
			t.Fatalf("failure %d: %d", i, code)
		}
	}
	if code, m := b.json("POST", "/api/login", map[string]string{"accessKey": rootKey, "secretKey": rootSecret}); code != 429 {
		t.Fatalf("login after %d failures: %d %v, want 429", loginFailures, code, m)
	}
}

// TestObjectsRoundTrip walks the object calls with a key S3 accepts and
// paths would not: upload, list, details, download, share, delete.
func TestObjectsRoundTrip(t *testing.T) {
	r := newRig(t)
	b := r.browser()
	b.login(rootKey, rootSecret)
	if code, m := b.json("POST", "/api/buckets", map[string]any{"name": "things", "versioning": true}); code != 200 {
		t.Fatalf("create: %d %v", code, m)
	}
	key := "dir//sub/../x?#%&+ y.html"
	q := url.Values{"bucket": {"things"}, "key": {key}}.Encode()
	body := "<script>alert(1)</script>"
	code, out, _ := b.do("PUT", "/api/upload?"+q, strings.NewReader(body), map[string]string{"Content-Type": "text/html"})
	if code != 200 {
		t.Fatalf("upload: %d %s", code, out)
	}
	if got, err := r.get("things", key); err != nil || got != body {
		t.Fatalf("stored %q %v", got, err)
	}
	code, m := b.json("GET", "/api/objects?bucket=things&prefix=", nil)
	if code != 200 || fmt.Sprint(m["prefixes"]) != "[dir/]" {
		t.Fatalf("folder listing: %d %v", code, m)
	}
	code, m = b.json("GET", "/api/objects?bucket=things&prefix=dir/&flat=1", nil)
	objs, _ := m["objects"].([]any)
	if code != 200 || len(objs) != 1 || objs[0].(map[string]any)["key"] != key {
		t.Fatalf("flat listing: %d %v", code, m)
	}
	code, m = b.json("GET", "/api/object?"+q, nil)
	if code != 200 || m["key"] != key || m["contentType"] != "text/html" || m["size"] != float64(len(body)) {
		t.Fatalf("details: %d %v", code, m)
	}
	if vs, _ := m["versions"].([]any); len(vs) != 1 {
		t.Errorf("versions: %v", m["versions"])
	}
	code, out, h := b.do("GET", "/api/download?"+q, nil, nil)
	if code != 200 || string(out) != body {
		t.Fatalf("download: %d %q", code, out)
	}
	// An HTML object never renders in the console's origin.
	if h.Get("Content-Type") != "application/octet-stream" || !strings.HasPrefix(h.Get("Content-Disposition"), "attachment") ||
		!strings.Contains(h.Get("Content-Security-Policy"), "sandbox") || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("download headers: %v", h)
	}
	code, m = b.json("POST", "/api/share", map[string]any{"bucket": "things", "key": key, "expiresSeconds": 600})
	if code != 200 {
		t.Fatalf("share: %d %v", code, m)
	}
	link := m["url"].(string)
	if !strings.HasPrefix(link, r.s3.URL+"/things/") || !strings.Contains(link, "X-Amz-Expires=600") {
		t.Fatalf("share link %s", link)
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(got) != body {
		t.Fatalf("share link answered %d %q", resp.StatusCode, got)
	}
	if code, m := b.json("POST", "/api/share", map[string]any{"bucket": "things", "key": key, "expiresSeconds": 8 * 24 * 3600}); code != 400 {
		t.Errorf("8-day share: %d %v", code, m)
	}
	code, m = b.json("POST", "/api/delete", map[string]any{"bucket": "things", "prefix": "dir/"})
	if code != 200 || fmt.Sprint(m["deleted"]) != "["+key+"]" {
		t.Fatalf("delete folder: %d %v", code, m)
	}
	if _, err := r.get("things", key); !errors.Is(err, engine.ErrObjectNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

// TestMultipartResume uploads parts, lists them as a resumed page would,
// sends the missing one and completes.
func TestMultipartResume(t *testing.T) {
	r := newRig(t)
	b := r.browser()
	b.login(rootKey, rootSecret)
	b.json("POST", "/api/buckets", map[string]any{"name": "big"})
	q := url.Values{"bucket": {"big"}, "key": {"f.bin"}}
	code, m := b.json("POST", "/api/multipart?"+q.Encode(), nil)
	if code != 200 {
		t.Fatalf("create: %d %v", code, m)
	}
	q.Set("uploadId", m["uploadId"].(string))
	p1 := bytes.Repeat([]byte("a"), 5<<20)
	p2 := []byte("tail")
	put := func(n int, data []byte) string {
		pq := url.Values{"partNumber": {fmt.Sprint(n)}}
		for k, v := range q {
			pq[k] = v
		}
		code, out, _ := b.do("PUT", "/api/multipart/part?"+pq.Encode(), bytes.NewReader(data), nil)
		if code != 200 {
			t.Fatalf("part %d: %d %s", n, code, out)
		}
		var r map[string]string
		json.Unmarshal(out, &r)
		return r["etag"]
	}
	e1 := put(1, p1)
	code, m = b.json("GET", "/api/multipart/parts?"+q.Encode(), nil)
	parts, _ := m["parts"].([]any)
	if code != 200 || len(parts) != 1 || parts[0].(map[string]any)["etag"] != e1 {
		t.Fatalf("parts: %d %v", code, m)
	}
	e2 := put(2, p2)
	code, m = b.json("POST", "/api/multipart/complete?"+q.Encode(), map[string]any{"parts": []map[string]any{
		{"partNumber": 1, "etag": e1}, {"partNumber": 2, "etag": e2}}})
	if code != 200 || !strings.HasSuffix(m["etag"].(string), `-2"`) {
		t.Fatalf("complete: %d %v", code, m)
	}
	if got, err := r.get("big", "f.bin"); err != nil || got != string(p1)+string(p2) {
		t.Fatalf("completed object wrong (%d bytes, %v)", len(got), err)
	}
}

func TestStaticAppAndHeaders(t *testing.T) {
	r := newRig(t)
	for _, p := range []string{"/", "/app.js", "/app.css", "/ops"} {
		resp, err := http.Get(r.console.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: %d %v", p, resp.StatusCode, resp.Header)
		}
	}
	resp, err := http.Post(r.console.URL+"/", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Errorf("POST /: %d", resp.StatusCode)
	}
}

// TestIdentitiesPassThrough: identity-store calls go to the admin API as
// the session's identity, which decides; nothing outside the identity
// calls is reachable that way.
func TestIdentitiesPassThrough(t *testing.T) {
	r := newRig(t)
	root, bob := r.browser(), r.browser()
	root.login(rootKey, rootSecret)
	bob.login(bobKey, bobSecret)
	code, m := root.json("POST", "/api/iam/users", map[string]string{"name": "carol"})
	if code != http.StatusCreated || m["name"] != "carol" || m["secretKey"] == "" {
		t.Fatalf("root creates a user: %d %v", code, m)
	}
	if code, _ := bob.json("POST", "/api/iam/users", map[string]string{"name": "mallory"}); code != http.StatusForbidden {
		t.Errorf("bob creates a user: %d, want 403", code)
	}
	if code, _ := bob.json("GET", "/api/iam/users", nil); code != http.StatusForbidden {
		t.Errorf("bob GET users: %d, want 403", code)
	}
	code, out, _ := root.do("GET", "/api/iam/users", nil, nil)
	if code != 200 || !strings.Contains(string(out), `"carol"`) || strings.Contains(string(out), "mallory") {
		t.Errorf("users: %d %s", code, out)
	}
	if code, m := root.json("POST", "/api/iam/policies/attach", map[string]any{"policies": []string{"readonly"}, "user": "carol"}); code >= 300 {
		t.Errorf("attach: %d %v", code, m)
	}
	if code, m := root.json("POST", "/api/iam/heal", nil); code != http.StatusNotFound {
		t.Errorf("heal through the identity pass-through: %d %v", code, m)
	}
	mixed := &browser{r: r, c: bob.c, csrf: "wrong"}
	if code, _ := mixed.json("POST", "/api/iam/users", map[string]string{"name": "x"}); code != http.StatusForbidden {
		t.Errorf("forged token: %d", code)
	}
}

// TestCookieOverTLS: served over TLS, the session cookie is Secure and
// the pages ask the browser to keep to https (HSTS); over plain HTTP
// (loopback trials) neither is sent, since a Secure cookie would never
// come back.
func TestCookieOverTLS(t *testing.T) {
	r := newRig(t)
	tlsConsole := httptest.NewTLSServer(r.console.Config.Handler)
	t.Cleanup(tlsConsole.Close)
	for _, c := range []struct {
		url    string
		client *http.Client
		tls    bool
	}{{r.console.URL, http.DefaultClient, false}, {tlsConsole.URL, tlsConsole.Client(), true}} {
		req, _ := http.NewRequest("POST", c.url+"/api/login", strings.NewReader(`{"accessKey":"`+rootKey+`","secretKey":"`+rootSecret+`"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ck := resp.Header.Get("Set-Cookie")
		if resp.StatusCode != 200 || strings.Contains(ck, "; Secure") != c.tls {
			t.Errorf("tls %v: %d, cookie %q", c.tls, resp.StatusCode, ck)
		}
		if hsts := resp.Header.Get("Strict-Transport-Security"); (hsts == "max-age=31536000") != c.tls {
			t.Errorf("tls %v: Strict-Transport-Security %q", c.tls, hsts)
		}
	}
}

// TestObjectDetailsShowEncryption: the object panel says how an object is
// encrypted at rest, and still opens for an SSE-C object whose HEAD needs
// a key the console never has.
func TestObjectDetailsShowEncryption(t *testing.T) {
	secret, err := kms.ParseSecretKey("console-key:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	builtin, err := kms.NewBuiltin(secret)
	if err != nil {
		t.Fatal(err)
	}
	r := newRigWith(t, func(c *s3api.Config) { c.KMS, c.EncryptAll = builtin, true })
	b := r.browser()
	b.login(rootKey, rootSecret)
	if code, m := b.json("POST", "/api/buckets", map[string]any{"name": "sealed"}); code != 200 {
		t.Fatalf("create: %d %v", code, m)
	}
	q := url.Values{"bucket": {"sealed"}, "key": {"doc.txt"}}.Encode()
	if code, out, _ := b.do("PUT", "/api/upload?"+q, strings.NewReader("secret words"), map[string]string{"Content-Type": "text/plain"}); code != 200 {
		t.Fatalf("upload: %d %s", code, out)
	}
	code, m := b.json("GET", "/api/object?"+q, nil)
	if code != 200 || !strings.HasPrefix(fmt.Sprint(m["encryption"]), "SSE-S3") {
		t.Fatalf("details of an SSE-S3 object: %d %v", code, m)
	}
	// An SSE-C object, written as the S3 layer writes one.
	ck := bytes.Repeat([]byte{9}, 32)
	objectKey, sealed, hide, err := sealing.Keys{}.NewKey(context.Background(), "sealed", "mine", sealing.Request{Scheme: sealing.SchemeC, CustomerKey: ck})
	if err != nil {
		t.Fatal(err)
	}
	body := "customer data"
	if _, err := r.eng.PutObject(context.Background(), "sealed", "mine", strings.NewReader(body), int64(len(body)),
		engine.PutOptions{Encryption: &engine.Encryption{Cipher: sse.DefaultCipher(), Key: objectKey, Sealed: sealed, HideETag: hide}}); err != nil {
		t.Fatal(err)
	}
	code, m = b.json("GET", "/api/object?bucket=sealed&key=mine", nil)
	if code != 200 || !strings.HasPrefix(fmt.Sprint(m["encryption"]), "SSE-C") || m["size"] != float64(len(body)) || m["notes"] == nil {
		t.Fatalf("details of an SSE-C object: %d %v", code, m)
	}
}
