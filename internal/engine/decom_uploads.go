package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/shardstore/shardstore/internal/bitrot"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/quorum"
	"github.com/shardstore/shardstore/internal/sse"
)

// uploadRef names one multipart upload.
type uploadRef struct{ bucket, key, id string }

// poolUploadList lists the multipart upload records in pool p.
func (e *Engine) poolUploadList(ctx context.Context, p *pool) []uploadRef {
	var mu sync.Mutex
	seen := map[uploadRef]bool{}
	for _, set := range p.sets {
		drives := set.drives[:min(len(set.drives), set.parity+1)]
		forEachDrive(drives, func(_ int, d drive.Drive) error {
			ents, err := d.Scan(ctx, drive.TableUploads, drive.ScanQuery{})
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, ent := range ents {
				if m, err := meta.Unmarshal(ent.Value); err == nil {
					seen[uploadRef{m.Bucket, m.Key, m.UploadID}] = true
				}
			}
			return nil
		})
	}
	out := make([]uploadRef, 0, len(seen))
	for u := range seen {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b uploadRef) int {
		return cmpStrings(a.bucket+"/"+a.key+"\x00"+a.id, b.bucket+"/"+b.key+"\x00"+b.id)
	})
	return out
}

func cmpStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// moveUploads moves every multipart upload in progress off pool src (a
// decommission's pass, after its keys). It returns the uploads moved and
// those left (a move failed: retried next pass).
func (e *Engine) moveUploads(ctx context.Context, src *pool) (moved, left int, lastErr error) {
	for _, u := range e.poolUploadList(ctx, src) {
		if ctx.Err() != nil {
			return moved, left + 1, ctx.Err()
		}
		ok, n, err := e.moveUpload(ctx, src, u)
		switch {
		case err != nil:
			left++
			lastErr = fmt.Errorf("upload %s of %s/%s: %w", u.id, u.bucket, u.key, err)
			e.log.Warn("decommission: upload not moved; retried next pass", "bucket", u.bucket, "key", u.key, "upload", u.id, "err", err)
		case ok:
			moved++
		}
		if err := e.pace(ctx, n); err != nil {
			return moved, left, err
		}
	}
	return moved, left, lastErr
}

// moveUpload moves one multipart upload from pool src to another pool
// under the upload's exclusive lock (no part commits, completes or
// aborts meanwhile): its record (with the target's erasure coding) and
// every part's record and data, each part's data id kept (an encrypted
// part's stream key derives from it), then its records and data are
// removed from src. A part upload that wrote its shards to src before
// the lock finds the upload gone there and is answered busy: the client's
// retry goes to the new pool. Completions and aborts find the upload
// under its lock. A copy in the target from a move cut short is dropped
// first: src's stays the upload's until the move removes it
// (uploadSet looks in pools being drained first).
func (e *Engine) moveUpload(ctx context.Context, src *pool, u uploadRef) (bool, int64, error) {
	return e.moveUploadTo(ctx, src, nil, u)
}

// moveUploadTo is moveUpload into the pool a rebalance names (dst; nil:
// a decommission's, uploadTarget), under the rules of rebalUploadTarget.
func (e *Engine) moveUploadTo(ctx context.Context, src, dst *pool, u uploadRef) (bool, int64, error) {
	unlock, err := e.locks.LockWait(ctx, lockName(u.bucket, "\x00upload/"+u.id))
	if err != nil {
		return false, 0, err
	}
	defer unlock()
	sset := e.setIn(src, u.bucket, u.key)
	up, _, err := e.readUpload(ctx, sset, u.bucket, u.key, u.id)
	if errors.Is(err, ErrNoSuchUpload) {
		return false, 0, nil // completed, aborted, or remnants the scanner sweeps
	}
	if err != nil {
		return false, 0, err
	}
	var to *pool
	if dst == nil {
		to = e.uploadTarget(ctx, src, u)
	} else {
		var done bool
		if to, done, err = e.rebalUploadTarget(ctx, sset, dst, u); err != nil || done || to == nil {
			return false, 0, err
		}
	}
	if to == nil {
		return false, 0, errors.New("no pool that is not being decommissioned to move to")
	}
	tset := e.setIn(to, u.bucket, u.key)
	// A copy a cut-short move left in the target goes first.
	if _, _, err := e.readUpload(ctx, tset, u.bucket, u.key, u.id); err == nil || !errors.Is(err, ErrNoSuchUpload) {
		errs := forEachDrive(tset.drives, func(_ int, d drive.Drive) error {
			return e.dropUpload(ctx, d, u.bucket, u.key, u.id)
		})
		if countNil(errs) < len(tset.drives)-tset.parity {
			return false, 0, fmt.Errorf("clear a cut-short copy: %w", firstErr(errs))
		}
	}
	stored, holders, err := e.readParts(ctx, sset, u.bucket, u.key, u.id)
	if err != nil {
		return false, 0, err
	}
	n := len(tset.drives)
	parity := tset.parityFor(up.StorageClass)
	nu := *up
	nu.Erasure = meta.Erasure{DataShards: n - parity, ParityShards: parity, BlockSize: up.Erasure.BlockSize,
		Distribution: e.distribution(u.key, n), Bitrot: up.Erasure.Bitrot}
	srcCoder, err := e.coders.Get(up.Erasure.DataShards, up.Erasure.ParityShards, up.Erasure.BlockSize)
	if err != nil {
		return false, 0, err
	}
	dstCoder, err := e.coders.Get(nu.Erasure.DataShards, nu.Erasure.ParityShards, nu.Erasure.BlockSize)
	if err != nil {
		return false, 0, err
	}
	srcWQ := quorum.WriteQuorum(up.Erasure.DataShards, up.Erasure.ParityShards)
	nums := make([]int, 0, len(stored))
	for num, m := range stored {
		// A part short of quorum cannot be completed from: not moved.
		if countTrue(holders[num]) >= srcWQ && len(m.Parts) == 1 {
			nums = append(nums, num)
		}
	}
	slices.Sort(nums)
	errsAt := make([]error, n)
	var plans []*writePlan
	defer func() {
		for _, p := range plans {
			e.cleanupShards(p)
		}
	}()
	var total int64
	for _, num := range nums {
		m := stored[num]
		part := m.Parts[0]
		size := part.Size
		if up.Cipher != "" {
			size = sse.EncryptedSize(part.Size)
		}
		id := m.PartDataID(0)
		// Shard files of the kept id a cut-short move left in the
		// target, unreferenced there, go first (they are created
		// exclusively).
		if err := e.dropUnreferenced(ctx, tset, &meta.Object{DataID: id, Size: size, Parts: []meta.Part{{Number: num, Size: size, DataID: id}}}); err != nil {
			return false, 0, err
		}
		raw := &meta.Object{Erasure: up.Erasure, Size: size, DataID: id, Parts: []meta.Part{{Number: num, Size: size, DataID: id}}}
		st := &objectState{fi: raw, metas: make([]*meta.Object, len(sset.drives))}
		for p, has := range holders[num] {
			if has {
				st.metas[p] = raw
			}
		}
		r := &objectReader{e: e, ctx: ctx, set: sset, bucket: u.bucket, key: u.key, st: st, coder: srcCoder,
			algo: bitrot.Algorithm(up.Erasure.Bitrot), remaining: size, release: func() {}, failed: make([]bool, len(sset.drives))}
		plan := &writePlan{set: tset, coder: dstCoder, dist: nu.Erasure.Distribution, ref: drive.ShardRef{ID: id, Part: num},
			algo: bitrot.Algorithm(nu.Erasure.Bitrot)}
		plans = append(plans, plan)
		got, err := e.writeShards(ctx, plan, io.LimitReader(r, size), size, hashing.Request{Size: size})
		r.Close()
		if err != nil {
			return false, 0, fmt.Errorf("part %d: %w", num, err)
		}
		if got.size != size {
			return false, 0, fmt.Errorf("part %d: read %d bytes of %d", num, got.size, size)
		}
		for p, err := range got.errs {
			if err != nil && errsAt[p] == nil {
				errsAt[p] = err
			}
		}
		total += size
	}
	ukey := drive.UploadKey(u.bucket, u.key, u.id)
	owner := []byte(uploadOwner(u.id))
	rec := nu.Marshal()
	errs := forEachDrive(tset.drives, func(p int, d drive.Drive) error {
		if errsAt[p] != nil {
			return errsAt[p]
		}
		b := &drive.Batch{}
		b.Put(drive.TableUploads, ukey, rec)
		for _, num := range nums {
			m := stored[num]
			b.Put(drive.TableParts, drive.PartKey(u.bucket, u.key, u.id, num), m.Marshal())
			b.Put(drive.TableRefs, m.PartDataID(0), owner)
		}
		return d.Apply(ctx, b)
	})
	wq := quorum.WriteQuorum(nu.Erasure.DataShards, nu.Erasure.ParityShards)
	if ok := countNil(errs); ok < wq {
		forEachDrive(tset.drives, func(p int, d drive.Drive) error {
			if errs[p] != nil {
				return nil
			}
			return e.dropUpload(context.Background(), d, u.bucket, u.key, u.id)
		})
		return false, 0, quorumError(fmt.Sprintf("move upload %s of %s/%s", u.id, u.bucket, u.key), errs, ok, wq)
	}
	for _, p := range plans {
		p.committed = true
	}
	// The target holds the upload: it goes from src.
	derrs := forEachDrive(sset.drives, func(_ int, d drive.Drive) error {
		return e.dropUpload(ctx, d, u.bucket, u.key, u.id)
	})
	if countNil(derrs) < len(sset.drives)-sset.parity {
		return false, total, fmt.Errorf("remove the moved upload from pool %d: %w", src.index+1, firstErr(derrs))
	}
	return true, total, nil
}

// uploadTarget is the pool an upload moves to: the pool holding its
// key (so that its completion is not refused as another pool's key),
// else one picked by free space; never a pool being drained.
func (e *Engine) uploadTarget(ctx context.Context, src *pool, u uploadRef) *pool {
	found, _ := e.keyHolders(ctx, u.bucket, u.key)
	if i := e.heldBy(found); i >= 0 && e.pools[i] != src && !e.poolState.isDraining(e.pools[i].id) {
		return e.pools[i]
	}
	if p := e.pickPool(ctx); p != src && !e.poolState.isDraining(p.id) {
		return p
	}
	return nil
}

// uploadMovedFrom reports whether upload id, not found in set, lives in
// another pool now (a decommission moved it): a part written to set
// before the move is answered busy, and the client's retry goes there.
func (e *Engine) uploadMovedFrom(ctx context.Context, set *erasureSet, bucket, key, uploadID string) bool {
	if len(e.pools) < 2 {
		return false
	}
	now := e.uploadSet(ctx, bucket, key, uploadID)
	if now == set {
		return false
	}
	_, _, err := e.readUpload(ctx, now, bucket, key, uploadID)
	return err == nil
}
