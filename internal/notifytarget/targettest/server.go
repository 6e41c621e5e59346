package targettest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Program describes a server program the tests need and where it comes
// from when missing.
type Program struct {
	// Name is what the messages call it ("nats-server").
	Name string
	// Paths are where to look, in order: a bare name is looked up on
	// PATH, an absolute path is used when it exists (a glob pattern's
	// last match: /usr/lib/postgresql/*/bin/postgres).
	Paths []string
	// Apt is the Debian packages that provide it.
	Apt []string
	// Require is the environment variable that makes a missing program a
	// failure instead of a skip (SHARDSTORE_REQUIRE_NATS, ...).
	Require string
}

var installs sync.Map // Program.Name -> *installResult

type installResult struct {
	once sync.Once
	path string
	log  []string
	err  error
}

// Find returns the program's path, installing its Debian packages with
// apt-get on first use (as root, or with sudo -n) and saying so. Without
// it the test is skipped with the reason, or fails when p.Require is
// set in the environment.
func Find(t testing.TB, p Program) string {
	t.Helper()
	v, _ := installs.LoadOrStore(p.Name, &installResult{})
	res := v.(*installResult)
	res.once.Do(func() { res.path, res.log, res.err = findOrInstall(p) })
	for _, l := range res.log {
		t.Log(l)
	}
	if res.err != nil {
		if p.Require != "" && os.Getenv(p.Require) != "" {
			t.Fatalf("%s is set and there is no %s: %v", p.Require, p.Name, res.err)
		}
		t.Skipf("skipping: no %s and installing it failed (%v); set %s=1 to make this a failure", p.Name, res.err, p.Require)
	}
	return res.path
}

func lookup(p Program) string {
	for _, c := range p.Paths {
		if strings.ContainsAny(c, "*?[") {
			if m, _ := filepath.Glob(c); len(m) > 0 {
				c = m[len(m)-1]
			}
		}
		if filepath.IsAbs(c) {
			if st, err := os.Stat(c); err == nil && !st.IsDir() {
				return c
			}
			continue
		}
		if path, err := exec.LookPath(c); err == nil {
			return path
		}
	}
	return ""
}

func findOrInstall(p Program) (string, []string, error) {
	var log []string
	if path := lookup(p); path != "" {
		return path, append(log, fmt.Sprintf("using %s: %s", p.Name, path)), nil
	}
	if len(p.Apt) == 0 {
		return "", log, fmt.Errorf("%s is not installed", p.Name)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return "", log, fmt.Errorf("%s is not installed and there is no apt-get: install Debian's %s", p.Name, strings.Join(p.Apt, " "))
	}
	var prefix []string
	if os.Geteuid() != 0 {
		if exec.Command("sudo", "-n", "true").Run() != nil {
			return "", log, fmt.Errorf("%s is not installed, and installing it needs root: run 'sudo apt-get install %s' once", p.Name, strings.Join(p.Apt, " "))
		}
		prefix = []string{"sudo", "-n"}
	}
	log = append(log, fmt.Sprintf("installing Debian's %s with apt-get for the %s tests", strings.Join(p.Apt, " "), p.Name))
	run := func(args ...string) ([]byte, error) {
		args = append(append(prefix, "env", "DEBIAN_FRONTEND=noninteractive"), args...)
		return exec.Command(args[0], args[1:]...).CombinedOutput()
	}
	install := append([]string{"apt-get", "install", "-y", "-q", "--no-install-recommends"}, p.Apt...)
	if out, err := run(install...); err != nil {
		if _, uerr := run("apt-get", "update", "-q"); uerr != nil {
			return "", log, fmt.Errorf("apt-get install %s: %w: %s", strings.Join(p.Apt, " "), err, tail(out))
		}
		if out, err := run(install...); err != nil {
			return "", log, fmt.Errorf("apt-get install %s: %w: %s", strings.Join(p.Apt, " "), err, tail(out))
		}
	}
	if path := lookup(p); path != "" {
		return path, append(log, fmt.Sprintf("installed %s: %s", p.Name, path)), nil
	}
	return "", log, fmt.Errorf("apt-get installed %s but %s is not found", strings.Join(p.Apt, " "), p.Name)
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Process is a server process that can be stopped and started again with
// the same command (same port, same data directory).
type Process struct {
	Name string
	// Args is the command line; Env is added to the environment.
	Args []string
	Env  []string
	Dir  string
	// Credential, when set, runs the process as another user (servers
	// that refuse to run as root: PostgreSQL).
	Credential *syscall.Credential
	// Addr is the 127.0.0.1:port that answers once the server is up.
	Addr string
	// Ready, when set, is polled after the port accepts connections
	// until it returns nil (a protocol-level check).
	Ready func() error
	// StartTimeout bounds one start (default 60s: a JVM or Erlang
	// server on a loaded 2-core machine).
	StartTimeout time.Duration

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	out  *syncWriter
}

// Start starts the process and waits until it answers; it fails t with
// the server's output when it does not.
func (p *Process) Start(t testing.TB) {
	t.Helper()
	if err := p.start(); err != nil {
		t.Fatalf("starting %s: %v", p.Name, err)
	}
}

func (p *Process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return nil
	}
	cmd := exec.Command(p.Args[0], p.Args[1:]...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Dir = p.Dir
	out := &syncWriter{w: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: p.Credential}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", p.Args[0], err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.cmd, p.done, p.out = cmd, done, out
	limit := p.StartTimeout
	if limit == 0 {
		limit = 60 * time.Second
	}
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-done:
			p.cmd = nil
			return fmt.Errorf("%s exited while starting: %s", p.Name, tail([]byte(out.String())))
		default:
		}
		c, err := net.DialTimeout("tcp", p.Addr, time.Second)
		if err == nil {
			c.Close()
			if p.Ready == nil {
				return nil
			}
			if last = p.Ready(); last == nil {
				return nil
			}
		} else {
			last = err
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.stopLocked()
	return fmt.Errorf("%s did not answer on %s within %s (%v): %s", p.Name, p.Addr, limit, last, tail([]byte(out.String())))
}

// Stop stops the process (SIGTERM to its process group, SIGKILL after
// 30 s) and waits for it and its port to be gone.
func (p *Process) Stop(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked()
	// Until the port refuses, the old server may still answer.
	for i := 0; i < 100; i++ {
		c, err := net.DialTimeout("tcp", p.Addr, 200*time.Millisecond)
		if err != nil {
			return
		}
		c.Close()
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s still answers on %s after it was stopped", p.Name, p.Addr)
}

func (p *Process) stopLocked() {
	if p.cmd == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	p.cmd = nil
}

// Output is what the server printed since its last start.
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.out == nil {
		return ""
	}
	return p.out.String()
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w.Len() > 1<<20 {
		s.w.Reset()
	}
	return s.w.Write(b)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

// Unprivileged is who a server that refuses root runs as when the tests
// run as root: the named system user (postgres, mysql) when it exists,
// else nobody; nil when the tests do not run as root. The returned
// chown changes a directory's owner to that user.
func Unprivileged(t testing.TB, user string) (*syscall.Credential, func(dir string)) {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil, func(string) {}
	}
	uid, gid := 65534, 65534
	if out, err := exec.Command("id", "-u", user).Output(); err == nil {
		fmt.Sscan(string(out), &uid)
		if out, err := exec.Command("id", "-g", user).Output(); err == nil {
			fmt.Sscan(string(out), &gid)
		}
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	return cred, func(dir string) {
		_ = filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
			if err == nil {
				err = os.Lchown(p, uid, gid)
			}
			return err
		})
	}
}

// RunCommand runs a command to its end (an initdb), as cred when set, and
// fails t with its output when it fails.
func RunCommand(t testing.TB, cred *syscall.Credential, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, tail(out))
	}
}

// TempDir is a temporary directory that another user can reach (the
// testing package's are inside a 0700 directory of root's): removed
// when the test ends.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "shardstore-target-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
