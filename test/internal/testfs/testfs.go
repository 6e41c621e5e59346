// Package testfs gives a test drive directories on filesystems of their
// own: a tmpfs (its free space its own, for rebalances and full disks)
// or a loop-mounted ext4 image (syncs that reach a disk, for
// measurements). Both need the right to mount (root); without it, or
// without mkfs.ext4, the test is skipped with the reason printed.
package testfs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// Tmpfs mounts a tmpfs of size bytes at dir, named name in the mount
// table, and unmounts it (lazily) at the test's end. why says what the
// test needs it for; it goes in the skip message.
func Tmpfs(t testing.TB, dir, name string, size int64, why string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), name, dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a tmpfs at %s (%s; run as root): %v: %s", dir, why, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v: %s", dir, err, out)
		}
	})
}

// LoopExt4 mounts at dir an ext4 filesystem of size bytes made in an
// image file beside it (dir + ".img", on the disk dir is on), and
// unmounts it at the test's end.
func LoopExt4(t testing.TB, dir string, size int64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	img := dir + ".img"
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
		t.Skipf("cannot make an ext4 image for a drive (mkfs.ext4 from e2fsprogs): %v: %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
		t.Skipf("cannot loop-mount a drive's ext4 image (run as root): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v: %s", dir, err, out)
		}
	})
}

// Fill writes a file at path until its filesystem has no space left,
// the last bytes one at a time (what a partial write leaves).
func Fill(t testing.TB, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			t.Fatal(err)
		}
	}
	for _, err := f.Write(buf[:1]); err == nil; _, err = f.Write(buf[:1]) {
	}
}
