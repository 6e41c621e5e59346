package hashing

import (
	"encoding/hex"
	"errors"
	"hash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeebo/xxh3"
)

// errClosed is returned by Sum on a stream that was closed first.
var errClosed = errors.New("hashing: stream closed before Sum")

// hashes is the set of hash states one stream feeds.
type hashes struct {
	md5  hash.Hash // nil when MD5 is not needed or the device holds it
	sum  hash.Hash // the S3 checksum, or nil
	fast *xxh3.Hasher
	etag bool
	size int64 // expected length, -1 when unknown

	n    int64
	busy time.Duration // HashTime
}

// writeCPU feeds p to every hash except MD5.
func (h *hashes) writeCPU(p []byte) {
	if h.sum != nil {
		h.sum.Write(p)
	}
	if h.fast != nil {
		h.fast.Write(p)
	}
}

// write feeds p to every hash and accounts for it.
func (h *hashes) write(p []byte) {
	t := time.Now()
	if h.md5 != nil {
		h.md5.Write(p)
	}
	h.writeCPU(p)
	h.busy += time.Since(t)
	h.n += int64(len(p))
}

// digests builds the result; md5sum is the raw MD5 or nil.
func (h *hashes) digests(md5sum []byte) Digests {
	d := Digests{MD5: md5sum, Bytes: h.n, HashTime: h.busy}
	if h.sum != nil {
		d.Checksum = h.sum.Sum(nil)
	}
	if h.etag {
		switch {
		case md5sum != nil:
			d.ETag = hex.EncodeToString(md5sum)
		case h.fast != nil:
			b := h.fast.Sum128().Bytes()
			d.ETag = hex.EncodeToString(b[:])
		}
	}
	return d
}

// closeMD5 returns a pooled MD5 hasher (the multi-lane service's) if any.
func (h *hashes) closeMD5() {
	if c, ok := h.md5.(interface{ Close() }); ok {
		c.Close()
	}
}

// activity keeps the engine's active-stream counts and totals; end runs
// once per stream, from Sum or Close, whichever comes first.
type activity struct {
	e       *Engine
	counted bool // counted in activeHeavy
	once    sync.Once
}

func (a *activity) end(b Backend, d *Digests) {
	a.once.Do(func() {
		a.e.c.active.Add(-1)
		if a.counted {
			a.e.c.activeHeavy.Add(-1)
		}
		if d != nil {
			i := backendIndex(b)
			a.e.c.bytes[i].Add(uint64(d.Bytes))
			a.e.c.hashNS[i].Add(uint64(d.HashTime))
		}
	})
}

// inlineStream hashes inside Write on the caller's goroutine.
type inlineStream struct {
	h      hashes
	act    *activity
	done   bool
	closed bool
}

func (s *inlineStream) Write(p []byte, release func()) {
	if !s.done {
		s.h.write(p)
	}
	release()
}

func (s *inlineStream) Sum() (Digests, error) {
	if s.closed {
		return Digests{}, errClosed
	}
	s.done = true
	var m []byte
	if s.h.md5 != nil {
		m = s.h.md5.Sum(nil)
	}
	d := s.h.digests(m)
	d.Backend = BackendInline
	s.act.end(BackendInline, &d)
	return d, nil
}

func (s *inlineStream) Close() {
	if !s.closed {
		s.closed, s.done = true, true
		s.act.end(BackendInline, nil)
	}
}

// block is one queued Write.
type block struct {
	p       []byte
	release func()
}

// asyncStream hashes on a goroutine of its own, fed through a small
// bounded queue: used by the pipelined backend (crypto/md5) and the
// multibuffer backend (an md5lanes hasher, whose Write blocks while the
// shared service works through its lanes, so it needs its own goroutine
// to overlap with the caller just the same).
type asyncStream struct {
	h       hashes
	backend Backend
	act     *activity
	ch      chan block
	exited  chan struct{}
	abort   atomic.Bool
	ended   bool // ch closed
	summed  bool
	closed  bool
	md5     []byte
}

func newAsyncStream(e *Engine, h hashes, b Backend, act *activity) *asyncStream {
	s := &asyncStream{
		h:       h,
		backend: b,
		act:     act,
		// The worker holds one block while the queue holds QueueDepth-1,
		// so the stream never pins more than QueueDepth pool blocks.
		ch:     make(chan block, e.cfg.QueueDepth-1),
		exited: make(chan struct{}),
	}
	go s.work()
	return s
}

func (s *asyncStream) work() {
	defer close(s.exited)
	for b := range s.ch {
		if !s.abort.Load() {
			s.h.write(b.p)
			if s.h.size >= 0 && s.h.n >= s.h.size {
				// The last byte is in: tell a shared multi-lane service
				// now, not at Sum, so its batches stop waiting for us
				// while the upload finishes its own writes.
				s.h.closeMD5()
			}
		}
		b.release()
	}
	if !s.abort.Load() && s.h.md5 != nil {
		s.md5 = s.h.md5.Sum(nil)
	}
	s.h.closeMD5()
}

func (s *asyncStream) Write(p []byte, release func()) {
	if s.ended {
		release()
		return
	}
	// Blocks when the worker is QueueDepth blocks behind: back-pressure
	// that bounds the pool blocks this stream holds.
	s.ch <- block{p, release}
}

func (s *asyncStream) end() {
	if !s.ended {
		s.ended = true
		close(s.ch)
	}
}

func (s *asyncStream) Sum() (Digests, error) {
	if s.closed {
		return Digests{}, errClosed
	}
	t := time.Now()
	s.end()
	<-s.exited
	wait := time.Since(t)
	s.summed = true
	d := s.h.digests(s.md5)
	d.Backend, d.SumWait = s.backend, wait
	s.act.end(s.backend, &d)
	return d, nil
}

func (s *asyncStream) Close() {
	if s.closed {
		return
	}
	s.closed = true
	if !s.summed {
		s.abort.Store(true)
	}
	s.end()
	<-s.exited
	s.act.end(s.backend, nil)
}

// The stream types and the simulated device implement the interfaces.
var (
	_ Stream = (*lazyStream)(nil)
	_ Stream = (*inlineStream)(nil)
	_ Stream = (*asyncStream)(nil)
	_ Stream = (*deviceStream)(nil)
	_ Device = (*SimDevice)(nil)
)
