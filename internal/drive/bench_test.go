package drive

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkApplyConcurrent: g goroutines each committing one-key synced
// batches (an object record's commit) on a drive in the temp directory.
// objects/s growing with g shows group commit: batches queued behind an
// fsync in flight share the next one.
func BenchmarkApplyConcurrent(b *testing.B) {
	for _, g := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			d := newLocal(b)
			ctx := context.Background()
			value := make([]byte, 300) // about an object record
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for w := range g {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						var bt Batch
						bt.Put(TableObjects, fmt.Sprintf("bench/w%02d/obj-%09d", w, i), value)
						if err := d.Apply(ctx, &bt); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			el := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/el.Seconds(), "objects/s")
			if m, err := d.IndexMetrics(); err == nil {
				b.ReportMetric(float64(m.WALBytesWritten)/float64(b.N), "WAL-B/obj")
			}
		})
	}
}

// BenchmarkShardWrite writes 1 MiB shard files the way a PUT does (a
// checksum and a chunk per WriteBuffers call), synced, O_DIRECT versus
// through the page cache, in the temp directory.
func BenchmarkShardWrite(b *testing.B) {
	const chunk = 64 << 10
	const chunks = 16 // 1 MiB of data
	for _, mode := range []struct {
		name string
		opts LocalOptions
	}{
		{"direct", LocalOptions{}},
		{"buffered", LocalOptions{DisableDirectIO: true}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			ctx := context.Background()
			d := openLocal(b, b.TempDir(), mode.opts)
			if err := d.WriteFormat(ctx, testFormat); err != nil {
				b.Fatal(err)
			}
			sum := make([]byte, 32)
			data := make([]byte, chunk)
			for i := range data {
				data[i] = byte(i * 7)
			}
			b.SetBytes(chunks * (chunk + 32))
			var written []ShardRef
			direct := false
			b.ResetTimer()
			for i := range b.N {
				ref := ShardRef{ID: fmt.Sprintf("%02x%08x", i%256, i), Part: 0}
				w, err := d.CreateShard(ctx, ref)
				if err != nil {
					b.Fatal(err)
				}
				direct = w.(*shardWriter).direct
				for range chunks {
					if err := WriteBuffers(w, [][]byte{sum, data}); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				written = append(written, ref)
				if len(written) == 64 {
					b.StopTimer()
					if err := d.DeleteShards(ctx, written); err != nil {
						b.Fatal(err)
					}
					written = written[:0]
					b.StartTimer()
				}
			}
			b.StopTimer()
			if mode.name == "direct" && !direct {
				b.Logf("%s refused O_DIRECT: this row is buffered too", d.String())
			}
		})
	}
}

// BenchmarkGetFilled reads records from a drive whose index holds
// SHARDSTORE_BENCH_KEYS (default 200 000) object records spread over
// several levels of sstables, with a 64 MiB index cache as a server's
// drives share (its row cache keeps a quarter): "absent" asks for keys it
// does not hold, as every PUT of a new key does on every drive (its
// record read, then its commit's condition), "present" for keys it
// holds. Bloom filters let an absent key skip the tables.
func BenchmarkGetFilled(b *testing.B) {
	n := 200_000
	if v := os.Getenv("SHARDSTORE_BENCH_KEYS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	d := openLocal(b, dir, LocalOptions{NoSync: true, Cache: NewIndexCache(64 << 20)})
	ctx := context.Background()
	if err := d.WriteFormat(ctx, testFormat); err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 300)
	key := func(i int) string { return fmt.Sprintf("bench/obj-%09d", i*2) } // odd numbers are absent
	for i := 0; i < n; {
		var bt Batch
		for j := 0; j < 1000 && i < n; j++ {
			bt.Put(TableObjects, key(i), value)
			i++
		}
		if err := d.Apply(ctx, &bt); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		b.Fatal(err)
	}
	for _, present := range []bool{false, true} {
		name := "absent"
		if present {
			name = "present"
		}
		b.Run(name, func(b *testing.B) {
			r := rand.New(rand.NewSource(1))
			for b.Loop() {
				k := key(r.Intn(n))
				if !present {
					k += "x"
				}
				_, err := d.Get(ctx, TableObjects, k)
				if present != (err == nil) {
					b.Fatalf("get %s: %v", k, err)
				}
			}
		})
	}
}
