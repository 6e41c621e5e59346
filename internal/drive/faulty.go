package drive

import (
	"context"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"
)

// Op names one kind of drive operation for fault injection. Streaming
// writes and reads have their own ops (OpWrite, OpSync, OpRead) so a
// fault can hit the nth chunk of a shard file or its fsync.
type Op string

// The operations a Faulty drive can fail.
const (
	OpReadFormat   Op = "ReadFormat"
	OpWriteFormat  Op = "WriteFormat"
	OpDiskInfo     Op = "DiskInfo"
	OpGet          Op = "Get"
	OpApply        Op = "Apply"
	OpScan         Op = "Scan"
	OpCreateShard  Op = "CreateShard"
	OpWrite        Op = "Write" // one Write (or WriteBuffers) on a FileWriter
	OpSync         Op = "Sync"  // FileWriter.Close, which syncs
	OpOpenShard    Op = "OpenShard"
	OpRead         Op = "Read" // one Read on an opened shard
	OpDeleteShards Op = "DeleteShards"
	OpWalkShards   Op = "WalkShards"
)

// WriteOps are the operations that change a drive; a fault limited to
// them models a full or read-only drive whose reads still work.
var WriteOps = []Op{OpWriteFormat, OpApply, OpCreateShard, OpWrite, OpSync, OpDeleteShards}

// Injected errors with the same classification a Local drive gives the
// real thing, so the engine cannot tell them apart.
var (
	ErrInjectedEIO    = fmt.Errorf("%w: injected: %v", ErrDriveFaulty, syscall.EIO)
	ErrInjectedENOSPC = fmt.Errorf("%w: injected: %w", ErrDriveFull, syscall.ENOSPC)
)

// Fault describes one injected misbehaviour. A call matches when its op
// is in Ops (or Ops is empty); the first After matching calls pass, the
// next Times (0 = every later one) get the fault.
type Fault struct {
	Ops   []Op
	After int
	Times int
	// Err is returned instead of performing the call (nil with Delay
	// set means: delay, then perform the call normally).
	Err error
	// Delay sleeps before the call (a slow drive, a slow fsync).
	Delay time.Duration
	// Hang blocks the call until the fault is removed, ignoring the
	// context the way a stuck syscall does; the call then fails with
	// ErrDriveFaulty without touching the caller's buffers.
	Hang bool
	// Every, when above 1, hits only every Every-th matching call after
	// the first After (a failing disk: 1 call in Every); the others pass
	// to the next fault or the drive.
	Every int
}

type faultState struct {
	Fault
	seen, hit int
	release   chan struct{}
}

// Faulty wraps a Drive and injects faults into it: errors that are hard
// to make for real on a test machine (EIO on the nth write, ENOSPC, a
// hung or slow fsync). Tests running as root cannot use chmod 000 to make
// a drive unreadable, so this wrapper stands in for it. Safe for
// concurrent use.
type Faulty struct {
	inner Drive

	mu     sync.Mutex
	faults []*faultState
	calls  map[Op]int
}

// NewFaulty wraps d; with no faults injected it behaves exactly like d.
func NewFaulty(d Drive) *Faulty { return &Faulty{inner: d, calls: map[Op]int{}} }

// Inner returns the wrapped drive.
func (f *Faulty) Inner() Drive { return f.inner }

// Inject adds a fault and returns the function that removes it (which
// also releases calls it hangs).
func (f *Faulty) Inject(fault Fault) (remove func()) {
	st := &faultState{Fault: fault, release: make(chan struct{})}
	f.mu.Lock()
	f.faults = append(f.faults, st)
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			for i, s := range f.faults {
				if s == st {
					f.faults = append(f.faults[:i], f.faults[i+1:]...)
					break
				}
			}
			f.mu.Unlock()
			close(st.release)
		})
	}
}

// Clear removes every fault and releases hung calls.
func (f *Faulty) Clear() {
	f.mu.Lock()
	faults := f.faults
	f.faults = nil
	f.mu.Unlock()
	for _, s := range faults {
		close(s.release)
	}
}

// Calls reports how many calls of op the drive has seen.
func (f *Faulty) Calls(op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// Hits reports how many calls faults have hit so far, over all faults
// still injected.
func (f *Faulty) Hits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, s := range f.faults {
		n += s.hit
	}
	return n
}

// check applies the faults matching op; a non-nil error means the call
// must not be performed.
func (f *Faulty) check(op Op) error {
	f.mu.Lock()
	f.calls[op]++
	var hit *faultState
	for _, s := range f.faults {
		if !s.matches(op) {
			continue
		}
		s.seen++
		if s.seen <= s.After || (s.Times > 0 && s.hit >= s.Times) {
			continue
		}
		if s.Every > 1 && (s.seen-s.After)%s.Every != 0 {
			continue
		}
		s.hit++
		hit = s
		break
	}
	f.mu.Unlock()
	if hit == nil {
		return nil
	}
	if hit.Delay > 0 {
		select {
		case <-time.After(hit.Delay):
		case <-hit.release:
		}
	}
	if hit.Hang {
		<-hit.release
		return fmt.Errorf("%w: injected hang on %s released", ErrDriveFaulty, op)
	}
	return hit.Err
}

func (s *faultState) matches(op Op) bool {
	if len(s.Ops) == 0 {
		return true
	}
	for _, o := range s.Ops {
		if o == op {
			return true
		}
	}
	return false
}

func (f *Faulty) String() string { return f.inner.String() }

// ReadFormat implements Drive.
func (f *Faulty) ReadFormat(ctx context.Context) (Format, error) {
	if err := f.check(OpReadFormat); err != nil {
		return Format{}, err
	}
	return f.inner.ReadFormat(ctx)
}

// WriteFormat implements Drive.
func (f *Faulty) WriteFormat(ctx context.Context, fm Format) error {
	if err := f.check(OpWriteFormat); err != nil {
		return err
	}
	return f.inner.WriteFormat(ctx, fm)
}

// DiskInfo implements Drive.
func (f *Faulty) DiskInfo(ctx context.Context) (DiskInfo, error) {
	if err := f.check(OpDiskInfo); err != nil {
		return DiskInfo{}, err
	}
	return f.inner.DiskInfo(ctx)
}

// Get implements Drive.
func (f *Faulty) Get(ctx context.Context, t Table, key string) ([]byte, error) {
	if err := f.check(OpGet); err != nil {
		return nil, err
	}
	return f.inner.Get(ctx, t, key)
}

// Apply implements Drive.
func (f *Faulty) Apply(ctx context.Context, b *Batch) error {
	if err := f.check(OpApply); err != nil {
		return err
	}
	return f.inner.Apply(ctx, b)
}

// Scan implements Drive.
func (f *Faulty) Scan(ctx context.Context, t Table, q ScanQuery) ([]Entry, error) {
	if err := f.check(OpScan); err != nil {
		return nil, err
	}
	return f.inner.Scan(ctx, t, q)
}

// CreateShard implements Drive.
func (f *Faulty) CreateShard(ctx context.Context, ref ShardRef) (FileWriter, error) {
	if err := f.check(OpCreateShard); err != nil {
		return nil, err
	}
	w, err := f.inner.CreateShard(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &faultyWriter{f: f, w: w}, nil
}

// OpenShard implements Drive.
func (f *Faulty) OpenShard(ctx context.Context, ref ShardRef, offset int64) (io.ReadCloser, error) {
	if err := f.check(OpOpenShard); err != nil {
		return nil, err
	}
	r, err := f.inner.OpenShard(ctx, ref, offset)
	if err != nil {
		return nil, err
	}
	return &faultyReader{f: f, r: r}, nil
}

// DeleteShards implements Drive.
func (f *Faulty) DeleteShards(ctx context.Context, refs []ShardRef) error {
	if err := f.check(OpDeleteShards); err != nil {
		return err
	}
	return f.inner.DeleteShards(ctx, refs)
}

// WalkShards implements Drive; a fault hits the walk as a whole, before
// it starts.
func (f *Faulty) WalkShards(ctx context.Context, fn func(ShardFile) error) error {
	if err := f.check(OpWalkShards); err != nil {
		return err
	}
	return f.inner.WalkShards(ctx, fn)
}

// Close implements Drive: it closes the wrapped drive; faults do not
// apply.
func (f *Faulty) Close() error { return f.inner.Close() }

type faultyWriter struct {
	f *Faulty
	w FileWriter
}

func (w *faultyWriter) Write(p []byte) (int, error) {
	if err := w.f.check(OpWrite); err != nil {
		return 0, err
	}
	return w.w.Write(p)
}

func (w *faultyWriter) WriteBuffers(bufs [][]byte) error {
	if err := w.f.check(OpWrite); err != nil {
		return err
	}
	return WriteBuffers(w.w, bufs)
}

func (w *faultyWriter) Close() error {
	if err := w.f.check(OpSync); err != nil {
		w.w.Abort()
		return err
	}
	return w.w.Close()
}

func (w *faultyWriter) Abort() { w.w.Abort() }

type faultyReader struct {
	f *Faulty
	r io.ReadCloser
}

func (r *faultyReader) Read(p []byte) (int, error) {
	if err := r.f.check(OpRead); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

func (r *faultyReader) Close() error { return r.r.Close() }
