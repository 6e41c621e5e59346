package drive

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// A read racing commits of its key never answers older than the last
// commit acknowledged before it began, and never caches such a value for
// later reads: the row cache's removal count refuses an insert that a
// commit overtook.
func TestRowCacheNeverServesAnOverwrittenValue(t *testing.T) {
	ctx := context.Background()
	c := NewIndexCache(8 << 20)
	defer c.Close()
	d := openLocal(t, t.TempDir(), LocalOptions{Cache: c, NoSync: true})
	if err := d.WriteFormat(ctx, testFormat); err != nil {
		t.Fatal(err)
	}
	const keys, commits = 4, 400
	var acked [keys]atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 1; n <= commits; n++ {
				var b Batch
				b.Put(TableObjects, fmt.Sprint("k", w), []byte(strconv.Itoa(n)))
				if err := d.Apply(ctx, &b); err != nil {
					t.Error(err)
					return
				}
				acked[w].Store(int64(n))
			}
		}()
	}
	errs := make(chan error, 4)
	var readers sync.WaitGroup
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				w := i % keys
				floor := acked[w].Load()
				v, err := d.Get(ctx, TableObjects, fmt.Sprint("k", w))
				if errors.Is(err, ErrNotFound) && floor == 0 {
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				got, _ := strconv.ParseInt(string(v), 10, 64)
				if got < floor {
					errs <- fmt.Errorf("k%d: read %d after %d was acknowledged", w, got, floor)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Quiet now: every key reads its last commit, from the cache too.
	for w := range keys {
		for range 2 {
			v, err := d.Get(ctx, TableObjects, fmt.Sprint("k", w))
			if err != nil || string(v) != strconv.Itoa(commits) {
				t.Fatalf("k%d after the commits: %q, %v", w, v, err)
			}
		}
	}
	if s := c.Stats(); s.RowHits == 0 {
		t.Fatalf("row cache never hit: %+v", s)
	}
}

// The row cache stays within its share of the IndexCache however many
// entries are read through it, keeps what is read often, and a value
// returned is the caller's own.
func TestRowCacheBounded(t *testing.T) {
	c := newRowCache(256 << 10)
	v := make([]byte, 200)
	hot := rowKey(nil, 1, TableObjects, "hot")
	_, _, removals := c.get(hot)
	c.put(hot, v, removals)
	var k []byte
	for i := range 5000 {
		k = rowKey(k, 1, TableInline, fmt.Sprint("key", i))
		_, hit, removals := c.get(k)
		if hit {
			t.Fatalf("key%d hit before it was put", i)
		}
		c.put(k, v, removals)
		if _, hit, _ := c.get(hot); !hit {
			t.Fatalf("a key read between every insert was evicted at insert %d", i)
		}
	}
	var total int64
	entries := 0
	for i := range c.shards {
		s := &c.shards[i]
		if s.bytes > c.perShard {
			t.Fatalf("shard %d holds %d bytes, bound %d", i, s.bytes, c.perShard)
		}
		total += s.bytes
		entries += len(s.m)
	}
	if total > 256<<10 || entries < 300 {
		t.Fatalf("%d bytes in %d entries for a 256 KiB cache", total, entries)
	}
	// The most recent key survived; the first, never read, was evicted.
	last := rowKey(nil, 1, TableInline, "key4999")
	got, hit, _ := c.get(last)
	if !hit || len(got) != len(v) {
		t.Fatalf("last key: hit %v, %d bytes", hit, len(got))
	}
	got[0] = 0xff
	again, _, _ := c.get(last)
	if again[0] != 0 {
		t.Fatal("a caller's change reached the cached value")
	}
	if _, hit, _ := c.get(rowKey(nil, 1, TableInline, "key0")); hit {
		t.Fatal("the oldest unread key was not evicted")
	}
	// Another owner's (a reopened index's) key is a different entry.
	if _, hit, _ := c.get(rowKey(nil, 2, TableInline, "key4999")); hit {
		t.Fatal("an entry of one index instance was found under another")
	}
}

// Entries invalidated faster than the clock passes them hold no memory:
// their values are let go at once and the clock is compacted, so a churn
// of large inline shards cannot grow the cache past its bound unseen.
func TestRowCacheInvalidationChurn(t *testing.T) {
	c := newRowCache(4 << 20)
	big := make([]byte, 8<<10)
	for round := range 20 {
		for i := range 400 {
			k := rowKey(nil, 1, TableInline, fmt.Sprint("id", round, "/", i))
			_, _, removals := c.get(k)
			c.put(k, big, removals)
			c.invalidate(k)
		}
	}
	for i := range c.shards {
		s := &c.shards[i]
		if s.bytes != 0 || s.live != 0 || len(s.m) != 0 {
			t.Fatalf("shard %d after invalidating everything: %d bytes, %d live, %d in map", i, s.bytes, s.live, len(s.m))
		}
		if len(s.clock) > 2*s.live+16 {
			t.Fatalf("shard %d keeps %d dead entries", i, len(s.clock))
		}
		for _, e := range s.clock {
			if !e.dead || e.value != nil || e.key != "" {
				t.Fatalf("shard %d: a removed entry still holds %d bytes", i, len(e.value))
			}
		}
	}
}
