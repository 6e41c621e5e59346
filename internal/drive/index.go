package drive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/zeebo/xxh3"
)

// The index is one pebble keyspace; a key is its Table byte followed by
// the caller's key, so each table is a contiguous range and a scan of a
// table and prefix is a bounded iterator.
//
// Errors: a missing key is ErrNotFound; ENOSPC is ErrDriveFull;
// corruption (a checksum mismatch in an sstable, a damaged WAL or
// MANIFEST, a missing index beside a format record) matches both
// ErrFileCorrupt and ErrDriveFaulty, since the drive can no longer be
// trusted to answer for its keys; anything else is ErrDriveFaulty.
//
// Pebble stops a process on errors it cannot continue from (a WAL that
// cannot be written or rotated, a MANIFEST that cannot be synced): it
// calls its logger's Fatalf, whose default is os.Exit, or panics. One
// failed drive must not stop a server, so this package's logger panics
// instead when the call came through the drive's API (runGuarded
// recovers it into an error) and ends only the failing background
// goroutine otherwise. Either way the drive is marked broken: its index
// calls fail with ErrDriveFaulty, which takes the drive offline (Health),
// until the index is reopened: the health probe's ReadFormat closes the
// stopped instance and opens the index again (reopenBroken, in
// indexreopen.go), so a drive whose index stopped on ENOSPC comes back
// by itself once space is free, without a restart of the process.

// IndexCache is the memory the indexes of a process's drives share, so
// it is bounded together: pebble's block cache and a row cache of the
// point reads a GET makes (see rowCache), a quarter of the size.
type IndexCache struct {
	mu     sync.Mutex
	c      *pebble.Cache
	rows   *rowCache
	closed bool
}

// NewIndexCache returns a cache of the given size in bytes.
func NewIndexCache(bytes int64) *IndexCache {
	rows := bytes / 4
	return &IndexCache{c: pebble.NewCache(bytes - rows), rows: newRowCache(rows)}
}

// IndexCacheStats is what the shared index cache holds and how often it
// answered: pebble's block cache and the row cache of point reads.
type IndexCacheStats struct {
	BlockHits, BlockMisses    uint64
	BlockBytes, BlockCapacity int64
	RowHits, RowMisses        uint64
	RowBytes, RowCapacity     int64
}

// Stats reports the cache's counters since it was made and what it holds
// now (the block cache's only while it is open; nothing for a nil cache).
func (c *IndexCache) Stats() IndexCacheStats {
	if c == nil {
		return IndexCacheStats{}
	}
	st := IndexCacheStats{RowHits: c.rows.hits.Load(), RowMisses: c.rows.misses.Load(),
		RowBytes: c.rows.size(), RowCapacity: c.rows.perShard * rowShards}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		m := c.c.Metrics()
		st.BlockHits, st.BlockMisses = uint64(m.Hits), uint64(m.Misses)
		st.BlockBytes, st.BlockCapacity = m.Size, c.c.MaxSize()
	}
	return st
}

// Close drops the creator's reference: drives still open keep the
// cache until they close; drives opening an index later get a private
// cache instead.
func (c *IndexCache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		c.c.Unref()
	}
}

// ref returns the block cache with a reference taken and the row cache,
// or nils once closed.
func (c *IndexCache) ref() (*pebble.Cache, *rowCache) {
	if c == nil {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil
	}
	c.c.Ref()
	return c.c, c.rows
}

// privateCacheSize is the block cache of a drive given no IndexCache.
const privateCacheSize = 8 << 20

// index is one open pebble instance of a drive.
type index struct {
	root string
	db   *pebble.DB
	// broken is set when pebble hit a fatal error (its commit pipeline
	// or MANIFEST is then unusable): every call fails with it until the
	// drive is reopened.
	broken atomic.Pointer[error]
	// shared group-commits the WAL syncs with other drives on the same
	// filesystem; nil when the drive syncs alone.
	shared *fsSync
	// readOnly is set when the index was opened read-only because its
	// drive was full (indexfull.go); nil when open for writes.
	readOnly *readOnlyState
	// full is set when the index was opened for writes on a full drive
	// by releasing its reserve: it takes only deletions until the
	// reserve is back (indexreserve.go).
	full *fullState
	// fs and memtable are what it was opened with (reopenWhenSpace).
	fs       vfs.FS
	memtable uint64
	// rows caches point reads of this instance as owner; nil without
	// a shared IndexCache.
	rows  *rowCache
	owner uint32
	// changes counts the commits that touched each bucket (ChangeCounter).
	changes bucketChanges
}

// openIndex opens (or, unless mustExist, creates) the pebble index.
func (d *Local) openIndex(mustExist bool) (*index, error) {
	cache, rows := d.opts.Cache.ref()
	if cache == nil {
		cache = pebble.NewCache(privateCacheSize)
	}
	// The DB takes its own reference.
	defer cache.Unref()
	idx := &index{root: d.root, rows: rows}
	if rows != nil {
		idx.owner = rows.owner()
	}
	if !d.opts.NoSync {
		shared, err := d.opts.SharedSync.join(d.root)
		if err != nil {
			return nil, d.indexError("open", err)
		}
		idx.shared = shared
	}
	lg := &indexLogger{idx: idx}
	opts := &pebble.Options{
		Cache:                       cache,
		MemTableSize:                4 << 20,
		MemTableStopWritesThreshold: 4,
		FormatMajorVersion:          pebble.FormatNewest,
		ErrorIfNotExists:            mustExist,
		Logger:                      lg,
		EventListener: &pebble.EventListener{
			BackgroundError: func(err error) { lg.Errorf("background error: %v", err) },
			// The default makes corruption fatal; the read that found it
			// already fails with it.
			DataCorruption: func(info pebble.DataCorruptionInfo) {
				lg.Errorf("data corruption in %s: %s", info.Path, info.Details.Error())
			},
		},
	}
	// A bloom filter (10 bits per key, about 1 % false positives) in the
	// tables of every level but the last: a Get of a key the index does
	// not hold, which every PUT of a new key makes on every drive (its
	// record read, then its commit's condition), skips the tables above
	// the last level that cannot hold the key instead of searching each
	// one's index and data blocks. Pebble's Get never reads the last
	// level's filters (they would be most of the filter bytes), so that
	// level is written without them.
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	opts.Levels[len(opts.Levels)-1].FilterPolicy = pebble.NoFilterPolicy
	base := vfs.Default
	if d.opts.indexFS != nil {
		base = d.opts.indexFS
	}
	opts.FS = base
	if idx.shared != nil {
		opts.FS = walSyncFS{FS: base, g: idx.shared}
	}
	idx.fs, idx.memtable = opts.FS, uint64(opts.MemTableSize)
	if mustExist {
		// An existing index on a drive without the space its WAL's
		// replay needs opens read-only: opened for writes, pebble's
		// Open would retry the flush for ever (indexfull.go).
		full, free, need := tooFullToWrite(opts.FS, d.indexDir, idx.memtable)
		if full && d.releaseReserve(free, need) {
			if full, free, need = tooFullToWrite(opts.FS, d.indexDir, idx.memtable); !full {
				fmt.Fprintf(os.Stderr, "shardstore: drive %s: index: the drive is full: released its reserve to open the index for deletions (%d bytes free, %d needed); writes that add data fail as a full drive's until space is free\n", d.root, free, need)
				idx.full = &fullState{readOnlyState: readOnlyState{done: make(chan struct{})}}
				idx.full.deletesOnly.Store(true)
			}
		}
		if full {
			fmt.Fprintf(os.Stderr, "shardstore: drive %s: index: opening it read-only: %d bytes free, %d needed to open it for writes; writes to this drive fail as a full drive's until space is free\n", d.root, free, need)
			opts.ReadOnly = true
			idx.readOnly = &readOnlyState{done: make(chan struct{})}
		}
	}
	err := runGuarded(func() (err error) {
		idx.db, err = pebble.Open(d.indexDir, opts)
		return err
	})
	if err != nil {
		idx.leaveShared()
		if errors.Is(err, pebble.ErrDBDoesNotExist) {
			return nil, fmt.Errorf("drive %s: index %s is missing although the drive has a format record: %w (%w)",
				d.root, d.indexDir, ErrFileCorrupt, ErrDriveFaulty)
		}
		return nil, d.indexError("open", err)
	}
	if idx.readOnly == nil && idx.full == nil {
		d.ensureReserve(idx)
	}
	return idx, nil
}

// close closes the pebble instance; after a fatal error, on the side,
// since pebble's state is then undefined and Close may block or panic.
func (idx *index) close() error {
	idx.readOnly.stop()
	idx.full.stopFull()
	if idx.broken.Load() != nil {
		go func() {
			_ = runGuarded(idx.db.Close)
			idx.leaveShared()
		}()
		return nil
	}
	err := runGuarded(idx.db.Close)
	idx.leaveShared()
	return err
}

// sharedSync is the group the drive's index syncs with, or nil.
func (d *Local) sharedSync() *fsSync {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.idx == nil {
		return nil
	}
	return d.idx.shared
}

func (idx *index) leaveShared() {
	if idx.shared != nil {
		idx.shared.leave()
	}
}

// checkIndexEmpty refuses an index with records on a drive about to get
// its first format record: those records belong to a format that is gone.
func (d *Local) checkIndexEmpty(db *pebble.DB) error {
	var found []byte
	err := runGuarded(func() error {
		it, err := db.NewIter(nil)
		if err != nil {
			return err
		}
		if it.First() {
			found = append([]byte(nil), it.Key()...)
		}
		return it.Close()
	})
	if err != nil {
		return d.indexError("check", err)
	}
	if found != nil {
		return fmt.Errorf("drive %s: %w: its index holds records (table %q, key %q) but the drive has no format record; remove %s to reuse the drive",
			d.root, ErrNotBlank, found[0], found[1:], d.sys)
	}
	return nil
}

// indexError maps a pebble error into the drive's vocabulary.
func (d *Local) indexError(op string, err error) error {
	if err == nil {
		return nil
	}
	// Pebble's joined errors print detail carriers on later lines.
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	switch {
	case pebble.IsCorruptionError(err):
		return fmt.Errorf("drive %s: index %s: %w (%w): %s", d.root, op, ErrFileCorrupt, ErrDriveFaulty, msg)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return fmt.Errorf("drive %s: index %s: %w: %s", d.root, op, ErrDriveFull, msg)
	case errors.Is(err, errDeletesOnly):
		return fmt.Errorf("drive %s: index %s: %w: %w", d.root, op, ErrDriveFull, errDeletesOnly)
	case isReadOnly(err):
		return fmt.Errorf("drive %s: index %s: %w: %w", d.root, op, ErrDriveFull, errIndexReadOnly)
	}
	return fmt.Errorf("drive %s: index %s: %w: %s", d.root, op, ErrDriveFaulty, msg)
}

// setBroken records the first fatal index error.
func (idx *index) setBroken(cause error) {
	var err error
	// Fatalf gives a message only: look for ENOSPC's text too.
	if errors.Is(cause, syscall.ENOSPC) || errors.Is(cause, syscall.EDQUOT) ||
		strings.Contains(cause.Error(), syscall.ENOSPC.Error()) {
		err = fmt.Errorf("drive %s: index stopped after a fatal error (reopened once space is free): %w (%w): %v", idx.root, ErrDriveFaulty, ErrDriveFull, cause)
	} else {
		err = fmt.Errorf("drive %s: index stopped after a fatal error (reopened when the drive answers again): %w: %v", idx.root, ErrDriveFaulty, cause)
	}
	idx.broken.CompareAndSwap(nil, &err)
}

// withIndex runs fn on the open index, holding off Close, and maps what
// it returns. force makes it check that the drive directory is still
// the one opened (see checkIdentity) whatever the last check said.
func (d *Local) withIndex(op string, force bool, fn func(db *pebble.DB) error) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if err := d.readyLocked(force); err != nil {
		return err
	}
	idx := d.idx
	if idx == nil {
		return d.indexErr
	}
	if b := idx.broken.Load(); b != nil {
		return *b
	}
	err := runGuarded(func() error { return fn(idx.db) })
	var p *panicError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &p):
		idx.setBroken(p)
		return *idx.broken.Load()
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrInvalidArgument), errors.Is(err, ErrConflict):
		return err
	}
	return d.indexError(op, err)
}

// panicError is a panic (or a Fatalf) inside pebble, recovered.
type panicError struct{ v any }

func (p *panicError) Error() string { return fmt.Sprintf("pebble: %v", p.v) }

func (p *panicError) Unwrap() error {
	if err, ok := p.v.(error); ok {
		return err
	}
	return nil
}

// fatalPanic is what indexLogger.Fatalf panics with.
type fatalPanic struct{ msg string }

func (f fatalPanic) String() string { return f.msg }

// runGuarded runs fn, turning a panic into a *panicError. indexLogger
// looks for this frame on the stack to tell calls it can unwind from
// pebble's background goroutines.
func runGuarded(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{v: r}
		}
	}()
	return fn()
}

var runGuardedName = runtime.FuncForPC(reflect.ValueOf(runGuarded).Pointer()).Name()

// onGuardedGoroutine reports whether runGuarded is on the stack.
func onGuardedGoroutine() bool {
	pcs := make([]uintptr, 4096)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function == runGuardedName {
			return true
		}
		if !more {
			return false
		}
	}
}

// indexLogger keeps pebble quiet: Info goes nowhere (pebble prints
// "Found 0 WALs" and the like on every open), errors go to stderr at
// most once every few seconds, and Fatalf breaks the drive instead of
// the process (see the top of this file).
type indexLogger struct {
	idx        *index
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

const indexLogInterval = 10 * time.Second

func (l *indexLogger) Infof(format string, args ...any) {}

func (l *indexLogger) Errorf(format string, args ...any) {
	l.mu.Lock()
	now := time.Now()
	if !l.last.IsZero() && now.Sub(l.last) < indexLogInterval {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	l.last = now
	n := l.suppressed
	l.suppressed = 0
	l.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if n > 0 {
		msg += fmt.Sprintf(" (%d similar messages suppressed)", n)
	}
	fmt.Fprintf(os.Stderr, "shardstore: drive %s: index: %s\n", l.idx.root, msg)
}

func (l *indexLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.idx.setBroken(errors.New(msg))
	fmt.Fprintf(os.Stderr, "shardstore: drive %s: index: fatal: %s\n", l.idx.root, msg)
	if onGuardedGoroutine() {
		panic(fatalPanic{msg})
	}
	// A pebble background goroutine (flush, compaction): end it alone.
	runtime.Goexit()
}

// tableKey appends t+key to buf.
func tableKey(buf []byte, t Table, key string) []byte {
	buf = append(buf[:0], byte(t))
	return append(buf, key...)
}

// successor is the shortest key greater than every key starting with
// p, or nil when there is none (p empty or all 0xff).
func successor(p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xff {
			s := append([]byte(nil), p[:i+1]...)
			s[i]++
			return s
		}
	}
	return nil
}

// Get returns a copy of key's value in t, or ErrNotFound.
func (d *Local) Get(ctx context.Context, t Table, key string) ([]byte, error) {
	var out []byte
	err := d.withIndex("get", false, func(db *pebble.DB) error {
		// d.mu is held: d.idx is the instance db belongs to.
		rows := d.idx.rows
		var rk []byte
		var removals uint64
		if rows != nil && cachedTable(t) {
			var hit bool
			rk = rowKey(make([]byte, 0, 5+len(key)), d.idx.owner, t, key)
			if out, hit, removals = rows.get(rk); hit {
				return nil
			}
		}
		v, closer, err := db.Get(tableKey(make([]byte, 0, 1+len(key)), t, key))
		if errors.Is(err, pebble.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		out = make([]byte, len(v))
		copy(out, v)
		if rk != nil {
			rows.put(rk, out, removals)
		}
		return closer.Close()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetCached implements MemoryReader: key's value in t from the row
// cache, when the drive is open, formatted and its identity was checked
// lately (no I/O here), and nobody holds the drive exclusively.
func (d *Local) GetCached(t Table, key string) ([]byte, bool) {
	if !cachedTable(t) || !d.mu.TryRLock() {
		return nil, false
	}
	defer d.mu.RUnlock()
	idx := d.idx
	if d.closed || !d.formatted || idx == nil || idx.rows == nil || idx.broken.Load() != nil ||
		!d.verifiedLately(time.Now().UnixNano()) {
		return nil, false
	}
	return idx.rows.peek(rowKey(make([]byte, 0, 5+len(key)), idx.owner, t, key))
}

// Changes implements ChangeCounter while the index is open and usable
// (and nobody holds the drive exclusively: no waiting here).
func (d *Local) Changes(bucket string) (ChangeMark, bool) {
	if !d.mu.TryRLock() {
		return ChangeMark{}, false
	}
	defer d.mu.RUnlock()
	idx := d.idx
	if d.closed || !d.formatted || idx == nil || idx.broken.Load() != nil {
		return ChangeMark{}, false
	}
	return idx.changes.mark(bucket), true
}

// Apply commits b as one pebble batch, synced (pebble.Sync) unless b is
// Lazy or the drive NoSync: a lazy batch is in the WAL, ordered, and
// the next synced commit makes it durable too. Concurrent Applies share WAL fsyncs: pebble's commit
// pipeline syncs every batch queued behind the one in flight at once.
func (d *Local) Apply(ctx context.Context, b *Batch) error {
	if b == nil || len(b.Changes) == 0 {
		return nil
	}
	if len(b.Conds) > 0 {
		unlock := d.conds.lock(b.Conds)
		defer unlock()
	}
	return d.withIndex("apply", true, func(db *pebble.DB) error {
		// Whether or not the commit succeeds, the cached values of its
		// keys may be stale after it.
		if st := d.idx.full; st != nil && st.deletesOnly.Load() && addsData(b) {
			return errDeletesOnly
		}
		defer d.idx.forget(b)
		defer d.idx.changes.committed(b)
		for _, c := range b.Conds {
			if err := checkCond(db, c); err != nil {
				return err
			}
		}
		pb := db.NewBatch()
		defer pb.Close()
		var k []byte
		for _, c := range b.Changes {
			k = tableKey(k, c.Table, c.Key)
			var err error
			if c.Delete {
				err = pb.Delete(k, nil)
			} else {
				err = pb.Set(k, c.Value, nil)
			}
			if err != nil {
				return err
			}
		}
		wo := pebble.Sync
		if b.Lazy || d.opts.NoSync {
			wo = pebble.NoSync
		}
		return pb.Commit(wo)
	})
}

// forget drops b's keys from the row cache.
func (idx *index) forget(b *Batch) {
	if idx.rows == nil {
		return
	}
	var k []byte
	for _, c := range b.Changes {
		if cachedTable(c.Table) {
			k = rowKey(k, idx.owner, c.Table, c.Key)
			idx.rows.invalidate(k)
		}
	}
}

// checkCond reports ErrConflict when c does not hold on db.
func checkCond(db *pebble.DB, c Cond) error {
	v, closer, err := db.Get(tableKey(make([]byte, 0, 1+len(c.Key)), c.Table, c.Key))
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		if c.Absent {
			return nil
		}
		return fmt.Errorf("%w: %c %q is gone", ErrConflict, c.Table, c.Key)
	case err != nil:
		return err
	}
	same := !c.Absent && ValueSum(v) == c.Sum
	if err := closer.Close(); err != nil {
		return err
	}
	if !same {
		return fmt.Errorf("%w: %c %q", ErrConflict, c.Table, c.Key)
	}
	return nil
}

// condLocks serializes the conditional batches of one drive that touch
// the same entries, so a condition checked still holds when its batch
// commits. A batch holds its stripes through its sync; batches on other
// keys take other stripes and still share the sync (group commit).
type condLocks struct {
	stripes [condStripes]sync.Mutex
}

// condStripes is many enough that 16 concurrent commits on one drive
// rarely share a stripe (about 3% of the time), so they keep sharing
// one sync.
const condStripes = 4096

// lock takes the stripes of conds in order (no deadlock between two
// batches with several conditions) and returns their release.
func (l *condLocks) lock(conds []Cond) func() {
	var idx [4]uint16
	ids := idx[:0]
	for _, c := range conds {
		s := uint16((xxh3.HashString(c.Key) ^ uint64(c.Table)) % condStripes)
		if !slices.Contains(ids, s) {
			ids = append(ids, s)
		}
	}
	slices.Sort(ids)
	for _, s := range ids {
		l.stripes[s].Lock()
	}
	return func() {
		for _, s := range ids {
			l.stripes[s].Unlock()
		}
	}
}

// Scan returns the entries of t that q selects, in key order. With a
// Delimiter, the keys sharing a common prefix are reported once and
// skipped with one seek, so a listing costs one seek per common prefix,
// not one step per key below it.
func (d *Local) Scan(ctx context.Context, t Table, q ScanQuery) ([]Entry, error) {
	if q.Limit < 0 {
		return nil, fmt.Errorf("drive %s: scan limit %d: %w", d.root, q.Limit, ErrInvalidArgument)
	}
	var out []Entry
	err := d.withIndex("scan", false, func(db *pebble.DB) error {
		out = nil
		lower := tableKey(nil, t, q.Prefix)
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: successor(lower)})
		if err != nil {
			return err
		}
		out, err = scan(it, lower, q)
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scan walks it (bounded to lower = table+prefix) as q says.
func scan(it *pebble.Iterator, lower []byte, q ScanQuery) ([]Entry, error) {
	var out []Entry
	var dg *scanDigester
	if q.Digest {
		dg = &scanDigester{}
	} else if q.Limit > 0 {
		// Sized for a full answer (up to a listing page): a scan that
		// fills its limit, as listings' do, then allocates once.
		out = make([]Entry, 0, min(q.Limit, 1024))
	}
	n := 0
	// emit adds an entry (k with the table byte, v nil for a common
	// prefix) to the result or to the digest.
	emit := func(k, v []byte, commonPrefix bool) {
		n++
		if dg != nil {
			digestEntry(dg, k[1:], commonPrefix, v)
			return
		}
		e := Entry{Key: string(k[1:]), CommonPrefix: commonPrefix}
		if v != nil {
			e.Value = make([]byte, len(v))
			copy(e.Value, v)
		}
		out = append(out, e)
	}
	delim := []byte(q.Delimiter)
	var after []byte
	start := lower
	if q.After != "" {
		after = tableKey(nil, Table(lower[0]), q.After)
		if bytes.Compare(after, lower) >= 0 {
			start = after
		}
	}
	valid := it.SeekGE(start)
	if valid && after != nil && bytes.Equal(it.Key(), after) {
		valid = it.Next()
	}
	for valid {
		if q.Limit > 0 && n >= q.Limit {
			break
		}
		k := it.Key()
		if len(delim) > 0 {
			if i := bytes.Index(k[len(lower):], delim); i >= 0 {
				cp := k[:len(lower)+i+len(delim)]
				// A common prefix at or before After was reported by the
				// page that ended there (S3 semantics): skip it.
				if after == nil || bytes.Compare(cp, after) > 0 {
					emit(cp, nil, true)
				}
				next := successor(cp)
				if next == nil {
					break
				}
				valid = it.SeekGE(next)
				continue
			}
		}
		var v []byte
		if !q.KeysOnly || q.Digest {
			var err error
			if v, err = it.ValueAndErr(); err != nil {
				return nil, err
			}
			if v == nil {
				v = []byte{}
			}
		}
		emit(k, v, false)
		valid = it.Next()
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	if dg != nil {
		return []Entry{dg.digest().entry()}, nil
	}
	return out, nil
}

// Flush writes the index's memtable to an sstable (benchmarks, tests).
func (d *Local) Flush() error {
	return d.withIndex("flush", false, func(db *pebble.DB) error { return db.Flush() })
}

// IndexMetrics is what the index has written, for write amplification:
// (WALBytesWritten + FlushBytes + CompactionBytes) / WALBytesIn.
type IndexMetrics struct {
	// WALBytesIn is the logical bytes committed; WALBytesWritten what
	// the WAL wrote for them (record framing, padding of synced blocks).
	WALBytesIn, WALBytesWritten uint64
	// FlushBytes went from memtables to sstables; CompactionBytes were
	// rewritten by compactions.
	FlushBytes, CompactionBytes uint64
	// Pebble is the full set, for anything else.
	Pebble *pebble.Metrics
}

// WriteAmp is the bytes written to the device per byte committed.
func (m IndexMetrics) WriteAmp() float64 {
	if m.WALBytesIn == 0 {
		return 0
	}
	return float64(m.WALBytesWritten+m.FlushBytes+m.CompactionBytes) / float64(m.WALBytesIn)
}

// IndexMetrics reports the index's write volume.
func (d *Local) IndexMetrics() (IndexMetrics, error) {
	var m IndexMetrics
	err := d.withIndex("metrics", false, func(db *pebble.DB) error {
		pm := db.Metrics()
		m.Pebble = pm
		m.WALBytesIn, m.WALBytesWritten = pm.WAL.BytesIn, pm.WAL.BytesWritten
		for i := range pm.Levels {
			m.FlushBytes += pm.Levels[i].TableBytesFlushed + pm.Levels[i].BlobBytesFlushed
			m.CompactionBytes += pm.Levels[i].TableBytesCompacted + pm.Levels[i].BlobBytesCompacted
		}
		return nil
	})
	return m, err
}
