package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/bitrot"
	"github.com/shardstore/shardstore/internal/meta"
)

// etagMatches compares an If-Match / If-None-Match value with an ETag.
func etagMatches(cond, etag string) bool {
	for _, c := range strings.Split(cond, ",") {
		c = strings.TrimSpace(c)
		c = strings.TrimPrefix(c, "W/")
		if c == "*" || strings.Trim(c, `"`) == etag {
			return true
		}
	}
	return false
}

// evaluate applies HTTP preconditions in RFC 9110 order.
func (c *Conditions) evaluate(etag string, mod time.Time) error {
	mod = mod.Truncate(time.Second)
	if c.IfMatch != "" {
		if !etagMatches(c.IfMatch, etag) {
			return fmt.Errorf("%w: If-Match", ErrPreconditionFailed)
		}
	} else if c.IfUnmodifiedSince != nil && mod.After(*c.IfUnmodifiedSince) {
		return fmt.Errorf("%w: If-Unmodified-Since", ErrPreconditionFailed)
	}
	if c.IfNoneMatch != "" {
		if etagMatches(c.IfNoneMatch, etag) {
			return ErrNotModified
		}
	} else if c.IfModifiedSince != nil && !mod.After(*c.IfModifiedSince) {
		return ErrNotModified
	}
	return nil
}

// HeadObject returns an object's info, evaluating opts like GetObject.
func (e *Engine) HeadObject(ctx context.Context, bucket, key string, opts GetOptions) (ObjectInfo, error) {
	r, err := e.openObject(ctx, bucket, key, opts, false)
	if err != nil {
		return ObjectInfo{}, err
	}
	r.Close()
	return r.Info, nil
}

// GetObject opens an object for reading, evaluating opts.Conditions
// (ErrPreconditionFailed / ErrNotModified) and resolving opts.Range
// (ErrInvalidRange when unsatisfiable). The reader pins the version it
// resolved instead of holding a lock: an overwrite or delete of the key
// goes ahead while the body streams, and the old version's data is removed
// only when the last reader of it closes.
func (e *Engine) GetObject(ctx context.Context, bucket, key string, opts GetOptions) (*ObjectReader, error) {
	return e.openObject(ctx, bucket, key, opts, true)
}

func (e *Engine) openObject(ctx context.Context, bucket, key string, opts GetOptions, body bool) (*ObjectReader, error) {
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return nil, err
	}
	if err := checkObjectName(key); err != nil {
		return nil, err
	}
	// The read lock covers only resolving and pinning the version, so a
	// commit (which decides under the write lock whether old data can go)
	// never frees data a reader has resolved but not yet pinned. It is
	// this process's lock only: see RLockLocalWait.
	unlock, err := e.locks.RLockLocalWait(ctx, lockName(bucket, key))
	if err != nil {
		return nil, err
	}
	// The key's pool is looked up under the lock: a decommission moves a
	// key under its write lock. On another node the move can still pass
	// between the lookup and the read: a key not found in the pool it was
	// looked up in is looked up again.
	var set *erasureSet
	var st *objectState
	latest := true
	for try := 0; ; try++ {
		again, lerr := e.readSet(ctx, bucket, key)
		if lerr != nil {
			unlock()
			return nil, lerr
		}
		if set == again {
			break // found in none: the not-found stands
		}
		set = again
		if opts.VersionID != "" {
			st, latest, err = e.resolveVersion(ctx, set, bucket, key, opts.VersionID)
		} else {
			st, err = e.readObjectData(ctx, set, bucket, key, body)
		}
		if len(e.pools) == 1 || try == 2 || (!errors.Is(err, ErrObjectNotFound) && !errors.Is(err, ErrNoSuchVersion)) {
			break
		}
	}
	if err != nil {
		unlock()
		return nil, err
	}
	if st.fi.IsDeleteMarker() {
		unlock()
		if opts.VersionID != "" {
			return nil, deleteMarkerError(bucket, key, st.fi, latest, ErrMethodNotAllowed)
		}
		return nil, deleteMarkerError(bucket, key, st.fi, latest, ErrObjectNotFound)
	}
	info := objectInfo(bucket, key, st.fi)
	info.IsLatest = latest
	if err := opts.Conditions.evaluate(info.ETag, info.ModTime); err != nil {
		unlock()
		return nil, err
	}
	start, length, partial, err := resolveRange(st.fi, opts)
	if err != nil {
		unlock()
		return nil, err
	}
	or := &ObjectReader{Info: info, Start: start, Length: length, Partial: partial}
	if !body {
		unlock()
		or.ReadCloser = io.NopCloser(strings.NewReader(""))
		return or, nil
	}
	coder, err := e.coders.Get(st.fi.Erasure.DataShards, st.fi.Erasure.ParityShards, st.fi.Erasure.BlockSize)
	if err != nil {
		unlock()
		return nil, err
	}
	ids := st.fi.DataIDs()
	e.pins.pin(ids)
	unlock()
	r := &objectReader{e: e, ctx: ctx, set: set, bucket: bucket, key: key, st: st,
		coder: coder, algo: bitrot.Algorithm(st.fi.Erasure.Bitrot), offset: start, remaining: length,
		release: func() { e.pins.unpin(ids) }, failed: make([]bool, len(set.drives))}
	if st.fi.Cipher != "" {
		// Unsealed outside the lock: a key server's round trip must not
		// hold up writers of the key.
		if r.objectKey, err = unsealKey(opts.Unseal, bucket, key, st.fi); err != nil {
			e.pins.unpin(ids)
			return nil, err
		}
		r.streamPart = -1
		// Open the first block now: a key that does not open the data
		// fails the GET before its answer starts, not halfway through.
		if length > 0 {
			if err := r.ready(); err != nil {
				r.Close()
				return nil, err
			}
		}
	}
	or.ReadCloser = r
	return or, nil
}

// resolveRange turns opts.Range or opts.PartNumber into a byte range.
func resolveRange(m *meta.Object, opts GetOptions) (start, length int64, partial bool, err error) {
	size := m.Size
	if opts.PartNumber > 0 {
		if opts.Range != nil {
			return 0, 0, false, fmt.Errorf("%w: Range and partNumber together", ErrInvalidArgument)
		}
		if opts.PartNumber > len(m.Parts) || (len(m.Parts) == 0 && opts.PartNumber != 1) {
			return 0, 0, false, fmt.Errorf("%w: part %d of %d", ErrInvalidPartNumber, opts.PartNumber, len(m.Parts))
		}
		for _, p := range m.Parts[:opts.PartNumber-1] {
			start += p.Size
		}
		if len(m.Parts) == 0 {
			return 0, size, true, nil
		}
		return start, m.Parts[opts.PartNumber-1].Size, true, nil
	}
	r := opts.Range
	if r == nil {
		return 0, size, false, nil
	}
	if size == 0 {
		// No byte of an empty object can be selected: S3 answers 416.
		return 0, 0, false, fmt.Errorf("%w: range on an empty object", ErrInvalidRange)
	}
	switch {
	case r.Start < 0:
		n := -r.Start
		if n == 0 {
			return 0, 0, false, fmt.Errorf("%w: empty suffix range", ErrInvalidRange)
		}
		n = min(n, size)
		return size - n, n, true, nil
	case r.Start >= size:
		return 0, 0, false, fmt.Errorf("%w: start %d beyond size %d", ErrInvalidRange, r.Start, size)
	case r.End >= 0 && r.End < r.Start:
		return 0, size, false, nil // syntactically invalid ranges are ignored, as HTTP says
	}
	end := r.End
	if end < 0 || end >= size {
		end = size - 1
	}
	return r.Start, end - r.Start + 1, true, nil
}
