package hashing

import (
	"sync"

	md5simd "github.com/minio/md5-simd"
)

// hashersPerServer is how many hashers one md5-simd service hands out
// before it is retired. md5-simd v1.1.2 never forgets a finished hasher
// (its client table and digest map keep an entry per hasher, and every
// scheduling round rescans the client table), so a service that lives
// forever gets slower and larger with every upload. Retiring it after a
// bounded number of hashers, and closing it when its last one ends, keeps
// both bounded at the cost of starting a service (1.5 MiB of buffers, one
// goroutine) every few hundred uploads. Measured with 64 KiB hashes one
// after another: a single long-lived service went from 1.5 ms per hasher
// (first 3000) to 19.5 ms (hashers 9000-12000); recycled, a steady
// 0.2-0.3 ms.
const hashersPerServer = 256

// simdPool runs the shared multi-lane MD5 services. Streams are packed
// onto the fullest service that still has a free lane (16 lanes each), so
// lanes fill up rather than several services each running half empty.
type simdPool struct {
	mu      sync.Mutex
	max     int
	servers []*simdServer
	closed  bool
}

type simdServer struct {
	srv     md5simd.Server
	active  int // hashers not yet closed
	handed  int // hashers ever handed out
	retired bool
}

// simdLanes is the number of streams one md5-simd service computes at
// once (16 with AVX-512, 2x8 with AVX2).
const simdLanes = 16

func newSIMDPool(max int) *simdPool { return &simdPool{max: max} }

// newHash returns a hasher on a shared service, or nil when the engine is
// closed.
func (p *simdPool) newHash() *simdHasher {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	// Fullest service with a free lane; failing that, a new service if
	// allowed; failing that, the least loaded one (lanes are shared in
	// turns, so an overfull service is slower per stream, never stuck).
	var best, least *simdServer
	live := 0
	for _, s := range p.servers {
		if s.retired {
			continue
		}
		live++
		if s.active < simdLanes && (best == nil || s.active > best.active) {
			best = s
		}
		if least == nil || s.active < least.active {
			least = s
		}
	}
	if best == nil {
		if live < p.max || least == nil {
			best = &simdServer{srv: md5simd.NewServer()}
			p.servers = append(p.servers, best)
		} else {
			best = least
		}
	}
	best.active++
	best.handed++
	if best.handed >= hashersPerServer {
		best.retired = true
	}
	return &simdHasher{Hasher: best.srv.NewHash(), pool: p, server: best}
}

// done is called when a hasher closes; it shuts a retired service down
// once its last hasher is gone.
func (p *simdPool) done(s *simdServer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s.active--
	if s.active == 0 && (s.retired || p.closed) {
		s.srv.Close()
		for i, x := range p.servers {
			if x == s {
				p.servers = append(p.servers[:i], p.servers[i+1:]...)
				break
			}
		}
	}
}

// close stops idle services now and busy ones when their last hasher ends.
func (p *simdPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	kept := p.servers[:0]
	for _, s := range p.servers {
		if s.active == 0 {
			s.srv.Close()
			continue
		}
		kept = append(kept, s)
	}
	p.servers = kept
}

// simdHasher is an md5-simd hasher that reports back to its pool.
type simdHasher struct {
	md5simd.Hasher
	pool   *simdPool
	server *simdServer
	once   sync.Once
}

// Close frees the hasher's lane; safe to call more than once.
func (h *simdHasher) Close() {
	h.once.Do(func() {
		h.Hasher.Close()
		h.pool.done(h.server)
	})
}
