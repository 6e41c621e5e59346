package notify

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardstore/shardstore/internal/durable"
)

// Defaults of QueueConfig.
const (
	DefaultMaxRecords   = 100000
	DefaultMaxBytes     = 256 << 20
	DefaultSegmentBytes = 4 << 20
	DefaultRetryMin     = 250 * time.Millisecond
	DefaultRetryMax     = 30 * time.Second
	DefaultSendTimeout  = 30 * time.Second
	// DefaultParallel records of different keys are in Send at once.
	DefaultParallel = 16
	// MaxParallel bounds QueueConfig.Parallel and the parallel setting.
	MaxParallel = 256
	// appendWait bounds how long Append waits for its sync: a hung
	// drive must not hang every request.
	appendWait = 10 * time.Second
	// cursorEvery: the delivered position is written after this many
	// records or this long, whichever first (not synced: a lost cursor
	// only means records are delivered again, as at-least-once allows).
	cursorEvery     = 256
	cursorInterval  = time.Second
	cursorFile      = "cursor"
	segSuffix       = ".seg"
	queueDirPerms   = 0o700
	segmentFilePerm = 0o600
)

// Errors of a queue.
var (
	// ErrFull: the queue holds MaxRecords records or MaxBytes bytes not
	// yet delivered; the record is not kept.
	ErrFull = errors.New("notify: target queue full")
	// ErrClosed: the queue is closed (the server is stopping).
	ErrClosed = errors.New("notify: queue closed")
	// ErrSyncTimeout: the record was not synced within the wait.
	ErrSyncTimeout = errors.New("notify: queue sync timed out")
	// ErrNoCopy: no queue directory could be written.
	ErrNoCopy = errors.New("notify: no queue directory took the record")
)

// QueueConfig configures a Queue.
type QueueConfig struct {
	// Dirs are the queue's directories, one per copy, each on its own
	// drive; at least one. A record is synced to every working one
	// before Append returns.
	Dirs []string
	// Send delivers one record (the target's Send); required.
	Send func(ctx context.Context, d Delivery) error
	// MaxRecords and MaxBytes bound what waits for delivery.
	MaxRecords int
	MaxBytes   int64
	// SegmentBytes starts a new segment file past this size.
	SegmentBytes int64
	// RetryMin and RetryMax bound the backoff after a failed Send.
	RetryMin, RetryMax time.Duration
	// SendTimeout bounds one Send.
	SendTimeout time.Duration
	// Parallel is how many records may be in Send at once (default
	// DefaultParallel, at most MaxParallel): records are spread over
	// that many lanes by their key, each lane sends its records in
	// queue order, one at a time, so records of one key are never in
	// Send together and arrive in queue order. 1 sends every record in
	// queue order, one at a time.
	Parallel int
	// SyncWith, when set, gives each directory's sync at open (see
	// syncwith.go): it must make what was written to the directory's
	// segment file durable, by running own (the file's fdatasync) or
	// by a sync that covers the file (drive.SharedSync.Guest: the
	// syncfs the drives on the same filesystem share). Nil, or an
	// error for a directory: fdatasync.
	SyncWith func(dir string) (func(own func() error) error, error)
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger
}

// QueueStats are a queue's counters since it was opened.
type QueueStats struct {
	Queued      int64  // records waiting (replayed ones included)
	QueuedBytes int64  // their bytes
	Appended    uint64 // records synced by Append
	Refused     uint64 // records not kept (full, no copy, closed)
	Sent        uint64 // records Send accepted
	Failed      uint64 // failed Send attempts (retried)
	// SendSeconds is the total time of successful Sends.
	SendSeconds float64
	// LastError is the last Send failure's text, empty after a success.
	LastError string
}

// Queue is one target's durable queue; see the package comment.
type Queue struct {
	cfg QueueConfig
	log *slog.Logger

	mu      sync.Mutex
	buf     []byte
	rnd     *round // the records in buf; nil when buf is empty
	closing bool
	// durSeq/durOff is how far records are synced: the sender reads
	// up to it.
	durSeq uint64
	durOff int64

	kick       chan struct{}
	stopWriter chan struct{}
	writerDone chan struct{}
	senderWake chan struct{}
	stopSender chan struct{}
	senderDone chan struct{}
	sendCtx    context.Context
	sendCancel context.CancelFunc

	// Writer-owned: the open segment.
	cur     uint64
	curSize int64
	rotate  bool
	files   []*os.File // per dir; nil where the dir failed
	syncs   []syncFunc // per dir (QueueConfig.SyncWith); nil: fdatasync
	spare   []byte

	// segs are the segments not yet deleted, oldest first; ends their
	// valid lengths for replayed ones (live ones read to durOff).
	segMu sync.Mutex
	segs  []uint64
	ends  map[uint64]int64
	from  map[uint64]string // replayed segment -> the dir holding its longest copy

	// The pipeline (pipeline.go): lanes by key, the window of records
	// read and not yet acknowledged, and what is acknowledged.
	lanes  []chan *pending
	window chan struct{}
	laneWG sync.WaitGroup
	ackMu  sync.Mutex
	pend   []*pending // read order; pend[pendHead:] not yet settled
	// pendHead: the first not settled; ackSeq/ackOff: everything
	// before it is acknowledged (the cursor never passes it).
	pendHead    int
	ackSeq      uint64
	ackOff      int64
	sinceCursor int
	lastCursor  time.Time

	queued, queuedBytes            atomic.Int64
	appended, refused, sent, fails atomic.Uint64
	sendNanos                      atomic.Int64
	lastErr                        atomic.Pointer[string]
}

// OpenQueue opens (creating) the queue's directories, finds what an
// earlier run left undelivered, and starts the writer and the sender.
func OpenQueue(cfg QueueConfig) (*Queue, error) {
	if len(cfg.Dirs) == 0 {
		return nil, errors.New("notify: no queue directory")
	}
	if cfg.Send == nil {
		return nil, errors.New("notify: QueueConfig.Send is required")
	}
	if cfg.MaxRecords <= 0 {
		cfg.MaxRecords = DefaultMaxRecords
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.SegmentBytes <= 0 {
		cfg.SegmentBytes = DefaultSegmentBytes
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = DefaultRetryMin
	}
	if cfg.RetryMax < cfg.RetryMin {
		cfg.RetryMax = max(DefaultRetryMax, cfg.RetryMin)
	}
	if cfg.SendTimeout <= 0 {
		cfg.SendTimeout = DefaultSendTimeout
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = DefaultParallel
	}
	cfg.Parallel = min(cfg.Parallel, MaxParallel)
	q := &Queue{cfg: cfg, log: cfg.Logger, kick: make(chan struct{}, 1), stopWriter: make(chan struct{}),
		writerDone: make(chan struct{}), senderWake: make(chan struct{}, 1), stopSender: make(chan struct{}),
		senderDone: make(chan struct{}), ends: map[uint64]int64{}, from: map[uint64]string{}}
	if q.log == nil {
		q.log = slog.New(slog.DiscardHandler)
	}
	start, startOff, err := q.recover()
	if err != nil {
		return nil, err
	}
	q.openSyncs()
	if err := q.newSegment(); err != nil {
		return nil, err
	}
	q.durSeq, q.durOff = q.cur, 0
	q.sendCtx, q.sendCancel = context.WithCancel(context.Background())
	q.startPipeline(start, startOff)
	go q.writer()
	go q.sender(start, startOff)
	return q, nil
}

func segName(seq uint64) string { return fmt.Sprintf("%016x%s", seq, segSuffix) }

// recover reads the directories: the cursor (the furthest any copy
// recorded), every segment's longest valid copy; segments wholly
// before the cursor are removed. It returns where the sender starts.
func (q *Queue) recover() (uint64, int64, error) {
	usable := 0
	var curSeq uint64
	var curOff int64
	haveCursor := false
	found := map[uint64]bool{}
	for _, dir := range q.cfg.Dirs {
		if err := os.MkdirAll(dir, queueDirPerms); err != nil {
			q.log.Warn("notification queue directory unusable", "dir", dir, "err", err)
			continue
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			q.log.Warn("notification queue directory unreadable", "dir", dir, "err", err)
			continue
		}
		usable++
		if s, o, ok := readCursor(filepath.Join(dir, cursorFile)); ok {
			if !haveCursor || s > curSeq || (s == curSeq && o > curOff) {
				curSeq, curOff, haveCursor = s, o, true
			}
		}
		for _, e := range ents {
			name, ok := strings.CutSuffix(e.Name(), segSuffix)
			if !ok {
				if strings.HasSuffix(e.Name(), ".tmp") {
					_ = os.Remove(filepath.Join(dir, e.Name()))
				}
				continue
			}
			seq, err := strconv.ParseUint(name, 16, 64)
			if err != nil || len(name) != 16 {
				continue
			}
			found[seq] = true
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				q.log.Warn("notification queue segment unreadable", "file", filepath.Join(dir, e.Name()), "err", err)
				continue
			}
			valid, _ := scanFrames(data)
			if end, ok := q.ends[seq]; !ok || valid > end {
				q.ends[seq], q.from[seq] = valid, dir
			}
		}
	}
	if usable == 0 {
		return 0, 0, fmt.Errorf("notify: none of the queue directories %v is usable", q.cfg.Dirs)
	}
	for seq := range found {
		if haveCursor && seq < curSeq {
			q.removeSegment(seq)
			continue
		}
		if _, ok := q.ends[seq]; !ok {
			q.ends[seq] = 0 // every copy unreadable: nothing to send
		}
		q.segs = append(q.segs, seq)
	}
	sort.Slice(q.segs, func(i, j int) bool { return q.segs[i] < q.segs[j] })
	start, startOff := uint64(0), int64(0)
	if len(q.segs) > 0 {
		start = q.segs[0]
		if haveCursor && curSeq == start {
			startOff = min(curOff, q.ends[start])
		}
		q.cur = q.segs[len(q.segs)-1] + 1
	} else {
		if haveCursor {
			q.cur = curSeq + 1
		}
		start = q.cur
	}
	// Count what waits, from the start position on.
	for _, seq := range q.segs {
		data, err := os.ReadFile(filepath.Join(q.from[seq], segName(seq)))
		if err != nil {
			continue
		}
		data = data[:min(int64(len(data)), q.ends[seq])]
		if seq == start {
			data = data[min(int64(len(data)), startOff):]
		}
		valid, n := scanFrames(data)
		q.queued.Add(int64(n))
		q.queuedBytes.Add(valid)
	}
	if n := q.queued.Load(); n > 0 {
		q.log.Info("notification records of an earlier run are queued for delivery", "records", n, "dir", q.cfg.Dirs[0])
	}
	return start, startOff, nil
}

// readCursor reads "<seq hex> <offset> <crc32c>"; a torn or corrupt
// cursor is ignored (records are then delivered again).
func readCursor(path string) (uint64, int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 128 {
		return 0, 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 3 {
		return 0, 0, false
	}
	sum, err := strconv.ParseUint(f[2], 16, 32)
	if err != nil || uint32(sum) != crc32.Checksum([]byte(f[0]+" "+f[1]), castagnoli) {
		return 0, 0, false
	}
	seq, err1 := strconv.ParseUint(f[0], 16, 64)
	off, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || off < 0 {
		return 0, 0, false
	}
	return seq, off, true
}

// writeCursor records the delivered position in every directory
// (write and rename, not synced).
func (q *Queue) writeCursor(seq uint64, off int64) {
	body := fmt.Sprintf("%016x %d", seq, off)
	body += fmt.Sprintf(" %08x\n", crc32.Checksum([]byte(body), castagnoli))
	for _, dir := range q.cfg.Dirs {
		tmp := filepath.Join(dir, cursorFile+".tmp")
		if err := os.WriteFile(tmp, []byte(body), segmentFilePerm); err != nil {
			continue
		}
		_ = os.Rename(tmp, filepath.Join(dir, cursorFile))
	}
}

// newSegment creates segment q.cur in every directory (directories
// synced, so the file survives a crash); writer-owned.
func (q *Queue) newSegment() error {
	for _, f := range q.files {
		if f != nil {
			_ = f.Close()
		}
	}
	q.files = make([]*os.File, len(q.cfg.Dirs))
	ok := 0
	var wg sync.WaitGroup
	for i, dir := range q.cfg.Dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.OpenFile(filepath.Join(dir, segName(q.cur)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, segmentFilePerm)
			if err == nil {
				if err = durable.SyncDir(dir); err != nil {
					_ = f.Close()
				}
			}
			if err != nil {
				q.log.Warn("notification queue segment not created", "dir", dir, "err", err)
				return
			}
			q.files[i] = f
		}()
	}
	wg.Wait()
	for _, f := range q.files {
		if f != nil {
			ok++
		}
	}
	if ok == 0 {
		return fmt.Errorf("notify: queue segment %s: %w", segName(q.cur), ErrNoCopy)
	}
	q.curSize = 0
	q.segMu.Lock()
	q.segs = append(q.segs, q.cur)
	q.segMu.Unlock()
	return nil
}

// removeSegment deletes a delivered segment's copies.
func (q *Queue) removeSegment(seq uint64) {
	for _, dir := range q.cfg.Dirs {
		_ = os.Remove(filepath.Join(dir, segName(seq)))
	}
}

// Append queues d durably: it returns once d is synced on every queue
// directory that works (at least one), grouped with the records
// appended meanwhile into one write and one fdatasync per directory.
// A full queue refuses it with ErrFull at once.
func (q *Queue) Append(d Delivery) error {
	return q.Enqueue(d)()
}

// Enqueue places d after every record enqueued before it and returns
// at once; the returned wait returns Append's result once d is synced
// (or refused). A caller that enqueues under its own lock (the S3
// layer, under the key's lock at commit) fixes the records' order
// without waiting for the sync there.
func (q *Queue) Enqueue(d Delivery) (wait func() error) {
	if frameSize(&d) > maxFrame {
		q.refused.Add(1)
		return func() error { return errFrameTooLarge }
	}
	q.mu.Lock()
	if q.closing {
		q.mu.Unlock()
		q.refused.Add(1)
		return func() error { return ErrClosed }
	}
	// The frame goes straight into the writer's buffer (no copy of its
	// own); its length is known once it is there.
	start := len(q.buf)
	q.buf, _ = appendFrame(q.buf, &d)
	n := int64(len(q.buf) - start)
	if q.queued.Load() >= int64(q.cfg.MaxRecords) || q.queuedBytes.Load()+n > q.cfg.MaxBytes {
		q.buf = q.buf[:start]
		q.mu.Unlock()
		q.refused.Add(1)
		return func() error { return ErrFull }
	}
	q.queued.Add(1)
	q.queuedBytes.Add(n)
	r := q.rnd
	first := r == nil
	if first {
		r = &round{done: make(chan struct{})}
		q.rnd = r
	}
	q.mu.Unlock()
	if first {
		// One wakeup of the writer per round: the records after the
		// first join a round the writer was already told of.
		select {
		case q.kick <- struct{}{}:
		default:
		}
	}
	return func() error { return q.await(r) }
}

// round is one group commit of the writer: the records buffered while
// it wrote the one before. done is closed once they are written and
// synced (or failed: err), waking every waiter at once, instead of a
// channel and a send per record.
type round struct {
	done chan struct{}
	err  error // set before done is closed
}

// await waits for an enqueued record's round, at most appendWait.
func (q *Queue) await(r *round) error {
	select {
	case <-r.done:
		return q.settled(r.err)
	default:
	}
	t := time.NewTimer(appendWait)
	defer t.Stop()
	select {
	case <-r.done:
		return q.settled(r.err)
	case <-t.C:
		q.refused.Add(1)
		return ErrSyncTimeout
	}
}

// settled counts a record whose round ended with err.
func (q *Queue) settled(err error) error {
	if err != nil {
		q.refused.Add(1)
		return err
	}
	q.appended.Add(1)
	return nil
}

// writer writes and syncs what Append buffered, one round at a time.
func (q *Queue) writer() {
	defer close(q.writerDone)
	for {
		stopping := false
		select {
		case <-q.kick:
		case <-q.stopWriter:
			stopping = true
		}
		q.mu.Lock()
		buf, r := q.buf, q.rnd
		q.buf, q.rnd = q.spare[:0], nil
		q.mu.Unlock()
		if len(buf) > 0 {
			err := q.write(buf)
			if err != nil {
				// Nothing of this round counts as queued.
				q.unqueue(buf)
			}
			r.err = err
			close(r.done)
		}
		q.spare = buf
		if stopping {
			q.mu.Lock()
			empty := len(q.buf) == 0
			q.mu.Unlock()
			if empty {
				for _, f := range q.files {
					if f != nil {
						_ = f.Close()
					}
				}
				return
			}
			// Appends raced the stop: one more round.
			go func() { q.stopWriter <- struct{}{} }()
		}
	}
}

// unqueue takes a failed round's records out of the counts.
func (q *Queue) unqueue(buf []byte) {
	n := 0
	for off := 0; off+frameHeader <= len(buf); {
		l, _, ok := frameLen(buf[off:])
		if !ok {
			break
		}
		off += frameHeader + l
		n++
	}
	q.queued.Add(-int64(n))
	q.queuedBytes.Add(-int64(len(buf)))
}

// write appends buf to the open segment in every directory in
// parallel and syncs each; a directory whose write fails is dropped
// from the segment. The segment is rotated first when full.
func (q *Queue) write(buf []byte) error {
	if q.rotate || q.curSize >= q.cfg.SegmentBytes {
		// The old segment's end and a copy holding all of it are
		// fixed now, for the sender.
		old, size, from := q.cur, q.curSize, ""
		for i, f := range q.files {
			if f != nil {
				from = q.cfg.Dirs[i]
				break
			}
		}
		q.cur++
		if err := q.newSegment(); err != nil {
			q.cur--
			return err
		}
		q.rotate = false
		q.segMu.Lock()
		q.ends[old] = size
		if from != "" {
			q.from[old] = from
		}
		q.segMu.Unlock()
		q.mu.Lock()
		q.durSeq, q.durOff = q.cur, 0
		q.mu.Unlock()
	}
	errs := q.writeRound(buf)
	ok := 0
	for i, err := range errs {
		if q.files[i] == nil {
			continue
		}
		if err != nil {
			q.log.Warn("notification queue directory dropped from its segment", "dir", q.cfg.Dirs[i], "err", err)
			_ = q.files[i].Close()
			q.files[i] = nil
			continue
		}
		ok++
	}
	if ok == 0 {
		// Every copy failed: a fresh segment next round, where a
		// directory that recovered can take records again.
		q.rotate = true
		return ErrNoCopy
	}
	if q.files[0] == nil || errs[0] != nil {
		// Readers of the open segment go to a copy that has it all.
		for i, f := range q.files {
			if f != nil {
				q.segMu.Lock()
				q.from[q.cur] = q.cfg.Dirs[i]
				q.segMu.Unlock()
				break
			}
		}
	}
	q.curSize += int64(len(buf))
	q.mu.Lock()
	q.durSeq, q.durOff = q.cur, q.curSize
	q.mu.Unlock()
	select {
	case q.senderWake <- struct{}{}:
	default:
	}
	return nil
}

// durable is how far records are synced.
func (q *Queue) durable() (uint64, int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.durSeq, q.durOff
}

// segmentEnd is where the sender stops reading seq: its valid length
// when replayed, the synced end when it is the open segment, and for a
// segment the writer left (rotated) its final size.
func (q *Queue) segmentEnd(seq uint64) (end int64, final bool) {
	ds, do := q.durable()
	q.segMu.Lock()
	e, replayed := q.ends[seq]
	q.segMu.Unlock()
	if replayed {
		return e, true
	}
	if seq == ds {
		return do, false
	}
	// Not yet created (the writer rotates after the sender looked).
	return 0, false
}

// sender reads the records in order, from (seq, off), and hands each
// to its key's lane (pipeline.go), which sends it until the target
// accepts it; the acknowledgements move the cursor and delete segments
// (settleLocked). It never holds more than the window of records.
func (q *Queue) sender(seq uint64, off int64) {
	defer close(q.senderDone)
	var f *os.File
	var rd segReader // buffered frames of f
	fdir := ""
	bad := map[string]bool{} // copies of seq that failed a read
	for _, ch := range q.lanes {
		q.laneWG.Add(1)
		go q.lane(ch)
	}
	defer func() {
		if f != nil {
			_ = f.Close()
		}
		// Lanes stop on stopSender; what they had in Send stays queued.
		q.laneWG.Wait()
		q.ackMu.Lock()
		q.writeCursor(q.ackSeq, q.ackOff)
		q.ackMu.Unlock()
	}()
	open := func() bool {
		if f != nil {
			return true
		}
		dirs := q.cfg.Dirs
		q.segMu.Lock()
		if d, ok := q.from[seq]; ok {
			dirs = append([]string{d}, dirs...)
		}
		q.segMu.Unlock()
		for _, dir := range dirs {
			if bad[dir] {
				continue
			}
			if g, err := os.Open(filepath.Join(dir, segName(seq))); err == nil {
				f, fdir = g, dir
				return true
			}
			bad[dir] = true
		}
		return false
	}
	idle := time.NewTimer(time.Second)
	defer idle.Stop()
	for {
		end, final := q.segmentEnd(seq)
		if off >= end {
			if final && seq < q.currentSeq() {
				// Read to its end: the segment goes once every record
				// in it is acknowledged (its marker settles).
				if f != nil {
					_ = f.Close()
					f, rd = nil, segReader{}
				}
				q.segMu.Lock()
				next := seq + 1
				for _, s := range q.segs {
					if s > seq {
						next = s
						break
					}
				}
				q.segMu.Unlock()
				q.ackMu.Lock()
				q.pend = append(q.pend, &pending{seq: seq, next: next, marker: true, done: true})
				q.settleLocked()
				q.ackMu.Unlock()
				seq, off = next, 0
				clear(bad)
				continue
			}
			// Caught up: the cursor is written once cursorInterval
			// passed since the last write, not at every catch-up (with
			// a fast target that was once per group commit: a file
			// written and renamed per directory for a few records).
			wait := time.Second
			if due := q.cursorDue(); due <= 0 {
				q.flushCursor()
			} else {
				wait = min(wait, due)
			}
			idle.Reset(wait)
			select {
			case <-q.senderWake:
			case <-q.stopSender:
				return
			case <-idle.C:
			}
			continue
		}
		if !open() {
			// No readable copy holds the rest: the segment ends here.
			if !final {
				// The open segment: retry after a while.
				clear(bad)
				select {
				case <-q.stopSender:
					return
				case <-time.After(time.Second):
				}
				continue
			}
			q.log.Warn("notification queue segment unreadable in every directory; its rest is lost", "segment", segName(seq))
			q.segMu.Lock()
			q.ends[seq] = off
			q.segMu.Unlock()
			continue
		}
		d, n, err := rd.frameAt(f, off, end)
		if err != nil {
			// A copy that cannot be read: try the others.
			q.log.Warn("notification queue segment copy unreadable", "segment", segName(seq), "dir", fdir, "err", err)
			_ = f.Close()
			f, rd = nil, segReader{}
			bad[fdir] = true
			continue
		}
		if !q.dispatch(&pending{seq: seq, off: off, n: n, d: d}) {
			return
		}
		off += n
	}
}

func (q *Queue) currentSeq() uint64 {
	s, _ := q.durable()
	return s
}

// deliver sends d until the target accepts it; false when the queue
// is closing. Each lane backs off on its own: a target that is down
// gets at most one attempt per lane per backoff period.
func (q *Queue) deliver(d Delivery) bool {
	wait := q.cfg.RetryMin
	for {
		ctx, cancel := context.WithTimeout(q.sendCtx, q.cfg.SendTimeout)
		t0 := time.Now()
		err := q.cfg.Send(ctx, d)
		cancel()
		if err == nil {
			q.sent.Add(1)
			q.sendNanos.Add(int64(time.Since(t0)))
			empty := ""
			q.lastErr.Store(&empty)
			return true
		}
		q.fails.Add(1)
		msg := err.Error()
		if prev := q.lastErr.Load(); prev == nil || *prev == "" {
			q.log.Warn("notification target refused a record; retrying with backoff", "err", msg)
		}
		q.lastErr.Store(&msg)
		// Exponential backoff with jitter: between half and all of wait.
		sleep := wait/2 + rand.N(wait/2+1)
		select {
		case <-time.After(sleep):
		case <-q.stopSender:
			return false
		}
		wait = min(wait*2, q.cfg.RetryMax)
	}
}

// Stats are the queue's counters.
func (q *Queue) Stats() QueueStats {
	s := QueueStats{Queued: q.queued.Load(), QueuedBytes: q.queuedBytes.Load(), Appended: q.appended.Load(),
		Refused: q.refused.Load(), Sent: q.sent.Load(), Failed: q.fails.Load(),
		SendSeconds: time.Duration(q.sendNanos.Load()).Seconds()}
	if e := q.lastErr.Load(); e != nil {
		s.LastError = *e
	}
	return s
}

// Close stops accepting records, writes what was buffered, stops the
// sender (an in-flight Send is cancelled; its record stays queued) and
// records the delivered position. What is queued is sent after the
// next start.
func (q *Queue) Close() error {
	q.mu.Lock()
	if q.closing {
		q.mu.Unlock()
		return nil
	}
	q.closing = true
	q.mu.Unlock()
	q.stopWriter <- struct{}{}
	<-q.writerDone
	close(q.stopSender)
	q.sendCancel()
	<-q.senderDone
	return nil
}
