package testinstall

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// ValidPackage reports whether s is a Debian package name (Debian policy
// 5.6.1: at least two characters of lower-case letters, digits, '+', '-'
// and '.', starting with a letter or digit), so that it cannot reach
// apt-get as an option, a version or release pin, or a path.
func ValidPackage(s string) bool {
	if len(s) < 2 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '+' || c == '-' || c == '.') && i > 0:
		default:
			return false
		}
	}
	return true
}

// rootPrefix is what runs apt-get as root: nothing as root, sudo -n when
// that works without a password.
func rootPrefix() ([]string, error) {
	if os.Geteuid() == 0 {
		return nil, nil
	}
	if err := exec.Command("sudo", "-n", "true").Run(); err != nil {
		return nil, fmt.Errorf("sudo -n: %w", err)
	}
	return []string{"sudo", "-n"}, nil
}

// aptInstall runs apt-get install (apt-get update first when the install
// fails, then once more). The caller holds the "apt" lock.
func aptInstall(prefix, pkgs []string, recommends bool) error {
	run := func(args ...string) ([]byte, error) {
		args = append(append(append([]string{}, prefix...), "env", "DEBIAN_FRONTEND=noninteractive"), args...)
		return exec.Command(args[0], args[1:]...).CombinedOutput()
	}
	install := []string{"apt-get", "install", "-y", "-q"}
	if !recommends {
		install = append(install, "--no-install-recommends")
	}
	install = append(append(install, "--"), pkgs...)
	out, err := run(install...)
	if err == nil {
		return nil
	}
	if _, uerr := run("apt-get", "update", "-q"); uerr == nil {
		if out, err = run(install...); err == nil {
			return nil
		}
	}
	return fmt.Errorf("apt-get install %s: %w: %s", strings.Join(pkgs, " "), err, Tail(out))
}

// Locked runs fn holding an exclusive lock that every test binary on the
// machine shares by name (a file lock in the temporary directory), so
// that two of them never install the same thing at once.
func Locked(name string, fn func() error) error {
	if !validName(name) {
		return fmt.Errorf("lock name %q: want letters, digits, '.', '_' and '-'", name)
	}
	path := filepath.Join(os.TempDir(), "shardstore-test-"+name+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return fmt.Errorf("install lock: %w", err)
	}
	defer f.Close()
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("install lock %s: %w", path, err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing unlocks too
	return fn()
}
