package dlock

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/peerauth"
	"github.com/shardstore/shardstore/internal/wallclock"
)

// Errors of a Locker and its leases; match them with errors.Is.
var (
	// ErrTimeout: the lock could not be taken before Options.Timeout or
	// the caller's context ended (the error then also matches ctx.Err()).
	// The engine answers 503 SlowDown.
	ErrTimeout = errors.New("timed out waiting for the cluster lock")
	// ErrNoQuorum: fewer than a majority of the nodes answered at all
	// (granted or refused) for Options.UnreachableWait: this node is cut
	// off from the majority, and waiting longer would only hold the
	// client. The engine answers 503 ServiceUnavailable.
	ErrNoQuorum = errors.New("cannot reach a majority of the cluster's nodes")
	// ErrLost: the lease is no longer held (not refreshed on a majority
	// in time, or released); its holder must not commit.
	ErrLost = errors.New("cluster lock lost")
	// ErrClosed: the Locker was closed.
	ErrClosed = errors.New("locker closed")
)

// Peer is another node of the cluster, reachable over HTTP.
type Peer struct {
	// ID names the node in errors and as the owner of its leases.
	ID string
	// Endpoint is the base URL its Server is mounted under, e.g.
	// "http://node2:9000" (PathPrefix is appended); "node2:9000" means
	// http.
	Endpoint string
}

// Options configures a Locker. Only Key is needed in a cluster; the rest
// has defaults for production and is there so tests can run fast.
type Options struct {
	// Key signs every request to a peer.
	Key peerauth.Key
	// Outside: this node's own table is not one of the lock nodes; the
	// locks are held on a majority of the peers alone. A node added to a
	// running cluster (an expansion) locks this way, so that every
	// lock, whichever node takes it, needs a majority of the same nodes.
	Outside bool
	// TTL is how long each grantor keeps a lease after the last request
	// it received for it. Zero means DefaultTTL; the peers must grant it
	// (TableOptions.MaxTTL).
	TTL time.Duration
	// Margin is taken off the holder's view of a lease, so the holder
	// stops trusting it before any grantor lets it go even if the clocks
	// run at different rates. Zero means TTL/10.
	Margin time.Duration
	// RefreshInterval is how often a held lease is renewed. Zero means
	// TTL/3; it is capped at (TTL-Margin)/2 so a failed refresh can be
	// retried before the lease runs out.
	RefreshInterval time.Duration
	// CallTimeout bounds one request to one node. Zero means 2 s; it is
	// capped at (TTL-Margin)/2.
	CallTimeout time.Duration
	// Timeout bounds the wait in Lock and RLock. Zero means 30 s.
	Timeout time.Duration
	// UnreachableWait is how long Lock and RLock go on while fewer than
	// a majority of the nodes answer at all (ErrNoQuorum after it). Zero
	// means 2 CallTimeouts + 1 s: a node restarting or a leader
	// election passes; a partition does not.
	UnreachableWait time.Duration
	// Epoch numbers the lock nodes given to NewLocker (SetNodes takes
	// only later ones); zero for a cluster whose lock nodes never moved.
	Epoch int
	// Client sends the requests to peers; nil means a client of the
	// package's own.
	Client *http.Client
	// Now is the clock the holder measures its leases with; nil means
	// time.Now (whose differences use the monotonic clock).
	Now func() time.Time
}

// Locker takes locks on a majority of the cluster's nodes. It is safe
// for concurrent use.
type Locker struct {
	self        string
	own         *Table // this node's table (validates requests when it is not a lock node)
	key         peerauth.Key
	client      *http.Client
	ttl         time.Duration
	margin      time.Duration
	refresh     time.Duration
	callTimeout time.Duration
	timeout     time.Duration
	unreachable time.Duration
	retryMax    time.Duration
	now         func() time.Time
	writers     writerQueue

	mu      sync.Mutex
	cur     *view              // the lock nodes asked now (SetNodes)
	views   map[*view]struct{} // cur, and earlier views still in use
	remotes map[string]node    // remote nodes by endpoint, shared by views
	held    map[*Lease]struct{}
	closed  bool
	running int        // background goroutines (refreshers, releases)
	idle    *sync.Cond // on mu: running dropped to 0
}

// NewLocker returns the locker of node self, whose own table is local
// and whose peers are the other nodes (self, if listed, and duplicates
// are skipped). With no peers it locks local alone. Its lock nodes are
// self and the peers (the peers alone with Options.Outside), numbered
// Options.Epoch; SetNodes changes them.
func NewLocker(self string, local *Table, peers []Peer, opts Options) *Locker {
	o := opts.withDefaults()
	l := &Locker{
		self:        self,
		own:         local,
		key:         o.Key,
		client:      o.Client,
		ttl:         o.TTL,
		margin:      o.Margin,
		refresh:     o.RefreshInterval,
		callTimeout: o.CallTimeout,
		timeout:     o.Timeout,
		unreachable: o.UnreachableWait,
		retryMax:    min(max(o.TTL/10, 10*time.Millisecond), 100*time.Millisecond),
		now:         o.Now,
		writers:     writerQueue{m: make(map[string]*slot)},
		held:        make(map[*Lease]struct{}),
		views:       make(map[*view]struct{}),
		remotes:     make(map[string]node),
	}
	l.idle = sync.NewCond(&l.mu)
	var set []Peer
	if !o.Outside {
		set = append(set, Peer{ID: self})
	}
	for _, p := range peers {
		if p.ID != "" && p.ID == self {
			continue
		}
		set = append(set, p)
	}
	solo := !o.Outside && len(set) == 1
	l.cur = l.makeView(o.Epoch, [][]Peer{set}, solo)
	l.views[l.cur] = struct{}{}
	return l
}

func (o Options) withDefaults() Options {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.Margin <= 0 || o.Margin >= o.TTL {
		o.Margin = o.TTL / 10
	}
	window := (o.TTL - o.Margin) / 2
	if o.RefreshInterval <= 0 {
		o.RefreshInterval = o.TTL / 3
	}
	o.RefreshInterval = min(o.RefreshInterval, window)
	if o.CallTimeout <= 0 {
		o.CallTimeout = 2 * time.Second
	}
	o.CallTimeout = min(o.CallTimeout, window)
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.UnreachableWait <= 0 {
		o.UnreachableWait = 2*o.CallTimeout + time.Second
	}
	if o.Client == nil {
		o.Client = defaultClient()
	}
	if o.Now == nil {
		o.Now = wallclock.Now
	}
	return o
}

// Lock takes name exclusively: it holds once a majority of the nodes
// granted a writer lease, i.e. a majority has no other live lease on
// name. It waits until ctx ends or Options.Timeout passes (ErrTimeout).
func (l *Locker) Lock(ctx context.Context, name string) (*Lease, error) {
	return l.acquire(ctx, name, true)
}

// RLock takes name shared: it holds once a majority of the nodes granted
// a reader lease, i.e. a majority has no live writer on name. It waits
// like Lock.
func (l *Locker) RLock(ctx context.Context, name string) (*Lease, error) {
	return l.acquire(ctx, name, false)
}

// Close releases every lease still held (their Lost channels close) and
// makes later calls fail with ErrClosed. It waits for the releases and
// the calls still in flight, at most about two CallTimeouts.
func (l *Locker) Close() {
	l.mu.Lock()
	l.closed = true
	leases := make([]*Lease, 0, len(l.held))
	for s := range l.held {
		leases = append(leases, s)
	}
	l.mu.Unlock()
	for _, s := range leases {
		s.Unlock()
	}
	l.mu.Lock()
	for l.running > 0 {
		l.idle.Wait()
	}
	l.mu.Unlock()
}

// spawn runs f in the background, counted so that Close can wait for it.
func (l *Locker) spawn(f func()) {
	l.mu.Lock()
	l.running++
	l.mu.Unlock()
	go func() {
		defer func() {
			l.mu.Lock()
			if l.running--; l.running == 0 {
				l.idle.Broadcast()
			}
			l.mu.Unlock()
		}()
		f()
	}()
}

func (l *Locker) acquire(ctx context.Context, name string, write bool) (*Lease, error) {
	op, kind := opRLock, "read lock"
	if write {
		op, kind = opLock, "write lock"
	}
	if l.isClosed() {
		return nil, fmt.Errorf("%s of %q: %w", kind, name, ErrClosed)
	}
	actx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	start := time.Now()

	// Writers of one name on this node queue here first, so they do not
	// compete over the network (and each waits for the release of the
	// one before it to reach the nodes, instead of being refused by it).
	releaseLocal := func() {}
	if write {
		var err error
		if releaseLocal, err = l.writers.acquire(actx, name); err != nil {
			return nil, l.waitError(ctx, ErrTimeout, kind, name, start, 0, nil, nil)
		}
	}

	delay := l.retryMax / 16
	var last *tally
	var heard []string   // each node's latest refusal or failure (last's view)
	var cutOff time.Time // since when rounds reach no majority at all
	for attempt := 1; ; attempt++ {
		// Each attempt asks the lock nodes of the moment (SetNodes); the
		// view stays in use until the attempt fails or its lease ends.
		v := l.use()
		if last == nil || last.v != v {
			heard = make([]string, len(v.nodes))
		}
		// A fresh id per attempt: a late release of an earlier attempt
		// must never remove a grant of this one.
		req := request{Name: name, ID: rand.Text(), Owner: l.self, TTL: int64(l.ttl)}
		sent := l.now()
		if !v.local {
			// No local call tells an invalid request: the own table
			// judges it as the lock nodes would.
			if err := l.own.validate(req.Name, req.ID, req.Owner, l.ttl); err != nil {
				l.done(v)
				releaseLocal()
				return nil, fmt.Errorf("%s of %q: %w", kind, name, err)
			}
		}
		t := l.round(actx, v, op, req)
		if v.local {
			if err := t.calls.err[0]; errors.Is(err, errInvalid) {
				// The local table says no node could grant it: do not wait.
				l.release(v, req, t.calls, releaseLocal)
				l.done(v)
				return nil, fmt.Errorf("%s of %q: %w", kind, name, err)
			}
		}
		if v.held(&t) {
			// The grantors keep it until at least sent+TTL on their
			// clocks; the holder trusts it until sent+TTL-Margin on its.
			deadline := sent.Add(l.ttl - l.margin)
			if l.now().Before(deadline) {
				if s := l.hold(v, write, req, t.calls, deadline, releaseLocal); s != nil {
					return s, nil // v stays in use until the lease ends
				}
				l.release(v, req, t.calls, releaseLocal)
				l.done(v)
				return nil, fmt.Errorf("%s of %q: %w", kind, name, ErrClosed)
			}
		}
		// No majority (or it came too late to be of use): give back what
		// was granted, or may have been, at once.
		l.release(v, req, t.calls, nil)
		l.done(v)
		last = &t
		for i, a := range t.answer {
			if a != "" {
				heard[i] = a
			}
		}
		// Refusals are answers: a held lock is worth waiting for. Only
		// when too few nodes answer at all is this node cut off.
		if v.reached(&t) {
			cutOff = time.Time{}
		} else if cutOff.IsZero() {
			cutOff = time.Now()
		} else if time.Since(cutOff) >= l.unreachable {
			releaseLocal()
			return nil, l.waitError(ctx, ErrNoQuorum, kind, name, start, attempt, last, heard)
		}
		sleep := delay/2 + mrand.N(delay/2+1)
		delay = min(2*delay, l.retryMax)
		select {
		case <-actx.Done():
		case <-time.After(sleep):
		}
		if actx.Err() != nil {
			releaseLocal()
			return nil, l.waitError(ctx, ErrTimeout, kind, name, start, attempt, last, heard)
		}
	}
}

// waitError explains why acquire gave up (sentinel: ErrTimeout or
// ErrNoQuorum): the last attempt's count, and the latest answer of each
// node that did not grant it.
func (l *Locker) waitError(ctx context.Context, sentinel error, kind, name string, start time.Time, attempts int, last *tally, heard []string) error {
	detail := "waiting for this node's earlier writer of the name"
	if last != nil {
		v := last.v
		detail = fmt.Sprintf("%d attempts; the last was granted by %d of %d nodes, %s", attempts, last.ok, len(v.nodes), v.need())
		var why []string
		for i, nd := range v.nodes {
			switch {
			case last.granted(i):
			case heard[i] != "":
				why = append(why, fmt.Sprintf("%v: %s", nd, heard[i]))
			default:
				why = append(why, fmt.Sprintf("%v: no answer in time", nd))
			}
		}
		if len(why) > 0 {
			detail += ": " + strings.Join(why, "; ")
		}
	}
	waited := time.Since(start).Round(time.Millisecond)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %s of %q after %v (%s): %w", sentinel, kind, name, waited, detail, err)
	}
	return fmt.Errorf("%w: %s of %q after %v (%s)", sentinel, kind, name, waited, detail)
}

func (l *Locker) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Node states within a round.
const (
	stPending int8 = iota // no answer yet
	stGranted             // granted or confirmed
	stRefused             // said no for certain
	stFailed              // failed (unreachable, timed out, ...)
)

// tally is the outcome of one round of calls, as far as it is known.
type tally struct {
	v      *view
	ok     int      // nodes that granted or confirmed
	no     int      // nodes that said no for certain
	state  []int8   // by node
	answer []string // by node: its refusal or failure, "" if none (yet)
	calls  *calls   // every call, including those still in flight
}

// granted reports whether node i granted (or confirmed) in time.
func (t *tally) granted(i int) bool { return t.state[i] == stGranted }

// why lists the refusals and failures, for error messages.
func (t *tally) why() string {
	var s []string
	for i, a := range t.answer {
		if a != "" {
			s = append(s, fmt.Sprintf("%v: %s", t.v.nodes[i], a))
		}
	}
	return strings.Join(s, "; ")
}

// calls are the requests of one round, one per node; err[i] may be read
// once done[i] is closed.
type calls struct {
	done []chan struct{}
	err  []error
}

// finished reports whether node i's call has returned.
func (c *calls) finished(i int) bool {
	select {
	case <-c.done[i]:
		return true
	default:
		return false
	}
}

// refused reports whether node i said no for certain (waiting for it).
func (c *calls) refused(i int) bool {
	<-c.done[i]
	return errors.Is(c.err[i], ErrRefused)
}

// round sends req to every node at once, each call bounded by
// CallTimeout, and returns as soon as the outcome is decided: a majority
// said yes, or enough said no that no majority can. It does not wait for
// nodes that failed to answer their last call (unreachable, or hung)
// when only they could still make a majority: it returns undecided, and
// the caller retries rather than stall for CallTimeout on every attempt
// while a node is down. Calls still in flight finish in the background;
// a grant they bring is covered because refreshes go to every node and
// a release waits for them. It also returns when ctx ends.
func (l *Locker) round(ctx context.Context, v *view, op string, req request) tally {
	n := len(v.nodes)
	c := &calls{done: make([]chan struct{}, n), err: make([]error, n)}
	t := tally{v: v, calls: c, state: make([]int8, n), answer: make([]string, n)}
	results := make(chan int, n)
	// Calls outlive ctx: cancelling one midway would leave its outcome
	// unknown for no gain, as each is short.
	callCtx := context.WithoutCancel(ctx)
	for i := range n {
		c.done[i] = make(chan struct{})
		if i == 0 && v.local {
			continue
		}
		go func() {
			cctx, cancel := context.WithTimeout(callCtx, l.callTimeout)
			defer cancel()
			c.err[i] = v.nodes[i].call(cctx, op, req)
			close(c.done[i])
			results <- i
		}()
	}
	count := func(i int) {
		switch err := c.err[i]; {
		case err == nil:
			t.ok++
			t.state[i] = stGranted
		case errors.Is(err, ErrRefused):
			t.no++
			t.state[i] = stRefused
			t.answer[i] = err.Error()
		default:
			t.state[i] = stFailed
			t.answer[i] = err.Error()
		}
	}
	got := 0
	if v.local {
		c.err[0] = v.nodes[0].call(ctx, op, req) // the local table: no network
		close(c.done[0])
		count(0)
		got = 1
	}
	for ; got < n && !v.decided(&t); got++ {
		select {
		case i := <-results:
			count(i)
		case <-ctx.Done():
			return t
		}
	}
	return t
}

// release removes req's lease from every node, in the background. With
// grants (the calls that asked for it), each node is released only once
// its grant call has finished, so the release cannot overtake the grant
// and leave it behind, and not at all where it was refused. done, if
// set, runs once a majority of the nodes are settled (released, failed
// or never granted), which is all the next holder needs; one slow node
// does not hold it up.
func (l *Locker) release(v *view, req request, grants *calls, done func()) {
	var once sync.Once
	var mu sync.Mutex
	settled := make([]bool, len(v.nodes))
	settle := func(i int) {
		mu.Lock()
		settled[i] = true
		enough := v.settledEnough(settled)
		mu.Unlock()
		if enough && done != nil {
			once.Do(done)
		}
	}
	for i, nd := range v.nodes {
		l.spawn(func() {
			defer settle(i)
			if grants != nil && grants.refused(i) {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), l.callTimeout)
			defer cancel()
			nd.call(ctx, opUnlock, req) // best effort: the lease expires anyway
		})
	}
}

// writerQueue serializes the writers of each name within this node.
type writerQueue struct {
	mu sync.Mutex
	m  map[string]*slot
}

type slot struct {
	ch   chan struct{} // holds a token while a writer has the name
	refs int
}

func (q *writerQueue) acquire(ctx context.Context, name string) (func(), error) {
	q.mu.Lock()
	s := q.m[name]
	if s == nil {
		s = &slot{ch: make(chan struct{}, 1)}
		q.m[name] = s
	}
	s.refs++
	q.mu.Unlock()
	select {
	case s.ch <- struct{}{}:
		var once sync.Once
		return func() {
			once.Do(func() {
				<-s.ch
				q.drop(name, s)
			})
		}, nil
	case <-ctx.Done():
		q.drop(name, s)
		return nil, ctx.Err()
	}
}

func (q *writerQueue) drop(name string, s *slot) {
	q.mu.Lock()
	if s.refs--; s.refs == 0 {
		delete(q.m, name)
	}
	q.mu.Unlock()
}
