package drive

import (
	"context"
	"fmt"
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
