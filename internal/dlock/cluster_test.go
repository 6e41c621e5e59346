package dlock

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/peerauth"
)

var testKey = peerauth.Derive("root", "secret")

// fast are lease timings for tests that wait for expiry.
var fast = Options{TTL: 500 * time.Millisecond, CallTimeout: 150 * time.Millisecond, Timeout: 5 * time.Second}

// network decides which node can reach which, so tests can cut nodes off
// (a dead node, a partition) while every node keeps running.
type network struct {
	mu    sync.Mutex
	hosts map[string]string // host:port -> node id
	cut   map[[2]string]bool
	// hang makes a cut call wait for its timeout, like a lost packet,
	// instead of failing at once, like a refused connection.
	hang bool
}

func (nw *network) blocked(from, to string) bool {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	return nw.cut[[2]string{from, to}]
}

// partition cuts every link between the two sides.
func (nw *network) partition(a, b []string) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	for _, x := range a {
		for _, y := range b {
			nw.cut[[2]string{x, y}], nw.cut[[2]string{y, x}] = true, true
		}
	}
}

func (nw *network) heal() {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	clear(nw.cut)
}

type cutTransport struct {
	from string
	nw   *network
	base http.RoundTripper
}

func (c *cutTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.nw.mu.Lock()
	to, hang := c.nw.hosts[r.URL.Host], c.nw.hang
	c.nw.mu.Unlock()
	if c.nw.blocked(c.from, to) {
		if hang {
			<-r.Context().Done()
			return nil, r.Context().Err()
		}
		return nil, fmt.Errorf("%s cannot reach %s (test partition)", c.from, to)
	}
	return c.base.RoundTrip(r)
}

type testNode struct {
	id     string
	table  *Table
	srv    *httptest.Server
	locker *Locker
}

type cluster struct {
	nodes []*testNode
	net   *network
}

// newCluster starts n nodes, each a Table served over real HTTP and a
// Locker whose peers are the others.
func newCluster(t testing.TB, n int, opts Options) *cluster {
	t.Helper()
	c := &cluster{net: &network{hosts: map[string]string{}, cut: map[[2]string]bool{}}}
	for i := range n {
		nd := &testNode{id: fmt.Sprintf("n%d", i+1)}
		nd.table = NewTable(TableOptions{Quiet: -1, MaxTTL: max(opts.TTL, DefaultTTL)})
		nd.srv = httptest.NewServer(NewServer(nd.table, testKey))
		c.net.hosts[strings.TrimPrefix(nd.srv.URL, "http://")] = nd.id
		c.nodes = append(c.nodes, nd)
	}
	for _, nd := range c.nodes {
		var peers []Peer
		for _, p := range c.nodes {
			if p != nd {
				peers = append(peers, Peer{ID: p.id, Endpoint: p.srv.URL})
			}
		}
		o := opts
		if !o.Key.Valid() {
			o.Key = testKey
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		o.Client = &http.Client{Transport: &cutTransport{from: nd.id, nw: c.net, base: tr}}
		nd.locker = NewLocker(nd.id, nd.table, peers, o)
	}
	t.Cleanup(func() {
		for _, nd := range c.nodes {
			nd.locker.Close()
			nd.srv.Close()
			nd.table.Close()
		}
	})
	return c
}

// isolate cuts node i off from all others, as if it died (it keeps
// running, unaware, like a paused or partitioned process).
func (c *cluster) isolate(i int) {
	var others []string
	for j, nd := range c.nodes {
		if j != i {
			others = append(others, nd.id)
		}
	}
	c.net.partition([]string{c.nodes[i].id}, others)
}

// leases returns the total number of leases the nodes' tables hold.
func (c *cluster) leases() int {
	total := 0
	for _, nd := range c.nodes {
		_, n := nd.table.Len()
		total += n
	}
	return total
}

// sweep drops expired leases and returns the number of live ones left.
func (c *cluster) sweep() int {
	for _, nd := range c.nodes {
		nd.table.Sweep()
	}
	return c.leases()
}

func lockOrFail(t testing.TB, l *Locker, name string) *Lease {
	t.Helper()
	s, err := l.Lock(context.Background(), name)
	if err != nil {
		t.Fatalf("lock %q: %v", name, err)
	}
	return s
}

func TestMutualExclusion(t *testing.T) {
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("%d nodes", n), func(t *testing.T) {
			c := newCluster(t, n, Options{TTL: 2 * time.Second, Timeout: 20 * time.Second})
			const perWorker, workersPerNode = 15, 3
			var counter, inside, overlaps, lost atomic.Int64
			var wg sync.WaitGroup
			for _, nd := range c.nodes {
				for range workersPerNode {
					wg.Go(func() {
						for done := 0; done < perWorker; {
							s, err := nd.locker.Lock(context.Background(), "bucket\x00key")
							if err != nil {
								t.Errorf("%s: %v", nd.id, err)
								return
							}
							if inside.Add(1) != 1 {
								overlaps.Add(1)
							}
							v := counter.Load() // read, modify, write: a lost update shows
							time.Sleep(100 * time.Microsecond)
							inside.Add(-1)
							if s.Check() == nil {
								counter.Store(v + 1)
								done++
							} else {
								lost.Add(1) // refuse to commit, and retry
							}
							s.Unlock()
						}
					})
				}
			}
			wg.Wait()
			want := int64(n * workersPerNode * perWorker)
			if got := counter.Load(); got != want {
				t.Fatalf("counter = %d, want %d (lost updates)", got, want)
			}
			if overlaps.Load() != 0 {
				t.Fatalf("%d times two holders were inside at once", overlaps.Load())
			}
			if lost.Load() != 0 {
				t.Logf("%d leases lost under load (commits refused, retried)", lost.Load())
			}
			waitFor(t, 3*time.Second, "every lease to be released", func() bool { return c.sweep() == 0 })
		})
	}
}

func TestReadersShareWriterExcludes(t *testing.T) {
	c := newCluster(t, 3, fast)
	short := func(d time.Duration) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		t.Cleanup(cancel)
		return ctx
	}
	r1, err := c.nodes[0].locker.RLock(context.Background(), "obj")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := c.nodes[1].locker.RLock(context.Background(), "obj")
	if err != nil {
		t.Fatalf("second reader: %v", err)
	}
	if !r1.Valid() || !r2.Valid() {
		t.Fatal("readers should share the lock")
	}
	if _, err := c.nodes[2].locker.Lock(short(200*time.Millisecond), "obj"); !errors.Is(err, ErrTimeout) {
		t.Fatalf("writer while readers hold: %v, want ErrTimeout", err)
	}
	// Readers hold across several refreshes.
	time.Sleep(fast.TTL + fast.TTL/2)
	if !r1.Valid() || !r2.Valid() {
		t.Fatalf("readers lost their leases: %v, %v", r1.Check(), r2.Check())
	}
	r1.Unlock()
	r2.Unlock()
	w := lockOrFail(t, c.nodes[2].locker, "obj")
	if _, err := c.nodes[0].locker.RLock(short(200*time.Millisecond), "obj"); !errors.Is(err, ErrTimeout) {
		t.Fatalf("reader while a writer holds: %v, want ErrTimeout", err)
	}
	w.Unlock()
	r, err := c.nodes[0].locker.RLock(short(time.Second), "obj")
	if err != nil {
		t.Fatal(err)
	}
	r.Unlock()
}

func TestWriterNotStarvedByReaders(t *testing.T) {
	c := newCluster(t, 3, fast)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, nd := range c.nodes {
		for range 2 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
					r, err := nd.locker.RLock(ctx, "hot")
					cancel()
					if err == nil {
						time.Sleep(5 * time.Millisecond)
						r.Unlock()
					}
				}
			})
		}
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	w, err := c.nodes[0].locker.Lock(context.Background(), "hot")
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("writer among busy readers: %v", err)
	}
	t.Logf("writer waited %v among 6 busy readers", time.Since(start).Round(time.Millisecond))
	w.Unlock()
}

// TestDeadHolder: a holder cut off from the others can neither refresh
// nor release; another node gets the lock once the lease expired there,
// and by then the cut-off holder already knows it lost the lock.
func TestDeadHolder(t *testing.T) {
	for _, hang := range []bool{false, true} {
		t.Run(fmt.Sprintf("hang=%v", hang), func(t *testing.T) {
			c := newCluster(t, 3, fast)
			c.net.hang = hang
			first := lockOrFail(t, c.nodes[0].locker, "obj")
			var lostAt atomic.Int64
			go func() { <-first.Lost(); lostAt.Store(time.Now().UnixNano()) }()
			cutAt := time.Now()
			c.isolate(0)

			second := lockOrFail(t, c.nodes[1].locker, "obj")
			acquiredAt := time.Now()
			// The moment the second holder has the lock, the first is
			// already invalid: never two valid holders.
			if first.Valid() {
				t.Fatal("two valid holders: the cut-off holder still thinks it has the lock")
			}
			if err := first.Check(); !errors.Is(err, ErrLost) {
				t.Fatalf("Check of the cut-off holder = %v, want ErrLost", err)
			}
			waitFor(t, time.Second, "Lost to be closed", func() bool { return lostAt.Load() != 0 })
			if l := time.Unix(0, lostAt.Load()); !l.Before(acquiredAt) {
				t.Errorf("Lost closed %v after the next holder acquired", l.Sub(acquiredAt))
			}
			// It had to wait for expiry, not less than TTL minus a refresh.
			if waited := acquiredAt.Sub(cutAt); waited < fast.TTL-fast.TTL/3-20*time.Millisecond {
				t.Errorf("second holder acquired %v after the cut, before the lease could expire", waited)
			}
			if !second.Valid() {
				t.Fatal("second holder invalid")
			}
			second.Unlock()
			first.Unlock()
		})
	}
}

// TestStuckRefresher: the holder stays connected but its refresher stops
// (a stuck goroutine). Valid turns false at its deadline on its own, and
// the lease is freed for the next holder.
func TestStuckRefresher(t *testing.T) {
	c := newCluster(t, 3, fast)
	first := lockOrFail(t, c.nodes[0].locker, "obj")
	first.stop() // the refresher exits, as if stuck forever
	start := time.Now()
	second := lockOrFail(t, c.nodes[2].locker, "obj")
	if first.Valid() {
		t.Fatal("two valid holders")
	}
	if waited := time.Since(start); waited < fast.TTL/2 {
		t.Fatalf("acquired after %v: the stuck holder's lease was not honoured", waited)
	}
	second.Unlock()
	first.Unlock()
}

// TestPartition: 5 nodes split 2 | 3. The minority side cannot lock, the
// majority side can, and a lease held on the minority side is lost.
func TestPartition(t *testing.T) {
	c := newCluster(t, 5, fast)
	c.net.hang = true
	held := lockOrFail(t, c.nodes[0].locker, "held")
	c.net.partition([]string{"n1", "n2"}, []string{"n3", "n4", "n5"})

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := c.nodes[1].locker.Lock(ctx, "obj")
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("minority lock = %v, want ErrTimeout", err)
	}
	t.Logf("minority side: %v", err)
	// Without a deadline of its own, the minority gives up once it has
	// heard from no majority for UnreachableWait: ErrNoQuorum, not a
	// wait for the whole Timeout.
	start := time.Now()
	_, err = c.nodes[1].locker.Lock(context.Background(), "obj")
	if !errors.Is(err, ErrNoQuorum) || errors.Is(err, ErrTimeout) {
		t.Fatalf("minority lock without deadline = %v, want ErrNoQuorum", err)
	}
	if waited, limit := time.Since(start), c.nodes[1].locker.unreachable+2*c.nodes[1].locker.callTimeout; waited > limit {
		t.Fatalf("minority gave up after %v, more than %v", waited, limit)
	}
	t.Logf("minority side without deadline: %v", err)

	s := lockOrFail(t, c.nodes[2].locker, "obj")
	r, err := c.nodes[4].locker.RLock(context.Background(), "other")
	if err != nil {
		t.Fatalf("majority side read lock: %v", err)
	}

	select {
	case <-held.Lost():
	case <-time.After(2 * fast.TTL):
		t.Fatal("the minority holder's lease was not lost")
	}
	if err := held.Check(); !errors.Is(err, ErrLost) {
		t.Fatalf("minority holder Check = %v", err)
	}
	taken := lockOrFail(t, c.nodes[3].locker, "held")
	taken.Unlock()

	c.net.heal()
	s.Unlock()
	r.Unlock()
	held.Unlock()
	s2 := lockOrFail(t, c.nodes[0].locker, "obj")
	s2.Unlock()
}

// TestMinorityDown: 2 of 5 nodes stopped; locks are still taken, and kept.
func TestMinorityDown(t *testing.T) {
	c := newCluster(t, 5, fast)
	for _, nd := range c.nodes[3:] {
		nd.locker.Close()
		nd.srv.Close()
	}
	start := time.Now()
	w := lockOrFail(t, c.nodes[0].locker, "obj")
	r, err := c.nodes[1].locker.RLock(context.Background(), "other")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("locks took %v with 2 of 5 nodes down", d)
	}
	time.Sleep(2 * fast.TTL) // several refreshes
	if err := w.Check(); err != nil {
		t.Fatalf("writer lost its lease with 3 of 5 nodes up: %v", err)
	}
	if err := r.Check(); err != nil {
		t.Fatalf("reader lost its lease with 3 of 5 nodes up: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := c.nodes[2].locker.Lock(ctx, "obj"); !errors.Is(err, ErrTimeout) {
		t.Fatalf("second writer: %v, want ErrTimeout", err)
	}
	w.Unlock()
	r.Unlock()
}

func TestWrongKeyRefused(t *testing.T) {
	t.Parallel()
	o := Options{Key: peerauth.Derive("root", "not the secret"), CallTimeout: time.Second, Timeout: 500 * time.Millisecond}
	c := newCluster(t, 3, fast)
	// A locker with the wrong key, next to node 1 (sharing its table).
	bad := NewLocker("n1", c.nodes[0].table, []Peer{
		{ID: "n2", Endpoint: c.nodes[1].srv.URL},
		{ID: "n3", Endpoint: c.nodes[2].srv.URL},
	}, o)
	defer bad.Close()
	_, err := bad.Lock(context.Background(), "obj")
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("lock with the wrong key = %v, want ErrTimeout after 401s", err)
	}
	waitFor(t, time.Second, "the partial grant to be released", func() bool { return c.leases() == 0 })
	s := lockOrFail(t, c.nodes[1].locker, "obj")
	s.Unlock()
}

func TestServerRefusesBadRequests(t *testing.T) {
	tb := newTestTable(t, nil, TableOptions{})
	srv := httptest.NewServer(NewServer(tb, testKey))
	defer srv.Close()
	body := `[{"op":"lock","name":"obj","id":"x","owner":"n9","ttl_ns":1000000000}]`
	send := func(method, path, body string, sign func(*http.Request)) int {
		t.Helper()
		r, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if sign != nil {
			sign(r)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	signed := func(k peerauth.Key, b string) func(*http.Request) {
		return func(r *http.Request) { k.Sign(r, peerauth.BodyHash([]byte(b))) }
	}
	for _, c := range []struct {
		what         string
		method, path string
		body         string
		sign         func(*http.Request)
		want         int
	}{
		{"unsigned", "POST", PathPrefix + opBatch, body, nil, 401},
		{"wrong key", "POST", PathPrefix + opBatch, body, signed(peerauth.Derive("root", "other"), body), 401},
		{"zero key", "POST", PathPrefix + opBatch, body, signed(peerauth.Key{}, body), 401},
		{"body changed", "POST", PathPrefix + opBatch, body, signed(testKey, strings.Replace(body, "obj", "ob2", 1)), 401},
		{"unsigned body", "POST", PathPrefix + opBatch, body, func(r *http.Request) { testKey.Sign(r, peerauth.Unsigned) }, 401},
		{"unknown endpoint", "POST", PathPrefix + "steal", body, signed(testKey, body), 404},
		// Single operations were endpoints of their own before batches.
		{"a single operation", "POST", PathPrefix + opLock, body, signed(testKey, body), 404},
		{"outside the prefix", "POST", "/batch", body, signed(testKey, body), 404},
		{"GET", "GET", PathPrefix + opBatch, "", signed(testKey, ""), 405},
		{"bad json", "POST", PathPrefix + opBatch, "[{", signed(testKey, "[{"), 400},
		{"too large", "POST", PathPrefix + opBatch, strings.Repeat(" ", maxBody+1), signed(testKey, strings.Repeat(" ", maxBody+1)), 413},
	} {
		if got := send(c.method, c.path, c.body, c.sign); got != c.want {
			t.Errorf("%s: status %d, want %d", c.what, got, c.want)
		}
	}
	if names, _ := tb.Len(); names != 0 {
		t.Fatalf("refused requests left %d names in the table", names)
	}
	if got := send("POST", PathPrefix+opBatch, body, signed(testKey, body)); got != 200 {
		t.Fatalf("good request: status %d", got)
	}
	if _, leases := tb.Len(); leases != 1 {
		t.Fatalf("good request: %d leases", leases)
	}
}

// TestUnlockFreesPromptly: with a 30 s TTL, the next Lock, on another
// node or on the same one, gets the lock right after Unlock.
func TestUnlockFreesPromptly(t *testing.T) {
	c := newCluster(t, 3, Options{Timeout: 5 * time.Second})
	for i := range 20 {
		from, to := c.nodes[i%3].locker, c.nodes[(i+1)%3].locker
		s := lockOrFail(t, from, "obj")
		s.Unlock()
		start := time.Now()
		s = lockOrFail(t, to, "obj")
		if d := time.Since(start); d > time.Second {
			t.Fatalf("lock after unlock took %v", d)
		}
		s.Unlock()
	}
	start := time.Now()
	for range 20 {
		lockOrFail(t, c.nodes[0].locker, "same").Unlock()
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("20 lock/unlock on one node took %v", d)
	}
}

// TestMemoryBounded: after many locks the tables hold nothing, whether
// the leases were released or their holders vanished.
func TestMemoryBounded(t *testing.T) {
	c := newCluster(t, 3, fast)
	var wg sync.WaitGroup
	for i, nd := range c.nodes {
		wg.Go(func() {
			for j := range 200 {
				name := fmt.Sprintf("b\x00k%d-%d", i, j)
				if j%2 == 0 {
					lockOrFail(t, nd.locker, name).Unlock()
				} else if r, err := nd.locker.RLock(context.Background(), name); err == nil {
					r.Unlock()
				} else {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	// A grant call that timed out on a loaded machine may still land after
	// its release: such a stray grant lives one TTL, then the sweep takes it.
	waitFor(t, 2*time.Second, "released leases to leave the tables", func() bool { return c.sweep() == 0 })
	for _, nd := range c.nodes {
		if names, _ := nd.table.Len(); names != 0 {
			t.Fatalf("%s holds %d names after all unlocks", nd.id, names)
		}
	}

	// Holders that vanish without unlocking: their leases expire and go.
	c.net.hang = false
	var abandoned []*Lease
	for j := range 100 {
		s := lockOrFail(t, c.nodes[0].locker, fmt.Sprint("gone", j))
		s.stop() // no refresh, no release: a holder that vanished
		abandoned = append(abandoned, s)
	}
	c.isolate(0) // and its loss cannot release anything on the others
	time.Sleep(fast.TTL + 50*time.Millisecond)
	for _, nd := range c.nodes[1:] {
		nd.table.Sweep()
		if names, leases := nd.table.Len(); names != 0 || leases != 0 {
			t.Fatalf("%s holds %d names, %d leases after expiry", nd.id, names, leases)
		}
	}
	for _, s := range abandoned {
		s.Unlock()
	}
}

func TestCloseReleases(t *testing.T) {
	c := newCluster(t, 3, fast)
	s := lockOrFail(t, c.nodes[0].locker, "obj")
	c.nodes[0].locker.Close()
	select {
	case <-s.Lost():
	default:
		t.Fatal("Close did not end the lease")
	}
	if _, err := c.nodes[0].locker.Lock(context.Background(), "x"); !errors.Is(err, ErrClosed) {
		t.Fatalf("lock after Close = %v", err)
	}
	start := time.Now()
	lockOrFail(t, c.nodes[1].locker, "obj").Unlock()
	if d := time.Since(start); d > fast.TTL/2 {
		t.Fatalf("lock after Close waited %v", d)
	}
}

func TestSelfAndDuplicatePeersIgnored(t *testing.T) {
	tb := newTestTable(t, nil, TableOptions{})
	l := NewLocker("n1", tb, []Peer{
		{ID: "n1", Endpoint: "http://n1:9000"},
		{ID: "n2", Endpoint: "n2:9000"},
		{ID: "n2", Endpoint: "http://n2:9000/"},
		{ID: "n3", Endpoint: "http://n3:9000"},
	}, Options{Key: testKey})
	defer l.Close()
	if v := l.cur; len(v.nodes) != 3 || len(v.groups) != 1 || v.quorum[0] != 2 {
		t.Fatalf("%d nodes, quorums %v; want 3, [2]", len(v.nodes), v.quorum)
	}
}

// BenchmarkLockUnlock4Nodes: Lock (3 of 4 grants, 3 remote calls over
// loopback HTTP) then Unlock (returns at once; the releases run behind),
// on distinct names.
func BenchmarkLockUnlock4Nodes(b *testing.B) {
	c := newCluster(b, 4, Options{})
	l := c.nodes[0].locker
	b.Run("serial", func(b *testing.B) {
		for i := range b.N {
			s, err := l.Lock(context.Background(), fmt.Sprint("bucket\x00key", i))
			if err != nil {
				b.Fatal(err)
			}
			s.Unlock()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := n.Add(1)
				s, err := c.nodes[i%4].locker.Lock(context.Background(), fmt.Sprint("bucket\x00key", i))
				if err != nil {
					b.Error(err)
					return
				}
				s.Unlock()
			}
		})
	})
}

// TestHungNode: a node that swallows requests (they time out after
// CallTimeout) does not slow down locks, even contended ones, in which
// a majority without it is not yet decided.
func TestHungNode(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3, Options{CallTimeout: 500 * time.Millisecond, Timeout: 5 * time.Second})
	c.net.hang = true
	c.isolate(2)
	// The first calls learn that n3 does not answer (CallTimeout); after
	// that, rounds do not wait for it.
	lockOrFail(t, c.nodes[0].locker, "obj").Unlock()
	lockOrFail(t, c.nodes[1].locker, "obj").Unlock()
	start := time.Now()
	for range 10 {
		lockOrFail(t, c.nodes[0].locker, "obj").Unlock()
		lockOrFail(t, c.nodes[1].locker, "obj").Unlock()
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("20 lock/unlock with one hung node took %v", d)
	}
}

func TestInvalidNameFailsFast(t *testing.T) {
	c := newCluster(t, 3, fast)
	start := time.Now()
	_, err := c.nodes[0].locker.Lock(context.Background(), strings.Repeat("k", maxNameLen+1))
	if err == nil || errors.Is(err, ErrTimeout) || time.Since(start) > time.Second {
		t.Fatalf("lock of an over-long name = %v after %v, want an immediate error", err, time.Since(start))
	}
	if _, err := c.nodes[0].locker.RLock(context.Background(), ""); err == nil || errors.Is(err, ErrTimeout) {
		t.Fatalf("read lock of an empty name = %v", err)
	}
	lockOrFail(t, c.nodes[0].locker, "ok").Unlock() // the writer queue was released
}
