package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/engine"
)

func TestParseServerArgsFlagsAnywhere(t *testing.T) {
	o, err := parseServerArgs([]string{"/d{1...4}", "--address", "127.0.0.1:0", "/e", "--parity", "2", "--log-requests"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.drives, []string{"/d{1...4}", "/e"}) || o.address != "127.0.0.1:0" || o.parity != 2 || !o.logRequests {
		t.Fatalf("parsed %+v", o)
	}
	o, err = parseServerArgs(nil, io.Discard)
	if err != nil || o.address != defaultAddress || o.region != "" || len(o.drives) != 0 {
		t.Fatalf("defaults %+v %v", o, err)
	}
	if _, err := parseServerArgs([]string{"--no-such-flag"}, io.Discard); err == nil {
		t.Fatal("unknown flag accepted")
	}
}

func TestRootCredentials(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	c, err := rootCredentials(env())
	if err != nil || !c.dev() || c.user != defaultRootUser {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = rootCredentials(env("SHARDSTORE_ROOT_USER", "admin", "SHARDSTORE_ROOT_PASSWORD", "secret-secret"))
	if err != nil || c.dev() || c.alias || c.user != "admin" || c.pass != "secret-secret" {
		t.Fatalf("env: %+v %v", c, err)
	}
	// MinIO's names are accepted; ours win when both are set.
	c, err = rootCredentials(env("MINIO_ROOT_USER", "minio", "MINIO_ROOT_PASSWORD", "minio-secret"))
	if err != nil || !c.alias || c.user != "minio" {
		t.Fatalf("MinIO alias: %+v %v", c, err)
	}
	c, err = rootCredentials(env("MINIO_ROOT_USER", "minio", "MINIO_ROOT_PASSWORD", "minio-secret",
		"SHARDSTORE_ROOT_USER", "admin", "SHARDSTORE_ROOT_PASSWORD", "secret-secret"))
	if err != nil || c.alias || c.user != "admin" {
		t.Fatalf("both set: %+v %v", c, err)
	}
	for _, bad := range []struct {
		env  func(string) string
		want string
	}{
		{env("SHARDSTORE_ROOT_USER", "admin"), "set both SHARDSTORE_ROOT_USER and SHARDSTORE_ROOT_PASSWORD"},
		{env("SHARDSTORE_ROOT_USER", "admin", "SHARDSTORE_ROOT_PASSWORD", "short"), "SHARDSTORE_ROOT_PASSWORD must be at least 8 characters"},
		{env("SHARDSTORE_ROOT_USER", "ab", "SHARDSTORE_ROOT_PASSWORD", "long-enough"), "SHARDSTORE_ROOT_USER must be at least 3 characters"},
		{env("MINIO_ROOT_USER", "minio", "MINIO_ROOT_PASSWORD", "1234567"), "MINIO_ROOT_PASSWORD must be at least 8 characters"},
	} {
		if _, err := rootCredentials(bad.env); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("got %v, want %q", err, bad.want)
		}
	}
}

func TestCommandLineErrors(t *testing.T) {
	for _, c := range []struct {
		args     []string
		code     int
		contains []string
	}{
		{[]string{"server", "--no-such-flag"}, 2, []string{"shardstore server: flag provided but not defined: -no-such-flag", "usage: shardstore server [flags] [DRIVE...]", "shardstore server -h"}},
		{[]string{"server", "--log-level", "loud"}, 2, []string{`bad --log-level "loud": want debug, info, warn or error`}},
		{[]string{"server", "--drive-timeout", "soon"}, 2, []string{"write it as seconds (15) or with a unit (15s"}},
		{[]string{"server", "--public-url", "s3.example.com"}, 2, []string{`bad --public-url "s3.example.com": want http(s)://HOST[:PORT] with no path`}},
		{[]string{"server", "--public-url", "https://example.com/s3"}, 2, []string{`bad --public-url "https://example.com/s3"`}},
		{[]string{"admin"}, 2, []string{"missing admin command (status, heal, user, group, policy, accesskey, audit, prometheus, kms, idp, notify, cluster or pool)"}},
		{[]string{"admin", "info"}, 2, []string{`unknown admin command "info" (status, heal`}},
		{[]string{"admin", "user"}, 2, []string{"missing command"}},
		{[]string{"admin", "user", "frob"}, 2, []string{`unknown command "frob"`}},
		{[]string{"admin", "user", "add"}, 2, []string{"wrong number of arguments (0)"}},
		{[]string{"admin", "policy", "attach", "readonly", "--bogus"}, 2, []string{"flag provided but not defined: -bogus"}},
		{[]string{"admin", "status", "--bogus"}, 2, []string{"flag provided but not defined: -bogus", "shardstore admin status -h"}},
		{[]string{"version", "extra"}, 2, []string{"unexpected arguments: extra"}},
		{[]string{"frobnicate"}, 2, []string{`unknown command "frobnicate"`, "admin"}},
	} {
		var out, errb bytes.Buffer
		code := run(c.args, &out, &errb)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d\n%s", c.args, code, c.code, errb.String())
		}
		for _, want := range c.contains {
			if !strings.Contains(errb.String(), want) {
				t.Errorf("%v: stderr %q lacks %q", c.args, errb.String(), want)
			}
		}
		// The error is said once.
		if first := strings.SplitN(errb.String(), "\n", 2)[0]; first != "" && strings.Count(errb.String(), first) != 1 {
			t.Errorf("%v: error repeated:\n%s", c.args, errb.String())
		}
	}
}

func TestHelpNamesRealCommands(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-h"}, &out, &errb); code != 0 {
		t.Fatalf("-h exit %d", code)
	}
	for _, want := range []string{"server", "admin status", "admin heal", "bench ec", "bench s3", "version"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "admin info") {
		t.Errorf("help names a command that does not exist:\n%s", out.String())
	}
}

func TestIndexCacheFlag(t *testing.T) {
	o, err := parseServerArgs(nil, io.Discard)
	if err != nil || int64(o.indexCache) != engine.IndexCacheSize {
		t.Fatalf("default index cache: %v %v", o.indexCache, err)
	}
	for in, want := range map[string]int64{"64MiB": 64 << 20, "1g": 1 << 30, "8M": 8 << 20, "33554432": 32 << 20} {
		o, err := parseServerArgs([]string{"--index-cache", in}, io.Discard)
		if err != nil || int64(o.indexCache) != want {
			t.Errorf("--index-cache %s: %d, %v; want %d", in, o.indexCache, err, want)
		}
	}
	for _, bad := range []string{"1MiB", "0", "-5", "lots", ""} {
		if _, err := parseServerArgs([]string{"--index-cache", bad}, io.Discard); err == nil {
			t.Errorf("--index-cache %q accepted", bad)
		}
	}
}

func TestDurationFlags(t *testing.T) {
	o, err := parseServerArgs([]string{"--drive-timeout", "15", "--shutdown-timeout", "2m"}, io.Discard)
	if err != nil || o.driveTimeout != 15*time.Second || o.shutdown != 2*time.Minute {
		t.Fatalf("durations: %+v %v", o, err)
	}
	o, err = parseServerArgs(nil, io.Discard)
	if err != nil || o.driveTimeout != 15*time.Second || o.shutdown != 30*time.Second {
		t.Fatalf("default durations: %v %v %v", o.driveTimeout, o.shutdown, err)
	}
}

func TestCheckPlacement(t *testing.T) {
	root := t.TempDir()
	paths := []string{filepath.Join(root, "d1"), filepath.Join(root, "d2")}
	var w bytes.Buffer
	err := checkPlacement(&w, paths, root, false, false)
	if err == nil || !strings.Contains(err.Error(), "2 drives are on the root filesystem") ||
		!strings.Contains(err.Error(), "--allow-root-drives") || !strings.Contains(err.Error(), "SHARDSTORE_ALLOW_ROOT_DRIVES=1") ||
		!strings.Contains(err.Error(), paths[0]) {
		t.Fatalf("drives on the root filesystem: %v", err)
	}
	w.Reset()
	if err := checkPlacement(&w, paths, root, true, false); err != nil {
		t.Fatalf("allowed: %v", err)
	}
	if !strings.Contains(w.String(), "2 drives share one filesystem") || !strings.Contains(w.String(), paths[1]) ||
		!strings.Contains(w.String(), "cannot protect against the loss of that disk") {
		t.Fatalf("no shared-filesystem warning:\n%s", w.String())
	}
	w.Reset()
	if err := checkPlacement(&w, paths, root, false, true); err != nil || !strings.Contains(w.String(), "embedded default drives are on the root filesystem") {
		t.Fatalf("embedded: %v\n%s", err, w.String())
	}
	// Drives on another filesystem than the root one pass silently.
	w.Reset()
	if err := checkPlacement(&w, []string{"/proc/x"}, root, false, false); err != nil || w.Len() != 0 {
		t.Fatalf("a drive off the root filesystem: %v %q", err, w.String())
	}
}

// fakeServer is a server whose in-flight requests end when told.
type fakeServer struct {
	inflight atomic.Int64
	release  chan struct{}
}

func (f *fakeServer) InFlight() int { return int(f.inflight.Load()) }
func (f *fakeServer) Shutdown(ctx context.Context) error {
	select {
	case <-f.release:
		f.inflight.Store(0)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func TestShutdownReportsAndCuts(t *testing.T) {
	t.Run("requests finish", func(t *testing.T) {
		f := &fakeServer{release: make(chan struct{})}
		f.inflight.Store(2)
		var w syncWriter
		go func() { time.Sleep(120 * time.Millisecond); close(f.release) }()
		if err := shutdown(&w, f, syscall.SIGTERM, nil, time.Minute, 20*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		out := w.String()
		if !strings.Contains(out, "waiting up to 1m0s for 2 requests in flight") || !strings.Contains(out, "shutdown: waiting for 2 requests in flight") || strings.Contains(out, "cut") {
			t.Fatalf("output:\n%s", out)
		}
	})
	t.Run("wait over", func(t *testing.T) {
		f := &fakeServer{release: make(chan struct{})}
		f.inflight.Store(1)
		var w syncWriter
		if err := shutdown(&w, f, syscall.SIGINT, nil, 50*time.Millisecond, time.Hour); err != nil {
			t.Fatalf("a cut shutdown is not an error: %v", err)
		}
		if !strings.Contains(w.String(), "wait (--shutdown-timeout) is over: cut 1 request") {
			t.Fatalf("output:\n%s", w.String())
		}
	})
	t.Run("second signal", func(t *testing.T) {
		f := &fakeServer{release: make(chan struct{})}
		f.inflight.Store(3)
		sigs := make(chan os.Signal, 1)
		sigs <- syscall.SIGTERM
		var w syncWriter
		start := time.Now()
		if err := shutdown(&w, f, syscall.SIGTERM, sigs, time.Hour, time.Hour); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > 10*time.Second || !strings.Contains(w.String(), "second signal (terminated): cut 3 requests") {
			t.Fatalf("output after %v:\n%s", time.Since(start), w.String())
		}
	})
}

// syncWriter is a buffer safe for the writer and the test.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func TestVersion(t *testing.T) {
	var b bytes.Buffer
	buildVersion{Version: "v1.2.3", Commit: "abc123", CommitTime: "2026-11-23T00:00:00Z", Modified: true, Go: "go1.24", Platform: "linux/amd64"}.write(&b)
	for _, want := range []string{"shardstore v1.2.3", "commit  abc123 (2026-11-23T00:00:00Z) with uncommitted changes", "go      go1.24 linux/amd64"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("version output lacks %q:\n%s", want, b.String())
		}
	}
	if v := currentBuild(); v.Version == "" || v.Go == "" {
		t.Fatalf("current build %+v", v)
	}
}

func TestParsePublicURL(t *testing.T) {
	for in, want := range map[string]string{"": "", "https://s3.example.com": "https://s3.example.com",
		"http://10.0.0.5:9000/": "http://10.0.0.5:9000"} {
		if got, err := parsePublicURL(in); err != nil || got != want {
			t.Errorf("parsePublicURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"ftp://x", "https://", "https://h/p", "https://h?q=1", "https://u:p@h"} {
		if _, err := parsePublicURL(bad); err == nil {
			t.Errorf("parsePublicURL(%q) accepted", bad)
		}
	}
}

func TestEndpointHost(t *testing.T) {
	cases := map[string]string{
		"127.0.0.1:9000": "127.0.0.1:9000",
		"0.0.0.0:9000":   "127.0.0.1:9000",
		"[::]:9000":      "127.0.0.1:9000",
		"[::1]:9000":     "[::1]:9000",
	}
	for in, want := range cases {
		a, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := endpointHost(a); got != want {
			t.Errorf("endpointHost(%s) = %s, want %s", in, got, want)
		}
	}
}
