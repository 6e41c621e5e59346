package driverpc

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

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
	hc := NewHTTPClient(nil)
	b.Cleanup(func() {
		hc.CloseIdleConnections()
		srv.Close()
	})
	return d, NewClient(srv.URL, 0, srv.URL+dir, testKey, hc)
}

// BenchmarkRemoteShardWrite writes a 64 MiB shard the way a PUT does (a
// 32-byte checksum and a 1 MiB chunk per WriteBuffers call) to a local
// drive and to the same drive through a Server over loopback, synced
// and not (nosync shows the transport's own cost). For information:
// loopback hides the network, so this is the protocol's CPU cost.
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
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := d.OpenShard(ctx, ref, 0)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{r}, buf)
				r.Close()
				if err != nil || n != size {
					b.Fatal(n, err)
				}
			}
		})
	}
}
