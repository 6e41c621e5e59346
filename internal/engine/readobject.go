package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/quorum"
)

// objectState is an object as read from a set: the version a quorum of
// drives agrees on, and each drive's record of it (nil where the drive is
// missing, stale or corrupt).
type objectState struct {
	fi    *meta.Object
	metas []*meta.Object
	errs  []error
	// fromPrev marks drives whose record of fi is their previous version
	// (an interrupted commit left another current version there).
	fromPrev []bool
	// recs and raws are each drive's whole record as read (nil where the
	// drive has none or could not be read), and readErrs the errors of
	// those reads, for commits and rollbacks.
	recs     []*meta.Record
	raws     [][]byte
	readErrs []error
	// vkey is set when fi is a noncurrent version: its versions-table
	// key; vkeys[p] is where drive p holds it ("" when only a pending
	// copy in the current record was found there).
	vkey  string
	vkeys []string
	// vraws[p] is drive p's versions-table entry at vkeys[p] as read.
	vraws [][]byte
}

// isPrev reports whether drive p's record of the version is its previous one.
func (st *objectState) isPrev(p int) bool { return st.fromPrev != nil && st.fromPrev[p] }

// agreeOn makes st the version q settled on: fi, each drive's record of
// it (metas), which of those are previous records, and quorum.ErrStale
// for the drives that hold another version. Other drives keep their
// read's error.
func (st *objectState) agreeOn(q quorum.Result) {
	st.fi, st.metas = q.Version, q.Held
	if q.FromPrev {
		st.fromPrev = make([]bool, len(q.Drives))
	}
	for p, s := range q.Drives {
		switch s {
		case quorum.Holds:
			st.errs[p] = nil
		case quorum.HoldsPrev:
			st.errs[p], st.fromPrev[p] = nil, true
		case quorum.Stale:
			st.errs[p] = quorum.ErrStale
		}
	}
}

// readRecords reads every drive's record of key. With withData, a drive
// whose current version is an inline object and holds one of its data
// shards also fetches that shard in the same pass (GET of a small
// object: one round over the drives instead of two).
//
// Drives known to lag are left behind (fanOut) once a write quorum of
// the set answered and the version most of them hold as current, if any,
// is on its own write quorum of them: any write quorum holds the last
// acknowledged version, and a commit that follows leaves the drives it
// did not hear from out.
//
// need, when above the set's write quorum, is how many drives must have
// answered before lagging drives are left behind: a commit of an object with
// less parity than the set (REDUCED_REDUNDANCY) needs that many drives
// whose contents it knows. usable, when not nil, names the drives a commit
// can write to (those that took its data): only they count towards need,
// so that drives left behind by the data writes and drives left behind
// here never add up to more than the commit can lose.
//
// first, when not nil, marks the drives to read first (fanOutStaged): the
// others are read only when those are not enough.
func readRecords(ctx context.Context, lag *fanOuts, set *erasureSet, bucket, key string, withData bool, need int, usable func(p int) bool, first []bool) ([]*meta.Record, [][]byte, []error) {
	n := len(set.drives)
	type read struct {
		rec *meta.Record
		raw []byte
	}
	need = max(need, quorum.WriteQuorum(n-set.parity, set.parity))
	cur := make([]*meta.Object, n) // enough's scratch: the current versions heard
	enough := func(vals []read, errs []error, done []bool) bool {
		clear(cur)
		heard := 0
		for p, v := range vals {
			if done[p] && (errs[p] == nil || errors.Is(errs[p], drive.ErrNotFound)) {
				if usable == nil || usable(p) {
					heard++
				}
				if v.rec != nil {
					cur[p] = v.rec.Current()
				}
			}
		}
		// The version and its settings must each be on a write quorum
		// of the drives heard: only the last committed ones can be.
		return heard >= need && quorum.Decided(cur)
	}
	// fromMemory reads the first wave's records (and inline shards) in
	// the drives' row caches, where a hot object's are: no drive call at
	// all. nil unless every one is there and they are enough.
	fromMemory := func() ([]read, []error) {
		vals, errs, done := make([]read, n), make([]error, n), make([]bool, n)
		for p, d := range set.drives {
			switch {
			case d == nil:
				errs[p], done[p] = errDriveSkipped, true // as fanOutStaged
				continue
			case !first[p]:
				errs[p], done[p] = errNotCalled, true
				continue
			}
			rec, raw, ok := recordInMemory(d, bucket, key, withData)
			if !ok {
				return nil, nil
			}
			vals[p], done[p] = read{rec, raw}, true
		}
		if !enough(vals, errs, done) {
			return nil, nil
		}
		return vals, errs
	}
	var vals []read
	var errs []error
	if first != nil {
		vals, errs = fromMemory()
	}
	if vals == nil {
		batches := recordBatches(set.drives, first, withData)
		vals, errs = fanOutStaged(lag, set.drives, first, enough, func(p int, d drive.Drive) (read, error) {
			if r, ok := d.(driveRunner); ok && batches[p] != nil {
				rec, raw, err := batches[p].read(ctx, r, p, bucket, key)
				return read{rec, raw}, err
			}
			if r, ok := d.(driveRunner); ok && withData {
				rec, raw, err := readWithInline(ctx, r, bucket, key)
				return read{rec, raw}, err
			}
			rec, raw, err := readRecord(ctx, d, bucket, key)
			if err == nil && withData {
				prefetchInline(ctx, d, rec.Current())
			}
			return read{rec, raw}, err
		}, nil, nil)
	}
	recs, raws := make([]*meta.Record, n), make([][]byte, n)
	for p, v := range vals {
		recs[p], raws[p] = v.rec, v.raw
	}
	return recs, raws, errs
}

// recordInMemory is readRecord (and, withData, the inline shard the drive
// holds) answered from the drive's memory (drive.MemoryReader); ok false
// when any of it is not there or does not decode: readRecord then reads
// it, and reports what is wrong.
func recordInMemory(d drive.Drive, bucket, key string, withData bool) (*meta.Record, []byte, bool) {
	mr, ok := d.(drive.MemoryReader)
	if !ok {
		return nil, nil, false
	}
	raw, ok := mr.GetCached(drive.TableObjects, drive.ObjectKey(bucket, key))
	if !ok {
		return nil, nil, false
	}
	rec, err := meta.UnmarshalRecord(raw)
	if err != nil {
		return nil, nil, false
	}
	if m := rec.Current(); withData && m.HoldsInlineShard() {
		data, ok := mr.GetCached(drive.TableInline, drive.DataKey(m.DataID, 1))
		if !ok {
			return nil, nil, false
		}
		m.InlineData = data
	}
	return rec, raw, true
}

// driveRunner is a drive that runs several calls as one operation
// (drive.Health).
type driveRunner interface {
	Run(op drive.Op, fn func(d drive.Drive) error) error
}

// readWithInline is readRecord and prefetchInline as one drive
// operation. The record's decode error is the read's, as in readRecord;
// a failed inline read leaves the data to the reader, unless it is a
// drive fault, which fails the whole read (the drive goes offline).
func readWithInline(ctx context.Context, r driveRunner, bucket, key string) (rec *meta.Record, raw []byte, err error) {
	var (
		gotRec  *meta.Record
		gotRaw  []byte
		readErr error
	)
	runErr := r.Run(drive.OpGet, func(d drive.Drive) error {
		if rr, ok := d.(drive.RecordReader); ok {
			// A remote drive: record and inline shard in one call.
			raw, inline, err := rr.GetRecord(ctx, bucket, key)
			if err != nil {
				return err
			}
			gotRaw = raw
			gotRec, readErr = decodeRecord(d, bucket, key, raw, inline)
			return nil // the drive answered; a bad record is readErr
		}
		gotRec, gotRaw, readErr = readRecord(ctx, d, bucket, key)
		if readErr != nil {
			if errors.Is(readErr, meta.ErrCorrupt) {
				return nil // the drive answered; its record is bad
			}
			return readErr
		}
		m := gotRec.Current()
		if !m.HoldsInlineShard() {
			return nil
		}
		data, err := readInline(ctx, d, m)
		if err == nil {
			m.InlineData = data
		} else if errors.Is(err, drive.ErrDriveFaulty) {
			return err
		}
		return nil
	})
	if runErr != nil {
		// Run's error, not the captured values: on a timeout the
		// function may still be writing them.
		return nil, nil, runErr
	}
	return gotRec, gotRaw, readErr
}

// prefetchInline fills m.InlineData when m is an inline object and the
// drive holds a data shard of it. A failure leaves it empty: the reader
// fetches it again and reports the error then.
func prefetchInline(ctx context.Context, d drive.Drive, m *meta.Object) {
	if !m.HoldsInlineShard() || m.InlineData != nil {
		return
	}
	if data, err := readInline(ctx, d, m); err == nil {
		m.InlineData = data
	}
}

// readRecord reads one drive's record of bucket/key.
func readRecord(ctx context.Context, d drive.Drive, bucket, key string) (*meta.Record, []byte, error) {
	raw, err := d.Get(ctx, drive.TableObjects, drive.ObjectKey(bucket, key))
	if err != nil {
		return nil, nil, err
	}
	rec, err := decodeRecord(d, bucket, key, raw, nil)
	return rec, raw, err
}

// decodeRecord decodes the record drive d holds for bucket/key and gives
// its current version the inline shard read with it, if any and if the
// version keeps a data shard on d. A record that does not decode is the
// read's error (meta.ErrCorrupt), named after the drive.
func decodeRecord(d drive.Drive, bucket, key string, raw, inline []byte) (*meta.Record, error) {
	rec, err := meta.UnmarshalRecord(raw)
	if err != nil {
		return nil, fmt.Errorf("drive %s: %s/%s: %w", d, bucket, key, err)
	}
	if m := rec.Current(); inline != nil && m.HoldsInlineShard() {
		m.InlineData = inline
	}
	return rec, nil
}

// readObject reads every drive's record of key and picks the version held
// as current by at least its data-shard count of drives. When no version
// has quorum (an overwrite or metadata update interrupted mid-commit),
// each drive's previous version (kept until a commit reaches quorum)
// counts too, so the last acknowledged version stays readable without
// waiting for a heal.
func (e *Engine) readObject(ctx context.Context, set *erasureSet, bucket, key string) (*objectState, error) {
	return e.readObjectFrom(ctx, set, bucket, key, false, 0, nil, nil)
}

// readObjectData is readObject for a GET or HEAD: it reads first only as
// many drives as a quorum needs, those that hold the data shards (see
// firstReads), and the others only when those do not agree; it also
// fetches the data shards of a small (inline) current version when
// withData is set. A commit, the heal and a listing's check read every
// drive (readObject): they need to know what each one holds.
func (e *Engine) readObjectData(ctx context.Context, set *erasureSet, bucket, key string, withData bool) (*objectState, error) {
	return e.readObjectFrom(ctx, set, bucket, key, withData, 0, nil, e.firstReads(set, key))
}

// readObjectNeed is readObject for a commit that needs need drives
// whose records it knows (its own write quorum; 0: the set's) among the
// drives it can write to (usable; nil: all).
func (e *Engine) readObjectNeed(ctx context.Context, set *erasureSet, bucket, key string, need int, usable func(p int) bool) (*objectState, error) {
	return e.readObjectFrom(ctx, set, bucket, key, false, need, usable, nil)
}

// firstReads marks the drives a GET or HEAD of key reads first: a write
// quorum of the set, which is as many drives as agree on the current
// version when no write is in flight (a committed version is on at least
// a write quorum, so no other can be on as many of these). On one node
// they are the drives the key's distribution gives data shards at the
// set's parity, so the data of a healthy object comes without decoding,
// except that a drive offline or known to lag gives its place to a
// parity drive. In a cluster they are this node's drives and then whole
// nodes (nodeOrder): each node read is one call, and a small object's
// shards come with the records (decoded from parity where needed), while
// a large object's data shards on drives not read come by data id (see
// readObjectFrom). nil when the set has no drives to spare.
func (e *Engine) firstReads(set *erasureSet, key string) []bool {
	n := len(set.drives)
	want := quorum.WriteQuorum(n-set.parity, set.parity)
	if want >= n {
		return nil
	}
	dist := e.distribution(key, n)
	now := time.Now()
	first := make([]bool, n)
	picked := 0
	// Shard numbers 1..n in order: data shards first, then parity.
	byShard := make([]int, n)
	for p, shard := range dist {
		byShard[shard-1] = p
	}
	for _, p := range nodeOrder(set.drives, byShard, n-set.parity) {
		if picked < want && e.readyToRead(set.drives[p], now) {
			first[p] = true
			picked++
		}
	}
	if picked < want {
		return nil
	}
	return first
}

// nodeOrder returns the drive positions of byShard (in shard order) so
// that a first wave taken from the front spans as few nodes as it can:
// this process's drives first, then the other nodes' drives one node at
// a time, nodes holding more of the first data shards first, shard order
// within a node. Without drives of other nodes it is byShard itself.
func nodeOrder(drives []drive.Drive, byShard []int, data int) []int {
	var node []string // by position; nil while every drive is this process's
	for p, d := range drives {
		if name := nodeOf(d); name != "" {
			if node == nil {
				node = make([]string, len(drives))
			}
			node[p] = name
		}
	}
	if node == nil {
		return byShard
	}
	type group struct {
		name string
		data int
		ps   []int
	}
	var groups []*group
	byName := map[string]*group{}
	for i, p := range byShard {
		g := byName[node[p]]
		if g == nil {
			g = &group{name: node[p]}
			byName[node[p]] = g
			groups = append(groups, g)
		}
		g.ps = append(g.ps, p)
		if i < data {
			g.data++
		}
	}
	slices.SortStableFunc(groups, func(a, b *group) int {
		switch {
		case (a.name == "") != (b.name == ""):
			if a.name == "" {
				return -1
			}
			return 1
		default:
			return b.data - a.data
		}
	})
	out := make([]int, 0, len(byShard))
	for _, g := range groups {
		out = append(out, g.ps...)
	}
	return out
}

// nodeOf names the node serving d when it is another node's drive whose
// reads are grouped per node (drive.NodeRecordReader under Health), ""
// for this process's drives.
func nodeOf(d drive.Drive) string {
	if nr, ok := underHealth[drive.NodeRecordReader](d); ok {
		return nr.Node()
	}
	return ""
}

// readyToRead reports whether d is worth reading from at now: online
// and not known to lag.
func (e *Engine) readyToRead(d drive.Drive, now time.Time) bool {
	return d != nil && !reportsOffline(d) && !e.lag.isLagging(d, now)
}

func (e *Engine) readObjectFrom(ctx context.Context, set *erasureSet, bucket, key string, withData bool, need int, usable func(p int) bool, first []bool) (*objectState, error) {
	n := len(set.drives)
	recs, raws, errs := readRecords(ctx, &e.lag, set, bucket, key, withData, need, usable, first)
	for _, p := range e.indexWrites.running(set.index, drive.ObjectKey(bucket, key)) {
		// A batch of an earlier write left running there: what the
		// drive holds is about to change.
		recs[p], raws[p], errs[p] = nil, nil, errSlowDrive
	}
	st := &objectState{metas: make([]*meta.Object, n), errs: errs, recs: recs, raws: raws,
		readErrs: append([]error(nil), errs...)}
	absent := make([]bool, n)
	for p, r := range recs {
		if r != nil {
			st.metas[p] = r.Current()
			if st.metas[p] == nil && st.errs[p] == nil {
				st.errs[p] = drive.ErrNotFound
			}
		}
		absent[p] = errors.Is(st.errs[p], drive.ErrNotFound)
	}
	q := quorum.Current(recs, absent, set.parity)
	if q.Version == nil {
		// st goes back with the error: a commit needs each drive's record
		// even when no version is readable.
		if q.NotFound {
			return st, fmt.Errorf("%s/%s: %w", bucket, key, ErrObjectNotFound)
		}
		return st, fmt.Errorf("%s/%s: %w: %d of %d drives agree on a version, %d needed: %v",
			bucket, key, ErrReadQuorum, q.Votes, n, q.Need, firstErr(st.errs))
	}
	st.agreeOn(q)
	if q.FromPrev {
		e.log.Warn("object read from previous records: a commit was interrupted", "bucket", bucket, "key", key)
		e.jobs.QueueHeal(bucket, key)
		return st, nil
	}
	if q.Pending {
		// A versioned commit in flight, or one whose settling batch was
		// lost in a crash: until it is settled the replaced version is
		// not in the versions table, so the heal settles it once the
		// commit's lock is free.
		e.jobs.QueueHeal(bucket, key)
	}
	now := time.Now()
	for p, err := range st.errs {
		if errors.Is(err, errNotCalled) && p < len(st.fi.Erasure.Distribution) && e.readyToRead(set.drives[p], now) {
			// A healthy drive a GET did not need to ask (a parity drive):
			// its shard of the version is where the version's ids say
			// (shard files and inline data are addressed by data id, and
			// checksummed), so the reader can still fall back on it; a
			// drive without it fails that read like a drive whose record
			// is missing. A drive left out for lagging or being offline
			// gets no such record: the reader would wait for it first.
			m := *st.fi
			m.Erasure.Index = st.fi.Erasure.Distribution[p]
			m.InlineData = nil
			st.metas[p] = &m
		}
	}
	return st, nil
}
