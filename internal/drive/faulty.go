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
	OpReadFormat  Op = "ReadFormat"
	OpWriteFormat Op = "WriteFormat"
	OpDiskInfo    Op = "DiskInfo"
	OpMakeVol     Op = "MakeVol"
	OpStatVol     Op = "StatVol"
	OpListVols    Op = "ListVols"
	OpDeleteVol   Op = "DeleteVol"
	OpReadFile    Op = "ReadFile"
	OpWriteFile   Op = "WriteFile"
	OpCreateFile  Op = "CreateFile"
	OpWrite       Op = "Write" // one Write on a FileWriter
	OpSync        Op = "Sync"  // FileWriter.Close, which fsyncs
	OpOpenFile    Op = "OpenFile"
	OpRead        Op = "Read" // one Read on an opened file
	OpDelete      Op = "Delete"
	OpRename      Op = "Rename"
	OpListDir     Op = "ListDir"
	OpCleanTmp    Op = "CleanTmp"
)

// WriteOps are the operations that change a drive; a fault limited to
// them models a full or read-only drive whose reads still work.
var WriteOps = []Op{OpWriteFormat, OpMakeVol, OpDeleteVol, OpWriteFile, OpCreateFile,
	OpWrite, OpSync, OpDelete, OpRename}

// Injected errors with the same classification a Local drive gives the
// real thing, so the engine cannot tell them apart.
var (
	ErrInjectedEIO    = fmt.Errorf("%w: injected: %v", ErrDriveFaulty, syscall.EIO)
	ErrInjectedENOSPC = fmt.Errorf("%w: injected: %v", ErrDriveFull, syscall.ENOSPC)
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

// MakeVol implements Drive.
func (f *Faulty) MakeVol(ctx context.Context, vol string) error {
	if err := f.check(OpMakeVol); err != nil {
		return err
	}
	return f.inner.MakeVol(ctx, vol)
}

// StatVol implements Drive.
func (f *Faulty) StatVol(ctx context.Context, vol string) (VolInfo, error) {
	if err := f.check(OpStatVol); err != nil {
		return VolInfo{}, err
	}
	return f.inner.StatVol(ctx, vol)
}

// ListVols implements Drive.
func (f *Faulty) ListVols(ctx context.Context) ([]VolInfo, error) {
	if err := f.check(OpListVols); err != nil {
		return nil, err
	}
	return f.inner.ListVols(ctx)
}

// DeleteVol implements Drive.
func (f *Faulty) DeleteVol(ctx context.Context, vol string, force bool) error {
	if err := f.check(OpDeleteVol); err != nil {
		return err
	}
	return f.inner.DeleteVol(ctx, vol, force)
}

// ReadFile implements Drive.
func (f *Faulty) ReadFile(ctx context.Context, vol, path string) ([]byte, error) {
	if err := f.check(OpReadFile); err != nil {
		return nil, err
	}
	return f.inner.ReadFile(ctx, vol, path)
}

// WriteFile implements Drive.
func (f *Faulty) WriteFile(ctx context.Context, vol, path string, data []byte) error {
	if err := f.check(OpWriteFile); err != nil {
		return err
	}
	return f.inner.WriteFile(ctx, vol, path, data)
}

// CreateFile implements Drive.
func (f *Faulty) CreateFile(ctx context.Context, vol, path string) (FileWriter, error) {
	if err := f.check(OpCreateFile); err != nil {
		return nil, err
	}
	w, err := f.inner.CreateFile(ctx, vol, path)
	if err != nil {
		return nil, err
	}
	return &faultyWriter{f: f, w: w}, nil
}

// OpenFile implements Drive.
func (f *Faulty) OpenFile(ctx context.Context, vol, path string, offset int64) (io.ReadCloser, error) {
	if err := f.check(OpOpenFile); err != nil {
		return nil, err
	}
	r, err := f.inner.OpenFile(ctx, vol, path, offset)
	if err != nil {
		return nil, err
	}
	return &faultyReader{f: f, r: r}, nil
}

// Delete implements Drive.
func (f *Faulty) Delete(ctx context.Context, vol, path string, recursive bool) error {
	if err := f.check(OpDelete); err != nil {
		return err
	}
	return f.inner.Delete(ctx, vol, path, recursive)
}

// Rename implements Drive.
func (f *Faulty) Rename(ctx context.Context, srcVol, srcPath, dstVol, dstPath string) error {
	if err := f.check(OpRename); err != nil {
		return err
	}
	return f.inner.Rename(ctx, srcVol, srcPath, dstVol, dstPath)
}

// ListDir implements Drive.
func (f *Faulty) ListDir(ctx context.Context, vol, dir string) ([]string, error) {
	if err := f.check(OpListDir); err != nil {
		return nil, err
	}
	return f.inner.ListDir(ctx, vol, dir)
}

// CleanTmp implements Drive.
func (f *Faulty) CleanTmp(ctx context.Context) error {
	if err := f.check(OpCleanTmp); err != nil {
		return err
	}
	return f.inner.CleanTmp(ctx)
}

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
