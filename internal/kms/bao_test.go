package kms

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/kms/baotest"
)

// The Vault client's conformance run needs a real transit engine: an
// OpenBao dev server (in memory, unsealed, one root token), whose binary
// package baotest finds or installs.

const (
	// The least a shardstore AppRole needs: data keys, decrypt, rewrap,
	// and create/read of keys (keys/+ matches one segment, so not
	// keys/NAME/rotate or keys/NAME/config).
	baoPolicy = `
path "transit/datakey/plaintext/+" { capabilities = ["update"] }
path "transit/decrypt/+"           { capabilities = ["update"] }
path "transit/rewrap/+"            { capabilities = ["update"] }
path "transit/keys/+"              { capabilities = ["create", "read", "update"] }
`
)

// baoServer is a running `bao server -dev`.
type baoServer struct {
	addr, root string
	cmd        *exec.Cmd
	exited     chan struct{}
	logPath    string
	stopOnce   sync.Once
}

func startBao(t *testing.T, bin string) *baoServer {
	t.Helper()
	dir := t.TempDir()
	for attempt := 1; ; attempt++ {
		s := &baoServer{addr: "127.0.0.1:" + freePort(t), root: "root-" + randomHex(t, 12), exited: make(chan struct{})}
		s.logPath = filepath.Join(dir, fmt.Sprintf("bao-%d.log", attempt))
		logFile, err := os.Create(s.logPath)
		if err != nil {
			t.Fatal(err)
		}
		s.cmd = exec.Command(bin, "server", "-dev", "-dev-root-token-id="+s.root, "-dev-listen-address="+s.addr, "-dev-no-store-token")
		s.cmd.Dir = dir
		// Its own HOME (no token helper file in the real one) and none
		// of the caller's BAO_/VAULT_ settings.
		s.cmd.Env = []string{"HOME=" + dir, "TMPDIR=" + dir, "PATH=" + os.Getenv("PATH")}
		s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
		if err := s.cmd.Start(); err != nil {
			logFile.Close()
			t.Fatalf("starting %s: %v", bin, err)
		}
		go func() { _ = s.cmd.Wait(); logFile.Close(); close(s.exited) }()
		t.Cleanup(s.stop)
		start := time.Now()
		if s.waitHealthy(20 * time.Second) {
			t.Logf("OpenBao dev server on %s, healthy after %v", s.addr, time.Since(start).Round(time.Millisecond))
			return s
		}
		s.stop()
		log, _ := os.ReadFile(s.logPath)
		if attempt == 3 {
			t.Fatalf("OpenBao dev server did not become healthy; its log ends:\n%s", baotest.LastLines(string(log), 20))
		}
		t.Logf("OpenBao dev server attempt %d failed (port taken?); log ends:\n%s", attempt, baotest.LastLines(string(log), 5))
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func (s *baoServer) endpoint() string { return "http://" + s.addr }

func (s *baoServer) waitHealthy(limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return false
		default:
		}
		resp, err := http.Get(s.endpoint() + "/v1/sys/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// stop kills the server and waits for it to exit.
func (s *baoServer) stop() {
	s.stopOnce.Do(func() {
		select {
		case <-s.exited:
		default:
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
}

// api calls the server as root and returns the answer's "data".
func (s *baoServer) api(t *testing.T, method, path string, body any) map[string]any {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.endpoint()+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Vault-Token", s.root)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, data)
	}
	var out struct {
		Data map[string]any `json:"data"`
	}
	_ = json.Unmarshal(data, &out)
	return out.Data
}

// setup mounts transit, creates keys, and makes an AppRole with
// baoPolicy whose tokens live tokenTTL; it returns the role and secret id.
func (s *baoServer) setup(t *testing.T, tokenTTL string, keys ...string) (roleID, secretID string) {
	t.Helper()
	s.api(t, "POST", "/v1/sys/mounts/transit", map[string]any{"type": "transit"})
	for _, k := range keys {
		s.api(t, "POST", "/v1/transit/keys/"+k, map[string]any{"type": "aes256-gcm96"})
	}
	s.api(t, "POST", "/v1/sys/auth/approle", map[string]any{"type": "approle"})
	s.api(t, "PUT", "/v1/sys/policies/acl/shardstore-kms", map[string]any{"policy": baoPolicy})
	s.api(t, "POST", "/v1/auth/approle/role/shardstore", map[string]any{
		"token_policies": []string{"shardstore-kms"},
		"token_ttl":      tokenTTL,
		"token_max_ttl":  "10m",
	})
	roleID, _ = s.api(t, "GET", "/v1/auth/approle/role/shardstore/role-id", nil)["role_id"].(string)
	secretID, _ = s.api(t, "POST", "/v1/auth/approle/role/shardstore/secret-id", nil)["secret_id"].(string)
	if roleID == "" || secretID == "" {
		t.Fatal("AppRole setup gave no role id or secret id")
	}
	return roleID, secretID
}

func (s *baoServer) rotate(t *testing.T, key string) {
	t.Helper()
	s.api(t, "POST", "/v1/transit/keys/"+key+"/rotate", nil)
}

func TestOpenBao(t *testing.T) {
	s := startBao(t, baotest.Binary(t))
	roleID, secretID := s.setup(t, "3s", "token-key", "approle-key", "retired-key")
	ctx := context.Background()

	tokenVault := newTestVault(t, VaultConfig{Endpoint: s.endpoint(), DefaultKey: "token-key", Token: s.root, Timeout: 5 * time.Second})
	appRole := VaultConfig{Endpoint: s.endpoint(), DefaultKey: "approle-key", AppRoleID: roleID, AppRoleSecret: secretID, Timeout: 5 * time.Second}
	approleVault := newTestVault(t, appRole)

	t.Run("Token", func(t *testing.T) {
		testKMS(t, tokenVault, "token-key", func() { s.rotate(t, "token-key") })
	})
	t.Run("AppRole", func(t *testing.T) {
		testKMS(t, approleVault, "approle-key", func() { s.rotate(t, "approle-key") })
	})

	t.Run("AppRoleRenewal", func(t *testing.T) {
		v := newTestVault(t, appRole)
		if _, err := v.GenerateKey(ctx, "approle-key", nil); err != nil {
			t.Fatal(err)
		}
		v.auth.mu.Lock()
		gen, refreshAt := v.auth.gen, v.auth.refreshAt
		v.auth.mu.Unlock()
		// The 3 s lease is replaced two thirds of the way through.
		if d := time.Until(refreshAt); d <= 0 || d > 2*time.Second {
			t.Fatalf("a 3 s token is to be replaced in %v; want about 2 s", d)
		}
		time.Sleep(time.Until(refreshAt) + 50*time.Millisecond)
		if _, err := v.GenerateKey(ctx, "approle-key", nil); err != nil {
			t.Fatal(err)
		}
		v.auth.mu.Lock()
		newGen, token := v.auth.gen, v.auth.token()
		v.auth.refreshAt = time.Now().Add(time.Hour) // so only a 403 can make it log in again
		v.auth.mu.Unlock()
		if newGen != gen+1 {
			t.Fatalf("logins %d → %d; want one more", gen, newGen)
		}
		// Revoked behind its back: one 403, a fresh login, success.
		s.api(t, "POST", "/v1/auth/token/revoke", map[string]any{"token": token})
		if _, err := v.GenerateKey(ctx, "approle-key", nil); err != nil {
			t.Fatalf("GenerateKey after the token was revoked: %v", err)
		}
		v.auth.mu.Lock()
		defer v.auth.mu.Unlock()
		if v.auth.gen != newGen+1 {
			t.Fatalf("logins %d → %d after a revocation; want one more", newGen, v.auth.gen)
		}
	})

	t.Run("PolicyDenies", func(t *testing.T) {
		// The AppRole may not rotate keys (see baoPolicy): a 403 that a
		// fresh login does not cure is reported as such.
		v := newTestVault(t, appRole)
		err := v.call(ctx, "rotate", "POST", "/v1/transit/keys/approle-key/rotate", nil, nil)
		if err == nil || !strings.Contains(err.Error(), "403") || errors.Is(err, ErrUnavailable) {
			t.Fatalf("rotate with the AppRole = %v; want a 403", err)
		}
	})

	t.Run("WrongCredentials", func(t *testing.T) {
		bad := newTestVault(t, VaultConfig{Endpoint: s.endpoint(), DefaultKey: "token-key", Token: "s.not-a-real-token-9e8d", Timeout: 5 * time.Second})
		_, err := bad.GenerateKey(ctx, "token-key", nil)
		if err == nil || !strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), "s.not-a-real-token-9e8d") {
			t.Fatalf("GenerateKey with a wrong token = %v; want a 403 without the token", err)
		}
		for _, s := range []error{ErrUnavailable, ErrKeyNotFound, ErrDecrypt} {
			if errors.Is(err, s) {
				t.Fatalf("a wrong token reads as %v", s)
			}
		}
		if st := bad.Status(ctx); st.OK || strings.Contains(st.Error, "s.not-a-real-token-9e8d") {
			t.Fatalf("Status with a wrong token = %+v", st)
		}
		cfg := appRole
		cfg.AppRoleSecret = "00000000-0000-0000-0000-000000000000"
		_, err = newTestVault(t, cfg).GenerateKey(ctx, "approle-key", nil)
		if err == nil || !strings.Contains(err.Error(), "login") || strings.Contains(err.Error(), cfg.AppRoleSecret) {
			t.Fatalf("GenerateKey with a wrong secret id = %v", err)
		}
	})

	t.Run("RetiredVersion", func(t *testing.T) {
		// A version below min_decryption_version is a key version that
		// is gone: ErrKeyNotFound, not a bad ciphertext.
		dk := mustGenerate(t, tokenVault, "retired-key", nil)
		s.rotate(t, "retired-key")
		s.api(t, "POST", "/v1/transit/keys/retired-key/config", map[string]any{"min_decryption_version": 2})
		if _, err := tokenVault.Decrypt(ctx, "retired-key", dk.Ciphertext, nil); !errors.Is(err, ErrKeyNotFound) {
			t.Fatalf("Decrypt of a retired version = %v; want ErrKeyNotFound", err)
		}
	})

	t.Run("DerivedKeyStatus", func(t *testing.T) {
		s.api(t, "POST", "/v1/transit/keys/derived-key", map[string]any{"type": "aes256-gcm96", "derived": true})
		v := newTestVault(t, VaultConfig{Endpoint: s.endpoint(), DefaultKey: "derived-key", Token: s.root})
		if st := v.Status(ctx); st.OK || !strings.Contains(st.Error, "derived") {
			t.Fatalf("Status of a derived default key = %+v; want not OK, saying why", st)
		}
	})

	// Last: stop the server. Every call fails with ErrUnavailable, fast,
	// and never as a wrong key or a bad ciphertext.
	t.Run("ServerDown", func(t *testing.T) {
		s.stop()
		for what, cfg := range map[string]VaultConfig{
			"token":               {Endpoint: s.endpoint(), DefaultKey: "token-key", Token: s.root, Timeout: 3 * time.Second},
			"approle (logged in)": appRole,
			"approle (new)":       appRole,
		} {
			v := approleVault
			if what != "approle (logged in)" {
				cfg.Timeout = 3 * time.Second
				v = newTestVault(t, cfg)
			}
			checkUnavailable(t, what, v, 4*time.Second)
		}
		if _, err := tokenVault.Decrypt(ctx, "token-key", mustGenerateBefore(t), nil); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Decrypt with the server down = %v", err)
		}
	})
}

// mustGenerateBefore is a well-formed transit ciphertext for calls made
// when no server answers.
func mustGenerateBefore(*testing.T) []byte {
	return []byte("vault:v1:8onR382IQJaxluo0eX1lOUVcIZSdx1SsnnnPUnyoPJMXi2VBpPEKfQHLnPrsDfG4WUZM24LKTYAbo/6L")
}
