package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/quorum"
)

// Listing scans the bucket's range of the index on parity+1 drives of each
// set in key order and merges the streams. Any object written with quorum
// is on at least one of those drives, and a deleted one cannot remain on
// all of them, so a key the scanned drives agree on is answered from their
// records and only disagreements pay for a full quorum read. That holds
// only while the scans of enough drives answer whole: a listing that
// cannot keep them fails with ErrReadQuorum (list_quorum.go). The drives
// collapse common prefixes themselves (seeking past them), so a delimiter
// listing never visits the keys below a prefix.

// listEntry is one item of a drive scan: an object with its raw record,
// or a common prefix.
type listEntry struct {
	key    string
	prefix bool
	// unsure marks a common prefix not every walked drive showed: some
	// of them may have missed the deletes of every key under it, so the
	// listing confirms it by quorum (prefixHasObject) before showing it.
	unsure bool
	raw    []byte
	// pending holds the versions versioned commits replaced and have not
	// yet moved to the versions table (FlagKeep in a drive's record),
	// each once: the key's newest noncurrent versions until a commit or a
	// heal settles them. Usually none or one; drives can disagree (one
	// missed a commit that others hold, then a later commit replaced a
	// different version on it), and every one of them must be listed.
	pending []*meta.Object
}

// addPending adds the version r holds pending to list unless list
// already has it or it is the current version cur.
func addPending(list []*meta.Object, r *meta.Record, cur *meta.Object) []*meta.Object {
	pv := quorum.PendingVersion(r)
	if pv == nil || (cur != nil && pv.SameVersion(cur)) {
		return list
	}
	for _, have := range list {
		if have.SameVersion(pv) {
			return list
		}
	}
	return append(list, pv)
}

// listPage is how many entries a walker asks a drive for at a time
// after its first scan, which asks for what one listing page needs.
const listPage = 1000

// walker reads one drive's entries in key order, a scan at a time, when
// its reader needs them: a listing page whose keys the drives agree on
// costs one scan per walked drive, and nothing is read ahead that the
// page will not use.
//
// A walker given a primary (checkAgainst) checks its drive against the
// primary's by digest (drive.ScanQuery.Digest) before reading records:
// when the digests of one query agree, the drive holds the same keys at
// the same versions, and the walker's batch is the primary's, marked
// verified, so its records are neither moved nor compared. On the first
// disagreement it reads its own records from then on.
type walker struct {
	d      drive.Drive
	bucket string
	q      drive.ScanQuery
	batch  []listEntry
	pos    int
	done   bool
	err    error

	// primary is the walker this one checks against by digest; nil once
	// they disagreed (or for a walker reading its own records).
	primary *walker
	// verified is set while batch is the primary's, checked by digest.
	verified bool
	// For a primary: the query its batch answers and the batch's digest,
	// for the walkers checking against it.
	digests bool
	batchQ  drive.ScanQuery
	digest  drive.ScanDigest
}

// newWalker walks bucket's keys under prefix after after on d, the first
// scan asking for first entries (at least 2, at most listPage).
func newWalker(d drive.Drive, bucket, prefix, after, delim string, first int, keysOnly bool) *walker {
	bp := drive.BucketPrefix(bucket)
	q := drive.ScanQuery{Prefix: bp + prefix, Delimiter: delim, Limit: min(max(first, 2), listPage), KeysOnly: keysOnly}
	if after != "" {
		q.After = bp + after
	}
	return &walker{d: d, bucket: bucket, q: q}
}

// checkAgainst makes w check its drive against p's by digest.
func (w *walker) checkAgainst(p *walker) {
	w.primary = p
	p.digests = true
}

// fill replaces the batch with the drive's next scan.
func (w *walker) fill(ctx context.Context) {
	if w.primary != nil {
		d, err := w.scanDigest(ctx)
		if err != nil {
			w.fail(err)
			return
		}
		if w.adopt(d) {
			return
		}
	}
	w.fillRecords(ctx)
}

// scanDigest scans the digest of w's next batch.
func (w *walker) scanDigest(ctx context.Context) (drive.ScanDigest, error) {
	q := w.q
	q.Digest = true
	ents, err := w.d.Scan(ctx, drive.TableObjects, q)
	if err != nil {
		return drive.ScanDigest{}, err
	}
	d, err := drive.ParseScanDigest(ents)
	if err != nil {
		// A drive that answers a digest query with something else is
		// compared record by record instead.
		return drive.ScanDigest{Mixed: true}, nil
	}
	return d, nil
}

// adopt takes the primary's batch as w's when d, w's digest of its next
// batch, shows the same entries; otherwise w stops checking by digest
// (and fills with its records).
func (w *walker) adopt(d drive.ScanDigest) bool {
	p := w.primary
	if d.Mixed || p.err != nil || p.batchQ != w.q || p.digest.Mixed || d != p.digest {
		w.primary = nil
		return false
	}
	w.batch, w.pos, w.verified, w.done = p.batch, 0, true, p.done
	w.q = p.q
	return true
}

// fillRecords replaces the batch with the drive's next scan of records.
func (w *walker) fillRecords(ctx context.Context) {
	w.verified = false
	q := w.q
	ents, err := w.d.Scan(ctx, drive.TableObjects, q)
	if err != nil {
		w.fail(err)
		return
	}
	if w.digests {
		w.batchQ, w.digest = q, drive.DigestEntries(ents)
	}
	// A fresh batch: walkers checking against this one share the last.
	w.batch, w.pos = make([]listEntry, 0, len(ents)), 0
	bp := len(drive.BucketPrefix(w.bucket))
	for _, ent := range ents {
		w.batch = append(w.batch, listEntry{key: ent.Key[bp:], prefix: ent.CommonPrefix, raw: ent.Value})
	}
	if len(ents) < w.q.Limit {
		w.done = true
	} else {
		w.q.After = ents[len(ents)-1].Key
		w.q.Limit = listPage
	}
}

// fail ends w with err (a cancelled context ends it quietly).
func (w *walker) fail(err error) {
	w.batch, w.pos, w.verified = nil, 0, false
	if !errors.Is(err, context.Canceled) {
		w.err = err
	}
	w.done = true
}

// next returns the drive's next entry, or nil at its end (or error).
func (w *walker) next(ctx context.Context) *listEntry {
	if w.pos == len(w.batch) {
		if w.done {
			return nil
		}
		w.fill(ctx)
		if w.pos == len(w.batch) {
			return nil
		}
	}
	w.pos++
	return &w.batch[w.pos-1]
}

// fillAll runs the walkers' first scans at once: records from those
// that read them, digests from those that check against a primary (then
// the records of any whose digest disagrees).
func fillAll(ctx context.Context, walkers []*walker) {
	var wg sync.WaitGroup
	digests := make([]drive.ScanDigest, len(walkers))
	errs := make([]error, len(walkers))
	for i, w := range walkers {
		if w.primary != nil {
			wg.Go(func() { digests[i], errs[i] = w.scanDigest(ctx) })
		} else {
			wg.Go(w.fillFunc(ctx))
		}
	}
	wg.Wait()
	for i, w := range walkers {
		if w.primary == nil {
			continue
		}
		if errs[i] != nil {
			w.fail(errs[i])
		} else if !w.adopt(digests[i]) {
			wg.Go(w.fillFunc(ctx))
		}
	}
	wg.Wait()
}

func (w *walker) fillFunc(ctx context.Context) func() {
	return func() { w.fillRecords(ctx) }
}

// walkedDrives are the drives of set a listing walks: the first parity+1
// online ones (any object written with quorum is on one of them).
func walkedDrives(set *erasureSet) []drive.Drive {
	want := min(len(set.drives), set.parity+1)
	var out []drive.Drive
	for _, d := range set.drives {
		if len(out) == want {
			break
		}
		if reportsOffline(d) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// rawKeys returns the next keys of bucket under prefix after after, in
// order, merged over the walked drives of every set, without resolving
// them by quorum (the heal walk of internal/background uses it: healing
// must reach exactly the keys a listing cannot resolve, such as an
// overwrite left without metadata quorum or the remnants of an
// interrupted write); more is set when a drive had further keys. Each
// drive yields at most limit keys, so only keys up to the smallest last
// key of a drive that hit the limit are known complete and returned.
func (e *Engine) rawKeys(ctx context.Context, bucket, prefix, after string, limit int) ([]string, bool, error) {
	return rawKeysIn(ctx, e.sets, bucket, prefix, after, limit)
}

// rawKeysIn is rawKeys over the given sets (one pool's, for a
// decommission).
func rawKeysIn(ctx context.Context, sets []*erasureSet, bucket, prefix, after string, limit int) ([]string, bool, error) {
	var walkers []*walker
	for _, set := range sets {
		drives := walkedDrives(set)
		if len(drives) == 0 {
			return nil, false, fmt.Errorf("%w: no drive of set %d is online", ErrReadQuorum, set.index+1)
		}
		for _, d := range drives {
			walkers = append(walkers, newWalker(d, bucket, prefix, after, "", limit, true))
		}
	}
	fillAll(ctx, walkers)
	seen := map[string]bool{}
	bound, more := "", false
	for _, w := range walkers {
		got := 0
		for ent := w.next(ctx); ent != nil; ent = w.next(ctx) {
			seen[ent.key] = true
			got++
			if got == limit {
				if !more || ent.key < bound {
					bound = ent.key
				}
				more = true
				break
			}
		}
		if w.err != nil {
			return nil, false, w.err
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		if !more || k <= bound {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, more, ctx.Err()
}

// reportsOffline reports whether d tracks its health (drive.Health) and
// is offline now; a drive that does not track it counts as online.
func reportsOffline(d drive.Drive) bool {
	h, ok := d.(interface{ Online() bool })
	return ok && !h.Online()
}

// setLister merges the walks of one set's drives, resolving
// disagreements with a quorum read.
type setLister struct {
	e       *Engine
	set     *erasureSet
	bucket  string
	walkers []*walker
	heads   []*listEntry
	// need is listQuorum(set): how many walkers must answer.
	need int
}

// newSetLister starts the walks of set's drives: the first parity+1
// online ones (walkedDrives), and in place of any whose first scan
// fails the next online drives, so that a failing drive costs a scan of
// another rather than the listing. It fails with ErrReadQuorum when
// fewer than listQuorum drives of the set answer (list_quorum.go).
func (e *Engine) newSetLister(ctx context.Context, set *erasureSet, bucket string, opts ListOptions) (*setLister, error) {
	sl := &setLister{e: e, set: set, bucket: bucket, need: listQuorum(set)}
	// One more entry than the page, to know whether the page is the last.
	first := listPage
	if opts.MaxKeys > 0 {
		first = opts.MaxKeys + 1
	}
	walked := walkedDrives(set)
	for i, d := range walked {
		w := newWalker(d, bucket, opts.Prefix, opts.After, opts.Delimiter, first, false)
		if i > 0 {
			w.checkAgainst(sl.walkers[0])
		}
		sl.walkers = append(sl.walkers, w)
	}
	fillAll(ctx, sl.walkers)
	var spare []drive.Drive // online drives not walked yet, in order
	var lastErr error
	for {
		failed := 0
		live := sl.walkers[:0:0]
		for _, w := range sl.walkers {
			if w.err != nil {
				failed++
				lastErr = w.err
				continue
			}
			live = append(live, w)
		}
		sl.walkers = live
		if failed == 0 || ctx.Err() != nil {
			break
		}
		if spare == nil {
			// The online drives after those walkedDrives took.
			spare = []drive.Drive{}
			online := 0
			for _, d := range set.drives {
				if reportsOffline(d) {
					continue
				}
				if online++; online > len(walked) {
					spare = append(spare, d)
				}
			}
		}
		if len(spare) == 0 {
			break
		}
		var more []*walker
		for ; failed > 0 && len(spare) > 0; failed-- {
			more = append(more, newWalker(spare[0], bucket, opts.Prefix, opts.After, opts.Delimiter, first, false))
			spare = spare[1:]
		}
		fillAll(ctx, more)
		sl.walkers = append(sl.walkers, more...)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(sl.walkers) < sl.need {
		return nil, errListQuorum(set, len(sl.walkers), lastErr)
	}
	sl.heads = make([]*listEntry, len(sl.walkers))
	for i := range sl.walkers {
		sl.advance(ctx, i)
	}
	return sl, nil
}

// dropFailed takes the walkers whose drive failed mid-walk out of the
// merge: the others still meet every write while listQuorum of them
// remain; fewer fail the listing.
func (sl *setLister) dropFailed() error {
	var lastErr error
	j := 0
	for i, w := range sl.walkers {
		if w.err != nil {
			lastErr = w.err
			continue
		}
		sl.walkers[j], sl.heads[j] = w, sl.heads[i]
		j++
	}
	if lastErr == nil {
		return nil
	}
	clear(sl.walkers[j:])
	clear(sl.heads[j:])
	sl.walkers, sl.heads = sl.walkers[:j], sl.heads[:j]
	if j < sl.need {
		return errListQuorum(sl.set, j, lastErr)
	}
	return nil
}

func (sl *setLister) advance(ctx context.Context, i int) {
	sl.heads[i] = sl.walkers[i].next(ctx)
}

// next returns the set's next entry, or nil at the end.
func (sl *setLister) next(ctx context.Context) (*listEntry, *meta.Object, error) {
	for {
		if err := sl.dropFailed(); err != nil {
			return nil, nil, err
		}
		var min *listEntry
		for _, h := range sl.heads {
			if h != nil && (min == nil || h.key < min.key) {
				min = h
			}
		}
		if min == nil {
			if err := sl.dropFailed(); err != nil {
				return nil, nil, err
			}
			return nil, nil, nil
		}
		key, isPrefix := min.key, min.prefix
		var first *meta.Object
		var pending []*meta.Object
		seen, current, differ := 0, 0, false
		for i, h := range sl.heads {
			if h == nil || h.key != key || h.prefix != isPrefix {
				continue
			}
			seen++
			if !isPrefix && sl.walkers[i].verified {
				// Its drive's digest matched the primary's batch: it
				// holds the version walker 0's record (decoded first)
				// holds.
				if first != nil {
					current++
				}
				sl.advance(ctx, i)
				continue
			}
			if !isPrefix {
				// The first record with a current version is decoded in
				// full (it answers the listing); the others, in the
				// common case of one plain version, only far enough to
				// tell whether they hold the same one.
				if first != nil {
					if st, ok, simple, err := meta.PeekCurrent(h.raw); err == nil && simple {
						if ok {
							current++
							differ = differ || !st.Matches(first)
						}
						sl.advance(ctx, i)
						continue
					}
				}
				if r, err := meta.UnmarshalRecord(h.raw); err == nil && r.Current() != nil {
					if first == nil {
						first = r.Current()
					} else {
						differ = differ || !r.Current().SameVersion(first)
					}
					current++
					pending = addPending(pending, r, first)
				}
			}
			sl.advance(ctx, i)
		}
		if isPrefix {
			return &listEntry{key: key, prefix: true, unsure: seen < len(sl.walkers)}, nil, nil
		}
		agreed := seen == len(sl.walkers) && current == seen && !differ
		if agreed && !sl.e.listVerify.Load() {
			return &listEntry{key: key, pending: pending}, first, nil
		}
		st, err := sl.e.readObject(ctx, sl.set, sl.bucket, key)
		stable := false
		if errors.Is(err, ErrReadQuorum) && !mayHideVersion(st, sl.set) {
			// A key a write is changing under the read, or a damaged
			// one? Only the second is left out (list_reread.go, L3).
			st, stable, err = sl.e.rereadUnsettled(ctx, sl.set, sl.bucket, key, st)
		}
		if errors.Is(err, ErrObjectNotFound) {
			continue
		}
		if stable && errors.Is(err, ErrReadQuorum) && !mayHideVersion(st, sl.set) {
			// One damaged key must not fail the whole listing: it is
			// left out (it could not be read anyway, and every drive
			// answered, so it holds no version with quorum) and healed.
			// A key that drives which did not answer could complete a
			// quorum for may be an acknowledged write: its error fails
			// the listing (503), as a GET of it would.
			sl.e.log.Warn("listing skips a key without read quorum", "bucket", sl.bucket, "key", key, "err", err)
			sl.e.jobs.QueueHeal(sl.bucket, key)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		pending = nil
		for _, r := range st.recs {
			pending = addPending(pending, r, st.fi)
		}
		return &listEntry{key: key, pending: pending}, st.fi, nil
	}
}

// keyMerger merges the set listers of a bucket into one stream of keys
// (with their current versions, delete markers included) and common
// prefixes, in byte order.
type keyMerger struct {
	listers []*setLister
	heads   []mergeHead
}

type mergeHead struct {
	ent *listEntry
	m   *meta.Object
}

func (e *Engine) newKeyMerger(ctx context.Context, bucket string, opts ListOptions) (*keyMerger, error) {
	km := &keyMerger{listers: make([]*setLister, len(e.sets)), heads: make([]mergeHead, len(e.sets))}
	for i, s := range e.sets {
		sl, err := e.newSetLister(ctx, s, bucket, opts)
		if err != nil {
			return nil, err
		}
		km.listers[i] = sl
		ent, m, err := km.listers[i].next(ctx)
		if err != nil {
			return nil, err
		}
		km.heads[i] = mergeHead{ent, m}
	}
	return km, nil
}

// sizeHint is how many entries a page of at most max entries will
// likely hold: what the sets' first scans found, so a page's result is
// allocated once at its size.
func (km *keyMerger) sizeHint(max int) int {
	n := 0
	for _, sl := range km.listers {
		if len(sl.walkers) > 0 {
			n += len(sl.walkers[0].batch)
		}
	}
	return min(n, max)
}

// next returns the next key or prefix, or a nil entry at the end.
func (km *keyMerger) next(ctx context.Context) (*listEntry, *meta.Object, error) {
	best := -1
	for i, h := range km.heads {
		if h.ent != nil && (best < 0 || h.ent.key < km.heads[best].ent.key) {
			best = i
		}
	}
	if best < 0 {
		return nil, nil, nil
	}
	h := km.heads[best]
	ent, m, err := km.listers[best].next(ctx)
	if err != nil {
		return nil, nil, err
	}
	km.heads[best] = mergeHead{ent, m}
	// A key is in one set, but a decommission copies it to another pool
	// before removing it from its own: it is named once.
	for i := range km.heads {
		for !h.ent.prefix && km.heads[i].ent != nil && !km.heads[i].ent.prefix && km.heads[i].ent.key == h.ent.key {
			ent, m, err := km.listers[i].next(ctx)
			if err != nil {
				return nil, nil, err
			}
			km.heads[i] = mergeHead{ent, m}
		}
	}
	return h.ent, h.m, nil
}

// commonPrefix is the common prefix key falls under with opts' prefix
// and delimiter ("" for none); a prefix entry is its own.
func commonPrefix(ent *listEntry, opts ListOptions) string {
	if ent.prefix {
		return ent.key
	}
	if opts.Delimiter != "" {
		if i := strings.Index(ent.key[len(opts.Prefix):], opts.Delimiter); i >= 0 {
			return ent.key[:len(opts.Prefix)+i+len(opts.Delimiter)]
		}
	}
	return ""
}

// ListObjects returns one page of keys in byte order. Keys whose current
// version is a delete marker are left out, and so is a common prefix
// under which every key is one.
func (e *Engine) ListObjects(ctx context.Context, bucket string, opts ListOptions) (ListResult, error) {
	info, err := e.BucketInfo(ctx, bucket)
	if err != nil {
		return ListResult{}, err
	}
	if opts.MaxKeys <= 0 || opts.MaxKeys > 1000 {
		opts.MaxKeys = 1000
	}
	if !opts.ReadAhead {
		return e.listPage(ctx, bucket, info, opts)
	}
	opts.ReadAhead = false
	key := aheadKey{bucket: bucket, versioning: info.Versioning, opts: opts}
	marks, fresh := e.changeMarks(bucket)
	var res ListResult
	found := false
	if p := e.ahead.take(key); p != nil {
		if res, found, err = e.ahead.use(ctx, p, marks, fresh); err != nil {
			return ListResult{}, err
		}
	}
	if !found {
		if res, err = e.listPage(ctx, bucket, info, opts); err != nil {
			return ListResult{}, err
		}
	}
	if fresh && res.IsTruncated {
		next := key
		next.opts.After = res.NextAfter
		e.ahead.start(next, func() ([]drive.ChangeMark, bool) { return e.changeMarks(bucket) },
			func(ctx context.Context) (ListResult, error) { return e.listPage(ctx, bucket, info, next.opts) })
	}
	return res, nil
}

// listPage makes one page of ListObjects (opts.MaxKeys set).
func (e *Engine) listPage(ctx context.Context, bucket string, info BucketInfo, opts ListOptions) (ListResult, error) {
	maxKeys := opts.MaxKeys
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	km, err := e.newKeyMerger(ctx, bucket, opts)
	if err != nil {
		return ListResult{}, fmt.Errorf("list %s: %w", bucket, err)
	}
	res := ListResult{Objects: make([]ObjectInfo, 0, km.sizeHint(maxKeys))}
	lastPrefix := ""
	count := 0
	for {
		ent, m, err := km.next(ctx)
		if err != nil {
			return ListResult{}, fmt.Errorf("list %s: %w", bucket, err)
		}
		if ent == nil {
			return res, nil
		}
		cp := commonPrefix(ent, opts)
		if cp != "" && (cp == lastPrefix || cp <= opts.After) {
			continue
		}
		if cp == "" && m.IsDeleteMarker() {
			continue
		}
		if cp != "" && (info.Versioning != "" || ent.unsure) {
			// Drives collapse prefixes without looking at the keys; in a
			// versioned bucket the keys below may all be delete markers,
			// and a prefix some walked drives lack may hold only keys
			// deleted since.
			live, err := e.prefixHasObject(ctx, bucket, cp)
			if err != nil {
				return ListResult{}, fmt.Errorf("list %s: %w", bucket, err)
			}
			if !live {
				lastPrefix = cp
				continue
			}
		}
		if count == maxKeys {
			res.IsTruncated = true
			return res, nil
		}
		count++
		if cp != "" {
			lastPrefix = cp
			res.CommonPrefixes = append(res.CommonPrefixes, cp)
			res.NextAfter = cp
			continue
		}
		res.Objects = append(res.Objects, objectInfo(bucket, ent.key, m))
		res.NextAfter = ent.key
	}
}

// prefixHasObject reports whether some key under prefix has a current
// version that is not a delete marker.
func (e *Engine) prefixHasObject(ctx context.Context, bucket, prefix string) (bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	km, err := e.newKeyMerger(ctx, bucket, ListOptions{Prefix: prefix, MaxKeys: 1}) // most often the first key answers
	if err != nil {
		return false, err
	}
	for {
		ent, m, err := km.next(ctx)
		if err != nil || ent == nil {
			return false, err
		}
		if !m.IsDeleteMarker() {
			return true, nil
		}
	}
}
