package engine

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/shardstore/shardstore/internal/bitrot"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/quorum"
	"github.com/shardstore/shardstore/internal/sse"
	"github.com/shardstore/shardstore/internal/wallclock"
)

// Multipart uploads live in the index of every drive of the object's set:
// the upload record under TableUploads (UploadKey), one record per part
// under TableParts (PartKey). Each upload of a part writes shard files
// under a fresh data id, so a re-uploaded part never overwrites bytes a
// concurrent attempt or the completion may still use; the part record
// names the id. Complete commits an object whose parts point at those
// ids, exactly like a PUT commit, and drops the upload's records.

// checkUploadID rejects ids that are neither ours nor MinIO's (and could
// be path tricks).
func checkUploadID(id string) error {
	if _, err := uuid.Parse(id); (err != nil || len(id) != 36) && !IsMinIOUploadID(id) {
		return fmt.Errorf("%w: upload id %q", ErrNoSuchUpload, id)
	}
	return nil
}

// NewMultipartUpload starts an upload and returns its id.
func (e *Engine) NewMultipartUpload(ctx context.Context, bucket, key string, opts PutOptions) (string, error) {
	info, err := e.BucketInfo(ctx, bucket)
	if err != nil {
		return "", err
	}
	if err := checkObjectName(key); err != nil {
		return "", err
	}
	if err := checkPutOptions(&opts); err != nil {
		return "", err
	}
	if err := e.checkPutLock(info, opts.Lock); err != nil {
		return "", err
	}
	set, err := e.writeSet(ctx, bucket, key)
	if err != nil {
		return "", err
	}
	parity := set.parityFor(opts.StorageClass)
	coder, err := e.coders.Get(len(set.drives)-parity, parity, e.blockSizeFor(opts.Encryption))
	if err != nil {
		return "", err
	}
	id := uuid.NewString()
	m := e.newMeta(opts, 0, "", coder, e.distribution(key, len(set.drives)))
	m.Bucket, m.Key, m.UploadID = bucket, key, id
	m.ChecksumAlgo = canonicalAlgo(opts.ChecksumAlgorithm)
	if m.ChecksumType, err = multipartChecksumType(m.ChecksumAlgo, opts.ChecksumType); err != nil {
		return "", err
	}
	ukey := drive.UploadKey(bucket, key, id)
	// The drives of one node take the record in one call.
	errs := forEachDriveGrouped(ctx, set.drives, func(p int, d drive.Drive, apply func(*drive.Batch) error) error {
		dm := *m
		dm.Erasure.Index = m.Erasure.Distribution[p]
		b := &drive.Batch{}
		b.Put(drive.TableUploads, ukey, dm.Marshal())
		return apply(b)
	})
	if ok := countNil(errs); ok < quorum.WriteQuorum(coder.DataShards(), coder.ParityShards()) {
		forEachDrive(set.drives, func(p int, d drive.Drive) error {
			b := &drive.Batch{}
			b.Delete(drive.TableUploads, ukey)
			return d.Apply(context.Background(), b)
		})
		return "", quorumError(fmt.Sprintf("new upload %s/%s", bucket, key), errs, ok, quorum.WriteQuorum(coder.DataShards(), coder.ParityShards()))
	}
	return id, nil
}

// readUpload reads an upload record with quorum.
func (e *Engine) readUpload(ctx context.Context, set *erasureSet, bucket, key, uploadID string) (*meta.Object, []error, error) {
	if err := checkUploadID(uploadID); err != nil {
		return nil, nil, err
	}
	ukey := drive.UploadKey(bucket, key, uploadID)
	metas := make([]*meta.Object, len(set.drives))
	errs := forEachDrive(set.drives, func(p int, d drive.Drive) error {
		raw, err := d.Get(ctx, drive.TableUploads, ukey)
		if err != nil {
			return err
		}
		m, err := meta.Unmarshal(raw)
		if err != nil {
			return err
		}
		if m.UploadID != uploadID || m.Key != key || m.Bucket != bucket {
			return fmt.Errorf("upload record names another upload: %w", meta.ErrCorrupt)
		}
		metas[p] = m
		return nil
	})
	var best *meta.Object
	votes := 0
	for _, m := range metas {
		if m != nil {
			votes++
			if best == nil {
				best = m
			}
		}
	}
	if best == nil || votes < best.Erasure.DataShards {
		notFound := 0
		for _, err := range errs {
			if errors.Is(err, drive.ErrFileNotFound) {
				notFound++
			}
		}
		if best == nil || notFound > len(set.drives)-best.Erasure.DataShards {
			return nil, nil, fmt.Errorf("upload %s: %w", uploadID, ErrNoSuchUpload)
		}
		return nil, nil, fmt.Errorf("upload %s: %w: %v", uploadID, ErrReadQuorum, firstErr(errs))
	}
	return best, errs, nil
}

// multipartChecksumType settles an upload's checksum type as S3 does:
// the type asked for if the algorithm allows it, else S3's default for
// the algorithm (hashing.SupportsChecksumType, DefaultChecksumType). The
// S3 layer refuses what does not fit with S3's own messages first.
func multipartChecksumType(algo, want string) (string, error) {
	if want == "" {
		if algo == "" {
			return "", nil
		}
		return hashing.DefaultChecksumType(algo), nil
	}
	t, err := hashing.CanonicalChecksumType(want)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidArgument, err)
	}
	if algo == "" {
		return "", fmt.Errorf("%w: checksum type %s without a checksum algorithm", ErrInvalidArgument, t)
	}
	if !hashing.SupportsChecksumType(algo, t) {
		return "", fmt.Errorf("%w: checksum type %s is not supported with %s", ErrInvalidArgument, t, algo)
	}
	return t, nil
}

// PutObjectPart stores one part (1..10000) of an upload.
func (e *Engine) PutObjectPart(ctx context.Context, bucket, key, uploadID string, part int, body io.Reader, size int64, opts PartOptions) (PartInfo, error) {
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return PartInfo{}, err
	}
	if part < 1 || part > MaxPartNumber {
		return PartInfo{}, fmt.Errorf("%w: %d (1..%d)", ErrInvalidPartNumber, part, MaxPartNumber)
	}
	if size > MaxPutSize {
		return PartInfo{}, fmt.Errorf("%w: part of %d bytes, at most %d", ErrEntityTooLarge, size, int64(MaxPutSize))
	}
	if opts.ChecksumAlgorithm != "" {
		if _, err := hashing.NewChecksum(opts.ChecksumAlgorithm); err != nil {
			return PartInfo{}, fmt.Errorf("%w: %v", ErrInvalidArgument, err)
		}
	}
	set := e.uploadSet(ctx, bucket, key, uploadID)
	up, _, err := e.readUpload(ctx, set, bucket, key, uploadID)
	if err != nil {
		return PartInfo{}, err
	}
	coder, err := e.coders.Get(up.Erasure.DataShards, up.Erasure.ParityShards, up.Erasure.BlockSize)
	if err != nil {
		return PartInfo{}, err
	}
	// A part is hashed with the upload's algorithm; one sent with
	// another is refused before its body is read, as S3 does. A part of
	// an upload without one keeps the checksum it was sent with (S3 shows
	// it in the UploadPart answer only), which a completion may turn into
	// the object's full-object CRC (CompleteMultipartUpload).
	algo := canonicalAlgo(opts.ChecksumAlgorithm)
	switch {
	case up.ChecksumAlgo == "":
	case algo == "":
		algo = up.ChecksumAlgo
	case algo != up.ChecksumAlgo:
		return PartInfo{}, &UploadChecksumError{Reason: ChecksumPartAlgorithm, Algorithm: up.ChecksumAlgo,
			Type: up.ChecksumType, Sent: algo}
	}
	plan := &writePlan{set: set, coder: coder, dist: up.Erasure.Distribution, ref: drive.ShardRef{ID: uuid.NewString(), Part: part},
		algo: bitrot.Algorithm(up.Erasure.Bitrot)}
	var objectKey []byte
	if up.Cipher != "" {
		if objectKey, err = unsealKey(opts.Unseal, bucket, key, up); err != nil {
			return PartInfo{}, err
		}
		c, err := sse.ParseCipher(up.Cipher)
		if err != nil {
			return PartInfo{}, fmt.Errorf("upload %s of %s/%s: %w", uploadID, bucket, key, err)
		}
		if plan.enc, err = e.newEncryptor(&Encryption{Cipher: c, Key: objectKey}, plan.ref.ID); err != nil {
			return PartInfo{}, err
		}
	}
	defer e.cleanupShards(plan)
	res, err := e.writeShards(ctx, plan, body, size, hashing.Request{Size: size, ETag: true, MD5: opts.ContentMD5 != nil, Checksum: algo})
	if err != nil {
		return PartInfo{}, fmt.Errorf("upload part %d of %s/%s: %w", part, bucket, key, err)
	}
	checksum, err := verifyDigests(res.digests, opts.ContentMD5, algo, opts.ExpectedChecksum)
	if err != nil {
		return PartInfo{}, fmt.Errorf("upload part %d of %s/%s: %w", part, bucket, key, err)
	}
	etag := shownETag(up, objectKey, res.digests.ETag)
	now := wallclock.Now()
	pm := &meta.Object{Size: res.size, ModTime: now.UnixNano(), ETag: etag,
		Parts: []meta.Part{{Number: part, Size: res.size, ETag: etag, Checksum: checksum, DataID: plan.ref.ID}}}
	if checksum != "" {
		// Which algorithm the part's checksum is of, for its completion.
		pm.ChecksumAlgo = algo
	}
	// Parts of one upload commit in parallel; the upload lock (shared
	// here, exclusive in complete/abort) keeps them off a finishing upload.
	unlock, err := e.locks.RLockWait(ctx, lockName(bucket, "\x00upload/"+uploadID))
	if err != nil {
		return PartInfo{}, err
	}
	defer unlock()
	if _, _, err := e.readUpload(ctx, set, bucket, key, uploadID); err != nil {
		if errors.Is(err, ErrNoSuchUpload) && e.uploadMovedFrom(ctx, set, bucket, key, uploadID) {
			// A decommission moved the upload since its pool was looked
			// up: the retry writes the part there.
			return PartInfo{}, fmt.Errorf("upload part %d of %s/%s: %w: the upload moved to another server pool", part, bucket, key, ErrBusy)
		}
		return PartInfo{}, err
	}
	partLock, err := e.locks.LockWait(ctx, lockName(bucket, "\x00upload/"+uploadID+"/"+strconv.Itoa(part)))
	if err != nil {
		return PartInfo{}, err
	}
	defer partLock()
	pkey := drive.PartKey(bucket, key, uploadID, part)
	olds := make([]*meta.Object, len(set.drives))
	oldRaws := make([][]byte, len(set.drives))
	owner := []byte(uploadOwner(uploadID))
	rec := pm.Marshal()
	// The drives of one node commit the part in one call.
	errs := forEachDriveGrouped(ctx, set.drives, func(p int, d drive.Drive, apply func(*drive.Batch) error) error {
		if !res.ok(p) {
			return res.errs[p]
		}
		raw, err := d.Get(ctx, drive.TableParts, pkey)
		switch {
		case err == nil:
			oldRaws[p] = raw
			olds[p], _ = meta.Unmarshal(raw)
		case !errors.Is(err, drive.ErrNotFound):
			return err
		}
		// Conditional on the part record read: a writer of the same part
		// that stalled past its lock's expiry must not replace an attempt
		// committed since (it gets ErrBusy and the client retries).
		b := &drive.Batch{}
		b.Expect(drive.TableParts, pkey, oldRaws[p])
		b.Put(drive.TableParts, pkey, rec)
		b.Put(drive.TableRefs, plan.ref.ID, owner)
		return apply(b)
	})
	if ok := countNil(errs); ok < quorum.WriteQuorum(coder.DataShards(), coder.ParityShards()) {
		forEachDrive(set.drives, func(p int, d drive.Drive) error {
			if errs[p] != nil {
				return nil
			}
			// Put back what was read, unless another attempt of the part
			// committed since; the ref of this attempt's data goes either
			// way (its shard files are removed with the plan).
			b := &drive.Batch{}
			b.Expect(drive.TableParts, pkey, rec)
			if oldRaws[p] != nil {
				b.Put(drive.TableParts, pkey, oldRaws[p])
			} else {
				b.Delete(drive.TableParts, pkey)
			}
			b.Delete(drive.TableRefs, plan.ref.ID)
			err := d.Apply(context.Background(), b)
			if errors.Is(err, drive.ErrConflict) {
				refOnly := &drive.Batch{}
				refOnly.Delete(drive.TableRefs, plan.ref.ID)
				err = d.Apply(context.Background(), refOnly)
			}
			return err
		})
		return PartInfo{}, quorumError(fmt.Sprintf("upload part %d of %s/%s", part, bucket, key), errs, ok, quorum.WriteQuorum(coder.DataShards(), coder.ParityShards()))
	}
	plan.committed = true
	// The replaced attempt of this part (if any) is no longer needed.
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if errs[p] != nil || olds[p] == nil || olds[p].PartDataID(0) == plan.ref.ID {
			return nil
		}
		return e.applyDropping(context.Background(), d, &drive.Batch{Lazy: true}, olds[p:p+1], nil)
	})
	res.phases.Commit = time.Since(now)
	e.observe(res.phases)
	info := PartInfo{Number: part, Size: res.size, ETag: etag, ModTime: now.UTC(), Checksum: checksum}
	if checksum != "" {
		info.ChecksumAlgorithm = algo
	}
	return info, nil
}

// readParts returns, per part number, the part record most drives hold
// and which drive positions hold it.
func (e *Engine) readParts(ctx context.Context, set *erasureSet, bucket, key, uploadID string) (map[int]*meta.Object, map[int][]bool, error) {
	n := len(set.drives)
	perDrive := make([]map[int]*meta.Object, n)
	prefix := drive.PartPrefix(bucket, key, uploadID)
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		ents, err := d.Scan(ctx, drive.TableParts, drive.ScanQuery{Prefix: prefix})
		if err != nil {
			return err
		}
		got := map[int]*meta.Object{}
		for _, ent := range ents {
			if m, err := meta.Unmarshal(ent.Value); err == nil && len(m.Parts) == 1 {
				got[m.Parts[0].Number] = m
			}
		}
		perDrive[p] = got
		return nil
	})
	best := map[int]*meta.Object{}
	holders := map[int][]bool{}
	counts := map[int]int{}
	for _, got := range perDrive {
		for num, m := range got {
			votes := 0
			for _, other := range perDrive {
				if o := other[num]; o != nil && o.SameVersion(m) {
					votes++
				}
			}
			if votes > counts[num] || (votes == counts[num] && m.ModTime > best[num].ModTime) {
				best[num], counts[num] = m, votes
			}
		}
	}
	for num, m := range best {
		h := make([]bool, n)
		for p, got := range perDrive {
			if o := got[num]; o != nil && o.SameVersion(m) {
				h[p] = true
			}
		}
		holders[num] = h
	}
	return best, holders, nil
}

// ListObjectParts lists parts after partMarker, at most maxParts (0 = 1000).
func (e *Engine) ListObjectParts(ctx context.Context, bucket, key, uploadID string, partMarker, maxParts int) (ListPartsResult, error) {
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return ListPartsResult{}, err
	}
	set := e.uploadSet(ctx, bucket, key, uploadID)
	up, _, err := e.readUpload(ctx, set, bucket, key, uploadID)
	if err != nil {
		return ListPartsResult{}, err
	}
	if maxParts <= 0 || maxParts > 1000 {
		maxParts = 1000
	}
	parts, _, err := e.readParts(ctx, set, bucket, key, uploadID)
	if err != nil {
		return ListPartsResult{}, err
	}
	nums := make([]int, 0, len(parts))
	for n := range parts {
		if n > partMarker {
			nums = append(nums, n)
		}
	}
	sort.Ints(nums)
	res := ListPartsResult{Upload: uploadInfo(up)}
	for _, n := range nums {
		if len(res.Parts) == maxParts {
			res.IsTruncated = true
			break
		}
		m := parts[n]
		res.Parts = append(res.Parts, PartInfo{Number: n, Size: m.Size, ETag: m.ETag,
			ModTime: time.Unix(0, m.ModTime).UTC(), Checksum: m.Parts[0].Checksum, ChecksumAlgorithm: partChecksumAlgo(m, up)})
		res.NextPartNumberMarker = n
	}
	return res, nil
}

func uploadInfo(m *meta.Object) MultipartInfo {
	return MultipartInfo{Bucket: m.Bucket, Key: m.Key, UploadID: m.UploadID, Initiated: time.Unix(0, m.ModTime).UTC(),
		StorageClass: m.StorageClass, Owner: m.Owner, ChecksumAlgorithm: m.ChecksumAlgo, ChecksumType: m.ChecksumType}
}

// partChecksumAlgo is the algorithm of a part record's checksum: the
// record's own, or for one written before records named it, the
// upload's ("" for an upload without one: unknown).
func partChecksumAlgo(part, up *meta.Object) string {
	if part.Parts[0].Checksum == "" {
		return ""
	}
	if part.ChecksumAlgo != "" {
		return part.ChecksumAlgo
	}
	return up.ChecksumAlgo
}

// CompleteMultipartUpload assembles the listed parts into the object.
func (e *Engine) CompleteMultipartUpload(ctx context.Context, bucket, key, uploadID string, parts []CompletePart, opts PutOptions) (ObjectInfo, error) {
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return ObjectInfo{}, err
	}
	if len(parts) == 0 {
		return ObjectInfo{}, fmt.Errorf("%w: no parts listed", ErrMalformedCompletion)
	}
	if len(parts) > MaxPartNumber {
		return ObjectInfo{}, fmt.Errorf("%w: %d parts listed, at most %d", ErrMalformedCompletion, len(parts), MaxPartNumber)
	}
	for i, p := range parts {
		if p.Number < 1 || p.Number > MaxPartNumber {
			return ObjectInfo{}, fmt.Errorf("%w: part number %d", ErrInvalidPart, p.Number)
		}
		if i > 0 && p.Number <= parts[i-1].Number {
			return ObjectInfo{}, fmt.Errorf("%w: part %d after part %d", ErrInvalidPartOrder, p.Number, parts[i-1].Number)
		}
	}
	uploadUnlock, err := e.locks.LockWait(ctx, lockName(bucket, "\x00upload/"+uploadID))
	if err != nil {
		return ObjectInfo{}, err
	}
	defer uploadUnlock()
	// Looked up under the upload's lock: a decommission moves uploads
	// under it (decom_uploads.go).
	set := e.uploadSet(ctx, bucket, key, uploadID)
	up, _, err := e.readUpload(ctx, set, bucket, key, uploadID)
	if errors.Is(err, ErrNoSuchUpload) {
		if oi, ok := e.completedUpload(ctx, set, bucket, key, uploadID, parts); ok {
			return oi, nil
		}
	}
	if err != nil {
		return ObjectInfo{}, err
	}
	stored, holders, err := e.readParts(ctx, set, bucket, key, uploadID)
	if err != nil {
		return ObjectInfo{}, err
	}
	sums, err := newCompleteSums(up, opts)
	if err != nil {
		return ObjectInfo{}, err
	}
	wq := quorum.WriteQuorum(up.Erasure.DataShards, up.Erasure.ParityShards)
	md5s := md5.New()
	var size int64
	final := make([]meta.Part, len(parts))
	for i, cp := range parts {
		m := stored[cp.Number]
		if m == nil || countTrue(holders[cp.Number]) < wq {
			return ObjectInfo{}, fmt.Errorf("%w: part %d was not uploaded", ErrInvalidPart, cp.Number)
		}
		if strings.Trim(cp.ETag, `"`) != m.ETag {
			return ObjectInfo{}, fmt.Errorf("%w: part %d has ETag %s, not %s", ErrInvalidPart, cp.Number, m.ETag, cp.ETag)
		}
		if err := sums.part(cp, m); err != nil {
			return ObjectInfo{}, fmt.Errorf("complete %s/%s: %w", bucket, key, err)
		}
		if i < len(parts)-1 && m.Size < MinPartSize {
			return ObjectInfo{}, fmt.Errorf("%w: part %d is %d bytes", ErrEntityTooSmall, cp.Number, m.Size)
		}
		raw, _ := hex.DecodeString(m.ETag)
		md5s.Write(raw)
		size += m.Size
		final[i] = meta.Part{Number: cp.Number, Size: m.Size, ETag: m.ETag, Checksum: m.Parts[0].Checksum, DataID: m.Parts[0].DataID}
	}
	etag := fmt.Sprintf("%s-%d", hex.EncodeToString(md5s.Sum(nil)), len(parts))
	om := *up
	// The version keeps the id of the upload that made it, so a repeated
	// completion of that upload can be answered (completedUpload).
	om.Bucket, om.Key = "", ""
	// The version's own DataID names it (no shard files live under it);
	// the data is under each part's id.
	om.Size, om.ETag, om.ModTime, om.Parts, om.DataID = size, etag, wallclock.Now().UnixNano(), final, uuid.NewString()
	if err := sums.finish(&om); err != nil {
		return ObjectInfo{}, fmt.Errorf("complete %s/%s: %w", bucket, key, err)
	}
	listed := map[int]bool{}
	for _, p := range parts {
		listed[p.Number] = true
	}
	res := &writeResult{errs: make([]error, len(set.drives))}
	for p := range res.errs {
		for _, cp := range parts {
			if !holders[cp.Number][p] {
				res.errs[p] = fmt.Errorf("part %d missing or stale on this drive", cp.Number)
				break
			}
		}
	}
	// Once the object is committed, each drive drops the upload record,
	// every part record, and the refs and files of unlisted parts.
	unlisted := make([][]*meta.Object, len(set.drives))
	ukey := drive.UploadKey(bucket, key, uploadID)
	extra := func(p int, b *drive.Batch) {
		b.Delete(drive.TableUploads, ukey)
		for num, m := range stored {
			b.Delete(drive.TableParts, drive.PartKey(bucket, key, uploadID, num))
			if !listed[num] {
				unlisted[p] = append(unlisted[p], m)
			}
		}
		dropVersions(b, unlisted[p], nil)
		e.queueFrees(b, unlisted[p], nil)
	}
	lctx, unlock, err := e.locks.LockCtx(ctx, lockName(bucket, key))
	if err != nil {
		return ObjectInfo{}, err
	}
	defer unlock()
	// The object is committed in the pool the upload lives in; a key
	// another pool took meanwhile refuses it (busy: the client retries,
	// the upload stays).
	defer e.enterCommit()()
	if err := e.checkSole(lctx, set, bucket, key); err != nil {
		return ObjectInfo{}, fmt.Errorf("complete %s/%s: %w", bucket, key, err)
	}
	err = e.commitMeta(lctx, set, bucket, key, commitReq{m: &om, res: res, cond: opts,
		owner: objectOwner(bucket, key), priorOwner: uploadOwner(uploadID), extra: extra, newVersion: true})
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("complete %s/%s: %w", bucket, key, err)
	}
	if opts.Committed != nil {
		opts.Committed(objectInfo(bucket, key, &om))
	}
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		e.freeData(d, unlisted[p], nil)
		return nil
	})
	return objectInfo(bucket, key, &om), nil
}

// completedUpload answers a CompleteMultipartUpload repeated after the
// upload completed (a client whose first answer was lost retries): as in
// S3, it succeeds with the object's ETag as long as the key's current
// version is the one that upload produced, from the same part list. The
// request's If-Match / If-None-Match are not evaluated again: they held
// when the upload completed, and a retry must get the first answer. The
// caller holds the upload's lock.
func (e *Engine) completedUpload(ctx context.Context, set *erasureSet, bucket, key, uploadID string, parts []CompletePart) (ObjectInfo, bool) {
	if checkUploadID(uploadID) != nil {
		return ObjectInfo{}, false
	}
	unlock, err := e.locks.RLockWait(ctx, lockName(bucket, key))
	if err != nil {
		return ObjectInfo{}, false
	}
	defer unlock()
	st, err := e.readObject(ctx, set, bucket, key)
	if err != nil || st.fi.UploadID != uploadID || len(st.fi.Parts) != len(parts) {
		return ObjectInfo{}, false
	}
	for i, p := range parts {
		if st.fi.Parts[i].Number != p.Number || st.fi.Parts[i].ETag != strings.Trim(p.ETag, `"`) {
			return ObjectInfo{}, false
		}
	}
	return objectInfo(bucket, key, st.fi), true
}

func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// AbortMultipartUpload discards an upload and its parts.
func (e *Engine) AbortMultipartUpload(ctx context.Context, bucket, key, uploadID string) error {
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return err
	}
	unlock, err := e.locks.LockWait(ctx, lockName(bucket, "\x00upload/"+uploadID))
	if err != nil {
		return err
	}
	defer unlock()
	set := e.uploadSet(ctx, bucket, key, uploadID) // under the lock: uploads move under it
	if _, _, err := e.readUpload(ctx, set, bucket, key, uploadID); err != nil {
		return err
	}
	errs := forEachDrive(set.drives, func(p int, d drive.Drive) error {
		return e.dropUpload(ctx, d, bucket, key, uploadID)
	})
	if countNil(errs) == 0 {
		return fmt.Errorf("abort %s: %w: %v", uploadID, ErrWriteQuorum, firstErr(errs))
	}
	return nil
}

// dropUpload removes an upload's records from one drive, and the data of
// parts whose ref still names the upload: a part a completed object took
// over (its ref names the object) is never freed here.
func (e *Engine) dropUpload(ctx context.Context, d drive.Drive, bucket, key, uploadID string) error {
	ents, err := d.Scan(ctx, drive.TableParts, drive.ScanQuery{Prefix: drive.PartPrefix(bucket, key, uploadID)})
	if err != nil {
		return err
	}
	b := &drive.Batch{}
	b.Delete(drive.TableUploads, drive.UploadKey(bucket, key, uploadID))
	var owned []*meta.Object
	for _, ent := range ents {
		b.Delete(drive.TableParts, ent.Key)
		m, err := meta.Unmarshal(ent.Value)
		if err != nil || len(m.Parts) != 1 {
			continue
		}
		ref, err := d.Get(ctx, drive.TableRefs, m.Parts[0].DataID)
		if err == nil && string(ref) == uploadOwner(uploadID) {
			owned = append(owned, m)
		}
	}
	return e.applyDropping(ctx, d, b, owned, nil)
}

// ListMultipartUploads lists in-progress uploads of a bucket, sorted by
// key then initiation time.
func (e *Engine) ListMultipartUploads(ctx context.Context, bucket string, opts ListUploadsOptions) (ListUploadsResult, error) {
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return ListUploadsResult{}, err
	}
	var mu sync.Mutex
	found := map[string]MultipartInfo{}
	setOf := map[string]*erasureSet{}
	for _, set := range e.sets {
		// Upload records are on write quorum drives, so parity+1 drives
		// of the set see every upload.
		drives := set.drives[:min(len(set.drives), set.parity+1)]
		forEachDrive(drives, func(p int, d drive.Drive) error {
			ents, err := d.Scan(ctx, drive.TableUploads, drive.ScanQuery{Prefix: drive.BucketPrefix(bucket) + opts.Prefix})
			if err != nil {
				return err
			}
			for _, ent := range ents {
				m, err := meta.Unmarshal(ent.Value)
				if err != nil || m.Bucket != bucket || !strings.HasPrefix(m.Key, opts.Prefix) {
					continue
				}
				mu.Lock()
				found[m.UploadID] = uploadInfo(m)
				setOf[m.UploadID] = set
				mu.Unlock()
			}
			return nil
		})
	}
	// A record seen on a scanned drive may lack quorum (a create or a
	// completion cut short by a crash): such an upload cannot be used or
	// aborted, so it is not listed; the scanner removes its remnants.
	for id, u := range found {
		if _, _, err := e.readUpload(ctx, setOf[id], bucket, u.Key, id); err != nil {
			delete(found, id)
		}
	}
	all := make([]MultipartInfo, 0, len(found))
	for _, u := range found {
		if u.Key < opts.KeyMarker || (u.Key == opts.KeyMarker && (opts.UploadIDMarker == "" || u.UploadID <= opts.UploadIDMarker)) {
			continue
		}
		all = append(all, u)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Key != all[j].Key {
			return all[i].Key < all[j].Key
		}
		if !all[i].Initiated.Equal(all[j].Initiated) {
			return all[i].Initiated.Before(all[j].Initiated)
		}
		return all[i].UploadID < all[j].UploadID
	})
	max := opts.MaxUploads
	if max <= 0 || max > 1000 {
		max = 1000
	}
	var res ListUploadsResult
	lastPrefix := ""
	for _, u := range all {
		if opts.Delimiter != "" {
			if i := strings.Index(u.Key[len(opts.Prefix):], opts.Delimiter); i >= 0 {
				cp := u.Key[:len(opts.Prefix)+i+len(opts.Delimiter)]
				if cp == lastPrefix {
					continue
				}
				if len(res.Uploads)+len(res.CommonPrefixes) == max {
					res.IsTruncated = true
					break
				}
				lastPrefix = cp
				res.CommonPrefixes = append(res.CommonPrefixes, cp)
				res.NextKeyMarker, res.NextUploadIDMarker = cp, ""
				continue
			}
		}
		if len(res.Uploads)+len(res.CommonPrefixes) == max {
			res.IsTruncated = true
			break
		}
		res.Uploads = append(res.Uploads, u)
		res.NextKeyMarker, res.NextUploadIDMarker = u.Key, u.UploadID
	}
	if !res.IsTruncated {
		// S3 names the next markers for a truncated list only.
		res.NextKeyMarker, res.NextUploadIDMarker = "", ""
	}
	return res, nil
}

// sweepUploads removes the remnants of uploads without quorum (a create
// or a completion cut short by a crash) that are older than grace, so a
// create still in flight is never touched. It returns how many went.
func (e *Engine) sweepUploads(ctx context.Context, grace time.Duration) int {
	removed := 0
	for _, set := range e.sets {
		type upload struct{ bucket, key, id string }
		seen := map[upload]bool{}
		var mu sync.Mutex
		forEachDrive(set.drives, func(p int, d drive.Drive) error {
			ents, err := d.Scan(ctx, drive.TableUploads, drive.ScanQuery{})
			if err != nil {
				return err
			}
			for _, ent := range ents {
				m, err := meta.Unmarshal(ent.Value)
				if err != nil || time.Since(time.Unix(0, m.ModTime)) < grace {
					continue
				}
				mu.Lock()
				seen[upload{m.Bucket, m.Key, m.UploadID}] = true
				mu.Unlock()
			}
			return nil
		})
		for u := range seen {
			unlock, err := e.locks.LockWait(ctx, lockName(u.bucket, "\x00upload/"+u.id))
			if err != nil {
				return removed
			}
			// NoSuchUpload means so many drives lack the record that it
			// can never reach quorum, whatever the offline ones hold.
			if _, _, err := e.readUpload(ctx, set, u.bucket, u.key, u.id); errors.Is(err, ErrNoSuchUpload) {
				forEachDrive(set.drives, func(p int, d drive.Drive) error {
					return e.dropUpload(ctx, d, u.bucket, u.key, u.id)
				})
				removed++
				e.log.Info("scanner removed an upload without quorum", "bucket", u.bucket, "key", u.key, "upload", u.id)
			}
			unlock()
		}
	}
	return removed
}
