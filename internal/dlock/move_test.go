package dlock

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Epochs of a move of the lock nodes from L to L' (cluster.PoolList).
const (
	epochOld   = 1
	epochJoint = 2
	epochNew   = 3
)

// moveCluster is 5 nodes: L = n1 n2 n3, L' = n3 n4 n5 (n3 in both, as a
// node of a pool that stays when its lock nodes also held another's).
type moveCluster struct {
	c        *cluster
	old, new []Peer
}

func newMoveCluster(t *testing.T) *moveCluster {
	c := newCluster(t, 5, Options{TTL: 2 * time.Second, Timeout: 20 * time.Second})
	var p []Peer
	for _, nd := range c.nodes {
		p = append(p, Peer{ID: nd.id, Endpoint: nd.srv.URL})
	}
	return &moveCluster{c: c, old: p[:3], new: p[2:]}
}

// locker is node i's locker (0-based) in phase epoch, with opts.
func (m *moveCluster) locker(t *testing.T, i, epoch int, opts Options) *Locker {
	nd := m.c.nodes[i]
	opts.Key = testKey
	opts.Client = &http.Client{Transport: &cutTransport{from: nd.id, nw: m.c.net, base: http.DefaultTransport}}
	if opts.TTL == 0 {
		opts.TTL = 2 * time.Second
	}
	opts.Epoch = 0
	l := NewLocker(nd.id, nd.table, nil, opts) // no lock node until SetNodes
	t.Cleanup(l.Close)
	m.set(t, l, epoch)
	return l
}

func (m *moveCluster) set(t *testing.T, l *Locker, epoch int) {
	t.Helper()
	var err error
	switch epoch {
	case epochOld:
		err = l.SetNodes(epoch, m.old)
	case epochJoint:
		err = l.SetNodes(epoch, m.old, m.new)
	case epochNew:
		err = l.SetNodes(epoch, m.new)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func tryLock(l *Locker, name string) (*Lease, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	return l.Lock(ctx, name)
}

// Lockers in adjacent phases (old and joint, joint and new) never both
// hold one name, whichever takes it first; a node in both sets (n3)
// locks in the joint phase without waiting for itself.
func TestMoveAdjacentPhasesExclude(t *testing.T) {
	m := newMoveCluster(t)
	for _, pair := range [][2]int{{epochOld, epochJoint}, {epochJoint, epochNew}} {
		for _, first := range []int{0, 1} {
			// Node 1 is in L only, node 3 in both, node 5 in L' only.
			a := m.locker(t, 0, pair[0], Options{})
			b := m.locker(t, 2, pair[1], Options{})
			if pair[0] == epochJoint {
				a, b = m.locker(t, 2, pair[0], Options{}), m.locker(t, 4, pair[1], Options{})
			}
			holder, other := a, b
			if first == 1 {
				holder, other = b, a
			}
			name := "bucket\x00key"
			s := lockOrFail(t, holder, name)
			if s2, err := tryLock(other, name); err == nil {
				s2.Unlock()
				t.Fatalf("epochs %v: both lockers hold %q", pair, name)
			} else if !errors.Is(err, ErrTimeout) {
				t.Fatalf("epochs %v: %v", pair, err)
			}
			// Readers exclude writers across the phases too.
			rctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
			r, err := other.RLock(rctx, name)
			cancel()
			if err == nil {
				r.Unlock()
				t.Fatalf("epochs %v: a reader holds %q beside a writer", pair, name)
			} else if !errors.Is(err, ErrTimeout) {
				t.Fatalf("epochs %v: read lock: %v", pair, err)
			}
			s.Unlock()
			// Released: the other takes it.
			s2 := lockOrFail(t, other, name)
			s2.Unlock()
		}
	}
}

// Why the joint phase is needed: a locker on L alone and one on L' alone
// can both hold one name (they share at most n3, and each needs only 2
// of its 3). A move that skipped joint would let this happen.
func TestMoveSkippingJointLetsTwoHold(t *testing.T) {
	m := newMoveCluster(t)
	a := m.locker(t, 0, epochOld, Options{})
	c := m.locker(t, 4, epochNew, Options{})
	// n3 is taken by neither: a holds n1+n2, c holds n4+n5.
	m.c.net.partition([]string{"n1", "n2"}, []string{"n3"})
	m.c.net.partition([]string{"n4", "n5"}, []string{"n3"})
	s1 := lockOrFail(t, a, "k")
	defer s1.Unlock()
	s2, err := tryLock(c, "k")
	if err != nil {
		t.Fatalf("an old and a new locker should be able to both hold (that is what joint prevents): %v", err)
	}
	defer s2.Unlock()
	// A joint locker in the same spot is refused: L's majority is taken.
	b := m.locker(t, 3, epochJoint, Options{})
	if s3, err := tryLock(b, "k"); err == nil {
		s3.Unlock()
		t.Fatal("a joint locker took a name held on L")
	}
}

// A whole move under load: every node locks one name in a loop while its
// locker switches phase at a moment of its own; the mover records the
// next phase only when every locker reports the current epoch with no
// lock of an earlier one (Phase), as the consensus leader does. No two
// holders are ever inside at once.
func TestMoveUnderLoad(t *testing.T) {
	m := newMoveCluster(t)
	var lockers []*Locker
	for i := range m.c.nodes {
		lockers = append(lockers, m.locker(t, i, epochOld, Options{Timeout: 20 * time.Second}))
	}
	var inside, overlaps, done atomic.Int64
	stops := make([]chan struct{}, len(lockers))
	var wg, left sync.WaitGroup
	for i, l := range lockers {
		stops[i] = make(chan struct{})
		stop := stops[i]
		wg := &wg
		if i < 2 {
			wg = &left // n1 and n2 leave the cluster after the move
		}
		for range 2 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					s, err := l.Lock(context.Background(), "bucket\x00key")
					if err != nil {
						t.Error(err)
						return
					}
					if inside.Add(1) != 1 {
						overlaps.Add(1)
					}
					// Some holders keep the lock a while, across a switch.
					time.Sleep(time.Duration(rand.N(3000)) * time.Microsecond)
					if s.Check() == nil && inside.Load() != 1 {
						overlaps.Add(1)
					}
					inside.Add(-1)
					done.Add(1)
					s.Unlock()
				}
			})
		}
	}
	// Each phase reaches the nodes one by one, in random order.
	advance := func(epoch int) {
		for _, i := range rand.Perm(len(lockers)) {
			time.Sleep(time.Duration(rand.N(30)) * time.Millisecond)
			m.set(t, lockers[i], epoch)
		}
		// The leader's wait: every locker on epoch, nothing older.
		for {
			ready := true
			for _, l := range lockers {
				if e, older := l.Phase(); e != epoch || older != 0 {
					ready = false
				}
			}
			if ready {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// Locks go on in every phase: each step waits for 5 more.
	progress := func(what string) {
		want := done.Load() + 5
		for deadline := time.Now().Add(60 * time.Second); done.Load() < want; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no locks taken %s", what)
			}
		}
	}
	progress("before the move")
	advance(epochJoint)
	progress("in the joint phase")
	advance(epochNew)
	progress("in the new phase")
	// L's nodes that left (n1, n2) stop: locks go on, on L'.
	close(stops[0])
	close(stops[1])
	left.Wait()
	m.c.net.partition([]string{"n1", "n2"}, []string{"n3", "n4", "n5"})
	progress("after n1 and n2 left")
	for _, c := range stops[2:] {
		close(c)
	}
	wg.Wait()
	if overlaps.Load() != 0 {
		t.Fatalf("%d times two holders were inside at once", overlaps.Load())
	}
	t.Logf("%d locks taken across the move", done.Load())
}

// A lease taken under one epoch is counted as older once the locker
// moves on, keeps its nodes (it is still refreshed and excludes others)
// and stops counting when released; a change not newer is ignored.
func TestMovePhaseCountsOlderLeases(t *testing.T) {
	m := newMoveCluster(t)
	// A long TTL: nothing here waits for expiry, and a loaded machine
	// must not lose the lease by slowness.
	l := m.locker(t, 0, epochOld, Options{TTL: 10 * time.Second})
	s := lockOrFail(t, l, "held")
	m.set(t, l, epochJoint)
	if e, older := l.Phase(); e != epochJoint || older != 1 {
		t.Fatalf("phase %d, older %d; want %d, 1", e, older, epochJoint)
	}
	// Still held on L: a joint locker elsewhere cannot take it.
	if err := s.Check(); err != nil {
		t.Fatalf("the old lease was not kept: %v", err)
	}
	other := m.locker(t, 2, epochJoint, Options{})
	if s2, err := tryLock(other, "held"); err == nil {
		s2.Unlock()
		t.Fatal("a joint locker took a name held under old")
	}
	// Going back is ignored.
	if err := l.SetNodes(epochOld, m.old); err != nil {
		t.Fatal(err)
	}
	if e, _ := l.Phase(); e != epochJoint {
		t.Fatalf("went back to epoch %d", e)
	}
	s.Unlock()
	if e, older := l.Phase(); e != epochJoint || older != 0 {
		t.Fatalf("after unlock: phase %d, older %d", e, older)
	}
	// A lock taken now is of the current epoch.
	s3 := lockOrFail(t, l, "fresh")
	if _, older := l.Phase(); older != 0 {
		t.Fatalf("a lock of the current epoch counted as older: %d", older)
	}
	s3.Unlock()
	// Bad sets are refused.
	if err := l.SetNodes(9); err == nil {
		t.Fatal("no set accepted")
	}
	if err := l.SetNodes(9, m.old, nil); err == nil {
		t.Fatal("an empty set accepted")
	}
}
