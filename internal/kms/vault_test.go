package kms

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// These tests use a fake transit server for what a real one cannot be
// made to do on demand (answer 503, hang, redirect); bao_test.go runs the
// conformance suite against a real OpenBao.

const fakeToken = "s.fake-root-token-3f9a27c1"

func newTestVault(t *testing.T, cfg VaultConfig) *Vault {
	t.Helper()
	if cfg.DefaultKey == "" {
		cfg.DefaultKey = "k"
	}
	if cfg.Token == "" && cfg.AppRoleID == "" {
		cfg.Token = fakeToken
	}
	v, err := NewVault(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// answer is a canned reply of the fake server.
type answer struct {
	status int
	body   string
}

func fakeVault(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func reply(w http.ResponseWriter, a answer) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.body)
}

func TestVaultHostileKeyNames(t *testing.T) {
	srv, requests := fakeVault(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request reached the server: %s %s", r.Method, r.URL.RawPath)
		reply(w, answer{500, `{"errors":["no"]}`})
	})
	v := newTestVault(t, VaultConfig{Endpoint: srv.URL})
	ctx := context.Background()
	ct := []byte("vault:v1:AAAA")
	for _, name := range hostileKeyNames {
		t.Run(fmt.Sprintf("%.20q", name), func(t *testing.T) {
			if _, err := v.GenerateKey(ctx, name, nil); !errors.Is(err, ErrKeyNotFound) {
				t.Errorf("GenerateKey = %v; want ErrKeyNotFound", err)
			}
			if _, err := v.Decrypt(ctx, name, ct, nil); !errors.Is(err, ErrKeyNotFound) {
				t.Errorf("Decrypt = %v; want ErrKeyNotFound", err)
			}
			if _, err := v.Rewrap(ctx, name, ct, nil); !errors.Is(err, ErrKeyNotFound) {
				t.Errorf("Rewrap = %v; want ErrKeyNotFound", err)
			}
			err := v.CreateKey(ctx, name)
			if err == nil || errors.Is(err, ErrKeyExists) || errors.Is(err, ErrKeyNotFound) {
				t.Errorf("CreateKey = %v; want an invalid-name error", err)
			}
		})
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("%d requests reached the server", n)
	}
	// A hostile default key is refused up front.
	for _, name := range hostileKeyNames {
		if _, err := NewVault(VaultConfig{Endpoint: srv.URL, DefaultKey: name, Token: fakeToken}); err == nil {
			t.Errorf("NewVault accepted default key %q", name)
		}
	}
}

func TestVaultRequests(t *testing.T) {
	type seen struct {
		method, path, token, namespace string
		body                           map[string]any
	}
	var mu sync.Mutex
	var got []seen
	srv, _ := fakeVault(t, func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.EscapedPath(), r.Header.Get("X-Vault-Token"), r.Header.Get("X-Vault-Namespace"), body})
		mu.Unlock()
		switch {
		case strings.Contains(r.URL.Path, "/datakey/plaintext/"):
			reply(w, answer{200, `{"data":{"plaintext":"I04Zd6dktP3SXG8IqDiw+mERF+QTy63Pz6qnbgswVWI=","ciphertext":"vault:v1:abc"}}`})
		case strings.Contains(r.URL.Path, "/decrypt/"):
			reply(w, answer{200, `{"data":{"plaintext":"I04Zd6dktP3SXG8IqDiw+mERF+QTy63Pz6qnbgswVWI="}}`})
		case strings.Contains(r.URL.Path, "/rewrap/"):
			reply(w, answer{200, `{"data":{"ciphertext":"vault:v2:def"}}`})
		case r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/keys/new.key"):
			reply(w, answer{404, `{"errors":[]}`})
		case r.Method == "GET":
			reply(w, answer{200, `{"data":{"supports_encryption":true,"supports_decryption":true,"latest_version":2}}`})
		default:
			reply(w, answer{200, `{}`})
		}
	})
	v := newTestVault(t, VaultConfig{Endpoint: srv.URL + "/", Mount: "kms/transit", Namespace: "team-a/prod", DefaultKey: "sse"})
	ctx := context.Background()
	kc := Context{"bucket": "b"}
	dk, err := v.GenerateKey(ctx, "sse", kc)
	if err != nil || len(dk.Plaintext) != 32 || string(dk.Ciphertext) != "vault:v1:abc" || dk.KeyID != "sse" {
		t.Fatalf("GenerateKey = %+v, %v", dk, err)
	}
	if _, err := v.Decrypt(ctx, "sse", dk.Ciphertext, kc); err != nil {
		t.Fatal(err)
	}
	if ct, err := v.Rewrap(ctx, "sse", dk.Ciphertext, kc); err != nil || string(ct) != "vault:v2:def" {
		t.Fatalf("Rewrap = %q, %v", ct, err)
	}
	if err := v.CreateKey(ctx, "new.key"); err != nil {
		t.Fatal(err)
	}
	if st := v.Status(ctx); !st.OK || st.Endpoint != srv.URL || st.Kind != "vault" || st.DefaultKey != "sse" {
		t.Fatalf("Status = %+v", st)
	}
	want := []string{
		"POST /v1/kms/transit/datakey/plaintext/sse",
		"POST /v1/kms/transit/decrypt/sse",
		"GET /v1/kms/transit/keys/sse", // the newest version: a v2 ciphertext would come back as it is
		"POST /v1/kms/transit/rewrap/sse",
		"GET /v1/kms/transit/keys/new.key",
		"POST /v1/kms/transit/keys/new.key",
		"GET /v1/kms/transit/keys/sse",
	}
	if len(got) != len(want) {
		t.Fatalf("requests %+v; want %v", got, want)
	}
	for i, s := range got {
		if s.method+" "+s.path != want[i] {
			t.Errorf("request %d = %s %s; want %s", i, s.method, s.path, want[i])
		}
		if s.token != fakeToken || s.namespace != "team-a/prod" {
			t.Errorf("request %d token %q namespace %q", i, s.token, s.namespace)
		}
		// Context is never sent (see Vault).
		if _, ok := s.body["context"]; ok {
			t.Errorf("request %d sent a context", i)
		}
	}
	if got[5].body["type"] != "aes256-gcm96" {
		t.Errorf("CreateKey body %v", got[5].body)
	}
	if got[1].body["ciphertext"] != "vault:v1:abc" {
		t.Errorf("Decrypt body %v", got[1].body)
	}
}

func TestVaultErrorMapping(t *testing.T) {
	type op func(v *Vault) error
	ctx := context.Background()
	ct := []byte("vault:v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	ops := map[string]op{
		"generate": func(v *Vault) error { _, err := v.GenerateKey(ctx, "k", nil); return err },
		"decrypt":  func(v *Vault) error { _, err := v.Decrypt(ctx, "k", ct, nil); return err },
		"rewrap":   func(v *Vault) error { _, err := v.Rewrap(ctx, "k", ct, nil); return err },
		"create": func(v *Vault) error {
			err := v.CreateKey(ctx, "k")
			if errors.Is(err, ErrKeyNotFound) {
				return nil // the existence check's 404, then the fake's same answer to the create
			}
			return err
		},
		"status": func(v *Vault) error {
			st := v.Status(ctx)
			if st.OK {
				return nil
			}
			// Status carries the error as text; map it back.
			for _, s := range []error{ErrUnavailable, ErrKeyNotFound, ErrDecrypt, ErrKeyExists} {
				if strings.HasPrefix(st.Error, s.Error()) {
					return fmt.Errorf("%w (%s)", s, st.Error)
				}
			}
			return errors.New(st.Error)
		},
	}
	for _, tc := range []struct {
		answer answer
		op     string
		want   error // nil: an error matching none of the sentinels
	}{
		{answer{503, `{"errors":["Vault is sealed"]}`}, "*", ErrUnavailable},
		{answer{500, `{"errors":["internal error"]}`}, "*", ErrUnavailable},
		{answer{502, `<html>bad gateway</html>`}, "*", ErrUnavailable},
		{answer{429, `{"errors":["rate limited"]}`}, "*", ErrUnavailable},
		{answer{200, `<html>proxy login</html>`}, "generate", ErrUnavailable},
		{answer{404, `{"errors":[]}`}, "generate", ErrKeyNotFound},
		{answer{404, `{"errors":[]}`}, "decrypt", ErrKeyNotFound},
		{answer{404, `{"errors":["no handler for route"]}`}, "status", ErrKeyNotFound},
		{answer{400, `{"errors":["encryption key not found"]}`}, "generate", ErrKeyNotFound},
		{answer{400, `{"errors":["encryption key not found"]}`}, "decrypt", ErrKeyNotFound},
		{answer{400, `{"errors":["encryption key not found"]}`}, "rewrap", ErrKeyNotFound},
		{answer{400, `{"errors":["no existing key named k could be found"]}`}, "decrypt", ErrKeyNotFound},
		{answer{400, `{"errors":["ciphertext or signature version is disallowed by policy (too old)"]}`}, "decrypt", ErrKeyNotFound},
		{answer{400, `{"errors":["cipher: message authentication failed"]}`}, "decrypt", ErrDecrypt},
		{answer{400, `{"errors":["cipher: message authentication failed"]}`}, "rewrap", ErrDecrypt},
		{answer{400, `{"errors":["invalid ciphertext: no prefix"]}`}, "decrypt", ErrDecrypt},
		{answer{400, `{"errors":["invalid ciphertext length"]}`}, "decrypt", ErrDecrypt},
		{answer{400, `{"errors":["invalid ciphertext: version is too new"]}`}, "decrypt", ErrDecrypt},
		{answer{400, `{"errors":["invalid ciphertext: could not decode base64"]}`}, "rewrap", ErrDecrypt},
		{answer{200, `{"data":{"plaintext":"c2hvcnQ="}}`}, "decrypt", ErrDecrypt},
		{answer{403, `{"errors":["permission denied"]}`}, "generate", nil},
		{answer{400, `{"errors":["something else"]}`}, "generate", nil},
		{answer{200, `{"data":{"plaintext":"c2hvcnQ=","ciphertext":"vault:v1:x"}}`}, "generate", nil},
	} {
		for name, run := range ops {
			if tc.op != "*" && tc.op != name {
				continue
			}
			t.Run(fmt.Sprintf("%d-%s-%s", tc.answer.status, name, tc.answer.body), func(t *testing.T) {
				srv, _ := fakeVault(t, func(w http.ResponseWriter, r *http.Request) { reply(w, tc.answer) })
				v := newTestVault(t, VaultConfig{Endpoint: srv.URL})
				err := run(v)
				if err == nil {
					t.Fatal("no error")
				}
				for _, s := range []error{ErrUnavailable, ErrKeyNotFound, ErrDecrypt, ErrKeyExists} {
					if s != tc.want && errors.Is(err, s) {
						t.Errorf("error %q matches %v; want %v", err, s, tc.want)
					}
				}
				if tc.want != nil && !errors.Is(err, tc.want) {
					t.Errorf("error %q does not match %v", err, tc.want)
				}
				if strings.Contains(err.Error(), fakeToken) {
					t.Errorf("error %q holds the token", err)
				}
				if name != "status" && !strings.Contains(err.Error(), srv.URL) && tc.answer.status != 200 {
					t.Errorf("error %q does not name the endpoint", err)
				}
			})
		}
	}
}

func TestVaultCreateKeyExists(t *testing.T) {
	var posts atomic.Int32
	srv, _ := fakeVault(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			posts.Add(1)
		}
		reply(w, answer{200, `{"data":{"name":"k"}}`})
	})
	v := newTestVault(t, VaultConfig{Endpoint: srv.URL})
	if err := v.CreateKey(context.Background(), "k"); !errors.Is(err, ErrKeyExists) {
		t.Fatalf("CreateKey = %v; want ErrKeyExists", err)
	}
	if posts.Load() != 0 {
		t.Fatal("CreateKey of an existing key posted to it (transit's create is an upsert)")
	}
}

func TestVaultUnreachable(t *testing.T) {
	ctx := context.Background()
	// A port nothing listens on: connection refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String()
	l.Close()
	// A server that accepts and never answers: the timeout.
	hung, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	stop := make(chan struct{})
	conns.Add(1) // the accept loop, so Adds below never race a Wait at zero
	go func() {
		defer conns.Done()
		for {
			c, err := hung.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() { defer conns.Done(); <-stop; c.Close() }()
		}
	}()
	defer func() { close(stop); hung.Close(); conns.Wait() }()

	for _, tc := range []struct{ name, endpoint string }{{"refused", refused}, {"hung", "http://" + hung.Addr().String()}} {
		for _, cfg := range []VaultConfig{
			{Endpoint: tc.endpoint, Token: fakeToken, Timeout: 200 * time.Millisecond},
			{Endpoint: tc.endpoint, AppRoleID: "role", AppRoleSecret: "secret-id-7f3e", Timeout: 200 * time.Millisecond},
		} {
			v := newTestVault(t, cfg)
			checkUnavailable(t, tc.name, v, 2*time.Second)
			if tc.name == "hung" {
				_, err := v.GenerateKey(ctx, "k", nil)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("hung server: %v does not say it timed out", err)
				}
			}
		}
	}
}

// checkUnavailable asserts every call of v fails with ErrUnavailable, and
// fast.
func checkUnavailable(t *testing.T, what string, v *Vault, within time.Duration) {
	t.Helper()
	ctx := context.Background()
	ct := []byte("vault:v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	for name, run := range map[string]func() error{
		"generate": func() error { _, err := v.GenerateKey(ctx, v.DefaultKey(), nil); return err },
		"decrypt":  func() error { _, err := v.Decrypt(ctx, v.DefaultKey(), ct, nil); return err },
		"rewrap":   func() error { _, err := v.Rewrap(ctx, v.DefaultKey(), ct, nil); return err },
		"create":   func() error { return v.CreateKey(ctx, "another-key") },
		"status": func() error {
			st := v.Status(ctx)
			if st.OK || st.Error == "" {
				return fmt.Errorf("Status = %+v; want not OK", st)
			}
			if !strings.Contains(st.Error, ErrUnavailable.Error()) {
				return fmt.Errorf("Status error %q does not say unavailable", st.Error)
			}
			return fmt.Errorf("%w (status: %s)", ErrUnavailable, st.Error)
		},
	} {
		start := time.Now()
		err := run()
		if took := time.Since(start); took > within {
			t.Errorf("%s: %s took %v", what, name, took)
		}
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: %s = %v; want ErrUnavailable", what, name, err)
		}
		if errors.Is(err, ErrKeyNotFound) || errors.Is(err, ErrDecrypt) {
			t.Errorf("%s: %s = %v; a down server is not a wrong key", what, name, err)
		}
		if err != nil && !strings.Contains(err.Error(), v.endpoint) {
			t.Errorf("%s: %s error %q does not name the endpoint", what, name, err)
		}
	}
}

func TestVaultAppRoleRetry(t *testing.T) {
	var logins, forbidden atomic.Int32
	var valid atomic.Value
	valid.Store("")
	srv, _ := fakeVault(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/auth/custom-approle/login" {
			var body map[string]string
			_ = json.NewDecoder(r.Body).Decode(&body)
			if body["role_id"] != "role-1" || body["secret_id"] != "secret-id-9d1c" || r.Header.Get("X-Vault-Token") != "" {
				reply(w, answer{400, `{"errors":["invalid role or secret ID"]}`})
				return
			}
			n := logins.Add(1)
			tok := fmt.Sprintf("s.approle-token-%d", n)
			valid.Store(tok)
			reply(w, answer{200, fmt.Sprintf(`{"auth":{"client_token":%q,"lease_duration":3600}}`, tok)})
			return
		}
		if r.Header.Get("X-Vault-Token") != valid.Load().(string) {
			forbidden.Add(1)
			reply(w, answer{403, `{"errors":["permission denied"]}`})
			return
		}
		reply(w, answer{200, `{"data":{"supports_encryption":true,"supports_decryption":true}}`})
	})
	v := newTestVault(t, VaultConfig{Endpoint: srv.URL, AppRoleID: "role-1", AppRoleSecret: "secret-id-9d1c", AppRoleMount: "custom-approle"})
	ctx := context.Background()
	for range 3 {
		if st := v.Status(ctx); !st.OK {
			t.Fatal(st.Error)
		}
	}
	if logins.Load() != 1 {
		t.Fatalf("%d logins for 3 calls; want 1 (the token is kept)", logins.Load())
	}
	// The token is revoked behind our back: one 403, a new login, success.
	valid.Store("revoked")
	if st := v.Status(ctx); !st.OK {
		t.Fatal(st.Error)
	}
	if logins.Load() != 2 || forbidden.Load() != 1 {
		t.Fatalf("after a revocation: %d logins, %d 403s; want 2, 1", logins.Load(), forbidden.Load())
	}
	// A lease two thirds gone is replaced before it is used.
	v.auth.mu.Lock()
	v.auth.refreshAt = time.Now().Add(-time.Second)
	v.auth.mu.Unlock()
	if st := v.Status(ctx); !st.OK || logins.Load() != 3 || forbidden.Load() != 1 {
		t.Fatalf("expiring lease: %v, %d logins, %d 403s; want 3 logins, no new 403", st.Error, logins.Load(), forbidden.Load())
	}

	// A token refused again right after a fresh login is not retried
	// forever: the second 403 is the answer.
	srv2, requests := fakeVault(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/login") {
			reply(w, answer{200, `{"auth":{"client_token":"s.useless","lease_duration":0}}`})
			return
		}
		reply(w, answer{403, `{"errors":["permission denied"]}`})
	})
	v2 := newTestVault(t, VaultConfig{Endpoint: srv2.URL, AppRoleID: "r", AppRoleSecret: "secret-id-4be0"})
	_, err := v2.GenerateKey(ctx, "k", nil)
	if err == nil || !strings.Contains(err.Error(), "403") || errors.Is(err, ErrUnavailable) || errors.Is(err, ErrKeyNotFound) {
		t.Fatalf("GenerateKey with a useless token = %v", err)
	}
	if n := requests.Load(); n != 4 {
		t.Fatalf("%d requests; want login, call, login, call", n)
	}
	if strings.Contains(err.Error(), "s.useless") || strings.Contains(err.Error(), "secret-id-4be0") {
		t.Fatalf("error %q holds a secret", err)
	}

	// A refused login says so, without the secret id.
	v3 := newTestVault(t, VaultConfig{Endpoint: srv.URL, AppRoleID: "role-1", AppRoleSecret: "wrong-secret-5a5a", AppRoleMount: "custom-approle"})
	_, err = v3.GenerateKey(ctx, "k", nil)
	if err == nil || !strings.Contains(err.Error(), "login") || strings.Contains(err.Error(), "wrong-secret-5a5a") {
		t.Fatalf("GenerateKey with a wrong secret id = %v", err)
	}
}

func TestVaultRedirects(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Vault-Token") != "" {
			leaked.Add(1)
		}
		reply(w, answer{200, `{"data":{"supports_encryption":true,"supports_decryption":true}}`})
	}))
	defer other.Close()
	srv, _ := fakeVault(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/transit/keys/k" {
			// Same host, another path: followed.
			http.Redirect(w, r, "/v1/transit/keys/k/here", http.StatusTemporaryRedirect)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/here") {
			http.Redirect(w, r, other.URL+"/v1/transit/keys/k", http.StatusTemporaryRedirect)
			return
		}
		reply(w, answer{404, `{}`})
	})
	v := newTestVault(t, VaultConfig{Endpoint: srv.URL})
	st := v.Status(context.Background())
	if st.OK || !strings.Contains(st.Error, "307") {
		t.Fatalf("Status through a redirect to another host = %+v", st)
	}
	if leaked.Load() != 0 {
		t.Fatal("the token was sent to another host")
	}
}

func TestLoadVaultConfig(t *testing.T) {
	envOf := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cfg, ok, err := LoadVaultConfig(envOf())
	if ok || err != nil || cfg != (VaultConfig{}) {
		t.Fatalf("no variables: %v, %v, %v", cfg, ok, err)
	}
	cfg, ok, err = LoadVaultConfig(envOf(
		"SHARDSTORE_KMS_VAULT_ENDPOINT", "https://vault:8200",
		"MINIO_KMS_VAULT_ENDPOINT", "https://ignored:8200",
		"SHARDSTORE_KMS_VAULT_KEY_NAME", "sse",
		"SHARDSTORE_KMS_VAULT_NAMESPACE", "ns1",
		"SHARDSTORE_KMS_VAULT_TOKEN", fakeToken,
	))
	if !ok || err != nil {
		t.Fatalf("LoadVaultConfig = %v, %v", ok, err)
	}
	want := VaultConfig{Endpoint: "https://vault:8200", Mount: "transit", DefaultKey: "sse", Namespace: "ns1", Token: fakeToken, AppRoleMount: "approle", Timeout: DefaultVaultTimeout}
	if cfg != want {
		t.Fatalf("LoadVaultConfig = %v; want %v", cfg, want)
	}
	cfg, ok, err = LoadVaultConfig(envOf(
		"MINIO_KMS_VAULT_ENDPOINT", "http://127.0.0.1:8200/",
		"MINIO_KMS_VAULT_KEY_NAME", "minio-key",
		"MINIO_KMS_VAULT_NAMESPACE", "ns2",
		"MINIO_KMS_VAULT_APPROLE_ID", "role",
		"MINIO_KMS_VAULT_APPROLE_SECRET", "secret-id-2c2c",
		"SHARDSTORE_KMS_VAULT_MOUNT", "kms/transit",
		"SHARDSTORE_KMS_VAULT_APPROLE_MOUNT", "ar",
	))
	want = VaultConfig{Endpoint: "http://127.0.0.1:8200/", Mount: "kms/transit", DefaultKey: "minio-key", Namespace: "ns2", AppRoleID: "role", AppRoleSecret: "secret-id-2c2c", AppRoleMount: "ar", Timeout: DefaultVaultTimeout}
	if !ok || err != nil || cfg != want {
		t.Fatalf("MinIO spellings: %v, %v, %v; want %v", cfg, ok, err, want)
	}

	base := []string{"SHARDSTORE_KMS_VAULT_ENDPOINT", "https://vault:8200", "SHARDSTORE_KMS_VAULT_KEY_NAME", "sse"}
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"no endpoint", []string{"SHARDSTORE_KMS_VAULT_TOKEN", fakeToken}, "no SHARDSTORE_KMS_VAULT_ENDPOINT"},
		{"no credentials", base, "token or an AppRole"},
		{"both credentials", append(base[:4:4], "SHARDSTORE_KMS_VAULT_TOKEN", fakeToken, "SHARDSTORE_KMS_VAULT_APPROLE_ID", "r", "SHARDSTORE_KMS_VAULT_APPROLE_SECRET", "s"), "not both"},
		{"half an approle", append(base[:4:4], "SHARDSTORE_KMS_VAULT_APPROLE_ID", "r"), "both a role id and a secret id"},
		{"no key", []string{"SHARDSTORE_KMS_VAULT_ENDPOINT", "https://vault:8200", "SHARDSTORE_KMS_VAULT_TOKEN", fakeToken}, "default key"},
		{"bad key", []string{"SHARDSTORE_KMS_VAULT_ENDPOINT", "https://vault:8200", "SHARDSTORE_KMS_VAULT_KEY_NAME", "../x", "SHARDSTORE_KMS_VAULT_TOKEN", fakeToken}, "invalid key name"},
		{"bad scheme", []string{"SHARDSTORE_KMS_VAULT_ENDPOINT", "ftp://vault", "SHARDSTORE_KMS_VAULT_KEY_NAME", "k", "SHARDSTORE_KMS_VAULT_TOKEN", fakeToken}, "https://"},
		{"credentials in URL", []string{"SHARDSTORE_KMS_VAULT_ENDPOINT", "https://user:" + fakeToken + "@vault", "SHARDSTORE_KMS_VAULT_KEY_NAME", "k", "SHARDSTORE_KMS_VAULT_TOKEN", fakeToken}, "credentials"},
		{"bad mount", append(base[:4:4], "SHARDSTORE_KMS_VAULT_TOKEN", fakeToken, "SHARDSTORE_KMS_VAULT_MOUNT", "../sys"), "mount"},
		{"newline in token", append(base[:4:4], "SHARDSTORE_KMS_VAULT_TOKEN", "a\nb"), "control character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := LoadVaultConfig(envOf(tc.env...))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadVaultConfig = %v; want an error saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), fakeToken) {
				t.Fatalf("error %q holds the token", err)
			}
		})
	}
}

func TestVaultSecretsNeverPrinted(t *testing.T) {
	cfg := VaultConfig{Endpoint: "https://vault:8200", DefaultKey: "k", AppRoleID: "role-id-77e1a0", AppRoleSecret: "secret-id-c0ffee11", Namespace: "ns"}
	v := newTestVault(t, cfg)
	// Give it a token as a login would.
	v.auth.token = secretString("s.logged-in-token-abcdef")
	tv := newTestVault(t, VaultConfig{Endpoint: "https://vault:8200", DefaultKey: "k", Token: fakeToken})
	values := []any{cfg, &cfg, struct{ C VaultConfig }{cfg}, []VaultConfig{cfg}, v, *v, tv, *tv, struct{ v Vault }{*tv}, struct{ v *Vault }{v}, v.auth}
	for _, val := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
			out := fmt.Sprintf(verb, val)
			for _, secret := range []string{"role-id-77e1a0", "secret-id-c0ffee11", "s.logged-in-token-abcdef", fakeToken} {
				if strings.Contains(out, secret) || strings.Contains(out, fmt.Sprintf("%x", secret)) {
					t.Errorf("fmt %s of %T = %q holds %q", verb, val, out, secret)
				}
			}
		}
	}
	if s := cfg.String(); !strings.Contains(s, "https://vault:8200") || !strings.Contains(s, "<redacted>") {
		t.Errorf("VaultConfig.String() = %q", s)
	}
}
