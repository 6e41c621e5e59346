package drive

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// fullUsageFS is fullFS that also reports no free space while full, as
// a full filesystem's statfs does.
type fullUsageFS struct {
	vfs.FS
	full *atomic.Bool
}

func (f fullUsageFS) GetDiskUsage(path string) (vfs.DiskUsage, error) {
	du, err := f.FS.GetDiskUsage(path)
	if err == nil && f.full.Load() {
		du.UsedBytes += du.AvailBytes
		du.AvailBytes = 0
	}
	return du, err
}

// A drive reopened (a node restarted) with no space left and records in
// its WAL opens, serves its records and refuses writes as a full drive
// (ErrDriveFull, not ErrDriveFaulty: a full drive stays online), then
// takes writes again by itself once space is free (H1 in
// docs/consistency.md). Before the fix OpenLocal never returned: pebble
// retried the flush of the replayed WAL for ever.
func TestFullDriveOpensReadOnly(t *testing.T) {
	ctx := context.Background()
	var full atomic.Bool
	opts := LocalOptions{indexFS: fullUsageFS{FS: fullFS(&full), full: &full}}
	dir := t.TempDir()
	d := openLocal(t, dir, opts)
	if err := d.WriteFormat(ctx, testFormat); err != nil {
		t.Fatal(err)
	}
	if err := putKey(ctx, d, "b/acked", "v1"); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	full.Store(true)
	type opened struct {
		d   *Local
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		d, err := OpenLocal(dir, opts)
		ch <- opened{d, err}
	}()
	var o opened
	select {
	case o = <-ch:
	case <-time.After(2 * time.Minute):
		t.Fatal("OpenLocal of a full drive did not return within 2 minutes (pebble retries the replayed WAL's flush for ever)")
	}
	if o.err != nil {
		t.Fatalf("OpenLocal of a full drive: %v", o.err)
	}
	d = o.d
	t.Cleanup(func() { d.Close() })
	if _, err := d.ReadFormat(ctx); err != nil {
		t.Fatalf("ReadFormat of the full drive: %v", err)
	}
	if v, err := d.Get(ctx, TableObjects, "b/acked"); err != nil || string(v) != "v1" {
		t.Fatalf("acknowledged record on the full drive: %q, %v", v, err)
	}
	err := putKey(ctx, d, "b/refused", "v2")
	if !errors.Is(err, ErrDriveFull) || errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("write to the full drive: %v, want ErrDriveFull and not ErrDriveFaulty", err)
	}
	// Reads stay served after the refused write.
	if v, err := d.Get(ctx, TableObjects, "b/acked"); err != nil || string(v) != "v1" {
		t.Fatalf("acknowledged record after a refused write: %q, %v", v, err)
	}

	full.Store(false)
	deadline := time.Now().Add(time.Minute)
	for {
		err := putKey(ctx, d, "b/after", "v3")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("write a minute after space was freed: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d2 := openLocal(t, dir, LocalOptions{})
	for k, want := range map[string]string{"b/acked": "v1", "b/after": "v3"} {
		if v, err := d2.Get(ctx, TableObjects, k); err != nil || string(v) != want {
			t.Fatalf("%s after a restart: %q, %v", k, v, err)
		}
	}
	if _, err := d2.Get(ctx, TableObjects, "b/refused"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the refused write after a restart: %v, want ErrNotFound", err)
	}
}
