package engine

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/meta"
)

// An imported multipart object (ImportVersion.Parts): the source's
// object was uploaded in parts, and the import keeps them. The body
// arrives whole, in one PUT, and is cut at the part sizes given; each
// part is written as its own shard files, under the version's data id
// and the part's number, as a completed upload's parts are read. The
// version is committed once, after every part is written, with the
// multipart ETag and checksum computed from the parts (and compared with
// the source's): an interrupted import leaves no version, only shard
// files that no record owns, removed like those of any failed PUT.

// checkImportParts validates an import's parts and checksum: at most
// MaxPartNumber parts of 1 byte to MaxPutSize each, as many as the
// multipart ETag says; a checksum only with parts, of an algorithm and
// type S3 allows for multipart objects, whose value is base64 of the
// algorithm's size (followed by "-<parts>" for COMPOSITE).
func checkImportParts(imp *ImportVersion) error {
	if imp.Checksum != (ImportChecksum{}) && len(imp.Parts) == 0 {
		return fmt.Errorf("%w: an import checksum needs the parts", ErrInvalidArgument)
	}
	if len(imp.Parts) == 0 {
		return nil
	}
	if imp.DeleteMarker {
		return fmt.Errorf("%w: a delete marker has no parts", ErrInvalidArgument)
	}
	if len(imp.Parts) > MaxPartNumber {
		return fmt.Errorf("%w: %d import parts, at most %d", ErrInvalidArgument, len(imp.Parts), MaxPartNumber)
	}
	for i, n := range imp.Parts {
		if n < 1 || n > MaxPutSize {
			return fmt.Errorf("%w: import part %d is %d bytes", ErrInvalidArgument, i+1, n)
		}
	}
	if !isMultipartETag(imp.ETag) || !strings.HasSuffix(imp.ETag, "-"+strconv.Itoa(len(imp.Parts))) {
		return fmt.Errorf("%w: import of %d parts with ETag %q", ErrInvalidArgument, len(imp.Parts), imp.ETag)
	}
	c := imp.Checksum
	if c == (ImportChecksum{}) {
		return nil
	}
	alg, err := hashing.CanonicalChecksum(c.Algorithm)
	if err != nil || alg != c.Algorithm || !hashing.SupportsChecksumType(alg, c.Type) {
		return fmt.Errorf("%w: import checksum %s %s", ErrInvalidArgument, c.Algorithm, c.Type)
	}
	val := c.Value
	if c.Type == hashing.Composite {
		v, n, ok := strings.Cut(c.Value, "-")
		if !ok || n != strconv.Itoa(len(imp.Parts)) {
			return fmt.Errorf("%w: import checksum %q is not a composite of %d parts", ErrInvalidArgument, c.Value, len(imp.Parts))
		}
		val = v
	}
	if _, err := hashing.DecodeChecksum(alg, val); err != nil {
		return fmt.Errorf("%w: import checksum: %v", ErrInvalidArgument, err)
	}
	return nil
}

// importParts is putObject for an import with parts (and no
// encryption): checks done, it writes the parts and commits the version.
func (e *Engine) importParts(ctx context.Context, bucket, key string, body io.Reader, size int64, opts PutOptions) (ObjectInfo, error) {
	imp := opts.Import
	var total int64
	for _, n := range imp.Parts {
		total += n
	}
	if size != total {
		return ObjectInfo{}, fmt.Errorf("%w: import parts of %d bytes in all, body of %d", ErrInvalidArgument, total, size)
	}
	if opts.ChecksumAlgorithm != "" || opts.ContentMD5 != nil {
		return ObjectInfo{}, fmt.Errorf("%w: an import in parts carries its checksum in the import headers", ErrInvalidArgument)
	}
	set, err := e.writeSet(ctx, bucket, key)
	if err != nil {
		return ObjectInfo{}, err
	}
	parity := set.parityFor(opts.StorageClass)
	coder, err := e.coders.Get(len(set.drives)-parity, parity, e.blockSizeFor(nil))
	if err != nil {
		return ObjectInfo{}, err
	}
	dataID := uuid.NewString()
	dist := e.distribution(key, len(set.drives))
	var plans []*writePlan
	defer func() {
		for _, p := range plans {
			e.cleanupShards(p)
		}
	}()
	res := &writeResult{errs: make([]error, len(set.drives))}
	md5s := md5.New()
	alg := imp.Checksum.Algorithm
	parts := make([]meta.Part, len(imp.Parts))
	var sums [][]byte
	var crcs []hashing.PartCRC
	for i, n := range imp.Parts {
		plan := &writePlan{set: set, coder: coder, dist: dist, ref: drive.ShardRef{ID: dataID, Part: i + 1}}
		plans = append(plans, plan)
		r, err := e.writeShards(ctx, plan, io.LimitReader(body, n), n, hashing.Request{Size: n, ETag: true, Checksum: alg})
		if err != nil {
			return ObjectInfo{}, fmt.Errorf("import %s/%s part %d: %w", bucket, key, i+1, err)
		}
		for p, err := range r.errs {
			if err != nil && res.errs[p] == nil {
				res.errs[p] = fmt.Errorf("part %d: %w", i+1, err)
			}
		}
		raw, err := hex.DecodeString(r.digests.ETag)
		if err != nil {
			return ObjectInfo{}, fmt.Errorf("import %s/%s part %d: ETag %q: %w", bucket, key, i+1, r.digests.ETag, err)
		}
		md5s.Write(raw)
		parts[i] = meta.Part{Number: i + 1, Size: r.size, ETag: r.digests.ETag}
		if alg != "" {
			parts[i].Checksum = base64.StdEncoding.EncodeToString(r.digests.Checksum)
			sums = append(sums, r.digests.Checksum)
			crcs = append(crcs, hashing.PartCRC{Sum: r.digests.Checksum, Size: r.size})
		}
	}
	etag := fmt.Sprintf("%s-%d", hex.EncodeToString(md5s.Sum(nil)), len(parts))
	if etag != imp.ETag {
		return ObjectInfo{}, fmt.Errorf("import %s/%s: %w: import ETag %s, the parts make %s", bucket, key, ErrBadDigest, imp.ETag, etag)
	}
	m := e.newMeta(opts, total, etag, coder, dist)
	m.Parts, m.DataID = parts, dataID
	if alg != "" {
		var val string
		if imp.Checksum.Type == hashing.Composite {
			if val, err = hashing.CompositeChecksum(alg, sums); err != nil {
				return ObjectInfo{}, err
			}
		} else {
			sum, err := hashing.CombineCRC(alg, crcs)
			if err != nil {
				return ObjectInfo{}, err
			}
			val = base64.StdEncoding.EncodeToString(sum)
		}
		if val != imp.Checksum.Value {
			return ObjectInfo{}, fmt.Errorf("import %s/%s: %w", bucket, key,
				&ChecksumError{Algorithm: alg, Complete: true, Detail: fmt.Sprintf("the source's is %s, the parts make %s", imp.Checksum.Value, val)})
		}
		m.ChecksumAlgo, m.ChecksumVal, m.ChecksumType = alg, val, imp.Checksum.Type
	}
	lctx, unlock, err := e.locks.LockCtx(ctx, lockName(bucket, key))
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("import %s/%s: %w", bucket, key, err)
	}
	defer unlock()
	err = e.commitMeta(lctx, set, bucket, key, commitReq{m: m, res: res, cond: opts, owner: objectOwner(bucket, key), newVersion: true, imp: imp})
	switch {
	case err == nil:
		for _, p := range plans {
			p.committed = true
		}
	case errors.Is(err, errImportedBefore):
		// Nothing written: the shards just made are removed.
		m.ModTime, m.VersionID = imp.ModTime, imp.VersionID
	default:
		return ObjectInfo{}, fmt.Errorf("import %s/%s: %w", bucket, key, err)
	}
	return objectInfo(bucket, key, m), nil
}
