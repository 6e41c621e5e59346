package accesslog

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkAppend: the wait a logged request adds before its answer, a
// durable append (group-committed write and fdatasync per directory),
// by spool directories and concurrent requests (parallelism times
// GOMAXPROCS goroutines). Run on a real disk: on tmpfs a sync costs
// nothing.
func BenchmarkAppend(b *testing.B) {
	for _, copies := range []int{1, 2} {
		for _, par := range []int{1, 16} {
			b.Run(fmt.Sprintf("dirs=%d/parallelism=%d", copies, par), func(b *testing.B) {
				s, err := Open(Config{Dirs: dirs(b, copies), Interval: time.Hour,
					Deliver: func(context.Context, Object) error { return nil }})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close(context.Background())
				e := entry("3E57427F3EXAMPLE", time.Now())
				b.SetParallelism(par)
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := s.Append(e); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkLine: formatting one record.
func BenchmarkLine(b *testing.B) {
	r := sampleRecord()
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = r.Line(buf[:0])
	}
}
