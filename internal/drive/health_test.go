package drive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// An I/O error takes the drive offline; ops then fail fast; the prober
// brings it back once the fault is gone.
func TestHealthOfflineAndBack(t *testing.T) {
	ctx := context.Background()
	f := NewFaulty(newLocal(t))
	h := NewHealth(f, HealthConfig{OpTimeout: time.Second, ProbeInterval: 10 * time.Millisecond})
	defer h.Close()
	put(t, h, "a", "1")
	remove := f.Inject(Fault{Err: ErrInjectedEIO})
	if _, err := h.Get(ctx, TableObjects, "a"); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("want fault, got %v", err)
	}
	if h.Online() {
		t.Fatal("drive still online after EIO")
	}
	before := f.Calls(OpGet)
	if _, err := h.Get(ctx, TableObjects, "a"); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("offline drive: %v", err)
	}
	if f.Calls(OpGet) != before {
		t.Fatal("offline drive was still asked to read")
	}
	if err := h.WalkShards(ctx, func(ShardFile) error { return nil }); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("offline walk: %v", err)
	}
	remove()
	waitFor(t, "drive back online", h.Online)
	if b, err := h.Get(ctx, TableObjects, "a"); err != nil || string(b) != "1" {
		t.Fatalf("after recovery: %q %v", b, err)
	}
	if st := h.State(); st.Faults == 0 || !st.Online {
		t.Fatalf("state %+v", st)
	}
}

// A hung drive costs one deadline, not a hung request, and no more after.
func TestHealthHungDrive(t *testing.T) {
	ctx := context.Background()
	f := NewFaulty(newLocal(t))
	h := NewHealth(f, HealthConfig{OpTimeout: 50 * time.Millisecond, ProbeInterval: 10 * time.Millisecond})
	defer h.Close()
	w, err := h.CreateShard(ctx, testRef)
	if err != nil {
		t.Fatal(err)
	}
	remove := f.Inject(Fault{Hang: true})
	defer remove()
	start := time.Now()
	if _, err := w.Write([]byte("data")); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("hung write: %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("hung write took %v", time.Since(start))
	}
	w.Abort()
	start = time.Now()
	if _, err := h.OpenShard(ctx, testRef, 0); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("read on hung drive: %v", err)
	}
	if time.Since(start) > 20*time.Millisecond {
		t.Fatalf("offline drive did not fail fast: %v", time.Since(start))
	}
	if h.State().Timeouts == 0 {
		t.Fatal("timeout not counted")
	}
	remove()
	waitFor(t, "hung drive back", h.Online)
	// The aborted file is removed once the stuck write let go.
	waitFor(t, "aborted shard removed", func() bool {
		_, err := h.OpenShard(ctx, testRef, 0)
		return errors.Is(err, ErrNotFound)
	})
}

// A read stuck past its deadline must not land in the caller's buffer.
func TestHealthReadDeadline(t *testing.T) {
	ctx := context.Background()
	f := NewFaulty(newLocal(t))
	// 500 ms: the setup's create, write and sync must not time out on a
	// loaded machine; the injected read delay is far beyond it.
	h := NewHealth(f, HealthConfig{OpTimeout: 500 * time.Millisecond, ProbeInterval: 10 * time.Millisecond})
	defer h.Close()
	w, err := h.CreateShard(ctx, testRef)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteBuffers(w, [][]byte{[]byte("01234"), []byte("56789")}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := h.OpenShard(ctx, testRef, 2)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if _, err := io.ReadFull(r, buf); err != nil || string(buf) != "234" {
		t.Fatalf("read %q %v", buf, err)
	}
	remove := f.Inject(Fault{Ops: []Op{OpRead}, Delay: time.Second})
	buf = []byte("xxx")
	if _, err := r.Read(buf); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("slow read: %v", err)
	}
	remove()
	r.Close()
	// Past the injected delay, so the stuck read has ended by now.
	time.Sleep(1200 * time.Millisecond)
	if string(buf) != "xxx" {
		t.Fatalf("late read wrote into the caller's buffer: %q", buf)
	}
	rest, err := io.ReadAll(mustOpen(t, h, testRef))
	if err != nil || string(rest) != "0123456789" {
		t.Fatalf("reopen: %q %v", rest, err)
	}
}

func mustOpen(t *testing.T, h *Health, ref ShardRef) io.Reader {
	t.Helper()
	waitFor(t, "online", h.Online)
	r, err := h.OpenShard(context.Background(), ref, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// A full drive refuses writes but stays online for reads.
func TestHealthFullDriveStaysOnline(t *testing.T) {
	ctx := context.Background()
	f := NewFaulty(newLocal(t))
	h := NewHealth(f, HealthConfig{})
	defer h.Close()
	f.Inject(Fault{Ops: WriteOps, Err: ErrInjectedENOSPC})
	var b Batch
	b.Put(TableObjects, "x", []byte("1"))
	if err := h.Apply(ctx, &b); !errors.Is(err, ErrDriveFull) {
		t.Fatalf("full: %v", err)
	}
	if _, err := h.CreateShard(ctx, testRef); !errors.Is(err, ErrDriveFull) {
		t.Fatalf("full: %v", err)
	}
	if !h.Online() {
		t.Fatal("ENOSPC took the drive offline")
	}
	if _, err := h.Get(ctx, TableObjects, "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read on a full drive: %v", err)
	}
}

// Operation workers are reused. A worker whose call ran past its
// deadline returns to the pool only once that call ends, and its late
// result never reaches a later caller: every call below must see its own
// answer, with many callers at once.
func TestHealthWorkerReuse(t *testing.T) {
	ctx := context.Background()
	f := NewFaulty(newLocal(t))
	// The deadline leaves a loaded machine (CI under -race, 64 readers
	// on 2 cores: 100 ms was once too short) room for an ordinary read;
	// the injected delay is well past it.
	const deadline, slow = 500 * time.Millisecond, 2500 * time.Millisecond
	h := NewHealth(f, HealthConfig{OpTimeout: deadline, ProbeInterval: 5 * time.Millisecond})
	defer h.Close()
	put(t, h, "k", "v")
	remove := f.Inject(Fault{Ops: []Op{OpGet}, Times: 1, Delay: slow, Err: ErrInjectedEIO})
	_, err := h.Get(ctx, TableObjects, "k")
	remove()
	if !errors.Is(err, ErrDriveFaulty) || h.State().Timeouts != 1 {
		t.Fatalf("slow read: %v, state %+v", err, h.State())
	}
	waitFor(t, "drive back", h.Online)
	// The slow call is still running; once it ends (with its injected
	// EIO) its worker goes back to the pool. Calls before and after that
	// must all read the stored value.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%8 == 0 {
				time.Sleep(slow + 100*time.Millisecond) // after the slow call ended
			}
			for range 20 {
				b, err := h.Get(ctx, TableObjects, "k")
				if err != nil || string(b) != "v" {
					errs <- fmt.Errorf("read %q: %v", b, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	h.workers.mu.Lock()
	idle := len(h.workers.idle)
	h.workers.mu.Unlock()
	if idle == 0 || idle > maxIdleWorkers {
		t.Fatalf("%d idle workers after the burst, want 1..%d", idle, maxIdleWorkers)
	}
}

// The walk's deadline is on progress: a long walk with a slow callback
// passes, a walk stuck in the drive fails, and its callback is not
// called once the caller has been answered.
func TestHealthWalkDeadline(t *testing.T) {
	ctx := context.Background()
	d := newLocal(t)
	for i := range 3 {
		w, err := d.CreateShard(ctx, ShardRef{ID: fmt.Sprintf("%02x000000", i*64), Part: 0})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("x"))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	slow := &slowWalk{Drive: d}
	h := NewHealth(slow, HealthConfig{OpTimeout: 40 * time.Millisecond, ProbeInterval: 10 * time.Millisecond})
	defer h.Close()
	n := 0
	err := h.WalkShards(ctx, func(ShardFile) error {
		n++
		time.Sleep(60 * time.Millisecond) // the caller's time: not the drive's
		return nil
	})
	if err != nil || n != 3 {
		t.Fatalf("slow callback: %d files, %v", n, err)
	}
	// Now the drive stalls between files.
	slow.stall = 200 * time.Millisecond
	var mu sync.Mutex
	calls := 0
	err = h.WalkShards(ctx, func(ShardFile) error {
		mu.Lock()
		calls++
		mu.Unlock()
		return nil
	})
	if !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("stalled walk: %v", err)
	}
	mu.Lock()
	after := calls
	mu.Unlock()
	time.Sleep(700 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if calls != after {
		t.Fatalf("callback called %d times after WalkShards returned", calls-after)
	}
}

// slowWalk stalls its walk before every file.
type slowWalk struct {
	Drive
	stall time.Duration
}

func (s *slowWalk) WalkShards(ctx context.Context, fn func(ShardFile) error) error {
	return s.Drive.WalkShards(ctx, func(sf ShardFile) error {
		time.Sleep(s.stall)
		return fn(sf)
	})
}

// Close closes the wrapped drive, once.
func TestHealthCloseClosesDrive(t *testing.T) {
	ctx := context.Background()
	d := newLocal(t)
	h := NewHealth(d, HealthConfig{})
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(ctx, TableObjects, "x"); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("inner drive still open: %v", err)
	}
	// Its lock is free again.
	d2, err := OpenLocal(d.String(), LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d2.Close()
}

// BenchmarkHealthCall is the deadline wrapper's own cost per drive call
// (the call itself does nothing), with as many callers as -cpu allows.
// A 32 MiB PUT makes ~700 drive calls across 16 drives.
func BenchmarkHealthCall(b *testing.B) {
	h := NewHealth(&Local{root: b.TempDir()}, HealthConfig{})
	defer h.Close()
	nop := func() error { return nil }
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err, _ := h.call(OpGet, true, nop); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// slowOpen delays CreateShard and OpenShard past the deadline and counts
// the handles their late results hand out and get back.
type slowOpen struct {
	Drive
	delay           time.Duration
	aborted, closed atomic.Int32
}

type countedWriter struct {
	FileWriter
	s *slowOpen
}

func (w countedWriter) Abort() { w.s.aborted.Add(1); w.FileWriter.Abort() }

type countedReader struct {
	io.ReadCloser
	s *slowOpen
}

func (r countedReader) Close() error { r.s.closed.Add(1); return r.ReadCloser.Close() }

func (s *slowOpen) CreateShard(ctx context.Context, ref ShardRef) (FileWriter, error) {
	time.Sleep(s.delay)
	w, err := s.Drive.CreateShard(ctx, ref)
	if err != nil {
		return nil, err
	}
	return countedWriter{w, s}, nil
}

func (s *slowOpen) OpenShard(ctx context.Context, ref ShardRef, offset int64) (io.ReadCloser, error) {
	time.Sleep(s.delay)
	r, err := s.Drive.OpenShard(ctx, ref, offset)
	if err != nil {
		return nil, err
	}
	return countedReader{r, s}, nil
}

// A create or open that finishes after its deadline hands back a handle
// nobody holds: Health aborts or closes it (no leaked descriptor, and
// for a remote drive no leaked request), and an aborted shard is gone.
func TestHealthLateOpenReleased(t *testing.T) {
	ctx := context.Background()
	local := newLocal(t)
	w, err := local.CreateShard(ctx, testRef)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s := &slowOpen{Drive: local, delay: 100 * time.Millisecond}
	h := NewHealth(s, HealthConfig{OpTimeout: 20 * time.Millisecond, ProbeInterval: time.Hour})
	defer h.Close()
	if _, err := h.OpenShard(ctx, testRef, 0); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("slow open: %v", err)
	}
	waitFor(t, "late reader closed", func() bool { return s.closed.Load() == 1 })

	h2 := NewHealth(s, HealthConfig{OpTimeout: 20 * time.Millisecond, ProbeInterval: time.Hour})
	defer h2.Close()
	late := ShardRef{ID: "1a1b2c3d-4e5f-6789-abcd-ef0123456789", Part: 1}
	if _, err := h2.CreateShard(ctx, late); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("slow create: %v", err)
	}
	waitFor(t, "late writer aborted", func() bool { return s.aborted.Load() == 1 })
	if _, err := local.OpenShard(ctx, late, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the late shard file is still there: %v", err)
	}
}

// Calls that finish just as the watchdog gives up on them either return
// their result or time out, never hang, and leave nothing behind for the
// worker's next call: once a call and its worker are done, every idle
// worker is free and holds no abort token.
func TestHealthDeadlineRaces(t *testing.T) {
	h := NewHealth(newLocal(t), HealthConfig{OpTimeout: 2 * time.Millisecond, ProbeInterval: time.Hour})
	defer h.Close()
	errSlow := errors.New("slow call's own result")
	timeouts := 0
	for i := range 300 {
		d := time.Duration(500+i%8*500) * time.Microsecond // around the deadline
		type result struct {
			err      error
			finished <-chan struct{}
		}
		done := make(chan result, 1)
		go func() {
			err, finished := h.call(OpGet, false, func() error { time.Sleep(d); return errSlow })
			done <- result{err, finished}
		}()
		select {
		case r := <-done:
			switch {
			case errors.Is(r.err, ErrDriveFaulty):
				timeouts++
			case r.err != errSlow:
				t.Fatalf("call %d: %v", i, r.err)
			}
			<-r.finished
		case <-time.After(10 * time.Second):
			t.Fatalf("call %d (%v) never returned", i, d)
		}
		h.workers.mu.Lock()
		for _, w := range h.workers.idle {
			if len(w.abort) != 0 || w.running.Load() != 0 {
				t.Errorf("after call %d an idle worker has %d abort tokens, running %d", i, len(w.abort), w.running.Load())
			}
		}
		h.workers.mu.Unlock()
		if t.Failed() {
			t.FailNow()
		}
	}
	if timeouts == 0 || timeouts == 300 {
		t.Fatalf("%d of 300 calls timed out: the test did not race the deadline", timeouts)
	}
	t.Logf("%d of 300 calls timed out", timeouts)
	// Idle, the watchdog stops.
	waitFor(t, "watchdog stopped", func() bool { return !h.watching.Load() })
}

// ReadFull (DirectReader) fills the caller's buffers in one drive call:
// through preadv on a local shard file, through plain reads otherwise;
// a short shard is io.ErrUnexpectedEOF (io.EOF at its very end), and a
// read past the deadline reports the buffers abandoned.
func TestHealthReaderReadFull(t *testing.T) {
	ctx := context.Background()
	withShard := func(t *testing.T, d Drive, timeout time.Duration) *Health {
		h := NewHealth(d, HealthConfig{OpTimeout: timeout, ProbeInterval: 10 * time.Millisecond})
		t.Cleanup(func() { h.Close() })
		w, err := h.CreateShard(ctx, testRef)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteBuffers(w, [][]byte{[]byte("0123456789")}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return h
	}
	for _, vector := range []bool{true, false} {
		t.Run(fmt.Sprintf("preadv=%v", vector), func(t *testing.T) {
			var d Drive = newLocal(t)
			if !vector {
				d = NewFaulty(d) // its readers are not local files
			}
			h := withShard(t, d, time.Second)
			rc, err := h.OpenShard(ctx, testRef, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			hr := rc.(*healthReader)
			if _, vec := hr.r.(vectorReader); vec != vector {
				t.Fatalf("inner reader %T: vector reads %v", hr.r, vec)
			}
			a, b, empty := make([]byte, 2), make([]byte, 3), []byte{}
			if err := rc.(DirectReader).ReadFull(a, empty, b); err != nil || string(a) != "12" || string(b) != "345" {
				t.Fatalf("ReadFull: %q %q %v", a, b, err)
			}
			c := make([]byte, 3)
			if err := hr.ReadFull(b, c); !errors.Is(err, io.ErrUnexpectedEOF) || string(b)+string(c[:1]) != "6789" {
				t.Fatalf("ReadFull past the end: %q %q %v", b, c, err)
			}
			if err := hr.ReadFull(c); err != io.EOF {
				t.Fatalf("ReadFull at the end: %v", err)
			}
			if !h.Online() {
				t.Fatal("a short shard took the drive offline")
			}
		})
	}
	t.Run("deadline", func(t *testing.T) {
		f := NewFaulty(newLocal(t))
		h := withShard(t, f, 30*time.Millisecond)
		rc, err := h.OpenShard(ctx, testRef, 0)
		if err != nil {
			t.Fatal(err)
		}
		remove := f.Inject(Fault{Ops: []Op{OpRead}, Delay: 300 * time.Millisecond})
		buf := make([]byte, 4)
		err = rc.(DirectReader).ReadFull(buf)
		remove()
		if !errors.Is(err, ErrBufferAbandoned) || !errors.Is(err, ErrDriveFaulty) {
			t.Fatalf("slow ReadFull: %v", err)
		}
		if err2 := rc.(DirectReader).ReadFull(buf); err2 != err {
			t.Fatalf("ReadFull after an abandoned one: %v, want the same error", err2)
		}
		dead := rc.(*healthReader).dead
		rc.Close()
		select {
		case <-dead: // the late read is over: buf is safe to look at
		case <-time.After(5 * time.Second):
			t.Fatal("the abandoned read never finished")
		}
		if string(buf) != "0123" {
			t.Fatalf("the late read left %q in the abandoned buffer", buf)
		}
	})
}
