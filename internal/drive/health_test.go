package drive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
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
	if err := h.WriteFile(ctx, "vol", "a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	remove := f.Inject(Fault{Err: ErrInjectedEIO})
	if _, err := h.ReadFile(ctx, "vol", "a"); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("want fault, got %v", err)
	}
	if h.Online() {
		t.Fatal("drive still online after EIO")
	}
	before := f.Calls(OpReadFile)
	if _, err := h.ReadFile(ctx, "vol", "a"); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("offline drive: %v", err)
	}
	if f.Calls(OpReadFile) != before {
		t.Fatal("offline drive was still asked to read")
	}
	remove()
	waitFor(t, "drive back online", h.Online)
	if b, err := h.ReadFile(ctx, "vol", "a"); err != nil || string(b) != "1" {
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
	w, err := h.CreateFile(ctx, "vol", "s")
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
	if _, err := h.ReadFile(ctx, "vol", "s"); !errors.Is(err, ErrDriveFaulty) {
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
}

// A read stuck past its deadline must not land in the caller's buffer.
func TestHealthReadDeadline(t *testing.T) {
	ctx := context.Background()
	f := NewFaulty(newLocal(t))
	h := NewHealth(f, HealthConfig{OpTimeout: 30 * time.Millisecond, ProbeInterval: 10 * time.Millisecond})
	defer h.Close()
	if err := h.WriteFile(ctx, "vol", "r", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	r, err := h.OpenFile(ctx, "vol", "r", 2)
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
	time.Sleep(20 * time.Millisecond)
	if string(buf) != "xxx" {
		t.Fatalf("late read wrote into the caller's buffer: %q", buf)
	}
	rest, err := io.ReadAll(mustOpen(t, h, "r"))
	if err == nil && string(rest) != "0123456789" {
		t.Fatalf("reopen: %q", rest)
	}
}

func mustOpen(t *testing.T, h *Health, p string) io.Reader {
	t.Helper()
	waitFor(t, "online", h.Online)
	r, err := h.OpenFile(context.Background(), "vol", p, 0)
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
	if err := h.WriteFile(ctx, "vol", "x", []byte("1")); !errors.Is(err, ErrDriveFull) {
		t.Fatalf("full: %v", err)
	}
	if !h.Online() {
		t.Fatal("ENOSPC took the drive offline")
	}
}

// Operation workers are reused. A worker whose call ran past its
// deadline returns to the pool only once that call ends, and its late
// result never reaches a later caller: every call below must see its own
// answer, with many callers at once.
func TestHealthWorkerReuse(t *testing.T) {
	ctx := context.Background()
	f := NewFaulty(newLocal(t))
	h := NewHealth(f, HealthConfig{OpTimeout: 30 * time.Millisecond, ProbeInterval: 5 * time.Millisecond})
	defer h.Close()
	if err := h.WriteFile(ctx, "vol", "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	remove := f.Inject(Fault{Ops: []Op{OpReadFile}, Times: 1, Delay: 200 * time.Millisecond, Err: ErrInjectedEIO})
	_, err := h.ReadFile(ctx, "vol", "k")
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
				time.Sleep(250 * time.Millisecond)
			}
			for range 20 {
				b, err := h.ReadFile(ctx, "vol", "k")
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
			if err, _ := h.call(OpStatVol, true, nop); err != nil {
				b.Fatal(err)
			}
		}
	})
}
