package engine

import (
	"sync"
	"time"
)

// pinSet counts the readers of each data id. A commit or delete that
// replaces a version frees its data at once when nobody reads it, and
// otherwise when the last reader unpins it: readers never block writers,
// and a reader never loses the bytes it resolved.
//
// Pins are per process: in a cluster a reader on another node is not
// seen, so frees wait delay first (a GET streaming through another node
// keeps its bytes for that long). Frees still waiting when the engine
// closes are dropped here; in a cluster each is also queued on its drive
// (freequeue.go), and the drive's node frees it after a restart.
type pinSet struct {
	mu      sync.Mutex
	readers map[string]int
	pending map[string][]func() // frees deferred until the id is unpinned
	delay   time.Duration
	timers  map[*time.Timer]struct{}
	stopped bool
}

func newPinSet() *pinSet {
	return &pinSet{readers: map[string]int{}, pending: map[string][]func(){}}
}

func (s *pinSet) pin(ids []string) {
	s.mu.Lock()
	for _, id := range ids {
		s.readers[id]++
	}
	s.mu.Unlock()
}

func (s *pinSet) unpin(ids []string) {
	var run []func()
	s.mu.Lock()
	for _, id := range ids {
		s.readers[id]--
		if s.readers[id] > 0 {
			continue
		}
		delete(s.readers, id)
		run = append(run, s.pending[id]...)
		delete(s.pending, id)
	}
	s.mu.Unlock()
	for _, f := range run {
		f()
	}
}

// pinned reports whether any reader holds id.
func (s *pinSet) pinned(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readers[id] > 0
}

// free runs f now if no reader holds id, or when the last one unpins it
// (after delay, when one is set).
func (s *pinSet) free(id string, f func()) {
	if s.delay > 0 {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.stopped {
			return
		}
		var t *time.Timer
		t = time.AfterFunc(s.delay, func() {
			s.mu.Lock()
			_, live := s.timers[t]
			delete(s.timers, t)
			s.mu.Unlock()
			if live {
				s.freeNow(id, f)
			}
		})
		if s.timers == nil {
			s.timers = map[*time.Timer]struct{}{}
		}
		s.timers[t] = struct{}{}
		return
	}
	s.freeNow(id, f)
}

// later runs f after d, unless the engine closes first (stop drops it
// with the delayed frees).
func (s *pinSet) later(d time.Duration, f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		s.mu.Lock()
		_, live := s.timers[t]
		delete(s.timers, t)
		s.mu.Unlock()
		if live {
			f()
		}
	})
	if s.timers == nil {
		s.timers = map[*time.Timer]struct{}{}
	}
	s.timers[t] = struct{}{}
}

// stop drops the delayed frees (the engine is closing).
func (s *pinSet) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	for t := range s.timers {
		t.Stop()
	}
	s.timers = nil
}

func (s *pinSet) freeNow(id string, f func()) {
	s.mu.Lock()
	if s.readers[id] > 0 {
		s.pending[id] = append(s.pending[id], f)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	f()
}
