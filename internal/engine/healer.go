package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/shardstore/shardstore/internal/bitrot"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/erasure"
	"github.com/shardstore/shardstore/internal/meta"
)

// HealOptions select how thoroughly an object is checked.
type HealOptions struct {
	// Deep verifies every chunk checksum of every shard (bitrot); without
	// it only metadata and the presence of shard files are checked.
	Deep bool
}

// HealResult reports what healing one object found and did. The counts
// are drive positions of the object's set, as found before repair.
type HealResult struct {
	Bucket, Key string
	Size        int64
	// Missing: no metadata or shard file. Stale: an older version.
	// Corrupt: metadata or a shard chunk failed its checksum. Offline:
	// the drive did not answer, so it could not be checked or repaired.
	Missing, Stale, Corrupt, Offline int
	// Healed is how many drive positions were rewritten.
	Healed int
	// Dangling is set when fewer than read quorum drives held the object
	// (a write or delete interrupted before it was acknowledged) and the
	// remnants were removed: the object does not exist.
	Dangling bool
	// Recovered is set when no version had quorum metadata (an overwrite
	// interrupted mid-commit) and a version was rebuilt from its shard
	// data, which still had read quorum.
	Recovered bool
	// Orphans counts data directories no metadata referenced (left by an
	// interrupted overwrite or delete) that were removed.
	Orphans int
}

// Damaged reports whether the object had anything to repair.
func (r HealResult) Damaged() bool {
	return r.Missing+r.Stale+r.Corrupt > 0 || r.Dangling || r.Recovered
}

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
	set := e.setFor(bucket, key)
	unlock := e.locks.Lock(lockName(bucket, key))
	defer unlock()
	res := HealResult{Bucket: bucket, Key: key}
	err := e.healLocked(ctx, set, bucket, key, opts, &res)
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
		return e.removeDangling(ctx, set, bucket, key, res)
	case errors.Is(err, ErrReadQuorum):
		st, err = e.recoverVersion(ctx, set, bucket, key, res)
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
	}
	e.promotePrevious(ctx, set, bucket, key, st, res)
	fi := st.fi
	res.Size = fi.Size
	n := len(set.drives)
	status := make([]int, n)
	for p := range status {
		switch perr := st.errs[p]; {
		case st.metas[p] != nil:
			status[p] = posOK
		case errors.Is(perr, drive.ErrFileNotFound):
			status[p] = posMissing
		case errors.Is(perr, meta.ErrCorrupt):
			status[p] = posCorrupt
		case perr != nil && perr.Error() == "stale version":
			status[p] = posStale
		default:
			status[p] = posOffline
		}
	}
	if fi.DataDir != "" {
		e.checkDataDirs(ctx, set, bucket, key, fi, status)
	}
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
	e.removeOrphans(ctx, set, bucket, key, fi.DataDir, status, res)
	return nil
}

// promotePrevious finishes what an interrupted commit left: a drive whose
// readable record is its previous one gets it back as its current record
// (the data it names is still there), and the previous record goes.
func (e *Engine) promotePrevious(ctx context.Context, set *erasureSet, bucket, key string, st *objectState, res *HealResult) {
	if st.fromPrev == nil {
		return
	}
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if !st.fromPrev[p] {
			return nil
		}
		if err := d.WriteFile(ctx, bucket, objectMetaPath(key), st.metas[p].Marshal()); err != nil {
			st.metas[p], st.errs[p] = nil, err
			return err
		}
		d.Delete(ctx, bucket, prevMetaPath(key), false)
		st.fromPrev[p] = false
		return nil
	})
	res.Recovered = true
}

// checkDataDirs marks positions whose data directory lacks a part file.
func (e *Engine) checkDataDirs(ctx context.Context, set *erasureSet, bucket, key string, fi *meta.Object, status []int) {
	dir := objectDir(key) + "/" + fi.DataDir
	want := partNames(fi)
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if status[p] != posOK {
			return nil
		}
		names, err := d.ListDir(ctx, bucket, dir)
		switch {
		case errors.Is(err, drive.ErrFileNotFound):
			status[p] = posMissing
			return nil
		case err != nil:
			status[p] = posOffline
			return nil
		}
		have := map[string]bool{}
		for _, n := range names {
			have[n] = true
		}
		for _, w := range want {
			if !have[w] {
				status[p] = posMissing
				return nil
			}
		}
		return nil
	})
}

func objectParts(fi *meta.Object) []meta.Part {
	if len(fi.Parts) == 0 {
		return []meta.Part{{Number: 1, Size: fi.Size}}
	}
	return fi.Parts
}

func partNames(fi *meta.Object) []string {
	var out []string
	for _, pt := range objectParts(fi) {
		out = append(out, partFile(pt.Number))
	}
	return out
}

// newShardReader opens position p's shard of one part for reading.
func (e *Engine) newShardReader(set *erasureSet, bucket, key string, m *meta.Object, p int, coder *erasure.Coder, partNum int) *shardReader {
	sr := &shardReader{d: set.drives[p], algo: bitrot.Algorithm(m.Erasure.Bitrot),
		full: int64(coder.ShardSize(m.Erasure.BlockSize)), inline: m.Inline, next: -1}
	if m.DataDir != "" {
		sr.vol, sr.path = bucket, objectDir(key)+"/"+m.DataDir+"/"+partFile(partNum)
	}
	return sr
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
		for _, pt := range objectParts(fi) {
			sr := e.newShardReader(set, bucket, key, st.metas[p], p, coder, pt.Number)
			err := func() error {
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
// good ones and commits them: shard files staged in tmp and renamed into
// place, then that drive's metadata written.
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
	inline := fi.DataDir == ""
	tmpID := uuid.NewString()
	tmpDir := drive.TmpDir + "/" + tmpID
	defer forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if !inline && status[p] != posOK && status[p] != posOffline {
			d.Delete(context.Background(), drive.SystemVolume, tmpDir, true)
		}
		return nil
	})
	inlineOut := make([]*bytes.Buffer, n)
	failed := make([]error, n)
	bs := int64(fi.Erasure.BlockSize)
	ssFull := coder.ShardSize(fi.Erasure.BlockSize)
	buf := make([]byte, (data+parity)*ssFull)
	shards := make([][]byte, data+parity)
	algo := bitrot.Algorithm(fi.Erasure.Bitrot)
	var sum [32]byte
	for _, pt := range objectParts(fi) {
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
			w, err := set.drives[p].CreateFile(ctx, drive.SystemVolume, tmpDir+"/"+fi.DataDir+"/"+partFile(pt.Number))
			if err != nil {
				failed[p] = err
				continue
			}
			sinks[p] = w
		}
		readers := make([]*shardReader, n)
		for _, p := range sources {
			readers[p] = e.newShardReader(set, bucket, key, st.metas[p], p, coder, pt.Number)
		}
		err := func() error {
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
	metaPath := objectMetaPath(key)
	dir := objectDir(key)
	errs := forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if status[p] == posOK || status[p] == posOffline {
			return nil
		}
		if failed[p] != nil {
			return failed[p]
		}
		dm := *fi
		dm.Erasure.Index = fi.Erasure.Distribution[p]
		dm.Inline = nil
		if inline {
			dm.Inline = inlineOut[p].Bytes()
		} else {
			if err := d.Delete(ctx, bucket, dir+"/"+fi.DataDir, true); err != nil && !errors.Is(err, drive.ErrFileNotFound) {
				return err
			}
			if err := d.Rename(ctx, drive.SystemVolume, tmpDir+"/"+fi.DataDir, bucket, dir+"/"+fi.DataDir); err != nil {
				return err
			}
		}
		return d.WriteFile(ctx, bucket, metaPath, dm.Marshal())
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

// removeOrphans deletes data directories of the object that its current
// metadata does not reference (keep == "" removes them all).
func (e *Engine) removeOrphans(ctx context.Context, set *erasureSet, bucket, key, keep string, status []int, res *HealResult) {
	var mu sync.Mutex
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if status != nil && status[p] == posOffline {
			return nil
		}
		names, err := d.ListDir(ctx, bucket, objectDir(key))
		if err != nil {
			return nil
		}
		for _, nm := range names {
			nm = strings.TrimSuffix(nm, "/")
			if !strings.HasPrefix(nm, dataDirPrefix) || nm == keep {
				continue
			}
			if d.Delete(ctx, bucket, objectDir(key)+"/"+nm, true) == nil {
				mu.Lock()
				res.Orphans++
				mu.Unlock()
			}
		}
		return nil
	})
}

// rawMetas reads every drive's metadata file for key, whatever version.
func (e *Engine) rawMetas(ctx context.Context, set *erasureSet, bucket, key string) ([]*meta.Object, []error) {
	metas := make([]*meta.Object, len(set.drives))
	errs := forEachDrive(set.drives, func(p int, d drive.Drive) error {
		raw, err := d.ReadFile(ctx, bucket, objectMetaPath(key))
		if err != nil {
			return err
		}
		m, err := meta.Unmarshal(raw)
		if err != nil {
			return err
		}
		metas[p] = m
		return nil
	})
	return metas, errs
}

// removeDangling deletes what is left of an object that fewer than read
// quorum drives hold: it can never be read, and leaving it would let it
// show up in listings.
func (e *Engine) removeDangling(ctx context.Context, set *erasureSet, bucket, key string, res *HealResult) error {
	metas, _ := e.rawMetas(ctx, set, bucket, key)
	errs := forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if metas[p] == nil {
			return errDriveSkipped
		}
		return d.Delete(ctx, bucket, objectMetaPath(key), false)
	})
	removed := countNil(errs)
	e.removeOrphans(ctx, set, bucket, key, "", nil, res)
	if removed > 0 || res.Orphans > 0 {
		res.Dangling = true
		e.log.Warn("heal: removed remnants of an object below read quorum", "bucket", bucket, "key", key,
			"metadata", removed, "dataDirs", res.Orphans)
	}
	return nil
}

// recoverVersion handles an object on which no version has read quorum
// metadata: typically an overwrite killed mid-commit, which left the old
// version's metadata on some drives and the new one's on others. The
// data directories of both are still on disk, so a version whose
// metadata or data directory is on read quorum drives is rebuilt (its
// metadata synthesised where only the data is left, then every shard is
// verified). The newest such version wins. When none qualifies and every
// drive answered, the remnants are removed and nil is returned.
func (e *Engine) recoverVersion(ctx context.Context, set *erasureSet, bucket, key string, res *HealResult) (*objectState, error) {
	n := len(set.drives)
	metas, errs := e.rawMetas(ctx, set, bucket, key)
	dirs := make([]map[string]bool, n)
	offline := 0
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		names, err := d.ListDir(ctx, bucket, objectDir(key))
		if err != nil && !errors.Is(err, drive.ErrFileNotFound) {
			return err
		}
		dirs[p] = map[string]bool{}
		for _, nm := range names {
			dirs[p][strings.TrimSuffix(nm, "/")] = true
		}
		return nil
	})
	for p := range errs {
		if errs[p] != nil && !errors.Is(errs[p], drive.ErrFileNotFound) && !errors.Is(errs[p], meta.ErrCorrupt) {
			offline++
		}
	}
	var best *objectState
	for _, cand := range metas {
		if cand == nil || cand.DataDir == "" || (best != nil && cand.ModTime <= best.fi.ModTime) {
			continue
		}
		st := &objectState{fi: cand, metas: make([]*meta.Object, n), errs: make([]error, n)}
		holders := 0
		for p := range metas {
			switch {
			case metas[p] != nil && metas[p].SameVersion(cand):
				st.metas[p] = metas[p]
			case dirs[p] != nil && dirs[p][cand.DataDir]:
				dm := *cand
				dm.Erasure.Index = cand.Erasure.Distribution[p]
				dm.Inline = nil
				st.metas[p] = &dm
			default:
				st.errs[p] = errs[p]
				if st.errs[p] == nil {
					st.errs[p] = errors.New("stale version")
				}
				continue
			}
			holders++
		}
		if holders >= cand.Erasure.DataShards {
			best = st
		}
	}
	if best != nil {
		res.Recovered = true
		e.log.Warn("heal: recovering a version without metadata quorum from its shard data", "bucket", bucket, "key", key)
		return best, nil
	}
	if offline > 0 {
		return nil, fmt.Errorf("%w: no version has read quorum and %d drives did not answer", ErrReadQuorum, offline)
	}
	return nil, e.removeDangling(ctx, set, bucket, key, res)
}
