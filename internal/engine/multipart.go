package engine

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
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
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/meta"
)

// Multipart uploads live in the system volume of every drive of the
// object's set:
//
//	multipart/<bucket>/<sha256(key)>/<uploadID>/.ss.meta        upload record
//	multipart/<bucket>/<sha256(key)>/<uploadID>/data/part.N      shard file
//	multipart/<bucket>/<sha256(key)>/<uploadID>/data/part.N.meta part record
//
// Complete moves the data directory under the object and writes its
// metadata, exactly like a PUT commit.
const multipartDir = "multipart"

func uploadPath(bucket, key, uploadID string) string {
	h := sha256.Sum256([]byte(key))
	return multipartDir + "/" + bucket + "/" + hex.EncodeToString(h[:16]) + "/" + uploadID
}

// checkUploadID rejects ids that are not ours (and could be path tricks).
func checkUploadID(id string) error {
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return fmt.Errorf("%w: upload id %q", ErrNoSuchUpload, id)
	}
	return nil
}

// NewMultipartUpload starts an upload and returns its id.
func (e *Engine) NewMultipartUpload(ctx context.Context, bucket, key string, opts PutOptions) (string, error) {
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return "", err
	}
	if err := checkObjectName(key); err != nil {
		return "", err
	}
	if err := checkPutOptions(&opts); err != nil {
		return "", err
	}
	set := e.setFor(bucket, key)
	parity := set.parityFor(opts.StorageClass)
	coder, err := e.coders.Get(len(set.drives)-parity, parity, e.blockSize)
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
	path := uploadPath(bucket, key, id) + "/" + metaFile
	errs := forEachDrive(set.drives, func(p int, d drive.Drive) error {
		dm := *m
		dm.Erasure.Index = m.Erasure.Distribution[p]
		return d.WriteFile(ctx, drive.SystemVolume, path, dm.Marshal())
	})
	if ok := countNil(errs); ok < writeQuorum(coder.DataShards(), coder.ParityShards()) {
		forEachDrive(set.drives, func(p int, d drive.Drive) error {
			return d.Delete(ctx, drive.SystemVolume, uploadPath(bucket, key, id), true)
		})
		return "", quorumError(fmt.Sprintf("new upload %s/%s", bucket, key), errs, ok, writeQuorum(coder.DataShards(), coder.ParityShards()))
	}
	return id, nil
}

// readUpload reads an upload record with quorum.
func (e *Engine) readUpload(ctx context.Context, set *erasureSet, bucket, key, uploadID string) (*meta.Object, []error, error) {
	if err := checkUploadID(uploadID); err != nil {
		return nil, nil, err
	}
	path := uploadPath(bucket, key, uploadID) + "/" + metaFile
	metas := make([]*meta.Object, len(set.drives))
	errs := forEachDrive(set.drives, func(p int, d drive.Drive) error {
		raw, err := d.ReadFile(ctx, drive.SystemVolume, path)
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

const (
	checksumComposite  = "COMPOSITE"
	checksumFullObject = "FULL_OBJECT"
)

// multipartChecksumType settles an upload's checksum type as S3 does:
// CRC64NVME is always FULL_OBJECT, the other CRCs may be either
// (COMPOSITE by default), SHA1 and SHA256 only COMPOSITE.
func multipartChecksumType(algo, want string) (string, error) {
	want = strings.ToUpper(want)
	switch {
	case algo == "":
		if want != "" {
			return "", fmt.Errorf("%w: checksum type %s without a checksum algorithm", ErrInvalidArgument, want)
		}
		return "", nil
	case want == "" && algo == hashing.CRC64NVME:
		return checksumFullObject, nil
	case want == "":
		return checksumComposite, nil
	case want == checksumFullObject && hashing.IsCRC(algo):
		return want, nil
	case want == checksumComposite && algo != hashing.CRC64NVME:
		return want, nil
	}
	return "", fmt.Errorf("%w: checksum type %s is not supported with %s", ErrInvalidArgument, want, algo)
}

func partFile(n int) string { return "part." + strconv.Itoa(n) }

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
	set := e.setFor(bucket, key)
	up, _, err := e.readUpload(ctx, set, bucket, key, uploadID)
	if err != nil {
		return PartInfo{}, err
	}
	coder, err := e.coders.Get(up.Erasure.DataShards, up.Erasure.ParityShards, up.Erasure.BlockSize)
	if err != nil {
		return PartInfo{}, err
	}
	algo := opts.ChecksumAlgorithm
	if algo == "" {
		algo = up.ChecksumAlgo
	}
	plan := &writePlan{set: set, coder: coder, dist: up.Erasure.Distribution, tmpID: uuid.NewString(), file: partFile(part)}
	defer e.cleanupTmp(plan)
	res, err := e.writeShards(ctx, plan, body, size, hashing.Request{Size: size, ETag: true, MD5: opts.ContentMD5 != nil, Checksum: algo})
	if err != nil {
		return PartInfo{}, fmt.Errorf("upload part %d of %s/%s: %w", part, bucket, key, err)
	}
	checksum, err := verifyDigests(res.digests, opts.ContentMD5, algo, opts.ExpectedChecksum)
	if err != nil {
		return PartInfo{}, fmt.Errorf("upload part %d of %s/%s: %w", part, bucket, key, err)
	}
	if up.ChecksumAlgo != "" && !strings.EqualFold(algo, up.ChecksumAlgo) {
		checksum = "" // a different algorithm was verified but is not the upload's
	}
	etag := res.digests.ETag
	now := time.Now()
	pm := &meta.Object{Size: res.size, ModTime: now.UnixNano(), ETag: etag,
		Parts: []meta.Part{{Number: part, Size: res.size, ETag: etag, Checksum: checksum}}}
	dir := uploadPath(bucket, key, uploadID) + "/data/"
	// Parts of one upload commit in parallel; the upload lock (shared
	// here, exclusive in complete/abort) keeps them off a finishing upload.
	unlock := e.locks.RLock(lockName(bucket, "\x00upload/"+uploadID))
	defer unlock()
	if _, _, err := e.readUpload(ctx, set, bucket, key, uploadID); err != nil {
		return PartInfo{}, err
	}
	partLock := e.locks.Lock(lockName(bucket, "\x00upload/"+uploadID+"/"+strconv.Itoa(part)))
	defer partLock()
	errs := forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if !res.ok(p) {
			return res.errs[p]
		}
		if err := d.Rename(ctx, drive.SystemVolume, plan.tmpPath(plan.file), drive.SystemVolume, dir+partFile(part)); err != nil {
			return err
		}
		return d.WriteFile(ctx, drive.SystemVolume, dir+partFile(part)+".meta", pm.Marshal())
	})
	if ok := countNil(errs); ok < writeQuorum(coder.DataShards(), coder.ParityShards()) {
		return PartInfo{}, quorumError(fmt.Sprintf("upload part %d of %s/%s", part, bucket, key), errs, ok, writeQuorum(coder.DataShards(), coder.ParityShards()))
	}
	res.phases.Commit = time.Since(now)
	e.observe(res.phases)
	return PartInfo{Number: part, Size: res.size, ETag: etag, ModTime: now.UTC(), Checksum: checksum}, nil
}

// readParts returns, per part number, the part record most drives hold
// and which drive positions hold it.
func (e *Engine) readParts(ctx context.Context, set *erasureSet, bucket, key, uploadID string) (map[int]*meta.Object, map[int][]bool, error) {
	dir := uploadPath(bucket, key, uploadID) + "/data"
	n := len(set.drives)
	perDrive := make([]map[int]*meta.Object, n)
	var mu sync.Mutex
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		names, err := d.ListDir(ctx, drive.SystemVolume, dir)
		if err != nil {
			return err
		}
		got := map[int]*meta.Object{}
		for _, name := range names {
			if !strings.HasSuffix(name, ".meta") {
				continue
			}
			num, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, "part."), ".meta"))
			if err != nil {
				continue
			}
			raw, err := d.ReadFile(ctx, drive.SystemVolume, dir+"/"+name)
			if err != nil {
				continue
			}
			if m, err := meta.Unmarshal(raw); err == nil {
				got[num] = m
			}
		}
		mu.Lock()
		perDrive[p] = got
		mu.Unlock()
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
	set := e.setFor(bucket, key)
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
			ModTime: time.Unix(0, m.ModTime).UTC(), Checksum: m.Parts[0].Checksum})
		res.NextPartNumberMarker = n
	}
	return res, nil
}

func uploadInfo(m *meta.Object) MultipartInfo {
	return MultipartInfo{Bucket: m.Bucket, Key: m.Key, UploadID: m.UploadID, Initiated: time.Unix(0, m.ModTime).UTC(),
		StorageClass: m.StorageClass, Owner: m.Owner, ChecksumAlgorithm: m.ChecksumAlgo}
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
	set := e.setFor(bucket, key)
	uploadUnlock := e.locks.Lock(lockName(bucket, "\x00upload/"+uploadID))
	defer uploadUnlock()
	up, _, err := e.readUpload(ctx, set, bucket, key, uploadID)
	if err != nil {
		return ObjectInfo{}, err
	}
	stored, holders, err := e.readParts(ctx, set, bucket, key, uploadID)
	if err != nil {
		return ObjectInfo{}, err
	}
	wq := writeQuorum(up.Erasure.DataShards, up.Erasure.ParityShards)
	md5s := md5.New()
	var partSums [][]byte
	var partCRCs []hashing.PartCRC
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
		pc := m.Parts[0].Checksum
		if cp.Checksum != "" && pc != "" && cp.Checksum != pc {
			return ObjectInfo{}, fmt.Errorf("%w: part %d checksum %s, not %s", ErrInvalidPart, cp.Number, pc, cp.Checksum)
		}
		if i < len(parts)-1 && m.Size < MinPartSize {
			return ObjectInfo{}, fmt.Errorf("%w: part %d is %d bytes", ErrEntityTooSmall, cp.Number, m.Size)
		}
		raw, _ := hex.DecodeString(m.ETag)
		md5s.Write(raw)
		if up.ChecksumAlgo != "" {
			b, err := base64.StdEncoding.DecodeString(pc)
			if err != nil || pc == "" {
				return ObjectInfo{}, fmt.Errorf("%w: part %d has no %s checksum", ErrInvalidPart, cp.Number, up.ChecksumAlgo)
			}
			partSums = append(partSums, b)
			partCRCs = append(partCRCs, hashing.PartCRC{Sum: b, Size: m.Size})
		}
		size += m.Size
		final[i] = meta.Part{Number: cp.Number, Size: m.Size, ETag: m.ETag, Checksum: pc}
	}
	etag := fmt.Sprintf("%s-%d", hex.EncodeToString(md5s.Sum(nil)), len(parts))
	dataDir := dataDirPrefix + uuid.NewString()
	om := *up
	om.Bucket, om.Key, om.UploadID = "", "", ""
	om.Size, om.ETag, om.ModTime, om.Parts, om.DataDir = size, etag, time.Now().UnixNano(), final, dataDir
	switch {
	case up.ChecksumAlgo == "":
	case up.ChecksumType == checksumFullObject:
		// A CRC of the whole object, combined from the part CRCs and
		// lengths without reading the data again.
		sum, err := hashing.CombineCRC(up.ChecksumAlgo, partCRCs)
		if err != nil {
			return ObjectInfo{}, fmt.Errorf("complete %s/%s: %w", bucket, key, err)
		}
		om.ChecksumVal = base64.StdEncoding.EncodeToString(sum)
	default:
		v, err := hashing.CompositeChecksum(up.ChecksumAlgo, partSums)
		if err != nil {
			return ObjectInfo{}, fmt.Errorf("complete %s/%s: %w", bucket, key, err)
		}
		om.ChecksumVal, om.ChecksumType = v, checksumComposite
	}
	// Stage the data directory: drop unlisted parts and part records so
	// only part.N shard files move under the object.
	upDir := uploadPath(bucket, key, uploadID)
	listed := map[string]bool{}
	for _, p := range parts {
		listed[partFile(p.Number)] = true
	}
	res := &writeResult{errs: forEachDrive(set.drives, func(p int, d drive.Drive) error {
		for _, cp := range parts {
			if !holders[cp.Number][p] {
				return fmt.Errorf("part %d missing or stale on this drive", cp.Number)
			}
		}
		names, err := d.ListDir(ctx, drive.SystemVolume, upDir+"/data")
		if err != nil {
			return err
		}
		for _, name := range names {
			if !listed[name] {
				if err := d.Delete(ctx, drive.SystemVolume, upDir+"/data/"+name, true); err != nil && !errors.Is(err, drive.ErrFileNotFound) {
					return err
				}
			}
		}
		return nil
	})}
	unlock := e.locks.Lock(lockName(bucket, key))
	defer unlock()
	if err := e.commitMeta(ctx, set, bucket, key, &om, upDir+"/data", up.Erasure.Distribution, res, opts); err != nil {
		return ObjectInfo{}, fmt.Errorf("complete %s/%s: %w", bucket, key, err)
	}
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		return d.Delete(ctx, drive.SystemVolume, upDir, true)
	})
	return objectInfo(bucket, key, &om), nil
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
	set := e.setFor(bucket, key)
	unlock := e.locks.Lock(lockName(bucket, "\x00upload/"+uploadID))
	defer unlock()
	if _, _, err := e.readUpload(ctx, set, bucket, key, uploadID); err != nil {
		return err
	}
	errs := forEachDrive(set.drives, func(p int, d drive.Drive) error {
		err := d.Delete(ctx, drive.SystemVolume, uploadPath(bucket, key, uploadID), true)
		if errors.Is(err, drive.ErrFileNotFound) {
			return nil
		}
		return err
	})
	if countNil(errs) == 0 {
		return fmt.Errorf("abort %s: %w: %v", uploadID, ErrWriteQuorum, firstErr(errs))
	}
	return nil
}

// ListMultipartUploads lists in-progress uploads of a bucket, sorted by
// key then initiation time.
func (e *Engine) ListMultipartUploads(ctx context.Context, bucket string, opts ListUploadsOptions) (ListUploadsResult, error) {
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return ListUploadsResult{}, err
	}
	var mu sync.Mutex
	found := map[string]MultipartInfo{}
	for _, set := range e.sets {
		// Upload records are on write quorum drives, so parity+1 drives
		// of the set see every upload.
		drives := set.drives[:min(len(set.drives), set.parity+1)]
		forEachDrive(drives, func(p int, d drive.Drive) error {
			root := multipartDir + "/" + bucket
			keyDirs, err := d.ListDir(ctx, drive.SystemVolume, root)
			if err != nil {
				return err
			}
			for _, kd := range keyDirs {
				ids, err := d.ListDir(ctx, drive.SystemVolume, root+"/"+strings.TrimSuffix(kd, "/"))
				if err != nil {
					continue
				}
				for _, id := range ids {
					raw, err := d.ReadFile(ctx, drive.SystemVolume, root+"/"+strings.TrimSuffix(kd, "/")+"/"+strings.TrimSuffix(id, "/")+"/"+metaFile)
					if err != nil {
						continue
					}
					m, err := meta.Unmarshal(raw)
					if err != nil || !strings.HasPrefix(m.Key, opts.Prefix) {
						continue
					}
					mu.Lock()
					found[m.UploadID] = uploadInfo(m)
					mu.Unlock()
				}
			}
			return nil
		})
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
	return res, nil
}
