package hashing

import (
	"crypto/md5"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/shardstore/shardstore/internal/md5lanes"
	"github.com/zeebo/xxh3"
)

// Request says which digests one object stream needs.
type Request struct {
	// Size is the expected stream length, or -1 when unknown. The policy
	// keeps small objects inline; unknown sizes count as large.
	Size int64
	// ETag asks for an ETag, computed as the engine's ETagMode says.
	ETag bool
	// MD5 asks for the MD5 digest itself whatever the ETag mode (the
	// client sent Content-MD5, or otherwise relies on an MD5 ETag).
	MD5 bool
	// Checksum names an S3 flexible checksum algorithm to compute:
	// "", CRC32, CRC32C, CRC64NVME, SHA1 or SHA256.
	Checksum string
}

// Digests are the results of a stream; fields not requested are empty.
type Digests struct {
	// MD5 is the raw MD5, set when Request.MD5 was asked for or the ETag
	// is an MD5.
	MD5 []byte
	// ETag is 32 lower-case hex characters without quotes, set when
	// Request.ETag was asked for: the hex MD5, or in ETagFast mode (when
	// no MD5 was needed) a 128-bit XXH3 of the content.
	ETag string
	// Checksum is the raw (not base64) S3 checksum, when one was asked for.
	Checksum []byte

	// Backend is the backend the stream was started on.
	Backend Backend
	// FellBack is true when the stream left the device mid-stream and
	// finished on the CPU (the device queue was full).
	FellBack bool
	// Bytes is the number of bytes hashed.
	Bytes int64
	// HashTime is the time this stream's bytes spent being hashed, summed
	// over blocks: the hashing calls for CPU backends (on whatever
	// goroutine ran them), submission to completion on the device.
	HashTime time.Duration
	// SumWait is how long Sum waited for outstanding hashing: the part of
	// hashing the commit could not overlap with other work.
	SumWait time.Duration
}

// Stream hashes one object's bytes, in order, as blocks are handed to it.
// A stream is used by one goroutine at a time.
type Stream interface {
	// Write queues p for hashing. The caller keeps p unmodified until
	// release is called; release is called exactly once, possibly before
	// Write returns and possibly from another goroutine.
	Write(p []byte, release func())
	// Sum waits until every queued block is hashed and returns the digests.
	Sum() (Digests, error)
	// Close ends the stream, releasing any blocks still queued without
	// hashing them; every release has been called when Close returns
	// (unless a stuck device still holds a block, see Config.DeviceTimeout).
	// It is safe to call after Sum and more than once.
	Close()
}

// Backend names where a stream's MD5 runs.
type Backend string

// The backends.
const (
	// BackendInline hashes on the caller's goroutine inside Write.
	BackendInline Backend = "inline"
	// BackendPipelined hashes on a goroutine of its own per stream.
	BackendPipelined Backend = "pipelined"
	// BackendMultibuffer feeds a per-stream goroutine into a shared
	// multi-lane SIMD MD5 service (internal/md5lanes).
	BackendMultibuffer Backend = "multibuffer"
	// BackendDevice computes MD5 on an accelerator (Config.Device).
	BackendDevice Backend = "device"
)

// Policy chooses backends.
type Policy string

// The policies. PolicyAuto is the default; the fixed ones exist to compare
// backends and to pin one where the operator knows better.
const (
	PolicyAuto        Policy = "auto"
	PolicyInline      Policy = "inline"
	PolicyPipelined   Policy = "pipelined"
	PolicyMultibuffer Policy = "multibuffer"
	// PolicyDevice sends every MD5 stream to the device when it has a free
	// lane (CPU otherwise); meant for tests and benchmarks.
	PolicyDevice Policy = "device"
)

// ParsePolicy parses a policy name; "" means auto.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case "":
		return PolicyAuto, nil
	case PolicyAuto, PolicyInline, PolicyPipelined, PolicyMultibuffer, PolicyDevice:
		return p, nil
	}
	return "", fmt.Errorf("hashing: unknown policy %q (want auto, inline, pipelined, multibuffer or device)", s)
}

// ETagMode says how ETags are computed.
type ETagMode string

// The ETag modes.
const (
	// ETagMD5 makes every ETag the hex MD5 of the content (S3's behaviour).
	ETagMD5 ETagMode = "md5"
	// ETagFast skips MD5 unless the request needs it (Request.MD5) and
	// uses a 128-bit XXH3 of the content as ETag: deterministic, 32 hex
	// characters like an MD5 so clients accept it, at a fraction of the
	// CPU. Clients that verify ETag == MD5 on single-part uploads without
	// sending Content-MD5 will see a mismatch; that is the trade.
	ETagFast ETagMode = "fast"
)

// ParseETagMode parses an ETag mode name; "" means md5.
func ParseETagMode(s string) (ETagMode, error) {
	switch m := ETagMode(s); m {
	case "":
		return ETagMD5, nil
	case ETagMD5, ETagFast:
		return m, nil
	}
	return "", fmt.Errorf("hashing: unknown ETag mode %q (want md5 or fast)", s)
}

// LoadSource reports how busy the machine's CPUs are, as a fraction of all
// CPU capacity in 0..1. internal/cpustat's sampler implements it.
type LoadSource interface {
	Busy() float64
}

// idleLoad is the default LoadSource: it reads nothing and reports idle,
// so without a real signal the policy decides from stream counts alone.
type idleLoad struct{}

func (idleLoad) Busy() float64 { return 0 }

// Config configures an Engine; the zero value is usable.
type Config struct {
	// Policy chooses backends; default PolicyAuto.
	Policy Policy
	// ETagMode; default ETagMD5.
	ETagMode ETagMode
	// Load is the CPU-load signal; nil reads as idle.
	Load LoadSource
	// Device is an optional MD5 accelerator.
	Device Device

	// MinOffloadSize: auto keeps streams smaller than this off the
	// pipelined and device backends, since handing a few blocks to another
	// goroutine or device overlaps little (the multi-lane service, which
	// saves CPU rather than overlapping, has MultibufferMinSize). Default
	// 2 MiB (measured with `bench put` on 2 cores: a lone 4 MiB PUT ran
	// 8-10 % faster pipelined than inline at the same CPU per byte).
	MinOffloadSize int64
	// BusyThreshold is the Load.Busy() level from which auto treats the
	// CPU as the bottleneck. Default 0.8.
	BusyThreshold float64
	// MultibufferMinStreams is how many heavy streams must be active
	// (this one included) before auto uses the multi-lane service.
	// Default 2: a kernel call costs the same for 1 or 8 busy lanes, so
	// one stream alone pays 8 lanes (0.41 GB/s per core against
	// crypto/md5's 0.64), two already cost 0.78x crypto/md5 per byte,
	// four 0.4x and sixteen about 0.15x (internal/md5lanes, 2-core AMD
	// EPYC with AVX2).
	MultibufferMinStreams int
	// MultibufferMinSize: streams smaller than this never use the
	// multi-lane service (registering a hasher and a goroutine costs more
	// than a few blocks of MD5) and are not counted as concurrent heavy
	// streams. Unlike pipelining, multi-lane hashing saves CPU per byte,
	// so it pays for objects well below MinOffloadSize. Default 1 MiB.
	MultibufferMinSize int64
	// ConcurrencyWindow: the policy counts concurrent streams as the peak
	// seen within this window whenever more than one is active, so the
	// first streams of a burst are placed as the burst will be rather
	// than as lone uploads (streams cannot change backend mid-stream). A
	// lone stream is always counted as one. Default 2 s.
	ConcurrencyWindow time.Duration
	// MultibufferServers is how many multi-lane MD5 services to run; each
	// one is a goroutine batching up to 16 streams on one core (about
	// 4 GB/s with AVX2). Default max(1, Procs/2).
	MultibufferServers int
	// QueueDepth is how many blocks a pipelined or multibuffer stream may
	// hold queued before Write waits; the engine's block pool is finite,
	// so this stays small. Default 2.
	QueueDepth int
	// Procs is the number of CPUs the policy assumes; default GOMAXPROCS.
	Procs int
	// DeviceInflight is how many blocks one stream may have on the device
	// at once, whatever the device's own queue depth: beyond it the
	// device is falling behind and the stream moves to the CPU. It must
	// stay below the blocks the engine has in flight per upload, or a
	// slow device would starve the upload of buffers before any Submit
	// could fail. Default 3.
	DeviceInflight int
	// DeviceTimeout bounds how long a stream waits for the device to hand
	// back its state or digest before failing the stream. Default 10 s.
	DeviceTimeout time.Duration
	// DeviceBackoff: after a stream had to leave the device because its
	// queue was full, auto sends no new streams to it for this long.
	// Default 1 s.
	DeviceBackoff time.Duration
}

func (c Config) withDefaults() (Config, error) {
	var err error
	if c.Policy, err = ParsePolicy(string(c.Policy)); err != nil {
		return c, err
	}
	if c.ETagMode, err = ParseETagMode(string(c.ETagMode)); err != nil {
		return c, err
	}
	if c.Load == nil {
		c.Load = idleLoad{}
	}
	if c.MinOffloadSize <= 0 {
		c.MinOffloadSize = 2 << 20
	}
	if c.BusyThreshold <= 0 {
		c.BusyThreshold = 0.8
	}
	if c.MultibufferMinStreams <= 0 {
		c.MultibufferMinStreams = 2
	}
	if c.MultibufferMinSize <= 0 {
		c.MultibufferMinSize = 1 << 20
	}
	if c.ConcurrencyWindow <= 0 {
		c.ConcurrencyWindow = 2 * time.Second
	}
	if c.Procs <= 0 {
		c.Procs = runtime.GOMAXPROCS(0)
	}
	if c.MultibufferServers <= 0 {
		c.MultibufferServers = max(1, c.Procs/2)
	}
	if c.QueueDepth <= 0 {
		c.QueueDepth = 2
	}
	if c.DeviceInflight <= 0 {
		c.DeviceInflight = 3
	}
	if c.DeviceTimeout <= 0 {
		c.DeviceTimeout = 10 * time.Second
	}
	if c.DeviceBackoff <= 0 {
		c.DeviceBackoff = time.Second
	}
	if c.Policy == PolicyDevice && c.Device == nil {
		return c, errors.New("hashing: policy device needs a Device")
	}
	return c, nil
}

// Stats are cumulative engine counters, for metrics.
type Stats struct {
	// Streams counts streams started per backend.
	Streams map[Backend]uint64
	// Bytes counts bytes hashed per starting backend.
	Bytes map[Backend]uint64
	// HashTime sums Digests.HashTime per starting backend.
	HashTime map[Backend]time.Duration
	// DeviceFallbacks counts streams that left the device mid-stream.
	DeviceFallbacks uint64
	// DeviceRefused counts streams auto wanted on the device but found
	// no free lane (or backing off) and kept on the CPU.
	DeviceRefused uint64
	// Multibuffer sums the multi-lane MD5 services' counters: kernel
	// calls, the 64-byte blocks they hashed, batches that waited out
	// their deadline.
	Multibuffer md5lanes.Stats
	// Active is the number of streams now open; ActiveHeavy those of them
	// with a heavy hash (MD5, SHA1, SHA256) and at least
	// MultibufferMinSize (or unknown size), the ones the policy counts.
	Active, ActiveHeavy int64
}

var allBackends = [...]Backend{BackendInline, BackendPipelined, BackendMultibuffer, BackendDevice}

func backendIndex(b Backend) int {
	for i, x := range allBackends {
		if x == b {
			return i
		}
	}
	return 0
}

type counters struct {
	streams, bytes, hashNS [len(allBackends)]atomic.Uint64
	fallbacks, refused     atomic.Uint64
	active, activeHeavy    atomic.Int64
	peak                   atomic.Int64 // recent peak of activeHeavy
	peakAt                 atomic.Int64 // unix nanoseconds
	deviceBackoffUntil     atomic.Int64 // unix nanoseconds
}

// Engine hands out streams; one engine is shared by all uploads.
type Engine struct {
	cfg  Config
	c    counters
	simd *simdPool
}

// New returns a hashing engine. Close it to stop the multi-lane service.
func New(cfg Config) (*Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Engine{cfg: cfg, simd: newSIMDPool(cfg.MultibufferServers)}, nil
}

// Config returns the engine's configuration with defaults filled in.
func (e *Engine) Config() Config { return e.cfg }

// Close stops the engine's background services. Streams still open keep
// working until they end; new multibuffer streams fall back to pipelined.
func (e *Engine) Close() { e.simd.close() }

// Stats returns a snapshot of the engine's counters.
func (e *Engine) Stats() Stats {
	s := Stats{
		Streams:         make(map[Backend]uint64, len(allBackends)),
		Bytes:           make(map[Backend]uint64, len(allBackends)),
		HashTime:        make(map[Backend]time.Duration, len(allBackends)),
		DeviceFallbacks: e.c.fallbacks.Load(),
		DeviceRefused:   e.c.refused.Load(),
		Multibuffer:     e.simd.stats(),
		Active:          e.c.active.Load(),
		ActiveHeavy:     e.c.activeHeavy.Load(),
	}
	for i, b := range allBackends {
		s.Streams[b] = e.c.streams[i].Load()
		s.Bytes[b] = e.c.bytes[i].Load()
		s.HashTime[b] = time.Duration(e.c.hashNS[i].Load())
	}
	return s
}

// NewStream starts hashing one object, on the backend the policy picks.
func (e *Engine) NewStream(req Request) (Stream, error) {
	h := hashes{etag: req.ETag, size: req.Size}
	if req.Checksum != "" {
		sum, err := NewChecksum(req.Checksum)
		if err != nil {
			return nil, fmt.Errorf("hashing: new stream: %w", err)
		}
		h.sum = sum
	}
	needMD5 := req.MD5 || (req.ETag && e.cfg.ETagMode == ETagMD5)
	if req.ETag && !needMD5 {
		h.fast = xxh3.New()
	}
	// Heavy streams are those with a hash that costs about a CPU core per
	// GB/s (MD5, SHA-1, SHA-256); CRCs and XXH3 run at many GB/s per core
	// and are never worth a hand-off.
	heavy := needMD5 || isHeavyChecksum(req.Checksum)
	counted := heavy && (req.Size < 0 || req.Size >= e.cfg.MultibufferMinSize)
	act := &activity{e: e, counted: counted}
	e.c.active.Add(1)
	if counted {
		e.concurrency(e.c.activeHeavy.Add(1))
	}
	large := heavy && (req.Size < 0 || req.Size >= e.cfg.MinOffloadSize)
	return &lazyStream{e: e, h: h, needMD5: needMD5, heavy: heavy, counted: counted, large: large, act: act}, nil
}

// lazyStream defers the backend choice to the first Write (or Sum). A
// stream is counted as active from NewStream, but picks its backend only
// when data starts to flow: by then the other uploads of a burst have
// opened their streams too, so the first uploads of a burst are placed as
// the burst is, not as lone uploads. On a server the first block arrives
// a network read after the request starts, which is plenty.
type lazyStream struct {
	e                              *Engine
	h                              hashes
	needMD5, heavy, counted, large bool
	act                            *activity
	s                              Stream
	closed                         bool
}

func (l *lazyStream) bind() Stream {
	if l.s != nil {
		return l.s
	}
	e, h, act := l.e, l.h, l.act
	n := 0
	if l.counted {
		n = e.concurrency(e.c.activeHeavy.Load())
	}
	d := e.decide(l.needMD5, l.heavy, l.counted, l.large, n)
	switch d.backend {
	case BackendDevice:
		l.s = newDeviceStream(e, h, d.dev, act)
	case BackendMultibuffer:
		h.md5 = d.simd
		l.s = newAsyncStream(e, h, BackendMultibuffer, act)
	case BackendPipelined:
		if l.needMD5 {
			h.md5 = md5.New()
		}
		l.s = newAsyncStream(e, h, BackendPipelined, act)
	default:
		if l.needMD5 {
			h.md5 = md5.New()
		}
		l.s = &inlineStream{h: h, act: act}
	}
	e.c.streams[backendIndex(d.backend)].Add(1)
	return l.s
}

func (l *lazyStream) Write(p []byte, release func()) {
	if l.closed {
		release()
		return
	}
	l.bind().Write(p, release)
}

func (l *lazyStream) Sum() (Digests, error) {
	if l.closed {
		return Digests{}, errClosed
	}
	return l.bind().Sum()
}

func (l *lazyStream) Close() {
	if l.closed {
		return
	}
	l.closed = true
	if l.s != nil {
		l.s.Close()
		return
	}
	l.act.end(BackendInline, nil)
}
