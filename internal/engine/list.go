package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
)

// Listing walks the bucket's directory tree on parity+1 drives of each set
// in byte order and merges the streams. Any object written with quorum is
// on at least one of those drives, and a deleted one cannot remain on all
// of them, so a key the walked drives agree on is answered from their
// metadata and only disagreements pay for a full quorum read.

// listEntry is one item of a drive walk: an object with its raw metadata,
// or (when the delimiter is "/") a common prefix.
type listEntry struct {
	key    string
	prefix bool
	raw    []byte
}

// walker produces a drive's entries in key order.
type walker struct {
	d      drive.Drive
	bucket string
	prefix string
	after  string
	delim  bool // collapse subtrees below the prefix into common prefixes
	out    chan listEntry
	err    error
}

func (w *walker) run(ctx context.Context) {
	defer close(w.out)
	start := w.prefix[:strings.LastIndex(w.prefix, "/")+1]
	if start != "" && start == w.prefix && start > w.after {
		if raw, err := w.d.ReadFile(ctx, w.bucket, objectMetaPath(start)); err == nil {
			if !w.emit(ctx, listEntry{key: start, raw: raw}) {
				return
			}
		}
	}
	if err := w.walkDir(ctx, start); err != nil && !errors.Is(err, drive.ErrFileNotFound) && !errors.Is(err, context.Canceled) {
		w.err = err
	}
}

func (w *walker) emit(ctx context.Context, e listEntry) bool {
	select {
	case w.out <- e:
		return true
	case <-ctx.Done():
		return false
	}
}

type walkItem struct {
	sortKey string
	child   string
	sub     bool
}

func hasName(names []string, n string) bool {
	i := sort.SearchStrings(names, n)
	return i < len(names) && names[i] == n
}

// walkDir visits the keys under the key prefix dk ("" or ending in "/").
// Every key is a directory; one listing of it says whether it holds an
// object (.ss.meta), a folder object (.ss.dirmeta) and deeper keys, so
// each key costs one directory read plus one metadata read.
func (w *walker) walkDir(ctx context.Context, dk string) error {
	names, err := w.d.ListDir(ctx, w.bucket, strings.TrimSuffix(dk, "/"))
	if err != nil {
		return err
	}
	items := make([]walkItem, 0, 2*len(names))
	for _, n := range names {
		if !strings.HasSuffix(n, "/") || strings.HasPrefix(n, reservedPrefix) {
			continue
		}
		c := strings.TrimSuffix(n, "/")
		items = append(items, walkItem{dk + c, c, false}, walkItem{dk + c + "/", c, true})
	}
	// "a" < "a-b" < "a/": objects and subtrees interleave in byte order.
	sort.Slice(items, func(i, j int) bool { return items[i].sortKey < items[j].sortKey })
	listed := map[string][]string{}
	list := func(c string) []string {
		if l, ok := listed[c]; ok {
			return l
		}
		l, err := w.d.ListDir(ctx, w.bucket, dk+c)
		if err != nil {
			l = nil
		}
		listed[c] = l
		return l
	}
	for _, it := range items {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s := it.sortKey
		if !it.sub {
			if s <= w.after || !strings.HasPrefix(s, w.prefix) || !hasName(list(it.child), metaFile) {
				continue
			}
			raw, err := w.d.ReadFile(ctx, w.bucket, s+"/"+metaFile)
			if errors.Is(err, drive.ErrFileNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if !w.emit(ctx, listEntry{key: s, raw: raw}) {
				return ctx.Err()
			}
			continue
		}
		if !strings.HasPrefix(w.prefix, s) && !strings.HasPrefix(s, w.prefix) {
			continue
		}
		if w.after > s && !strings.HasPrefix(w.after, s) {
			continue // the whole subtree sorts before after
		}
		names := list(it.child)
		delete(listed, it.child)
		if w.delim && len(s) > len(w.prefix) {
			if s > w.after && w.nonEmpty(ctx, s, names) && !w.emit(ctx, listEntry{key: s, prefix: true}) {
				return ctx.Err()
			}
			continue
		}
		if s > w.after && strings.HasPrefix(s, w.prefix) && hasName(names, dirMetaFile) {
			if raw, err := w.d.ReadFile(ctx, w.bucket, objectMetaPath(s)); err == nil {
				if !w.emit(ctx, listEntry{key: s, raw: raw}) {
					return ctx.Err()
				}
			}
		}
		if !hasSubdir(names) {
			continue
		}
		if err := w.walkDir(ctx, s); err != nil && !errors.Is(err, drive.ErrFileNotFound) {
			return err
		}
	}
	return nil
}

// hasSubdir reports whether a listing holds a key directory.
func hasSubdir(names []string) bool {
	for _, n := range names {
		if strings.HasSuffix(n, "/") && !strings.HasPrefix(n, reservedPrefix) {
			return true
		}
	}
	return false
}

// nonEmpty reports whether the subtree at key prefix s (listing names)
// holds any object: empty directories can linger after a crash mid-delete.
func (w *walker) nonEmpty(ctx context.Context, s string, names []string) bool {
	if hasName(names, dirMetaFile) {
		return true
	}
	for _, n := range names {
		if !strings.HasSuffix(n, "/") || strings.HasPrefix(n, reservedPrefix) {
			continue
		}
		sub, err := w.d.ListDir(ctx, w.bucket, s+strings.TrimSuffix(n, "/"))
		if err != nil {
			continue
		}
		if hasName(sub, metaFile) || w.nonEmpty(ctx, s+n, sub) {
			return true
		}
	}
	return false
}

// setLister merges the walks of one set's drives, resolving
// disagreements with a quorum read.
type setLister struct {
	e       *Engine
	set     *erasureSet
	bucket  string
	walkers []*walker
	heads   []*listEntry
}

func (e *Engine) newSetLister(ctx context.Context, set *erasureSet, bucket string, opts ListOptions) *setLister {
	sl := &setLister{e: e, set: set, bucket: bucket}
	want := min(len(set.drives), set.parity+1)
	for _, d := range set.drives {
		if len(sl.walkers) == want {
			break
		}
		if _, err := d.StatVol(ctx, bucket); err != nil {
			continue
		}
		w := &walker{d: d, bucket: bucket, prefix: opts.Prefix, after: opts.After,
			delim: opts.Delimiter == "/", out: make(chan listEntry, 64)}
		go w.run(ctx)
		sl.walkers = append(sl.walkers, w)
	}
	sl.heads = make([]*listEntry, len(sl.walkers))
	for i := range sl.walkers {
		sl.advance(i)
	}
	return sl
}

func (sl *setLister) advance(i int) {
	if e, ok := <-sl.walkers[i].out; ok {
		sl.heads[i] = &e
	} else {
		sl.heads[i] = nil
	}
}

// next returns the set's next entry, or nil at the end.
func (sl *setLister) next(ctx context.Context) (*listEntry, *meta.Object, error) {
	for {
		var min *listEntry
		for _, h := range sl.heads {
			if h != nil && (min == nil || h.key < min.key) {
				min = h
			}
		}
		if min == nil {
			for _, w := range sl.walkers {
				if w.err != nil {
					return nil, nil, w.err
				}
			}
			return nil, nil, nil
		}
		key, isPrefix := min.key, min.prefix
		var metas []*meta.Object
		seen := 0
		for i, h := range sl.heads {
			if h != nil && h.key == key && h.prefix == isPrefix {
				seen++
				if !isPrefix {
					m, err := meta.Unmarshal(h.raw)
					if err == nil {
						metas = append(metas, m)
					}
				}
				sl.advance(i)
			}
		}
		if isPrefix {
			return &listEntry{key: key, prefix: true}, nil, nil
		}
		agreed := seen == len(sl.walkers) && len(metas) == seen
		for _, m := range metas {
			if !m.SameVersion(metas[0]) {
				agreed = false
			}
		}
		if agreed && !sl.e.listVerify.Load() {
			return &listEntry{key: key}, metas[0], nil
		}
		st, err := sl.e.readObject(ctx, sl.set, sl.bucket, key)
		if errors.Is(err, ErrObjectNotFound) {
			continue
		}
		if errors.Is(err, ErrReadQuorum) {
			// One damaged key must not fail the whole listing: it is
			// left out (it could not be read anyway) and healed.
			sl.e.log.Warn("listing skips a key without read quorum", "bucket", sl.bucket, "key", key, "err", err)
			sl.e.heal.add(sl.bucket, key)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		return &listEntry{key: key}, st.fi, nil
	}
}

// ListObjects returns one page of keys in byte order.
func (e *Engine) ListObjects(ctx context.Context, bucket string, opts ListOptions) (ListResult, error) {
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return ListResult{}, err
	}
	maxKeys := opts.MaxKeys
	if maxKeys <= 0 || maxKeys > 1000 {
		maxKeys = 1000
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	listers := make([]*setLister, len(e.sets))
	type head struct {
		ent *listEntry
		m   *meta.Object
	}
	heads := make([]head, len(e.sets))
	for i, s := range e.sets {
		listers[i] = e.newSetLister(ctx, s, bucket, opts)
		ent, m, err := listers[i].next(ctx)
		if err != nil {
			return ListResult{}, fmt.Errorf("list %s: %w", bucket, err)
		}
		heads[i] = head{ent, m}
	}
	var res ListResult
	lastPrefix := ""
	count := 0
	for {
		best := -1
		for i, h := range heads {
			if h.ent != nil && (best < 0 || h.ent.key < heads[best].ent.key) {
				best = i
			}
		}
		if best < 0 {
			return res, nil
		}
		h := heads[best]
		ent, m, err := listers[best].next(ctx)
		if err != nil {
			return ListResult{}, fmt.Errorf("list %s: %w", bucket, err)
		}
		heads[best] = head{ent, m}

		key := h.ent.key
		cp := ""
		if h.ent.prefix {
			cp = key
		} else if opts.Delimiter != "" {
			if i := strings.Index(key[len(opts.Prefix):], opts.Delimiter); i >= 0 {
				cp = key[:len(opts.Prefix)+i+len(opts.Delimiter)]
			}
		}
		if cp != "" && (cp == lastPrefix || cp <= opts.After) {
			continue
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
		res.Objects = append(res.Objects, objectInfo(bucket, key, h.m))
		res.NextAfter = key
	}
}
