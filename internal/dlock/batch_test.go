package dlock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/peerauth"
)

// countingServer serves a Table and counts the HTTP requests and the
// operations they carried.
type countingServer struct {
	srv           *Server
	requests, ops atomic.Int64
	hold          chan struct{} // when set, each request waits for it
	mu            sync.Mutex
	names         []string // every name an operation named, in order
}

func (c *countingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	var calls []batchCall
	if json.Unmarshal(body, &calls) == nil {
		c.mu.Lock()
		for _, bc := range calls {
			c.names = append(c.names, bc.Op+" "+bc.Name)
		}
		c.mu.Unlock()
		c.ops.Add(int64(len(calls)))
	}
	c.requests.Add(1)
	if c.hold != nil {
		<-c.hold
	}
	c.srv.ServeHTTP(w, r)
}

// TestCallsShareBatches: many lock and unlock calls made at once from
// one node travel to each other node in far fewer HTTP requests, and
// every lock still excludes and releases as it should.
func TestCallsShareBatches(t *testing.T) {
	tables := make([]*Table, 3)
	counters := make([]*countingServer, 3)
	var peers []Peer
	for i := range tables {
		tables[i] = newTestTable(t, nil, TableOptions{})
		counters[i] = &countingServer{srv: NewServer(tables[i], testKey)}
		srv := httptest.NewServer(counters[i])
		t.Cleanup(srv.Close)
		peers = append(peers, Peer{ID: fmt.Sprintf("n%d", i+1), Endpoint: srv.URL})
	}
	l := NewLocker("n1", tables[0], peers, Options{Key: testKey})
	t.Cleanup(l.Close)
	const workers, rounds = 32, 5
	var wg sync.WaitGroup
	var held atomic.Int64
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				// Half the workers share a name, so the locks contend.
				name := fmt.Sprintf("obj-%d-%d", w, r)
				if w%2 == 0 {
					name = "shared"
				}
				s, err := l.Lock(context.Background(), name)
				if err != nil {
					errs <- err
					return
				}
				if name == "shared" && held.Add(1) != 1 {
					errs <- errors.New("two holders of one lock")
				}
				if name == "shared" {
					held.Add(-1)
				}
				s.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	waitIdle := time.Now().Add(5 * time.Second)
	for _, tb := range tables {
		for {
			if _, n := tb.Len(); n == 0 {
				break
			}
			if time.Now().After(waitIdle) {
				t.Fatalf("leases left after every unlock: %d", func() int { _, n := tb.Len(); return n }())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	for i, c := range counters[1:] {
		reqs, ops := c.requests.Load(), c.ops.Load()
		t.Logf("node %d: %d operations in %d requests", i+2, ops, reqs)
		if ops < workers*rounds {
			t.Fatalf("node %d saw %d operations, want at least %d (every lock asks every node)", i+2, ops, workers*rounds)
		}
		if reqs >= ops {
			t.Fatalf("node %d: %d operations in %d requests: no call shared a batch", i+2, ops, reqs)
		}
	}
}

// TestQueuedCallDroppedWhenItsContextEnds: a call waiting behind a batch
// in flight that gives up is never sent, so it cannot leave a grant
// behind; calls queued after it still go, in order.
func TestQueuedCallDroppedWhenItsContextEnds(t *testing.T) {
	tb := newTestTable(t, nil, TableOptions{})
	cs := &countingServer{srv: NewServer(tb, testKey), hold: make(chan struct{})}
	srv := httptest.NewServer(cs)
	t.Cleanup(srv.Close)
	n := &remoteNode{base: srv.URL, key: testKey, client: defaultClient(), callTimeout: 5 * time.Second}
	req := func(name string) request {
		return request{Name: name, ID: "id-" + name, Owner: "n1", TTL: int64(10 * time.Second)}
	}
	first := make(chan error, 1)
	go func() { first <- n.call(context.Background(), opLock, req("a")) }()
	for cs.requests.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := n.call(ctx, opLock, req("b")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("queued call whose context ended: %v", err)
	}
	third := make(chan error, 1)
	go func() { third <- n.call(context.Background(), opLock, req("c")) }()
	time.Sleep(20 * time.Millisecond) // c queued behind a
	close(cs.hold)
	for _, ch := range []chan error{first, third} {
		if err := <-ch; err != nil {
			t.Fatalf("call after the hold: %v", err)
		}
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if got := strings.Join(cs.names, ","); got != "lock a,lock c" {
		t.Fatalf("node received %q, want a then c and never b", got)
	}
	if err := tb.Lock("b", "other", "n2", 10*time.Second); err != nil {
		t.Fatalf("b was granted by a call never sent: %v", err)
	}
}

// TestServerBatch: a batch is applied in order and answered per
// operation; malformed batches are refused whole.
func TestServerBatch(t *testing.T) {
	tb := newTestTable(t, nil, TableOptions{MaxTTL: time.Minute})
	srv := httptest.NewServer(NewServer(tb, testKey))
	t.Cleanup(srv.Close)
	post := func(body string) (int, []batchAnswer) {
		t.Helper()
		r, _ := http.NewRequest(http.MethodPost, srv.URL+PathPrefix+opBatch, strings.NewReader(body))
		testKey.Sign(r, peerauth.BodyHash([]byte(body)))
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var answers []batchAnswer
		if resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(&answers); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode, answers
	}
	call := func(op, name, id string, ttl time.Duration) string {
		b, _ := json.Marshal(batchCall{Op: op, request: request{Name: name, ID: id, Owner: "n2", TTL: int64(ttl)}})
		return string(b)
	}
	body := "[" + strings.Join([]string{
		call(opLock, "k", "x", time.Second),
		call(opLock, "k", "y", time.Second), // refused: x holds it
		call(opUnlock, "k", "x", 0),
		call(opLock, "k", "y", time.Second), // granted: after the unlock
		call(opRefresh, "k", "y", time.Second),
		call(opLock, "k2", "z", time.Hour), // beyond MaxTTL
		call("steal", "k", "w", time.Second),
	}, ",") + "]"
	status, answers := post(body)
	if status != http.StatusOK || len(answers) != 7 {
		t.Fatalf("batch: status %d, %d answers", status, len(answers))
	}
	want := []struct {
		ok, err bool
	}{{true, false}, {false, false}, {true, false}, {true, false}, {true, false}, {false, true}, {false, true}}
	for i, w := range want {
		if answers[i].OK != w.ok || (answers[i].Error != "") != w.err {
			t.Errorf("answer %d = %+v, want ok %v, error %v", i, answers[i], w.ok, w.err)
		}
	}
	if answers[1].Reason == "" {
		t.Error("a refusal without a reason")
	}
	var many []string
	for i := range maxBatch + 1 {
		many = append(many, call(opLock, fmt.Sprint("n", i), "x", time.Second))
	}
	for what, b := range map[string]string{
		"empty":     "[]",
		"too many":  "[" + strings.Join(many, ",") + "]",
		"not json":  "[{",
		"an object": call(opLock, "k", "x", time.Second),
	} {
		if status, _ := post(b); status != http.StatusBadRequest {
			t.Errorf("%s batch: status %d, want 400", what, status)
		}
	}
	if _, n := tb.Len(); n != 1 {
		t.Fatalf("%d leases after the batches, want y's alone", n)
	}
}
