package hashing

import (
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/md5lanes"
)

// startBackend opens a stream and reports the backend it started on,
// by summing it with no data.
func backendOf(t *testing.T, e *Engine, req Request) Backend {
	t.Helper()
	s, err := e.NewStream(req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d, err := s.Sum()
	if err != nil {
		t.Fatal(err)
	}
	return d.Backend
}

func TestAutoPolicyRules(t *testing.T) {
	large := Request{Size: 64 << 20, ETag: true}
	load := newLoad(0)
	dev := NewSimDevice(SimDeviceConfig{Lanes: 1})
	e, err := New(Config{Load: load, Procs: 2, MultibufferMinStreams: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	if b := backendOf(t, e, large); b != BackendPipelined {
		t.Errorf("lone large stream, idle CPU: %s, want pipelined", b)
	}
	if b := backendOf(t, e, Request{Size: 1 << 20, ETag: true}); b != BackendInline {
		t.Errorf("1 MiB stream: %s, want inline", b)
	}
	if b := backendOf(t, e, Request{Size: 4 << 20, ETag: true}); b != BackendPipelined {
		t.Errorf("lone 4 MiB stream, idle CPU: %s, want pipelined", b)
	}
	if b := backendOf(t, e, Request{Size: 64 << 20, Checksum: CRC32C}); b != BackendInline {
		t.Errorf("CRC-only stream: %s, want inline", b)
	}
	if b := backendOf(t, e, Request{Size: -1, ETag: true}); b != BackendPipelined {
		t.Errorf("unknown size, idle: %s, want pipelined", b)
	}
	load.v.Store(0.95)
	// Busy, but no device and too few streams for the lanes: the
	// hand-off costs nothing measurable, and the load may be our own
	// previous upload.
	if b := backendOf(t, e, large); b != BackendPipelined {
		t.Errorf("lone large stream, busy CPU: %s, want pipelined", b)
	}

	// Hold streams open to raise the active count.
	var held []Stream
	hold := func(n int) {
		for range n {
			s, err := e.NewStream(large)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, s)
		}
	}
	defer func() {
		for _, s := range held {
			s.Close()
		}
	}()
	load.v.Store(0.0)
	hold(1)
	if b := backendOf(t, e, large); b != BackendInline {
		t.Errorf("2 large streams on 2 CPUs: %s, want inline", b)
	}
	hold(2)
	// 4 active (3 held + this one) > 2 CPUs: CPU-bound even though the
	// load signal says idle, and enough streams to fill lanes.
	if b := backendOf(t, e, large); b != BackendMultibuffer {
		t.Errorf("4 large streams on 2 CPUs: %s, want multibuffer", b)
	}
	// Multi-lane hashing saves CPU per byte, so it pays below
	// MinOffloadSize too; tiny objects never use it.
	if b := backendOf(t, e, Request{Size: 4 << 20, ETag: true}); b != BackendMultibuffer {
		t.Errorf("4 MiB stream among 4 on 2 CPUs: %s, want multibuffer", b)
	}
	if b := backendOf(t, e, Request{Size: 64 << 10, ETag: true}); b != BackendInline {
		t.Errorf("64 KiB stream among 4: %s, want inline", b)
	}
	for _, s := range held {
		s.Close()
	}
	held = nil
	// Right after a burst, a lone stream is still a lone stream...
	if b := backendOf(t, e, large); b != BackendPipelined {
		t.Errorf("lone stream after a burst: %s, want pipelined", b)
	}
	// ...but the second stream of the next burst is placed as the burst
	// was (the recent peak of 5 streams, within ConcurrencyWindow).
	hold(1)
	if b := backendOf(t, e, large); b != BackendMultibuffer {
		t.Errorf("second stream of a new burst: %s, want multibuffer", b)
	}

	// Default settings: two streams on two CPUs are CPU-bound (a core
	// each already), and two lanes already hash cheaper than crypto/md5.
	if md5lanes.Available() {
		e3, err := New(Config{Load: newLoad(0), Procs: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer e3.Close()
		other, err := e3.NewStream(large)
		if err != nil {
			t.Fatal(err)
		}
		if b := backendOf(t, e3, large); b != BackendMultibuffer {
			t.Errorf("2 large streams on 2 CPUs, default settings: %s, want multibuffer", b)
		}
		other.Close()
	}

	// With a device: busy CPU sends streams to it while a lane is free.
	// MultibufferMinStreams is raised so that the CPU fallback is inline
	// and the rules under test are the device's alone.
	e2, err := New(Config{Load: load, Procs: 2, Device: dev, MultibufferMinStreams: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	load.v.Store(0.9)
	s, err := e2.NewStream(large)
	if err != nil {
		t.Fatal(err)
	}
	if dev.FreeLanes() != 1 {
		t.Error("stream took a lane before any data flowed")
	}
	s.Write([]byte("x"), func() {}) // the backend is chosen when data flows
	if dev.FreeLanes() != 0 {
		t.Error("busy CPU, free lane: stream did not take the device")
	}
	if b := backendOf(t, e2, large); b != BackendInline {
		t.Errorf("device full: %s, want inline", b)
	}
	if e2.Stats().DeviceRefused != 1 {
		t.Errorf("DeviceRefused = %d, want 1", e2.Stats().DeviceRefused)
	}
	s.Close()
	if dev.FreeLanes() != 1 {
		t.Error("closing the stream did not free its lane")
	}
	load.v.Store(0.1)
	if b := backendOf(t, e2, large); b != BackendPipelined {
		t.Errorf("idle CPU with device: %s, want pipelined (offload only when the CPU is the bottleneck)", b)
	}
}

// A device whose queue fills (here: paused) makes the stream move to the
// CPU mid-stream without blocking on the queue, with correct digests.
func TestDeviceQueueFullFallsBack(t *testing.T) {
	dev := NewSimDevice(SimDeviceConfig{Lanes: 1, QueueDepth: 2})
	e, err := New(Config{Load: newLoad(1), Device: dev, MinOffloadSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rng := rand.New(rand.NewPCG(2, 2))
	data := randomData(rng, 2<<20)
	dev.Pause()
	s, err := e.NewStream(Request{Size: int64(len(data)), ETag: true, Checksum: CRC64NVME})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := newPool(t, 8, 1<<16)
	// The first blocks fill the paused queue; the next Submit fails and
	// the stream detaches, which needs the queued blocks done: resume the
	// device shortly, as a slow device would eventually answer.
	time.AfterFunc(50*time.Millisecond, dev.Resume)
	p.write(s, data, rng, 1<<16)
	d, err := s.Sum()
	if err != nil {
		t.Fatal(err)
	}
	if d.Backend != BackendDevice || !d.FellBack {
		t.Errorf("backend %s fellBack %v, want device with fallback", d.Backend, d.FellBack)
	}
	if hex.EncodeToString(d.MD5) != md5Hex(data) {
		t.Errorf("MD5 after fallback %x, want %s", d.MD5, md5Hex(data))
	}
	if want := rawSum(t, CRC64NVME, data); string(d.Checksum) != string(want) {
		t.Errorf("checksum %x, want %x", d.Checksum, want)
	}
	if p.outstanding() != 0 {
		t.Errorf("%d blocks unreleased", p.outstanding())
	}
	st := e.Stats()
	if st.DeviceFallbacks != 1 {
		t.Errorf("DeviceFallbacks = %d, want 1", st.DeviceFallbacks)
	}
	// Right after a fallback auto keeps new streams off the device.
	if b := backendOf(t, e, Request{Size: 1 << 30, ETag: true}); b == BackendDevice {
		t.Error("auto used the device during its back-off")
	}
}

// A slow device (throughput-limited, with latency) also overflows its
// queue and the stream finishes on the CPU.
func TestSlowDeviceFallsBack(t *testing.T) {
	dev := NewSimDevice(SimDeviceConfig{Lanes: 2, QueueDepth: 2, Latency: time.Millisecond, BytesPerSecond: 50 << 20})
	e, err := New(Config{Policy: PolicyDevice, Device: dev})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rng := rand.New(rand.NewPCG(4, 4))
	data := randomData(rng, 8<<20)
	s, err := e.NewStream(Request{Size: -1, ETag: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	newPool(t, 8, 1<<20).write(s, data, rng, 1<<20)
	d, err := s.Sum()
	if err != nil {
		t.Fatal(err)
	}
	if !d.FellBack {
		t.Error("a 50 MB/s device kept up with an in-memory writer")
	}
	if d.ETag != md5Hex(data) {
		t.Errorf("ETag %s, want %s", d.ETag, md5Hex(data))
	}
	if dev.FreeLanes() != 2 {
		t.Errorf("free lanes %d, want 2", dev.FreeLanes())
	}
}

// A device that never answers fails the stream after DeviceTimeout
// instead of hanging it.
func TestStuckDeviceTimesOut(t *testing.T) {
	dev := NewSimDevice(SimDeviceConfig{Lanes: 1, QueueDepth: 4})
	e, err := New(Config{Policy: PolicyDevice, Device: dev, DeviceTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	dev.Pause()
	s, err := e.NewStream(Request{Size: -1, ETag: true})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(6, 6))
	p := newPool(t, 8, 1<<10)
	p.write(s, randomData(rng, 2<<10), rng, 1<<10)
	if _, err := s.Sum(); !errors.Is(err, errDeviceTimeout) {
		t.Fatalf("Sum on a stuck device: %v, want timeout", err)
	}
	s.Close()
	// Once the device answers, it gives back the blocks it held.
	dev.Resume()
	deadline := time.Now().Add(5 * time.Second)
	for p.outstanding() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := p.outstanding(); n != 0 {
		t.Errorf("%d blocks never released after the device resumed", n)
	}
}

// Multi-lane hashers are packed onto one service until its lanes are
// full, a closed pool hands out none, and services stop when their last
// hasher ends after the pool closed.
func TestSIMDPoolPacksAndCloses(t *testing.T) {
	if !md5lanes.Available() {
		t.Skip("no multi-lane MD5 kernel on this CPU (needs AVX2): the pool hands out no hashers and the policy hashes on the CPU")
	}
	p := newSIMDPool(2)
	var hs []*simdHasher
	for range md5lanes.Lanes + 1 {
		h := p.newHash()
		h.Write([]byte("abc"))
		if got := hex.EncodeToString(h.Sum(nil)); got != "900150983cd24fb0d6963f7d28e17f72" {
			t.Fatalf("md5(abc) = %s", got)
		}
		hs = append(hs, h)
	}
	p.mu.Lock()
	n, first := len(p.servers), p.servers[0].active
	p.mu.Unlock()
	if n != 2 || first != md5lanes.Lanes {
		t.Fatalf("%d services, first with %d hashers; want 2, the first full (%d)", n, first, md5lanes.Lanes)
	}
	p.close()
	if p.newHash() != nil {
		t.Error("closed pool handed out a hasher")
	}
	for _, h := range hs {
		h.Close()
		h.Close()
	}
	p.mu.Lock()
	n = len(p.servers)
	p.mu.Unlock()
	if n != 0 {
		t.Errorf("%d services still running after the pool closed and its hashers ended", n)
	}
}

// A device with a deep queue that falls behind must not hold more of the
// upload's blocks than DeviceInflight: the upload's pool (4 blocks here,
// as in the engine) keeps flowing and the stream finishes on the CPU.
func TestDeviceInflightCap(t *testing.T) {
	dev := NewSimDevice(SimDeviceConfig{Lanes: 1, QueueDepth: 16})
	e, err := New(Config{Policy: PolicyDevice, Device: dev, DeviceInflight: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rng := rand.New(rand.NewPCG(8, 8))
	data := randomData(rng, 3<<20)
	// The pause must outlast handing the first blocks to the device, even
	// on a loaded machine under -race (50 ms did not always).
	dev.Pause()
	time.AfterFunc(500*time.Millisecond, dev.Resume)
	s, err := e.NewStream(Request{Size: -1, ETag: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := newPool(t, 4, 1<<18)
	p.write(s, data, rng, 1<<18)
	d, err := s.Sum()
	if err != nil {
		t.Fatal(err)
	}
	if !d.FellBack || d.ETag != md5Hex(data) {
		t.Errorf("fellBack %v ETag %s, want fallback and %s", d.FellBack, d.ETag, md5Hex(data))
	}
}

// A multi-lane stream of known size gives its place on the service back
// as soon as its last byte is hashed, before Sum: the service's batches
// must not wait for an upload that is only finishing its own writes.
func TestMultibufferStreamLeavesServiceAtLastByte(t *testing.T) {
	if !md5lanes.Available() {
		t.Skip("no multi-lane MD5 kernel on this CPU (needs AVX2): multibuffer falls back to pipelined")
	}
	e, err := New(Config{Policy: PolicyMultibuffer})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rng := rand.New(rand.NewPCG(11, 12))
	data := randomData(rng, 3<<20+5)
	s, err := e.NewStream(Request{Size: int64(len(data)), ETag: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := newPool(t, 4, 1<<20)
	p.write(s, data, rng, 1<<20)
	active := func() int {
		e.simd.mu.Lock()
		defer e.simd.mu.Unlock()
		n := 0
		for _, srv := range e.simd.servers {
			n += srv.active
		}
		return n
	}
	deadline := time.Now().Add(10 * time.Second)
	for active() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := active(); n != 0 {
		t.Fatalf("%d hashers still held on the service after the last byte, before Sum", n)
	}
	d, err := s.Sum()
	if err != nil || d.ETag != md5Hex(data) || d.Backend != BackendMultibuffer {
		t.Fatalf("Sum: %v, ETag %s (want %s), backend %s", err, d.ETag, md5Hex(data), d.Backend)
	}
}
