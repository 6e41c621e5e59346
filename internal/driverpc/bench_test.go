package driverpc

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// benchDrives returns a local drive in the temp directory and a client
// of the same drive served over loopback.
func benchDrives(b *testing.B, opts drive.LocalOptions) (local, remote drive.Drive) {
	b.Helper()
	dir := b.TempDir()
	d, err := drive.OpenLocal(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	if err := d.WriteFormat(ctx, testFormat); err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(PathPrefix, NewServer(map[int]drive.Drive{0: d}, testKey, nil))
	srv := httptest.NewServer(mux)
	hc := NewHTTPClient(nil, nil)
	b.Cleanup(func() {
		hc.CloseIdleConnections()
		srv.Close()
	})
	return d, NewClient(srv.URL, 0, srv.URL+dir, testKey, hc)
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU measures the process's CPU over a benchmark's timed loop
// (both ends of a loopback stream are in this process) and reports it
// per GiB moved, the unit the cluster benchmarks use. Call it after
// setup, before ResetTimer.
func reportCPU(b *testing.B, bytesPerOp int64) {
	start := processCPU(b)
	b.Cleanup(func() {
		gib := float64(bytesPerOp) * float64(b.N) / (1 << 30)
		b.ReportMetric((processCPU(b)-start).Seconds()/gib, "cpu-s/GiB")
	})
}

// BenchmarkLoopbackFloor sends 64 MiB over one loopback TCP connection
// in 1 MiB writes, read back in 1 MiB reads and dropped: the kernel's
// cost of moving the bytes at all, the floor under the Remote
// benchmarks' remote=true cases (compare their cpu-s/GiB).
func BenchmarkLoopbackFloor(b *testing.B) {
	const size = 64 << 20
	const chunk = 1 << 20
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	received := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			received <- err
			return
		}
		defer c.Close()
		buf := make([]byte, chunk)
		for {
			var n int64
			for n < size {
				m, err := c.Read(buf)
				n += int64(m)
				if err != nil {
					received <- err
					return
				}
			}
			received <- nil
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	data := randBytes(b, chunk)
	b.SetBytes(size)
	reportCPU(b, size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for off := 0; off < size; off += chunk {
			if _, err := c.Write(data); err != nil {
				b.Fatal(err)
			}
		}
		if err := <-received; err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRemoteShardWrite writes a 64 MiB shard the way a PUT does (a
// 32-byte checksum and a 1 MiB chunk per WriteBuffers call) to a local
// drive and to the same drive through a Server over loopback, synced
// and not (nosync shows the transport's own cost). For information:
// loopback hides the network, so this is the protocol's CPU cost; the
// cpu-s/GiB of remote=true/sync=false less BenchmarkLoopbackFloor's and
// local=true's is what the protocol adds to moving the bytes.
func BenchmarkRemoteShardWrite(b *testing.B) {
	const size = 64 << 20
	const chunk = 1 << 20
	data := randBytes(b, chunk)
	sum := make([]byte, 32)
	for _, sync := range []bool{true, false} {
		for _, remote := range []bool{false, true} {
			name := fmt.Sprintf("remote=%v/sync=%v", remote, sync)
			b.Run(name, func(b *testing.B) {
				local, rd := benchDrives(b, drive.LocalOptions{NoSync: !sync})
				d := local
				if remote {
					d = rd
				}
				b.SetBytes(size)
				reportCPU(b, size)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					ref := drive.ShardRef{ID: fmt.Sprintf("0123abcd-%08d", i), Part: 1}
					w, err := d.CreateShard(ctx, ref)
					if err != nil {
						b.Fatal(err)
					}
					for off := 0; off < size; off += chunk {
						if err := drive.WriteBuffers(w, [][]byte{sum, data}); err != nil {
							b.Fatal(err)
						}
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					if err := d.DeleteShards(ctx, []drive.ShardRef{ref}); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
			})
		}
	}
}

// BenchmarkRemoteShardRead reads a 64 MiB shard back in 1 MiB reads,
// locally and over loopback (page cache warm), for information.
func BenchmarkRemoteShardRead(b *testing.B) {
	const size = 64 << 20
	for _, remote := range []bool{false, true} {
		b.Run(fmt.Sprintf("remote=%v", remote), func(b *testing.B) {
			local, rd := benchDrives(b, drive.LocalOptions{NoSync: true, DisableDirectIO: true})
			d := local
			if remote {
				d = rd
			}
			ref := drive.ShardRef{ID: "0123abcd-0001", Part: 1}
			w, err := local.CreateShard(ctx, ref)
			if err != nil {
				b.Fatal(err)
			}
			w.Write(randBytes(b, size))
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 1<<20)
			b.SetBytes(size)
			reportCPU(b, size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := d.OpenShard(ctx, ref, 0)
				if err != nil {
					b.Fatal(err)
				}
				// Not io.Copy: io.Discard's ReadFrom would read 8 KiB at a time.
				var n int64
				for {
					m, err := io.ReadFull(r, buf)
					n += int64(m)
					if err == io.EOF || err == io.ErrUnexpectedEOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				r.Close()
				if n != size {
					b.Fatal(n)
				}
			}
		})
	}
}
