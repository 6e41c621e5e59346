package hashing

import (
	"sync"

	"github.com/shardstore/shardstore/internal/md5lanes"
)

// simdPool runs the shared multi-lane MD5 services (internal/md5lanes).
// Streams are packed onto the fullest service that still has a free lane
// (16 lanes each), so lanes fill up rather than several services each
// running half empty; a service costs one goroutine, which computes on
// one core.
type simdPool struct {
	mu      sync.Mutex
	max     int
	servers []*simdServer
	closed  bool
	retired md5lanes.Stats // counters of services already stopped
}

type simdServer struct {
	srv    *md5lanes.Service
	active int // hashers not yet closed
}

func newSIMDPool(max int) *simdPool { return &simdPool{max: max} }

// newHash returns a hasher on a shared service, or nil when the engine is
// closed or the CPU has no multi-lane kernel (the caller then hashes on
// the CPU another way).
func (p *simdPool) newHash() *simdHasher {
	if !md5lanes.Available() {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	// Fullest service with a free lane; failing that, a new service if
	// allowed; failing that, the least loaded one (lanes are shared in
	// turns, so an overfull service is slower per stream, never stuck).
	var best, least *simdServer
	for _, s := range p.servers {
		if s.active < md5lanes.Lanes && (best == nil || s.active > best.active) {
			best = s
		}
		if least == nil || s.active < least.active {
			least = s
		}
	}
	if best == nil {
		if len(p.servers) < p.max || least == nil {
			best = &simdServer{srv: md5lanes.NewService()}
			p.servers = append(p.servers, best)
		} else {
			best = least
		}
	}
	best.active++
	return &simdHasher{Hasher: best.srv.New(), pool: p, server: best}
}

// done is called when a hasher closes; once the pool is closed it stops a
// service when its last hasher is gone.
func (p *simdPool) done(s *simdServer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s.active--
	if s.active == 0 && p.closed {
		p.stop(s)
	}
}

// stats sums the counters of every service the pool ran.
func (p *simdPool) stats() md5lanes.Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.retired
	for _, s := range p.servers {
		addStats(&t, s.srv.Stats())
	}
	return t
}

func addStats(t *md5lanes.Stats, s md5lanes.Stats) {
	t.Calls += s.Calls
	t.LaneBlocks += s.LaneBlocks
	t.KernelBlocks += s.KernelBlocks
	t.ExpiredWaits += s.ExpiredWaits
}

// stop closes s and drops it from the pool; p.mu is held.
func (p *simdPool) stop(s *simdServer) {
	s.srv.Close()
	addStats(&p.retired, s.srv.Stats())
	for i, x := range p.servers {
		if x == s {
			p.servers = append(p.servers[:i], p.servers[i+1:]...)
			break
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
	for _, s := range append([]*simdServer(nil), p.servers...) {
		if s.active == 0 {
			p.stop(s)
		}
	}
}

// simdHasher is a multi-lane MD5 stream that reports back to its pool.
type simdHasher struct {
	*md5lanes.Hasher
	pool   *simdPool
	server *simdServer
	once   sync.Once
}

// Close frees the hasher's place on its service; safe to call more than
// once.
func (h *simdHasher) Close() {
	h.once.Do(func() {
		h.Hasher.Close()
		h.pool.done(h.server)
	})
}
