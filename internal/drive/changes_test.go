package drive

import (
	"context"
	"errors"
	"testing"
)

var errTestOffline = errors.New("test: drive offline")

// A bucket's change mark moves with every commit that touches its
// objects, versions or bucket entry, and only with those; a bucket
// deleted and made again, or a drive reopened, never shows an old mark.
func TestChangeMarks(t *testing.T) {
	dir := t.TempDir()
	d := formattedLocal(t, dir)
	h := NewHealth(d, HealthConfig{})
	ctx := context.Background()
	mark := func(bucket string) ChangeMark {
		t.Helper()
		m, ok := h.Changes(bucket)
		if !ok {
			t.Fatal("no change mark from an online drive")
		}
		return m
	}
	apply := func(fill func(b *Batch)) {
		t.Helper()
		var b Batch
		fill(&b)
		if err := h.Apply(ctx, &b); err != nil {
			t.Fatal(err)
		}
	}
	apply(func(b *Batch) { b.Put(TableBuckets, "a", []byte("rec")); b.Put(TableBuckets, "ab", []byte("rec")) })
	m := mark("a")
	if mark("a") != m {
		t.Fatal("mark moved without a commit")
	}
	for _, c := range []struct {
		name  string
		fill  func(b *Batch)
		moves bool
	}{
		{"object of another bucket", func(b *Batch) { b.Put(TableObjects, ObjectKey("ab", "k"), []byte("r")) }, false},
		{"inline data", func(b *Batch) { b.Put(TableInline, DataKey("id", 1), []byte("x")) }, false},
		{"upload", func(b *Batch) { b.Put(TableUploads, UploadKey("a", "k", "u"), []byte("x")) }, false},
		{"object put", func(b *Batch) { b.Put(TableObjects, ObjectKey("a", "k"), []byte("r")) }, true},
		{"object delete", func(b *Batch) { b.Delete(TableObjects, ObjectKey("a", "k")) }, true},
		{"noncurrent version", func(b *Batch) { b.Put(TableVersions, VersionKey("a", "k", 1, "v"), []byte("r")) }, true},
		{"bucket entry", func(b *Batch) { b.Put(TableBuckets, "a", []byte("rec2")) }, true},
		{"keys of many buckets", func(b *Batch) {
			b.Put(TableObjects, ObjectKey("ab", "k"), []byte("r"))
			b.Put(TableObjects, ObjectKey("a", "k"), []byte("r"))
			b.Put(TableObjects, ObjectKey("ab", "l"), []byte("r"))
		}, true},
	} {
		apply(c.fill)
		now := mark("a")
		if (now != m) != c.moves {
			t.Fatalf("%s: mark moved %v, want %v", c.name, now != m, c.moves)
		}
		m = now
	}

	// Deleted and made again: a new cell, whatever its count.
	apply(func(b *Batch) { b.Delete(TableBuckets, "a") })
	apply(func(b *Batch) { b.Put(TableBuckets, "a", []byte("rec")) })
	again := mark("a")
	if again == m || again.cell == m.cell {
		t.Fatalf("recreated bucket: mark %+v, before %+v", again, m)
	}

	// Offline: no mark. Reopened: new cells.
	h.setOffline(errTestOffline)
	if _, ok := h.Changes("a"); ok {
		t.Fatal("mark from an offline drive")
	}
	h.setOnline()
	d.Close()
	if _, ok := d.Changes("a"); ok {
		t.Fatal("mark from a closed drive")
	}
	d2 := openLocal(t, dir, LocalOptions{})
	if _, err := d2.ReadFormat(ctx); err != nil {
		t.Fatal(err)
	}
	m2, ok := d2.Changes("a")
	if !ok || m2 == again {
		t.Fatalf("reopened drive: mark %+v ok %v equals the old one's", m2, ok)
	}
}
