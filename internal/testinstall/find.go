package testinstall

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Need says what a test needs and what its absence means.
type Need struct {
	// What is what the messages call the missing thing ("slapd").
	What string
	// Tests names the tests that are skipped ("the LDAP tests"); empty:
	// the message says only "skipping".
	Tests string
	// Require is the environment variable that makes the absence a
	// failure instead of a skip (SHARDSTORE_REQUIRE_SLAPD).
	Require string
}

// Once is the result of finding (or installing) something a test needs,
// looked for at most once per process. Its zero value is ready to use.
type Once[T any] struct {
	once sync.Once
	val  T
	log  []string
	err  error
}

// Get returns what find found, calling find on first use only. Every
// call logs find's lines to t (what is used, what was installed and
// why); when find failed, t is skipped with the reason, or fails when
// n.Require is set in the environment.
func (o *Once[T]) Get(t testing.TB, n Need, find func() (T, []string, error)) T {
	t.Helper()
	o.once.Do(func() {
		// A find that panics or calls runtime.Goexit leaves err set.
		o.err = fmt.Errorf("looking for %s did not finish", n.What)
		o.val, o.log, o.err = find()
	})
	for _, l := range o.log {
		t.Log(l)
	}
	if o.err != nil {
		if n.Require != "" && os.Getenv(n.Require) != "" {
			t.Fatalf("%s is set and there is no %s: %v", n.Require, n.What, o.err)
		}
		t.Skip(skipMessage(n, o.err))
	}
	return o.val
}

func skipMessage(n Need, err error) string {
	who := "skipping"
	if n.Tests != "" {
		who += " " + n.Tests
	}
	msg := fmt.Sprintf("%s: no %s and installing it failed (%v)", who, n.What, err)
	if n.Require != "" {
		msg += fmt.Sprintf("; set %s=1 to make this a failure", n.Require)
	}
	return msg
}

// Program describes a program the tests need and where it comes from
// when missing.
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
	// Tests names the tests that need it, for the messages ("the LDAP
	// tests"); empty: "the <Name> tests" when installing, "skipping"
	// alone when skipping.
	Tests string
	// Recommends installs the packages' recommended packages too
	// (apt-get's default); without it --no-install-recommends.
	Recommends bool
}

var programs sync.Map // Program.Name -> *Once[string]

// Find returns the program's path, installing its Debian packages with
// apt-get on first use in this process (as root, or with sudo -n) and
// saying so. Without it the test is skipped with the reason, or fails
// when p.Require is set in the environment.
func Find(t testing.TB, p Program) string {
	t.Helper()
	v, _ := programs.LoadOrStore(p.Name, &Once[string]{})
	return v.(*Once[string]).Get(t, Need{What: p.Name, Tests: p.Tests, Require: p.Require}, func() (string, []string, error) {
		return FindOrInstall(p)
	})
}

// Lookup returns the first of paths that exists (see Program.Paths), or
// "".
func Lookup(paths ...string) string {
	for _, c := range paths {
		if strings.ContainsAny(c, "*?[") {
			m, _ := filepath.Glob(c)
			if len(m) == 0 {
				continue
			}
			c = m[len(m)-1]
		}
		if filepath.IsAbs(c) {
			if st, err := os.Stat(c); err == nil && !st.IsDir() {
				return c
			}
			continue
		}
		if c == "" || strings.ContainsRune(c, filepath.Separator) {
			continue // a relative path would depend on the test's directory
		}
		if path, err := exec.LookPath(c); err == nil {
			return path
		}
	}
	return ""
}

// FindOrInstall is Find without a test: the program's path and the lines
// saying what was used or installed, or why there is none. It installs
// every time it is called; Find calls it once per process.
func FindOrInstall(p Program) (string, []string, error) {
	var log []string
	if path := Lookup(p.Paths...); path != "" {
		return path, append(log, fmt.Sprintf("using %s: %s", p.Name, path)), nil
	}
	if len(p.Apt) == 0 {
		return "", log, fmt.Errorf("%s is not installed", p.Name)
	}
	pkgs := strings.Join(p.Apt, " ")
	for _, pkg := range p.Apt {
		if !ValidPackage(pkg) {
			return "", log, fmt.Errorf("%s is not installed, and %q is not a Debian package name", p.Name, pkg)
		}
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return "", log, fmt.Errorf("%s is not installed and there is no apt-get: install Debian's %s", p.Name, pkgs)
	}
	prefix, err := rootPrefix()
	if err != nil {
		return "", log, fmt.Errorf("%s is not installed, and installing it needs root: run 'sudo apt-get install %s' once", p.Name, pkgs)
	}
	tests := p.Tests
	if tests == "" {
		tests = "the " + p.Name + " tests"
	}
	err = Locked("apt", func() error {
		// Another test binary may have installed it while this one
		// waited for the lock.
		if Lookup(p.Paths...) != "" {
			return nil
		}
		log = append(log, fmt.Sprintf("installing Debian's %s with apt-get for %s", pkgs, tests))
		return aptInstall(prefix, p.Apt, p.Recommends)
	})
	if err != nil {
		return "", log, err
	}
	if path := Lookup(p.Paths...); path != "" {
		return path, append(log, fmt.Sprintf("installed %s: %s", p.Name, path)), nil
	}
	return "", log, fmt.Errorf("apt-get installed %s but %s is not found in %s", pkgs, p.Name, strings.Join(p.Paths, ", "))
}

// CacheDir is a folder for what the tests fetch (npm, pip and Maven
// packages) under the user cache: <cache>/shardstore-test/<name>. It is
// not created.
func CacheDir(name string) (string, error) {
	if !validName(name) {
		return "", fmt.Errorf("test cache folder %q: want letters, digits, '.', '_' and '-', not starting with '.'", name)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("test cache folder: %w", err)
	}
	return filepath.Join(cache, "shardstore-test", name), nil
}

// validName: a file name of letters, digits, '.', '_' and '-' that is not
// "." or ".." or hidden.
func validName(s string) bool {
	if s == "" || len(s) > 128 || s[0] == '.' {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}
