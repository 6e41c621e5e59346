package engine

import "context"

// Expansion says whether a rolling expansion is under way: the pools
// appended to the deployment take no new keys until every node runs
// with them (ClusterConfig.NewKeyPools, the recorded pool list
// config/pools/layout on a cluster; docs/pools.md).
type Expansion struct {
	// Pools is how many pools this node serves.
	Pools int `json:"pools"`
	// NewKeyPools is how many of them, from the first, take new keys.
	NewKeyPools int `json:"newKeyPools"`
	// State is "under way" while NewKeyPools < Pools, else "complete".
	State string `json:"state"`
}

// Expansion states.
const (
	ExpansionUnderWay = "under way"
	ExpansionComplete = "complete"
)

// Expansion reports whether an expansion of the pools is under way.
func (e *Engine) Expansion(context.Context) Expansion {
	n := len(e.pools)
	x := Expansion{Pools: n, NewKeyPools: e.cfg.Cluster.newKeyPools(n), State: ExpansionComplete}
	if x.NewKeyPools < n {
		x.State = ExpansionUnderWay
	}
	return x
}
