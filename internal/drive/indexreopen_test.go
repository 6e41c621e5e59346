package drive

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// fullFS is the real filesystem under the index, with every write,
// sync and create failing with ENOSPC while full is set: a drive that
// filled up and was freed again.
func fullFS(full *atomic.Bool) vfs.FS {
	return errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !full.Load() {
			return nil
		}
		switch op.Kind {
		case errorfs.OpCreate, errorfs.OpReuseForWrite, errorfs.OpFileWrite, errorfs.OpFileWriteAt,
			errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo, errorfs.OpFilePreallocate:
			return &os.PathError{Op: "write", Path: op.Path, Err: syscall.ENOSPC}
		}
		return nil
	}))
}

func putKey(ctx context.Context, d Drive, k, v string) error {
	b := &Batch{}
	b.Put(TableObjects, k, []byte(v))
	return d.Apply(ctx, b)
}

// A commit that fails on ENOSPC stops pebble for good (its "fatal
// commit error"); the drive must come back once space is free, with
// every acknowledged record, without the process reopening the drive
// (V4 in docs/consistency.md: four drives stayed stopped for the rest
// of a run). Before reopenBroken, ReadFormat kept returning the stop.
func TestIndexStoppedOnENOSPCReopens(t *testing.T) {
	ctx := context.Background()
	var full atomic.Bool
	d := openLocal(t, t.TempDir(), LocalOptions{indexFS: fullFS(&full)})
	if err := d.WriteFormat(ctx, testFormat); err != nil {
		t.Fatal(err)
	}
	if err := putKey(ctx, d, "b/acked", "v1"); err != nil {
		t.Fatal(err)
	}

	full.Store(true)
	err := putKey(ctx, d, "b/refused", "v2")
	if !errors.Is(err, ErrDriveFaulty) || !errors.Is(err, ErrDriveFull) {
		t.Fatalf("commit on a full drive: %v, want the index stopped (faulty and full)", err)
	}
	if _, err := d.Get(ctx, TableObjects, "b/acked"); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("Get on the stopped index: %v, want ErrDriveFaulty", err)
	}
	// Still full: the probe retires the stopped instance but cannot
	// open the index again.
	for i := 0; i < 3; i++ {
		if _, err := d.ReadFormat(ctx); err == nil {
			t.Fatalf("ReadFormat %d with the drive still full succeeded", i)
		}
		waitRetired(t, d)
	}

	full.Store(false)
	if _, err := d.ReadFormat(ctx); err != nil {
		t.Fatalf("ReadFormat once space is free: %v (the index should be open again)", err)
	}
	v, err := d.Get(ctx, TableObjects, "b/acked")
	if err != nil || string(v) != "v1" {
		t.Fatalf("acknowledged record after the reopen: %q, %v", v, err)
	}
	if err := putKey(ctx, d, "b/after", "v3"); err != nil {
		t.Fatalf("commit after the reopen: %v", err)
	}
	if v, err := d.Get(ctx, TableObjects, "b/after"); err != nil || string(v) != "v3" {
		t.Fatalf("record written after the reopen: %q, %v", v, err)
	}
	// And the reopened index is the one the drive closes and opens
	// again: its records are on disk.
	dir := d.root
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d2 := openLocal(t, dir, LocalOptions{})
	for k, want := range map[string]string{"b/acked": "v1", "b/after": "v3"} {
		if v, err := d2.Get(ctx, TableObjects, k); err != nil || string(v) != want {
			t.Fatalf("%s after a restart: %q, %v", k, v, err)
		}
	}
}

// waitRetired waits for the stopped instance ReadFormat retired to
// finish closing (the test's bound is generous: Close of a stopped
// pebble instance returns at once when it returns at all).
func waitRetired(t *testing.T, d *Local) {
	t.Helper()
	d.mu.RLock()
	ch := d.retiring
	d.mu.RUnlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatal("the stopped index did not close within a minute")
	}
}

// Through Health, as a node runs its drives: the stop takes the drive
// offline, and its probe brings it back online once space is free.
func TestHealthReadmitsDriveAfterENOSPC(t *testing.T) {
	ctx := context.Background()
	var full atomic.Bool
	l := openLocal(t, t.TempDir(), LocalOptions{indexFS: fullFS(&full)})
	if err := l.WriteFormat(ctx, testFormat); err != nil {
		t.Fatal(err)
	}
	h := NewHealth(l, HealthConfig{ProbeInterval: 20 * time.Millisecond})
	t.Cleanup(func() { h.Close() })
	if err := putKey(ctx, h, "b/acked", "v1"); err != nil {
		t.Fatal(err)
	}
	full.Store(true)
	if err := putKey(ctx, h, "b/refused", "v2"); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("commit on a full drive: %v", err)
	}
	if h.Online() {
		t.Fatal("drive still online after its index stopped")
	}
	full.Store(false)
	deadline := time.Now().Add(time.Minute)
	for !h.Online() {
		if time.Now().After(deadline) {
			t.Fatalf("drive not back online a minute after space was freed: %+v", h.State())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if v, err := h.Get(ctx, TableObjects, "b/acked"); err != nil || string(v) != "v1" {
		t.Fatalf("acknowledged record after re-admission: %q, %v", v, err)
	}
	if err := putKey(ctx, h, "b/after", "v3"); err != nil {
		t.Fatalf("commit after re-admission: %v", err)
	}
}
