package engine

import (
	"context"
	"fmt"
)

// ExpansionCancel is what canceling an expansion under way did
// (ClusterConfig.CancelExpansion; docs/pools.md "Canceling an
// expansion").
type ExpansionCancel struct {
	// Pools is how many pools the deployment keeps; Canceled are the
	// 1-based positions of the pools taken out of its list.
	Pools    int   `json:"pools"`
	Canceled []int `json:"canceled"`
	// Leaving are the nodes that hold no drive of the kept pools: the
	// consensus leader removes them from the group once every node of
	// the list runs with it; then they can be stopped.
	Leaving []string `json:"leaving,omitempty"`
	// Restart are the nodes that run with the longer list now (or did
	// not answer): restart each with the deployment's arguments.
	Restart []string `json:"restart,omitempty"`
}

// CancelExpansion cancels the rolling expansion under way while its
// appended pools take no new keys: the recorded pool list goes back,
// their nodes leave the consensus group, the other nodes keep serving.
// Refused (ErrInvalidArgument) when no expansion is under way, and on a
// single server (its pools take keys once it starts with them).
func (e *Engine) CancelExpansion(ctx context.Context) (ExpansionCancel, error) {
	if e.cfg.Cluster == nil || e.cfg.Cluster.CancelExpansion == nil {
		return ExpansionCancel{}, fmt.Errorf("%w: no expansion is under way: a single server's pools take new keys as soon as it starts with them; to take a pool out, decommission it (shardstore admin pool decommission start POOL)", ErrInvalidArgument)
	}
	return e.cfg.Cluster.CancelExpansion(ctx)
}
