package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shardstore/shardstore/internal/cluster"
	"github.com/shardstore/shardstore/internal/consensus"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/release"
)

// Rolling expansion of a cluster (docs/pools.md): the existing nodes are
// restarted one at a time with a pool appended, the new pool's nodes
// start with the whole list. The deployment's pool list is recorded in
// the consensus group (cluster.PoolList): the first node started with
// the recorded list plus appended pools proposes the expansion (a
// compare-and-set: committed once), any other list is refused. New
// nodes join the consensus group through raft's membership changes (the
// leader accepts nodes of the recorded list), lock on the original lock
// nodes (dlock.Options.Outside), and the appended pools take new keys
// only once every node of the list runs with it and the new pool is
// formatted (a round on the consensus leader marks the list complete).

// expansion is a cluster node's part in the pool list.
type expansion struct {
	// list is the recorded pool list as this node last read it.
	list atomic.Pointer[cluster.PoolList]
	// join is set when this node's consensus log is new and another node
	// has one: it joins the group instead of bootstrapping it.
	join bool
	// readd is set by --readd-removed-pools: this node's appended pools
	// may name drives of pools taken out of the deployment.
	readd bool
}

// expansionRoundEvery is how often the leader looks whether an expansion
// under way is complete.
const expansionRoundEvery = 5 * time.Second

// hasConsensusLog reports whether one of this node's drives holds a
// consensus log.
func (n *clusterNode) hasConsensusLog() bool {
	for _, d := range n.top.Drives {
		if d.Node != n.self {
			continue
		}
		if _, err := os.Stat(filepath.Join(drive.ClusterStateDir(d.Path), "raft.db")); err == nil {
			return true
		}
	}
	return false
}

// decideJoin tells, for a node without a consensus log in a deployment
// that exists, whether it joins the group (another node has a log: this
// node is new, or its log was wiped) or bootstraps it with the command
// line's nodes (no node has one: a deployment from before the consensus
// group, every node starting its log at once, with the same list). A
// node none of whose drives is formatted never bootstraps an existing
// deployment: it waits for a node that has a log.
func (n *clusterNode) decideJoin(ctx context.Context, stderr io.Writer) (bool, error) {
	blank := n.localDeployment() == ""
	last := time.Now()
	for {
		answered, group := 0, ""
		for _, p := range n.top.Nodes {
			if p == n.top.Nodes[n.self] {
				continue
			}
			hctx, cancel := context.WithTimeout(ctx, helloTimeout)
			h, err := n.peers.Hello(hctx, p)
			cancel()
			if err == nil {
				answered++
				if h.Group {
					group = p
				}
			}
		}
		switch {
		case group != "":
			fmt.Fprintf(stderr, "Cluster: this node has no consensus log and %s has one: it joins the consensus group (a membership change), it does not start a new one\n", group)
			return true, nil
		case answered == len(n.top.Nodes)-1 && !blank:
			return false, nil
		}
		if time.Since(last) >= 5*time.Second {
			last = time.Now()
			fmt.Fprintf(stderr, "Cluster: this node has no consensus log; waiting for a node that has one (%d of %d others answered)\n", answered, len(n.top.Nodes)-1)
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("cluster: no other node with a consensus log answered within %v: %w", clusterStartWait, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// mayJoin, on the consensus leader, accepts a node into the group when
// the recorded pool list names it at that address.
func (n *clusterNode) mayJoin(id, address string) error {
	l, _, found, err := n.readPoolList(context.Background(), false)
	switch {
	case err != nil:
		return fmt.Errorf("the recorded pool list cannot be read: %w", err)
	case !found:
		return errors.New("no pool list is recorded yet: restart an existing node with the new pool appended to its arguments first")
	case !slices.Contains(l.Nodes(), id):
		return fmt.Errorf("node %s has no drive in the recorded pool list (%d pools over %d nodes): restart an existing node with the new pool appended to its arguments to record the expansion", id, len(l.Pools), len(l.Nodes()))
	case "http://"+address != id:
		return fmt.Errorf("node %s asked to join from address %s", id, address)
	}
	return nil
}

// readPoolList reads the recorded pool list (fresh: through the leader).
func (n *clusterNode) readPoolList(ctx context.Context, fresh bool) (cluster.PoolList, uint64, bool, error) {
	e, err := n.state.Get(ctx, cluster.PoolListSpace, cluster.PoolListKey, fresh)
	if errors.Is(err, consensus.ErrNotFound) {
		return cluster.PoolList{}, 0, false, nil
	}
	if err != nil {
		return cluster.PoolList{}, 0, false, err
	}
	l, err := cluster.ParsePoolList(e.Value)
	return l, e.Index, err == nil, err
}

// loadPoolList re-reads the recorded list from this node's applied state.
func (n *clusterNode) loadPoolList() {
	l, _, found, err := n.readPoolList(context.Background(), false)
	if err != nil {
		n.log.Warn("reading the recorded pool list", "err", err)
		return
	}
	if found {
		n.exp.list.Store(&l)
		n.followLocks(l) // locknodes.go
	}
}

// newKeyPools is how many pools take new keys (engine ClusterConfig).
func (n *clusterNode) newKeyPools() int {
	if l := n.exp.list.Load(); l != nil {
		if n.runsRemovedPools(l) {
			return 0 // every pool: the decommissioned ones take none anyway (locknodes.go)
		}
		return l.NewKeyPools
	}
	return 0
}

// prepareMembership brings this node into the deployment's pool list
// and consensus group, and waits for the other nodes (Peers.Await): a
// new deployment waits for every node, then records the list; a joining
// node waits for every node (its pool is formatted only with all its
// drives present), then joins the group once an expansion naming it is
// recorded; any other node first plans its list against the recorded
// one (proposing an expansion, or refused), then waits for a majority,
// or for every node while an expansion is under way.
func (n *clusterNode) prepareMembership(ctx context.Context, stderr io.Writer) (cluster.PoolList, error) {
	progress := func(waiting []string) {
		fmt.Fprintf(stderr, "Cluster: still waiting for %s\n", strings.Join(waiting, ", "))
	}
	if n.fresh || n.exp.join {
		// A new node (blank drives) waits for every node: its pool is
		// formatted only with all its drives present. A node whose log
		// was wiped needs a majority, as any restart.
		all := n.fresh || n.hello.Deployment == ""
		if err := n.peers.Await(ctx, n.hello, all, 15*time.Second, progress); err != nil {
			return cluster.PoolList{}, err
		}
	}
	if n.exp.join {
		if err := n.joinGroup(ctx, stderr); err != nil {
			return cluster.PoolList{}, err
		}
	}
	list, err := n.planPools(ctx, stderr)
	if err != nil {
		return cluster.PoolList{}, err
	}
	if !n.exp.join {
		// A node stopped between being added as a non-voter and being
		// made a voter finishes joining (its configuration is current:
		// planPools read through the leader).
		if voters, err := n.state.Voters(); err == nil && len(voters) > 0 && !slices.Contains(voters, n.top.ID(n.self)) {
			fmt.Fprintf(stderr, "Cluster: this node is not a voter of the consensus group yet; asking to be made one\n")
			if err := n.joinGroup(ctx, stderr); err != nil {
				return cluster.PoolList{}, err
			}
		}
	}
	if !n.fresh && !n.exp.join {
		if err := n.peers.Await(ctx, n.hello, !list.Complete(), 15*time.Second, progress); err != nil {
			return cluster.PoolList{}, err
		}
	}
	return list, nil
}

// joinGroup joins the consensus group, waiting while the leader refuses
// this node because no expansion names it yet.
func (n *clusterNode) joinGroup(ctx context.Context, stderr io.Writer) error {
	var via []consensus.Member
	for i := range n.top.Nodes {
		via = append(via, consensus.Member{ID: n.top.ID(i), Address: n.top.Host(i)})
	}
	said := ""
	for {
		err := n.state.Join(ctx, via, func(s string) { fmt.Fprintf(stderr, "Cluster: %s\n", s) })
		if err == nil {
			fmt.Fprintf(stderr, "Cluster: this node is a voting member of the consensus group\n")
			return nil
		}
		if !errors.Is(err, consensus.ErrJoinRefused) {
			return fmt.Errorf("cluster: %w", err)
		}
		if msg := err.Error(); msg != said {
			said = msg
			fmt.Fprintf(stderr, "Cluster: the consensus group does not take this node yet, waiting: %v\n", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: not taken into the consensus group within %v: %w", clusterStartWait, err)
		case <-time.After(2 * time.Second):
		}
	}
}

// planPools records this node's pool list, or the expansion it makes,
// in the consensus group, or refuses the start (cluster.PlanStart). With
// no list recorded yet (a deployment from before the record), the list
// of the nodes already running (the shortest list of which this node's
// appends pools) is recorded first.
func (n *clusterNode) planPools(ctx context.Context, stderr io.Writer) (cluster.PoolList, error) {
	mine := cluster.PoolListOf(n.top)
	deadline := time.Now().Add(2 * time.Minute)
	var last error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		rec, version, found, err := n.readPoolList(ctx, true)
		if err == nil && !found {
			base := n.runningList(ctx, mine)
			b, _ := json.Marshal(base)
			if _, err = n.state.Put(ctx, cluster.PoolListSpace, cluster.PoolListKey, 0, b); err == nil {
				continue // read it back, then plan against it
			}
		}
		if err != nil {
			if why := n.removedNode(ctx, mine); why != "" {
				return cluster.PoolList{}, fmt.Errorf("cluster: %w: %s", cluster.ErrPoolList, why)
			}
			last = err
			time.Sleep(500 * time.Millisecond)
			continue
		}
		n.loadGates() // as of the fresh read: the pools gate may have just been applied
		if next, applies, err := n.planShrink(ctx, rec, mine, version); applies {
			if errors.Is(err, cluster.ErrPoolList) {
				return cluster.PoolList{}, fmt.Errorf("cluster: %w", err)
			}
			if err != nil {
				last = err
				time.Sleep(500 * time.Millisecond)
				continue // another node recorded it first: plan against its record
			}
			n.exp.list.Store(&next)
			return next, nil
		}
		if n.exp.readd {
			rec = cluster.ForgetRemoved(rec, mine) // the operator adds removed drives again on purpose
		}
		next, propose, err := cluster.PlanStart(rec, mine, func() error { return n.gate(release.Pools) })
		if err != nil {
			return cluster.PoolList{}, fmt.Errorf("cluster: %w", err)
		}
		if propose {
			b, _ := json.Marshal(next)
			if _, err := n.state.Put(ctx, cluster.PoolListSpace, cluster.PoolListKey, version, b); err != nil {
				last = err
				continue // another node proposed first: plan against its record
			}
			fmt.Fprintf(stderr, "Cluster: expansion recorded: %d pools of %v drives over %d nodes; new objects go to the new pools once every node runs with this list and the new pools are formatted\n",
				len(next.Pools), next.Pools, len(next.Nodes()))
			rec = next
		}
		n.exp.list.Store(&rec)
		return rec, nil
	}
	return cluster.PoolList{}, fmt.Errorf("cluster: the pool list could not be recorded in the consensus group: %v", last)
}

// runningList is the list to record first when none is: the shortest
// list of a running node that this node's list appends pools to, or
// this node's own.
func (n *clusterNode) runningList(ctx context.Context, mine cluster.PoolList) cluster.PoolList {
	base := mine
	for _, p := range n.top.Nodes {
		if p == n.top.Nodes[n.self] {
			continue
		}
		hctx, cancel := context.WithTimeout(ctx, helloTimeout)
		h, err := n.peers.Hello(hctx, p)
		cancel()
		if err != nil || h.Deployment == "" {
			continue
		}
		l := h.PoolList()
		if rel, _ := cluster.Relate(l, base); rel == cluster.Prefix {
			l.LockNodes = l.Nodes()
			base = l
		}
	}
	return base
}

// runExpansion re-reads the pool list and, on the leader, marks an
// expansion complete once every node of it runs with it, until done is
// closed.
func (n *clusterNode) runExpansion(done <-chan struct{}) {
	t := time.NewTicker(expansionRoundEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		n.loadPoolList()
		l := n.exp.list.Load()
		if l == nil || !n.state.IsLeader() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), expansionRoundEvery)
		if l.Complete() {
			// Lock nodes moving: the next phase once every node runs
			// this one (locknodes.go).
			if err := n.lockRound(ctx); err != nil && !errors.Is(err, consensus.ErrConflict) {
				n.log.Warn("moving the lock nodes", "err", err)
			}
			// A pool removed: the nodes holding none of the list's
			// drives leave the consensus group (shrink.go).
			if err := n.shrinkRound(ctx, *l); err != nil {
				n.log.Warn("pool removal: removing members from the consensus group", "err", err)
			}
			cancel()
			continue
		}
		if err := n.expansionRound(ctx); err != nil && !errors.Is(err, consensus.ErrConflict) {
			n.log.Debug("expansion round", "err", err)
		}
		cancel()
	}
}

// expansionRound asks every node of the recorded list for its hello and
// marks the list complete when all run with it.
func (n *clusterNode) expansionRound(ctx context.Context) error {
	rec, version, found, err := n.readPoolList(ctx, true)
	if err != nil || !found || rec.Complete() {
		return err
	}
	done, blocked := cluster.Completes(rec, n.hellosOf(ctx, rec))
	if !done {
		n.log.Debug("expansion under way", "waiting_for", strings.Join(blocked, "; "))
		return nil
	}
	rec.NewKeyPools = len(rec.Pools)
	b, _ := json.Marshal(rec)
	if _, err := n.state.Put(ctx, cluster.PoolListSpace, cluster.PoolListKey, version, b); err != nil {
		return err
	}
	n.exp.list.Store(&rec)
	fmt.Fprintf(n.stderr, "Cluster: expansion complete: every node runs with the %d pools; new objects go to every pool\n", len(rec.Pools))
	return nil
}
