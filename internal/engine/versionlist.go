package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
		set, err := e.readSet(ctx, bucket, opts.KeyMarker)
		if err != nil {
			return res, err
		}
		head, err := e.readObject(ctx, set, bucket, opts.KeyMarker)
		switch {
		case err == nil:
			var pending []*meta.Object
			for _, r := range head.recs {
				pending = addPending(pending, r, head.fi)
			}
			more, err := e.emitKeyVersions(ctx, bucket, opts.KeyMarker, head.fi, pending, marker, emit)
			if err != nil {
				return ListVersionsResult{}, fmt.Errorf("list versions %s: %w", bucket, err)
			}
			if !more {
				return res, nil
			}
		case !errors.Is(err, ErrObjectNotFound):
			// The marker key's versions cannot be read: refuse rather
			// than answer a page without them.
			return ListVersionsResult{}, fmt.Errorf("list versions %s: %w", bucket, err)
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
		more, err := e.emitKeyVersions(ctx, bucket, ent.key, m, ent.pending, nil, emit)
		if err != nil {
			return ListVersionsResult{}, fmt.Errorf("list versions %s: %w", bucket, err)
		}
		if !more {
			return res, nil
		}
	}
	res.NextKeyMarker, res.NextVersionIDMarker = "", ""
	return res, nil
}

// versionScanPage is how many versions a drive is asked for at a time.
const versionScanPage = 250

// versionScanNeed is how many drives of set a scan of the versions table
// must read to be sure to meet every acknowledged version: a version is
// acknowledged once a write quorum holds it, so any N - WriteQuorum + 1
// drives include one that holds it.
func versionScanNeed(set *erasureSet) int {
	n := len(set.drives)
	return n - quorum.WriteQuorum(n-set.parity, set.parity) + 1
}

// scanVersionPage scans one page of the versions table under prefix
// after start on the walked drives of set and, where some of those
// fail, on the set's other online drives, until versionScanNeed drives
// answered. It returns the answering drives' pages; ErrReadQuorum when
// too few answered (a listing must refuse rather than leave out
// versions only the drives it could not scan would show).
func scanVersionPage(ctx context.Context, set *erasureSet, prefix, start string) ([][]drive.Entry, error) {
	need := versionScanNeed(set)
	walked := walkedDrives(set)
	var rest []drive.Drive
	for _, d := range set.drives {
		if !reportsOffline(d) && !slices.Contains(walked, d) {
			rest = append(rest, d)
		}
	}
	var pages [][]drive.Entry
	var firstErr error
	for _, scan := range [][]drive.Drive{walked, rest} {
		if len(pages) >= need {
			break
		}
		got := make([][]drive.Entry, len(scan))
		errs := forEachDrive(scan, func(i int, d drive.Drive) error {
			ents, err := d.Scan(ctx, drive.TableVersions, drive.ScanQuery{Prefix: prefix, After: start, Limit: versionScanPage})
			got[i] = ents
			return err
		})
		for i, err := range errs {
			if err == nil {
				pages = append(pages, got[i])
			} else if firstErr == nil {
				firstErr = err
			}
		}
	}
	if len(pages) < need {
		return nil, fmt.Errorf("%w: versions of %q: %d drives of %d scanned, %d needed: %v",
			ErrReadQuorum, prefix, len(pages), len(set.drives), need, firstErr)
	}
	return pages, nil
}

// emitKeyVersions passes every version of key to emit, current (head)
// first, then the noncurrent ones newest first: those of the versions
// table merged with pending ones (replaced versions not yet settled into
// the table, see listEntry), each once. after, when set, skips versions
// up to and including that one. It returns false when emit refused a
// version (the page is full), and an error (ErrReadQuorum) when it
// cannot read every version it must list: too few drives answered the
// scan (scanVersionPage), or a version the scanned drives disagree on
// has no read quorum. A listing answers that error (503) rather than
// leave acknowledged versions out.
//
// The head comes from an earlier read (the scan of current records)
// than the versions table: writes in between move it into the table.
// When the first page of the table holds the head or versions newer than
// it, the head is read again by quorum, with its pending versions, and
// the table scanned again. If the head changed, the versions newer than
// the new one are left out (they were written during the listing), so
// that one answer never lists a version twice nor flags a replaced
// version latest (finding V2 of docs/consistency.md). If it did not, the
// newer versions are genuine (versions imported with their own times may
// sort before the current one) and listed. The head's own table entry is
// never listed again as noncurrent.
func (e *Engine) emitKeyVersions(ctx context.Context, bucket, key string, head *meta.Object, pending []*meta.Object, after *versionRef, emit func(ObjectInfo) bool) (bool, error) {
	set, err := e.readSet(ctx, bucket, key)
	if err != nil {
		return false, err
	}
	prefix := drive.VersionPrefix(bucket, key)
	emitHead := after == nil
	// headKey: the head's versions-table key; that entry is not listed
	// as noncurrent, nor, once skipNewer is set, entries newer than it.
	headKey, skipNewer := "", false
	if emitHead || after.matches(head) {
		headKey = drive.VersionKey(bucket, key, head.ModTime, head.VersionID)
	}
	listed := func(k string) bool {
		return headKey == "" || k > headKey || k < headKey && !skipNewer
	}
	// Pending versions by their versions-table key: table keys sort
	// newest first, so merging by key keeps the order.
	var pendKeys []string
	var pendByKey map[string]*meta.Object
	setPending := func(pending []*meta.Object) {
		pendKeys = make([]string, 0, len(pending))
		pendByKey = make(map[string]*meta.Object, len(pending))
		for _, pv := range pending {
			k := drive.VersionKey(bucket, key, pv.ModTime, pv.VersionID)
			if _, dup := pendByKey[k]; !dup && listed(k) {
				pendKeys = append(pendKeys, k)
				pendByKey[k] = pv
			}
		}
		sort.Strings(pendKeys)
	}
	setPending(pending)
	start := "" // emit noncurrent versions after this versions-table key
	switch {
	case after == nil, after.matches(head):
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
			return true, nil // the marker names no version of the key
		}
	default:
		start = drive.VersionKey(bucket, key, after.time, after.id)
	}
	// emitPending emits the pending versions whose keys sort before limit
	// (through it when through is set; all that are left for "").
	next := 0
	skipPending := func() {
		next = 0
		for next < len(pendKeys) && pendKeys[next] <= start {
			next++
		}
	}
	skipPending()
	emitPending := func(limit string, through bool) bool {
		for ; next < len(pendKeys) && (limit == "" || pendKeys[next] < limit || through && pendKeys[next] == limit); next++ {
			if !emit(objectInfo(bucket, key, pendByKey[pendKeys[next]])) {
				return false
			}
		}
		return true
	}
	reread := false
	for {
		pages, err := scanVersionPage(ctx, set, prefix, start)
		if err != nil {
			return false, fmt.Errorf("%s/%s: %w", bucket, key, err)
		}
		// Keys up to the smallest last key of a full page are complete
		// on every scanned drive.
		bound, more := "", false
		for _, ents := range pages {
			if len(ents) == versionScanPage {
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
		if emitHead {
			if !reread && len(keys) > 0 && keys[0] <= headKey {
				// The head was replaced since it was read: read it
				// again, with its pending versions, and scan again.
				st, err := e.readObject(ctx, set, bucket, key)
				if errors.Is(err, ErrObjectNotFound) {
					return true, nil // every version removed meanwhile
				}
				if err != nil {
					return false, err
				}
				reread = true
				if !st.fi.SameVersion(head) {
					head, skipNewer = st.fi, true
					headKey = drive.VersionKey(bucket, key, head.ModTime, head.VersionID)
					pending = nil
					for _, r := range st.recs {
						pending = addPending(pending, r, head)
					}
					setPending(pending)
					skipPending()
					continue
				}
				// Unchanged: what the table holds newer than it is
				// genuine, and listed.
			}
			oi := objectInfo(bucket, key, head)
			oi.IsLatest = true
			if !emit(oi) {
				return false, nil
			}
			emitHead = false
		}
		for _, k := range keys {
			if !listed(k) {
				continue // the head, or written after it was read again
			}
			if _, ok := pendByKey[k]; ok {
				// Pending on other drives: emitted once, as pending.
				if !emitPending(k, true) {
					return false, nil
				}
				continue
			}
			if !emitPending(k, false) {
				return false, nil
			}
			m := quorum.Unanimous(held[k], len(pages))
			if m == nil {
				// The scanned drives disagree: ask the whole set.
				ref, ok := refOfVersionKey(prefix, k)
				if !ok {
					continue
				}
				st, err := e.readNoncurrent(ctx, set, bucket, key, ref, nil)
				if err != nil {
					e.jobs.QueueHeal(bucket, key)
					if errors.Is(err, ErrNoSuchVersion) {
						continue // remnants of a version not written or removed
					}
					return false, err
				}
				m = st.fi
			}
			if !emit(objectInfo(bucket, key, m)) {
				return false, nil
			}
		}
		if !more {
			return emitPending("", false), nil
		}
		if !emitPending(bound, true) {
			return false, nil
		}
		start = bound
	}
}
