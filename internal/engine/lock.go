package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

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

func lockName(bucket, key string) string { return bucket + "\x00" + key }

// LockTimeout bounds how long a request waits for a key's lock. Commits
// hold a key's lock only for their index batches (never while a body
// streams), so a wait this long means a drive is stalling: the request
// fails with ErrBusy (503 SlowDown) instead of hanging.
const LockTimeout = 30 * time.Second

// LockWait takes name exclusively, waiting at most until ctx ends or
// LockTimeout passes, and returns the function that releases it.
func (l *nsLock) LockWait(ctx context.Context, name string) (func(), error) {
	return l.wait(ctx, name, false)
}

// RLockWait takes name shared, bounded like LockWait.
func (l *nsLock) RLockWait(ctx context.Context, name string) (func(), error) {
	return l.wait(ctx, name, true)
}

func (l *nsLock) wait(ctx context.Context, name string, shared bool) (func(), error) {
	e := l.acquire(name)
	try, lock, unlock := e.rw.TryLock, e.rw.Lock, e.rw.Unlock
	if shared {
		try, lock, unlock = e.rw.TryRLock, e.rw.RLock, e.rw.RUnlock
	}
	release := func() { unlock(); l.release(name, e) }
	if try() {
		return release, nil
	}
	got := make(chan struct{})
	abandoned := make(chan struct{})
	go func() {
		lock()
		select {
		case got <- struct{}{}:
		case <-abandoned:
			release() // the waiter gave up: hand the lock straight back
		}
	}()
	timer := time.NewTimer(LockTimeout)
	defer timer.Stop()
	select {
	case <-got:
		return release, nil
	case <-ctx.Done():
		close(abandoned)
		return nil, ctx.Err()
	case <-timer.C:
		close(abandoned)
		return nil, fmt.Errorf("%w: waited %v for the lock of %q", ErrBusy, LockTimeout, strings.ReplaceAll(name, "\x00", "/"))
	}
}
