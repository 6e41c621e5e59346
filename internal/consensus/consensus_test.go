package consensus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shardstore/shardstore/internal/peerauth"
)

// testGroup is a group of nodes, each on its own loopback HTTP server,
// as in a cluster (but in one process).
type testGroup struct {
	t       *testing.T
	key     peerauth.Key
	members []Member
	dirs    []string
	lns     []net.Listener
	srvs    []*http.Server
	nodes   []*Node
	// handlers route each server to its current node (nodes restart).
	handlers []atomic.Pointer[http.Handler]
	changes  []*changeLog
	// tweak, when set, changes node i's options before each start.
	tweak func(i int, o *Options)
}

type changeLog struct {
	mu   sync.Mutex
	seen []string
}

func (c *changeLog) add(space, key string) {
	c.mu.Lock()
	c.seen = append(c.seen, space+"/"+key)
	c.mu.Unlock()
}

func (c *changeLog) has(s string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, v := range c.seen {
		if v == s {
			return true
		}
	}
	return false
}

func newTestGroup(t *testing.T, size int) *testGroup {
	return newTestGroupOf(t, size, size, nil)
}

// newTestGroupOf makes listeners for size nodes and starts the first
// started of them (tweak as the group's tweak).
func newTestGroupOf(t *testing.T, size, started int, tweak func(i int, o *Options)) *testGroup {
	g := &testGroup{t: t, key: peerauth.Derive("root", "secret"), handlers: make([]atomic.Pointer[http.Handler], size), tweak: tweak}
	for i := range size {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		g.lns = append(g.lns, ln)
		g.members = append(g.members, Member{ID: fmt.Sprintf("node%d", i+1), Address: ln.Addr().String()})
		g.dirs = append(g.dirs, t.TempDir())
		g.changes = append(g.changes, &changeLog{})
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if h := g.handlers[i].Load(); h != nil {
				(*h).ServeHTTP(w, r)
				return
			}
			http.Error(w, "node down", http.StatusServiceUnavailable)
		})}
		g.srvs = append(g.srvs, srv)
		go srv.Serve(ln)
	}
	g.nodes = make([]*Node, size)
	for i := range started {
		g.start(i)
	}
	t.Cleanup(func() {
		for i := range g.nodes {
			g.stop(i)
		}
		for _, s := range g.srvs {
			s.Close()
		}
	})
	return g
}

func (g *testGroup) start(i int) {
	o := Options{Dir: g.dirs[i], Self: g.members[i], Members: g.members, Key: g.key,
		OnChange: g.changes[i].add, HeartbeatTimeout: 600 * time.Millisecond}
	if g.tweak != nil {
		g.tweak(i, &o)
	}
	n, err := Open(o)
	if err != nil {
		g.t.Fatal(err)
	}
	g.nodes[i] = n
	h := n.Handler()
	g.handlers[i].Store(&h)
}

func (g *testGroup) stop(i int) {
	if g.nodes[i] == nil {
		return
	}
	g.handlers[i].Store(nil)
	if err := g.nodes[i].Close(); err != nil && !errors.Is(err, raft.ErrRaftShutdown) {
		g.t.Log(err)
	}
	g.nodes[i] = nil
}

func (g *testGroup) leader() int {
	g.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for i, n := range g.nodes {
			if n != nil && n.Status().State == "Leader" {
				return i
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	g.t.Fatal("no leader elected")
	return -1
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestChangesThroughAnyNode(t *testing.T) {
	g := newTestGroup(t, 3)
	l := g.leader()
	follower := (l + 1) % 3
	other := (l + 2) % 3
	ctx := ctxT(t, 30*time.Second)

	// A follower forwards its change and has applied it on return.
	v1, err := g.nodes[follower].Put(ctx, "bucket", "photos", 0, []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	if e, err := g.nodes[follower].Get(ctx, "bucket", "photos", false); err != nil || string(e.Value) != "one" || e.Index != v1 {
		t.Fatalf("local read on the proposing node: %+v %v", e, err)
	}
	// A fresh read on another node sees it.
	if e, err := g.nodes[other].Get(ctx, "bucket", "photos", true); err != nil || string(e.Value) != "one" {
		t.Fatalf("fresh read on another node: %+v %v", e, err)
	}
	if !g.changes[other].has("bucket/photos") {
		t.Error("OnChange was not called on the other node")
	}
	// Compare-and-set: a stale version loses, the current one wins.
	if _, err := g.nodes[other].Put(ctx, "bucket", "photos", 0, []byte("again")); !errors.Is(err, ErrConflict) {
		t.Fatalf("create of an existing key: %v, want ErrConflict", err)
	}
	v2, err := g.nodes[l].Put(ctx, "bucket", "photos", v1, []byte("two"))
	if err != nil || v2 <= v1 {
		t.Fatalf("update at the current version: %d %v", v2, err)
	}
	if _, err := g.nodes[follower].Put(ctx, "bucket", "photos", v1, []byte("lost update")); !errors.Is(err, ErrConflict) {
		t.Fatalf("update at an old version: %v, want ErrConflict", err)
	}
	if err := g.nodes[other].Delete(ctx, "bucket", "photos", v1); !errors.Is(err, ErrConflict) {
		t.Fatalf("delete at an old version: %v", err)
	}
	if err := g.nodes[other].Delete(ctx, "bucket", "photos", v2); err != nil {
		t.Fatal(err)
	}
	for i := range g.nodes {
		if _, err := g.nodes[i].Get(ctx, "bucket", "photos", true); !errors.Is(err, ErrNotFound) {
			t.Fatalf("node %d after delete: %v", i, err)
		}
	}
	if err := g.nodes[follower].Delete(ctx, "bucket", "photos", v2); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete of an absent key: %v", err)
	}
}

func TestSeedOnce(t *testing.T) {
	g := newTestGroup(t, 3)
	ctx := ctxT(t, 30*time.Second)
	if ok, err := g.nodes[0].Seeded(ctx); err != nil || ok {
		t.Fatalf("new group seeded=%v err=%v", ok, err)
	}
	var wg sync.WaitGroup
	for i := range g.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := map[string]map[string][]byte{"bucket": {fmt.Sprintf("from-%d", i): []byte("x")}}
			if err := g.nodes[i].Seed(ctx, st); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i := range g.nodes {
		all, err := g.nodes[i].List(ctx, "bucket", true)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 1 {
			t.Fatalf("node %d holds %d seeded keys, want exactly the first seed's one: %v", i, len(all), all)
		}
		if ok, _ := g.nodes[i].Seeded(ctx); !ok {
			t.Fatalf("node %d not seeded", i)
		}
	}
}

func TestLeaderLossAndRestart(t *testing.T) {
	g := newTestGroup(t, 3)
	ctx := ctxT(t, 60*time.Second)
	l := g.leader()
	if _, err := g.nodes[(l+1)%3].Put(ctx, "config", "iam", 0, []byte("v1")); err != nil {
		t.Fatal(err)
	}
	g.stop(l)
	// The other two elect a leader and go on; a write through either works.
	survivor := (l + 1) % 3
	e, err := g.nodes[survivor].Get(ctx, "config", "iam", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.nodes[(l+2)%3].Put(ctx, "config", "iam", e.Index, []byte("v2")); err != nil {
		t.Fatalf("write with the old leader down: %v", err)
	}
	// The old leader comes back from its log and catches up.
	g.start(l)
	got, err := g.nodes[l].Get(ctx, "config", "iam", true)
	if err != nil || string(got.Value) != "v2" {
		t.Fatalf("restarted node reads %q %v, want v2", got.Value, err)
	}
}

func TestNoMajorityIsUnavailable(t *testing.T) {
	g := newTestGroup(t, 3)
	ctx := ctxT(t, 30*time.Second)
	g.leader()
	if _, err := g.nodes[0].Put(ctx, "bucket", "b", 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	g.stop(1)
	g.stop(2)
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := g.nodes[0].Put(short, "bucket", "c", 0, []byte("x")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("write without a majority: %v, want ErrUnavailable", err)
	}
	short2, cancel2 := context.WithTimeout(ctx, 3*time.Second)
	defer cancel2()
	if _, err := g.nodes[0].Get(short2, "bucket", "b", true); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("fresh read without a majority: %v, want ErrUnavailable", err)
	}
	// What the node knew is still readable locally.
	if e, err := g.nodes[0].Get(ctx, "bucket", "b", false); err != nil || string(e.Value) != "x" {
		t.Fatalf("local read: %+v %v", e, err)
	}
	// The write that failed is indeterminate (it may have reached the
	// log): once the majority is back, every node agrees on its fate.
	g.start(1)
	g.start(2)
	var fates []error
	for i := range g.nodes {
		_, err := g.nodes[i].Get(ctx, "bucket", "c", true)
		if err != nil && !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		fates = append(fates, err)
	}
	for i := range fates {
		if (fates[i] == nil) != (fates[0] == nil) {
			t.Fatalf("nodes disagree on the failed write: %v", fates)
		}
	}
}

func TestCallsNeedTheClusterKey(t *testing.T) {
	g := newTestGroup(t, 3)
	g.leader()
	addr := g.members[0].Address
	for _, name := range []string{"stream", "apply", "readindex"} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+PathPrefix+name, bytes.NewReader([]byte(`{"op":"put","s":"bucket","k":"evil"}`)))
		peerauth.Derive("root", "wrong secret").Sign(req, peerauth.Unsigned)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("%s with a wrong key: %s %s", name, resp.Status, msg)
		}
	}
	// A correctly keyed apply whose body differs from its signed hash
	// is refused too.
	body := []byte(`{"op":"put","s":"bucket","k":"evil"}`)
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+PathPrefix+"apply", bytes.NewReader(body))
	g.key.Sign(req, peerauth.BodyHash([]byte("something else")))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("apply with a mismatched body: %s", resp.Status)
	}
	ctx := ctxT(t, 10*time.Second)
	if _, err := g.nodes[1].Get(ctx, "bucket", "evil", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a refused call changed the state: %v", err)
	}
}

// memSink is a raft.SnapshotSink in memory.
type memSink struct{ bytes.Buffer }

func (s *memSink) ID() string    { return "test" }
func (s *memSink) Cancel() error { return nil }
func (s *memSink) Close() error  { return nil }

func TestSnapshotRestore(t *testing.T) {
	var touched []string
	f := newFSM(nil)
	f.Apply(&raft.Log{Index: 3, Data: []byte(`{"op":"seed","seed":{"bucket":{"a":"eA=="}}}`)})
	f.Apply(&raft.Log{Index: 5, Data: []byte(`{"op":"put","s":"config","k":"iam","v":"aWFt"}`)})
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	g := newFSM(func(space, key string) { touched = append(touched, space+"/"+key) })
	g.Apply(&raft.Log{Index: 1, Data: []byte(`{"op":"put","s":"bucket","k":"gone","v":"eA=="}`)})
	if err := g.Restore(io.NopCloser(&sink)); err != nil {
		t.Fatal(err)
	}
	if e, ok := g.get("config", "iam"); !ok || string(e.Value) != "iam" || e.Index != 5 {
		t.Fatalf("restored entry: %+v %v", e, ok)
	}
	if _, ok := g.get("bucket", "gone"); ok {
		t.Fatal("an entry absent from the snapshot survived the restore")
	}
	if !g.isSeeded() || g.lastIndex() != 5 {
		t.Fatalf("seeded=%v last=%d", g.isSeeded(), g.lastIndex())
	}
	want := map[string]bool{"bucket/gone": true, "bucket/a": true, "config/iam": true}
	for _, k := range touched {
		delete(want, k)
	}
	if len(want) > 0 {
		t.Fatalf("OnChange missed %v (called for %v)", want, touched)
	}
}
