package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A rebalance moves no key into the pools an expansion under way
// appends (a node still on the old list would not find it there, and
// canceling the expansion relies on them holding no key): they are not
// among its pools, and a rebalance of the old pool alone is refused,
// saying why.
func TestRebalanceLeavesPoolsOfAnExpansionUnderWay(t *testing.T) {
	e, err := New(Config{Paths: poolPaths(t.TempDir(), 4, 4), Pools: []int{4, 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	open := 1
	// The pools, config documents and cluster config of a cluster node
	// whose recorded list lets open pools take new keys.
	node := &Engine{pools: e.pools, shared: e.shared, cfg: Config{Cluster: &ClusterConfig{NewKeyPools: func() int { return open }}}}
	pools, err := node.rebalPools(ctx)
	if err != nil || len(pools) != 1 || pools[0].index != 0 {
		t.Fatalf("rebalance pools under way: %v %v", len(pools), err)
	}
	if _, err := node.StartRebalance(ctx, 0.05); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "expansion is under way") {
		t.Fatalf("rebalance during an expansion: %v", err)
	}
	open = 2
	if pools, err := node.rebalPools(ctx); err != nil || len(pools) != 2 {
		t.Fatalf("rebalance pools once complete: %v %v", len(pools), err)
	}
}
