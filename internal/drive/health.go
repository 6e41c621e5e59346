package drive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of HealthConfig.
const (
	DefaultOpTimeout     = 15 * time.Second
	DefaultProbeInterval = 2 * time.Second
)

// HealthConfig tunes a Health wrapper.
type HealthConfig struct {
	// OpTimeout bounds every operation (each Write and Read of a stream
	// too); 0 means DefaultOpTimeout. An operation that runs past it
	// fails with ErrDriveFaulty and takes the drive offline.
	OpTimeout time.Duration
	// ProbeInterval is how often an offline drive is re-probed; 0 means
	// DefaultProbeInterval.
	ProbeInterval time.Duration
	// Logger receives online/offline transitions; nil discards them.
	Logger *slog.Logger
}

// Health wraps a Drive with per-operation deadlines and an online/offline
// state. A syscall stuck in the kernel cannot be cancelled, so every
// operation runs on a worker goroutine (pooled per drive) and the caller
// stops waiting at the deadline; the drive then goes offline. I/O errors (ErrDriveFaulty) take
// it offline too. Offline, operations fail at once with ErrDriveFaulty,
// except the identity operations ReadFormat, WriteFormat and DiskInfo,
// which pass through (deadline-bounded) so the engine can
// recognise and format a replaced drive. A background probe reads the
// format record every ProbeInterval and brings the drive back online when
// it answers. ENOSPC (ErrDriveFull) does not take a drive offline: a full
// drive still serves reads; but an index that pebble stopped on ENOSPC
// does (its error is also ErrDriveFaulty), and the probe's ReadFormat
// reopens it once space is free (Local.reopenBroken).
type Health struct {
	inner Drive
	cfg   HealthConfig
	log   *slog.Logger

	online   atomic.Bool
	faults   atomic.Int64
	timeouts atomic.Int64

	mu      sync.Mutex
	lastErr error
	since   time.Time
	probing bool
	closed  bool
	stop    chan struct{}
	wg      sync.WaitGroup

	workers workerPool
	// inflight counts deadline-bound calls being waited for; watching
	// is set while the watchdog goroutine runs.
	inflight atomic.Int64
	watching atomic.Bool
	epoch    time.Time
}

// NewHealth wraps d; the drive starts online. Close stops the prober.
func NewHealth(d Drive, cfg HealthConfig) *Health {
	if cfg.OpTimeout <= 0 {
		cfg.OpTimeout = DefaultOpTimeout
	}
	if cfg.ProbeInterval <= 0 {
		cfg.ProbeInterval = DefaultProbeInterval
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &Health{inner: d, cfg: cfg, log: log, stop: make(chan struct{}), since: time.Now(), epoch: time.Now()}
	h.online.Store(true)
	return h
}

// HealthState is a snapshot of a drive's health.
type HealthState struct {
	Online bool
	// Since is when the drive last changed state.
	Since time.Time
	// LastError is the error that took the drive offline, if any.
	LastError string
	// Faults and Timeouts count I/O errors and deadline overruns seen.
	Faults, Timeouts int64
}

// Online reports whether the drive is serving operations.
func (h *Health) Online() bool { return h.online.Load() }

// State returns a snapshot of the drive's health.
func (h *Health) State() HealthState {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := HealthState{Online: h.online.Load(), Since: h.since, Faults: h.faults.Load(), Timeouts: h.timeouts.Load()}
	if h.lastErr != nil {
		s.LastError = h.lastErr.Error()
	}
	return s
}

// Inner returns the wrapped drive.
func (h *Health) Inner() Drive { return h.inner }

// Close stops the background prober, closes the wrapped drive (within
// the deadline: a drive stuck in the kernel is left behind) and ends
// the idle operation workers. Later operations fail.
func (h *Health) Close() error {
	h.mu.Lock()
	first := !h.closed
	if first {
		h.closed = true
		close(h.stop)
	}
	h.mu.Unlock()
	h.wg.Wait()
	var err error
	if first {
		err, _ = h.call(opClose, false, h.inner.Close)
	}
	h.workers.close()
	return err
}

// opClose names Close in deadline messages; it is not a fault point.
const opClose Op = "Close"

func (h *Health) String() string { return h.inner.String() }

// setOffline records err and starts the prober unless one runs.
func (h *Health) setOffline(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastErr = err
	if h.online.Swap(false) {
		h.since = time.Now()
		h.log.Warn("drive offline", "drive", h.inner.String(), "err", err)
	}
	if !h.probing && !h.closed {
		h.probing = true
		h.wg.Add(1)
		go h.probe()
	}
}

func (h *Health) setOnline() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.online.Swap(true) {
		h.since = time.Now()
		h.log.Warn("drive back online", "drive", h.inner.String())
	}
}

// probe re-reads the format record until the drive answers or Close.
func (h *Health) probe() {
	defer h.wg.Done()
	t := time.NewTicker(h.cfg.ProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			h.mu.Lock()
			h.probing = false
			h.mu.Unlock()
			return
		case <-t.C:
		}
		// ReadFormat marks the drive online itself when it succeeds.
		_, err := h.ReadFormat(context.Background())
		if err == nil {
			h.mu.Lock()
			// A failure between the probe and here may have asked for
			// another prober; this one keeps going in that case.
			if h.online.Load() {
				h.probing = false
				h.mu.Unlock()
				return
			}
			h.mu.Unlock()
		}
	}
}

// observe takes the drive offline on I/O errors.
func (h *Health) observe(err error) {
	if err != nil && errors.Is(err, ErrDriveFaulty) {
		h.faults.Add(1)
		h.setOffline(err)
	}
}

func (h *Health) offlineErr(op Op) error {
	h.mu.Lock()
	last := h.lastErr
	h.mu.Unlock()
	return fmt.Errorf("drive %s: %s: %w: offline since %s (%v)", h.inner, op, ErrDriveFaulty,
		h.State().Since.Format(time.RFC3339), last)
}

// call runs fn with the deadline. gate refuses the call while offline.
// On timeout fn keeps running on its worker (it cannot be stopped);
// done is closed when it finally returns, so stream wrappers can defer
// cleanup of the underlying file until then.
//
// The deadline is kept by the drive's watchdog, not by a timer per call:
// a GET of a small object makes 12 drive calls, and arming a timer that
// a blocked select adds to the runtime's timer heap (a lock, and a stack
// growth of the calling goroutine) cost about a tenth of its CPU.
func (h *Health) call(op Op, gate bool, fn func() error) (err error, done <-chan struct{}) {
	if gate && !h.online.Load() {
		return h.offlineErr(op), closedChan
	}
	w := h.workers.get()
	start := h.now()
	w.running.Store(start)
	h.watchCalls()
	defer h.inflight.Add(-1)
	w.jobs <- fn
	select {
	case err := <-w.res:
		if !w.running.CompareAndSwap(start, 0) {
			// The watchdog gave up on the call as it finished: take its
			// token, so the worker's next call does not see it.
			<-w.abort
			w.running.Store(0)
		}
		h.workers.put(w)
		h.observe(err)
		return err, closedChan
	case <-w.abort:
		h.timeouts.Add(1)
		finished := make(chan struct{})
		go func() {
			<-w.res
			w.running.Store(0)
			close(finished)
			h.workers.put(w)
		}()
		err := fmt.Errorf("drive %s: %s did not finish within %v: %w", h.inner, op, h.cfg.OpTimeout, ErrDriveFaulty)
		h.setOffline(err)
		return err, finished
	}
}

// now is the monotonic time in ns since the drive was wrapped, plus one:
// a call's start, never 0 (no call) or abortedCall, and untouched by
// changes of the wall clock.
func (h *Health) now() int64 { return int64(time.Since(h.epoch)) + 1 }

// watchCalls counts a call in flight and starts the watchdog unless it
// runs; the caller decrements inflight when it stops waiting.
func (h *Health) watchCalls() {
	h.inflight.Add(1)
	if !h.watching.Load() && h.watching.CompareAndSwap(false, true) {
		go h.watch()
	}
}

// watchInterval is how often the watchdog looks for calls past the
// deadline: a call times out between OpTimeout and OpTimeout plus this.
func (h *Health) watchInterval() time.Duration {
	return min(max(h.cfg.OpTimeout/16, time.Millisecond), time.Second)
}

// watch gives up on every call running past the deadline, while calls
// are in flight; it ends when none are, and the next call starts it
// again (an idle server has no watchdog ticking).
func (h *Health) watch() {
	t := time.NewTicker(h.watchInterval())
	defer t.Stop()
	for range t.C {
		h.workers.abortOverdue(h.now() - int64(h.cfg.OpTimeout))
		if h.inflight.Load() == 0 {
			h.watching.Store(false)
			// A call that began before the store saw the watchdog
			// running; if one did, go on watching unless it started
			// another.
			if h.inflight.Load() == 0 || !h.watching.CompareAndSwap(false, true) {
				return
			}
		}
	}
}

// closedChan is the done channel of every call that has finished.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// maxIdleWorkers bounds the idle operation workers a drive keeps: enough
// for every concurrent PUT's shard stream to find one waiting.
const maxIdleWorkers = 32

// opWorker is a long-lived goroutine that runs a drive's operations one
// at a time, so the caller can stop waiting at the deadline. Reusing it
// instead of starting a goroutine per operation keeps its grown stack
// and its channels: one shard write costs two channel hand-offs, not a
// goroutine start, a stack copy and two channels.
type opWorker struct {
	jobs chan func() error
	res  chan error // buffered: a worker whose caller gave up never blocks
	// running is the start (Health.now) of the deadline-bound call the
	// worker runs, 0 when none, abortedCall once the watchdog gave up
	// on it; the watchdog then sends one token on abort.
	running atomic.Int64
	abort   chan struct{}
}

// abortedCall marks a worker's call the watchdog gave up on.
const abortedCall = -1

func (w *opWorker) run() {
	for fn := range w.jobs {
		w.res <- fn()
	}
}

// workerPool holds one drive's idle operation workers and knows all
// its live ones, for the watchdog.
type workerPool struct {
	mu     sync.Mutex
	idle   []*opWorker
	live   map[*opWorker]struct{}
	closed bool
}

func (p *workerPool) get() *opWorker {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return w
	}
	w := &opWorker{jobs: make(chan func() error), res: make(chan error, 1), abort: make(chan struct{}, 1)}
	if p.live == nil {
		p.live = make(map[*opWorker]struct{})
	}
	p.live[w] = struct{}{}
	p.mu.Unlock()
	go w.run()
	return w
}

// abortOverdue gives up on every call that started before deadline
// (Health.now): it claims the call (so its caller, if the result comes at
// the same time, knows to take the token) and wakes the caller.
func (p *workerPool) abortOverdue(deadline int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for w := range p.live {
		if s := w.running.Load(); s > 0 && s < deadline && w.running.CompareAndSwap(s, abortedCall) {
			w.abort <- struct{}{}
		}
	}
}

// put parks w for reuse, or ends it when the pool is full or closed.
func (p *workerPool) put(w *opWorker) {
	p.mu.Lock()
	if !p.closed && len(p.idle) < maxIdleWorkers {
		p.idle = append(p.idle, w)
		w = nil
	} else {
		delete(p.live, w)
	}
	p.mu.Unlock()
	if w != nil {
		close(w.jobs)
	}
}

// close ends the idle workers; later calls start (and end) their own.
func (p *workerPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	for _, w := range idle {
		delete(p.live, w)
	}
	p.mu.Unlock()
	for _, w := range idle {
		close(w.jobs)
	}
}

func (h *Health) do(op Op, fn func() error) error {
	err, _ := h.call(op, true, fn)
	return err
}

// ReadFormat implements Drive; it passes through while offline and, when
// it succeeds, brings the drive back online.
func (h *Health) ReadFormat(ctx context.Context) (Format, error) {
	var f Format
	err, _ := h.call(OpReadFormat, false, func() (err error) { f, err = h.inner.ReadFormat(ctx); return })
	if err != nil {
		return Format{}, err
	}
	h.setOnline()
	return f, nil
}

// WriteFormat implements Drive; it passes through while offline.
func (h *Health) WriteFormat(ctx context.Context, f Format) error {
	err, _ := h.call(OpWriteFormat, false, func() error { return h.inner.WriteFormat(ctx, f) })
	return err
}

// DiskInfo implements Drive; it passes through while offline.
func (h *Health) DiskInfo(ctx context.Context) (DiskInfo, error) {
	var di DiskInfo
	err, _ := h.call(OpDiskInfo, false, func() (err error) { di, err = h.inner.DiskInfo(ctx); return })
	if err != nil {
		return DiskInfo{}, err
	}
	return di, nil
}

// Run runs fn with the wrapped drive as one operation: one hand-off to
// the drive's worker and one deadline for every call fn makes. A read
// whose second lookup depends on the first (an object's record, then its
// inline data) pays for one hand-off instead of two. fn's error counts
// as the operation's (ErrDriveFaulty takes the drive offline). On a
// timeout fn keeps running on the worker: whatever it writes must not
// be read after Run returned an error.
func (h *Health) Run(op Op, fn func(d Drive) error) error {
	return h.do(op, func() error { return fn(h.inner) })
}

// Unwrap returns the drive h wraps (to learn what it can do, as
// NodeRecordReader; calls go through h).
func (h *Health) Unwrap() Drive { return h.inner }

// Get implements Drive.
func (h *Health) Get(ctx context.Context, t Table, key string) ([]byte, error) {
	var v []byte
	if err := h.do(OpGet, func() (err error) { v, err = h.inner.Get(ctx, t, key); return }); err != nil {
		return nil, err
	}
	return v, nil
}

// GetCached implements MemoryReader while the drive is online and the
// drive it wraps is one.
func (h *Health) GetCached(t Table, key string) ([]byte, bool) {
	if !h.online.Load() {
		return nil, false
	}
	if mr, ok := h.inner.(MemoryReader); ok {
		return mr.GetCached(t, key)
	}
	return nil, false
}

// Changes implements ChangeCounter while the drive is online and the
// drive it wraps is one.
func (h *Health) Changes(bucket string) (ChangeMark, bool) {
	if !h.online.Load() {
		return ChangeMark{}, false
	}
	if cc, ok := h.inner.(ChangeCounter); ok {
		return cc.Changes(bucket)
	}
	return ChangeMark{}, false
}

// Apply implements Drive.
func (h *Health) Apply(ctx context.Context, b *Batch) error {
	return h.do(OpApply, func() error { return h.inner.Apply(ctx, b) })
}

// Scan implements Drive.
func (h *Health) Scan(ctx context.Context, t Table, q ScanQuery) ([]Entry, error) {
	var es []Entry
	if err := h.do(OpScan, func() (err error) { es, err = h.inner.Scan(ctx, t, q); return }); err != nil {
		return nil, err
	}
	return es, nil
}

// CreateShard implements Drive.
func (h *Health) CreateShard(ctx context.Context, ref ShardRef) (FileWriter, error) {
	var w FileWriter
	err, done := h.call(OpCreateShard, true, func() (err error) { w, err = h.inner.CreateShard(ctx, ref); return })
	if err != nil {
		// Past the deadline the create may still succeed; its file is
		// then aborted when it does, not left open.
		go func() {
			<-done
			if w != nil {
				w.Abort()
			}
		}()
		return nil, err
	}
	return &healthWriter{h: h, w: w}, nil
}

// OpenShard implements Drive.
func (h *Health) OpenShard(ctx context.Context, ref ShardRef, offset int64) (io.ReadCloser, error) {
	var r io.ReadCloser
	err, done := h.call(OpOpenShard, true, func() (err error) { r, err = h.inner.OpenShard(ctx, ref, offset); return })
	if err != nil {
		// A late open is closed when it arrives (a file descriptor, or a
		// remote drive's request).
		go func() {
			<-done
			if r != nil {
				r.Close()
			}
		}()
		return nil, err
	}
	return &healthReader{h: h, r: r}, nil
}

// DeleteShards implements Drive.
func (h *Health) DeleteShards(ctx context.Context, refs []ShardRef) error {
	return h.do(OpDeleteShards, func() error { return h.inner.DeleteShards(ctx, refs) })
}

// errWalkAbandoned stops a walk whose caller gave up at the deadline.
var errWalkAbandoned = errors.New("walk abandoned after its deadline")

// WalkShards implements Drive. A walk of a large drive can take longer
// than OpTimeout, so the deadline bounds the drive's time between two
// files (progress), not the whole walk; time spent in fn does not
// count. After a deadline overrun fn is never called again.
func (h *Health) WalkShards(ctx context.Context, fn func(ShardFile) error) error {
	if !h.online.Load() {
		return h.offlineErr(OpWalkShards)
	}
	var (
		mu        sync.Mutex
		last      = time.Now()
		inFn      bool
		abandoned bool
	)
	wrapped := func(sf ShardFile) error {
		mu.Lock()
		if abandoned {
			mu.Unlock()
			return errWalkAbandoned
		}
		inFn = true
		mu.Unlock()
		err := fn(sf)
		mu.Lock()
		inFn, last = false, time.Now()
		mu.Unlock()
		return err
	}
	w := h.workers.get()
	w.jobs <- func() error { return h.inner.WalkShards(ctx, wrapped) }
	tick := time.NewTicker(min(h.cfg.OpTimeout/4+time.Millisecond, 250*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case err := <-w.res:
			h.workers.put(w)
			h.observe(err)
			return err
		case <-tick.C:
		}
		mu.Lock()
		stuck := !inFn && time.Since(last) > h.cfg.OpTimeout
		if stuck {
			abandoned = true
		}
		mu.Unlock()
		if stuck {
			h.timeouts.Add(1)
			go func() {
				<-w.res
				h.workers.put(w)
			}()
			err := fmt.Errorf("drive %s: %s made no progress within %v: %w", h.inner, OpWalkShards, h.cfg.OpTimeout, ErrDriveFaulty)
			h.setOffline(err)
			return err
		}
	}
}

// healthWriter applies the deadline to every Write and to Close (fsync).
// After a deadline overrun the writer is dead: later calls fail and the
// underlying file is aborted once the stuck call returns, so nothing
// touches the file concurrently. A stuck Write may still read the
// caller's buffer after it returned; the file it writes is discarded.
type healthWriter struct {
	h    *Health
	w    FileWriter
	dead <-chan struct{} // set after a timeout: closed when the stuck call ends
	err  error
}

func (w *healthWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	var n int
	err, done := w.h.call(OpWrite, true, func() (err error) { n, err = w.w.Write(p); return })
	if err != nil {
		w.err = err
		if !isClosed(done) {
			w.dead = done
		}
		return 0, err
	}
	return n, nil
}

// WriteBuffers applies the deadline to one vectored write.
func (w *healthWriter) WriteBuffers(bufs [][]byte) error {
	if w.err != nil {
		return w.err
	}
	err, done := w.h.call(OpWrite, true, func() error { return WriteBuffers(w.w, bufs) })
	if err != nil {
		w.err = err
		if !isClosed(done) {
			w.dead = done
		}
		return err
	}
	return nil
}

func (w *healthWriter) Close() error {
	if w.err != nil {
		w.Abort()
		return w.err
	}
	err, done := w.h.call(OpSync, true, w.w.Close)
	if err != nil {
		w.err = err
		if !isClosed(done) {
			w.dead = done
		} else {
			w.w.Abort()
		}
	}
	return err
}

func (w *healthWriter) Abort() {
	if w.dead != nil {
		dead, inner := w.dead, w.w
		go func() { <-dead; inner.Abort() }()
		return
	}
	w.w.Abort()
}

// healthReader applies the deadline to every Read. It reads into its
// own buffer and copies on success: a Read stuck past its deadline must
// not write into a caller buffer that has been reused for other data.
type healthReader struct {
	h    *Health
	r    io.ReadCloser
	buf  []byte
	dead <-chan struct{}
	err  error
}

// File passes drive.FileReader through when the inner reader is a local
// file and this reader has not failed. Reads from the file bypass the
// deadline; a server sending it is bounded by its peer's deadline.
func (r *healthReader) File() (*os.File, int64, error) {
	fr, ok := r.r.(FileReader)
	if !ok || r.err != nil {
		return nil, 0, errNoFile
	}
	return fr.File()
}

// errNoFile answers File of a reader with no local file behind it.
var errNoFile = errors.New("no local file behind this reader")

func (r *healthReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if cap(r.buf) < len(p) {
		r.buf = make([]byte, len(p))
	}
	buf := r.buf[:len(p)]
	var n int
	var rerr error
	err, done := r.h.call(OpRead, true, func() error {
		n, rerr = r.r.Read(buf)
		if rerr == io.EOF {
			return nil // EOF is not a drive fault
		}
		return rerr
	})
	if err != nil {
		r.err = err
		if !isClosed(done) {
			r.dead = done
			r.buf = nil // the stuck Read owns it now
		}
		return 0, err
	}
	copy(p, buf[:n])
	return n, rerr
}

// ReadFull implements DirectReader: one call on the drive's worker
// fills every buffer, reading straight into them.
func (r *healthReader) ReadFull(bufs ...[]byte) error {
	if r.err != nil {
		return r.err
	}
	var rerr error
	err, done := r.h.call(OpRead, true, func() error {
		if vr, ok := r.r.(vectorReader); ok {
			rerr = vr.readFullv(bufs)
		} else {
			rerr = readFullEach(r.r, bufs)
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			return nil // a short shard is the caller's finding, not a drive fault
		}
		return rerr
	})
	if err != nil {
		r.err = err
		if !isClosed(done) {
			r.dead = done // the caller's buffers are the stuck read's now
			r.err = fmt.Errorf("%w: %w", ErrBufferAbandoned, err)
		}
		return r.err
	}
	return rerr
}

// vectorReader is a reader that fills several buffers with one system
// call (a local shard file's preadv).
type vectorReader interface {
	readFullv(bufs [][]byte) error
}

// readFullEach fills bufs in turn from r, as io.ReadFull would fill
// their concatenation.
func readFullEach(r io.Reader, bufs [][]byte) error {
	total := 0
	for _, b := range bufs {
		n, err := io.ReadFull(r, b)
		total += n
		if err != nil {
			if err == io.EOF && total > 0 {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

func (r *healthReader) Close() error {
	if r.dead != nil {
		dead, inner := r.dead, r.r
		go func() { <-dead; inner.Close() }()
		return nil
	}
	return r.r.Close()
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
