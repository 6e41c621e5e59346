package cluster

import (
	"fmt"
	"slices"
	"strings"
)

// Removing a pool from a cluster (docs/pools.md): once a pool's
// decommission is complete, the nodes are restarted one at a time
// without the pool's argument. The first of them records the shortened
// list in the consensus group (PlanShrink: the recorded list minus
// fully decommissioned pools, a compare-and-set like an expansion); the
// consensus leader then removes from the group the nodes that hold no
// drive of the remaining pools (RemoveServer), after which they can be
// stopped. When the pools left out hold lock nodes, the lock nodes move
// to the nodes that stay first (locknodes.go): the leader removes the
// leaving nodes only once every node locks on the new ones.

// poolDrives cuts a list's drives into its pools' drives.
func (l PoolList) poolDrives() [][]string {
	var out [][]string
	at := 0
	for _, n := range l.Pools {
		if at+n > len(l.Drives) {
			return out
		}
		out = append(out, l.Drives[at:at+n])
		at += n
	}
	return out
}

// RemovedPools reports whether mine is rec with whole pools left out
// (the pools kept in their order, each with the same drives), and the
// 0-based positions in rec of the pools left out (none: the same list).
func RemovedPools(rec, mine PoolList) ([]int, bool) {
	have, want := rec.poolDrives(), mine.poolDrives()
	if len(want) != len(mine.Pools) || len(have) != len(rec.Pools) || len(want) == 0 {
		return nil, false
	}
	var removed []int
	j := 0
	for _, w := range want {
		for j < len(have) && !slices.Equal(have[j], w) {
			removed = append(removed, j)
			j++
		}
		if j == len(have) {
			return nil, false
		}
		j++
	}
	for ; j < len(have); j++ {
		removed = append(removed, j)
	}
	return removed, true
}

// PlanShrink decides what a node started with list mine does when mine
// is the recorded list rec with whole pools left out: applies is false
// when it is not (PlanStart decides). Otherwise it returns the list to
// record (a compare-and-set the caller makes), or an error (ErrPoolList)
// saying why the pools may not be removed: an expansion is under way, a
// pool left out is not fully decommissioned (complete, given a 0-based
// position in rec, says why not). When the pools left out hold lock
// nodes, the list returned starts moving them (LockMove).
func PlanShrink(rec, mine PoolList, complete func(pool int) error) (next PoolList, applies bool, err error) {
	removed, ok := RemovedPools(rec, mine)
	if !ok || len(removed) == 0 {
		return rec, false, nil
	}
	if !rec.Complete() {
		return rec, true, fmt.Errorf("%w: an expansion to %s is under way: finish it before removing a pool", ErrPoolList, rec.describe())
	}
	have := rec.poolDrives()
	for _, p := range removed {
		if err := complete(p); err != nil {
			return rec, true, fmt.Errorf("%w: the deployment records %s, this node was started with %s: pool %d (%d drives on %s) is left out, and %v: start it with the full list (every pool's argument, in order); to remove pool %d, decommission it first (shardstore admin pool decommission start %d) and leave it out once the decommission is complete",
				ErrPoolList, rec.describe(), mine.describe(), p+1, len(have[p]), strings.Join(poolNodes(have[p]), ", "), err, p+1, p+1)
		}
	}
	if rec.LockMove != nil {
		return rec, true, fmt.Errorf("%w: the lock nodes are moving from %s to %s (an earlier pool removal): wait until the consensus leader completes the hand-over (\"lock hand-over complete\" in its output) before removing another pool",
			ErrPoolList, describeLocks(rec.LockNodes), describeLocks(rec.LockMove.To))
	}
	next = mine
	// Lock nodes in the pools left out hand the locks over to the nodes
	// that stay (locknodes.go): the move starts in its joint phase.
	moveLocks(rec, &next)
	next.NewKeyPools = len(next.Pools)
	next.Removed = removedFrom(rec, removed, RemovedByShrink)
	return next, true, nil
}

// poolNodes are the node ids of drives, in order of first appearance.
func poolNodes(drives []string) []string {
	return PoolList{Drives: drives}.Nodes()
}

// Leaving are the node ids of the consensus group's members (ids) that
// hold no drive of the recorded list rec: those a shrink removes.
func Leaving(rec PoolList, ids []string) []string {
	keep := rec.Nodes()
	var out []string
	for _, id := range ids {
		if !slices.Contains(keep, id) {
			out = append(out, id)
		}
	}
	return out
}
