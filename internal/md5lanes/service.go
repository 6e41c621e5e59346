package md5lanes

import (
	"encoding/binary"
	"hash"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// maxChunk bounds the bytes per lane of one kernel call, so a stream that
// arrives while long writes are running waits at most one short call for
// a free lane.
const maxChunk = 64 << 10

// Lanes is how many streams one Service hashes at once.
const Lanes = 16

// zeroPad backs idle lanes: the kernels always read every lane.
var zeroPad [maxChunk]byte

// Available reports whether the multi-lane kernels run on this CPU. When
// false, a Service still works, hashing each stream with a scalar block
// function on the writer's goroutine (slower than crypto/md5).
func Available() bool { return haveSIMD }

// How long NewService's services hold a partly filled set of lanes: the
// time the open streams need to bring their next writes grows with how
// many of them share each CPU (each gets that share of a core to read,
// encode and write its next block), so the limit is WaitPerStream times
// the open streams per GOMAXPROCS, at most MaxWaitCap. Measured with
// `shardstore bench put` on 2 cores: 16 uploads of 32 MiB filled 71 % of
// the lanes with a fixed 20 ms on GOMAXPROCS 1 and 98 % with 50 ms, but
// 50 ms left 4 MiB uploads on GOMAXPROCS 2 waiting on idle cores (1.49
// cores busy instead of 1.89). 3 ms per stream per core gives 24 ms for
// 16 streams on 2 cores and 48 ms on 1: 98-100 % fill in both, with the
// 4 MiB case keeping its cores busy (1.90).
const (
	WaitPerStream = 3 * time.Millisecond
	MaxWaitCap    = 100 * time.Millisecond
)

// Service runs the multi-lane kernel for the hashers it hands out. It is
// safe for concurrent use.
//
// A kernel call costs the same whether 1 or 8 (16) lanes carry data, so
// the service batches: it holds a partly filled set of lanes while other
// open streams are expected to write soon, up to maxWait from when the
// first waiting write arrived. Uploads feed their blocks at network
// speed, far below the kernel's, so without the wait nearly every call
// would run one or two lanes and cost several times crypto/md5 per byte.
//
// "Expected soon" is predicted per stream: the service keeps each
// stream's think time (from its previous write being hashed to its next
// write arriving, smoothed) and counts a stream only if its next write is
// due before the deadline and not long overdue. A slow client's stream,
// which writes every 100 ms, is not waited for; a stream that stops
// writing delays the others by at most one maxWait. Streams that know
// they are finished say so with Close, so nobody waits for them at all.
type Service struct {
	maxWait   time.Duration // fixed limit, or 0 with perStream set
	perStream time.Duration // scaled limit, see WaitPerStream

	regMu sync.Mutex
	reg   map[*Hasher]struct{} // open hashers, for the batching estimate

	reqs chan *Hasher
	quit chan struct{}
	done chan struct{}

	mu     sync.RWMutex // held shared while submitting, exclusively by Close
	closed bool

	calls, laneBlocks, kernelBlocks, expired atomic.Uint64
}

// NewService starts a service whose wait scales with the open streams
// per CPU (WaitPerStream); Close stops it.
func NewService() *Service { return newService(0, WaitPerStream) }

// NewServiceWait starts a service that waits at most maxWait for lanes to
// fill (0: never waits, every call runs the lanes that have work).
func NewServiceWait(maxWait time.Duration) *Service { return newService(maxWait, 0) }

func newService(maxWait, perStream time.Duration) *Service {
	s := &Service{
		maxWait:   maxWait,
		perStream: perStream,
		reg:       make(map[*Hasher]struct{}),
		reqs:      make(chan *Hasher, 4*Lanes),
		quit:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	if haveSIMD {
		go s.run()
	} else {
		close(s.done)
	}
	return s
}

// Close stops the service once the writes already submitted are hashed.
// Hashers keep working after Close, on their writers' goroutines.
func (s *Service) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.quit)
	}
	s.mu.Unlock()
	<-s.done
}

// waitLimit is how long a partly filled batch may wait now.
func (s *Service) waitLimit() time.Duration {
	if s.perStream == 0 {
		return s.maxWait
	}
	s.regMu.Lock()
	open := len(s.reg)
	s.regMu.Unlock()
	procs := runtime.GOMAXPROCS(0)
	return min(MaxWaitCap, time.Duration((open+procs-1)/procs)*s.perStream)
}

// target is how many lanes are worth waiting for: the n in use plus the
// open streams whose next write is due by deadline and not overdue by
// more than limit (a stream that went quiet is not waited for again).
func (s *Service) target(n int, deadline time.Time, limit time.Duration) int {
	now := time.Now()
	s.regMu.Lock()
	defer s.regMu.Unlock()
	for h := range s.reg {
		if n >= Lanes {
			break
		}
		if h.inLane {
			continue
		}
		due := h.lastDone.Add(h.think)
		if !due.After(deadline) && now.Sub(due) <= limit {
			n++
		}
	}
	return n
}

// Stats are a service's cumulative counters.
type Stats struct {
	// Calls is the number of kernel calls.
	Calls uint64
	// LaneBlocks is the number of 64-byte blocks they hashed for streams
	// (idle lanes not counted).
	LaneBlocks uint64
	// KernelBlocks is the number of 64-byte blocks the kernel computed,
	// idle lanes included: LaneBlocks/KernelBlocks is the lane fill, the
	// fraction of the kernel's work that was useful.
	KernelBlocks uint64
	// ExpiredWaits counts batches that waited out their whole wait limit
	// for streams that did not write in time.
	ExpiredWaits uint64
}

// Stats returns the service's counters.
func (s *Service) Stats() Stats {
	return Stats{Calls: s.calls.Load(), LaneBlocks: s.laneBlocks.Load(),
		KernelBlocks: s.kernelBlocks.Load(), ExpiredWaits: s.expired.Load()}
}

// submit hands h.work to the service and waits until it is hashed; false
// when the service is closed (the caller hashes it itself).
func (s *Service) submit(h *Hasher) bool {
	s.mu.RLock()
	if s.closed || !haveSIMD {
		s.mu.RUnlock()
		return false
	}
	s.reqs <- h
	s.mu.RUnlock()
	<-h.wake
	return true
}

// run is the service goroutine: it keeps up to 16 lanes busy with the
// pending writes, in arrival order, and wakes each writer when its bytes
// are hashed.
func (s *Service) run() {
	defer close(s.done)
	var (
		lanes  [Lanes]*Hasher
		n      int // lanes in use, packed at the front
		st     [4 * Lanes]uint32
		ptrs   [Lanes]*byte
		quit   = s.quit
		closed bool
	)
	add := func(h *Hasher) {
		now := time.Now()
		think := now.Sub(h.lastDone)
		if h.writes == 0 {
			h.think = think
		} else {
			h.think = (3*h.think + think) / 4
		}
		h.writes++
		h.inLane = true
		lanes[n] = h
		n++
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var waitStart time.Time // when the lanes now waiting began to wait
	for {
		if n == 0 {
			waitStart = time.Time{}
			if closed {
				// Submitters finished sending before Close took the
				// lock; whatever they sent is in the buffer.
				select {
				case h := <-s.reqs:
					add(h)
				default:
					return
				}
			} else {
				select {
				case h := <-s.reqs:
					add(h)
				case <-quit:
					closed, quit = true, nil
					continue
				}
			}
		}
	fill:
		for n < Lanes {
			select {
			case h := <-s.reqs:
				add(h)
			default:
				break fill
			}
		}
		if waitStart.IsZero() {
			waitStart = time.Now()
		}
		// Wait for the other streams expected to write soon, see Service.
		if limit := s.waitLimit(); !closed && limit > 0 && n < Lanes {
			deadline := waitStart.Add(limit)
			if left := time.Until(deadline); left > 0 && n < s.target(n, deadline, limit) {
				timer.Reset(left)
			wait:
				for {
					select {
					case h := <-s.reqs:
						add(h)
						if n >= s.target(n, deadline, limit) {
							break wait
						}
					case <-timer.C:
						s.expired.Add(1)
						break wait
					case <-quit:
						closed, quit = true, nil
						break wait
					}
				}
				if !timer.Stop() {
					select {
					case <-timer.C:
					default:
					}
				}
			}
		}
		// Every lane hashes the same number of bytes per call: the
		// shortest pending write, at most maxChunk.
		step := maxChunk
		for _, h := range lanes[:n] {
			step = min(step, len(h.work))
		}
		// The narrowest kernel that holds the lanes in use; the state
		// is laid out A[0..w-1], B[0..w-1], C..., D... for width w.
		w := 8
		if n > 8 {
			w = Lanes
		}
		for l := 0; l < w; l++ {
			if l < n {
				h := lanes[l]
				for r := 0; r < 4; r++ {
					st[r*w+l] = h.s[r]
				}
				ptrs[l] = &h.work[0]
			} else {
				ptrs[l] = &zeroPad[0]
			}
		}
		if w == Lanes {
			blockX16(&st, &ptrs, step)
		} else {
			blockX8((*[32]uint32)(st[:32]), (*[8]*byte)(ptrs[:8]), step)
		}
		s.kernelBlocks.Add(uint64(w * step / 64))
		for l, h := range lanes[:n] {
			for r := 0; r < 4; r++ {
				h.s[r] = st[r*w+l]
			}
		}
		s.calls.Add(1)
		s.laneBlocks.Add(uint64(n * step / 64))
		// Advance every lane; wake and drop the finished ones, keeping
		// the rest packed in order.
		kept := 0
		var now time.Time
		for _, h := range lanes[:n] {
			h.work = h.work[step:]
			if len(h.work) == 0 {
				if now.IsZero() {
					now = time.Now()
				}
				h.inLane, h.lastDone = false, now
				h.wake <- struct{}{}
				continue
			}
			lanes[kept] = h
			kept++
		}
		for i := kept; i < n; i++ {
			lanes[i] = nil
		}
		if kept < n {
			// Freed lanes wait for refills from now on.
			waitStart = time.Now()
		}
		n = kept
		ptrs = [Lanes]*byte{}
	}
}

// Size and BlockSize are MD5's.
const (
	Size      = 16
	BlockSize = 64
)

var initState = [4]uint32{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}

// Hasher is one stream's MD5 on a Service; it implements hash.Hash. A
// Hasher is used by one goroutine at a time.
type Hasher struct {
	svc    *Service
	s      [4]uint32
	x      [BlockSize]byte // carried partial block
	nx     int
	len    uint64
	work   []byte        // bytes the service is hashing for this stream
	wake   chan struct{} // the service's "done"
	closed bool

	// Owned by the service goroutine (set by New before it registers):
	// the batching estimate of when this stream writes next.
	lastDone time.Time     // when its previous write was hashed (or New)
	think    time.Duration // smoothed lastDone-to-next-write time
	writes   int
	inLane   bool
}

var _ hash.Hash = (*Hasher)(nil)

// New returns a fresh MD5 stream on s. Close it when done: the service
// waits for open streams' writes to fill its lanes.
func (s *Service) New() *Hasher {
	h := &Hasher{svc: s, wake: make(chan struct{}, 1), lastDone: time.Now()}
	h.Reset()
	s.regMu.Lock()
	s.reg[h] = struct{}{}
	s.regMu.Unlock()
	return h
}

// Close tells the service this stream writes no more, so batches stop
// waiting for it; Sum still works. Safe to call more than once.
func (h *Hasher) Close() {
	if !h.closed {
		h.closed = true
		h.svc.regMu.Lock()
		delete(h.svc.reg, h)
		h.svc.regMu.Unlock()
	}
}

// Reset implements hash.Hash.
func (h *Hasher) Reset() {
	h.s, h.nx, h.len = initState, 0, 0
}

// Size implements hash.Hash.
func (h *Hasher) Size() int { return Size }

// BlockSize implements hash.Hash.
func (h *Hasher) BlockSize() int { return BlockSize }

// Write implements hash.Hash: whole blocks go to the service (the call
// returns once they are hashed), a partial block is carried over.
func (h *Hasher) Write(p []byte) (int, error) {
	total := len(p)
	h.len += uint64(total)
	if h.nx > 0 {
		c := copy(h.x[h.nx:], p)
		h.nx += c
		p = p[c:]
		if h.nx < BlockSize {
			return total, nil
		}
		blockScalar(&h.s, h.x[:])
		h.nx = 0
	}
	if bulk := len(p) &^ (BlockSize - 1); bulk > 0 {
		h.work = p[:bulk]
		if !h.svc.submit(h) {
			blockScalar(&h.s, h.work)
		}
		h.work = nil
		p = p[bulk:]
	}
	h.nx = copy(h.x[:], p)
	return total, nil
}

// Sum implements hash.Hash: it appends the digest of the bytes written so
// far and leaves the stream as it was.
func (h *Hasher) Sum(in []byte) []byte {
	s := h.s
	var tail [2 * BlockSize]byte
	k := copy(tail[:], h.x[:h.nx])
	tail[k] = 0x80
	end := BlockSize
	if k >= BlockSize-8 {
		end = 2 * BlockSize
	}
	binary.LittleEndian.PutUint64(tail[end-8:], h.len<<3)
	blockScalar(&s, tail[:end])
	var out [Size]byte
	for i, v := range s {
		binary.LittleEndian.PutUint32(out[4*i:], v)
	}
	return append(in, out[:]...)
}
