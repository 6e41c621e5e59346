package engine

import (
	"bytes"
	"context"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
)

// TestRebalanceMovesUpload: a rebalance's move of a multipart upload in
// progress (neither pool drained) takes it with its parts to the pool
// the rebalance names, where parts go on and it completes byte-identical
// in that pool only; an upload whose key the source holds stays with its
// key; and a copy a move cut short left in the source (uploadSet finds
// the upload's current copy in the other pool, where parts went since)
// is removed as stale instead of being copied over the current one.
func TestRebalanceMovesUpload(t *testing.T) {
	e, err := New(Config{Paths: poolPaths(t.TempDir(), 4, 6), Pools: []int{4, 6}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	p1, p2 := e.pools[0], e.pools[1]
	// in runs f with new keys going to pool p only.
	in := func(p *pool, f func()) {
		other := p1
		if p == p1 {
			other = p2
		}
		e.poolState.setDraining(map[string]bool{other.id: true})
		f()
		e.poolState.setDraining(nil)
	}
	parts := [][]byte{bytes.Repeat([]byte{1}, MinPartSize+7), bytes.Repeat([]byte{2}, MinPartSize+13), []byte("the last part")}
	upload := func(key string) (string, []CompletePart) {
		t.Helper()
		id, err := e.NewMultipartUpload(ctx, "bucket", key, PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var done []CompletePart
		for n := 1; n <= 2; n++ {
			pi, err := e.PutObjectPart(ctx, "bucket", key, id, n, bytes.NewReader(parts[n-1]), int64(len(parts[n-1])), PartOptions{})
			if err != nil {
				t.Fatalf("part %d: %v", n, err)
			}
			done = append(done, CompletePart{Number: n, ETag: pi.ETag})
		}
		return id, done
	}
	finish := func(key, id string, done []CompletePart, want *pool) {
		t.Helper()
		pi, err := e.PutObjectPart(ctx, "bucket", key, id, 3, bytes.NewReader(parts[2]), int64(len(parts[2])), PartOptions{})
		if err != nil {
			t.Fatalf("part 3 of %s: %v", key, err)
		}
		done = append(done, CompletePart{Number: 3, ETag: pi.ETag})
		if _, err := e.CompleteMultipartUpload(ctx, "bucket", key, id, done, PutOptions{}); err != nil {
			t.Fatalf("complete %s: %v", key, err)
		}
		if found := holdersOf(t, e, key); poolsHolding(found) != 1 || e.heldBy(found) != want.index {
			t.Fatalf("%s in pools %v, want pool %d only", key, found, want.index+1)
		}
		if got, err := getAll(t, e, key, GetOptions{}); err != nil || !bytes.Equal(got, bytes.Join(parts, nil)) {
			t.Fatalf("GET %s: %d bytes, %v", key, len(got), err)
		}
	}

	// Moved from pool 1 to pool 2, neither drained.
	var id string
	var done []CompletePart
	in(p1, func() { id, done = upload("mp") })
	moved, n, err := e.moveUploadTo(ctx, p1, p2, uploadRef{"bucket", "mp", id})
	if err != nil || !moved || n < int64(len(parts[0])+len(parts[1])) {
		t.Fatalf("rebalance move: %v, %d bytes, %v", moved, n, err)
	}
	if e.uploadSet(ctx, "bucket", "mp", id).pool != p2 || !e.uploadMovedFrom(ctx, e.setIn(p1, "bucket", "mp"), "bucket", "mp", id) {
		t.Fatal("the upload is not in pool 2 alone after the move")
	}
	finish("mp", id, done, p2)

	// The key lives in pool 1: its upload stays there.
	in(p1, func() {
		if _, err := e.PutObject(ctx, "bucket", "held", bytes.NewReader([]byte("v1")), 2, PutOptions{}); err != nil {
			t.Fatal(err)
		}
		id, done = upload("held")
	})
	if moved, _, err := e.moveUploadTo(ctx, p1, p2, uploadRef{"bucket", "held", id}); moved || err != nil {
		t.Fatalf("an upload whose key is in the source moved: %v %v", moved, err)
	}
	finish("held", id, done, p1)

	// A stale copy in the source: the upload is in pool 1 (found first),
	// and pool 2 holds an older copy of its record, as a move from pool 2
	// cut short after writing pool 1's copy leaves it.
	in(p1, func() { id, done = upload("cut") })
	ukey := drive.UploadKey("bucket", "cut", id)
	rec, err := e.setIn(p1, "bucket", "cut").drives[0].Get(ctx, drive.TableUploads, ukey)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range e.setIn(p2, "bucket", "cut").drives {
		b := &drive.Batch{}
		b.Put(drive.TableUploads, ukey, rec)
		if err := d.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := e.readUpload(ctx, e.setIn(p2, "bucket", "cut"), "bucket", "cut", id); err != nil {
		t.Fatalf("the stale copy is not readable: %v", err)
	}
	if moved, _, err := e.moveUploadTo(ctx, p2, p1, uploadRef{"bucket", "cut", id}); moved || err != nil {
		t.Fatalf("move of the stale copy: %v %v", moved, err)
	}
	if _, _, err := e.readUpload(ctx, e.setIn(p2, "bucket", "cut"), "bucket", "cut", id); err == nil {
		t.Fatal("the stale copy is still in pool 2")
	}
	finish("cut", id, done, p1)
}
