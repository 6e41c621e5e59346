package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/shardstore/shardstore/internal/bitrot"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/meta"
)

// decomDoc is the config document that holds every decommission's state
// (in the consensus group on a cluster, on the drives of a single node):
// which pools are being drained, and their progress. Every node reads it
// to keep new keys off a draining pool; the node that scans
// (ClusterConfig.ScansHere, or the single node) moves the objects.
const decomDoc = "pools/decommission"

// The states of a decommission.
const (
	DecomDraining = "draining" // objects are being moved off the pool
	DecomComplete = "complete" // the pool holds nothing: remove it from the command line
	DecomCanceled = "canceled" // stopped by the operator; the pool takes new keys again
)

// DecomStatus is the state of one pool's decommission.
type DecomStatus struct {
	PoolID string `json:"pool_id"`
	// Pool is the pool's 1-based position on this node's command line
	// (0 once it is no longer given).
	Pool     int       `json:"pool"`
	State    string    `json:"state"`
	Started  time.Time `json:"started"`
	Updated  time.Time `json:"updated"`
	Finished time.Time `json:"finished,omitzero"`
	// Objects (keys), Versions and Bytes moved so far (Bytes as stored:
	// an encrypted version's ciphertext).
	Objects  int64 `json:"objects"`
	Versions int64 `json:"versions"`
	Bytes    int64 `json:"bytes"`
	// Failed counts the keys whose move failed (retried next pass);
	// LastError is the latest failure.
	Failed    int64  `json:"failed"`
	LastError string `json:"last_error,omitempty"`
	// Uploads are the multipart uploads left in the pool at the end of
	// the latest pass (their move failed: retried next pass); uploads
	// are moved with their parts after the pass's keys.
	Uploads int `json:"uploads"`
	// Passes counts the walks over the pool's keys.
	Passes int `json:"passes"`
}

type decomDocument struct {
	Pools map[string]*DecomStatus `json:"pools"` // by pool id
}

// readDecom reads the decommission document (empty when none).
func (e *Engine) readDecom(ctx context.Context) (decomDocument, uint64, error) {
	doc := decomDocument{Pools: map[string]*DecomStatus{}}
	data, seq, err := e.ReadConfig(ctx, decomDoc)
	if errors.Is(err, ErrNoConfig) {
		return doc, 0, nil
	}
	if err != nil {
		return doc, 0, err
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return doc, 0, fmt.Errorf("engine: config %s: %w", decomDoc, err)
	}
	if doc.Pools == nil {
		doc.Pools = map[string]*DecomStatus{}
	}
	return doc, seq, nil
}

// updateDecom applies change to the document and writes it back,
// retrying on a concurrent change.
func (e *Engine) updateDecom(ctx context.Context, change func(*decomDocument) error) (decomDocument, error) {
	for {
		doc, seq, err := e.readDecom(ctx)
		if err != nil {
			return doc, err
		}
		if err := change(&doc); err != nil {
			return doc, err
		}
		data, _ := json.Marshal(doc)
		_, err = e.WriteConfig(ctx, decomDoc, seq, data)
		if errors.Is(err, ErrConfigConflict) {
			continue
		}
		if err == nil {
			e.applyDecom(doc)
		}
		return doc, err
	}
}

// applyDecom marks the pools the document drains (draining and complete
// ones: a complete pool takes no new key until it is removed).
func (e *Engine) applyDecom(doc decomDocument) {
	ids := map[string]bool{}
	for id, st := range doc.Pools {
		if st.State == DecomDraining || st.State == DecomComplete {
			ids[id] = true
		}
	}
	e.poolState.setDraining(ids)
}

// poolByName finds a pool by its 1-based position or its id.
func (e *Engine) poolByName(name string) (*pool, error) {
	if n, err := strconv.Atoi(name); err == nil {
		if n < 1 || n > len(e.pools) {
			return nil, fmt.Errorf("%w: there is no pool %d (pools 1 to %d)", ErrInvalidArgument, n, len(e.pools))
		}
		return e.pools[n-1], nil
	}
	for _, p := range e.pools {
		if p.id == name && name != "" {
			return p, nil
		}
	}
	return nil, fmt.Errorf("%w: no pool has the id %q", ErrInvalidArgument, name)
}

// StartDecommission starts draining pool name (a 1-based position or a
// pool id): new keys stop going to it and every version, delete marker
// and bucket record is moved to the other pools while it keeps serving.
// Starting one already draining or complete answers its status.
func (e *Engine) StartDecommission(ctx context.Context, name string) (DecomStatus, error) {
	if len(e.pools) < 2 {
		return DecomStatus{}, fmt.Errorf("%w: this deployment has one pool: add a pool before decommissioning it", ErrInvalidArgument)
	}
	p, err := e.poolByName(name)
	if err != nil {
		return DecomStatus{}, err
	}
	var out DecomStatus
	_, err = e.updateDecom(ctx, func(doc *decomDocument) error {
		if st := doc.Pools[p.id]; st != nil && (st.State == DecomDraining || st.State == DecomComplete) {
			out = *st
			return nil
		}
		left := 0
		for _, q := range e.pools {
			if st := doc.Pools[q.id]; q != p && (st == nil || st.State == DecomCanceled) {
				left++
			}
		}
		if left == 0 {
			return fmt.Errorf("%w: pool %d is the last pool taking new objects: add a pool before decommissioning it", ErrInvalidArgument, p.index+1)
		}
		now := e.Now().UTC()
		st := &DecomStatus{PoolID: p.id, State: DecomDraining, Started: now, Updated: now}
		doc.Pools[p.id] = st
		out = *st
		return nil
	})
	out.Pool = p.index + 1
	e.kickDecom()
	return out, err
}

// CancelDecommission stops draining pool name: what was moved stays
// moved, the pool takes new keys again.
func (e *Engine) CancelDecommission(ctx context.Context, name string) (DecomStatus, error) {
	p, err := e.poolByName(name)
	if err != nil {
		return DecomStatus{}, err
	}
	var out DecomStatus
	_, err = e.updateDecom(ctx, func(doc *decomDocument) error {
		st := doc.Pools[p.id]
		if st == nil || st.State != DecomDraining {
			return fmt.Errorf("%w: pool %d is not being decommissioned", ErrInvalidArgument, p.index+1)
		}
		st.State, st.Updated = DecomCanceled, e.Now().UTC()
		out = *st
		return nil
	})
	out.Pool = p.index + 1
	return out, err
}

// DecommissionStatus lists the decommissions the document records.
func (e *Engine) DecommissionStatus(ctx context.Context) ([]DecomStatus, error) {
	doc, _, err := e.readDecom(ctx)
	if err != nil {
		return nil, err
	}
	e.applyDecom(doc)
	var out []DecomStatus
	for _, st := range doc.Pools {
		s := *st
		for _, p := range e.pools {
			if p.id == s.PoolID {
				s.Pool = p.index + 1
			}
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b DecomStatus) int { return a.Started.Compare(b.Started) })
	return out, nil
}

// decomRunner is the loop that follows the document and moves objects.
type decomRunner struct {
	kick chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// decomInterval is how often the loop rereads the document.
const decomInterval = 2 * time.Second

// startDecom starts the decommission loop (New); a deployment of one
// pool has nothing to drain to and runs none.
func (e *Engine) startDecom() {
	if len(e.pools) < 2 {
		return
	}
	e.decom = &decomRunner{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if doc, _, err := e.readDecom(context.Background()); err == nil {
		e.applyDecom(doc)
	}
	go e.decomLoop()
}

// stopDecom stops the loop and waits for it (Close).
func (e *Engine) stopDecom() {
	if e.decom == nil {
		return
	}
	e.decom.once.Do(func() { close(e.decom.stop) })
	<-e.decom.done
}

func (e *Engine) kickDecom() {
	if e.decom == nil {
		return
	}
	select {
	case e.decom.kick <- struct{}{}:
	default:
	}
}

func (e *Engine) decomLoop() {
	defer close(e.decom.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-e.decom.stop
		cancel()
	}()
	t := time.NewTicker(decomInterval)
	defer t.Stop()
	var failing string // the follower's read error, while it lasts (decom_follow.go)
	for {
		if e.cfg.Cluster.scansHere() {
			e.followThrottle(ctx)
			e.decomTick(ctx)
			e.rebalTick(ctx)
		} else {
			e.followDecom(ctx, &failing)
			e.followRebal(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-e.decom.kick:
		}
	}
}

// decomTick reads the document and runs one pass over every pool being
// drained.
func (e *Engine) decomTick(ctx context.Context) {
	doc, _, err := e.readDecom(ctx)
	if err != nil {
		e.log.Warn("decommission: cannot read its state", "err", err)
		return
	}
	e.applyDecom(doc)
	for _, p := range e.pools {
		if st := doc.Pools[p.id]; st != nil && st.State == DecomDraining {
			if err := e.decomPass(ctx, p); err != nil && ctx.Err() == nil {
				e.log.Warn("decommission pass failed; retrying", "pool", p.index+1, "err", err)
			}
		}
	}
}

// decomProgress is what a pass adds to the document.
type decomProgress struct {
	objects, versions, bytes, failed int64
	lastErr                          string
}

// decomPass walks every bucket's keys in pool p and moves each one; the
// progress is written to the document every few seconds, so a node
// killed in the middle resumes (keys already moved are no longer in the
// pool, and a key cut short in its move is moved again: its copies are
// idempotent). A pass that finds nothing left and no upload completes
// the decommission, if every node confirmed before it started that it
// places no new key in the pool (confirmClosed).
func (e *Engine) decomPass(ctx context.Context, p *pool) error {
	var prog decomProgress
	lastSave := time.Now()
	save := func(final func(*DecomStatus)) error {
		got := prog
		prog = decomProgress{}
		_, err := e.updateDecom(ctx, func(doc *decomDocument) error {
			st := doc.Pools[p.id]
			if st == nil || st.State != DecomDraining {
				return errDecomStopped
			}
			st.Objects += got.objects
			st.Versions += got.versions
			st.Bytes += got.bytes
			st.Failed += got.failed
			if got.lastErr != "" {
				st.LastError = got.lastErr
			}
			st.Updated = e.Now().UTC()
			if final != nil {
				final(st)
			}
			return nil
		})
		return err
	}
	// Only a pass that starts once every node has stopped placing new
	// keys in the pool may complete it (decom_gate.go).
	closed := e.confirmClosed(ctx)
	buckets, err := e.ListBuckets(ctx)
	if err != nil {
		return err
	}
	found := 0
	for _, b := range buckets {
		after := ""
		for {
			keys, more, err := rawKeysIn(ctx, p.sets, b.Name, "", after, 1000)
			if err != nil {
				return err
			}
			for _, key := range keys {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				found++
				versions, bytes, err := e.moveKey(ctx, p, b.Name, key)
				if err != nil {
					prog.failed++
					prog.lastErr = fmt.Sprintf("%s/%s: %v", b.Name, key, err)
					e.log.Warn("decommission: key not moved; retried next pass", "pool", p.index+1, "bucket", b.Name, "key", key, "err", err)
				} else if versions > 0 {
					prog.objects++
					prog.versions += int64(versions)
					prog.bytes += bytes
				}
				if err := e.pace(ctx, bytes); err != nil {
					return err
				}
				if time.Since(lastSave) > 2*time.Second {
					if err := save(nil); err != nil {
						return err
					}
					lastSave = time.Now()
				}
			}
			if !more || len(keys) == 0 {
				break
			}
			after = keys[len(keys)-1]
		}
	}
	// Multipart uploads in progress move too (decom_uploads.go).
	_, uploads, uerr := e.moveUploads(ctx, p)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if uerr != nil {
		prog.failed++
		prog.lastErr = uerr.Error()
	}
	done := found == 0 && uploads == 0 && closed == nil
	if found == 0 && uploads == 0 && closed != nil {
		e.log.Warn("decommission: the pool is empty but cannot be declared complete yet; retried next pass", "pool", p.index+1, "err", closed)
		prog.lastErr = closed.Error()
	}
	if done && !e.clustered() {
		// A single node keeps bucket records and config documents on
		// every drive: make sure the pools that stay have all of them
		// (config documents are rewritten where a copy is missing).
		var stay []drive.Drive
		for _, q := range e.pools {
			if q != p {
				stay = append(stay, q.drives()...)
			}
		}
		e.healBucketRecords(ctx, stay)
	}
	return save(func(st *DecomStatus) {
		st.Passes++
		st.Uploads = uploads
		if done {
			st.State, st.Finished = DecomComplete, e.Now().UTC()
			e.log.Info("decommission complete: the pool can be removed from the command line", "pool", p.index+1, "pool_id", p.id)
		}
	})
}

var errDecomStopped = errors.New("decommission stopped")

// moveKey moves every version of bucket/key from pool src to another
// pool under the key's lock: each version is copied with its version id,
// time, ETag, metadata, tags, lock settings and (for an encrypted one)
// its ciphertext and sealed key as they are, then the key's records and
// data are removed from src. It returns the versions and bytes moved.
func (e *Engine) moveKey(ctx context.Context, src *pool, bucket, key string) (int, int64, error) {
	return e.moveKeyTo(ctx, src, nil, bucket, key)
}

// moveKeyTo is moveKey into pool dst (nil: one picked by free space;
// rebalance picks the emptiest pool), unless a move cut short left
// copies in another pool, where it goes on.
func (e *Engine) moveKeyTo(ctx context.Context, src, dst *pool, bucket, key string) (int, int64, error) {
	lctx, unlock, err := e.locks.LockCtx(ctx, lockName(bucket, key))
	if err != nil {
		return 0, 0, err
	}
	defer unlock()
	found, ferr := e.keyHolders(lctx, bucket, key)
	if found[src.index] == 0 {
		return 0, 0, ferr
	}
	// A move cut short left copies in another pool: it goes on there.
	var to *pool
	for i, n := range found {
		if n > 0 && e.pools[i] != src && !e.poolState.isDraining(e.pools[i].id) {
			to = e.pools[i]
		}
	}
	if to == nil && dst != nil && dst != src {
		to = dst
	}
	if to == nil {
		if to = e.pickPool(lctx); to == src || e.poolState.isDraining(to.id) {
			return 0, 0, errors.New("no pool that is not being decommissioned to move to")
		}
	}
	sset, tset := e.setIn(src, bucket, key), e.setIn(to, bucket, key)
	states, err := e.keyVersions(lctx, sset, bucket, key)
	if err != nil {
		return 0, 0, err
	}
	var bytes int64
	for _, st := range states {
		n, err := e.copyVersion(lctx, sset, tset, bucket, key, st)
		if err != nil {
			return 0, 0, fmt.Errorf("copy version %q: %w", st.fi.VersionID, err)
		}
		bytes += n
	}
	if err := e.purgeKey(lctx, sset, bucket, key); err != nil {
		return 0, 0, err
	}
	return len(states), bytes, nil
}

// keyVersions reads every version of bucket/key in set, newest first.
// A key whose records do not make any version (remnants of a write cut
// short) has none.
func (e *Engine) keyVersions(ctx context.Context, set *erasureSet, bucket, key string) ([]*objectState, error) {
	info, err := e.BucketInfo(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if info.Versioning == "" {
		st, err := e.readObjectData(ctx, set, bucket, key, false)
		if errors.Is(err, ErrObjectNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []*objectState{st}, nil
	}
	var ids []string
	opts := ListVersionsOptions{Prefix: key, MaxKeys: 1000}
	for {
		res, err := e.ListObjectVersions(ctx, bucket, opts)
		if err != nil {
			return nil, err
		}
		past := false
		for _, v := range res.Versions {
			if v.Key != key {
				past = past || v.Key > key
				continue
			}
			ids = append(ids, v.VersionID)
		}
		if !res.IsTruncated || past {
			break
		}
		opts.KeyMarker, opts.VersionIDMarker = res.NextKeyMarker, res.NextVersionIDMarker
	}
	out := make([]*objectState, 0, len(ids))
	for _, id := range ids {
		if id == "" {
			id = NullVersionID
		}
		st, _, err := e.resolveVersion(ctx, set, bucket, key, id)
		if err != nil {
			return nil, fmt.Errorf("version %s: %w", id, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// copyVersion writes the version st holds into set to (the caller holds
// the key's lock): its data decoded from its source set (raw: an
// encrypted version's ciphertext, in its own block size) and coded for
// the target set, its record the source's with the new coding. A version
// copied before (a move cut short) is left as it is.
func (e *Engine) copyVersion(ctx context.Context, from, to *erasureSet, bucket, key string, st *objectState) (int64, error) {
	m := st.fi
	parity := to.parityFor(m.StorageClass)
	n := len(to.drives)
	nm := *m
	nm.Parts = slices.Clone(m.Parts)
	nm.Erasure = meta.Erasure{DataShards: n - parity, ParityShards: parity, BlockSize: m.Erasure.BlockSize,
		Distribution: e.distribution(key, n), Bitrot: uint8(e.bitrot)}
	if nm.Erasure.BlockSize == 0 {
		nm.Erasure.BlockSize = e.blockSize
	}
	imp := &ImportVersion{VersionID: m.VersionID, ModTime: m.ModTime, DeleteMarker: m.IsDeleteMarker()}
	req := commitReq{m: &nm, owner: objectOwner(bucket, key), newVersion: true, imp: imp}
	if m.IsDeleteMarker() {
		nm.DataID, nm.Inline, nm.InlineData = "", false, nil
		if err := e.commitMeta(ctx, to, bucket, key, req); err != nil && !errors.Is(err, errImportedBefore) {
			return 0, err
		}
		return 0, nil
	}
	// A version copied before (a move cut short after its commit) is
	// left as it is: its data must not be written again.
	vid := m.VersionID
	if vid == "" {
		vid = NullVersionID
	}
	if have, _, err := e.resolveVersion(ctx, to, bucket, key, vid); err == nil && have.fi.ModTime == m.ModTime {
		return 0, nil
	}
	src, err := e.coders.Get(m.Erasure.DataShards, m.Erasure.ParityShards, m.Erasure.BlockSize)
	if err != nil {
		return 0, err
	}
	dst, err := e.coders.Get(nm.Erasure.DataShards, nm.Erasure.ParityShards, nm.Erasure.BlockSize)
	if err != nil {
		return 0, err
	}
	parts := storedParts(m)
	var total int64
	for _, p := range parts {
		total += p.Size
	}
	// The raw stream: the version as stored, an encrypted one's
	// ciphertext included (its record says Cipher ""), part after part.
	raw := *m
	raw.Cipher, raw.Parts, raw.Size = "", parts, total
	rst := *st
	rst.fi = &raw
	ids := m.DataIDs()
	e.pins.pin(ids)
	r := &objectReader{e: e, ctx: ctx, set: from, bucket: bucket, key: key, st: &rst, coder: src,
		algo: bitrot.Algorithm(m.Erasure.Bitrot), remaining: total,
		release: func() { e.pins.unpin(ids) }, failed: make([]bool, len(from.drives))}
	defer r.Close()
	// An encrypted version's stream keys derive from its data ids
	// (sse.PartKey): it keeps them, on the target's drives. Shard files
	// of those ids a cut-short move left there, unreferenced, go first
	// (shard files are created exclusively). Other versions get a fresh
	// id, as any new data does.
	keepIDs := m.Cipher != ""
	dataID := uuid.NewString()
	if keepIDs {
		dataID = m.DataID
		if err := e.dropUnreferenced(ctx, to, m); err != nil {
			return 0, err
		}
	}
	nm.DataID, nm.InlineData = dataID, nil
	res := &writeResult{errs: make([]error, n)}
	var plans []*writePlan
	defer func() {
		for _, p := range plans {
			e.cleanupShards(p)
		}
	}()
	for i, p := range parts {
		id := dataID
		if keepIDs && len(m.Parts) > 0 {
			id = m.PartDataID(i)
		}
		plan := &writePlan{set: to, coder: dst, dist: nm.Erasure.Distribution, ref: drive.ShardRef{ID: id, Part: p.Number},
			inlineOK: len(parts) == 1}
		plans = append(plans, plan)
		got, err := e.writeShards(ctx, plan, io.LimitReader(r, p.Size), p.Size, hashing.Request{Size: p.Size})
		if err != nil {
			return 0, fmt.Errorf("part %d: %w", p.Number, err)
		}
		if got.size != p.Size {
			return 0, fmt.Errorf("part %d: read %d bytes of %d", p.Number, got.size, p.Size)
		}
		for q, err := range got.errs {
			if err != nil && res.errs[q] == nil {
				res.errs[q] = err
			}
		}
		if len(parts) == 1 {
			res.inline = got.inline
		}
		if i < len(nm.Parts) && !keepIDs {
			nm.Parts[i].DataID = ""
		}
	}
	nm.Inline = res.inline != nil
	req.res = res
	err = e.commitMeta(ctx, to, bucket, key, req)
	if errors.Is(err, errImportedBefore) {
		if keepIDs {
			// Files of a kept id may be another copy's: leave them to
			// the scanner's orphan sweep rather than remove them.
			for _, p := range plans {
				p.committed = true
			}
		}
		return 0, nil // the shards just made are removed
	}
	if err != nil {
		return 0, err
	}
	for _, p := range plans {
		p.committed = true
	}
	return total, nil
}

// purgeKey removes every record of bucket/key from set, and the data
// they own (the caller holds the key's lock and has copied them): the
// current record, the versions table entries, refs, inline data and
// shard files, whatever their object lock (the versions live on in
// another pool). Every drive that answers must apply it.
func (e *Engine) purgeKey(ctx context.Context, set *erasureSet, bucket, key string) error {
	errs := forEachDrive(set.drives, func(_ int, d drive.Drive) error {
		b := &drive.Batch{}
		var versions []*meta.Object
		rec, _, err := readRecord(ctx, d, bucket, key)
		switch {
		case err == nil:
			versions = append(versions, rec.Versions...)
			b.Delete(drive.TableObjects, drive.ObjectKey(bucket, key))
		case errors.Is(err, drive.ErrNotFound):
		default:
			return err
		}
		ents, err := d.Scan(ctx, drive.TableVersions, drive.ScanQuery{Prefix: drive.VersionPrefix(bucket, key)})
		if err != nil {
			return err
		}
		for _, ent := range ents {
			b.Delete(drive.TableVersions, ent.Key)
			if v, err := meta.Unmarshal(ent.Value); err == nil {
				versions = append(versions, v)
			}
		}
		return e.applyDropping(ctx, d, b, versions, nil)
	})
	var bad []string
	for i, err := range errs {
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", set.drives[i], err))
		}
	}
	if countNil(errs) < len(set.drives)-set.parity {
		return fmt.Errorf("remove %s/%s from pool %d: %w: %s", bucket, key, set.pool.index+1, ErrWriteQuorum, strings.Join(bad, "; "))
	}
	if len(bad) > 0 {
		// The copies are the key's now (the other pool holds it with
		// quorum); what these drives keep is removed by a later pass.
		e.log.Warn("decommission: drives kept records of a moved key", "bucket", bucket, "key", key, "drives", strings.Join(bad, "; "))
	}
	return nil
}

// knownDoc is the config document listing the ids of the deployment's
// pools, so that a pool left off the command line is noticed.
const knownDoc = "pools/known"

type knownPools struct {
	IDs []string `json:"ids"`
}

// checkKnownPools refuses a start that leaves off a pool the deployment
// had, unless its decommission is complete: its objects would vanish from
// view. It then records the pools given. A document that cannot be read
// is logged and the check skipped (a cluster whose consensus group is not
// up yet checks at its next start).
func (e *Engine) checkKnownPools(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var known knownPools
	data, seq, err := e.ReadConfig(ctx, knownDoc)
	switch {
	case errors.Is(err, ErrNoConfig):
		if len(e.pools) < 2 {
			return nil // never had pools to lose
		}
	case err != nil:
		e.log.Warn("cannot read the known server pools; not checking for a missing pool", "err", err)
		return nil
	default:
		if err := json.Unmarshal(data, &known); err != nil {
			return fmt.Errorf("engine: config %s: %w", knownDoc, err)
		}
	}
	given := map[string]bool{}
	var ids []string
	for _, p := range e.pools {
		given[p.id] = true
		ids = append(ids, p.id)
	}
	decom, _, err := e.readDecom(ctx)
	if err != nil {
		e.log.Warn("cannot read the decommission state; not checking for a missing pool", "err", err)
		return nil
	}
	var missing []string
	for _, id := range known.IDs {
		if st := decom.Pools[id]; !given[id] && (st == nil || st.State != DecomComplete) {
			missing = append(missing, fmt.Sprintf("%q", id))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("engine: the server pool(s) with id %s are part of this deployment but not on the command line: they may hold objects. Give their drive arguments back, or decommission them first (shardstore admin pool decommission start POOL) and remove them once it is complete", strings.Join(missing, ", "))
	}
	if slices.Equal(known.IDs, ids) {
		return nil
	}
	out, _ := json.Marshal(knownPools{IDs: ids})
	if _, err := e.WriteConfig(ctx, knownDoc, seq, out); err != nil {
		e.log.Warn("cannot record the server pools", "err", err)
	}
	return nil
}

// dropUnreferenced removes from the drives of set the shard files of
// version m's data ids that no ref names there: what a move cut short
// after writing them and before its commit left behind.
func (e *Engine) dropUnreferenced(ctx context.Context, set *erasureSet, m *meta.Object) error {
	byID := map[string][]drive.ShardRef{}
	for _, r := range shardRefs(m) {
		byID[r.ID] = append(byID[r.ID], r)
	}
	if len(byID) == 0 {
		return nil
	}
	errs := forEachDrive(set.drives, func(_ int, d drive.Drive) error {
		for id, refs := range byID {
			_, err := d.Get(ctx, drive.TableRefs, id)
			switch {
			case err == nil:
				continue // referenced: not a leftover
			case !errors.Is(err, drive.ErrNotFound):
				return err
			}
			if err := d.DeleteShards(ctx, refs); err != nil && !errors.Is(err, drive.ErrNotFound) {
				return err
			}
		}
		return nil
	})
	if countNil(errs) < len(set.drives)-set.parity {
		return fmt.Errorf("clear leftovers of a cut-short move: %w", firstErr(errs))
	}
	return nil
}
