package hashing

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func md5Hex(p []byte) string {
	s := md5.Sum(p)
	return hex.EncodeToString(s[:])
}

// fixedLoad is a LoadSource returning a settable value.
type fixedLoad struct{ v atomic.Value }

func newLoad(v float64) *fixedLoad {
	l := &fixedLoad{}
	l.v.Store(v)
	return l
}

func (l *fixedLoad) Busy() float64 { return l.v.Load().(float64) }

// pool imitates the engine's block pool: a few fixed buffers, each
// scribbled over as soon as it comes back, so a backend that reads a block
// after releasing it produces a wrong digest. It also checks release is
// called exactly once per block.
type pool struct {
	t       *testing.T
	free    chan []byte
	mu      sync.Mutex
	out     map[*byte]bool
	written int
	freed   int
}

func newPool(t *testing.T, n, size int) *pool {
	p := &pool{t: t, free: make(chan []byte, n), out: map[*byte]bool{}}
	for range n {
		p.free <- make([]byte, size)
	}
	return p
}

// write copies data into pooled blocks at the given split sizes and hands
// them to s.
func (p *pool) write(s Stream, data []byte, rng *rand.Rand, maxBlock int) {
	for len(data) > 0 {
		n := 1 + rng.IntN(maxBlock)
		if n > len(data) {
			n = len(data)
		}
		var b []byte
		select {
		case b = <-p.free:
		case <-time.After(30 * time.Second):
			p.t.Fatal("block pool exhausted: a backend holds blocks it should have released")
		}
		b = b[:n]
		copy(b, data[:n])
		data = data[n:]
		p.mu.Lock()
		p.out[&b[0]] = true
		p.written++
		p.mu.Unlock()
		s.Write(b, p.releaser(b))
	}
}

func (p *pool) releaser(b []byte) func() {
	var once atomic.Bool
	return func() {
		if !once.CompareAndSwap(false, true) {
			p.t.Error("release called twice")
			return
		}
		p.mu.Lock()
		delete(p.out, &b[0])
		p.freed++
		p.mu.Unlock()
		// Scribble over the block (doubling copies: a byte loop is slow
		// under the race detector).
		if len(b) > 0 {
			b[0] = 0xA5
			for n := 1; n < len(b); n *= 2 {
				copy(b[n:], b[:n])
			}
		}
		p.free <- b[:cap(b)]
	}
}

func (p *pool) outstanding() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.out)
}

func randomData(rng *rand.Rand, n int) []byte {
	b := make([]byte, n+8)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
	}
	return b[:n:n]
}

type engineCase struct {
	name string
	cfg  func() Config
	want Backend // expected starting backend for a large MD5 stream; "" = any
}

func engineCases() []engineCase {
	return []engineCase{
		{"inline", func() Config { return Config{Policy: PolicyInline} }, BackendInline},
		{"pipelined", func() Config { return Config{Policy: PolicyPipelined} }, BackendPipelined},
		{"pipelined-depth1", func() Config { return Config{Policy: PolicyPipelined, QueueDepth: 1} }, BackendPipelined},
		{"multibuffer", func() Config { return Config{Policy: PolicyMultibuffer} }, BackendMultibuffer},
		{"device", func() Config {
			return Config{Policy: PolicyDevice, Device: NewSimDevice(SimDeviceConfig{Lanes: 2, QueueDepth: 3})}
		}, BackendDevice},
		{"device-slow", func() Config {
			return Config{Policy: PolicyDevice, Device: NewSimDevice(SimDeviceConfig{Lanes: 2, QueueDepth: 1, Latency: 2 * time.Millisecond})}
		}, BackendDevice},
		{"auto-idle", func() Config { return Config{MinOffloadSize: 1 << 16, Procs: 4} }, ""},
		{"auto-busy", func() Config { return Config{MinOffloadSize: 1 << 16, Load: newLoad(1)} }, ""},
		{"auto-busy-device", func() Config {
			return Config{MinOffloadSize: 1 << 16, Load: newLoad(1), Device: NewSimDevice(SimDeviceConfig{Lanes: 1, QueueDepth: 2})}
		}, ""},
	}
}

// Every backend must produce what crypto/md5 and the reference checksums
// produce, for random sizes and split points, and give every block back.
func TestBackendsMatchReference(t *testing.T) {
	sizes := []int{0, 1, 55, 56, 63, 64, 65, 1000, 1 << 16, 1<<20 + 7, 3<<20 + 333}
	algs := []string{"", CRC32, CRC32C, CRC64NVME, SHA1, SHA256}
	for _, tc := range engineCases() {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(tc.cfg())
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			rng := rand.New(rand.NewPCG(7, uint64(len(tc.name))))
			var total int64
			for i, size := range sizes {
				alg := algs[i%len(algs)]
				data := randomData(rng, size)
				p := newPool(t, 4, 1<<18)
				s, err := e.NewStream(Request{Size: int64(size), ETag: true, MD5: true, Checksum: alg})
				if err != nil {
					t.Fatal(err)
				}
				p.write(s, data, rng, 1<<18)
				d, err := s.Sum()
				if err != nil {
					t.Fatalf("size %d: %v", size, err)
				}
				if again, err := s.Sum(); err != nil || !bytes.Equal(again.MD5, d.MD5) || !bytes.Equal(again.Checksum, d.Checksum) {
					t.Fatalf("size %d: second Sum gave %x %x, %v", size, again.MD5, again.Checksum, err)
				}
				s.Close()
				if got, want := hex.EncodeToString(d.MD5), md5Hex(data); got != want {
					t.Fatalf("size %d backend %s: MD5 %s, want %s", size, d.Backend, got, want)
				}
				if d.ETag != md5Hex(data) {
					t.Fatalf("size %d: ETag %s, want the MD5", size, d.ETag)
				}
				if alg != "" {
					if want := rawSum(t, alg, data); !bytes.Equal(d.Checksum, want) {
						t.Fatalf("size %d %s: checksum %x, want %x", size, alg, d.Checksum, want)
					}
				} else if d.Checksum != nil {
					t.Fatalf("unrequested checksum %x", d.Checksum)
				}
				if d.Bytes != int64(size) {
					t.Fatalf("Bytes = %d, want %d", d.Bytes, size)
				}
				if size >= 1<<20 && d.HashTime <= 0 {
					t.Fatalf("size %d on %s: no hashing time recorded", size, d.Backend)
				}
				total += int64(size)
				if tc.want != "" && size >= 1<<20 && d.Backend != tc.want {
					t.Fatalf("size %d ran on %s, want %s", size, d.Backend, tc.want)
				}
				if n := p.outstanding(); n != 0 {
					t.Fatalf("%d blocks never released", n)
				}
			}
			st := e.Stats()
			if st.Active != 0 || st.ActiveHeavy != 0 {
				t.Errorf("active streams after all ended: %+v", st)
			}
			var streams, nbytes uint64
			for _, b := range allBackends {
				streams += st.Streams[b]
				nbytes += st.Bytes[b]
			}
			if streams != uint64(len(sizes)) || nbytes != uint64(total) {
				t.Errorf("stats count %d streams, %d bytes; want %d, %d", streams, nbytes, len(sizes), total)
			}
		})
	}
}

// Many streams at once on one engine: shared multi-lane service, device
// lanes running out, all without deadlock and with correct digests.
func TestConcurrentStreams(t *testing.T) {
	for _, tc := range engineCases() {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(tc.cfg())
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			var wg sync.WaitGroup
			for g := range 12 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(g), 99))
					data := randomData(rng, 1<<20+rng.IntN(1<<20))
					p := newPool(t, 3, 1<<17)
					s, err := e.NewStream(Request{Size: -1, ETag: true})
					if err != nil {
						t.Error(err)
						return
					}
					defer s.Close()
					p.write(s, data, rng, 1<<17)
					d, err := s.Sum()
					if err != nil {
						t.Error(err)
						return
					}
					if d.ETag != md5Hex(data) {
						t.Errorf("stream %d on %s: ETag %s, want %s", g, d.Backend, d.ETag, md5Hex(data))
					}
				}()
			}
			wg.Wait()
		})
	}
}

// Closing a stream before Sum returns every block, and Sum then fails.
func TestAbortReleasesEveryBlock(t *testing.T) {
	for _, tc := range engineCases() {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(tc.cfg())
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			rng := rand.New(rand.NewPCG(5, 5))
			data := randomData(rng, 2<<20)
			p := newPool(t, 4, 1<<16)
			s, err := e.NewStream(Request{Size: int64(len(data)), ETag: true, Checksum: SHA256})
			if err != nil {
				t.Fatal(err)
			}
			p.write(s, data, rng, 1<<16)
			s.Close()
			if n := p.outstanding(); n != 0 {
				t.Fatalf("%d blocks still held after Close", n)
			}
			s.Close()
			if _, err := s.Sum(); err == nil {
				t.Error("Sum after Close succeeded")
			}
			// Writes after Close are released at once.
			p.write(s, data[:100], rng, 100)
			p.mu.Lock()
			freed, written := p.freed, p.written
			p.mu.Unlock()
			if freed != written {
				t.Fatalf("released %d of %d blocks", freed, written)
			}
		})
	}
}

func TestFastETag(t *testing.T) {
	e, err := New(Config{ETagMode: ETagFast})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	data := randomData(rng, 3<<20)
	run := func(req Request, d []byte) Digests {
		s, err := e.NewStream(req)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		newPool(t, 2, 1<<20).write(s, d, rng, 1<<20)
		out, err := s.Sum()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	d1 := run(Request{Size: -1, ETag: true}, data)
	if d1.MD5 != nil {
		t.Error("fast mode computed MD5 nobody asked for")
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(d1.ETag) || d1.ETag == md5Hex(data) {
		t.Errorf("fast ETag %q: want 32 hex chars, not the MD5", d1.ETag)
	}
	if d2 := run(Request{Size: -1, ETag: true}, data); d2.ETag != d1.ETag {
		t.Errorf("fast ETag not deterministic: %s then %s", d1.ETag, d2.ETag)
	}
	other := bytes.Clone(data)
	other[len(other)/2] ^= 1
	if d3 := run(Request{Size: -1, ETag: true}, other); d3.ETag == d1.ETag {
		t.Error("fast ETag ignores content")
	}
	// A client that sent Content-MD5 gets the MD5, and the ETag is the MD5.
	if d4 := run(Request{Size: -1, ETag: true, MD5: true}, data); d4.ETag != md5Hex(data) || hex.EncodeToString(d4.MD5) != md5Hex(data) {
		t.Errorf("fast mode with MD5 requested: ETag %s MD5 %x", d4.ETag, d4.MD5)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{{Policy: "gpu"}, {ETagMode: "sha"}, {Policy: PolicyDevice}} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) succeeded", c)
		}
	}
	e, _ := New(Config{})
	defer e.Close()
	if _, err := e.NewStream(Request{Checksum: "CRC16"}); err == nil {
		t.Error("NewStream accepted CRC16")
	}
}
