package engine

import "sync"

// nsLock hands out one RWMutex per name, created on demand and dropped
// when unused, so locks on different keys never contend.
type nsLock struct {
	mu    sync.Mutex
	locks map[string]*nsEntry
}

type nsEntry struct {
	rw   sync.RWMutex
	refs int
}

func newNSLock() *nsLock { return &nsLock{locks: make(map[string]*nsEntry)} }

func (l *nsLock) acquire(name string) *nsEntry {
	l.mu.Lock()
	e := l.locks[name]
	if e == nil {
		e = &nsEntry{}
		l.locks[name] = e
	}
	e.refs++
	l.mu.Unlock()
	return e
}

func (l *nsLock) release(name string, e *nsEntry) {
	l.mu.Lock()
	e.refs--
	if e.refs == 0 {
		delete(l.locks, name)
	}
	l.mu.Unlock()
}

// Lock takes name exclusively and returns the function that releases it.
func (l *nsLock) Lock(name string) func() {
	e := l.acquire(name)
	e.rw.Lock()
	return func() { e.rw.Unlock(); l.release(name, e) }
}

// RLock takes name shared and returns the function that releases it.
func (l *nsLock) RLock(name string) func() {
	e := l.acquire(name)
	e.rw.RLock()
	return func() { e.rw.RUnlock(); l.release(name, e) }
}

func lockName(bucket, key string) string { return bucket + "\x00" + key }
