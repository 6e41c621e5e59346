package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
)

// benchEngine builds a 16-drive 12+4 engine. Set SHARDSTORE_BENCH_DIR to a
// tmpfs path (/dev/shm) to measure the engine rather than the disk.
func benchEngine(b *testing.B) (*Engine, []string) {
	b.Helper()
	root := benchRoot(b)
	// SHARDSTORE_BENCH_DRIVES changes the drive count (default 16): a
	// 100k-key listing on 16 tmpfs drives needs more inodes than a
	// default /dev/shm has.
	n := 16
	if v := os.Getenv("SHARDSTORE_BENCH_DRIVES"); v != "" {
		fmt.Sscan(v, &n)
	}
	paths := make([]string, n)
	for i := range paths {
		paths[i] = filepath.Join(root, fmt.Sprintf("d%d", i+1))
	}
	e, err := New(Config{Paths: paths})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	if err := e.MakeBucket(context.Background(), "bucket", BucketOptions{}); err != nil {
		b.Fatal(err)
	}
	return e, paths
}

// benchRoot is a fresh directory for a benchmark's drives: under
// SHARDSTORE_BENCH_DIR when set (a tmpfs path such as /dev/shm measures the
// engine rather than the disk), else the test's temporary directory.
func benchRoot(b *testing.B) string {
	b.Helper()
	dir := os.Getenv("SHARDSTORE_BENCH_DIR")
	if dir == "" {
		return b.TempDir()
	}
	root, err := os.MkdirTemp(dir, "enginebench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(root) })
	return root
}

func BenchmarkPut(b *testing.B) {
	for _, size := range []int{1 << 20, 64 << 20} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			e, _ := benchEngine(b)
			data := make([]byte, size)
			rand.New(rand.NewSource(1)).Read(data)
			rd := bytes.NewReader(data)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rd.Reset(data)
				if _, err := e.PutObject(context.Background(), "bucket", "obj", rd, int64(size), PutOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGet(b *testing.B) {
	for _, size := range []int{1 << 20, 64 << 20} {
		for _, missing := range []int{0, 4} {
			b.Run(fmt.Sprintf("%dMiB/missing=%d", size>>20, missing), func(b *testing.B) {
				e, paths := benchEngine(b)
				data := make([]byte, size)
				rand.New(rand.NewSource(1)).Read(data)
				if _, err := e.PutObject(context.Background(), "bucket", "obj", bytes.NewReader(data), int64(size), PutOptions{}); err != nil {
					b.Fatal(err)
				}
				// Remove the object from drives holding data shards, the
				// worst case: every block needs reconstruction.
				st, err := e.readObject(context.Background(), e.sets[0], "bucket", "obj")
				if err != nil {
					b.Fatal(err)
				}
				removed := 0
				for p, m := range st.metas {
					if removed < missing && m.Erasure.Index <= m.Erasure.DataShards {
						for _, f := range shardPaths(b, paths[p], e.sets[0].drives[p], "obj") {
							os.Remove(f)
						}
						dropRecord(b, e.sets[0].drives[p], "obj")
						removed++
					}
				}
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					rd, err := e.GetObject(context.Background(), "bucket", "obj", GetOptions{})
					if err != nil {
						b.Fatal(err)
					}
					if n, err := io.Copy(io.Discard, rd); err != nil || n != int64(size) {
						b.Fatalf("read %d bytes: %v", n, err)
					}
					rd.Close()
				}
			})
		}
	}
}

// BenchmarkList lists a bucket of SHARDSTORE_BENCH_KEYS keys (default
// 10000; the target is 100k) in 1000-key pages, flat and with a
// delimiter over 100 prefixes. One op is one whole listing.
func BenchmarkList(b *testing.B) {
	n := 10000
	if v := os.Getenv("SHARDSTORE_BENCH_KEYS"); v != "" {
		fmt.Sscan(v, &n)
	}
	e, _ := benchEngine(b)
	ctx := context.Background()
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("p%02d/key-%07d", i%100, i)
		if _, err := e.PutObject(ctx, "bucket", key, bytes.NewReader(nil), 0, PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for _, delim := range []string{"", "/"} {
		b.Run(fmt.Sprintf("keys=%d/delimiter=%q", n, delim), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				opts := ListOptions{Delimiter: delim}
				total := 0
				for {
					res, err := e.ListObjects(ctx, "bucket", opts)
					if err != nil {
						b.Fatal(err)
					}
					total += len(res.Objects) + len(res.CommonPrefixes)
					if !res.IsTruncated {
						break
					}
					opts.After = res.NextAfter
				}
				want := n
				if delim != "" {
					want = min(n, 100)
				}
				if total != want {
					b.Fatalf("listed %d entries, want %d", total, want)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
	}
}

// BenchmarkPutInline measures small-object PUTs (16 concurrent writers,
// distinct keys) with the data inline in the index or in shard files, and
// reports what inlining costs the LSM: index bytes written to the device
// (WAL, flushes, compactions) per object byte. The inline threshold was
// chosen from it (docs/performance.md).
//
//	go test ./internal/engine -run XXX -bench PutInline -benchtime 2000x
func BenchmarkPutInline(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10, 256 << 10, 1 << 20} {
		for _, limit := range []int64{-1, 16 << 10, 128 << 10} {
			b.Run(fmt.Sprintf("%dKiB/limit=%d", size>>10, limit), func(b *testing.B) {
				root := benchRoot(b)
				var locals []*drive.Local
				var drives []drive.Drive
				for i := 0; i < 16; i++ {
					l, err := drive.OpenLocal(filepath.Join(root, fmt.Sprintf("d%d", i+1)), drive.LocalOptions{})
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { l.Close() })
					locals = append(locals, l)
					drives = append(drives, l)
				}
				e, err := New(Config{Drives: drives, InlineLimit: limit, Heal: HealConfig{Disabled: true}})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { e.Close() })
				ctx := context.Background()
				if err := e.MakeBucket(ctx, "bucket", BucketOptions{}); err != nil {
					b.Fatal(err)
				}
				data := make([]byte, size)
				rand.New(rand.NewSource(1)).Read(data)
				before := indexWritten(b, locals)
				var next atomic.Int64
				b.SetBytes(int64(size))
				b.ResetTimer()
				var wg sync.WaitGroup
				for w := 0; w < 16; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							i := next.Add(1)
							if i > int64(b.N) {
								return
							}
							key := fmt.Sprintf("obj/%08d", i)
							if _, err := e.PutObject(ctx, "bucket", key, bytes.NewReader(data), int64(size), PutOptions{}); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				for _, l := range locals {
					l.Flush() // what the memtables hold is written eventually too
				}
				written := indexWritten(b, locals) - before
				b.ReportMetric(float64(written)/float64(int64(b.N)*int64(size)), "index-B/obj-B")
			})
		}
	}
}

// indexWritten sums what the drives' indexes wrote to the device.
func indexWritten(b *testing.B, locals []*drive.Local) uint64 {
	var n uint64
	for _, l := range locals {
		m, err := l.IndexMetrics()
		if err != nil {
			b.Fatal(err)
		}
		n += m.WALBytesWritten + m.FlushBytes + m.CompactionBytes
	}
	return n
}

// BenchmarkListBesideManyVersions lists 1000 current keys of a versioned
// bucket, one of which has SHARDSTORE_BENCH_VERSIONS (default 10000)
// noncurrent versions, beside the same listing with none: noncurrent
// versions live in their own index table, so the two should cost the
// same. Then it lists every version of the heavy key.
//
//	go test ./internal/engine -run XXX -bench ListBesideManyVersions -benchtime 20x
func BenchmarkListBesideManyVersions(b *testing.B) {
	versions := 10000
	if v := os.Getenv("SHARDSTORE_BENCH_VERSIONS"); v != "" {
		fmt.Sscan(v, &versions)
	}
	e, _ := benchEngine(b)
	ctx := context.Background()
	if err := e.SetBucketConfig(ctx, "bucket", BucketConfigVersioning, VersioningEnabled); err != nil {
		b.Fatal(err)
	}
	put := func(key string) {
		if _, err := e.PutObject(ctx, "bucket", key, bytes.NewReader([]byte("x")), 1, PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 1000; i++ {
		put(fmt.Sprintf("light/key-%04d", i))
	}
	list := func(b *testing.B, prefix string) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			res, err := e.ListObjects(ctx, "bucket", ListOptions{Prefix: prefix})
			if err != nil || len(res.Objects) != 1000 {
				b.Fatalf("listed %d, %v", len(res.Objects), err)
			}
		}
	}
	b.Run("no-versions", func(b *testing.B) { list(b, "light/") })
	// The heavy key sorts in the middle of the listed range.
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(versions) {
				put("light/key-0500x")
			}
		}()
	}
	wg.Wait()
	if _, err := e.DeleteObjectVersion(ctx, "bucket", "light/key-0500x", DeleteOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("beside-%d-versions", versions), func(b *testing.B) { list(b, "light/") })
	// The same once every index has flushed its memtable: the heavy
	// key's shadowed records are then gone from what the scan steps over.
	for _, d := range e.allDrives() {
		if h, ok := d.(*drive.Health); ok {
			d = h.Inner()
		}
		if l, ok := d.(*drive.Local); ok {
			if err := l.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run(fmt.Sprintf("beside-%d-versions-flushed", versions), func(b *testing.B) { list(b, "light/") })
	b.Run(fmt.Sprintf("all-%d-versions-of-the-key", versions), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			opts := ListVersionsOptions{Prefix: "light/key-0500x"}
			n := 0
			for {
				res, err := e.ListObjectVersions(ctx, "bucket", opts)
				if err != nil {
					b.Fatal(err)
				}
				n += len(res.Versions)
				if !res.IsTruncated {
					break
				}
				opts.KeyMarker, opts.VersionIDMarker = res.NextKeyMarker, res.NextVersionIDMarker
			}
			if n != versions+1 {
				b.Fatalf("listed %d versions, want %d", n, versions+1)
			}
		}
	})
}
