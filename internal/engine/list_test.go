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

// scanCountingEngine is an engine on 16 local drives (one 12+4 set)
// whose scans of the objects table are counted.
func scanCountingEngine(t *testing.T) (*Engine, []*scanCounter) {
	t.Helper()
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
	return e, counters
}

// TestListingChecksWalkedDrivesByDigest lists keys on 16 drives (one
// 12+4 set: 5 walked drives) where walked drives disagree in every way
// a drive can (a stale version on the primary or on another walked
// drive, a key missing from the primary, a key only the primary holds):
// every listing must show exactly the quorum's view, and the walked
// drives that agree with the primary must be checked by digest only.
func TestListingChecksWalkedDrivesByDigest(t *testing.T) {
	ctx := context.Background()
	e, counters := scanCountingEngine(t)
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

// TestListingByDigestWithDelimiterAndVersions: digests of the walked
// drives also carry delimiter listings (common prefixes) and versioned
// buckets (a record of several versions), and a drive that disagrees
// there is read record by record as in the flat case.
func TestListingByDigestWithDelimiterAndVersions(t *testing.T) {
	ctx := context.Background()
	e, counters := scanCountingEngine(t)
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	if err := e.SetBucketConfig(ctx, "bucket", BucketConfigVersioning, VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	put := func(key, body string) {
		t.Helper()
		if _, err := e.PutObject(ctx, "bucket", key, strings.NewReader(body), int64(len(body)), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"a/1", "a/2", "b/1", "c", "d/x/1", "e"} {
		put(k, "v")
	}
	set := e.setFor("bucket", "a/1")
	walked := walkedDrives(set)
	// list pages through the bucket and returns its keys (with sizes)
	// and common prefixes in byte order; pages must follow each other
	// in order, without repeats.
	list := func(opts ListOptions) string {
		t.Helper()
		type entry struct{ name, show string }
		var out []entry
		for {
			res, err := e.ListObjects(ctx, "bucket", opts)
			if err != nil {
				t.Fatal(err)
			}
			var page []entry
			for _, o := range res.Objects {
				page = append(page, entry{o.Key, fmt.Sprintf("%s:%d", o.Key, o.Size)})
			}
			for _, p := range res.CommonPrefixes {
				page = append(page, entry{p, p})
			}
			slices.SortFunc(page, func(a, b entry) int { return strings.Compare(a.name, b.name) })
			if len(out) > 0 && len(page) > 0 && page[0].name <= out[len(out)-1].name {
				t.Fatalf("page starting at %q follows %q", page[0].name, out[len(out)-1].name)
			}
			out = append(out, page...)
			if !res.IsTruncated {
				var shown []string
				for _, en := range out {
					shown = append(shown, en.show)
				}
				return strings.Join(shown, ",")
			}
			opts.After = res.NextAfter
		}
	}
	byDigest := func(what string) {
		t.Helper()
		for _, c := range counters {
			if slices.Contains(walked[1:], drive.Drive(c)) && (c.records.Load() != 0 || c.digests.Load() == 0) {
				t.Fatalf("%s: an agreeing walked drive made %d record scans, %d digest scans", what, c.records.Load(), c.digests.Load())
			}
		}
	}
	reset := func() {
		for _, c := range counters {
			c.digests.Store(0)
			c.records.Store(0)
		}
	}
	check := func(what string, opts ListOptions, pages []int, want string) {
		t.Helper()
		for _, page := range pages {
			opts.MaxKeys = page
			if got := list(opts); got != want {
				t.Fatalf("%s, page %d: %s\nwant %s", what, page, got, want)
			}
		}
	}
	slash := ListOptions{Delimiter: "/"}
	reset()
	check("delimiter", slash, []int{1, 2, 1000}, "a/,b/,c:1,d/,e:1")
	byDigest("delimiter")
	reset()
	check("prefix and delimiter", ListOptions{Prefix: "d/", Delimiter: "/"}, []int{1, 1000}, "d/x/")
	byDigest("prefix and delimiter")

	// A second version of a/1 that walked drive 2 missed: it holds the
	// record of one version where the others hold two.
	okey := drive.ObjectKey("bucket", "a/1")
	old, err := walked[2].Get(ctx, drive.TableObjects, okey)
	if err != nil {
		t.Fatal(err)
	}
	old = append([]byte(nil), old...)
	put("a/1", "v2")
	putRaw(t, walked[2], drive.TableObjects, okey, old)
	reset()
	check("a stale version on a walked drive", ListOptions{}, []int{1, 3, 1000}, "a/1:2,a/2:1,b/1:1,c:1,d/x/1:1,e:1")
	if c := walked[2].(*scanCounter); c.records.Load() == 0 {
		t.Fatal("the stale walked drive was never read record by record")
	}
	check("a stale version, delimiter", slash, []int{1, 1000}, "a/,b/,c:1,d/,e:1")

	// b/1 gone from the primary: its prefix still lists (the key is on
	// a quorum of drives). Then deleted for real (a delete marker): no
	// prefix any more, though every drive keeps b/1's record.
	dropRecord(t, walked[0], "b/1")
	check("b/1 missing on the primary, delimiter", slash, []int{1, 1000}, "a/,b/,c:1,d/,e:1")
	if err := e.DeleteObject(ctx, "bucket", "b/1"); err != nil {
		t.Fatal(err)
	}
	check("b/1 deleted, delimiter", slash, []int{1, 2, 1000}, "a/,c:1,d/,e:1")
	check("b/1 deleted", ListOptions{}, []int{1, 1000}, "a/1:2,a/2:1,c:1,d/x/1:1,e:1")
}
