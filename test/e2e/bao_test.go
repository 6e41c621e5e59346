package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/kms/baotest"

	"github.com/shardstore/shardstore/test/internal/serverbin"
)

// OpenBao, the real key server of the SSE tests (sse_test.go), its
// binary found or installed by internal/kms/baotest.
//
// Unlike the KMS package's test, which runs `bao server -dev` (memory
// only), this one runs a real server on raft storage in a temporary
// directory, initialised with one unseal key, so a test can kill it
// (the KMS goes down mid-test) and start it again with its keys intact.

// baoServer is an OpenBao server on raft storage in a temporary
// directory: initialised with one unseal key, unsealed, root token
// known; stop and start keep its keys.
type baoServer struct {
	t         *testing.T
	bin, dir  string
	addr      string // API, 127.0.0.1:PORT
	root      string // the root token
	unsealKey string
	cmd       *exec.Cmd
	exited    chan struct{}
	starts    int
}

// startBao starts, initialises and unseals a new server (about 2 s).
func startBao(t *testing.T) *baoServer {
	t.Helper()
	b := &baoServer{t: t, bin: baotest.Binary(t), dir: t.TempDir()}
	t.Cleanup(b.stop)
	for attempt := 1; ; attempt++ {
		ports := freePorts(t, 2)
		b.addr = "127.0.0.1:" + ports[0]
		// performance_multiplier 1: raft's production timings, so the one
		// node elects itself in about a second instead of five.
		cfg := fmt.Sprintf(`storage "raft" {
  path = %q
  node_id = "e2e"
  performance_multiplier = 1
}
listener "tcp" {
  address = %q
  cluster_address = "127.0.0.1:%s"
  tls_disable = 1
}
api_addr = "http://%s"
cluster_addr = "http://127.0.0.1:%s"
`, filepath.Join(b.dir, "data"), b.addr, ports[1], b.addr, ports[1])
		if err := os.RemoveAll(filepath.Join(b.dir, "data")); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(b.dir, "data"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(b.dir, "bao.hcl"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		if b.launch() {
			break
		}
		b.stop()
		if attempt == 3 {
			t.Fatalf("OpenBao did not start; its log ends:\n%s", b.logTail(20))
		}
		t.Logf("OpenBao attempt %d did not listen (port taken?); log ends:\n%s", attempt, b.logTail(5))
	}
	start := time.Now()
	var init struct {
		Keys []string `json:"keys_base64"`
		Root string   `json:"root_token"`
	}
	b.call(t, "PUT", "/v1/sys/init", map[string]any{"secret_shares": 1, "secret_threshold": 1}, &init)
	if len(init.Keys) != 1 || init.Root == "" {
		t.Fatalf("bao init gave %d unseal keys and root token %t", len(init.Keys), init.Root != "")
	}
	b.unsealKey, b.root = init.Keys[0], init.Root
	b.unseal(t)
	t.Logf("OpenBao (raft storage) on %s, initialised and unsealed in %v", b.addr, time.Since(start).Round(time.Millisecond))
	return b
}

// launch starts the process and waits until it answers HTTP at all
// (sealed or not); false when it exits or does not within 20 s.
func (b *baoServer) launch() bool {
	b.starts++
	logFile, err := os.Create(filepath.Join(b.dir, fmt.Sprintf("bao-%d.log", b.starts)))
	if err != nil {
		b.t.Fatal(err)
	}
	b.cmd = exec.Command(b.bin, "server", "-config="+filepath.Join(b.dir, "bao.hcl"))
	serverbin.DieWithParent(b.cmd)
	b.cmd.Dir = b.dir
	// Its own HOME and none of the caller's BAO_/VAULT_ settings.
	b.cmd.Env = []string{"HOME=" + b.dir, "TMPDIR=" + b.dir, "PATH=" + os.Getenv("PATH")}
	b.cmd.Stdout, b.cmd.Stderr = logFile, logFile
	if err := b.cmd.Start(); err != nil {
		logFile.Close()
		b.t.Fatalf("starting %s: %v", b.bin, err)
	}
	exited := make(chan struct{})
	b.exited = exited
	cmd := b.cmd
	go func() { _ = cmd.Wait(); logFile.Close(); close(exited) }()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if resp, err := http.Get(b.endpoint() + "/v1/sys/health"); err == nil {
			resp.Body.Close()
			return true
		}
		time.Sleep(30 * time.Millisecond)
	}
	return false
}

func (b *baoServer) endpoint() string { return "http://" + b.addr }

func (b *baoServer) logTail(n int) string {
	log, _ := os.ReadFile(filepath.Join(b.dir, fmt.Sprintf("bao-%d.log", b.starts)))
	return baotest.LastLines(string(log), n)
}

// unseal unseals the server and waits until it is the active node.
func (b *baoServer) unseal(t *testing.T) {
	t.Helper()
	b.call(t, "PUT", "/v1/sys/unseal", map[string]any{"key": b.unsealKey}, nil)
	deadline := time.Now().Add(20 * time.Second)
	code := 0
	for time.Now().Before(deadline) {
		if resp, err := http.Get(b.endpoint() + "/v1/sys/health"); err == nil {
			resp.Body.Close()
			if code = resp.StatusCode; code == http.StatusOK {
				return
			}
		}
		time.Sleep(30 * time.Millisecond)
	}
	t.Fatalf("OpenBao not active within 20 s of the unseal (health %d); log ends:\n%s", code, b.logTail(20))
}

// kill stops the server with SIGKILL, as a crash would.
func (b *baoServer) kill() {
	if b.cmd == nil {
		return
	}
	select {
	case <-b.exited:
	default:
		_ = b.cmd.Process.Signal(syscall.SIGKILL)
		<-b.exited
	}
}

func (b *baoServer) stop() { b.kill() }

// restart starts the killed server again on its storage and unseals it.
func (b *baoServer) restart(t *testing.T) {
	t.Helper()
	b.kill()
	start := time.Now()
	if !b.launch() {
		t.Fatalf("OpenBao did not start again; log ends:\n%s", b.logTail(20))
	}
	b.unseal(t)
	t.Logf("OpenBao restarted and unsealed in %v", time.Since(start).Round(time.Millisecond))
}

// call sends a request with the root token (when known) and decodes the
// JSON answer into out (when non-nil); a non-2xx answer fails the test.
func (b *baoServer) call(t *testing.T, method, path string, body, out any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, b.endpoint()+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if b.root != "" {
		req.Header.Set("X-Vault-Token", b.root)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("bao %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("bao %s %s: HTTP %d: %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("bao %s %s: %v in %s", method, path, err, data)
		}
	}
}

// keyVersion is a transit key's latest version.
func (b *baoServer) keyVersion(t *testing.T, name string) int {
	t.Helper()
	var out struct {
		Data struct {
			Latest int `json:"latest_version"`
		} `json:"data"`
	}
	b.call(t, "GET", "/v1/transit/keys/"+name, nil, &out)
	return out.Data.Latest
}
