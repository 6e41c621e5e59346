package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/shardstore/shardstore/internal/drive"
)

// TestAccessLogDirs: the spool goes on formatted drives only (a missing
// or blank drive directory is never written), one per filesystem, at
// most parity+1.
func TestAccessLogDirs(t *testing.T) {
	base := t.TempDir()
	var roots []string
	for _, name := range []string{"missing", "blank", "d1", "d2", "d3"} {
		root := filepath.Join(base, name)
		roots = append(roots, root)
		if name == "missing" {
			continue
		}
		if err := os.MkdirAll(drive.SysDir(root), 0o700); err != nil {
			t.Fatal(err)
		}
		if name != "blank" {
			if err := os.WriteFile(filepath.Join(drive.SysDir(root), "format.json"), []byte("{}"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	// All on one filesystem: one copy, on the first formatted drive.
	want := []string{drive.AccessLogDir(filepath.Join(base, "d1"))}
	for _, parity := range []int{0, 2, 4} {
		if got := accessLogDirs(roots, parity); !reflect.DeepEqual(got, want) {
			t.Errorf("parity %d: %v, want %v", parity, got, want)
		}
	}
	if got := accessLogDirs(roots[:2], 2); len(got) != 0 {
		t.Errorf("unformatted drives chosen: %v", got)
	}
	if _, err := os.Stat(roots[0]); !os.IsNotExist(err) {
		t.Errorf("a missing drive directory was created: %v", err)
	}
}

// TestAccessLogDirsTwoFilesystems: drives on two filesystems get a copy
// each when parity allows it.
func TestAccessLogDirsTwoFilesystems(t *testing.T) {
	other, err := os.MkdirTemp("/dev/shm", "accesslog-test-")
	if err != nil {
		t.Skipf("no second filesystem to test with (/dev/shm): %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	var a, b unix.Stat_t
	base := t.TempDir()
	if unix.Stat(base, &a) != nil || unix.Stat(other, &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm is on the same filesystem as the test's temporary directory")
	}
	var roots []string
	for _, root := range []string{filepath.Join(base, "d1"), filepath.Join(base, "d2"), filepath.Join(other, "d3")} {
		if err := os.MkdirAll(drive.SysDir(root), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(drive.SysDir(root), "format.json"), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, root)
	}
	if got := accessLogDirs(roots, 1); len(got) != 2 || got[0] != drive.AccessLogDir(roots[0]) || got[1] != drive.AccessLogDir(roots[2]) {
		t.Errorf("parity 1: %v, want the first drive of each filesystem", got)
	}
	if got := accessLogDirs(roots, 0); len(got) != 1 {
		t.Errorf("parity 0: %v, want one copy", got)
	}
}
