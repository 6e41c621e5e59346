package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
)

// scanCounter counts a drive's scans of the objects table: digests
// (ScanQuery.Digest) and scans that return records.
type scanCounter struct {
	drive.Drive
	digests, records atomic.Int64
}

func (s *scanCounter) Scan(ctx context.Context, t drive.Table, q drive.ScanQuery) ([]drive.Entry, error) {
	if t == drive.TableObjects {
		if q.Digest {
			s.digests.Add(1)
		} else {
			s.records.Add(1)
		}
	}
	return s.Drive.Scan(ctx, t, q)
}

// TestListingChecksWalkedDrivesByDigest lists keys on 16 drives (one
// 12+4 set: 5 walked drives) where walked drives disagree in every way
// a drive can (a stale version on the primary or on another walked
// drive, a key missing from the primary, a key only the primary holds):
// every listing must show exactly the quorum's view, and the walked
// drives that agree with the primary must be checked by digest only.
func TestListingChecksWalkedDrivesByDigest(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	var counters []*scanCounter
	var drives []drive.Drive
	for i := range 16 {
		l, err := drive.OpenLocal(filepath.Join(root, fmt.Sprintf("d%02d", i+1)), drive.LocalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := &scanCounter{Drive: l}
		counters, drives = append(counters, c), append(drives, c)
	}
	e, err := New(Config{Drives: drives, Heal: HealConfig{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Close()
		for _, c := range counters {
			c.Drive.(*drive.Local).Close()
		}
	})
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range 30 {
		k := fmt.Sprintf("k%02d", i)
		keys = append(keys, k)
		if _, err := e.PutObject(ctx, "bucket", k, strings.NewReader("v"), 1, PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	set := e.setFor("bucket", "k00")
	walked := walkedDrives(set)
	if len(walked) != 5 {
		t.Fatalf("%d walked drives, want 5", len(walked))
	}
	counterAt := func(i int) *scanCounter { return walked[i].(*scanCounter) }
	reset := func() {
		for _, c := range counters {
			c.digests.Store(0)
			c.records.Store(0)
		}
	}
	// list pages through the bucket and returns "key:size" per object.
	list := func(maxKeys int) string {
		var out []string
		opts := ListOptions{MaxKeys: maxKeys}
		for {
			res, err := e.ListObjects(ctx, "bucket", opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range res.Objects {
				out = append(out, fmt.Sprintf("%s:%d", o.Key, o.Size))
			}
			if !res.IsTruncated {
				return strings.Join(out, ",")
			}
			opts.After = res.NextAfter
		}
	}
	want := map[string]int64{}
	for _, k := range keys {
		want[k] = 1
	}
	expect := func() string {
		var out []string
		for _, k := range keys {
			if n, ok := want[k]; ok {
				out = append(out, fmt.Sprintf("%s:%d", k, n))
			}
		}
		return strings.Join(out, ",")
	}

	for _, page := range []int{1, 2, 7, 1000} {
		reset()
		if got := list(page); got != expect() {
			t.Fatalf("page %d: %s", page, got)
		}
		for i := 1; i < 5; i++ {
			if c := counterAt(i); c.records.Load() != 0 || c.digests.Load() == 0 {
				t.Fatalf("page %d: walked drive %d made %d record scans, %d digest scans; agreeing drives should only digest",
					page, i, c.records.Load(), c.digests.Load())
			}
		}
	}

	// stale makes walked drive i hold key's current record from before an
	// overwrite that every other drive got.
	stale := func(i int, key string) {
		okey := drive.ObjectKey("bucket", key)
		old, err := walked[i].Get(ctx, drive.TableObjects, okey)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.PutObject(ctx, "bucket", key, strings.NewReader("vv"), 2, PutOptions{}); err != nil {
			t.Fatal(err)
		}
		want[key] = 2
		putRaw(t, walked[i], drive.TableObjects, okey, old)
	}
	stale(2, "k05")
	reset()
	if got := list(1000); got != expect() {
		t.Fatalf("with a stale walked drive: %s\nwant %s", got, expect())
	}
	if counterAt(2).records.Load() == 0 || counterAt(1).records.Load() != 0 {
		t.Fatalf("the stale drive made %d record scans, an agreeing one %d", counterAt(2).records.Load(), counterAt(1).records.Load())
	}

	stale(0, "k07")
	if got := list(1000); got != expect() {
		t.Fatalf("with a stale primary: %s\nwant %s", got, expect())
	}
	for _, page := range []int{1, 3} {
		if got := list(page); got != expect() {
			t.Fatalf("with a stale primary, page %d: %s\nwant %s", page, got, expect())
		}
	}

	// A key the primary lacks is still listed; one only the primary
	// holds is not.
	dropRecord(t, walked[0], "k09")
	for p, d := range set.drives {
		if d != walked[0] {
			dropRecord(t, set.drives[p], "k11")
		}
	}
	delete(want, "k11")
	for _, page := range []int{1, 4, 1000} {
		if got := list(page); got != expect() {
			t.Fatalf("with keys missing, page %d: %s\nwant %s", page, got, expect())
		}
	}

	// A record damaged outside its stamp on a checked drive, with the
	// key on too few other drives for a quorum: a read fails, so the
	// listing must not show the key either (the damaged record must not
	// digest like a sound one).
	okey := drive.ObjectKey("bucket", "k13")
	raw, err := walked[1].Get(ctx, drive.TableObjects, okey)
	if err != nil {
		t.Fatal(err)
	}
	raw = append([]byte(nil), raw...)
	raw[len(raw)-10] ^= 0xff
	putRaw(t, walked[1], drive.TableObjects, okey, raw)
	dropped := 0
	for _, d := range set.drives {
		if dropped < 4 && !slices.Contains(walked, d) {
			dropRecord(t, d, "k13")
			dropped++
		}
	}
	if _, err := e.GetObject(ctx, "bucket", "k13", GetOptions{}); err == nil {
		t.Fatal("setup: k13 is still readable")
	}
	delete(want, "k13")
	// Small pages: the batches around k13 hold no other disagreement
	// (which would make every checked drive read its records anyway).
	for _, page := range []int{1, 2, 1000} {
		if got := list(page); got != expect() {
			t.Fatalf("with a damaged record on a checked drive, page %d: %s\nwant %s", page, got, expect())
		}
	}
}
