package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/shardstore/shardstore/internal/cluster"
	"github.com/shardstore/shardstore/internal/dlock"
)

// Moving the lock nodes (docs/pools.md, "Removing the first pool";
// internal/dlock's doc): removing a pool that holds lock nodes records
// the move's joint phase in the pool list (cluster.PlanShrink); every
// node's locker follows the recorded phase as its applied state reaches
// it (followLocks) and reports it in its hello; the consensus leader
// records the new phase once every node runs joint with no lock of the
// old one (lockRound, cluster.AdvanceLocks), and removes the leaving
// nodes from the group only once every remaining node runs the new one
// (locksSettled).

// lockMover is a cluster node's part in it.
type lockMover struct {
	// locker is the node's lock client, once made (openEngine).
	locker atomic.Pointer[dlock.Locker]
	mu     sync.Mutex
	// said is the latest message printed, so a round repeats none.
	said string
	// removed caches runsRemovedPools.
	removed atomic.Pointer[removedMemo]
}

// lockPeers are the dlock peers of a set of lock node ids (this node's
// own id stands for its table).
func (n *clusterNode) lockPeers(ids []string) []dlock.Peer {
	var out []dlock.Peer
	for _, id := range ids {
		out = append(out, dlock.Peer{ID: id, Endpoint: n.top.Scheme + "://" + strings.TrimPrefix(id, "http://")})
	}
	return out
}

// newLocker makes the lock client over the list's lock nodes (both sets
// while they move); a node that is none of them locks from outside.
func (n *clusterNode) newLocker(list cluster.PoolList) *dlock.Locker {
	if cur := n.exp.list.Load(); cur != nil && cur.LockEpoch > list.LockEpoch {
		list = *cur // read meanwhile: a later phase
	}
	self := n.top.ID(n.self)
	sets := list.LockSets()
	// Made without lock nodes, then given the recorded ones (one set, or
	// both while they move) under the record's epoch.
	l := dlock.NewLocker(self, n.table, nil, dlock.Options{Key: n.key, Client: n.hc, TTL: clusterLockTTL, Outside: true, Epoch: -1})
	var peers [][]dlock.Peer
	for _, s := range sets {
		peers = append(peers, n.lockPeers(s))
	}
	if err := l.SetNodes(list.LockEpoch, peers...); err != nil {
		n.log.Warn("the recorded lock nodes", "err", err)
	}
	if !slices.Contains(slices.Concat(sets...), self) {
		n.log.Info("this node locks on the deployment's lock nodes", "lock_nodes", strings.Join(slices.Concat(sets...), ","))
	}
	n.locks.locker.Store(l)
	n.peerSv.SetLocks(l.Phase)
	if cur := n.exp.list.Load(); cur != nil {
		n.followLocks(*cur) // a record applied while the locker was made
	}
	return l
}

// followLocks switches this node's locker to the lock nodes of the
// recorded list l when it records a later phase.
func (n *clusterNode) followLocks(l cluster.PoolList) {
	lk := n.locks.locker.Load()
	if lk == nil {
		return
	}
	if e, _ := lk.Phase(); l.LockEpoch <= e {
		return
	}
	var sets [][]dlock.Peer
	for _, s := range l.LockSets() {
		sets = append(sets, n.lockPeers(s))
	}
	if err := lk.SetNodes(l.LockEpoch, sets...); err != nil {
		n.log.Warn("switching the lock nodes", "err", err)
		return
	}
	if l.LockMove != nil {
		fmt.Fprintf(n.stderr, "Cluster: the lock nodes are moving: this node locks on a majority of %s and a majority of %s (joint, epoch %d)\n",
			strings.Join(l.LockNodes, ", "), strings.Join(l.LockMove.To, ", "), l.LockEpoch)
	} else {
		fmt.Fprintf(n.stderr, "Cluster: this node locks on the lock nodes %s (epoch %d)\n", strings.Join(l.LockNodes, ", "), l.LockEpoch)
	}
}

// lockReports asks every node of ids for its locker's phase (this node
// answers its own).
func (n *clusterNode) lockReports(ctx context.Context, ids []string) map[string]cluster.LockReport {
	peers := cluster.NewPeers(n.key, n.hc, nil, n.log)
	out := map[string]cluster.LockReport{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range ids {
		if id == n.top.ID(n.self) {
			if lk := n.locks.locker.Load(); lk != nil {
				e, older := lk.Phase()
				out[id] = cluster.LockReport{Epoch: e, Older: older}
			}
			continue
		}
		wg.Go(func() {
			hctx, cancel := context.WithTimeout(ctx, helloTimeout)
			defer cancel()
			h, err := peers.Hello(hctx, n.top.Scheme+"://"+strings.TrimPrefix(id, "http://"))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				out[id] = cluster.LockReportOf(h)
			case errors.Is(err, syscall.ECONNREFUSED):
				out[id] = cluster.LockReport{Stopped: true}
			}
		})
	}
	wg.Wait()
	return out
}

// lockRound, on the leader, records the next phase of a move of the lock
// nodes under way once every node that can lock runs the current one.
func (n *clusterNode) lockRound(ctx context.Context) error {
	rec, version, found, err := n.readPoolList(ctx, true)
	if err != nil || !found || rec.LockMove == nil {
		return err
	}
	members, err := n.state.Members()
	if err != nil {
		return err
	}
	takers := cluster.LockTakers(rec, members)
	next, advance, blocked := cluster.AdvanceLocks(rec, takers, n.lockReports(ctx, takers))
	if !advance {
		n.sayLocks(fmt.Sprintf("Cluster: lock hand-over (joint, epoch %d): waiting for %s\n", rec.LockEpoch, strings.Join(blocked, "; ")))
		return nil
	}
	b, _ := json.Marshal(next)
	if _, err := n.state.Put(ctx, cluster.PoolListSpace, cluster.PoolListKey, version, b); err != nil {
		return err
	}
	n.exp.list.Store(&next)
	n.followLocks(next)
	fmt.Fprintf(n.stderr, "Cluster: lock hand-over: every node locks on both sets and holds no lock of the old one; the lock nodes are now %s (epoch %d)\n",
		strings.Join(next.LockNodes, ", "), next.LockEpoch)
	return nil
}

// locksSettled, on the leader, reports whether every node of rec runs
// rec's lock nodes (no move under way): the nodes that leave may then
// leave the consensus group.
func (n *clusterNode) locksSettled(ctx context.Context, rec cluster.PoolList) bool {
	if rec.LockEpoch == 0 {
		return true // the lock nodes never moved
	}
	ok, blocked := cluster.LocksSettled(rec, n.lockReports(ctx, rec.Nodes()))
	if !ok {
		n.sayLocks(fmt.Sprintf("Cluster: lock hand-over (epoch %d): the leaving nodes leave once %s\n", rec.LockEpoch, strings.Join(blocked, "; ")))
		return false
	}
	n.sayLocks(fmt.Sprintf("Cluster: lock hand-over complete: every node locks on %s (epoch %d)\n", strings.Join(rec.LockNodes, ", "), rec.LockEpoch))
	return true
}

// sayLocks prints msg unless it is the latest one printed.
func (n *clusterNode) sayLocks(msg string) {
	n.locks.mu.Lock()
	defer n.locks.mu.Unlock()
	if msg == n.locks.said {
		return
	}
	n.locks.said = msg
	fmt.Fprint(n.stderr, msg)
}

// removedMemo caches runsRemovedPools for one recorded list.
type removedMemo struct {
	list *cluster.PoolList
	yes  bool
}

// runsRemovedPools reports whether this node still runs with pools the
// recorded list l left out before some pool it kept (a removal of the
// first pool under way: this node is not restarted yet). The record's
// count of pools taking new keys is then the shortened list's, not this
// node's: the pool at its first place may be the removed one, so every
// pool of this node's takes new keys, the decommissioned ones excepted
// (their drain state keeps them out; only a shrink, after a complete
// decommission, leaves out a pool that is not last). Pools left out at
// the end of this node's list (a shrink of the last pools, or a
// canceled expansion, whose pools are not drained) keep the record's
// count, which names this node's first pools as it names the record's:
// counting every pool there would send new keys to a canceled pool.
func (n *clusterNode) runsRemovedPools(l *cluster.PoolList) bool {
	if m := n.locks.removed.Load(); m != nil && m.list == l {
		return m.yes
	}
	mine := cluster.PoolListOf(n.top)
	removed, ok := cluster.RemovedPools(mine, *l)
	m := &removedMemo{list: l, yes: ok && removedBeforeKept(removed, len(mine.Pools))}
	n.locks.removed.Store(m)
	return m.yes
}

// removedBeforeKept reports whether positions (0-based, ascending, of
// pools left out of a list of n pools) include one before a pool kept:
// not all of them at the list's end.
func removedBeforeKept(positions []int, n int) bool {
	for i, p := range positions {
		if p != n-len(positions)+i {
			return true
		}
	}
	return false
}
