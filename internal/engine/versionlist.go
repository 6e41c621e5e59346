package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/quorum"
)

// ListObjectVersions returns one page of every version of the bucket's
// keys (delete markers included): keys in byte order, each key's current
// version first, then its noncurrent ones newest first. Keys come from the
// same merged scan of current records as ListObjects; each listed key's
// noncurrent versions are then read from its range of the versions table,
// so a key with many versions costs only its own listing.
func (e *Engine) ListObjectVersions(ctx context.Context, bucket string, opts ListVersionsOptions) (ListVersionsResult, error) {
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return ListVersionsResult{}, err
	}
	if opts.VersionIDMarker != "" && opts.KeyMarker == "" {
		return ListVersionsResult{}, fmt.Errorf("%w: a version-id-marker needs a key-marker", ErrInvalidArgument)
	}
	var marker *versionRef
	if opts.VersionIDMarker != "" {
		ref, err := parseVersionID(opts.VersionIDMarker)
		if err != nil {
			return ListVersionsResult{}, fmt.Errorf("%w: version-id-marker: %v", ErrInvalidArgument, err)
		}
		marker = &ref
	}
	maxKeys := opts.MaxKeys
	if maxKeys <= 0 || maxKeys > 1000 {
		maxKeys = 1000
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var res ListVersionsResult
	emit := func(oi ObjectInfo) bool {
		if len(res.Versions)+len(res.CommonPrefixes) == maxKeys {
			res.IsTruncated = true
			return false
		}
		res.Versions = append(res.Versions, oi)
		res.NextKeyMarker, res.NextVersionIDMarker = oi.Key, versionName(oi.VersionID)
		return true
	}
	lopts := ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter, After: opts.KeyMarker}
	// The rest of the marker key's versions come first.
	if marker != nil && strings.HasPrefix(opts.KeyMarker, opts.Prefix) &&
		commonPrefix(&listEntry{key: opts.KeyMarker}, lopts) == "" {
		set := e.setFor(bucket, opts.KeyMarker)
		head, err := e.readObject(ctx, set, bucket, opts.KeyMarker)
		if err == nil {
			var pending []*meta.Object
			for _, r := range head.recs {
				pending = addPending(pending, r, head.fi)
			}
			if !e.emitKeyVersions(ctx, bucket, opts.KeyMarker, head.fi, pending, marker, emit) {
				return res, nil
			}
		}
	}
	km, err := e.newKeyMerger(ctx, bucket, lopts)
	if err != nil {
		return ListVersionsResult{}, fmt.Errorf("list versions %s: %w", bucket, err)
	}
	lastPrefix := ""
	for {
		ent, m, err := km.next(ctx)
		if err != nil {
			return ListVersionsResult{}, fmt.Errorf("list versions %s: %w", bucket, err)
		}
		if ent == nil {
			break
		}
		if cp := commonPrefix(ent, lopts); cp != "" {
			if cp == lastPrefix || cp <= lopts.After {
				continue
			}
			if len(res.Versions)+len(res.CommonPrefixes) == maxKeys {
				res.IsTruncated = true
				return res, nil
			}
			lastPrefix = cp
			res.CommonPrefixes = append(res.CommonPrefixes, cp)
			res.NextKeyMarker, res.NextVersionIDMarker = cp, ""
			continue
		}
		if !e.emitKeyVersions(ctx, bucket, ent.key, m, ent.pending, nil, emit) {
			return res, nil
		}
	}
	res.NextKeyMarker, res.NextVersionIDMarker = "", ""
	return res, nil
}

// versionScanPage is how many versions a drive is asked for at a time.
const versionScanPage = 250

// emitKeyVersions passes every version of key to emit, current (head)
// first, then the noncurrent ones newest first: those of the versions
// table merged with pending ones (replaced versions not yet settled into
// the table, see listEntry), each once. after, when set, skips versions
// up to and including that one. It returns false when emit refused a
// version (the page is full).
func (e *Engine) emitKeyVersions(ctx context.Context, bucket, key string, head *meta.Object, pending []*meta.Object, after *versionRef, emit func(ObjectInfo) bool) bool {
	set := e.setFor(bucket, key)
	prefix := drive.VersionPrefix(bucket, key)
	// Pending versions by their versions-table key: table keys sort
	// newest first, so merging by key keeps the order.
	pendKeys := make([]string, 0, len(pending))
	pendByKey := make(map[string]*meta.Object, len(pending))
	for _, pv := range pending {
		k := drive.VersionKey(bucket, key, pv.ModTime, pv.VersionID)
		if _, dup := pendByKey[k]; !dup {
			pendKeys = append(pendKeys, k)
			pendByKey[k] = pv
		}
	}
	sort.Strings(pendKeys)
	start := "" // emit noncurrent versions after this versions-table key
	switch {
	case after == nil:
		oi := objectInfo(bucket, key, head)
		oi.IsLatest = true
		if !emit(oi) {
			return false
		}
	case after.matches(head):
	case after.null || after.adopted:
		for _, k := range pendKeys {
			if after.matches(pendByKey[k]) {
				start = k
			}
		}
		for _, d := range set.drives {
			if start != "" {
				break
			}
			if k, err := versionKeyOn(ctx, d, bucket, key, after.id); err == nil && k != "" {
				start = k
			}
		}
		if start == "" {
			return true // the marker names no version of the key
		}
	default:
		start = drive.VersionKey(bucket, key, after.time, after.id)
	}
	// emitPending emits the pending versions whose keys sort before limit
	// (through it when through is set; all that are left for "").
	next := 0
	for next < len(pendKeys) && pendKeys[next] <= start {
		next++
	}
	emitPending := func(limit string, through bool) bool {
		for ; next < len(pendKeys) && (limit == "" || pendKeys[next] < limit || through && pendKeys[next] == limit); next++ {
			if !emit(objectInfo(bucket, key, pendByKey[pendKeys[next]])) {
				return false
			}
		}
		return true
	}
	scan := walkedDrives(set)
	for {
		pages := make([][]drive.Entry, len(scan))
		errs := forEachDrive(scan, func(i int, d drive.Drive) error {
			ents, err := d.Scan(ctx, drive.TableVersions, drive.ScanQuery{Prefix: prefix, After: start, Limit: versionScanPage})
			pages[i] = ents
			return err
		})
		// Keys up to the smallest last key of a full page are complete
		// on every scanned drive.
		bound, more := "", false
		for i, ents := range pages {
			if errs[i] == nil && len(ents) == versionScanPage {
				if last := ents[len(ents)-1].Key; !more || last < bound {
					bound = last
				}
				more = true
			}
		}
		held := map[string][]*meta.Object{}
		for _, ents := range pages {
			for _, ent := range ents {
				if more && ent.Key > bound {
					break
				}
				if m, err := meta.Unmarshal(ent.Value); err == nil {
					held[ent.Key] = append(held[ent.Key], m)
				} else {
					held[ent.Key] = append(held[ent.Key], nil)
				}
			}
		}
		keys := make([]string, 0, len(held))
		for k := range held {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, ok := pendByKey[k]; ok {
				// Pending on other drives: emitted once, as pending.
				if !emitPending(k, true) {
					return false
				}
				continue
			}
			if !emitPending(k, false) {
				return false
			}
			m := quorum.Unanimous(held[k], countNil(errs))
			if m == nil {
				// The scanned drives disagree: ask the whole set.
				ref, ok := refOfVersionKey(prefix, k)
				if !ok {
					continue
				}
				st, err := e.readNoncurrent(ctx, set, bucket, key, ref, nil)
				if err != nil {
					e.jobs.QueueHeal(bucket, key)
					continue
				}
				m = st.fi
			}
			if !emit(objectInfo(bucket, key, m)) {
				return false
			}
		}
		if !more {
			return emitPending("", false)
		}
		if !emitPending(bound, true) {
			return false
		}
		start = bound
	}
}
