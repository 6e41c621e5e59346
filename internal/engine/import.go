package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/quorum"
)

// Importing records written by another store (internal/migrate adopts
// MinIO's drives in place). The migration writes the drives' indexes
// itself, with no engine running, in the shapes the engine reads: these
// helpers keep those shapes here, beside the code that reads them.

// BucketRecord is the TableBuckets value of info, as MakeBucket and the
// bucket configuration calls store it on the drives.
func BucketRecord(info BucketInfo) []byte {
	rec, _ := json.Marshal(recordOf(info))
	return rec
}

// ImportBatch adds to b one drive's records of bucket/key: versions,
// newest first, each already carrying this drive's shard index
// (Erasure.Index) and, for inline versions, InlineData. The newest
// becomes the key's current version (TableObjects), the others its
// noncurrent versions (TableVersions); every data id gets its ref and
// every inline shard its TableInline entry. Every write is a Put, so
// applying the same batch again changes nothing: a resumed migration
// redoes a key whole.
func ImportBatch(b *drive.Batch, bucket, key string, versions []*meta.Object) {
	if len(versions) == 0 {
		return
	}
	owner := []byte(objectOwner(bucket, key))
	for i, v := range versions {
		for _, id := range v.DataIDs() {
			b.Put(drive.TableRefs, id, owner)
		}
		if v.Inline {
			b.Put(drive.TableInline, drive.DataKey(v.DataID, 1), v.InlineData)
		}
		if i > 0 {
			putNoncurrent(b, bucket, key, v)
		}
	}
	cur := *versions[0]
	cur.InlineData = nil
	cur.Flags &^= meta.FlagsPending
	b.Put(drive.TableObjects, drive.ObjectKey(bucket, key), (&meta.Record{Versions: []*meta.Object{&cur}}).Marshal())
}

// AdoptionStateKey is the TableSystem key where `migrate from-minio`
// records its state on each drive: AdoptionRunning while it writes,
// then "adopted" and "finished".
const AdoptionStateKey = "migrate/minio"

// AdoptionRunning is the state of an adoption under way, or interrupted.
const AdoptionRunning = "adopting"

// checkNoAdoption refuses to serve drives that an adoption from MinIO is
// still writing, or left interrupted: the data would be served half
// adopted, and writes made meanwhile could be overwritten when it is
// resumed.
func checkNoAdoption(ctx context.Context, drives []drive.Drive) error {
	for _, d := range drives {
		v, err := d.Get(ctx, drive.TableSystem, AdoptionStateKey)
		if err == nil && string(v) == AdoptionRunning {
			return fmt.Errorf("engine: drive %s: an adoption of MinIO's drives (shardstore migrate from-minio) is under way or was interrupted: run it again to completion first", d)
		}
	}
	return nil
}

// ImportVersion, in PutOptions, makes a PUT write a version another store
// made (`shardstore migrate from-s3`): with its own version id and
// modification time instead of new ones, at its place by time among the
// key's versions. The S3 layer sets it only for callers allowed the admin
// action admin:ImportObject, from validated headers (ParseImport).
type ImportVersion struct {
	// VersionID is the version's id in the engine's form: "" for the null
	// version, else an id parseVersionID accepts (shardstore's own, whose
	// time must be ModTime's, or a lower-case UUID as MinIO makes them).
	VersionID string
	// ModTime is the version's modification time, Unix nanoseconds.
	ModTime int64
	// DeleteMarker imports a delete marker (the body must be empty).
	DeleteMarker bool
	// ETag, when set, is the source's ETag: a plain MD5 must be the
	// body's; a multipart one ("<md5>-<parts>") is stored as given when
	// the body arrives whole (no Parts), and must be the parts' when
	// Parts are given.
	ETag string
	// Parts, when set, are the sizes of the source object's parts, in
	// order: the body is stored as that many parts (importParts), so GET
	// partNumber and the part count answer as on the source, and the
	// multipart ETag is computed from them and must be ETag.
	Parts []int64
	// Checksum, with Parts, is the source object's checksum, which the
	// parts' checksums must make (zero: none).
	Checksum ImportChecksum
}

// ImportChecksum is an imported multipart object's checksum: its
// algorithm (canonical, upper case), type (hashing.Composite or
// hashing.FullObject) and value as S3 shows it (base64, a composite one
// followed by "-<parts>").
type ImportChecksum struct {
	Algorithm, Type, Value string
}

// The HTTP headers that carry an ImportVersion on PutObject (read by
// s3api.ParseImport, sent by internal/migrate's FromS3).
const (
	ImportVersionIDHeader    = "X-Shardstore-Import-Version-Id"
	ImportModTimeHeader      = "X-Shardstore-Import-Mod-Time"
	ImportDeleteMarkerHeader = "X-Shardstore-Import-Delete-Marker"
	ImportETagHeader         = "X-Shardstore-Import-Etag"
	// ImportPartsHeader lists the part sizes (ImportVersion.Parts):
	// comma-separated, each "SIZE" or "SIZE*COUNT" for COUNT parts of
	// SIZE bytes in a row, e.g. "5242880*3,1048583".
	ImportPartsHeader = "X-Shardstore-Import-Parts"
	// ImportChecksumHeader is "ALGORITHM TYPE VALUE" (ImportChecksum),
	// e.g. "CRC32 COMPOSITE kR7f0Q==-4".
	ImportChecksumHeader = "X-Shardstore-Import-Checksum"
)

// CheckImport validates an import for the engine: the version id's form
// and, for shardstore's own ids, that the time it carries is ModTime.
func CheckImport(imp *ImportVersion) error {
	if imp.ModTime <= 0 {
		return fmt.Errorf("%w: import modification time %d", ErrInvalidArgument, imp.ModTime)
	}
	if err := checkImportParts(imp); err != nil {
		return err
	}
	if imp.VersionID == "" {
		return nil
	}
	ref, err := parseVersionID(imp.VersionID)
	if err != nil || ref.null {
		return fmt.Errorf("%w: import version id %q", ErrInvalidArgument, imp.VersionID)
	}
	if !ref.adopted && ref.time != imp.ModTime {
		return fmt.Errorf("%w: import version id %q carries another time than %d", ErrInvalidArgument, imp.VersionID, imp.ModTime)
	}
	return nil
}

// errImportedBefore is commitMeta's answer to an import with nothing to
// write: the version is there already, or an unversioned bucket holds a
// newer one. The import succeeds without committing anything.
var errImportedBefore = errors.New("imported before")

// importDeleteMarker commits an imported delete marker.
func (e *Engine) importDeleteMarker(ctx context.Context, bucket, key string, imp *ImportVersion) (ObjectInfo, error) {
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return ObjectInfo{}, err
	}
	if err := checkObjectName(key); err != nil {
		return ObjectInfo{}, err
	}
	set, err := e.writeSet(ctx, bucket, key)
	if err != nil {
		return ObjectInfo{}, err
	}
	parity := set.parityFor("")
	n := len(set.drives)
	dm := &meta.Object{ModTime: imp.ModTime, VersionID: imp.VersionID, Flags: meta.FlagDeleteMarker,
		Erasure: meta.Erasure{DataShards: n - parity, ParityShards: parity, BlockSize: e.blockSize,
			Distribution: e.distribution(key, n), Bitrot: uint8(e.bitrot)}}
	lctx, unlock, err := e.locks.LockCtx(ctx, lockName(bucket, key))
	if err != nil {
		return ObjectInfo{}, err
	}
	defer unlock()
	defer e.enterCommit()()
	if err := e.checkSole(lctx, set, bucket, key); err != nil {
		return ObjectInfo{}, fmt.Errorf("import delete marker %s/%s: %w", bucket, key, err)
	}
	if err := e.commitMeta(lctx, set, bucket, key, commitReq{m: dm, owner: objectOwner(bucket, key), newVersion: true, imp: imp}); err != nil && !errors.Is(err, errImportedBefore) {
		return ObjectInfo{}, fmt.Errorf("import delete marker %s/%s: %w", bucket, key, err)
	}
	return objectInfo(bucket, key, dm), nil
}

// commitNoncurrent writes an imported version older than the key's
// current one straight into the versions table, leaving the current
// version as it is. The caller holds the object's lock.
func (e *Engine) commitNoncurrent(ctx context.Context, set *erasureSet, bucket, key string, req commitReq) error {
	m, res := req.m, req.res
	wq := quorum.WriteQuorum(m.Erasure.DataShards, m.Erasure.ParityShards)
	ids := m.DataIDs()
	vkey := drive.VersionKey(bucket, key, m.ModTime, m.VersionID)
	left, late := e.leftIndexWrites(set, drive.ObjectKey(bucket, key))
	errs := fanOutErr(&e.lag, set.drives, wq, grouped(ctx, set.drives, func(p int, d drive.Drive, apply func(*drive.Batch) error) error {
		if res != nil && !res.ok(p) {
			return res.errs[p]
		}
		dm := *m
		dm.Erasure.Index = m.Erasure.Distribution[p]
		b := &drive.Batch{}
		for _, id := range ids {
			b.Put(drive.TableRefs, id, []byte(req.owner))
		}
		if res != nil && res.inline != nil {
			b.Put(drive.TableInline, drive.DataKey(m.DataID, 1), res.inline[p])
		}
		putNoncurrent(b, bucket, key, &dm)
		return apply(b)
	}), left, late)
	if ok := countNil(errs); ok < wq {
		forEachDrive(set.drives, func(p int, d drive.Drive) error {
			if errs[p] != nil {
				return nil
			}
			b := &drive.Batch{}
			b.Delete(drive.TableVersions, vkey)
			for _, id := range ids {
				b.Delete(drive.TableRefs, id)
			}
			if res != nil && res.inline != nil {
				b.Delete(drive.TableInline, drive.DataKey(m.DataID, 1))
			}
			return d.Apply(context.Background(), b)
		})
		return quorumError("import", errs, ok, wq)
	}
	if countNil(errs) < len(errs) {
		e.jobs.QueueHeal(bucket, key)
	}
	return nil
}
