package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/shardstore/shardstore/internal/cluster"
	"github.com/shardstore/shardstore/internal/consensus"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/release"
)

// Canceling a rolling expansion (docs/pools.md): while the appended pools
// take no new keys (the recorded list's NewKeyPools excludes them), the
// list goes back to the pools before (cluster.PlanCancel, a
// compare-and-set against the version read, so an expansion the leader
// marks complete meanwhile is not canceled), with the appended pools
// recorded as removed (an old node still started with the longer list is
// then refused, not taken for the expansion again). The deployment's
// known pool ids lose the canceled pools' ids, so the old nodes start
// without them. The leader's round (shrinkRound) then removes the nodes
// that hold no drive of the list from the consensus group once every
// node of the list runs with it: the old nodes restarted with the longer
// list are restarted with the old one first.

// cancelAttempts bounds the plan-and-record rounds of a cancel that
// meets concurrent changes of the list.
const cancelAttempts = 5

// cancelExpansion cancels the expansion under way (engine
// ClusterConfig.CancelExpansion); refusals wrap engine.ErrInvalidArgument.
func (n *clusterNode) cancelExpansion(ctx context.Context) (engine.ExpansionCancel, error) {
	var last error
	for range cancelAttempts {
		rec, version, found, err := n.readPoolList(ctx, true)
		if err != nil {
			return engine.ExpansionCancel{}, fmt.Errorf("the recorded pool list cannot be read: %w", err)
		}
		if !found {
			return engine.ExpansionCancel{}, fmt.Errorf("%w: no pool list is recorded: no expansion is under way", engine.ErrInvalidArgument)
		}
		next, leaving, err := cluster.PlanCancel(rec)
		if err == nil {
			err = cluster.MayRemove(n.gate(release.PoolRemoval))
		}
		if err != nil {
			return engine.ExpansionCancel{}, fmt.Errorf("%w: %w", engine.ErrInvalidArgument, err)
		}
		b, _ := json.Marshal(next)
		if _, err := n.state.Put(ctx, cluster.PoolListSpace, cluster.PoolListKey, version, b); err != nil {
			if errors.Is(err, consensus.ErrConflict) {
				last = err
				continue // the leader marked it complete, or another node changed it: plan again
			}
			return engine.ExpansionCancel{}, fmt.Errorf("recording the pool list without the appended pools: %w", err)
		}
		n.exp.list.Store(&next)
		out := engine.ExpansionCancel{Pools: len(next.Pools), Leaving: leaving}
		for p := len(next.Pools); p < len(rec.Pools); p++ {
			out.Canceled = append(out.Canceled, p+1)
		}
		if err := n.forgetKnownPools(ctx, len(rec.Pools), len(next.Pools)); err != nil {
			return out, fmt.Errorf("the expansion is canceled, but the deployment's known pool ids could not be shortened (an old node restarted with the old list may refuse to start, naming the canceled pool's id): %w", err)
		}
		_, blocked := cluster.Completes(next, n.hellosOf(ctx, next))
		for _, b := range blocked {
			node, _, _ := strings.Cut(b, " ")
			out.Restart = append(out.Restart, node)
		}
		fmt.Fprintf(n.stderr, "Cluster: expansion canceled: pool(s) %v taken out of the list, %d pools of %v drives over %d nodes remain; nodes to restart with the old list: %v; nodes %v leave the consensus group once every node runs with it\n",
			out.Canceled, len(next.Pools), next.Pools, len(next.Nodes()), out.Restart, out.Leaving)
		return out, nil
	}
	return engine.ExpansionCancel{}, fmt.Errorf("the recorded pool list kept changing: %w", last)
}

// forgetKnownPools drops the canceled pools' ids from the deployment's
// known pool ids (engine pools/known, in the recorded list's order): a
// node of the list written before the cancel, had pools ids, now keeps
// keep. A list that does not have had ids (the new pool not formatted
// yet) or has fewer is left as it is.
func (n *clusterNode) forgetKnownPools(ctx context.Context, had, keep int) error {
	var last error
	for range cancelAttempts {
		e, err := n.state.Get(ctx, "config", knownPoolsDoc, true)
		if errors.Is(err, consensus.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		var known struct {
			IDs []string `json:"ids"`
		}
		if err := json.Unmarshal(e.Value, &known); err != nil {
			return fmt.Errorf("config %s: %w", knownPoolsDoc, err)
		}
		if len(known.IDs) != had || keep >= had {
			return nil
		}
		known.IDs = known.IDs[:keep]
		b, _ := json.Marshal(known)
		if _, err := n.state.Put(ctx, "config", knownPoolsDoc, e.Index, b); err != nil {
			if errors.Is(err, consensus.ErrConflict) {
				last = err
				continue
			}
			return err
		}
		return nil
	}
	return last
}
