package engine

import (
	"context"
	"testing"
)

// During a rolling expansion the appended pools take no new key
// (ClusterConfig.NewKeyPools); once it completes, all pools do.
func TestNewKeyPoolsDuringAnExpansion(t *testing.T) {
	e, err := New(Config{Paths: poolPaths(t.TempDir(), 4, 4), Pools: []int{4, 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	open := 1
	// pickPool reads the pools, their state and NewKeyPools of the
	// cluster config: an engine of the same pools as a cluster node.
	node := &Engine{pools: e.pools, cfg: Config{Cluster: &ClusterConfig{NewKeyPools: func() int { return open }}}}
	for range 200 {
		if p := node.pickPool(ctx); p.index != 0 {
			t.Fatalf("a new key went to pool %d while the expansion is under way", p.index+1)
		}
	}
	open = 2
	seen := map[int]bool{}
	for range 200 {
		seen[node.pickPool(ctx).index] = true
	}
	if !seen[0] || !seen[1] {
		t.Fatalf("after the expansion new keys went to pools %v, want both", seen)
	}
	for _, k := range []int{0, 3, -1} { // unset or out of range: all pools
		if got := (&ClusterConfig{NewKeyPools: func() int { return k }}).newKeyPools(2); got != 2 {
			t.Errorf("newKeyPools with %d: %d, want 2", k, got)
		}
	}
}
