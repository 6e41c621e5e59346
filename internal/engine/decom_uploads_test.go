package engine

import (
	"bytes"
	"context"
	"testing"
)

// TestPoolsMoveUpload moves a multipart upload in progress between pools
// of different geometry (4 and 6 drives): the parts uploaded before the
// move are re-coded for the target and keep their ETags, a part written
// to the old pool is told the upload moved (busy, retried), parts after
// the move go to the new pool, and the completed object reads back
// byte-identical from the new pool only. A second move finds nothing.
// An encrypted upload (SSE-C) moves as its ciphertext and decrypts after.
func TestPoolsMoveUpload(t *testing.T) {
	t.Run("plain", func(t *testing.T) { testMoveUpload(t, false) })
	t.Run("encrypted", func(t *testing.T) { testMoveUpload(t, true) })
}

func testMoveUpload(t *testing.T, encrypted bool) {
	root := t.TempDir()
	e, err := New(Config{Paths: poolPaths(root, 4, 6), Pools: []int{4, 6}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	var keys testKeys
	var opts PutOptions
	var unseal UnsealFunc
	if encrypted {
		opts.Encryption, unseal = keys.encryption("mp", true), keys.unseal
	}
	id, err := e.NewMultipartUpload(ctx, "bucket", "mp", opts)
	if err != nil {
		t.Fatal(err)
	}
	from := e.uploadSet(ctx, "bucket", "mp", id)
	parts := [][]byte{bytes.Repeat([]byte{1}, MinPartSize+7), bytes.Repeat([]byte{2}, MinPartSize+13), []byte("the last part")}
	var done []CompletePart
	put := func(n int) {
		t.Helper()
		pi, err := e.PutObjectPart(ctx, "bucket", "mp", id, n, bytes.NewReader(parts[n-1]), int64(len(parts[n-1])), PartOptions{Unseal: unseal})
		if err != nil {
			t.Fatalf("part %d: %v", n, err)
		}
		done = append(done, CompletePart{Number: n, ETag: pi.ETag})
	}
	put(1)
	put(2)
	e.poolState.setDraining(map[string]bool{from.pool.id: true})
	moved, n, err := e.moveUpload(ctx, from.pool, uploadRef{"bucket", "mp", id})
	if err != nil || !moved || n < int64(len(parts[0])+len(parts[1])) {
		t.Fatalf("move: %v, %d bytes, %v", moved, n, err)
	}
	to := e.uploadSet(ctx, "bucket", "mp", id)
	if to.pool == from.pool {
		t.Fatalf("the upload is still in pool %d", from.pool.index+1)
	}
	if _, _, err := e.readUpload(ctx, from, "bucket", "mp", id); err == nil {
		t.Fatal("the upload is still readable in the pool it moved from")
	}
	if !e.uploadMovedFrom(ctx, from, "bucket", "mp", id) || e.uploadMovedFrom(ctx, to, "bucket", "mp", id) {
		t.Fatal("uploadMovedFrom does not tell the old pool from the new")
	}
	if again, _, err := e.moveUpload(ctx, from.pool, uploadRef{"bucket", "mp", id}); again || err != nil {
		t.Fatalf("a second move: %v, %v; want nothing to do", again, err)
	}
	listed, err := e.ListObjectParts(ctx, "bucket", "mp", id, 0, 100)
	if err != nil || len(listed.Parts) != 2 || listed.Parts[0].ETag != done[0].ETag || listed.Parts[1].ETag != done[1].ETag {
		t.Fatalf("parts listed after the move: %+v, %v", listed.Parts, err)
	}
	put(3)
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "mp", id, done, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	found := holdersOf(t, e, "mp")
	if poolsHolding(found) != 1 || e.heldBy(found) != to.pool.index {
		t.Fatalf("object in pools %v, want pool %d only", found, to.pool.index+1)
	}
	got, err := getAll(t, e, "mp", GetOptions{Unseal: unseal})
	if err != nil || !bytes.Equal(got, bytes.Join(parts, nil)) {
		t.Fatalf("GET after the move: %d bytes, %v", len(got), err)
	}
}
