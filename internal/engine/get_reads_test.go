package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
)

// recordReadsDrive counts the reads of object records, and reports
// itself offline (as drive.Health does) when told to.
type recordReadsDrive struct {
	drive.Drive
	reads, inlineReads *atomic.Int64
	offline            *atomic.Bool
}

func (d recordReadsDrive) Online() bool { return !d.offline.Load() }

func (d recordReadsDrive) Get(ctx context.Context, t drive.Table, key string) ([]byte, error) {
	switch t {
	case drive.TableObjects:
		d.reads.Add(1)
	case drive.TableInline:
		d.inlineReads.Add(1)
	}
	return d.Drive.Get(ctx, t, key)
}

// TestGetReadsAQuorumOfRecords: a GET or HEAD of a healthy object reads
// the records of a write quorum of drives (12 of 16), those holding its
// data shards, not all 16; with one of them offline it reads the first
// parity drive in its place, and with one disagreeing it reads them all.
// Every read returns the object's bytes.
func TestGetReadsAQuorumOfRecords(t *testing.T) {
	ctx := context.Background()
	drives := localDrives(t, 16)
	reads := make([]*atomic.Int64, len(drives))
	offline := make([]*atomic.Bool, len(drives))
	inlineReads := make([]*atomic.Int64, len(drives))
	counted := make([]drive.Drive, len(drives))
	for i, d := range drives {
		reads[i], inlineReads[i], offline[i] = &atomic.Int64{}, &atomic.Int64{}, &atomic.Bool{}
		counted[i] = recordReadsDrive{Drive: d, reads: reads[i], inlineReads: inlineReads[i], offline: offline[i]}
	}
	e := engineOn(t, counted)
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewSource(9))
	objs := map[string][]byte{"small": randBytes(rnd, 4096), "large": randBytes(rnd, 2<<20)}
	for k, v := range objs {
		if _, err := e.PutObject(ctx, "bucket", k, bytes.NewReader(v), int64(len(v)), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(key string) []int {
		t.Helper()
		for _, r := range reads {
			r.Store(0)
		}
		got, err := getAll(t, e, key, GetOptions{})
		if err != nil || !bytes.Equal(got, objs[key]) {
			t.Fatalf("GET %s: err %v, equal %v", key, err, bytes.Equal(got, objs[key]))
		}
		var read []int
		for p, r := range reads {
			if r.Load() > 0 {
				read = append(read, p)
			}
		}
		return read
	}
	for key := range objs {
		dist := e.distribution(key, 16)
		read := get(key)
		if len(read) != 12 {
			t.Fatalf("GET %s read the records of %d drives (%v), want 12", key, len(read), read)
		}
		for _, p := range read {
			if dist[p] > 12 {
				t.Fatalf("GET %s read drive %d, which holds parity shard %d", key, p, dist[p])
			}
		}
		if _, err := e.HeadObject(ctx, "bucket", key, GetOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	key := "small"
	dist := e.distribution(key, 16)
	posOf := make([]int, 17)
	for p, shard := range dist {
		posOf[shard] = p
	}
	// The drive of data shard 3 offline: the drive of shard 13 (the
	// first parity shard) is read instead, and the offline drive's shard
	// is not tried either (a lagging drive would make the reader wait).
	offline[posOf[3]].Store(true)
	inlineReads[posOf[3]].Store(0)
	read := get(key)
	offline[posOf[3]].Store(false)
	if n := inlineReads[posOf[3]].Load(); n != 0 {
		t.Fatalf("GET read the inline shard of the offline drive %d times", n)
	}
	if len(read) != 12 || slices.Contains(read, posOf[3]) || !slices.Contains(read, posOf[13]) {
		t.Fatalf("GET with the drive of shard 3 offline read drives %v, want 12 with the drive of shard 13 (%d) instead of %d",
			read, posOf[13], posOf[3])
	}

	// One data drive's record disagrees (stale): all 16 are read.
	victim := posOf[1]
	b := &drive.Batch{}
	b.Delete(drive.TableObjects, drive.ObjectKey("bucket", key))
	if err := drives[victim].Apply(ctx, b); err != nil {
		t.Fatal(err)
	}
	if read := get(key); len(read) != 16 {
		t.Fatalf("GET with a data drive missing the record read %d drives, want all 16", len(read))
	}
}

// memReadsDrive is recordReadsDrive that also answers from the drive's
// memory (drive.MemoryReader), as drive.Health does over a Local.
type memReadsDrive struct {
	recordReadsDrive
	mem drive.MemoryReader
}

func (d memReadsDrive) GetCached(t drive.Table, key string) ([]byte, bool) {
	return d.mem.GetCached(t, key)
}

// TestGetFromMemory: a GET of a small object whose records and inline
// shards are in the drives' row caches makes no drive call; after an
// overwrite or a delete it answers the new state, never the cached one.
func TestGetFromMemory(t *testing.T) {
	ctx := context.Background()
	cache := drive.NewIndexCache(64 << 20)
	t.Cleanup(cache.Close)
	root := t.TempDir()
	reads := make([]*atomic.Int64, 16)
	counted := make([]drive.Drive, 16)
	for i := range counted {
		l, err := drive.OpenLocal(filepath.Join(root, fmt.Sprint("d", i+1)), drive.LocalOptions{NoSync: true, Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		reads[i] = &atomic.Int64{}
		counted[i] = memReadsDrive{recordReadsDrive{Drive: l, reads: reads[i], inlineReads: reads[i], offline: &atomic.Bool{}}, l}
	}
	e := engineOn(t, counted)
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	calls := func() (n int64) {
		for _, r := range reads {
			n += r.Swap(0)
		}
		return n
	}
	rnd := rand.New(rand.NewSource(3))
	for round := range 3 {
		want := randBytes(rnd, 4096+round)
		if _, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader(want), int64(len(want)), PutOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			calls()
			got, err := getAll(t, e, "k", GetOptions{})
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("round %d GET %d after the overwrite: %d bytes, %v; want the new %d bytes", round, i, len(got), err, len(want))
			}
			if n := calls(); i > 0 && n != 0 {
				t.Fatalf("round %d: GET %d of a cached object made %d drive reads", round, i, n)
			}
		}
		if st, err := e.HeadObject(ctx, "bucket", "k", GetOptions{}); err != nil || st.Size != int64(len(want)) {
			t.Fatalf("HEAD: %+v, %v", st, err)
		}
	}
	if err := e.DeleteObject(ctx, "bucket", "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := getAll(t, e, "k", GetOptions{}); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("GET after DELETE: %v", err)
	}
	if s := cache.Stats(); s.RowHits == 0 {
		t.Fatalf("row cache stats %+v", s)
	}
}
