package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/certs"
	"github.com/shardstore/shardstore/test/internal/serverbin"
)

// TestTLSMisconfigurations: what an operator gets wrong about TLS between
// nodes is refused with a message that says what to do, and nothing is
// formatted: https endpoints on a node without a certificate; a
// certificate on a node given http endpoints; and a node whose
// certificate is signed by a CA the other node does not trust (the other
// node says so while it waits for it).
func TestTLSMisconfigurations(t *testing.T) {
	dir := t.TempDir()
	ports := freePorts(t, 2)
	good := newTLSFiles(t, dir, 2)
	stranger, err := certs.NewCA("another CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign-certs")
	if err := stranger.WriteCertsDir(foreign, []string{"127.0.0.1"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	endpoints := func(scheme string) []string {
		return []string{fmt.Sprintf("%s://127.0.0.1:%d%s/a/d{1...2}", scheme, ports[0], dir),
			fmt.Sprintf("%s://127.0.0.1:%d%s/b/d{1...2}", scheme, ports[1], dir)}
	}
	start := func(node int, certsDir string, eps []string) (*exec.Cmd, *serverbin.SyncBuffer, chan error) {
		args := []string{"server", "--address", fmt.Sprintf("127.0.0.1:%d", ports[node]), "--console-address", ""}
		// No certificates directory means one that does not exist, not
		// the default under the user's home.
		if certsDir == "" {
			certsDir = filepath.Join(dir, "no-certs")
		}
		cmd := exec.Command(binary, append(append(args, "--certs-dir", certsDir), eps...)...)
		serverbin.DieWithParent(cmd)
		cmd.Env = append(cmd.Environ(), "SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass, "SHARDSTORE_ALLOW_ROOT_DRIVES=1")
		out := &serverbin.SyncBuffer{}
		cmd.Stderr = out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		return cmd, out, done
	}
	refused := func(name string, done chan error, out *serverbin.SyncBuffer, want string) {
		t.Helper()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(out.String(), want) {
				t.Fatalf("%s: exit %v, want a refusal saying %q:\n%s", name, err, want, out)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: still running, want a refusal saying %q:\n%s", name, want, out)
		}
	}
	// An explicit --certs-dir that does not exist is an error of its own.
	_, out, done := start(0, "", endpoints("https"))
	refused("missing certificates directory", done, out, "no-certs: no such file or directory")
	// https endpoints, an empty certificates directory.
	empty := filepath.Join(dir, "empty-certs")
	if err := os.Mkdir(empty, 0o750); err != nil {
		t.Fatal(err)
	}
	_, out, done = start(0, empty, endpoints("https"))
	refused("https without a certificate", done, out, "holds no public.crt and private.key")
	// A certificate, http endpoints.
	_, out, done = start(0, good.dirs[0], endpoints("http"))
	refused("a certificate with http endpoints", done, out, "write https:// endpoints on every node")
	// A certificate from a CA the other node does not trust: node 1
	// cannot verify node 2 and says why while it waits.
	_, outA, _ := start(0, good.dirs[0], endpoints("https"))
	_, outB, _ := start(1, foreign, endpoints("https"))
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(outA.String(), "not signed by an authority this node trusts") {
		if time.Now().After(deadline) {
			t.Fatalf("node 1 did not report the untrusted certificate of node 2\nnode 1:\n%s\nnode 2:\n%s", outA, outB)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, d := range []string{"a/d1", "a/d2", "b/d1", "b/d2"} {
		if _, err := os.Stat(filepath.Join(dir, d, ".shardstore.sys", "format.json")); err == nil {
			t.Errorf("%s was formatted by nodes that cannot verify each other", d)
		}
	}
}
