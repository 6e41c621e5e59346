package engine

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// flakyState is a memState whose reads fail while fail is set.
type flakyState struct {
	*memState
	fail atomic.Bool
}

func (f *flakyState) Get(ctx context.Context, space, key string, fresh bool) ([]byte, uint64, error) {
	if f.fail.Load() {
		return nil, 0, errors.New("no leader (test)")
	}
	return f.memState.Get(ctx, space, key, fresh)
}

// syncBuf is a log sink safe for the engine's goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A follower whose read of the decommission state fails keeps the state
// it applied last and says so once (not at every poll); when reads work
// again it says so and applies the state it reads.
func TestFollowDecomReportsReadErrors(t *testing.T) {
	st := &flakyState{memState: newMemState()}
	logs := &syncBuf{}
	e, _ := testEngine(t, 4, Config{Logger: slog.New(slog.NewTextHandler(logs, nil)), Heal: HealConfig{Disabled: true},
		Cluster: &ClusterConfig{FormatNew: true, NodeID: "n1", State: st, ScansHere: func() bool { return false }}})
	ctx := context.Background()
	id := e.pools[0].id
	doc := []byte(`{"pools":{"` + id + `":{"state":"draining"}}}`)
	if _, err := e.WriteConfig(ctx, decomDoc, 0, doc); err != nil {
		t.Fatal(err)
	}
	e.poolState.setDraining(nil) // as if this node had not read it yet
	var last string
	st.fail.Store(true)
	for range 3 {
		e.followDecom(ctx, &last)
	}
	if e.poolState.isDraining(id) {
		t.Fatal("a failed read applied a state")
	}
	if got := strings.Count(logs.String(), "cannot read its state"); got != 1 {
		t.Fatalf("the failing read was reported %d times, want once:\n%s", got, logs.String())
	}
	if !strings.Contains(logs.String(), "no leader (test)") {
		t.Fatalf("the report does not name the error:\n%s", logs.String())
	}
	st.fail.Store(false)
	e.followDecom(ctx, &last)
	if !e.poolState.isDraining(id) || last != "" || !strings.Contains(logs.String(), "readable again") {
		t.Fatalf("after reads work again: draining %v, last %q\n%s", e.poolState.isDraining(id), last, logs.String())
	}
}
