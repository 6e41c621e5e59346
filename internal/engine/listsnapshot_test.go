package engine

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"sync/atomic"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
)

// flipAfterReads is a drive whose record reads of one key count on a
// counter shared by every drive; the read that brings it to flipAt runs
// flip once it has its own value, so every read of the first quorum
// read sees the state before flip and later reads the state after.
type flipAfterReads struct {
	drive.Drive
	key    string
	reads  *atomic.Int32
	flipAt *atomic.Int32
	flip   func()
}

func (d *flipAfterReads) Get(ctx context.Context, t drive.Table, key string) ([]byte, error) {
	v, err := d.Drive.Get(ctx, t, key)
	if t == drive.TableObjects && key == d.key && d.reads.Add(1) == d.flipAt.Load() {
		d.flip()
	}
	return v, err
}

// TestListingRereadsKeyChangingUnderItsRead is finding L3
// (docs/consistency.md): a listing's quorum read of a key reads the
// drives in parallel, not as one snapshot, so a read that straddles a
// commit and its settling can find some drives with the replaced
// version (read before the commit) and the others with the new one,
// settled (read after its settling dropped the previous record): no
// version on a read quorum, every drive answered, and the listing left
// the key out as a damaged one although the new version was
// acknowledged. Here ten drives hold k = v2 (acknowledged); the first
// quorum read of k sees v1 on drives 0-4 (as before v2's commit) and v2
// on drives 5-9, and the drives then hold v2 everywhere (the commit
// settled). The listing must show k with v2 (or fail with 503), never
// leave it out. Before the fix it left k out ("listing skips a key
// without read quorum").
func TestListingRereadsKeyChangingUnderItsRead(t *testing.T) {
	ctx := context.Background()
	locals := localDrives(t, 10)
	okey := drive.ObjectKey("reg", "k")
	var reads, flipAt atomic.Int32
	flipAt.Store(-1)
	put := func(p int, raw []byte) {
		b := &drive.Batch{}
		b.Put(drive.TableObjects, okey, raw)
		if err := locals[p].Apply(ctx, b); err != nil {
			t.Error(err)
		}
	}
	var v1, v2 [][]byte
	flip := func() {
		for p := 0; p < 5; p++ {
			put(p, v2[p])
		}
	}
	wrapped := make([]drive.Drive, len(locals))
	for p, d := range locals {
		wrapped[p] = &flipAfterReads{Drive: d, key: okey, reads: &reads, flipAt: &flipAt, flip: flip}
	}
	e := engineOn(t, wrapped)
	if err := e.MakeBucket(ctx, "reg", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	records := func() [][]byte {
		out := make([][]byte, len(locals))
		for p, d := range locals {
			raw, err := d.Get(ctx, drive.TableObjects, okey)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = raw
		}
		return out
	}
	if _, err := e.PutObject(ctx, "reg", "k", bytes.NewReader([]byte("v1")), 2, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	v1 = records()
	if _, err := e.PutObject(ctx, "reg", "k", bytes.NewReader([]byte("v2")), 2, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	v2 = records()
	for p := 0; p < 5; p++ {
		put(p, v1[p])
	}
	e.listVerify.Store(true) // every listed key confirmed by a quorum read
	reads.Store(0)
	flipAt.Store(int32(len(locals))) // after the first quorum read's reads
	res, err := e.ListObjects(ctx, "reg", ListOptions{})
	if err != nil {
		t.Logf("listing refused: %v", err)
		return
	}
	sum := md5.Sum([]byte("v2"))
	want := hex.EncodeToString(sum[:])
	for _, o := range res.Objects {
		if o.Key == "k" {
			if o.ETag != want {
				t.Fatalf("listing shows k with ETag %s, want v2's %s", o.ETag, want)
			}
			return
		}
	}
	t.Fatalf("listing left out k (v2 acknowledged, %d record reads): its quorum read straddled a commit and the key was taken for a damaged one (L3)", reads.Load())
}
