package drive

import (
	"context"
	"errors"
	"testing"
	"time"
)

func newLocal(t *testing.T) *Local {
	t.Helper()
	d, err := OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFormat(context.Background(), Format{Version: 1, DeploymentID: "dep"}); err != nil {
		t.Fatal(err)
	}
	if err := d.MakeVol(context.Background(), "vol"); err != nil {
		t.Fatal(err)
	}
	return d
}

// The nth write of a stream fails with EIO, and only that one.
func TestFaultyNthWrite(t *testing.T) {
	ctx := context.Background()
	f := NewFaulty(newLocal(t))
	remove := f.Inject(Fault{Ops: []Op{OpWrite}, After: 2, Times: 1, Err: ErrInjectedEIO})
	defer remove()
	w, err := f.CreateFile(ctx, "vol", "a")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		_, err := w.Write([]byte("x"))
		if (i == 2) != (err != nil) {
			t.Fatalf("write %d: err %v", i, err)
		}
		if i == 2 && !errors.Is(err, ErrDriveFaulty) {
			t.Fatalf("write %d: want ErrDriveFaulty, got %v", i, err)
		}
	}
	w.Abort()
	if f.Calls(OpWrite) != 4 || f.Hits() != 1 {
		t.Fatalf("calls %d hits %d", f.Calls(OpWrite), f.Hits())
	}
}

func TestFaultyENOSPCOnlyWrites(t *testing.T) {
	ctx := context.Background()
	f := NewFaulty(newLocal(t))
	if err := f.WriteFile(ctx, "vol", "keep", []byte("data")); err != nil {
		t.Fatal(err)
	}
	f.Inject(Fault{Ops: WriteOps, Err: ErrInjectedENOSPC})
	if err := f.WriteFile(ctx, "vol", "b", []byte("x")); !errors.Is(err, ErrDriveFull) {
		t.Fatalf("write on full drive: %v", err)
	}
	if b, err := f.ReadFile(ctx, "vol", "keep"); err != nil || string(b) != "data" {
		t.Fatalf("read on full drive: %q %v", b, err)
	}
	f.Clear()
	if err := f.WriteFile(ctx, "vol", "b", []byte("x")); err != nil {
		t.Fatalf("write after clear: %v", err)
	}
}

func TestFaultyHangAndDelay(t *testing.T) {
	ctx := context.Background()
	f := NewFaulty(newLocal(t))
	remove := f.Inject(Fault{Ops: []Op{OpReadFile}, Hang: true})
	done := make(chan error, 1)
	go func() { _, err := f.ReadFile(ctx, "vol", "x"); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("hung call returned early: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	remove()
	if err := <-done; !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("released hang: %v", err)
	}
	f.Inject(Fault{Ops: []Op{OpSync}, Delay: 30 * time.Millisecond})
	w, err := f.CreateFile(ctx, "vol", "slow")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("abc"))
	start := time.Now()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 30*time.Millisecond {
		t.Fatal("slow fsync was not slow")
	}
	if b, err := f.ReadFile(ctx, "vol", "slow"); err != nil || string(b) != "abc" {
		t.Fatalf("slow fsync lost data: %q %v", b, err)
	}
}
