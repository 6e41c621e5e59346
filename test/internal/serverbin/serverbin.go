// Package serverbin builds the shardstore server binary for the test
// packages that run it as a real process (test/e2e, test/faults).
package serverbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// Build compiles ./cmd/shardstore into a new temporary directory named
// after prefix and returns the binary's path and a cleanup that removes
// the directory. The build's output goes to stderr.
func Build(prefix string) (binary string, cleanup func(), err error) {
	return BuildTags(prefix, "")
}

// BuildTags is Build with build tags (go build -tags tags; "" for none):
// test/jepsen builds with -tags testhooks (internal/wallclock,
// internal/drivefault) and, to show its checker catching one, a
// deliberately broken build.
func BuildTags(prefix, tags string) (binary string, cleanup func(), err error) {
	root, err := repoRoot()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, fmt.Errorf("temp dir: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	binary = filepath.Join(dir, "shardstore")
	args := []string{"build", "-o", binary}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	build := exec.Command("go", append(args, "./cmd/shardstore")...)
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("build shardstore: %w", err)
	}
	return binary, cleanup, nil
}

// repoRoot finds the module root from the test's working directory.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("getwd: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
}

// NoCertsDir is an empty certificates directory for servers that must
// speak plain HTTP whatever the machine's ~/.shardstore/certs holds (the
// server's default): tests set SHARDSTORE_CERTS_DIR to it. It is created
// once, under the system's temporary directory.
var NoCertsDir = sync.OnceValue(func() string {
	dir := filepath.Join(os.TempDir(), "shardstore-test-no-certs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		panic("serverbin: " + err.Error())
	}
	return dir
})
