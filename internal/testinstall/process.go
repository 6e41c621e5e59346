package testinstall

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

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

// FreeAddr is FreePort as 127.0.0.1:PORT.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(FreePort(t))
}

// WaitTCP waits until addr accepts a TCP connection and then until ready
// (when not nil: a protocol-level check) returns nil. It gives up with
// the last error after limit, or at once when exited is closed (the
// server's process ended).
func WaitTCP(addr string, limit time.Duration, exited <-chan struct{}, ready func() error) error {
	deadline := time.Now().Add(limit)
	var last error
	for {
		select {
		case <-exited:
			return fmt.Errorf("exited while starting")
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			if ready == nil {
				return nil
			}
			if last = ready(); last == nil {
				return nil
			}
		} else {
			last = err
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("did not answer on %s within %s: %w", addr, limit, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Process is a server process that can be stopped and started again with
// the same command (same port, same data directory). Its output is kept
// (Output) and shown when it does not start.
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
	// StopSignal is what Stop sends first (default SIGTERM); PostgreSQL
	// waits for its clients on SIGTERM, and shuts down at once on SIGINT.
	StopSignal syscall.Signal

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	out  *syncWriter
}

// Run starts the process (Start) and stops it when the test ends.
func (p *Process) Run(t testing.TB) {
	t.Helper()
	p.Start(t)
	t.Cleanup(func() { p.Stop(t) })
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
	if len(p.Args) == 0 {
		return fmt.Errorf("no command line")
	}
	cmd := exec.Command(p.Args[0], p.Args[1:]...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Dir = p.Dir
	out := &syncWriter{w: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: Stop ends what it started too.
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
	err := WaitTCP(p.Addr, limit, done, p.Ready)
	if err == nil {
		return nil
	}
	select {
	case <-done:
		p.cmd = nil
		return fmt.Errorf("%s exited while starting: %s", p.Name, Tail([]byte(out.String())))
	default:
	}
	p.stopLocked()
	return fmt.Errorf("%s %w: %s", p.Name, err, Tail([]byte(out.String())))
}

// Stop stops the process (StopSignal to its process group, SIGKILL after
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
	sig := p.StopSignal
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	p.cmd = nil
}

// Output is what the server printed since its last start (the last MiB
// at most).
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

// RunCommand runs a command to its end (an initdb), as cred when set, and
// fails t with its output when it fails.
func RunCommand(t testing.TB, cred *syscall.Credential, dir string, args ...string) {
	t.Helper()
	if len(args) == 0 {
		t.Fatal("RunCommand: no command line")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, Tail(out))
	}
}

// Tail is the last 2000 bytes of a command's output (for a failure
// message).
func Tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// LastLines is the last n lines of s (a log tail for a failure message).
func LastLines(s string, n int) string {
	if n <= 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
