package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/quorum"
	"github.com/shardstore/shardstore/internal/sse"
	"github.com/shardstore/shardstore/internal/wallclock"
)

// canonicalAlgo spells a checksum algorithm as S3 does.
func canonicalAlgo(a string) string { return strings.ToUpper(a) }

// DeleteObject deletes as S3's DeleteObject without a version id does:
// it removes the object of an unversioned bucket (ErrObjectNotFound if it
// did not exist) and makes a delete marker current in a versioned one.
// A reader still streaming the object keeps its data until it closes.
func (e *Engine) DeleteObject(ctx context.Context, bucket, key string) error {
	_, err := e.DeleteObjectVersion(ctx, bucket, key, DeleteOptions{})
	return err
}

// DeleteObjectIf is DeleteObject made conditional, for a caller that
// judged the object from a listing and must not delete what changed
// since (the lifecycle runner): under the key's lock it reads the
// current version by quorum, the one the delete would remove or hide
// behind a delete marker, and deletes only if still(current) returns
// true. deleted reports whether it did; a versioned bucket's current
// delete marker is left as it is (nothing to hide), without asking still.
func (e *Engine) DeleteObjectIf(ctx context.Context, bucket, key string, still func(current ObjectInfo) bool) (deleted bool, err error) {
	info, err := e.BucketInfo(ctx, bucket)
	if err != nil {
		return false, err
	}
	if err := checkObjectName(key); err != nil {
		return false, err
	}
	keep := func(cur ObjectInfo) bool { return !still(cur) }
	if info.Versioning == "" {
		return e.deleteObject(ctx, bucket, key, keep, nil)
	}
	_, made, err := e.putDeleteMarker(ctx, bucket, key, keep, nil)
	return made, err
}

// check judges cur, the version a conditional delete would remove or
// hide (nil: there is none).
func (c *DeleteConditions) check(cur *ObjectInfo) error {
	if cur == nil || cur.DeleteMarker {
		return fmt.Errorf("%w: conditional delete of a key without an object", ErrObjectNotFound)
	}
	if c.IfMatch != "" && !etagMatches(c.IfMatch, cur.ETag) {
		return fmt.Errorf("%w: If-Match %s", ErrPreconditionFailed, c.IfMatch)
	}
	if !c.ModTime.IsZero() && !cur.ModTime.Truncate(time.Second).Equal(c.ModTime.Truncate(time.Second)) {
		return fmt.Errorf("%w: x-amz-if-match-last-modified-time", ErrPreconditionFailed)
	}
	if c.HasSize && c.Size != cur.Size {
		return fmt.Errorf("%w: x-amz-if-match-size", ErrPreconditionFailed)
	}
	return nil
}

// condKeep turns a delete's conditions into a keep function for
// deleteObject and putDeleteMarker: the failure is kept in *failed.
func condKeep(c *DeleteConditions, failed *error) func(ObjectInfo) bool {
	if c == nil {
		return nil
	}
	return func(cur ObjectInfo) bool {
		*failed = c.check(&cur)
		return *failed != nil
	}
}

// deleteObject removes an object if keep, given its current version
// under the object's lock, does not return true (nil: always remove);
// deleted reports whether it went. done, when set, is called once it
// went, still under the lock (DeleteOptions.Committed).
func (e *Engine) deleteObject(ctx context.Context, bucket, key string, keep func(ObjectInfo) bool, done func(DeleteResult)) (deleted bool, err error) {
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return false, err
	}
	if err := checkObjectName(key); err != nil {
		return false, err
	}
	ctx, unlock, err := e.locks.LockCtx(ctx, lockName(bucket, key))
	if err != nil {
		return false, err
	}
	defer unlock()
	set, err := e.readSet(ctx, bucket, key)
	if err != nil {
		return false, err
	}
	st, err := e.readObject(ctx, set, bucket, key)
	if err != nil {
		return false, err
	}
	if keep != nil && keep(objectInfo(bucket, key, st.fi)) {
		return false, nil
	}
	// Only reachable with object lock data in a bucket that was never
	// versioned if records were damaged; refused all the same.
	if err := e.checkRemovable(bucket, key, st.fi, false); err != nil {
		return false, err
	}
	okey := drive.ObjectKey(bucket, key)
	// The drives of one node delete in one call.
	errs := forEachDriveGrouped(ctx, set.drives, func(p int, d drive.Drive, apply func(*drive.Batch) error) error {
		if rerr := st.readErrs[p]; rerr != nil && !errors.Is(rerr, drive.ErrNotFound) && !errors.Is(rerr, meta.ErrCorrupt) {
			// What the drive holds is unknown (a failed or slow read):
			// deleting its record blind would leave its data behind
			// with refs nothing collects. The heal removes it later.
			return rerr
		}
		// Remove every version the drive holds, stale ones included.
		var versions []*meta.Object
		if r := st.recs[p]; r != nil {
			versions = r.Versions
		}
		b := &drive.Batch{}
		b.Expect(drive.TableObjects, okey, st.raws[p])
		b.Delete(drive.TableObjects, okey)
		return e.applyDroppingWith(apply, d, b, versions, nil)
	})
	if ok, wq := countNil(errs), quorum.WriteQuorum(st.fi.Erasure.DataShards, st.fi.Erasure.ParityShards); ok < wq {
		e.jobs.QueueHeal(bucket, key)
		return false, fmt.Errorf("delete %s/%s: %w", bucket, key, quorumError("delete", errs, ok, wq))
	}
	if countNil(errs) < len(errs) {
		e.jobs.QueueHeal(bucket, key)
	}
	if done != nil {
		done(DeleteResult{})
	}
	return true, nil
}

// lockKey checks that bucket exists and key is a valid name, and takes
// the key's write lock in its set (callers defer unlock and commit with
// the context it returns, which ends if a cluster lock is lost).
func (e *Engine) lockKey(ctx context.Context, bucket, key string) (context.Context, *erasureSet, func(), error) {
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return nil, nil, nil, err
	}
	if err := checkObjectName(key); err != nil {
		return nil, nil, nil, err
	}
	lctx, unlock, err := e.locks.LockCtx(ctx, lockName(bucket, key))
	if err != nil {
		return nil, nil, nil, err
	}
	// Under the lock the pool holding the key cannot change: every
	// commit checks it under the lock (checkSole).
	set, err := e.writeSet(lctx, bucket, key)
	if err != nil {
		unlock()
		return nil, nil, nil, err
	}
	return lctx, set, unlock, nil
}

// updateMetaIf rewrites an object's metadata in place (same data), under
// the object lock, with fn applied to the quorum version, checking cond
// and the conditional-write options of put (If-Match, If-None-Match) in
// the commit (CopyObject onto itself; updateVersionMeta updates the
// current version the same way).
func (e *Engine) updateMetaIf(ctx context.Context, bucket, key string, cond *Conditions, put PutOptions, fn func(m *meta.Object) error) (ObjectInfo, error) {
	ctx, set, unlock, err := e.lockKey(ctx, bucket, key)
	if err != nil {
		return ObjectInfo{}, err
	}
	defer unlock()
	st, err := e.readObject(ctx, set, bucket, key)
	if err != nil {
		return ObjectInfo{}, err
	}
	if st.fi.IsDeleteMarker() {
		return ObjectInfo{}, deleteMarkerError(bucket, key, st.fi, true, ErrObjectNotFound)
	}
	return e.updateHeadLocked(ctx, set, bucket, key, st, cond, put, fn)
}

// updateHeadLocked rewrites the current version st (read under the
// object's write lock, which the caller holds) with fn applied.
func (e *Engine) updateHeadLocked(ctx context.Context, set *erasureSet, bucket, key string, st *objectState, cond *Conditions, put PutOptions, fn func(m *meta.Object) error) (ObjectInfo, error) {
	if cond != nil {
		if err := cond.evaluate(st.fi.ETag, time.Unix(0, st.fi.ModTime)); err != nil {
			if errors.Is(err, ErrNotModified) {
				err = fmt.Errorf("%w: copy source If-None-Match/If-Modified-Since", ErrPreconditionFailed)
			}
			return ObjectInfo{}, err
		}
	}
	nm := *st.fi
	nm.Flags &^= meta.FlagsPending
	if err := fn(&nm); err != nil {
		return ObjectInfo{}, err
	}
	// Only drives holding the version's data take the new record: the
	// others are healed from it.
	res := &writeResult{errs: make([]error, len(set.drives))}
	for p := range res.errs {
		if st.metas[p] == nil {
			res.errs[p] = fmt.Errorf("drive does not hold the current version: %w", firstErr([]error{st.errs[p], errDriveSkipped}))
		}
	}
	owner := objectOwner(bucket, key)
	req := commitReq{m: &nm, res: res, owner: owner, priorOwner: owner}
	req.cond.IfMatch, req.cond.IfNoneMatch, req.cond.IfNoneMatchAny = put.IfMatch, put.IfNoneMatch, put.IfNoneMatchAny
	if err := e.commitMeta(ctx, set, bucket, key, req); err != nil {
		return ObjectInfo{}, fmt.Errorf("update %s/%s: %w", bucket, key, err)
	}
	info := objectInfo(bucket, key, &nm)
	info.IsLatest = true
	return info, nil
}

// SetObjectACL replaces the ACL of an object version (versionID "":
// the current one) in place.
func (e *Engine) SetObjectACL(ctx context.Context, bucket, key, versionID, acl string) error {
	_, err := e.updateVersionMeta(ctx, bucket, key, versionID, func(m *meta.Object) error { m.ACL = acl; return nil })
	return err
}

// SetObjectTags replaces an object's tag set (nil or empty removes it)
// in place, under the object lock and with the same quorum rules as
// SetObjectACL. The version stays what it was: data, ETag and
// Last-Modified are unchanged, as S3's PutObjectTagging leaves them.
//
// versionID selects the version ("": the current one); the answer
// describes the version changed.
func (e *Engine) SetObjectTags(ctx context.Context, bucket, key, versionID string, tags map[string]string) (ObjectInfo, error) {
	if err := checkTags(tags); err != nil {
		return ObjectInfo{}, err
	}
	return e.updateVersionMeta(ctx, bucket, key, versionID, func(m *meta.Object) error { m.Tags = tagSet(tags); return nil })
}

// checkTags bounds a tag set; keys and values are the S3 layer's to
// validate.
// SetObjectSealed replaces, in place, the sealed map of an encrypted
// version (versionID "" is the current one): update gets the stored map
// and returns the new one. The object key must stay the same (a KMS
// rewrap re-seals it, nothing else), since the data is not rewritten.
func (e *Engine) SetObjectSealed(ctx context.Context, bucket, key, versionID string, update func(old map[string]string) (map[string]string, error)) (ObjectInfo, error) {
	return e.updateVersionMeta(ctx, bucket, key, versionID, func(m *meta.Object) error {
		if m.Cipher == "" {
			return fmt.Errorf("%w: %s/%s is not encrypted", ErrInvalidArgument, bucket, key)
		}
		sealed, err := update(m.Sealed)
		if err != nil {
			return err
		}
		m.Sealed = sealed
		return nil
	})
}

func checkTags(tags map[string]string) error {
	if len(tags) > MaxObjectTags {
		return fmt.Errorf("%w: %d tags, at most %d", ErrInvalidArgument, len(tags), MaxObjectTags)
	}
	return nil
}

// tagSet is the stored form of a tag set: nil when empty, else a copy
// (the caller's map is not kept).
func tagSet(tags map[string]string) map[string]string {
	if len(tags) == 0 {
		return nil
	}
	out := make(map[string]string, len(tags))
	for k, v := range tags {
		out[k] = v
	}
	return out
}

// CopyObject copies src to dst server side. The copy gets a FULL_OBJECT
// checksum computed over the data. Copying an object onto itself with
// ReplaceMetadata rewrites only its metadata when it keeps its checksum.
func (e *Engine) CopyObject(ctx context.Context, srcBucket, srcKey, dstBucket, dstKey string, opts CopyOptions) (ObjectInfo, error) {
	// An in-place copy that asks for a checksum algorithm, or whose
	// object has no checksum yet, rewrites the data (below) so the
	// checksum is computed over it; otherwise only the metadata changes.
	inPlace := srcBucket == dstBucket && srcKey == dstKey && opts.Put.ChecksumAlgorithm == "" && opts.SourceVersionID == "" &&
		(opts.KeepEncryption || opts.Put.Encryption == nil)
	if inPlace {
		if info, err := e.BucketInfo(ctx, dstBucket); err == nil {
			// In a versioned bucket a copy onto itself makes a new
			// version, so it takes the data path below; an unversioned
			// one has no object lock to set.
			if info.Versioning != "" {
				inPlace = false
			} else if err := e.checkPutLock(info, opts.Put.Lock); err != nil {
				return ObjectInfo{}, err
			}
		}
	}
	if inPlace {
		if !opts.ReplaceMetadata {
			return ObjectInfo{}, fmt.Errorf("%w: copying an object onto itself needs new metadata", ErrInvalidArgument)
		}
		cur, err := e.HeadObject(ctx, srcBucket, srcKey, GetOptions{})
		// Metadata alone changes only when the data stays as it is
		// encrypted (or not): the same key, or plaintext both sides.
		sameEncryption := opts.KeepEncryption || (err == nil && cur.Cipher == "")
		if sameEncryption && (err != nil || cur.Checksum.Algorithm != "") {
			if err := checkTags(opts.Put.Tags); err != nil {
				return ObjectInfo{}, err
			}
			return e.updateMetaIf(ctx, srcBucket, srcKey, &opts.SourceConditions, opts.Put, func(m *meta.Object) error {
				applyMetadata(m, &opts.Put)
				if opts.ReplaceTags {
					m.Tags = tagSet(opts.Put.Tags)
				}
				m.ModTime = wallclock.Now().UnixNano()
				return nil
			})
		}
	}
	if _, err := e.BucketInfo(ctx, dstBucket); err != nil {
		return ObjectInfo{}, err
	}
	if err := checkObjectName(dstKey); err != nil {
		return ObjectInfo{}, err
	}
	src, err := e.GetObject(ctx, srcBucket, srcKey, GetOptions{Conditions: opts.SourceConditions, VersionID: opts.SourceVersionID,
		Unseal: opts.SourceUnseal})
	if err != nil {
		if errors.Is(err, ErrNotModified) {
			err = fmt.Errorf("%w: copy source If-None-Match/If-Modified-Since", ErrPreconditionFailed)
		}
		return ObjectInfo{}, err
	}
	closed := false
	closeSrc := func() {
		if !closed {
			closed = true
			src.Close()
		}
	}
	defer closeSrc()
	put := opts.Put
	if opts.KeepEncryption && src.Info.Cipher != "" {
		// The sealed key is bound to its object: only a copy onto itself
		// keeps it, its data rewritten under fresh stream keys.
		or, ok := src.ReadCloser.(*objectReader)
		if !ok || srcBucket != dstBucket || srcKey != dstKey {
			return ObjectInfo{}, fmt.Errorf("%w: only a copy onto itself keeps its source's encryption", ErrInvalidArgument)
		}
		put.Encryption = &Encryption{Cipher: sse.Cipher(src.Info.Cipher), Key: or.objectKey, Sealed: src.Info.Sealed,
			HideETag: or.st.fi.Flags&meta.FlagHiddenETag != 0}
	}
	if !opts.ReplaceMetadata {
		si := src.Info
		put.ContentType, put.Headers, put.UserMeta = si.ContentType, si.Headers, si.UserMeta
		if put.StorageClass == "" {
			put.StorageClass = si.StorageClass
		}
	}
	if !opts.ReplaceTags {
		put.Tags = src.Info.Tags
	}
	// The copy's checksum is computed over the data, FULL_OBJECT: the
	// requested algorithm, else the source's, else (as S3 gives every
	// copy one) CRC64NVME.
	if put.ChecksumAlgorithm == "" {
		put.ChecksumAlgorithm = src.Info.Checksum.Algorithm
	}
	if put.ChecksumAlgorithm == "" {
		put.ChecksumAlgorithm = hashing.CRC64NVME
	}
	put.ContentMD5, put.ExpectedChecksum = nil, nil
	return e.putObject(ctx, dstBucket, dstKey, src, src.Length, put, closeSrc)
}

// applyMetadata replaces an object's stored metadata with a request's.
func applyMetadata(m *meta.Object, p *PutOptions) {
	m.ContentType, m.Headers, m.UserMeta = p.ContentType, p.Headers, p.UserMeta
	if p.StorageClass != "" {
		m.StorageClass = p.StorageClass
	}
	if p.ACL != "" {
		m.ACL = p.ACL
	}
}
