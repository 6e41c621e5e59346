package engine

import (
	"bytes"
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// shardFiles counts the shard files on every drive of e.
func shardFiles(t *testing.T, e *Engine) int {
	t.Helper()
	n := 0
	for _, set := range e.sets {
		for _, d := range set.drives {
			if err := d.WalkShards(context.Background(), func(drive.ShardFile) error { n++; return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	return n
}

// TestReplacedDataFreed is H1's question (docs/consistency.md: a few
// hundred 5 MiB multipart uploads, each key overwritten, filled the
// harness's drives): is the data of a replaced object, of an upload
// completed over, of a part uploaded again, of parts a complete left out
// and of an aborted upload freed, and when? On one node: at once, when
// nobody reads it (no scanner involved: a drive holds exactly the shard
// files of what is live after each step). In a cluster the same frees
// wait ClusterConfig.FreeDelay (10 minutes by default) for readers on
// other nodes.
func TestReplacedDataFreed(t *testing.T) {
	ctx := context.Background()
	const drives = 4
	e, _ := testEngine(t, drives, Config{BlockSize: 64 << 10, InlineLimit: -1})
	r := rand.New(rand.NewSource(7))
	live := 0 // parts of live objects; each has a shard file per drive
	check := func(step string) {
		t.Helper()
		if got, want := shardFiles(t, e), live*drives; got != want {
			t.Fatalf("after %s: %d shard files on the drives, want %d (the live objects' parts on %d drives)", step, got, want, drives)
		}
	}
	put := func(key string, size int) {
		t.Helper()
		if _, err := e.PutObject(ctx, "bucket", key, bytes.NewReader(randBytes(r, size)), int64(size), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	upload := func(key string, sizes map[int]int, order []int) (string, map[int]CompletePart) {
		t.Helper()
		id, err := e.NewMultipartUpload(ctx, "bucket", key, PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		parts := map[int]CompletePart{}
		for _, n := range order {
			pi, err := e.PutObjectPart(ctx, "bucket", key, id, n, bytes.NewReader(randBytes(r, sizes[n])), int64(sizes[n]), PartOptions{})
			if err != nil {
				t.Fatal(err)
			}
			parts[n] = CompletePart{Number: n, ETag: `"` + pi.ETag + `"`}
		}
		return id, parts
	}
	complete := func(key, id string, parts ...CompletePart) {
		t.Helper()
		if _, err := e.CompleteMultipartUpload(ctx, "bucket", key, id, parts, PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// An unversioned object overwritten: the old version's files go.
	for range 5 {
		put("plain", 100<<10)
	}
	live = 1
	check("5 PUTs of one key")

	// Multipart uploads completed over each other and over the plain
	// object: the replaced objects' parts go.
	two := map[int]int{1: MinPartSize, 2: 1000}
	for _, key := range []string{"mpu", "mpu", "mpu", "plain"} {
		id, parts := upload(key, two, []int{1, 2})
		complete(key, id, parts[1], parts[2])
	}
	live = 2 + 2 // "mpu" and "plain", two parts each
	check("multipart uploads completed over objects")

	// A part uploaded twice (the first attempt goes at once), and a part
	// the complete leaves out (goes with the complete).
	id, parts := upload("mixed", map[int]int{1: MinPartSize, 2: 1000, 3: 500}, []int{1, 1, 2, 3})
	live += 3 // parts 1, 2 and 3 of the upload in progress
	check("a part uploaded twice")
	complete("mixed", id, parts[1], parts[2])
	live-- // part 3 unlisted
	check("a complete leaving a part out")

	// An aborted upload leaves nothing.
	id, _ = upload("aborted", two, []int{1, 2})
	if err := e.AbortMultipartUpload(ctx, "bucket", "aborted", id); err != nil {
		t.Fatal(err)
	}
	check("an aborted upload")

	// A deleted unversioned object leaves nothing.
	put("deleted", 200<<10)
	if err := e.DeleteObject(ctx, "bucket", "deleted"); err != nil {
		t.Fatal(err)
	}
	check("a deleted object")
}

// TestFreeRetriedOnOfflineDrive: a free that comes due while its drive
// is offline (here: the drive's DeleteShards fails with an I/O error a
// few times, and its health wrapper takes it offline) is tried again
// once the drive is back, instead of leaving the replaced data to the
// scanner's orphan sweep an hour later (H1: a drive full of replaced
// data, offline because its index stopped on ENOSPC, is brought back
// only by those frees). Before deleteFreed, drive 0 kept the replaced
// version's shard file.
func TestFreeRetriedOnOfflineDrive(t *testing.T) {
	r := newRig(t, Config{InlineLimit: -1, Heal: HealConfig{Disabled: true}})
	r.e.freeRetry = 20 * time.Millisecond
	data := bytes.Repeat([]byte("x"), 100<<10)
	if err := r.put("k", data); err != nil {
		t.Fatal(err)
	}
	remove := r.faulty[0].Inject(drive.Fault{Ops: []drive.Op{drive.OpDeleteShards}, Err: drive.ErrInjectedEIO, Times: 3})
	defer remove()
	if err := r.put("k", data); err != nil {
		t.Fatal(err)
	}
	count := func(p int) int {
		n := 0
		if err := r.healths[p].Inner().(*drive.Faulty).Inner().WalkShards(context.Background(), func(drive.ShardFile) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(time.Minute)
	for count(0) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("drive 0 holds %d shard files a minute after the replaced version was freed, want 1 (the live version's); drive 1 holds %d", count(0), count(1))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for p := range r.healths {
		if n := count(p); n != 1 {
			t.Fatalf("drive %d holds %d shard files, want 1", p, n)
		}
	}
	r.verify(map[string][]byte{"k": data})
}
