package engine

import (
	"context"
	"errors"
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
	// cluster, when set, also takes each lock on a majority of the
	// cluster's nodes (after the in-process one, so writers on one node
	// queue locally instead of on the network).
	cluster ClusterLocker
}

// ClusterLocker serializes holders of a name across the nodes of a
// cluster (package dlock implements it); nil on a single node.
type ClusterLocker interface {
	Lock(ctx context.Context, name string) (ClusterLease, error)
	RLock(ctx context.Context, name string) (ClusterLease, error)
}

// ClusterLease is a lock held across the cluster.
type ClusterLease interface {
	Unlock()
	// Lost is closed when the lease could not be kept (the holder was cut
	// off from a majority of nodes): it must not commit any more.
	Lost() <-chan struct{}
}

// ErrLockLost fails a commit whose cluster lock expired under it.
var ErrLockLost = errors.New("lost the object's cluster lock (cut off from most nodes?); retry")

type nsEntry struct {
	rw   sync.RWMutex
	refs int
}

func newNSLock(cluster ClusterLocker) *nsLock {
	return &nsLock{locks: make(map[string]*nsEntry), cluster: cluster}
}

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
	_, release, err := l.wait(ctx, name, false)
	return release, err
}

// LockCtx takes name exclusively like LockWait and returns a context
// that ends when the lock is lost: a commit that runs under it stops
// writing to drives once another node may hold the lock. On a single
// node the lock cannot be lost and ctx comes back as is.
func (l *nsLock) LockCtx(ctx context.Context, name string) (context.Context, func(), error) {
	return l.wait(ctx, name, false)
}

// RLockWait takes name shared, bounded like LockWait.
func (l *nsLock) RLockWait(ctx context.Context, name string) (func(), error) {
	_, release, err := l.wait(ctx, name, true)
	return release, err
}

// RLockLocalWait takes name shared in this process only, bounded like
// LockWait. A reader resolving and pinning a version needs no more in a
// cluster: pins are per process, and data replaced by another node is
// freed only after ClusterConfig.FreeDelay, so the cluster-wide read lock
// (a round trip to most nodes per GET) would protect nothing.
func (l *nsLock) RLockLocalWait(ctx context.Context, name string) (func(), error) {
	return l.local(ctx, name, true)
}

// wait takes the in-process lock, then the cluster lease if there is a
// cluster; both waits together are bounded by LockTimeout.
func (l *nsLock) wait(ctx context.Context, name string, shared bool) (context.Context, func(), error) {
	start := time.Now()
	release, err := l.local(ctx, name, shared)
	if err != nil || l.cluster == nil {
		return ctx, release, err
	}
	lctx, cancel := context.WithTimeout(ctx, max(LockTimeout-time.Since(start), time.Second))
	var lease ClusterLease
	if shared {
		lease, err = l.cluster.RLock(lctx, name)
	} else {
		lease, err = l.cluster.Lock(lctx, name)
	}
	cancel()
	if err != nil {
		release()
		if ctx.Err() != nil {
			return ctx, nil, ctx.Err()
		}
		if errors.Is(err, ErrClusterUnavailable) {
			return ctx, nil, fmt.Errorf("cluster lock of %q: %w", strings.ReplaceAll(name, "\x00", "/"), err)
		}
		return ctx, nil, fmt.Errorf("%w: cluster lock of %q: %v", ErrBusy, strings.ReplaceAll(name, "\x00", "/"), err)
	}
	held, cut := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-lease.Lost():
			cut(ErrLockLost)
		case <-held.Done():
		}
	}()
	return held, func() {
		cut(nil)
		lease.Unlock()
		release()
	}, nil
}

// local takes the in-process lock of name, bounded by ctx and LockTimeout.
func (l *nsLock) local(ctx context.Context, name string, shared bool) (func(), error) {
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
