package dlock

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Lease is a lock held on a majority of the nodes. It renews itself in
// the background until Unlock; a holder checks it (Check, Valid or Lost)
// before acting on the lock, and calls Unlock exactly when done, whether
// or not the lease was lost.
type Lease struct {
	l            *Locker
	v            *view // the lock nodes it was taken on, in use until it ends
	write        bool
	req          request
	grants       *calls // the acquire round, whose calls may be in flight
	releaseLocal func()
	stop         context.CancelFunc // ends the refresher and its calls
	lost         chan struct{}
	unlockOnce   sync.Once

	mu       sync.Mutex
	deadline time.Time   // the holder's validity ends here (Locker clock)
	err      error       // why the lease ended; nil while held
	timer    *time.Timer // fires at deadline
}

// hold starts keeping a lease granted by a majority until deadline; nil
// if the locker was closed meanwhile.
func (l *Locker) hold(v *view, write bool, req request, grants *calls, deadline time.Time, releaseLocal func()) *Lease {
	ctx, stop := context.WithCancel(context.Background())
	s := &Lease{
		l:            l,
		v:            v,
		write:        write,
		req:          req,
		grants:       grants,
		releaseLocal: releaseLocal,
		stop:         stop,
		lost:         make(chan struct{}),
		deadline:     deadline,
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		stop()
		return nil
	}
	l.held[s] = struct{}{}
	l.mu.Unlock()
	s.mu.Lock()
	s.timer = time.AfterFunc(deadline.Sub(l.now()), s.onDeadline)
	s.mu.Unlock()
	l.spawn(func() { s.refresher(ctx) })
	return s
}

// Lost returns a channel closed when the lease ends: lost (see Check) or
// released by Unlock. It closes at the holder's deadline at the latest,
// give or take timer latency; Valid and Check do not depend on it.
func (s *Lease) Lost() <-chan struct{} { return s.lost }

// Valid reports whether the lease is still held: a majority confirmed it
// recently enough that no grantor can have let it go yet. It is false
// from the holder's deadline on, even if the refresher is stuck.
func (s *Lease) Valid() bool { return s.Check() == nil }

// Check returns nil if the lease is still held, otherwise an error
// matching ErrLost that says why. A writer calls it right before it
// commits, and commits only on nil.
func (s *Lease) Check() error {
	s.mu.Lock()
	err := s.err
	due := err == nil && !s.l.now().Before(s.deadline)
	s.mu.Unlock()
	if !due {
		return err
	}
	s.lose(s.expired())
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Unlock releases the lease on every node, in the background: it returns
// at once. Later calls do nothing.
func (s *Lease) Unlock() {
	s.unlockOnce.Do(func() {
		s.mu.Lock()
		ended := s.endLocked(fmt.Errorf("%w: %s of %q was released", ErrLost, s.kind(), s.req.Name))
		s.mu.Unlock()
		if ended {
			s.l.done(s.v)
		}
		s.l.mu.Lock()
		delete(s.l.held, s)
		s.l.mu.Unlock()
		// This node's next writer of the name waits until the release
		// reached the nodes (or timed out), so it is not refused by it.
		s.l.release(s.v, s.req, s.grants, s.releaseLocal)
	})
}

// endLocked marks the lease ended (once) with err, and reports whether
// this call ended it; s.mu is held.
func (s *Lease) endLocked(err error) bool {
	if s.err != nil {
		return false
	}
	s.err = err
	close(s.lost)
	s.stop()
	if s.timer != nil {
		s.timer.Stop()
	}
	return true
}

// lose ends the lease because it could not be kept, and frees what is
// left of it on the nodes, so the next holder need not wait for expiry.
func (s *Lease) lose(err error) {
	s.mu.Lock()
	ended := s.endLocked(err)
	s.mu.Unlock()
	if ended {
		s.l.done(s.v)
		s.l.release(s.v, s.req, s.grants, nil)
	}
}

func (s *Lease) expired() error {
	return fmt.Errorf("%w: %s of %q was not confirmed by a majority of nodes within %v", ErrLost, s.kind(), s.req.Name, s.l.ttl-s.l.margin)
}

// onDeadline runs when the timer fires: the lease is lost unless a
// refresh moved the deadline meanwhile.
func (s *Lease) onDeadline() {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return
	}
	if left := s.deadline.Sub(s.l.now()); left > 0 {
		s.timer.Reset(left)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.lose(s.expired())
}

// extend moves the deadline after a refresh round a majority confirmed.
func (s *Lease) extend(deadline time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil || !deadline.After(s.deadline) {
		return
	}
	s.deadline = deadline
	s.timer.Reset(deadline.Sub(s.l.now()))
}

// refresher renews the lease every RefreshInterval until it ends. A round
// that a majority refuses loses it at once (those nodes have let it go);
// one that is undecided (nodes slow or unreachable) is retried soon, and
// the deadline timer loses the lease if no round succeeds in time.
func (s *Lease) refresher(ctx context.Context) {
	l := s.l
	timer := time.NewTimer(l.refresh)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		sent := l.now()
		t := l.round(ctx, s.v, opRefresh, s.req)
		if ctx.Err() != nil {
			return
		}
		next := l.retryMax
		switch {
		case s.v.held(&t):
			s.extend(sent.Add(l.ttl - l.margin))
			next = max(l.refresh-l.now().Sub(sent), 0)
		case s.v.hopeless(&t):
			s.lose(fmt.Errorf("%w: %s of %q: %d of %d nodes no longer hold it (%s)", ErrLost, s.kind(), s.req.Name, t.no, len(s.v.nodes), t.why()))
			return
		}
		timer.Reset(next)
	}
}

func (s *Lease) kind() string {
	if s.write {
		return "write lock"
	}
	return "read lock"
}
