package accesslog

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shardstore/shardstore/internal/durable"
)

// Defaults of Config.
const (
	DefaultInterval   = 5 * time.Minute
	DefaultMaxRecords = 10000
	DefaultMaxBytes   = 32 << 20
	DefaultMaxBacklog = 1 << 30
	// appendWait bounds how long Append waits for its sync: a hung
	// drive must not hang every logged request.
	appendWait = 10 * time.Second
	// retryMin and retryMax bound the wait after a failed delivery.
	retryMin = time.Second
	retryMax = 5 * time.Minute
	// deliverWait bounds one delivery, so that a stalled write is
	// retried rather than waited on for ever.
	deliverWait = 2 * time.Minute
)

// File names in a spool directory.
const (
	segSuffix  = ".seg"
	doneSuffix = ".done"
)

// Errors of the spool.
var (
	// ErrClosed: the spool is closed (the server is stopping).
	ErrClosed = errors.New("accesslog: spool closed")
	// ErrBacklog: more than Config.MaxBacklog bytes wait for delivery;
	// the record is not kept.
	ErrBacklog = errors.New("accesslog: delivery backlog full")
	// ErrSyncTimeout: the record was not synced within the wait; it may
	// still become durable.
	ErrSyncTimeout = errors.New("accesslog: spool sync timed out")
	// ErrUndeliverable, wrapped by a Deliver error, says a log object can
	// never be delivered (its target is gone, or no longer its source's
	// owner's): its records are dropped with a log line instead of being
	// retried.
	ErrUndeliverable = errors.New("accesslog: undeliverable")
)

// Object is one log object to deliver: Body holds its records' lines.
type Object struct {
	Dest    Destination
	Key     string
	Body    []byte
	Records int
}

// Config configures a Spool.
type Config struct {
	// Dirs are the spool's directories, one per copy, each on its own
	// drive; at least one. Every record is synced to each of them before
	// Append returns.
	Dirs []string
	// Interval closes a batch this long after its first record (default
	// DefaultInterval); MaxRecords and MaxBytes close it sooner.
	Interval   time.Duration
	MaxRecords int
	MaxBytes   int64
	// MaxBacklog bounds the bytes spooled and not yet delivered; beyond
	// it Append refuses records (ErrBacklog).
	MaxBacklog int64
	// Deliver writes one log object; required. An error wrapping
	// ErrUndeliverable drops the object's records, any other is retried
	// with backoff. It must be idempotent: after a crash an object may be
	// delivered again, with the same key and body.
	Deliver func(ctx context.Context, o Object) error
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// Stats are the spool's counters since it was opened.
type Stats struct {
	Appended        uint64 // records synced (Append succeeded)
	Refused         uint64 // records not kept (backlog full, no copy written, closed)
	Batches         uint64 // segments delivered and removed
	Objects         uint64 // log objects delivered
	Delivered       uint64 // records delivered
	Dropped         uint64 // records dropped as undeliverable
	DeliveryErrors  uint64 // failed delivery attempts (retried)
	BacklogBytes    int64  // spooled bytes not yet delivered
	PendingSegments int    // closed segments waiting for delivery
}

// Spool keeps access log records durably on the node's drives until
// they are delivered as log objects; see the package comment.
type Spool struct {
	cfg Config
	log *slog.Logger
	now func() time.Time

	mu      sync.Mutex
	buf     []byte
	waiters []chan error
	// cuts are the offsets in buf where a full batch ended.
	cuts    []int
	closing bool
	// gen numbers the batch the next record joins; a batch becomes one
	// segment. genRecords, genBytes and genStart describe it.
	gen        uint64
	genRecords int
	genBytes   int64
	genStart   time.Time
	// sealing is set while the writer closes a batch it has taken.
	sealing bool
	backlog int64

	kick       chan struct{}
	stopWriter chan struct{}
	writerDone chan struct{}

	// Writer-owned: the open segment and the next sequence number.
	cur   *segment
	seq   uint64
	spare []byte

	// The delivery queue, shared by writer and deliverer.
	qmu    sync.Mutex
	sealed []string
	sizes  map[string]int64
	// delivered remembers, per segment, the objects already delivered,
	// so that a retry does not write them again.
	delivered map[string]map[string]bool
	queued    chan struct{}
	progress  chan struct{} // closed and replaced when the queue shrinks
	final     chan context.Context
	delivDone chan struct{}
	runCtx    context.Context
	runCancel context.CancelFunc

	appended, refused, batches, objects, deliveredRecs, dropped, deliveryErrors atomic.Uint64
}

// segment is the open batch's files, one per directory that took it.
type segment struct {
	name  string
	files []*os.File
	dirty bool
}

// Open opens (creating) the spool directories, queues for delivery every
// segment a previous run left, and starts the writer and the deliverer.
func Open(cfg Config) (*Spool, error) {
	if len(cfg.Dirs) == 0 {
		return nil, errors.New("accesslog: no spool directory")
	}
	if cfg.Deliver == nil {
		return nil, errors.New("accesslog: Config.Deliver is required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.MaxRecords <= 0 {
		cfg.MaxRecords = DefaultMaxRecords
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxBacklog <= 0 {
		cfg.MaxBacklog = DefaultMaxBacklog
	}
	s := &Spool{cfg: cfg, log: cfg.Logger, now: cfg.Now,
		kick: make(chan struct{}, 1), stopWriter: make(chan struct{}), writerDone: make(chan struct{}),
		sizes: map[string]int64{}, delivered: map[string]map[string]bool{},
		queued: make(chan struct{}, 1), progress: make(chan struct{}), final: make(chan context.Context, 1),
		delivDone: make(chan struct{})}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if err := s.recover(); err != nil {
		return nil, err
	}
	s.runCtx, s.runCancel = context.WithCancel(context.Background())
	go s.writer()
	go s.deliverer()
	s.signal()
	return s, nil
}

// recover finds the segments an earlier run left: those marked done are
// removed, the others queued in order.
func (s *Spool) recover() error {
	names := map[string]int64{}
	done := map[string]bool{}
	usable := 0
	for _, dir := range s.cfg.Dirs {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			s.log.Warn("access log spool directory unusable", "dir", dir, "err", err)
			continue
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			s.log.Warn("access log spool directory unreadable", "dir", dir, "err", err)
			continue
		}
		usable++
		for _, ent := range ents {
			n := ent.Name()
			switch {
			case strings.HasSuffix(n, doneSuffix):
				done[strings.TrimSuffix(n, doneSuffix)] = true
			case strings.HasSuffix(n, segSuffix):
				name := strings.TrimSuffix(n, segSuffix)
				if info, err := ent.Info(); err == nil {
					names[name] = max(names[name], info.Size())
				} else if _, ok := names[name]; !ok {
					names[name] = 0
				}
			default:
				continue
			}
			if seq, ok := segmentSeq(n); ok && seq >= s.seq {
				s.seq = seq + 1
			}
		}
	}
	if usable == 0 {
		return fmt.Errorf("accesslog: none of the spool directories %v is usable", s.cfg.Dirs)
	}
	for name := range done {
		s.removeSegment(name)
		delete(names, name)
	}
	for name, size := range names {
		s.sealed = append(s.sealed, name)
		s.sizes[name] = size
		s.backlog += size
	}
	sort.Strings(s.sealed)
	if len(s.sealed) > 0 {
		s.log.Info("access log records of an earlier run are queued for delivery", "segments", len(s.sealed), "bytes", s.backlog)
	}
	return nil
}

// segmentSeq reads the sequence number a segment's file name starts with.
func segmentSeq(file string) (uint64, bool) {
	head, _, ok := strings.Cut(file, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(head, 16, 64)
	return n, err == nil
}

// Append spools e durably: it returns once e is synced on every spool
// directory that is working (at least one), grouped with the records
// appended meanwhile into one write and one sync per directory. The
// generation it returns is for Amend.
func (s *Spool) Append(e Entry) (uint64, error) {
	frame, err := appendFrame(nil, &e)
	if err != nil {
		s.refused.Add(1)
		return 0, err
	}
	ch := make(chan error, 1)
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		s.refused.Add(1)
		return 0, ErrClosed
	}
	if s.backlog+int64(len(frame)) > s.cfg.MaxBacklog {
		s.mu.Unlock()
		s.refused.Add(1)
		return 0, ErrBacklog
	}
	if s.genRecords >= s.cfg.MaxRecords || s.genBytes >= s.cfg.MaxBytes {
		// The batch is full: this record starts the next one, and the
		// writer closes the segment where the buffer says.
		s.nextBatch()
		s.cuts = append(s.cuts, len(s.buf))
	}
	if s.genRecords == 0 {
		s.genStart = s.now()
	}
	s.genRecords++
	gen := s.gen
	s.add(frame)
	s.waiters = append(s.waiters, ch)
	s.mu.Unlock()
	s.wake()
	t := time.NewTimer(appendWait)
	defer t.Stop()
	select {
	case err := <-ch:
		if err != nil {
			s.refused.Add(1)
			return gen, err
		}
		s.appended.Add(1)
		return gen, nil
	case <-t.C:
		s.refused.Add(1)
		return gen, ErrSyncTimeout
	}
}

// Amend spools e, the final form of a record Append spooled in
// generation gen, without waiting for a sync (the process's page cache
// keeps it across a kill; the batch's close syncs it). If the batch has
// closed since, the appended record stands and e is dropped, so that no
// request is in two log objects.
func (s *Spool) Amend(e Entry, gen uint64) {
	e.Final = true
	frame, err := appendFrame(nil, &e)
	if err != nil {
		return
	}
	s.mu.Lock()
	if s.closing || gen != s.gen || s.backlog+int64(len(frame)) > s.cfg.MaxBacklog {
		s.mu.Unlock()
		return
	}
	s.add(frame)
	s.mu.Unlock()
	s.wake()
}

// add appends a frame to the buffer; s.mu is held.
func (s *Spool) add(frame []byte) {
	s.buf = append(s.buf, frame...)
	s.genBytes += int64(len(frame))
	s.backlog += int64(len(frame))
}

func (s *Spool) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// due reports whether the current batch has been open for Interval;
// s.mu is held. (A full batch is closed by the Append that finds it
// full.)
func (s *Spool) due() bool {
	return s.genRecords > 0 && s.now().Sub(s.genStart) >= s.cfg.Interval
}

// nextBatch starts a new batch; s.mu is held.
func (s *Spool) nextBatch() {
	s.gen++
	s.genRecords, s.genBytes = 0, 0
}

// writer writes and syncs what Append and Amend buffered, one batch at a
// time, and closes segments when they are due.
func (s *Spool) writer() {
	defer close(s.writerDone)
	tick := time.NewTicker(min(max(s.cfg.Interval/4, 5*time.Millisecond), time.Second))
	defer tick.Stop()
	for {
		stopping := false
		select {
		case <-s.kick:
		case <-tick.C:
		case <-s.stopWriter:
			stopping = true
		}
		s.mu.Lock()
		buf, waiters, cuts := s.buf, s.waiters, s.cuts
		s.buf, s.waiters, s.cuts = s.spare[:0], nil, nil
		seal := stopping || s.due()
		if seal {
			s.nextBatch()
		}
		s.sealing = seal || len(cuts) > 0
		s.mu.Unlock()
		// Each cut ends a full batch: what is before it goes into the
		// open segment, which is then closed.
		durable := len(waiters) > 0
		var err error
		prev := 0
		for _, c := range cuts {
			err = cmp.Or(err, s.writePart(buf[prev:c], durable))
			s.seal()
			prev = c
		}
		err = cmp.Or(err, s.writePart(buf[prev:], durable))
		for _, w := range waiters {
			w <- err
		}
		s.spare = buf
		if seal {
			s.seal()
		}
		s.mu.Lock()
		s.sealing = false
		s.mu.Unlock()
		if stopping {
			return
		}
	}
}

// writePart writes part of the buffer, if any; a failure is logged and
// its bytes leave the backlog.
func (s *Spool) writePart(part []byte, durable bool) error {
	if len(part) == 0 {
		return nil
	}
	err := s.write(part, durable)
	if err != nil {
		s.log.Warn("access log records not spooled", "bytes", len(part), "err", err)
		s.mu.Lock()
		s.backlog -= int64(len(part))
		s.mu.Unlock()
	}
	return err
}

// write appends buf to the open segment (opening one if needed) on every
// directory in parallel, syncing when datasync is set. A directory that
// fails is dropped from the segment; the write fails only when none
// took it.
func (s *Spool) write(buf []byte, datasync bool) error {
	if s.cur != nil && len(s.cur.files) == 0 {
		// Every copy of the open segment failed: close it (what its
		// copies hold is delivered from the disk) and go on in a new one.
		// Amends of its records are dropped, their first form stands.
		s.mu.Lock()
		s.gen++
		s.mu.Unlock()
		s.seal()
	}
	if s.cur == nil {
		if err := s.openSegment(); err != nil {
			return err
		}
	}
	errs := durable.WriteCopies(s.cur.files, buf, datasync)
	kept := s.cur.files[:0]
	var failed error
	for i, f := range s.cur.files {
		if errs[i] != nil {
			s.log.Warn("access log spool copy failed; the batch continues on the other drives", "file", f.Name(), "err", errs[i])
			_ = f.Close()
			failed = errs[i]
			continue
		}
		kept = append(kept, f)
	}
	s.cur.files = kept
	s.cur.dirty = !datasync
	if len(kept) == 0 {
		return fmt.Errorf("accesslog: no spool copy written: %w", failed)
	}
	return nil
}

// openSegment creates the next segment's file in every directory and
// makes the directory entries durable.
func (s *Spool) openSegment() error {
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := fmt.Sprintf("%016x-%s", s.seq, hex.EncodeToString(rnd[:]))
	s.seq++
	seg := &segment{name: name}
	var last error
	for _, dir := range s.cfg.Dirs {
		f, err := os.OpenFile(filepath.Join(dir, name+segSuffix), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if err == nil {
			if err = durable.SyncDir(dir); err != nil {
				_ = f.Close()
			}
		}
		if err != nil {
			s.log.Warn("access log spool copy not created", "dir", dir, "err", err)
			last = err
			continue
		}
		seg.files = append(seg.files, f)
	}
	if len(seg.files) == 0 {
		return fmt.Errorf("accesslog: no spool copy created: %w", last)
	}
	s.cur = seg
	return nil
}

// seal closes the open segment and queues it for delivery.
func (s *Spool) seal() {
	seg := s.cur
	if seg == nil {
		return
	}
	s.cur = nil
	var size int64
	for _, f := range seg.files {
		if seg.dirty {
			if err := unix.Fdatasync(int(f.Fd())); err != nil {
				s.log.Warn("access log spool sync failed", "file", f.Name(), "err", err)
			}
		}
		if info, err := f.Stat(); err == nil {
			size = max(size, info.Size())
		}
		_ = f.Close()
	}
	s.qmu.Lock()
	s.sealed = append(s.sealed, seg.name)
	s.sizes[seg.name] = size
	s.qmu.Unlock()
	s.signal()
}

func (s *Spool) signal() {
	select {
	case s.queued <- struct{}{}:
	default:
	}
}

// deliverer delivers closed segments in order, retrying with backoff
// while a delivery fails.
func (s *Spool) deliverer() {
	defer close(s.delivDone)
	wait := time.Duration(0)
	var retry <-chan time.Time
	for {
		select {
		case <-s.queued:
		case <-retry:
		case ctx := <-s.final:
			s.deliverAll(ctx)
			return
		}
		retry = nil
		if err := s.deliverAll(s.runCtx); err != nil {
			wait = min(max(wait*2, retryMin), retryMax)
			s.log.Warn("access log delivery failed; retrying", "in", wait, "err", err)
			retry = time.After(wait)
		} else {
			wait = 0
		}
	}
}

// deliverAll delivers the queued segments in order until one fails.
func (s *Spool) deliverAll(ctx context.Context) error {
	for {
		s.qmu.Lock()
		if len(s.sealed) == 0 {
			s.qmu.Unlock()
			return nil
		}
		name := s.sealed[0]
		s.qmu.Unlock()
		if err := s.deliverSegment(ctx, name); err != nil {
			s.deliveryErrors.Add(1)
			return err
		}
		// The backlog and the batch count change before the segment
		// leaves the queue: Flush returns once the queue is empty, and
		// its caller reads Stats (they lagged behind it).
		s.qmu.Lock()
		size := s.sizes[name]
		s.qmu.Unlock()
		s.mu.Lock()
		s.backlog -= size
		s.mu.Unlock()
		s.batches.Add(1)
		s.qmu.Lock()
		s.sealed = s.sealed[1:]
		delete(s.sizes, name)
		delete(s.delivered, name)
		close(s.progress)
		s.progress = make(chan struct{})
		s.qmu.Unlock()
	}
}

// deliverSegment delivers every log object of a segment, then removes it.
func (s *Spool) deliverSegment(ctx context.Context, name string) error {
	entries, err := s.readSegment(name)
	if err != nil {
		return err
	}
	objs := batchObjects(name, entries)
	s.qmu.Lock()
	done := s.delivered[name]
	if done == nil {
		done = map[string]bool{}
		s.delivered[name] = done
	}
	s.qmu.Unlock()
	for _, o := range objs {
		if done[o.Key] {
			continue
		}
		dctx, cancel := context.WithTimeout(ctx, deliverWait)
		err := s.cfg.Deliver(dctx, o)
		cancel()
		switch {
		case err == nil:
			s.objects.Add(1)
			s.deliveredRecs.Add(uint64(o.Records))
		case errors.Is(err, ErrUndeliverable):
			s.dropped.Add(uint64(o.Records))
			s.log.Warn("access log records dropped: the target bucket cannot take them",
				"source_bucket", o.Dest.SourceBucket, "target_bucket", o.Dest.TargetBucket, "records", o.Records, "err", err)
		default:
			return fmt.Errorf("deliver %s/%s: %w", o.Dest.TargetBucket, o.Key, err)
		}
		s.qmu.Lock()
		done[o.Key] = true
		s.qmu.Unlock()
	}
	s.removeSegment(name)
	return nil
}

// readSegment reads every copy of a segment and merges them: a record is
// kept if any copy has it, its final form if any copy has that. It fails
// when no copy could be read and one failed with an error other than
// being absent (a drive that may come back), so that the segment is
// retried rather than removed.
func (s *Spool) readSegment(name string) ([]Entry, error) {
	byID := map[string]Entry{}
	var order []string
	read := 0
	var failed error
	for _, dir := range s.cfg.Dirs {
		data, err := os.ReadFile(filepath.Join(dir, name+segSuffix))
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				s.log.Warn("access log spool copy unreadable", "dir", dir, "segment", name, "err", err)
				failed = err
			}
			continue
		}
		read++
		entries, _ := readFrames(data)
		for _, e := range entries {
			id := e.id()
			old, ok := byID[id]
			if !ok {
				order = append(order, id)
			}
			if !ok || (e.Final && !old.Final) {
				byID[id] = e
			}
		}
	}
	if read == 0 && failed != nil {
		return nil, fmt.Errorf("accesslog: no copy of segment %s readable: %w", name, failed)
	}
	out := make([]Entry, 0, len(order))
	for _, id := range order {
		out = append(out, byID[id])
	}
	return out, nil
}

// removeSegment removes a delivered segment: every copy is renamed to
// its done name first (and the directories synced), so that a crash in
// between leaves a mark that says delivered rather than a copy that
// could be delivered again with fewer records than the object holds.
func (s *Spool) removeSegment(name string) {
	for _, dir := range s.cfg.Dirs {
		err := os.Rename(filepath.Join(dir, name+segSuffix), filepath.Join(dir, name+doneSuffix))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("access log spool: marking a delivered segment failed", "dir", dir, "segment", name, "err", err)
		}
	}
	for _, dir := range s.cfg.Dirs {
		_ = durable.SyncDir(dir)
	}
	for _, dir := range s.cfg.Dirs {
		for _, suffix := range []string{segSuffix, doneSuffix} {
			if err := os.Remove(filepath.Join(dir, name+suffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
				s.log.Warn("access log spool: removing a delivered segment failed", "dir", dir, "segment", name, "err", err)
			}
		}
	}
}

// Flush closes the open batch and waits until every closed batch has
// been delivered (or dropped), or ctx ends.
func (s *Spool) Flush(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.genRecords > 0 {
		s.genStart = time.Time{} // due now
	}
	s.mu.Unlock()
	s.wake()
	for {
		s.mu.Lock()
		open := s.genRecords > 0 || len(s.buf) > 0 || s.sealing
		s.mu.Unlock()
		s.qmu.Lock()
		pending, progress := len(s.sealed), s.progress
		s.qmu.Unlock()
		if !open && pending == 0 {
			return nil
		}
		s.signal()
		select {
		case <-progress:
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return fmt.Errorf("accesslog: flush: %w", ctx.Err())
		}
	}
}

// Stats reports the spool's counters.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	backlog := s.backlog
	s.mu.Unlock()
	s.qmu.Lock()
	pending := len(s.sealed)
	s.qmu.Unlock()
	return Stats{Appended: s.appended.Load(), Refused: s.refused.Load(), Batches: s.batches.Load(),
		Objects: s.objects.Load(), Delivered: s.deliveredRecs.Load(), Dropped: s.dropped.Load(),
		DeliveryErrors: s.deliveryErrors.Load(), BacklogBytes: backlog, PendingSegments: pending}
}

// Close stops taking records, syncs and closes the open batch, and
// delivers what it can until ctx ends; what is left is delivered by the
// next Open of the same directories.
func (s *Spool) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closing = true
	s.mu.Unlock()
	close(s.stopWriter)
	<-s.writerDone
	stop := context.AfterFunc(ctx, s.runCancel)
	defer stop()
	s.final <- ctx
	<-s.delivDone
	s.runCancel()
	s.qmu.Lock()
	left := len(s.sealed)
	s.qmu.Unlock()
	if left == 0 {
		return nil
	}
	err := fmt.Errorf("accesslog: %d spooled batches left for the next start", left)
	if ctx.Err() != nil {
		err = fmt.Errorf("%w: %w", err, ctx.Err())
	}
	return err
}
