package engine

import (
	"context"
	"fmt"

	"github.com/shardstore/shardstore/internal/drive"
)

// Rebalancing multipart uploads in progress (docs/pools.md): after a
// source pool's keys, while it has more to free, a rebalance moves its
// uploads as a decommission does (moveUploadTo: under the upload's lock,
// record and parts re-coded, data ids kept), each to the pool holding
// its key, else the pool the rebalance moves to. An upload whose key
// the source holds stays with its key (its completion must land in the
// key's pool).
//
// A source that is not being drained is not where uploadSet looks first,
// so a move cut short after the target's copy was written (both pools
// hold the whole upload) is finished the other way round from a
// decommission's: the copy uploadSet finds is the one parts went to
// since, so when that is not the source's, the source's copy is stale
// and is removed, not copied over the newer one.

// rebalUploadTarget says where a rebalance moves upload u from set sset
// (dst: the pool the rebalance moves to): nil when it stays (its key is
// in the source). done is set when a move cut short left the upload's
// current copy in another pool: the source's stale copy was removed.
func (e *Engine) rebalUploadTarget(ctx context.Context, sset *erasureSet, dst *pool, u uploadRef) (to *pool, done bool, err error) {
	if cur := e.uploadSet(ctx, u.bucket, u.key, u.id); cur != sset {
		errs := forEachDrive(sset.drives, func(_ int, d drive.Drive) error {
			return e.dropUpload(ctx, d, u.bucket, u.key, u.id)
		})
		if countNil(errs) < len(sset.drives)-sset.parity {
			return nil, false, fmt.Errorf("remove the stale copy of a moved upload from pool %d: %w", sset.pool.index+1, firstErr(errs))
		}
		return nil, true, nil
	}
	found, ferr := e.keyHolders(ctx, u.bucket, u.key)
	if ferr != nil {
		return nil, false, ferr
	}
	switch i := e.heldBy(found); {
	case found[sset.pool.index] > 0:
		return nil, false, nil // the key is here: the upload stays with it
	case i >= 0 && !e.poolState.isDraining(e.pools[i].id):
		return e.pools[i], false, nil
	case i >= 0:
		return nil, false, nil // its key's pool is being drained: a decommission's business
	}
	if dst == sset.pool || e.poolState.isDraining(dst.id) {
		return nil, false, nil
	}
	return dst, false, nil
}

// rebalUploads moves the uploads in progress off source pool src while
// after (told what each move did) says to go on; dst names the pool the
// rebalance moves to now. It returns the uploads moved.
func (e *Engine) rebalUploads(ctx context.Context, src *pool, dst func() *pool, after func(moved bool, bytes int64, err error, u uploadRef) (bool, error)) (int, error) {
	moved := 0
	for _, u := range e.poolUploadList(ctx, src) {
		if ctx.Err() != nil {
			return moved, ctx.Err()
		}
		ok, n, err := e.moveUploadTo(ctx, src, dst(), u)
		if ok {
			moved++
		}
		goOn, aerr := after(ok, n, err, u)
		if aerr != nil {
			return moved, aerr
		}
		if !goOn {
			break
		}
	}
	return moved, nil
}
