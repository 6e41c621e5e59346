package hashing

import (
	"crypto/md5"
	"fmt"
	"hash"
	"hash/crc64"
	"sync"
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time (user+system) this process has used; the
// benchmarks report it per GiB, since CPU per byte, not only MB/s, is
// what the policy trades.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBackends hashes objects fed in 1 MiB blocks, as the engine
// does, with conc uploads at once. One op is one object per upload. The
// hashing runs alone here (no erasure coding or drive writes to overlap
// with), so pipelined can only tie inline; its gain shows end to end.
func BenchmarkBackends(b *testing.B) {
	const blockSize = 1 << 20
	block := make([]byte, blockSize)
	for i := range block {
		block[i] = byte(i*31 + i>>8)
	}
	backends := []struct {
		name string
		cfg  func() Config
	}{
		{"inline", func() Config { return Config{Policy: PolicyInline} }},
		{"pipelined", func() Config { return Config{Policy: PolicyPipelined} }},
		{"multibuffer", func() Config { return Config{Policy: PolicyMultibuffer} }},
		{"simdevice", func() Config {
			return Config{Policy: PolicyDevice, Device: NewSimDevice(SimDeviceConfig{Lanes: 16, QueueDepth: 4})}
		}},
		{"auto", func() Config { return Config{} }},
	}
	for _, size := range []int{4 << 20, 32 << 20} {
		for _, conc := range []int{1, 4, 16} {
			for _, be := range backends {
				name := fmt.Sprintf("size=%dMiB/conc=%d/%s", size>>20, conc, be.name)
				b.Run(name, func(b *testing.B) { benchStreams(b, be.cfg(), size, conc, block, nil) })
			}
		}
	}
}

// BenchmarkChecksums measures each S3 checksum on 1 MiB writes.
func BenchmarkChecksums(b *testing.B) {
	p := make([]byte, 1<<20)
	for _, alg := range []string{CRC32, CRC32C, CRC64NVME, SHA1, SHA256} {
		b.Run(alg, func(b *testing.B) {
			h, err := NewChecksum(alg)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(p)))
			for range b.N {
				h.Write(p)
			}
		})
	}
}

// BenchmarkMD5Lanes compares crypto/md5 with the multi-lane service
// directly, one goroutine per stream, 1 MiB writes of 32 MiB per stream:
// the measurement behind MultibufferMinStreams.
func BenchmarkMD5Lanes(b *testing.B) {
	const per = 32 << 20
	block := make([]byte, 1<<20)
	for i := range block {
		block[i] = byte(i * 7)
	}
	for _, streams := range []int{1, 2, 4, 8, 16, 32} {
		for _, kind := range []string{"crypto-md5", "md5lanes"} {
			b.Run(fmt.Sprintf("streams=%d/%s", streams, kind), func(b *testing.B) {
				p := newSIMDPool(1)
				defer p.close()
				b.SetBytes(int64(streams * per))
				cpu0 := processCPU()
				for range b.N {
					var wg sync.WaitGroup
					for range streams {
						wg.Add(1)
						go func() {
							defer wg.Done()
							var h hash.Hash = md5.New()
							if kind == "md5lanes" {
								sh := p.newHash()
								defer sh.Close()
								h = sh
							}
							for off := 0; off < per; off += len(block) {
								h.Write(block)
							}
							h.Sum(nil)
						}()
					}
					wg.Wait()
				}
				gib := float64(b.N) * float64(streams*per) / (1 << 30)
				b.ReportMetric((processCPU()-cpu0).Seconds()/gib, "cpu-s/GiB")
			})
		}
	}
}

// BenchmarkOverlap is BenchmarkBackends with a stand-in for the rest of
// the PUT data path on the caller's goroutine: a table-driven CRC-64 of
// every block (about 0.7 ms of CPU per MiB here, the order of erasure
// coding plus bitrot hashing plus copies). Here pipelined can overlap
// MD5 with that work when a core is free, which is what rule 3 of the
// policy bets on.
func BenchmarkOverlap(b *testing.B) {
	const blockSize = 1 << 20
	const size = 32 << 20
	block := make([]byte, blockSize)
	for i := range block {
		block[i] = byte(i*31 + i>>8)
	}
	work := crc64.MakeTable(crc64.ECMA)
	for _, conc := range []int{1, 4, 16} {
		for _, pol := range []Policy{PolicyInline, PolicyPipelined, PolicyMultibuffer, PolicyAuto} {
			b.Run(fmt.Sprintf("conc=%d/%s", conc, pol), func(b *testing.B) {
				benchStreams(b, Config{Policy: pol}, size, conc, block, func() { crc64.Checksum(block, work) })
			})
		}
	}
}

// benchStreams runs conc concurrent ETag streams of size bytes on an
// engine with cfg, each writing block repeatedly and calling perBlock
// (if any) after every write on its own goroutine, and reports CPU
// seconds per GiB beside the timing.
func benchStreams(b *testing.B, cfg Config, size, conc int, block []byte, perBlock func()) {
	e, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	release := func() {}
	b.SetBytes(int64(size * conc))
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	for range b.N {
		// All uploads are open before any data flows, as concurrent
		// uploads are on a server (their data arrives interleaved);
		// otherwise on 2 CPUs each goroutine would finish its object
		// before the next one even opened its stream.
		var wg, opened sync.WaitGroup
		opened.Add(conc)
		for range conc {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := e.NewStream(Request{Size: int64(size), ETag: true})
				opened.Done()
				if err != nil {
					b.Error(err)
					return
				}
				defer s.Close()
				opened.Wait()
				for off := 0; off < size; off += len(block) {
					s.Write(block, release)
					if perBlock != nil {
						perBlock()
					}
				}
				if _, err := s.Sum(); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	gib := float64(b.N) * float64(size*conc) / (1 << 30)
	b.ReportMetric((processCPU()-cpu0).Seconds()/gib, "cpu-s/GiB")
}
