package drive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

func TestSuccessor(t *testing.T) {
	for _, tc := range []struct{ in, want []byte }{
		{[]byte("a"), []byte("b")},
		{[]byte("a/"), []byte("a0")},
		{[]byte("a\xff"), []byte("b")},
		{[]byte("a\xff\xff"), []byte("b")},
		{[]byte("\xff\xff"), nil},
		{nil, nil},
		{[]byte("o\x00"), []byte("o\x01")},
	} {
		if got := successor(tc.in); !bytes.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("successor(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// model is the index as a map, scanned the obvious way.
type model map[Table]map[string][]byte

func (m model) apply(b *Batch) {
	for _, c := range b.Changes {
		if m[c.Table] == nil {
			m[c.Table] = map[string][]byte{}
		}
		if c.Delete {
			delete(m[c.Table], c.Key)
		} else {
			m[c.Table][c.Key] = append([]byte{}, c.Value...)
		}
	}
}

func (m model) scan(t Table, q ScanQuery) []Entry {
	var keys []string
	for k := range m[t] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Entry
	lastCP := ""
	for _, k := range keys {
		if q.Limit > 0 && len(out) >= q.Limit {
			break
		}
		if !strings.HasPrefix(k, q.Prefix) || (q.After != "" && k <= q.After) {
			continue
		}
		if q.Delimiter != "" {
			rest := k[len(q.Prefix):]
			if i := strings.Index(rest, q.Delimiter); i >= 0 {
				cp := q.Prefix + rest[:i+len(q.Delimiter)]
				if (q.After != "" && cp <= q.After) || cp == lastCP {
					continue
				}
				lastCP = cp
				out = append(out, Entry{Key: cp, CommonPrefix: true})
				continue
			}
		}
		e := Entry{Key: k}
		if !q.KeysOnly {
			e.Value = m[t][k]
		}
		out = append(out, e)
	}
	return out
}

var keyTokens = []string{"a", "b", "ab", "/", "//", "..", ".", "é", "日本", "\x00", "\xff", "\xff\xff", "x/y", "-", "z", "\x7f"}

func randKey(r *rand.Rand, maxTokens int) string {
	var sb strings.Builder
	for range r.Intn(maxTokens + 1) {
		sb.WriteString(keyTokens[r.Intn(len(keyTokens))])
	}
	return sb.String()
}

func entriesEqual(a, b []Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].CommonPrefix != b[i].CommonPrefix || !bytes.Equal(a[i].Value, b[i].Value) ||
			(a[i].Value == nil) != (b[i].Value == nil) {
			return false
		}
	}
	return true
}

// Apply, Get and Scan agree with the model across random keys, batches
// and queries, and across a Close and reopen.
func TestIndexMatchesModel(t *testing.T) {
	t.Run("private cache", func(t *testing.T) { testIndexMatchesModel(t, nil) })
	// A shared cache small enough that the row cache evicts: its point
	// reads must answer as the index does across puts, deletes, lazy
	// batches, a flush and a reopen.
	t.Run("shared cache", func(t *testing.T) {
		c := NewIndexCache(1 << 20)
		defer c.Close()
		testIndexMatchesModel(t, c)
		s := c.Stats()
		if s.RowHits == 0 || s.RowMisses == 0 {
			t.Fatalf("row cache stats %+v: the test must both hit and miss", s)
		}
		if s.BlockCapacity+s.RowCapacity != 1<<20 || s.RowBytes <= 0 || s.RowBytes > s.RowCapacity ||
			s.BlockHits+s.BlockMisses == 0 || s.BlockBytes > s.BlockCapacity {
			t.Fatalf("index cache stats %+v: capacities must add up to the cache's size, usage within them", s)
		}
	})
}

func testIndexMatchesModel(t *testing.T, cache *IndexCache) {
	ctx := context.Background()
	dir := t.TempDir()
	d := openLocal(t, dir, LocalOptions{Cache: cache})
	if err := d.WriteFormat(ctx, testFormat); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(42))
	tables := []Table{TableObjects, TableInline, TableBuckets, Table(0), Table(0xff)}
	m := model{}
	var known []string
	queries := 0
	for round := range 60 {
		// A batch: puts and deletes, the same key twice sometimes.
		var b Batch
		for range 1 + r.Intn(30) {
			t := tables[r.Intn(len(tables))]
			var k string
			if len(known) > 0 && r.Intn(4) == 0 {
				k = known[r.Intn(len(known))]
			} else {
				k = randKey(r, 4)
				known = append(known, k)
			}
			if r.Intn(5) == 0 {
				b.Delete(t, k)
			} else {
				v := make([]byte, r.Intn(40))
				r.Read(v)
				b.Put(t, k, v)
			}
		}
		if round%7 == 0 {
			b.Lazy = true
		}
		if err := d.Apply(ctx, &b); err != nil {
			t.Fatal(err)
		}
		m.apply(&b)
		if round == 30 {
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if round == 40 {
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			d = openLocal(t, dir, LocalOptions{Cache: cache})
		}
		for _, k := range known[max(0, len(known)-20):] {
			for _, tb := range tables {
				got, err := d.Get(ctx, tb, k)
				want, ok := m[tb][k]
				if !ok {
					if !errors.Is(err, ErrNotFound) {
						t.Fatalf("Get(%q, %q) = %q, %v; want ErrNotFound", tb, k, got, err)
					}
					continue
				}
				if err != nil || !bytes.Equal(got, want) || got == nil {
					t.Fatalf("Get(%q, %q) = %q, %v; want %q", tb, k, got, err, want)
				}
			}
		}
		for range 40 {
			tb := tables[r.Intn(len(tables))]
			q := ScanQuery{Limit: r.Intn(6), KeysOnly: r.Intn(3) == 0}
			if r.Intn(2) == 0 {
				q.Prefix = randKey(r, 2)
			}
			switch r.Intn(4) {
			case 0:
				q.After = randKey(r, 4)
			case 1:
				if len(known) > 0 {
					q.After = known[r.Intn(len(known))]
				}
			}
			q.Delimiter = []string{"", "", "/", "//", "é", "\xff", "a", "..", "\x00"}[r.Intn(9)]
			got, err := d.Scan(ctx, tb, q)
			if err != nil {
				t.Fatal(err)
			}
			want := m.scan(tb, q)
			if !entriesEqual(got, want) {
				t.Fatalf("round %d: Scan(%q, %s)\n got  %s\n want %s", round, tb, fmtQuery(q), fmtEntries(got), fmtEntries(want))
			}
			queries++
		}
	}
	t.Logf("%d keys, %d queries", len(known), queries)
}

// A damaged sstable gives errors, never a wrong value.
func TestIndexCorruption(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d := formattedLocal(t, dir)
	r := rand.New(rand.NewSource(7))
	want := map[string][]byte{}
	for i := 0; i < 2000; i += 100 {
		var b Batch
		for j := i; j < i+100; j++ {
			v := make([]byte, 1000) // random: incompressible
			r.Read(v)
			k := fmt.Sprintf("bkt/key-%05d", j)
			want[k] = v
			b.Put(TableObjects, k, v)
		}
		if err := d.Apply(ctx, &b); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	ssts, _ := filepath.Glob(filepath.Join(dir, sysDirName, indexDirName, "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no sstable after Flush")
	}
	damaged := 0
	for _, p := range ssts {
		fi, err := os.Stat(p)
		if err != nil || fi.Size() < 64<<10 {
			continue
		}
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(bytes.Repeat([]byte{0x5a}, 8192), fi.Size()/2); err != nil {
			t.Fatal(err)
		}
		f.Close()
		damaged++
	}
	if damaged == 0 {
		t.Fatalf("no sstable large enough to damage among %v", ssts)
	}
	d, err := OpenLocal(dir, LocalOptions{})
	if err != nil {
		t.Fatalf("OpenLocal must not fail on a damaged index: %v", err)
	}
	defer d.Close()
	var errs []error
	if _, err := d.ReadFormat(ctx); err != nil {
		errs = append(errs, err) // detected at open
	} else {
		for k, v := range want {
			got, err := d.Get(ctx, TableObjects, k)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !bytes.Equal(got, v) {
				t.Fatalf("damaged index returned a wrong value for %q", k)
			}
		}
		es, err := d.Scan(ctx, TableObjects, ScanQuery{Prefix: "bkt/"})
		if err != nil {
			errs = append(errs, err)
		} else {
			for _, e := range es {
				if !bytes.Equal(e.Value, want[e.Key]) {
					t.Fatalf("damaged index scanned a wrong value for %q", e.Key)
				}
			}
		}
	}
	if len(errs) == 0 {
		t.Fatal("damaged index read without any error")
	}
	for _, err := range errs {
		if !errors.Is(err, ErrDriveFaulty) {
			t.Errorf("error on a damaged index is not ErrDriveFaulty: %v", err)
		}
	}
	if !errors.Is(errs[0], ErrFileCorrupt) {
		t.Errorf("corruption not reported as ErrFileCorrupt: %v", errs[0])
	}
	t.Logf("%d errors, first: %v", len(errs), errs[0])
}

// An index that vanished under a formatted drive is reported, not
// silently recreated empty.
func TestIndexMissing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d := formattedLocal(t, dir)
	d.Close()
	if err := os.RemoveAll(filepath.Join(dir, sysDirName, indexDirName)); err != nil {
		t.Fatal(err)
	}
	d = openLocal(t, dir, LocalOptions{})
	if _, err := d.ReadFormat(ctx); !errors.Is(err, ErrFileCorrupt) || !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("ReadFormat with the index gone: %v", err)
	}
	if _, err := d.Get(ctx, TableObjects, "x"); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("Get with the index gone: %v", err)
	}
}

// A fatal pebble error (here: the Fatalf pebble calls when a commit
// fails) breaks the drive, not the process, until the index is reopened.
func TestIndexFatalBreaksDrive(t *testing.T) {
	ctx := context.Background()
	d := newLocal(t)
	err := d.withIndex("apply", true, func(*pebble.DB) error {
		(&indexLogger{idx: d.idx}).Fatalf("pebble: fatal commit error: %v", "write /x/000002.log: no space left on device")
		return nil
	})
	if !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("fatal inside a call: %v", err)
	}
	if _, err := d.Get(ctx, TableObjects, "x"); !errors.Is(err, ErrDriveFaulty) || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("Get after the fatal error: %v", err)
	}
	// The health probe's ReadFormat retires the stopped instance and
	// opens the index again (indexreopen.go); this fake fatal error left
	// its files intact, so the reopen succeeds at once or at the next
	// probe, once the stopped instance has closed.
	if _, err := d.ReadFormat(ctx); err != nil {
		if !errors.Is(err, ErrDriveFaulty) {
			t.Fatalf("ReadFormat after the fatal error: %v", err)
		}
		waitRetired(t, d)
		if _, err := d.ReadFormat(ctx); err != nil {
			t.Fatalf("ReadFormat once the stopped index closed: %v", err)
		}
	}
	if _, err := d.Get(ctx, TableObjects, "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after the reopen: %v", err)
	}
	// A background goroutine's fatal error ends that goroutine only.
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&indexLogger{idx: d.idx}).Fatalf("MANIFEST sync failed")
		t.Error("Fatalf returned")
	}()
	<-done
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

func fmtQuery(q ScanQuery) string {
	return fmt.Sprintf("{Prefix:%q After:%q Delimiter:%q Limit:%d KeysOnly:%v}", q.Prefix, q.After, q.Delimiter, q.Limit, q.KeysOnly)
}

func fmtEntries(es []Entry) string {
	var sb strings.Builder
	for _, e := range es {
		if e.CommonPrefix {
			fmt.Fprintf(&sb, "[%q] ", e.Key)
		} else {
			fmt.Fprintf(&sb, "%q=%x ", e.Key, e.Value)
		}
	}
	return sb.String()
}

// The index's tables carry bloom filters: Gets of keys it does not hold
// are answered by the filters (pebble counts a filter that rules a table
// out as a hit), also after the drive is reopened, and a filter never
// hides a key it holds, also once everything is compacted into the last
// level (written without filters: pebble's Get does not read them).
func TestIndexBloomFilters(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d := openLocal(t, dir, LocalOptions{})
	if err := d.WriteFormat(ctx, testFormat); err != nil {
		t.Fatal(err)
	}
	const n = 3000
	key := func(i int) string { return fmt.Sprintf("b/k%06d", i) }
	for round := range 3 { // three tables
		var b Batch
		for i := round; i < n; i += 3 {
			b.Put(TableObjects, key(i), []byte(key(i)))
		}
		if err := d.Apply(ctx, &b); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(d *Local, when string, wantHits bool) {
		t.Helper()
		before, err := d.IndexMetrics()
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if v, err := d.Get(ctx, TableObjects, key(i)); err != nil || string(v) != key(i) {
				t.Fatalf("%s: get %s: %q, %v", when, key(i), v, err)
			}
			if _, err := d.Get(ctx, TableObjects, key(i)+"-absent"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s: get of an absent key: %v", when, err)
			}
		}
		after, err := d.IndexMetrics()
		if err != nil {
			t.Fatal(err)
		}
		// Each absent key is ruled out by the filter of at least one
		// table above the last level (the three flushed ones, or what
		// they were compacted into): ~99 % of n at the least.
		if hits := after.Pebble.Filter.Hits - before.Pebble.Filter.Hits; wantHits && hits < n*9/10 {
			t.Fatalf("%s: %d filter hits for %d absent keys: the tables have no bloom filters", when, hits, n)
		}
	}
	check(d, "three tables", true)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openLocal(t, dir, LocalOptions{})
	check(d, "reopened", true)
	if err := d.withIndex("compact", false, func(db *pebble.DB) error {
		return db.Compact(ctx, []byte{0}, []byte{0xff}, true)
	}); err != nil {
		t.Fatal(err)
	}
	check(d, "compacted into the last level", false)
}
