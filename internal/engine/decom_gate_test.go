package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// reopenPool removes pool p's entry from the decommission document (as
// if it had never been decommissioned) and applies it.
func reopenPool(t *testing.T, e *Engine, p *pool) {
	t.Helper()
	if _, err := e.updateDecom(context.Background(), func(doc *decomDocument) error {
		delete(doc.Pools, p.id)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A write that picked its pool before the decommission of that pool was
// known (here: started between the write's pick and its commit) must not
// commit a new key there: the pass that completes the decommission may
// already have walked the pool, and the key would be lost with it
// (TestClusterShrink found it). The commit is refused as busy; the
// client's retry picks an open pool.
func TestDecomRefusesNewKeyPickedBeforeDrain(t *testing.T) {
	root := t.TempDir()
	e, err := New(Config{Paths: poolPaths(root, 4, 4), Pools: []int{4, 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	refused, placed := 0, 0
	for i := 0; i < 40 && (refused == 0 || placed == 0); i++ {
		reopenPool(t, e, e.pools[1])
		key := fmt.Sprintf("k/%02d", i)
		_, err := e.putObject(ctx, "bucket", key, strings.NewReader("body"), 4, PutOptions{}, func() {
			if _, err := e.StartDecommission(ctx, "2"); err != nil {
				t.Error(err)
			}
		})
		found := holdersOf(t, e, key)
		switch {
		case errors.Is(err, ErrBusy):
			refused++
			if poolsHolding(found) != 0 {
				t.Errorf("%s refused but stored: %v", key, found)
			}
		case err != nil:
			t.Fatalf("put %s: %v", key, err)
		default:
			placed++
			if found[1] != 0 || found[0] == 0 {
				t.Fatalf("%s acknowledged into pool 2 after its decommission started: holders %v", key, found)
			}
		}
	}
	if refused == 0 {
		t.Fatal("no write picked pool 2 in 40 tries: the refusal was not exercised")
	}
	// The retry of a refused write lands in pool 1.
	if _, err := e.PutObject(ctx, "bucket", "retry", strings.NewReader("body"), 4, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if found := holdersOf(t, e, "retry"); found[1] != 0 {
		t.Fatalf("retry went to the draining pool: %v", found)
	}
}

// A change notice for the decommission document (another node wrote it)
// applies it here before it is answered.
func TestDecomNoticeApplies(t *testing.T) {
	root := t.TempDir()
	e, err := New(Config{Paths: poolPaths(root, 4, 4), Pools: []int{4, 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	id := e.pools[1].id
	data := fmt.Sprintf(`{"pools":{%q:{"pool_id":%q,"state":"draining"}}}`, id, id)
	// Written behind the engine's back, as another node would.
	if _, err := e.shared.writeConfig(ctx, decomDoc, 0, []byte(data)); err != nil {
		t.Fatal(err)
	}
	if err := e.ApplyDecommission(ctx); err != nil {
		t.Fatal(err)
	}
	if !e.poolState.isDraining(id) {
		t.Fatal("pool 2 not draining after the notice")
	}
	for range 20 {
		if p := e.pickPool(ctx); p == e.pools[1] {
			t.Fatal("a new key picked the draining pool")
		}
	}
}

// A pass that finds the pool empty completes the decommission only if
// every node confirmed, before it started, that it places no new key in
// the pool.
func TestDecomCompletesOnlyAfterConfirm(t *testing.T) {
	root := t.TempDir()
	var refuse atomic.Bool
	refuse.Store(true)
	cc := &ClusterConfig{FormatNew: true, Confirm: func(context.Context, string, string) error {
		if refuse.Load() {
			return errors.New("node n3 did not answer")
		}
		return nil
	}}
	e, err := New(Config{Paths: poolPaths(root, 4, 4), Pools: []int{4, 4}, Cluster: cc})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.stopDecom() // the passes are run by hand
	ctx := context.Background()
	if _, err := e.StartDecommission(ctx, "2"); err != nil {
		t.Fatal(err)
	}
	state := func() DecomStatus {
		t.Helper()
		st, err := e.DecommissionStatus(ctx)
		if err != nil || len(st) != 1 {
			t.Fatalf("status: %v %v", st, err)
		}
		return st[0]
	}
	if err := e.decomPass(ctx, e.pools[1]); err != nil {
		t.Fatal(err)
	}
	if st := state(); st.State != DecomDraining || !strings.Contains(st.LastError, "n3") {
		t.Fatalf("empty pool without every node's confirmation: %+v, want draining naming n3", st)
	}
	refuse.Store(false)
	if err := e.decomPass(ctx, e.pools[1]); err != nil {
		t.Fatal(err)
	}
	if st := state(); st.State != DecomComplete {
		t.Fatalf("after the confirmation: %+v, want complete", st)
	}
}
