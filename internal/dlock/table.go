package dlock

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/wallclock"
)

// DefaultTTL is how long a lease lives without a refresh unless
// Options.TTL says otherwise; it matches the engine's LockTimeout.
const DefaultTTL = 30 * time.Second

// ErrRefused is returned (wrapped, with the reason) by Table.Lock and
// Table.RLock when the node does not grant the lease: the name is held,
// the node has just started, or its table is full.
var ErrRefused = errors.New("lease refused")

// errInvalid marks a request no node could grant (bad name, id or TTL),
// as opposed to a refusal that depends on the table's state.
var errInvalid = errors.New("invalid lease request")

// Limits on what a request may carry, so one request cannot make a
// table hold much memory. Names are bucket + NUL + key (at most
// 63+1+1024 bytes in S3 terms); ids are made by NewLocker.
const (
	maxNameLen  = 4096
	maxIDLen    = 128
	maxOwnerLen = 256
)

// TableOptions configures a Table. The zero value is ready to use.
type TableOptions struct {
	// MaxTTL is the longest lease the table grants; longer requests are
	// refused as invalid. Zero means DefaultTTL.
	MaxTTL time.Duration
	// Quiet is how long a new table refuses every grant, so that leases
	// the previous run of this node granted have expired at their holders
	// before it grants their names again (see the package doc). Zero
	// means MaxTTL; negative means no pause (tests, or a node that knows
	// no other node held a lease from it). A Locker without peers skips
	// the pause on its own table.
	Quiet time.Duration
	// MaxLeases bounds the number of leases held (expired ones included
	// until swept). Zero means 1<<20.
	MaxLeases int
	// SweepInterval is how often expired leases are dropped in the
	// background. Zero means MaxTTL/2.
	SweepInterval time.Duration
	// WriterIntent is how long a writer refused because of live readers
	// keeps new readers of the name away on this node, so a steady flow
	// of readers cannot starve it. It should exceed the lockers' retry
	// backoff (at most 100 ms). Zero means 1 s; negative disables it.
	WriterIntent time.Duration
	// Now is the table's clock; zero means time.Now. Expiry is measured
	// by the difference of its readings, so with time.Now it is the
	// monotonic clock.
	Now func() time.Time
}

// Table is one node's lock table: for each name either one writer lease
// or a set of reader leases, each with the id its holder chose, the
// holder's node (owner) and an expiry measured on this node's clock from
// the time the grant or refresh arrived. It is safe for concurrent use.
type Table struct {
	now          func() time.Time
	maxTTL       time.Duration
	maxLeases    int
	intent       time.Duration
	quietUntil   time.Time
	sweepEvery   time.Duration
	stop         chan struct{}
	stopOnce     sync.Once
	sweeperDone  chan struct{}
	mu           sync.Mutex
	names        map[string]*entry
	leases       int       // grants held in names, expired ones included
	lastFullScan time.Time // when a full table last swept itself
}

type entry struct {
	writer  *grant
	readers map[string]*grant // by lease id; nil when none
	// intentUntil: a writer is waiting for the readers to leave; new
	// readers are refused until then.
	intentUntil time.Time
}

type grant struct {
	id      string
	owner   string
	expires time.Time
}

// NewTable returns an empty table and starts its background sweep;
// Close stops it.
func NewTable(opts TableOptions) *Table {
	t := &Table{
		now:         opts.Now,
		maxTTL:      opts.MaxTTL,
		maxLeases:   opts.MaxLeases,
		intent:      opts.WriterIntent,
		sweepEvery:  opts.SweepInterval,
		stop:        make(chan struct{}),
		sweeperDone: make(chan struct{}),
		names:       make(map[string]*entry),
	}
	if t.now == nil {
		t.now = wallclock.Now
	}
	if t.maxTTL <= 0 {
		t.maxTTL = DefaultTTL
	}
	if t.maxLeases <= 0 {
		t.maxLeases = 1 << 20
	}
	switch {
	case t.intent == 0:
		t.intent = time.Second
	case t.intent < 0:
		t.intent = 0
	}
	if t.sweepEvery <= 0 {
		t.sweepEvery = t.maxTTL / 2
	}
	start := t.now()
	switch quiet := opts.Quiet; {
	case quiet == 0:
		t.quietUntil = start.Add(t.maxTTL)
	case quiet > 0:
		t.quietUntil = start.Add(quiet)
	}
	go t.sweeper()
	return t
}

// Close stops the background sweep. The table still answers calls.
func (t *Table) Close() {
	t.stopOnce.Do(func() { close(t.stop) })
	<-t.sweeperDone
}

func (t *Table) sweeper() {
	defer close(t.sweeperDone)
	tick := time.NewTicker(t.sweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
			t.Sweep()
		}
	}
}

// Lock grants id a writer lease on name for ttl if the name has no live
// lease (expired ones do not count). Asking again with the id that holds
// it renews it, so a retried request is harmless. A refusal matches
// ErrRefused.
func (t *Table) Lock(name, id, owner string, ttl time.Duration) error {
	return t.grant(name, id, owner, ttl, true, false)
}

// RLock grants id a reader lease on name for ttl if the name has no live
// writer (and no writer is waiting for readers to leave, see
// TableOptions.WriterIntent). A refusal matches ErrRefused.
func (t *Table) RLock(name, id, owner string, ttl time.Duration) error {
	return t.grant(name, id, owner, ttl, false, false)
}

func (t *Table) grant(name, id, owner string, ttl time.Duration, write, skipQuiet bool) error {
	if err := t.validate(name, id, owner, ttl); err != nil {
		return err
	}
	now := t.now()
	if !skipQuiet && now.Before(t.quietUntil) {
		return fmt.Errorf("%w: node started recently; it grants again in %v", ErrRefused, t.quietUntil.Sub(now).Round(time.Millisecond))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.names[name]
	if e != nil {
		t.prune(e, now)
		if g := e.held(id); g != nil && (g == e.writer) == write {
			g.expires = now.Add(ttl)
			return nil
		}
		if e.writer != nil {
			return fmt.Errorf("%w: write-locked by %s", ErrRefused, ownerName(e.writer.owner))
		}
		if write && len(e.readers) > 0 {
			if t.intent > 0 {
				e.intentUntil = now.Add(t.intent)
			}
			return fmt.Errorf("%w: read-locked by %d holder(s), e.g. %s", ErrRefused, len(e.readers), ownerName(anyReader(e).owner))
		}
		if !write && now.Before(e.intentUntil) {
			return fmt.Errorf("%w: a writer is waiting", ErrRefused)
		}
	}
	if t.leases >= t.maxLeases {
		// Expired leases count until swept: sweep now, but at most once a
		// second, so a full table does not scan itself on every request.
		if now.Sub(t.lastFullScan) >= time.Second {
			t.lastFullScan = now
			t.sweepLocked(now)
		}
		if t.leases >= t.maxLeases {
			if e != nil {
				t.dropIfEmpty(name, e, now)
			}
			return fmt.Errorf("%w: lock table full (%d leases)", ErrRefused, t.maxLeases)
		}
	}
	if e == nil {
		e = &entry{}
		t.names[name] = e
	}
	g := &grant{id: id, owner: owner, expires: now.Add(ttl)}
	if write {
		e.writer = g
		e.intentUntil = time.Time{}
	} else {
		if e.readers == nil {
			e.readers = make(map[string]*grant, 1)
		}
		e.readers[id] = g
	}
	t.leases++
	return nil
}

// Refresh extends the lease id on name to ttl from now. It reports false
// when the table does not hold that lease (never granted, released, or
// expired even if not yet swept): its holder has lost it here.
func (t *Table) Refresh(name, id string, ttl time.Duration) bool {
	if t.validate(name, id, "", ttl) != nil {
		return false
	}
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.names[name]
	if e == nil {
		return false
	}
	t.prune(e, now)
	g := e.held(id)
	if g == nil {
		t.dropIfEmpty(name, e, now)
		return false
	}
	g.expires = now.Add(ttl)
	return true
}

// Unlock releases the lease id on name and reports whether it was held
// (and live).
func (t *Table) Unlock(name, id string) bool {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.names[name]
	if e == nil {
		return false
	}
	t.prune(e, now)
	found := false
	if e.writer != nil && e.writer.id == id {
		e.writer = nil
		found = true
	} else if _, ok := e.readers[id]; ok {
		delete(e.readers, id)
		found = true
	}
	if found {
		t.leases--
	}
	t.dropIfEmpty(name, e, now)
	return found
}

// Sweep drops every expired lease and every name left without leases,
// and returns how many leases it dropped. The table sweeps itself every
// SweepInterval; calling it is only needed to free memory sooner.
func (t *Table) Sweep() int {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sweepLocked(now)
}

func (t *Table) sweepLocked(now time.Time) int {
	before := t.leases
	for name, e := range t.names {
		t.prune(e, now)
		t.dropIfEmpty(name, e, now)
	}
	return before - t.leases
}

// Len returns the number of names the table holds state for and the
// number of leases among them, expired ones included until swept.
func (t *Table) Len() (names, leases int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.names), t.leases
}

// prune drops e's expired grants.
func (t *Table) prune(e *entry, now time.Time) {
	if e.writer != nil && !now.Before(e.writer.expires) {
		e.writer = nil
		t.leases--
	}
	for id, g := range e.readers {
		if !now.Before(g.expires) {
			delete(e.readers, id)
			t.leases--
		}
	}
	if len(e.readers) == 0 {
		e.readers = nil
	}
}

// dropIfEmpty forgets name once it has no lease and no waiting writer.
func (t *Table) dropIfEmpty(name string, e *entry, now time.Time) {
	if e.writer == nil && len(e.readers) == 0 && !now.Before(e.intentUntil) {
		delete(t.names, name)
	}
}

func (t *Table) validate(name, id, owner string, ttl time.Duration) error {
	switch {
	case name == "" || len(name) > maxNameLen:
		return fmt.Errorf("%w: name of %d bytes (1 to %d)", errInvalid, len(name), maxNameLen)
	case id == "" || len(id) > maxIDLen:
		return fmt.Errorf("%w: lease id of %d bytes (1 to %d)", errInvalid, len(id), maxIDLen)
	case len(owner) > maxOwnerLen:
		return fmt.Errorf("%w: owner of %d bytes (at most %d)", errInvalid, len(owner), maxOwnerLen)
	case ttl <= 0 || ttl > t.maxTTL:
		return fmt.Errorf("%w: ttl %v (this node grants up to %v)", errInvalid, ttl, t.maxTTL)
	}
	return nil
}

// held returns e's live grant with id, writer or reader.
func (e *entry) held(id string) *grant {
	if e.writer != nil && e.writer.id == id {
		return e.writer
	}
	return e.readers[id]
}

func anyReader(e *entry) *grant {
	for _, g := range e.readers {
		return g
	}
	return nil
}

func ownerName(owner string) string {
	if owner == "" {
		return "an unnamed holder"
	}
	return "node " + owner
}
