package dlock

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A node outside the lock nodes (a node added by an expansion) locks on
// a majority of the lock nodes alone: its own table never counts, and
// its locks exclude those of the lock nodes.
func TestOutsideNodeLocksOnTheLockNodes(t *testing.T) {
	c := newCluster(t, 3, Options{TTL: 2 * time.Second, Timeout: 20 * time.Second})
	var peers []Peer
	for _, nd := range c.nodes {
		peers = append(peers, Peer{ID: nd.id, Endpoint: nd.srv.URL})
	}
	own := NewTable(TableOptions{Quiet: -1, MaxTTL: DefaultTTL})
	defer own.Close()
	out := NewLocker("n4", own, peers, Options{Key: testKey, TTL: 2 * time.Second, Timeout: 20 * time.Second, Outside: true,
		Client: &http.Client{Transport: &cutTransport{from: "n4", nw: c.net, base: http.DefaultTransport}}})
	defer out.Close()

	lockers := []*Locker{out, c.nodes[0].locker, c.nodes[1].locker}
	var inside, overlaps, done atomic.Int64
	var wg sync.WaitGroup
	for _, l := range lockers {
		for range 2 {
			wg.Go(func() {
				for range 10 {
					s, err := l.Lock(context.Background(), "bucket\x00key")
					if err != nil {
						t.Error(err)
						return
					}
					if inside.Add(1) != 1 {
						overlaps.Add(1)
					}
					time.Sleep(100 * time.Microsecond)
					inside.Add(-1)
					done.Add(1)
					s.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if overlaps.Load() != 0 {
		t.Fatalf("%d times two holders were inside at once", overlaps.Load())
	}
	if done.Load() != 60 {
		t.Fatalf("%d locks taken, want 60", done.Load())
	}
	// The outside node's own table granted nothing.
	s := lockOrFail(t, out, "other")
	if _, n := own.Len(); n != 0 {
		t.Fatalf("the outside node's own table holds %d leases", n)
	}
	s.Unlock()
	// With two of the three lock nodes cut off, it cannot lock.
	c.net.partition([]string{"n4", c.nodes[0].id}, []string{c.nodes[1].id, c.nodes[2].id})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s, err := out.Lock(ctx, "cut"); err == nil {
		s.Unlock()
		t.Fatal("locked with one of three lock nodes reachable")
	}
}
