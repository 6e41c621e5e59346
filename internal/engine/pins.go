package engine

import "sync"

// pinSet counts the readers of each data id. A commit or delete that
// replaces a version frees its data at once when nobody reads it, and
// otherwise when the last reader unpins it: readers never block writers,
// and a reader never loses the bytes it resolved.
type pinSet struct {
	mu      sync.Mutex
	readers map[string]int
	pending map[string][]func() // frees deferred until the id is unpinned
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

// free runs f now if no reader holds id, or when the last one unpins it.
func (s *pinSet) free(id string, f func()) {
	s.mu.Lock()
	if s.readers[id] > 0 {
		s.pending[id] = append(s.pending[id], f)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	f()
}
