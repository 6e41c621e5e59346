package drive

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// reserveUsageFS reports, while full, no free space while the drive's
// reserve file exists and 40 MiB once it is removed: a full filesystem
// that the reserve's bytes give room again.
type reserveUsageFS struct {
	vfs.FS
	full    *atomic.Bool
	reserve string
}

func (f reserveUsageFS) GetDiskUsage(path string) (vfs.DiskUsage, error) {
	du, err := f.FS.GetDiskUsage(path)
	if err != nil || !f.full.Load() {
		return du, err
	}
	du.AvailBytes = 0
	if _, err := os.Stat(f.reserve); errors.Is(err, os.ErrNotExist) {
		du.AvailBytes = 40 << 20
	}
	return du, nil
}

func TestAddsData(t *testing.T) {
	big := strings.Repeat("x", deletesOnlyBatchBytes)
	for _, tc := range []struct {
		name string
		b    func(b *Batch)
		want bool
	}{
		{"deletes", func(b *Batch) {
			b.Delete(TableObjects, "b/k")
			b.Delete(TableRefs, "id")
			b.Delete(TableInline, "id/1")
		}, false},
		{"delete marker", func(b *Batch) {
			b.Put(TableObjects, "b/k", []byte("record"))
			b.Put(TableVersions, "b/k/v", []byte("version"))
		}, false},
		{"engine state", func(b *Batch) { b.Put(TableSystem, "freeq/x", []byte{1}) }, false},
		{"bucket", func(b *Batch) { b.Put(TableBuckets, "b", []byte("{}")) }, false},
		{"inline data", func(b *Batch) { b.Put(TableInline, "id/1", []byte("d")) }, true},
		{"ref", func(b *Batch) { b.Put(TableRefs, "id", nil) }, true},
		{"upload", func(b *Batch) { b.Put(TableUploads, "u", nil) }, true},
		{"part", func(b *Batch) { b.Put(TableParts, "p", nil) }, true},
		{"large record", func(b *Batch) { b.Put(TableObjects, "b/k", []byte(big)) }, true},
		{"empty", func(*Batch) {}, false},
	} {
		b := &Batch{}
		tc.b(b)
		if got := addsData(b); got != tc.want {
			t.Errorf("%s: addsData = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A drive whose filesystem is full used to open its index read-only and
// refuse every write, deletions too (a cluster of full drives answered
// DELETE 507). Now, with its reserve released, it opens for writes in
// deletes-only mode: records are read, deletions and small record
// changes are taken, writes that add data (inline data, refs, shard
// files) are refused as a full drive's (ErrDriveFull, the drive stays
// online); once space is free the reserve is allocated again and every
// write is taken. Before the reserve the deletion failed with
// ErrDriveFull.
func TestFullDriveTakesDeletions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var full atomic.Bool
	opts := LocalOptions{indexFS: reserveUsageFS{FS: vfs.Default, full: &full, reserve: filepath.Join(dir, sysDirName, reserveFileName)}}
	d := openLocal(t, dir, opts)
	if err := d.WriteFormat(ctx, testFormat); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"b/k1", "b/k2"} {
		if err := putKey(ctx, d, k, "v"); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openLocal(t, dir, opts) // an open for writes allocates the reserve
	if fi, err := os.Stat(d.reservePath()); err != nil || fi.Size() != reserveSize {
		t.Fatalf("reserve after an open with space: %v, %v", fi, err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	full.Store(true)
	d, err := OpenLocal(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if _, err := d.ReadFormat(ctx); err != nil {
		t.Fatalf("ReadFormat of the full drive: %v", err)
	}
	if !d.DeletesOnly() || d.ReadOnly() {
		t.Fatalf("full drive with a reserve: DeletesOnly %v ReadOnly %v, want deletes-only", d.DeletesOnly(), d.ReadOnly())
	}
	if v, err := d.Get(ctx, TableObjects, "b/k2"); err != nil || string(v) != "v" {
		t.Fatalf("record on the full drive: %q, %v", v, err)
	}
	del := &Batch{}
	del.Delete(TableObjects, "b/k1")
	del.Delete(TableRefs, "id1")
	if err := d.Apply(ctx, del); err != nil {
		t.Fatalf("deletion on the full drive: %v (before the reserve: ErrDriveFull)", err)
	}
	if _, err := d.Get(ctx, TableObjects, "b/k1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted record: %v, want ErrNotFound", err)
	}
	if err := putKey(ctx, d, "b/k2", "marker"); err != nil {
		t.Fatalf("small record change on the full drive: %v", err)
	}
	inline := &Batch{}
	inline.Put(TableInline, "id2/1", []byte("data"))
	if err := d.Apply(ctx, inline); !errors.Is(err, ErrDriveFull) || errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("inline data on the full drive: %v, want ErrDriveFull and not ErrDriveFaulty", err)
	}
	if _, err := d.CreateShard(ctx, ShardRef{ID: "0123456789abcdef", Part: 1}); !errors.Is(err, ErrDriveFull) {
		t.Fatalf("shard file on the full drive: %v, want ErrDriveFull", err)
	}

	full.Store(false)
	deadline := time.Now().Add(time.Minute)
	for d.DeletesOnly() {
		if time.Now().After(deadline) {
			t.Fatal("still deletes-only a minute after space was freed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if fi, err := os.Stat(d.reservePath()); err != nil || fi.Size() != reserveSize {
		t.Fatalf("reserve once space was freed: %v, %v", fi, err)
	}
	if err := d.Apply(ctx, inline); err != nil {
		t.Fatalf("inline data once space was freed: %v", err)
	}
}
