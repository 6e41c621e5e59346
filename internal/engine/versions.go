package engine

// Object versions. A key's current version (an object or a delete
// marker) is its record in the drive's objects table, as for unversioned
// keys; every noncurrent version is an entry of its own in the versions
// table, under VersionKey (key, inverted time, version id), so a key's
// versions scan newest first and listing current keys never reads them.
// A version id is the version's time in hex followed by 64 random bits:
// the id alone locates its entry. Commits (put.go) move the replaced
// current version into the versions table; this file reads, deletes and
// lists versions.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/quorum"
	"github.com/shardstore/shardstore/internal/wallclock"
)

// newVersionID makes the id of a version committed at t (Unix ns).
func newVersionID(t int64) string {
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // the runtime's source does not fail
	}
	return fmt.Sprintf("%016x", uint64(t)) + hex.EncodeToString(r[:])
}

// versionRef is a version a request names.
type versionRef struct {
	id   string // "" for the null version
	time int64  // from the id; 0 for the null version
	null bool
	// adopted marks an id this engine did not make: a version adopted
	// from MinIO (internal/migrate) keeps its UUID, which carries no
	// time, so its versions-table key is found by scanning the key's
	// versions (versionKeyOn) instead of being computed.
	adopted bool
}

// parseVersionID reads a request's version id: "null", an id this
// engine made, or a UUID (how MinIO spells version ids: versions adopted
// from MinIO keep theirs; one that names no version is ErrNoSuchVersion,
// as clients such as minio-go's suite expect). Anything else is
// ErrInvalidArgument, as S3 answers an id it could not have issued.
func parseVersionID(s string) (versionRef, error) {
	if s == NullVersionID {
		return versionRef{null: true}, nil
	}
	if _, err := uuid.Parse(s); err == nil && len(s) == 36 {
		if strings.ToLower(s) != s {
			// Adopted ids are stored as MinIO formats them, lower case.
			return versionRef{}, fmt.Errorf("%w: version id %q was not issued by this server", ErrNoSuchVersion, s)
		}
		return versionRef{id: s, adopted: true}, nil
	}
	if len(s) != 32 || strings.ToLower(s) != s {
		return versionRef{}, fmt.Errorf("%w: invalid version id %q", ErrInvalidArgument, s)
	}
	if _, err := hex.DecodeString(s); err != nil {
		return versionRef{}, fmt.Errorf("%w: invalid version id %q", ErrInvalidArgument, s)
	}
	t, err := strconv.ParseUint(s[:16], 16, 64)
	if err != nil {
		return versionRef{}, fmt.Errorf("%w: invalid version id %q", ErrInvalidArgument, s)
	}
	return versionRef{id: s, time: int64(t)}, nil
}

// refOfVersionKey is the version a versions-table key under prefix
// (drive.VersionPrefix) names; ok is false for a key whose id this engine
// could not have made or adopted. An adopted id takes its time from the
// key.
func refOfVersionKey(prefix, k string) (ref versionRef, ok bool) {
	id := k[len(prefix)+drive.VersionKeyLen:]
	if id == "" {
		return versionRef{null: true}, true
	}
	ref, err := parseVersionID(id)
	if err != nil {
		return ref, false
	}
	if ref.adopted {
		inv, err := strconv.ParseUint(k[len(prefix):len(prefix)+drive.VersionKeyLen], 16, 64)
		if err != nil {
			return ref, false
		}
		ref.time, ref.adopted = int64(^inv), false
	}
	return ref, true
}

// matches reports whether m is the version r names.
func (r versionRef) matches(m *meta.Object) bool {
	if r.null {
		return m.VersionID == ""
	}
	return m.VersionID == r.id
}

// deleteMarkerError describes a delete marker that a read resolved.
func deleteMarkerError(bucket, key string, m *meta.Object, latest bool, err error) error {
	info := objectInfo(bucket, key, m)
	info.IsLatest = latest
	return &DeleteMarkerError{Marker: info, Err: err}
}

// nullKeyOn finds the versions-table key of the null version of
// bucket/key on d ("" when it has none): the only key of the range with
// no version id after the time.
func nullKeyOn(ctx context.Context, d drive.Drive, bucket, key string) (string, error) {
	return versionKeyOn(ctx, d, bucket, key, "")
}

// versionKeyOn finds the versions-table key of version id ("" for the
// null version) of bucket/key on d by scanning the key's versions ("" when
// it has none): for ids whose time is not known (the null version,
// adopted ids).
func versionKeyOn(ctx context.Context, d drive.Drive, bucket, key, id string) (string, error) {
	prefix := drive.VersionPrefix(bucket, key)
	q := drive.ScanQuery{Prefix: prefix, KeysOnly: true, Limit: 1000}
	for {
		ents, err := d.Scan(ctx, drive.TableVersions, q)
		if err != nil {
			return "", err
		}
		for _, ent := range ents {
			if len(ent.Key) == len(prefix)+drive.VersionKeyLen+len(id) && strings.HasSuffix(ent.Key, id) {
				return ent.Key, nil
			}
		}
		if len(ents) < q.Limit {
			return "", nil
		}
		q.After = ents[len(ents)-1].Key
	}
}

// nullVersion is a drive's noncurrent null version, as a suspended
// bucket's write finds it before replacing it.
type nullVersion struct {
	key    string
	raw    []byte
	inline []byte
	m      *meta.Object
}

// restore adds to b what puts n back (a rolled-back commit).
func (n *nullVersion) restore(b *drive.Batch, bucket, key string) {
	b.Put(drive.TableVersions, n.key, n.raw)
	for _, id := range n.m.DataIDs() {
		b.Put(drive.TableRefs, id, []byte(objectOwner(bucket, key)))
	}
	if n.inline != nil {
		b.Put(drive.TableInline, drive.DataKey(n.m.DataID, 1), n.inline)
	}
}

// findNullVersions reads each drive's noncurrent null version of
// bucket/key (nil where there is none or it cannot be read).
func (e *Engine) findNullVersions(ctx context.Context, set *erasureSet, bucket, key string) []*nullVersion {
	out := make([]*nullVersion, len(set.drives))
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		k, err := nullKeyOn(ctx, d, bucket, key)
		if err != nil || k == "" {
			return err
		}
		raw, err := d.Get(ctx, drive.TableVersions, k)
		if err != nil {
			return err
		}
		m, err := meta.Unmarshal(raw)
		if err != nil {
			return err
		}
		nv := &nullVersion{key: k, raw: raw, m: m}
		if m.Inline {
			if nv.inline, err = d.Get(ctx, drive.TableInline, drive.DataKey(m.DataID, 1)); err != nil {
				return err
			}
		}
		out[p] = nv
		return nil
	})
	return out
}

// readNoncurrent reads version ref of bucket/key from the versions table
// of every drive of the set and picks it by the same quorum rules as
// readObject. recs are the drives' current records: a version that a
// commit left pending there (FlagKeep) counts as held.
func (e *Engine) readNoncurrent(ctx context.Context, set *erasureSet, bucket, key string, ref versionRef, recs []*meta.Record) (*objectState, error) {
	n := len(set.drives)
	st := &objectState{metas: make([]*meta.Object, n), errs: make([]error, n), vkeys: make([]string, n), vraws: make([][]byte, n)}
	st.errs = forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if recs != nil && recs[p] != nil {
			for _, v := range recs[p].Versions {
				if v.Flags&meta.FlagKeep != 0 && ref.matches(v) {
					m := *v
					m.Flags &^= meta.FlagsPending
					st.metas[p] = &m
					return nil
				}
			}
		}
		k := drive.VersionKey(bucket, key, ref.time, ref.id)
		if ref.null || ref.adopted {
			var err error
			if k, err = versionKeyOn(ctx, d, bucket, key, ref.id); err != nil {
				return err
			}
			if k == "" {
				return drive.ErrNotFound
			}
		}
		raw, err := d.Get(ctx, drive.TableVersions, k)
		if err != nil {
			return err
		}
		m, err := meta.Unmarshal(raw)
		if err != nil {
			return fmt.Errorf("drive %s: %s/%s version %s: %w", d, bucket, key, ref.id, err)
		}
		if !ref.matches(m) {
			return fmt.Errorf("drive %s: %s/%s: version entry %q holds version %q: %w", d, bucket, key, k, m.VersionID, meta.ErrCorrupt)
		}
		st.metas[p], st.vkeys[p], st.vraws[p] = m, k, raw
		return nil
	})
	absent := make([]bool, n)
	for p, err := range st.errs {
		absent[p] = errors.Is(err, drive.ErrNotFound)
	}
	q := quorum.Noncurrent(st.metas, absent, set.parity)
	if q.Version == nil {
		if q.NotFound {
			return st, fmt.Errorf("%s/%s version %s: %w", bucket, key, versionName(ref.id), ErrNoSuchVersion)
		}
		return st, fmt.Errorf("%s/%s version %s: %w: %d of %d drives agree, %d needed: %v",
			bucket, key, versionName(ref.id), ErrReadQuorum, q.Votes, n, q.Need, firstErr(st.errs))
	}
	st.agreeOn(q)
	st.vkey = drive.VersionKey(bucket, key, st.fi.ModTime, st.fi.VersionID)
	return st, nil
}

// versionName spells a version id for messages and S3 answers.
func versionName(id string) string {
	if id == "" {
		return NullVersionID
	}
	return id
}

// resolveVersion reads the version of bucket/key that versionID names:
// the current one when it is that version (latest), else a noncurrent one.
func (e *Engine) resolveVersion(ctx context.Context, set *erasureSet, bucket, key, versionID string) (st *objectState, latest bool, err error) {
	ref, err := parseVersionID(versionID)
	if err != nil {
		return nil, false, err
	}
	head, herr := e.readObject(ctx, set, bucket, key)
	if herr == nil && ref.matches(head.fi) {
		return head, true, nil
	}
	st, err = e.readNoncurrent(ctx, set, bucket, key, ref, head.recs)
	if errors.Is(err, ErrNoSuchVersion) && herr != nil && !errors.Is(herr, ErrObjectNotFound) {
		return nil, false, herr // the current version could not be read: it may be the one asked for
	}
	return st, false, err
}

// updateVersionMeta rewrites one version's metadata in place with fn
// (versionID "": the current version), under the object's write lock.
func (e *Engine) updateVersionMeta(ctx context.Context, bucket, key, versionID string, fn func(m *meta.Object) error) (ObjectInfo, error) {
	ctx, set, unlock, err := e.lockKey(ctx, bucket, key)
	if err != nil {
		return ObjectInfo{}, err
	}
	defer unlock()
	if versionID == "" {
		// The current version, as updateMetaIf does, with the caller's
		// WithUpdateCommitted hook called under the lock.
		st, err := e.readObject(ctx, set, bucket, key)
		if err != nil {
			return ObjectInfo{}, err
		}
		if st.fi.IsDeleteMarker() {
			return ObjectInfo{}, deleteMarkerError(bucket, key, st.fi, true, ErrObjectNotFound)
		}
		oi, err := e.updateHeadLocked(ctx, set, bucket, key, st, nil, PutOptions{}, fn)
		if err == nil {
			UpdateCommitted(ctx, oi)
		}
		return oi, err
	}
	st, latest, err := e.resolveVersion(ctx, set, bucket, key, versionID)
	if err != nil {
		return ObjectInfo{}, err
	}
	if st.fi.IsDeleteMarker() {
		return ObjectInfo{}, deleteMarkerError(bucket, key, st.fi, latest, ErrMethodNotAllowed)
	}
	if latest {
		oi, err := e.updateHeadLocked(ctx, set, bucket, key, st, nil, PutOptions{}, fn)
		if err == nil {
			UpdateCommitted(ctx, oi)
		}
		return oi, err
	}
	nm := *st.fi
	if err := fn(&nm); err != nil {
		return ObjectInfo{}, err
	}
	errs := forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if st.metas[p] == nil {
			return firstErr([]error{st.errs[p], errDriveSkipped})
		}
		dm := nm
		dm.Erasure.Index, dm.InlineData = nm.Erasure.Distribution[p], nil
		b := &drive.Batch{}
		if st.vkeys[p] != "" {
			// Not a version another writer removed meanwhile (a stale
			// update would bring back an entry whose data is gone).
			b.Expect(drive.TableVersions, st.vkeys[p], st.vraws[p])
		}
		b.Put(drive.TableVersions, st.vkey, dm.Marshal())
		return d.Apply(ctx, b)
	})
	if ok, wq := countNil(errs), quorum.WriteQuorum(nm.Erasure.DataShards, nm.Erasure.ParityShards); ok < wq {
		e.jobs.QueueHeal(bucket, key)
		return ObjectInfo{}, quorumError("update version", errs, ok, wq)
	}
	if countNil(errs) < len(errs) {
		e.jobs.QueueHeal(bucket, key)
	}
	oi := objectInfo(bucket, key, &nm)
	UpdateCommitted(ctx, oi)
	return oi, nil
}

// DeleteObjectVersion deletes as S3 does in the bucket's versioning
// state. Without a version id an unversioned bucket loses the object
// and a versioned one gets a delete marker as the key's current version
// (the null version's place in a suspended bucket). With one, that
// version goes for good; when it was the current version, the newest
// noncurrent one becomes current.
func (e *Engine) DeleteObjectVersion(ctx context.Context, bucket, key string, opts DeleteOptions) (DeleteResult, error) {
	info, err := e.BucketInfo(ctx, bucket)
	if err != nil {
		return DeleteResult{}, err
	}
	if err := checkObjectName(key); err != nil {
		return DeleteResult{}, err
	}
	if opts.VersionID == "" {
		var failed error
		keep := condKeep(opts.Cond, &failed)
		if info.Versioning == "" {
			_, err := e.deleteObject(ctx, bucket, key, keep, opts.Committed)
			return DeleteResult{}, firstErr([]error{err, failed})
		}
		res, made, err := e.putDeleteMarker(ctx, bucket, key, keep, opts.Committed)
		if err == nil && failed == nil && opts.Cond != nil && !made {
			// A delete marker is current: no object to match.
			failed = opts.Cond.check(nil)
		}
		return res, firstErr([]error{err, failed})
	}
	ref, err := parseVersionID(opts.VersionID)
	if err != nil {
		return DeleteResult{}, err
	}
	ctx, set, unlock, err := e.lockKey(ctx, bucket, key)
	if err != nil {
		return DeleteResult{}, err
	}
	defer unlock()
	head, herr := e.readObject(ctx, set, bucket, key)
	if herr == nil && ref.matches(head.fi) {
		if err := opts.checkVersion(head.fi, bucket, key); err != nil {
			return DeleteResult{}, err
		}
		if err := e.checkRemovable(bucket, key, head.fi, opts.BypassGovernance); err != nil {
			return DeleteResult{}, err
		}
		if err := e.deleteCurrentVersion(ctx, set, bucket, key, head); err != nil {
			return DeleteResult{}, err
		}
		res := DeleteResult{VersionID: head.fi.VersionID, DeleteMarker: head.fi.IsDeleteMarker()}
		if opts.Committed != nil {
			opts.Committed(res)
		}
		return res, nil
	}
	if herr == nil {
		e.settle(ctx, set, bucket, key, head)
	}
	st, err := e.readNoncurrent(ctx, set, bucket, key, ref, head.recs)
	if err != nil {
		if errors.Is(err, ErrNoSuchVersion) && herr != nil && !errors.Is(herr, ErrObjectNotFound) {
			return DeleteResult{}, herr
		}
		return DeleteResult{}, err
	}
	if err := opts.checkVersion(st.fi, bucket, key); err != nil {
		return DeleteResult{}, err
	}
	if err := e.checkRemovable(bucket, key, st.fi, opts.BypassGovernance); err != nil {
		return DeleteResult{}, err
	}
	errs := forEachDriveGrouped(ctx, set.drives, func(p int, d drive.Drive, apply func(*drive.Batch) error) error {
		m := st.metas[p]
		if m == nil || st.vkeys[p] == "" {
			// Nothing of the version here, or only a pending copy
			// in the current record, which a heal settles (and then
			// finds the version gone from quorum).
			if errors.Is(st.errs[p], drive.ErrNotFound) || st.errs[p] == nil {
				return nil
			}
			return st.errs[p]
		}
		b := &drive.Batch{}
		b.Expect(drive.TableVersions, st.vkeys[p], st.vraws[p])
		b.Delete(drive.TableVersions, st.vkeys[p])
		return e.applyDroppingWith(apply, d, b, []*meta.Object{m}, nil)
	})
	if ok, wq := countNil(errs), quorum.WriteQuorum(st.fi.Erasure.DataShards, st.fi.Erasure.ParityShards); ok < wq {
		e.jobs.QueueHeal(bucket, key)
		return DeleteResult{}, quorumError("delete version", errs, ok, wq)
	}
	if countNil(errs) < len(errs) {
		e.jobs.QueueHeal(bucket, key)
	}
	res := DeleteResult{VersionID: st.fi.VersionID, DeleteMarker: st.fi.IsDeleteMarker()}
	if opts.Committed != nil {
		opts.Committed(res)
	}
	return res, nil
}

// checkVersion judges the version a delete with a version id removes
// against opts.Cond (none: nothing to judge), under the key's lock.
func (opts DeleteOptions) checkVersion(fi *meta.Object, bucket, key string) error {
	if opts.Cond == nil {
		return nil
	}
	cur := objectInfo(bucket, key, fi)
	return opts.Cond.check(&cur)
}

// putDeleteMarker makes a delete marker the current version of
// bucket/key (which need not exist: S3 records the marker anyway), unless
// keep, given the current version under the object's lock, returns true
// (then nothing happens and made is false); keep is not called when the
// key has no current object. done, when set, is called with the marker
// once it is committed, still under the lock (DeleteOptions.Committed).
func (e *Engine) putDeleteMarker(ctx context.Context, bucket, key string, keep func(ObjectInfo) bool, done func(DeleteResult)) (res DeleteResult, made bool, err error) {
	ctx, unlock, err := e.locks.LockCtx(ctx, lockName(bucket, key))
	if err != nil {
		return DeleteResult{}, false, err
	}
	defer unlock()
	// A delete marker of a key no pool holds goes to a pool picked as
	// for a new key.
	set, err := e.writeSet(ctx, bucket, key)
	if err != nil {
		return DeleteResult{}, false, err
	}
	parity := set.parityFor("")
	n := len(set.drives)
	dm := &meta.Object{ModTime: wallclock.Now().UnixNano(), Flags: meta.FlagDeleteMarker,
		Erasure: meta.Erasure{DataShards: n - parity, ParityShards: parity, BlockSize: e.blockSize,
			Distribution: e.distribution(key, n), Bitrot: uint8(e.bitrot)}}
	if keep != nil {
		cur, err := e.readObject(ctx, set, bucket, key)
		if err != nil {
			return DeleteResult{}, false, err
		}
		if cur.fi.IsDeleteMarker() || keep(objectInfo(bucket, key, cur.fi)) {
			return DeleteResult{}, false, nil
		}
	}
	if err := e.commitMeta(ctx, set, bucket, key, commitReq{m: dm, owner: objectOwner(bucket, key), newVersion: true}); err != nil {
		return DeleteResult{}, false, fmt.Errorf("delete %s/%s: %w", bucket, key, err)
	}
	res = DeleteResult{VersionID: dm.VersionID, DeleteMarker: true}
	if done != nil {
		done(res)
	}
	return res, true, nil
}

// settle finishes, on each drive, what a commit left pending in the
// key's record once its current version has quorum: a previous version
// marked FlagKeep moves to the versions table, any other is dropped with
// its data. st is updated to the settled records.
func (e *Engine) settle(ctx context.Context, set *erasureSet, bucket, key string, st *objectState) {
	okey := drive.ObjectKey(bucket, key)
	forEachDriveGrouped(ctx, set.drives, func(p int, d drive.Drive, apply func(*drive.Batch) error) error {
		r := st.recs[p]
		cur := st.metas[p]
		if r == nil || cur == nil || st.isPrev(p) || len(r.Versions) < 2 {
			return nil
		}
		b := &drive.Batch{}
		noncurrent, dropped := quorum.Settle(r, cur)
		for _, v := range noncurrent {
			putNoncurrent(b, bucket, key, v)
		}
		c := *cur
		c.Flags &^= meta.FlagsPending
		rec := &meta.Record{Versions: []*meta.Object{&c}}
		raw := rec.Marshal()
		b.Expect(drive.TableObjects, okey, st.raws[p])
		b.Put(drive.TableObjects, okey, raw)
		keep := map[string]bool{}
		for _, id := range c.DataIDs() {
			keep[id] = true
		}
		if err := e.applyDroppingWith(apply, d, b, dropped, keep); err != nil {
			return err
		}
		st.recs[p], st.raws[p] = rec, raw
		return nil
	})
}

// newestNoncurrent finds the newest noncurrent version of bucket/key that
// has quorum (nil when there is none): the candidates are the first few
// entries of each drive's range, newest first.
func (e *Engine) newestNoncurrent(ctx context.Context, set *erasureSet, bucket, key string) (*objectState, error) {
	prefix := drive.VersionPrefix(bucket, key)
	firsts := make([][]drive.Entry, len(set.drives))
	errs := forEachDrive(set.drives, func(p int, d drive.Drive) error {
		ents, err := d.Scan(ctx, drive.TableVersions, drive.ScanQuery{Prefix: prefix, KeysOnly: true, Limit: 4})
		firsts[p] = ents
		return err
	})
	seen := map[string]bool{}
	var cands []string
	for _, ents := range firsts {
		for _, ent := range ents {
			if !seen[ent.Key] {
				seen[ent.Key] = true
				cands = append(cands, ent.Key)
			}
		}
	}
	sort.Strings(cands)
	for _, k := range cands {
		ref, ok := refOfVersionKey(prefix, k)
		if !ok {
			continue
		}
		st, err := e.readNoncurrent(ctx, set, bucket, key, ref, nil)
		if err == nil {
			return st, nil
		}
		if !errors.Is(err, ErrNoSuchVersion) {
			return nil, err
		}
	}
	if len(cands) == 0 && countNil(errs) < len(errs)-set.parity {
		return nil, quorumError("list versions", errs, countNil(errs), len(errs)-set.parity)
	}
	return nil, nil
}

// deleteCurrentVersion removes the current version head (read under the
// object's write lock) for good. The newest noncurrent version takes its
// place; the removed one stays in the record as the previous version
// until the change has write quorum, so an interrupted delete leaves the
// key readable as it was.
func (e *Engine) deleteCurrentVersion(ctx context.Context, set *erasureSet, bucket, key string, head *objectState) error {
	e.settle(ctx, set, bucket, key, head)
	next, err := e.newestNoncurrent(ctx, set, bucket, key)
	if err != nil {
		return err
	}
	okey := drive.ObjectKey(bucket, key)
	var vraws [][]byte
	if next != nil {
		vraws = make([][]byte, len(set.drives))
	}
	committed := make([][]byte, len(set.drives)) // what the change wrote, nil for a removal
	// The drives of one node commit in one call.
	errs := forEachDriveGrouped(ctx, set.drives, func(p int, d drive.Drive, apply func(*drive.Batch) error) error {
		if rerr := head.readErrs[p]; rerr != nil && !errors.Is(rerr, drive.ErrNotFound) && !errors.Is(rerr, meta.ErrCorrupt) {
			return rerr
		}
		b := &drive.Batch{}
		b.Expect(drive.TableObjects, okey, head.raws[p])
		if next != nil && next.metas[p] != nil {
			nm := *next.metas[p]
			nm.Flags &^= meta.FlagsPending
			rec := &meta.Record{Versions: []*meta.Object{&nm}}
			if old := head.metas[p]; old != nil {
				pv := *old
				pv.Flags = pv.Flags&^meta.FlagKeep | meta.FlagPrev
				rec.Versions = append(rec.Versions, &pv)
			}
			committed[p] = rec.Marshal()
			b.Put(drive.TableObjects, okey, committed[p])
			if next.vkeys[p] != "" {
				vraws[p] = nm.Marshal()
				b.Delete(drive.TableVersions, next.vkeys[p])
			}
		} else {
			b.Delete(drive.TableObjects, okey)
		}
		return apply(b)
	})
	wq := quorum.WriteQuorum(head.fi.Erasure.DataShards, head.fi.Erasure.ParityShards)
	if ok := countNil(errs); ok < wq {
		forEachDrive(set.drives, func(p int, d drive.Drive) error {
			if errs[p] != nil {
				return nil
			}
			b := &drive.Batch{}
			b.Expect(drive.TableObjects, okey, committed[p])
			if raw := head.raws[p]; raw != nil {
				b.Put(drive.TableObjects, okey, raw)
			} else {
				b.Delete(drive.TableObjects, okey)
			}
			if vraws != nil && vraws[p] != nil {
				b.Put(drive.TableVersions, next.vkeys[p], vraws[p])
			}
			return d.Apply(context.Background(), b)
		})
		e.jobs.QueueHeal(bucket, key)
		return quorumError("delete version", errs, ok, wq)
	}
	forEachDriveGrouped(context.Background(), set.drives, func(p int, d drive.Drive, apply func(*drive.Batch) error) error {
		if errs[p] != nil || head.recs[p] == nil {
			return nil
		}
		b := &drive.Batch{Lazy: true}
		b.Expect(drive.TableObjects, okey, committed[p])
		keep := map[string]bool{}
		if next != nil && next.metas[p] != nil {
			nm := *next.metas[p]
			nm.Flags &^= meta.FlagsPending
			b.Put(drive.TableObjects, okey, (&meta.Record{Versions: []*meta.Object{&nm}}).Marshal())
			for _, id := range nm.DataIDs() {
				keep[id] = true
			}
		}
		return e.applyDroppingWith(apply, d, b, head.recs[p].Versions, keep)
	})
	if countNil(errs) < len(errs) {
		e.jobs.QueueHeal(bucket, key)
	}
	return nil
}
