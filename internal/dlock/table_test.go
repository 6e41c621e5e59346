package dlock

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestTable(t *testing.T, clk *fakeClock, opts TableOptions) *Table {
	t.Helper()
	if clk != nil {
		opts.Now = clk.Now
	}
	if opts.Quiet == 0 {
		opts.Quiet = -1
	}
	tb := NewTable(opts)
	t.Cleanup(tb.Close)
	return tb
}

func mustGrant(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("not granted: %v", err)
	}
}

func mustRefuse(t *testing.T, err error, want string) {
	t.Helper()
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want a refusal mentioning %q", err, want)
	}
}

func TestTableReadWrite(t *testing.T) {
	clk := newFakeClock()
	tb := newTestTable(t, clk, TableOptions{WriterIntent: -1})
	const ttl = time.Second

	mustGrant(t, tb.Lock("a", "w1", "n1", ttl))
	mustRefuse(t, tb.Lock("a", "w2", "n2", ttl), "write-locked by node n1")
	mustRefuse(t, tb.RLock("a", "r1", "n2", ttl), "write-locked")
	mustGrant(t, tb.Lock("a", "w1", "n1", ttl)) // a retried request renews
	mustGrant(t, tb.Lock("b", "w2", "n2", ttl)) // other names are independent

	if !tb.Unlock("a", "w1") || tb.Unlock("a", "w1") {
		t.Fatal("unlock should find the lease once")
	}
	mustGrant(t, tb.RLock("a", "r1", "n1", ttl))
	mustGrant(t, tb.RLock("a", "r2", "n2", ttl)) // readers share
	mustRefuse(t, tb.Lock("a", "w3", "n3", ttl), "read-locked by 2")
	tb.Unlock("a", "r1")
	mustRefuse(t, tb.Lock("a", "w3", "n3", ttl), "read-locked by 1")
	tb.Unlock("a", "r2")
	mustGrant(t, tb.Lock("a", "w3", "n3", ttl))

	if names, leases := tb.Len(); names != 2 || leases != 2 {
		t.Fatalf("Len = %d names, %d leases; want 2, 2", names, leases)
	}
	tb.Unlock("a", "w3")
	tb.Unlock("b", "w2")
	if names, leases := tb.Len(); names != 0 || leases != 0 {
		t.Fatalf("after unlocking all: Len = %d, %d", names, leases)
	}
}

func TestTableExpiry(t *testing.T) {
	clk := newFakeClock()
	tb := newTestTable(t, clk, TableOptions{})
	const ttl = time.Second

	mustGrant(t, tb.Lock("a", "w1", "n1", ttl))
	clk.Advance(ttl - time.Millisecond)
	if !tb.Refresh("a", "w1", ttl) {
		t.Fatal("refresh of a live lease failed")
	}
	clk.Advance(ttl - time.Millisecond)
	mustRefuse(t, tb.Lock("a", "w2", "n2", ttl), "write-locked") // the refresh extended it
	clk.Advance(time.Millisecond)
	// Expired: the holder learns it on refresh, even before another takes it.
	if tb.Refresh("a", "w1", ttl) {
		t.Fatal("refresh of an expired lease succeeded")
	}
	mustGrant(t, tb.Lock("a", "w2", "n2", ttl))
	if tb.Refresh("a", "w1", ttl) || tb.Unlock("a", "w1") {
		t.Fatal("the expired lease came back")
	}

	// Expired readers do not keep a writer out.
	mustGrant(t, tb.RLock("b", "r1", "n1", ttl))
	clk.Advance(ttl)
	mustGrant(t, tb.Lock("b", "w3", "n1", ttl))

	if tb.Refresh("nope", "x", ttl) {
		t.Fatal("refresh of an unknown lease succeeded")
	}
}

func TestTableSweepBoundsMemory(t *testing.T) {
	clk := newFakeClock()
	tb := newTestTable(t, clk, TableOptions{MaxLeases: 500})
	const ttl = time.Second
	for i := range 500 {
		mustGrant(t, tb.RLock(fmt.Sprint("name", i%250), fmt.Sprint("id", i), "n1", ttl))
	}
	mustRefuse(t, tb.Lock("one more", "x", "n1", ttl), "table full")
	clk.Advance(ttl)
	// Expired leases are swept when the table is full and asked again...
	mustGrant(t, tb.Lock("one more", "x", "n1", ttl))
	if names, leases := tb.Len(); names != 1 || leases != 1 {
		t.Fatalf("Len = %d, %d; want 1, 1", names, leases)
	}
	// ... and by Sweep.
	clk.Advance(ttl)
	if n := tb.Sweep(); n != 1 {
		t.Fatalf("Sweep dropped %d, want 1", n)
	}
	if names, leases := tb.Len(); names != 0 || leases != 0 {
		t.Fatalf("Len = %d, %d after sweep", names, leases)
	}
}

func TestTableBackgroundSweep(t *testing.T) {
	tb := newTestTable(t, nil, TableOptions{MaxTTL: 50 * time.Millisecond, SweepInterval: 20 * time.Millisecond})
	for i := range 1000 {
		mustGrant(t, tb.Lock(fmt.Sprint("name", i), "id", "n1", 50*time.Millisecond))
	}
	waitFor(t, time.Second, "the sweeper to drop expired leases", func() bool {
		names, leases := tb.Len()
		return names == 0 && leases == 0
	})
}

func TestTableWriterIntent(t *testing.T) {
	clk := newFakeClock()
	tb := newTestTable(t, clk, TableOptions{WriterIntent: 100 * time.Millisecond})
	const ttl = time.Second
	mustGrant(t, tb.RLock("a", "r1", "n1", ttl))
	mustRefuse(t, tb.Lock("a", "w1", "n2", ttl), "read-locked")
	// A writer is waiting: new readers hold back so it is not starved.
	mustRefuse(t, tb.RLock("a", "r2", "n3", ttl), "a writer is waiting")
	tb.Unlock("a", "r1")
	mustGrant(t, tb.Lock("a", "w1", "n2", ttl))
	tb.Unlock("a", "w1")
	mustGrant(t, tb.RLock("a", "r2", "n3", ttl)) // the grant cleared the intent

	// A writer that gave up stops holding readers back after WriterIntent.
	mustRefuse(t, tb.Lock("a", "w2", "n2", ttl), "read-locked")
	mustRefuse(t, tb.RLock("a", "r3", "n3", ttl), "a writer is waiting")
	clk.Advance(100 * time.Millisecond)
	mustGrant(t, tb.RLock("a", "r3", "n3", ttl))
	tb.Unlock("a", "r2")
	tb.Unlock("a", "r3")
	if names, _ := tb.Len(); names != 0 {
		t.Fatalf("%d names left", names)
	}
}

func TestTableQuietAfterStart(t *testing.T) {
	clk := newFakeClock()
	tb := NewTable(TableOptions{MaxTTL: time.Second, Now: clk.Now}) // Quiet defaults to MaxTTL
	defer tb.Close()
	mustRefuse(t, tb.Lock("a", "w1", "n1", time.Second), "started recently")
	mustRefuse(t, tb.RLock("a", "r1", "n1", time.Second), "started recently")
	// A Locker without peers skips the pause: its holders died with the table.
	solo := NewLocker("n1", tb, nil, Options{TTL: time.Second, Now: clk.Now})
	defer solo.Close()
	s, err := solo.Lock(t.Context(), "a")
	if err != nil {
		t.Fatalf("solo lock during the quiet period: %v", err)
	}
	s.Unlock()
	clk.Advance(time.Second)
	mustGrant(t, tb.Lock("b", "w1", "n1", time.Second))
}

func TestTableInvalid(t *testing.T) {
	tb := newTestTable(t, nil, TableOptions{MaxTTL: time.Second})
	for _, c := range []struct {
		name, id, owner string
		ttl             time.Duration
	}{
		{"", "id", "n", time.Second},
		{"a", "", "n", time.Second},
		{"a", "id", "n", 0},
		{"a", "id", "n", 2 * time.Second},
		{strings.Repeat("x", maxNameLen+1), "id", "n", time.Second},
		{"a", strings.Repeat("x", maxIDLen+1), "n", time.Second},
		{"a", "id", strings.Repeat("x", maxOwnerLen+1), time.Second},
	} {
		err := tb.Lock(c.name, c.id, c.owner, c.ttl)
		if err == nil || errors.Is(err, ErrRefused) {
			t.Errorf("Lock(%.10q, %.10q, %.10q, %v) = %v, want an invalid-request error", c.name, c.id, c.owner, c.ttl, err)
		}
	}
	if names, _ := tb.Len(); names != 0 {
		t.Fatalf("invalid requests left %d names", names)
	}
}

func TestLeaseValidityDeadline(t *testing.T) {
	// The holder's clock is a fake one that only the test moves, and the
	// TTL is an hour, so the refresher never runs: this is a holder whose
	// refresher is stuck. Its lease must turn invalid at sent+TTL-Margin,
	// while the grantor (same clock) still holds it until sent+TTL.
	clk := newFakeClock()
	tb := newTestTable(t, clk, TableOptions{MaxTTL: time.Hour})
	l := NewLocker("n1", tb, nil, Options{TTL: time.Hour, Now: clk.Now})
	defer l.Close()
	s, err := l.Lock(t.Context(), "obj")
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(54*time.Minute - time.Nanosecond)
	if err := s.Check(); err != nil || !s.Valid() {
		t.Fatalf("valid lease reported lost: %v", err)
	}
	clk.Advance(time.Nanosecond)
	if s.Valid() || !errors.Is(s.Check(), ErrLost) {
		t.Fatalf("lease still valid at its deadline: %v", s.Check())
	}
	select {
	case <-s.Lost():
	default:
		t.Fatal("Lost not closed once Check saw the deadline")
	}
	// The lost lease freed its grant, so it cannot block the next holder
	// any longer than TTL; with the release it does not block at all.
	waitFor(t, time.Second, "the lost lease's release", func() bool { _, n := tb.Len(); return n == 0 })
	s.Unlock()
	s.Unlock() // twice is harmless
	if !errors.Is(s.Check(), ErrLost) {
		t.Fatal("Check after Unlock should report ErrLost")
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	if o.TTL != DefaultTTL || o.Margin != DefaultTTL/10 || o.RefreshInterval != DefaultTTL/3 || o.CallTimeout != 2*time.Second || o.Timeout != 30*time.Second {
		t.Fatalf("defaults: %+v", o)
	}
	o = Options{TTL: 300 * time.Millisecond, RefreshInterval: time.Second, CallTimeout: time.Second}.withDefaults()
	if o.Margin != 30*time.Millisecond || o.RefreshInterval != 135*time.Millisecond || o.CallTimeout != 135*time.Millisecond {
		t.Fatalf("caps: %+v", o)
	}
}

func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
