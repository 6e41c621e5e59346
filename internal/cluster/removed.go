package cluster

import (
	"fmt"
	"slices"
	"strings"
)

// Removed pools (docs/pools.md): the recorded pool list keeps the drives
// of every pool taken out of it, by a shrink (RemovedByShrink) or by a
// canceled expansion (RemovedByCancel). A node started again with a list
// from before (its old command line, a service file not updated) would
// otherwise append such a pool again and be taken for an expansion;
// PlanStart refuses an append that names a removed drive, and adding
// the drives again is an explicit operator action (ForgetRemoved, the
// server's --readd-removed-pools).

// Why a pool was taken out of the list.
const (
	RemovedByShrink = "removed after its decommission"
	RemovedByCancel = "its expansion was canceled"
)

// Bounds of the removed-pool record.
const (
	maxRemovedPools  = 1024
	maxRemovedDrives = 4 * maxListDrives
)

// RemovedPool is a pool taken out of the recorded list.
type RemovedPool struct {
	// Drives are the pool's drives as the list named them.
	Drives []string `json:"drives"`
	// Reason is RemovedByShrink or RemovedByCancel.
	Reason string `json:"reason"`
}

// validateRemoved checks the removed-pool record's bounds and drives.
func (l PoolList) validateRemoved() error {
	if len(l.Removed) > maxRemovedPools {
		return fmt.Errorf("%d removed pools (at most %d)", len(l.Removed), maxRemovedPools)
	}
	total := 0
	for _, r := range l.Removed {
		if len(r.Drives) == 0 {
			return fmt.Errorf("a removed pool of no drive")
		}
		if r.Reason != RemovedByShrink && r.Reason != RemovedByCancel {
			return fmt.Errorf("a removed pool's reason %.40q", r.Reason)
		}
		total += len(r.Drives)
		if total > maxRemovedDrives {
			return fmt.Errorf("more than %d removed drives", maxRemovedDrives)
		}
		for _, d := range r.Drives {
			if _, _, err := splitDrive(d); err != nil {
				return fmt.Errorf("removed %w", err)
			}
		}
	}
	return nil
}

// removedFrom is rec's removed record plus the pools of rec at the
// 0-based positions removed, for reason.
func removedFrom(rec PoolList, removed []int, reason string) []RemovedPool {
	out := slices.Clone(rec.Removed)
	have := rec.poolDrives()
	for _, p := range removed {
		if p >= 0 && p < len(have) {
			out = append(out, RemovedPool{Drives: slices.Clone(have[p]), Reason: reason})
		}
	}
	return out
}

// removedDrive finds drive d in the removed record: the removed pool's
// position in it, or -1.
func (l PoolList) removedDrive(d string) int {
	for i, r := range l.Removed {
		if slices.Contains(r.Drives, d) {
			return i
		}
	}
	return -1
}

// checkReadd refuses an expansion (next, proposed over rec) whose
// appended drives include a removed pool's: the node was most likely
// started with a list from before the removal.
func checkReadd(rec, next PoolList) error {
	for _, d := range next.Drives[min(len(rec.Drives), len(next.Drives)):] {
		i := rec.removedDrive(d)
		if i < 0 {
			continue
		}
		r := rec.Removed[i]
		return fmt.Errorf("%w: this node was started with %s, which appends drive %s; the deployment records that drive's pool (%d drives on %s) as taken out of it (%s), so this looks like a command line from before that: start it with the deployment's arguments (%s); to add these drives as a new pool again, empty them first and start this node with --readd-removed-pools",
			ErrPoolList, next.describe(), d, len(r.Drives), strings.Join(poolNodes(r.Drives), ", "), r.Reason, rec.describe())
	}
	return nil
}

// ForgetRemoved is rec without the removed-pool entries naming any of
// mine's drives: the operator adds those drives again as a new pool on
// purpose (--readd-removed-pools). PlanStart then takes mine as an
// expansion, and the list it records no longer names them as removed.
func ForgetRemoved(rec, mine PoolList) PoolList {
	out := rec
	out.Removed = nil
	for _, r := range rec.Removed {
		if !slices.ContainsFunc(r.Drives, func(d string) bool { return slices.Contains(mine.Drives, d) }) {
			out.Removed = append(out.Removed, r)
		}
	}
	return out
}

// PlanCancel decides the cancellation of an expansion under way in the
// recorded list rec: the list to record (a compare-and-set the caller
// makes against rec's version, so an expansion marked complete
// meanwhile is not canceled), which is rec without the appended pools,
// those recorded as removed, and the nodes that then hold no drive of
// it (they leave the consensus group once every node of the list runs
// with it). Refused (ErrPoolList) when no expansion is under way: once
// every pool takes new keys, keys may be in the new pools, and a pool is
// taken out by a decommission.
func PlanCancel(rec PoolList) (next PoolList, leaving []string, err error) {
	if err := rec.validate(); err != nil {
		return rec, nil, fmt.Errorf("%w: the recorded list: %v", ErrPoolList, err)
	}
	if rec.Complete() {
		return rec, nil, fmt.Errorf("%w: no expansion is under way: every pool of the deployment's %s takes new keys, so keys may be in any of them; to take a pool out, decommission it (shardstore admin pool decommission start POOL) and then remove it", ErrPoolList, rec.describe())
	}
	keep := rec.NewKeyPools
	var appended []int
	for p := keep; p < len(rec.Pools); p++ {
		appended = append(appended, p)
	}
	n := 0
	for _, c := range rec.Pools[:keep] {
		n += c
	}
	next = PoolList{
		Drives:      slices.Clone(rec.Drives[:n]),
		Pools:       slices.Clone(rec.Pools[:keep]),
		LockNodes:   slices.Clone(rec.LockNodes),
		NewKeyPools: keep,
		Removed:     removedFrom(rec, appended, RemovedByCancel),
	}
	if err := next.validate(); err != nil {
		// The lock nodes are in the first pools; a list that says
		// otherwise is not one this package recorded.
		return rec, nil, fmt.Errorf("%w: the list without the appended pools: %v", ErrPoolList, err)
	}
	return next, Leaving(next, rec.Nodes()), nil
}

// removedHint says, for a refused list naming a removed drive, that it
// looks like a command line from before the removal ("" otherwise).
func removedHint(rec, mine PoolList) string {
	for _, d := range mine.Drives {
		if i := rec.removedDrive(d); i >= 0 {
			return fmt.Sprintf("; drive %s is of a pool taken out of the deployment (%s): this looks like a command line from before that", d, rec.Removed[i].Reason)
		}
	}
	return ""
}

// MayRemove says whether the recorded list may be shortened (a shrink, a
// canceled expansion), given the pool-removal feature gate's answer
// (nil: active): a node of a release without it would not see the
// removed-pool record, so no list loses a pool before every node has it.
func MayRemove(gate error) error {
	if gate != nil {
		return fmt.Errorf("%w: pools cannot be taken out of the deployment yet: %v (every node must run a release that records removed pools first: shardstore admin cluster upgrade-status)", ErrPoolList, gate)
	}
	return nil
}

// Describe is the list in words, as the refusals say it.
func (l PoolList) Describe() string { return l.describe() }
