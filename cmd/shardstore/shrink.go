package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/shardstore/shardstore/internal/cluster"
	"github.com/shardstore/shardstore/internal/consensus"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/release"
)

// Removing a decommissioned pool from a cluster (docs/pools.md): the
// nodes are restarted one at a time without the pool's argument; the
// first records the shortened list (cluster.PlanShrink: only pools whose
// decommission is complete, read from the engine's documents in the
// consensus group), and the consensus leader then removes the nodes that
// hold no drive of the remaining pools from the group (RemoveServer),
// once every remaining node runs with the shortened list, and says so:
// from then on they can be stopped.

// The engine's config documents this file reads (engine/decommission.go):
// the pools' ids in command-line order, and every decommission's state.
const (
	knownPoolsDoc = "pools/known"
	decomStateDoc = "pools/decommission"
)

// poolDecommissioned says why pool p (0-based) of the recorded list rec
// is not fully decommissioned, or nil when it is. The pool's id is the
// p-th of the deployment's known pool ids (written by nodes that run
// with rec, in its order).
func (n *clusterNode) poolDecommissioned(ctx context.Context, rec cluster.PoolList, p int) error {
	e, err := n.state.Get(ctx, "config", knownPoolsDoc, true)
	if err != nil {
		return fmt.Errorf("the deployment's pool ids cannot be read (%w)", err)
	}
	var known struct {
		IDs []string `json:"ids"`
	}
	if err := json.Unmarshal(e.Value, &known); err != nil {
		return fmt.Errorf("the deployment's pool ids cannot be read (%w)", err)
	}
	if len(known.IDs) != len(rec.Pools) {
		return fmt.Errorf("the deployment records %d pool ids for %d pools, so this pool's id is not known (start every node with the deployment's arguments first)", len(known.IDs), len(rec.Pools))
	}
	id := known.IDs[p]
	var doc struct {
		Pools map[string]*engine.DecomStatus `json:"pools"`
	}
	e, err = n.state.Get(ctx, "config", decomStateDoc, true)
	switch {
	case errors.Is(err, consensus.ErrNotFound):
	case err != nil:
		return fmt.Errorf("the decommission state cannot be read (%w)", err)
	default:
		if err := json.Unmarshal(e.Value, &doc); err != nil {
			return fmt.Errorf("the decommission state cannot be read (%w)", err)
		}
	}
	st := doc.Pools[id]
	switch {
	case st == nil:
		return fmt.Errorf("it (id %s) is not being decommissioned", id)
	case st.State != engine.DecomComplete:
		return fmt.Errorf("its decommission (id %s) is %s: %d objects moved, %d failed, %d multipart uploads left", id, st.State, st.Objects, st.Failed, st.Uploads)
	}
	return nil
}

// planShrink records the shortened list when this node's list is the
// recorded one minus whole pools; applies is false when it is not.
func (n *clusterNode) planShrink(ctx context.Context, rec, mine cluster.PoolList, version uint64) (next cluster.PoolList, applies bool, err error) {
	next, applies, err = cluster.PlanShrink(rec, mine, func(p int) error { return n.poolDecommissioned(ctx, rec, p) })
	if !applies || err != nil {
		return next, applies, err
	}
	if err := cluster.MayRemove(n.gate(release.PoolRemoval)); err != nil {
		return rec, true, err
	}
	b, _ := json.Marshal(next)
	if _, err := n.state.Put(ctx, cluster.PoolListSpace, cluster.PoolListKey, version, b); err != nil {
		return rec, true, err
	}
	removed, _ := cluster.RemovedPools(rec, mine)
	for i := range removed {
		removed[i]++
	}
	fmt.Fprintf(n.stderr, "Cluster: pool removal recorded: pool(s) %v left out, %d pools of %v drives over %d nodes remain; nodes holding no drive of them leave the consensus group once every remaining node runs with this list\n",
		removed, len(next.Pools), next.Pools, len(next.Nodes()))
	if next.LockMove != nil {
		fmt.Fprintf(n.stderr, "Cluster: the pools left out hold lock nodes: the locks move from %s to %s (joint phase, epoch %d: every node locks on both until all run it)\n",
			strings.Join(next.LockNodes, ", "), strings.Join(next.LockMove.To, ", "), next.LockEpoch)
	}
	return next, true, nil
}

// shrinkRound, on the leader, removes from the consensus group the
// members that hold no drive of the recorded list, once every node of
// the list runs with it. A leader that is leaving hands leadership over.
func (n *clusterNode) shrinkRound(ctx context.Context, rec cluster.PoolList) error {
	members, err := n.state.Members()
	if err != nil {
		return err
	}
	leaving := cluster.Leaving(rec, members)
	if len(leaving) == 0 {
		return nil
	}
	if done, blocked := cluster.Completes(rec, n.hellosOf(ctx, rec)); !done {
		n.log.Debug("pool removal: members leave once every node runs with the list", "waiting_for", strings.Join(blocked, "; "))
		return nil
	}
	if !n.locksSettled(ctx, rec) { // locknodes.go: none leaves while nodes may lock on it
		return nil
	}
	keep := rec.Nodes()
	removed, _, err := n.state.RemoveMembers(ctx, func(id string) bool { return slices.Contains(keep, id) })
	for _, id := range removed {
		fmt.Fprintf(n.stderr, "Cluster: node %s holds no drive of the deployment's pools: removed from the consensus group; it can be stopped\n", id)
	}
	return err
}

// hellosOf asks every node of rec for its hello (this node answers its
// own), by node id; nodes that do not answer are left out.
func (n *clusterNode) hellosOf(ctx context.Context, rec cluster.PoolList) map[string]cluster.Hello {
	peers := cluster.NewPeers(n.key, n.hc, nil, n.log)
	hellos := map[string]cluster.Hello{}
	for _, id := range rec.Nodes() {
		if id == n.top.ID(n.self) {
			h := n.hello
			h.Deployment = n.peerSv.Deployment()
			hellos[id] = h
			continue
		}
		hctx, cancel := context.WithTimeout(ctx, helloTimeout)
		h, err := peers.Hello(hctx, n.top.Scheme+"://"+strings.TrimPrefix(id, "http://"))
		cancel()
		if err == nil {
			hellos[id] = h
		}
	}
	return hellos
}
