package engine

// Healing one object: HealObject reads the key's records on every drive
// of its set under the key's write lock, and rewrites what is missing,
// stale or corrupt from the shards that are intact; it removes what
// fewer drives hold than can ever read it, and finishes what a commit
// cut short left behind. Who asks, and when, is the background jobs'
// business (internal/background: the heal queue, the scanner, drive
// refills) and the operator's (Engine.Heal); the data path only queues
// keys it found degraded (backgroundJobs.QueueHeal).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/shardstore/shardstore/internal/bitrot"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/erasure"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/quorum"
)

// Position states found by healing.
const (
	posOK = iota
	posMissing
	posStale
	posCorrupt
	posOffline
)

// errSourceFailed restarts a rebuild after a source shard failed.
var errSourceFailed = errors.New("a source shard failed during rebuild")

// HealObject checks one object on every drive of its set and repairs
// what is missing, stale or corrupt, under the object's write lock.
func (e *Engine) HealObject(ctx context.Context, bucket, key string, opts HealOptions) (HealResult, error) {
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return HealResult{}, err
	}
	if err := checkObjectName(key); err != nil {
		return HealResult{}, err
	}
	unlock, err := e.locks.LockWait(ctx, lockName(bucket, key))
	if err != nil {
		return HealResult{}, err
	}
	defer unlock()
	set, err := e.readSet(ctx, bucket, key)
	if err != nil {
		return HealResult{Bucket: bucket, Key: key}, fmt.Errorf("heal %s/%s: %w", bucket, key, err)
	}
	res := HealResult{Bucket: bucket, Key: key}
	err = e.healLocked(ctx, set, bucket, key, opts, &res)
	if err != nil {
		return res, fmt.Errorf("heal %s/%s: %w", bucket, key, err)
	}
	return res, nil
}

func (e *Engine) healLocked(ctx context.Context, set *erasureSet, bucket, key string, opts HealOptions, res *HealResult) error {
	st, err := e.readObject(ctx, set, bucket, key)
	verify := make([]bool, len(set.drives)) // positions whose data must be verified
	switch {
	case errors.Is(err, ErrObjectNotFound):
		return e.removeDangling(ctx, set, bucket, key, st.recs, st.raws, res)
	case errors.Is(err, ErrReadQuorum):
		st, err = e.recoverVersion(ctx, set, bucket, key, st.recs, st.raws, st.readErrs, res)
		if err != nil {
			return err
		}
		if st == nil {
			return nil // nothing recoverable: remnants removed
		}
		for p := range verify {
			verify[p] = st.metas[p] != nil
		}
	case err != nil:
		return err
	default:
		e.settle(ctx, set, bucket, key, st)
	}
	if err := e.healState(ctx, set, bucket, key, st, verify, opts, res); err != nil {
		return err
	}
	res.Live, res.LiveSize = !st.fi.IsDeleteMarker(), st.fi.Size
	if info, err := e.BucketInfo(ctx, bucket); err == nil && info.Versioning != "" {
		return e.healVersions(ctx, set, bucket, key, opts, res)
	}
	return nil
}

// healState checks and repairs one version of key as read into st (the
// current one, or a noncurrent one when st.vkey is set); verify marks
// positions whose data must be read in full.
func (e *Engine) healState(ctx context.Context, set *erasureSet, bucket, key string, st *objectState, verify []bool, opts HealOptions, res *HealResult) error {
	e.promotePrevious(ctx, set, bucket, key, st, res)
	fi := st.fi
	res.Size = fi.Size
	n := len(set.drives)
	status := make([]int, n)
	for p := range status {
		switch perr := st.errs[p]; {
		case st.metas[p] != nil:
			status[p] = posOK
		case errors.Is(perr, drive.ErrNotFound):
			status[p] = posMissing
		case errors.Is(perr, meta.ErrCorrupt):
			status[p] = posCorrupt
		case errors.Is(perr, quorum.ErrStale):
			status[p] = posStale
		default:
			status[p] = posOffline
		}
	}
	e.checkShards(ctx, set, st, status)
	if opts.Deep {
		for p := range verify {
			verify[p] = verify[p] || status[p] == posOK
		}
	}
	coder, err := e.coders.Get(fi.Erasure.DataShards, fi.Erasure.ParityShards, fi.Erasure.BlockSize)
	if err != nil {
		return err
	}
	e.verifyShards(ctx, set, bucket, key, st, coder, verify, status)
	for _, s := range status {
		switch s {
		case posMissing:
			res.Missing++
		case posStale:
			res.Stale++
		case posCorrupt:
			res.Corrupt++
		case posOffline:
			res.Offline++
		}
	}
	if res.Missing+res.Stale+res.Corrupt > 0 {
		for attempt := 0; ; attempt++ {
			err = e.rebuild(ctx, set, bucket, key, st, coder, status, res)
			if errors.Is(err, errSourceFailed) && attempt <= fi.Erasure.ParityShards {
				continue
			}
			if err != nil {
				return err
			}
			break
		}
	}
	e.healSettings(ctx, set, bucket, key, st, status, res)
	return nil
}

// writeHealed writes drive d's record of the version st describes (with
// the changes already in b): the key's record for the current version,
// its versions-table entry for a noncurrent one.
func (e *Engine) writeHealed(ctx context.Context, d drive.Drive, bucket, key string, st *objectState, p int, m *meta.Object, b *drive.Batch) error {
	if st.vkey == "" {
		var old *meta.Record
		var oldRaw []byte
		known := st.recs != nil && st.raws != nil
		if known {
			old, oldRaw = st.recs[p], st.raws[p]
		}
		rec, raw, err := e.replaceRecord(ctx, d, bucket, key, m, old, oldRaw, known, b)
		if err == nil && known {
			st.recs[p], st.raws[p] = rec, raw
		}
		return err
	}
	if b == nil {
		b = &drive.Batch{}
	}
	for _, id := range m.DataIDs() {
		b.Put(drive.TableRefs, id, []byte(objectOwner(bucket, key)))
	}
	b.Put(drive.TableVersions, st.vkey, m.Marshal())
	return d.Apply(ctx, b)
}

// healVersions checks and repairs every noncurrent version of key, as
// healLocked does the current one. A version that fewer drives hold
// than can ever read it (a write or delete interrupted before it was
// acknowledged) is removed.
func (e *Engine) healVersions(ctx context.Context, set *erasureSet, bucket, key string, opts HealOptions, res *HealResult) error {
	prefix := drive.VersionPrefix(bucket, key)
	var mu sync.Mutex
	all := map[string]bool{}
	errs := forEachDrive(set.drives, func(p int, d drive.Drive) error {
		q := drive.ScanQuery{Prefix: prefix, KeysOnly: true, Limit: 1000}
		for {
			ents, err := d.Scan(ctx, drive.TableVersions, q)
			if err != nil {
				return err
			}
			mu.Lock()
			for _, ent := range ents {
				all[ent.Key] = true
			}
			mu.Unlock()
			if len(ents) < q.Limit {
				return nil
			}
			q.After = ents[len(ents)-1].Key
		}
	})
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var failed error
	for _, k := range keys {
		ref, ok := refOfVersionKey(prefix, k)
		if !ok {
			continue
		}
		res.Versions++
		st, err := e.readNoncurrent(ctx, set, bucket, key, ref, nil)
		switch {
		case errors.Is(err, ErrNoSuchVersion) && countNil(errs) == len(errs):
			e.removeDanglingVersion(ctx, set, bucket, key, st, res)
			continue
		case err != nil:
			res.Offline++
			failed = err
			continue
		}
		if err := e.healState(ctx, set, bucket, key, st, make([]bool, len(set.drives)), opts, res); err != nil {
			failed = err
		}
	}
	return failed
}

// removeDanglingVersion deletes what is left of a noncurrent version
// that too few drives hold to ever read it.
func (e *Engine) removeDanglingVersion(ctx context.Context, set *erasureSet, bucket, key string, st *objectState, res *HealResult) {
	if e.lockedRemnants(bucket, key, st.metas) {
		return
	}
	var mu sync.Mutex
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if st.metas[p] == nil || st.vkeys[p] == "" {
			return nil
		}
		b := &drive.Batch{}
		b.Delete(drive.TableVersions, st.vkeys[p])
		if err := e.applyDropping(ctx, d, b, []*meta.Object{st.metas[p]}, nil); err != nil {
			return err
		}
		mu.Lock()
		res.Orphans++
		res.Dangling = true
		mu.Unlock()
		return nil
	})
	e.log.Warn("heal: removed remnants of a version below read quorum", "bucket", bucket, "key", key)
}

// healSettings rewrites the record of each drive that holds the version
// and its data intact but with the settings an in-place update (an ACL,
// a tag set) replaced while the drive missed it: only the record is
// written, from the settings the read agreed on (quorum.AgreedSettings).
// Such a drive counts as stale and healed.
func (e *Engine) healSettings(ctx context.Context, set *erasureSet, bucket, key string, st *objectState, status []int, res *HealResult) {
	fi := st.fi
	fixed := make([]bool, len(set.drives))
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		m := st.metas[p]
		if status[p] != posOK || m == nil || st.isPrev(p) || quorum.SameSettings(m, fi) {
			return nil
		}
		dm := *fi
		dm.Erasure.Index, dm.InlineData, dm.Flags = fi.Erasure.Distribution[p], nil, fi.Flags&^meta.FlagsPending
		if err := e.writeHealed(ctx, d, bucket, key, st, p, &dm, nil); err != nil {
			e.log.Warn("heal: cannot rewrite stale settings", "bucket", bucket, "key", key, "drive", d.String(), "err", err)
			return err
		}
		st.metas[p], fixed[p] = &dm, true
		return nil
	})
	for _, f := range fixed {
		if f {
			res.Stale++
			res.Healed++
		}
	}
}

// promotePrevious finishes what an interrupted commit left: a drive whose
// readable version is its previous one gets it back as its current one
// (the data it names is still there), and the version that never reached
// quorum goes, with its data.
func (e *Engine) promotePrevious(ctx context.Context, set *erasureSet, bucket, key string, st *objectState, res *HealResult) {
	if st.fromPrev == nil {
		return
	}
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if !st.fromPrev[p] {
			return nil
		}
		pv := *st.metas[p]
		pv.Flags &^= meta.FlagsPending
		rec, raw, err := e.replaceRecord(ctx, d, bucket, key, &pv, st.recs[p], st.raws[p], st.raws != nil, nil)
		if err != nil {
			st.metas[p], st.errs[p] = nil, err
			return err
		}
		st.recs[p], st.raws[p] = rec, raw
		st.metas[p] = &pv
		st.fromPrev[p] = false
		return nil
	})
	res.Recovered = true
}

// replaceRecord makes m drive d's only version of key (adding ops to the
// same batch when b is given), dropping the refs, inline data and shard
// files of every other version in old. With expect, it writes only while
// the drive still holds oldRaw (nil: no record), the record read before;
// it returns the record written.
func (e *Engine) replaceRecord(ctx context.Context, d drive.Drive, bucket, key string, m *meta.Object, old *meta.Record, oldRaw []byte, expect bool, b *drive.Batch) (*meta.Record, []byte, error) {
	if b == nil {
		b = &drive.Batch{}
	}
	keep := map[string]bool{}
	for _, id := range m.DataIDs() {
		keep[id] = true
		b.Put(drive.TableRefs, id, []byte(objectOwner(bucket, key)))
	}
	okey := drive.ObjectKey(bucket, key)
	if expect {
		b.Expect(drive.TableObjects, okey, oldRaw)
	}
	rec := &meta.Record{Versions: []*meta.Object{m}}
	raw := rec.Marshal()
	b.Put(drive.TableObjects, okey, raw)
	var replaced []*meta.Object
	if old != nil {
		for _, v := range old.Versions {
			if !v.SameVersion(m) {
				replaced = append(replaced, v)
			}
		}
	}
	if err := e.applyDropping(ctx, d, b, replaced, keep); err != nil {
		return nil, nil, err
	}
	return rec, raw, nil
}

// checkShards marks positions whose shard data (a file per part, or the
// inline entry) is missing.
func (e *Engine) checkShards(ctx context.Context, set *erasureSet, st *objectState, status []int) {
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if status[p] != posOK {
			return nil
		}
		err := shardsPresent(ctx, d, st.metas[p])
		switch {
		case errors.Is(err, drive.ErrNotFound):
			status[p] = posMissing
		case err != nil:
			status[p] = posOffline
		}
		return nil
	})
}

// shardsPresent checks that drive d has the data of version m.
func shardsPresent(ctx context.Context, d drive.Drive, m *meta.Object) error {
	if m.Inline {
		_, err := d.Get(ctx, drive.TableInline, drive.DataKey(m.DataID, 1))
		return err
	}
	for _, ref := range shardRefs(m) {
		rc, err := d.OpenShard(ctx, ref, 0)
		if err != nil {
			return err
		}
		rc.Close()
	}
	return nil
}

// objectParts lists fi's parts with the sizes of their coded streams
// (ciphertext for an encrypted version, which healing never decrypts).
func objectParts(fi *meta.Object) []meta.Part { return storedParts(fi) }

// newShardReader opens position p's shard of part pi for reading.
func (e *Engine) newShardReader(ctx context.Context, set *erasureSet, m *meta.Object, p int, coder *erasure.Coder, pi int) (*shardReader, error) {
	sr := &shardReader{d: set.drives[p], algo: bitrot.Algorithm(m.Erasure.Bitrot),
		full: int64(coder.ShardSize(m.Erasure.BlockSize)), next: -1}
	if m.Inline {
		data, err := readInline(ctx, sr.d, m)
		if err != nil {
			return nil, err
		}
		sr.inline, sr.isInline = data, true
		return sr, nil
	}
	parts := objectParts(m)
	id := m.DataID
	if len(m.Parts) > 0 {
		id = m.PartDataID(pi)
	}
	sr.ref = drive.ShardRef{ID: id, Part: parts[pi].Number}
	return sr, nil
}

// verifyShards reads every chunk of the positions marked in verify and
// marks those that fail (bitrot: corrupt; I/O: offline).
func (e *Engine) verifyShards(ctx context.Context, set *erasureSet, bucket, key string, st *objectState, coder *erasure.Coder, verify []bool, status []int) {
	fi := st.fi
	bs := int64(fi.Erasure.BlockSize)
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if !verify[p] || status[p] != posOK {
			return nil
		}
		buf := make([]byte, coder.ShardSize(fi.Erasure.BlockSize))
		for pi, pt := range objectParts(fi) {
			sr, err := e.newShardReader(ctx, set, st.metas[p], p, coder, pi)
			if err == nil {
				err = func() error {
					defer func() {
						if sr.rc != nil {
							sr.rc.Close()
						}
					}()
					for b := int64(0); b*bs < pt.Size; b++ {
						ss := coder.ShardSize(int(min(bs, pt.Size-b*bs)))
						if err := sr.readChunk(ctx, b, ss, buf[:ss]); err != nil {
							return err
						}
					}
					return nil
				}()
			}
			if err != nil {
				e.log.Warn("heal: shard failed verification", "bucket", bucket, "key", key, "drive", d.String(), "err", err)
				if errors.Is(err, drive.ErrDriveFaulty) {
					status[p] = posOffline
				} else {
					status[p] = posCorrupt
				}
				return nil
			}
		}
		return nil
	})
}

// rebuild reconstructs the shards of every bad position from read quorum
// good ones and commits them: the drive's old shard files of the version
// are removed, new ones written and synced, then its record replaced.
func (e *Engine) rebuild(ctx context.Context, set *erasureSet, bucket, key string, st *objectState, coder *erasure.Coder, status []int, res *HealResult) error {
	fi := st.fi
	n := len(set.drives)
	data, parity := fi.Erasure.DataShards, fi.Erasure.ParityShards
	var good, bad []int
	for p, s := range status {
		switch s {
		case posOK:
			good = append(good, p)
		case posMissing, posStale, posCorrupt:
			bad = append(bad, p)
		}
	}
	if len(good) < data {
		return fmt.Errorf("%w: %d of %d shards intact, %d needed to rebuild", ErrReadQuorum, len(good), n, data)
	}
	sources := good[:data]
	inline := fi.Inline
	parts := objectParts(fi)
	if fi.IsDeleteMarker() {
		parts = nil // a delete marker is its record alone
	}
	if !inline {
		refs := shardRefs(fi)
		forEachDrive(set.drives, func(p int, d drive.Drive) error {
			if status[p] == posMissing || status[p] == posStale || status[p] == posCorrupt {
				return d.DeleteShards(ctx, refs)
			}
			return nil
		})
	}
	inlineOut := make([]*bytes.Buffer, n)
	failed := make([]error, n)
	bs := int64(fi.Erasure.BlockSize)
	ssFull := coder.ShardSize(fi.Erasure.BlockSize)
	buf := make([]byte, (data+parity)*ssFull)
	shards := make([][]byte, data+parity)
	algo := bitrot.Algorithm(fi.Erasure.Bitrot)
	var sum [32]byte
	for pi, pt := range parts {
		sinks := make([]shardSink, n)
		for _, p := range bad {
			if inline {
				if inlineOut[p] == nil {
					inlineOut[p] = &bytes.Buffer{}
				}
				sinks[p] = &memSink{}
				continue
			}
			if failed[p] != nil {
				continue
			}
			w, err := set.drives[p].CreateShard(ctx, shardRefs(fi)[pi])
			if err != nil {
				failed[p] = err
				continue
			}
			sinks[p] = w
		}
		readers := make([]*shardReader, n)
		var err error
		for _, p := range sources {
			if readers[p], err = e.newShardReader(ctx, set, st.metas[p], p, coder, pi); err != nil {
				status[p] = posCorrupt
				err = fmt.Errorf("%w: %v", errSourceFailed, err)
				break
			}
		}
		if err == nil {
			err = func() error {
				defer func() {
					for _, sr := range readers {
						if sr != nil && sr.rc != nil {
							sr.rc.Close()
						}
					}
				}()
				for b := int64(0); b*bs < pt.Size; b++ {
					ss := coder.ShardSize(int(min(bs, pt.Size-b*bs)))
					for i := range shards {
						shards[i] = buf[i*ss : i*ss : (i+1)*ss]
					}
					errs := make([]error, n)
					var wg sync.WaitGroup
					for _, p := range sources {
						s := fi.Erasure.Distribution[p] - 1
						wg.Add(1)
						go func() {
							defer wg.Done()
							errs[p] = readers[p].readChunk(ctx, b, ss, buf[s*ss:(s+1)*ss])
						}()
					}
					wg.Wait()
					for _, p := range sources {
						if errs[p] != nil {
							if errors.Is(errs[p], drive.ErrDriveFaulty) {
								status[p] = posOffline
							} else {
								status[p] = posCorrupt
							}
							return fmt.Errorf("%w: %v", errSourceFailed, errs[p])
						}
						s := fi.Erasure.Distribution[p] - 1
						shards[s] = buf[s*ss : (s+1)*ss]
					}
					if err := coder.Reconstruct(shards); err != nil {
						return err
					}
					for _, p := range bad {
						if sinks[p] == nil {
							continue
						}
						sh := shards[fi.Erasure.Distribution[p]-1]
						if _, err := sinks[p].Write(algo.Sum(sum[:], sh)); err != nil {
							failed[p] = err
						} else if _, err := sinks[p].Write(sh); err != nil {
							failed[p] = err
						}
						if failed[p] != nil {
							sinks[p].Abort()
							sinks[p] = nil
						}
					}
				}
				return nil
			}()
		}
		for _, p := range bad {
			if sinks[p] == nil {
				continue
			}
			if err != nil {
				sinks[p].Abort()
				continue
			}
			if m, ok := sinks[p].(*memSink); ok {
				inlineOut[p].Write(m.Bytes())
				continue
			}
			if cerr := sinks[p].Close(); cerr != nil {
				failed[p] = cerr
			}
		}
		if err != nil {
			return err
		}
	}
	errs := forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if status[p] == posOK || status[p] == posOffline {
			return nil
		}
		if failed[p] != nil {
			return failed[p]
		}
		dm := *fi
		dm.Erasure.Index = fi.Erasure.Distribution[p]
		dm.InlineData, dm.Flags = nil, dm.Flags&^meta.FlagsPending
		b := &drive.Batch{}
		if inline {
			b.Put(drive.TableInline, drive.DataKey(fi.DataID, 1), inlineOut[p].Bytes())
		}
		return e.writeHealed(ctx, d, bucket, key, st, p, &dm, b)
	})
	for _, p := range bad {
		if errs[p] == nil {
			res.Healed++
		} else {
			e.log.Warn("heal: cannot rewrite shard", "bucket", bucket, "key", key, "drive", set.drives[p].String(), "err", errs[p])
			status[p] = posOffline
			// Not repaired: callers (the heal queue) must retry, as for a
			// drive that did not answer.
			res.Offline++
		}
	}
	return nil
}

// removeDangling deletes what is left of an object that fewer than read
// quorum drives hold: it can never be read, and leaving it would let it
// show up in listings.
func (e *Engine) removeDangling(ctx context.Context, set *erasureSet, bucket, key string, recs []*meta.Record, raws [][]byte, res *HealResult) error {
	var held []*meta.Object
	for _, r := range recs {
		if r != nil {
			held = append(held, r.Versions...)
		}
	}
	if e.lockedRemnants(bucket, key, held) {
		return nil
	}
	okey := drive.ObjectKey(bucket, key)
	var mu sync.Mutex
	errs := forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if recs[p] == nil {
			return errDriveSkipped
		}
		b := &drive.Batch{}
		b.Expect(drive.TableObjects, okey, raws[p])
		b.Delete(drive.TableObjects, okey)
		if err := e.applyDropping(ctx, d, b, recs[p].Versions, nil); err != nil {
			return err
		}
		mu.Lock()
		res.Orphans += len(recs[p].Versions)
		mu.Unlock()
		return nil
	})
	removed := countNil(errs)
	if removed > 0 {
		res.Dangling = true
		e.log.Warn("heal: removed remnants of an object below read quorum", "bucket", bucket, "key", key,
			"records", removed)
	}
	return nil
}

// lockedRemnants reports whether any of versions, the remnants of a
// version too few drives hold to read, is under retention or legal hold:
// healing never removes those (object lock binds the healer too); they
// stay, logged, until the protection ends.
func (e *Engine) lockedRemnants(bucket, key string, versions []*meta.Object) bool {
	for _, m := range versions {
		if m != nil && e.checkRemovable(bucket, key, m, false) != nil {
			e.log.Warn("heal: kept remnants of a version below read quorum: object lock protects it",
				"bucket", bucket, "key", key, "version", versionName(m.VersionID))
			return true
		}
	}
	return false
}

// recoverVersion handles an object on which no version has read quorum
// metadata: typically an overwrite killed mid-commit, which left the old
// version's metadata on some drives and the new one's on others. The
// data directories of both are still on disk, so a version whose
// metadata or data directory is on read quorum drives is rebuilt (its
// metadata synthesised where only the data is left, then every shard is
// verified). The newest such version wins. When none qualifies and every
// drive answered, the remnants are removed and nil is returned.
func (e *Engine) recoverVersion(ctx context.Context, set *erasureSet, bucket, key string, recs []*meta.Record, raws [][]byte, errs []error, res *HealResult) (*objectState, error) {
	n := len(set.drives)
	offline := 0
	for p := range errs {
		if errs[p] != nil && !errors.Is(errs[p], drive.ErrNotFound) && !errors.Is(errs[p], meta.ErrCorrupt) {
			offline++
		}
	}
	holds := func(p int, v *meta.Object) bool {
		if recs[p] == nil {
			return false
		}
		for _, w := range recs[p].Versions {
			if w.SameVersion(v) {
				return true
			}
		}
		return false
	}
	var best *objectState
	for _, r := range recs {
		if r == nil {
			continue
		}
		for _, cand := range r.Versions {
			if cand.Inline || (best != nil && cand.ModTime <= best.fi.ModTime) {
				continue
			}
			fi := *cand
			fi.Flags &^= meta.FlagsPending
			st := &objectState{fi: &fi, metas: make([]*meta.Object, n), errs: make([]error, n), recs: recs, raws: raws}
			holders := 0
			for p := range recs {
				dm := fi
				dm.Erasure.Index = fi.Erasure.Distribution[p]
				// A drive counts when its record names the version, or
				// when the version's shard files are there (the commit
				// never reached it, but the data did).
				if holds(p, cand) || (errs[p] == nil || errors.Is(errs[p], drive.ErrNotFound)) && shardsPresent(ctx, set.drives[p], &dm) == nil {
					st.metas[p] = &dm
					holders++
					continue
				}
				st.errs[p] = errs[p]
				if st.errs[p] == nil {
					st.errs[p] = quorum.ErrStale
				}
			}
			if holders >= fi.Erasure.DataShards {
				best = st
			}
		}
	}
	if best != nil && offline > 0 && quorum.Superseded(recs, absentIn(errs), best.fi) {
		// Another version may be on its write quorum with the drives that
		// did not answer, acknowledged after best: making best current
		// would roll it back (finding R1 in docs/consistency.md).
		return nil, fmt.Errorf("%w: a version other than the one recoverable may have write quorum with the %d drives that did not answer", ErrReadQuorum, offline)
	}
	if best != nil {
		res.Recovered = true
		e.log.Warn("heal: recovering a version without metadata quorum from its shard data", "bucket", bucket, "key", key)
		return best, nil
	}
	if offline > 0 {
		return nil, fmt.Errorf("%w: no version has read quorum and %d drives did not answer", ErrReadQuorum, offline)
	}
	return nil, e.removeDangling(ctx, set, bucket, key, recs, raws, res)
}

// absentIn marks the drives whose read answered that they hold no record,
// or a corrupt one: a drive that will not answer better later (the heal
// rewrites a corrupt record), unlike one offline.
func absentIn(errs []error) []bool {
	absent := make([]bool, len(errs))
	for p, err := range errs {
		absent[p] = errors.Is(err, drive.ErrNotFound) || errors.Is(err, meta.ErrCorrupt)
	}
	return absent
}
