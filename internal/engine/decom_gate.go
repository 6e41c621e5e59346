package engine

import (
	"context"
	"fmt"
)

// How a decommission closes its pool to new keys on every node before it
// may be declared complete (docs/pools.md):
//
//   - a commit of a key into a pool takes the commit gate (shared) and,
//     under the key's lock, refuses a key that pool does not hold yet when
//     the pool is being drained or is complete (errPoolDraining: busy, the
//     client's retry picks an open pool). A write that picked its pool
//     before this node learned of the decommission is refused at commit.
//   - a node that learns of a change of the decommission document (a
//     change notice: ApplyDecommission, or its periodic re-read) applies it
//     and then takes the gate exclusively once, which waits for the
//     commits that may have passed the check before: after that, no new
//     key can land in the pool through this node.
//   - the scanning node does the same for itself and, on a cluster, has
//     every other node do it (ClusterConfig.Confirm) at the start of each
//     pass; only a pass that started after every node confirmed, and found
//     nothing left, completes the decommission.

// errPoolDraining refuses the commit of a new key into a pool being
// decommissioned; the client's retry picks an open pool.
var errPoolDraining = fmt.Errorf("%w: the server pool picked for this new key is being decommissioned", ErrBusy)

// enterCommit takes the commit gate shared for one commit; the returned
// func releases it.
func (e *Engine) enterCommit() func() {
	if len(e.pools) < 2 {
		return func() {}
	}
	e.poolState.commits.RLock()
	return e.poolState.commits.RUnlock
}

// drainCommits waits until every commit that entered the gate before it
// has ended.
func (e *Engine) drainCommits() {
	e.poolState.commits.Lock()
	//nolint:staticcheck // an empty critical section: waiting is the point
	e.poolState.commits.Unlock()
}

// checkOpen refuses a commit into set of a key its pool does not hold
// (found: keyHolders' counts) while that pool is being decommissioned.
func (e *Engine) checkOpen(found []int, set *erasureSet) error {
	if found[set.pool.index] == 0 && e.poolState.isDraining(set.pool.id) {
		return errPoolDraining
	}
	return nil
}

// DecommissionDocument names the config document holding every
// decommission's state: a change notice for it calls ApplyDecommission.
const DecommissionDocument = decomDoc

// ApplyDecommission re-reads the decommission document, applies it, and
// returns once every commit that may have put a new key into a pool it
// closes has ended: the answer to a change notice, which the scanning
// node waits for before a pass that may complete a decommission.
func (e *Engine) ApplyDecommission(ctx context.Context) error {
	if e.decom == nil {
		return nil // one pool: nothing to drain, and no commit to wait for
	}
	doc, _, err := e.readDecom(ctx)
	if err != nil {
		return err
	}
	e.applyDecom(doc)
	e.drainCommits()
	return nil
}

// confirmClosed runs before a decommission pass (the caller applied the
// document): this node's commits that passed the check before are
// waited for, and on a cluster every other node is told to do the same
// (ClusterConfig.Confirm). An error means some node did not confirm: the
// pass must not complete the decommission.
func (e *Engine) confirmClosed(ctx context.Context) error {
	e.drainCommits()
	if c := e.cfg.Cluster; c != nil && c.Confirm != nil {
		if err := c.Confirm(ctx, spaceConfig, decomDoc); err != nil {
			return fmt.Errorf("not every node confirmed that it stopped placing new keys in the pool: %w", err)
		}
	}
	return nil
}
