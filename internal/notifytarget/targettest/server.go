package targettest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/shardstore/shardstore/internal/testinstall"
)

// Program describes a server program the tests need and where it comes
// from when missing (testinstall.Program).
type Program = testinstall.Program

// Find returns the program's path, installing its Debian packages with
// apt-get on first use (as root, or with sudo -n) and saying so. Without
// it the test is skipped with the reason, or fails when p.Require is
// set in the environment.
func Find(t testing.TB, p Program) string {
	t.Helper()
	return testinstall.Find(t, p)
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	return testinstall.FreePort(t)
}

// Process is a server process that can be stopped and started again with
// the same command (same port, same data directory).
type Process = testinstall.Process

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
	testinstall.RunCommand(t, cred, dir, args...)
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
