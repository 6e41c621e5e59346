package drive

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

var testRef = ShardRef{ID: "0a1b2c3d-4e5f-6789-abcd-ef0123456789", Part: 3}

func put(t *testing.T, d Drive, key, value string) {
	t.Helper()
	var b Batch
	b.Put(TableObjects, key, []byte(value))
	if err := d.Apply(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
}

// The nth write of a stream fails with EIO, and only that one.
func TestFaultyNthWrite(t *testing.T) {
	ctx := context.Background()
	f := NewFaulty(newLocal(t))
	remove := f.Inject(Fault{Ops: []Op{OpWrite}, After: 2, Times: 1, Err: ErrInjectedEIO})
	defer remove()
	w, err := f.CreateShard(ctx, testRef)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		var err error
		if i%2 == 0 {
			_, err = w.Write([]byte("x"))
		} else {
			err = WriteBuffers(w, [][]byte{[]byte("y"), []byte("z")})
		}
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
	if _, err := f.OpenShard(ctx, testRef, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("aborted shard: %v", err)
	}
}

func TestFaultyENOSPCOnlyWrites(t *testing.T) {
	ctx := context.Background()
	f := NewFaulty(newLocal(t))
	put(t, f, "keep", "data")
	f.Inject(Fault{Ops: WriteOps, Err: ErrInjectedENOSPC})
	var b Batch
	b.Put(TableObjects, "b", []byte("x"))
	if err := f.Apply(ctx, &b); !errors.Is(err, ErrDriveFull) {
		t.Fatalf("apply on full drive: %v", err)
	}
	if _, err := f.CreateShard(ctx, testRef); !errors.Is(err, ErrDriveFull) {
		t.Fatalf("create on full drive: %v", err)
	}
	if err := f.DeleteShards(ctx, []ShardRef{testRef}); !errors.Is(err, ErrDriveFull) {
		t.Fatalf("delete on full drive: %v", err)
	}
	if v, err := f.Get(ctx, TableObjects, "keep"); err != nil || string(v) != "data" {
		t.Fatalf("read on full drive: %q %v", v, err)
	}
	if es, err := f.Scan(ctx, TableObjects, ScanQuery{}); err != nil || len(es) != 1 {
		t.Fatalf("scan on full drive: %v %v", es, err)
	}
	if err := f.WalkShards(ctx, func(ShardFile) error { return nil }); err != nil {
		t.Fatalf("walk on full drive: %v", err)
	}
	f.Clear()
	if err := f.Apply(ctx, &b); err != nil {
		t.Fatalf("apply after clear: %v", err)
	}
}

func TestFaultyHangAndDelay(t *testing.T) {
	ctx := context.Background()
	f := NewFaulty(newLocal(t))
	remove := f.Inject(Fault{Ops: []Op{OpGet}, Hang: true})
	done := make(chan error, 1)
	go func() { _, err := f.Get(ctx, TableObjects, "x"); done <- err }()
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
	w, err := f.CreateShard(ctx, testRef)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("abc"))
	start := time.Now()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 30*time.Millisecond {
		t.Fatal("slow sync was not slow")
	}
	r, err := f.OpenShard(ctx, testRef, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, err := io.ReadAll(r); err != nil || string(b) != "abc" {
		t.Fatalf("slow sync lost data: %q %v", b, err)
	}
}

// Every operation of the Drive has its fault point.
func TestFaultyEveryOp(t *testing.T) {
	ctx := context.Background()
	f := NewFaulty(newLocal(t))
	w, err := f.CreateShard(ctx, testRef)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("data"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := f.OpenShard(ctx, testRef, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f.Inject(Fault{Err: ErrInjectedEIO})
	before := map[Op]int{OpCreateShard: f.Calls(OpCreateShard), OpOpenShard: f.Calls(OpOpenShard)}
	calls := map[Op]func() error{
		OpReadFormat:  func() error { _, err := f.ReadFormat(ctx); return err },
		OpWriteFormat: func() error { return f.WriteFormat(ctx, testFormat) },
		OpDiskInfo:    func() error { _, err := f.DiskInfo(ctx); return err },
		OpGet:         func() error { _, err := f.Get(ctx, TableObjects, "k"); return err },
		OpApply:       func() error { return f.Apply(ctx, &Batch{}) },
		OpScan:        func() error { _, err := f.Scan(ctx, TableObjects, ScanQuery{}); return err },
		OpCreateShard: func() error { _, err := f.CreateShard(ctx, ShardRef{ID: "ffffffff", Part: 0}); return err },
		OpOpenShard:   func() error { _, err := f.OpenShard(ctx, testRef, 0); return err },
		OpRead:        func() error { _, err := r.Read(make([]byte, 4)); return err },
		OpDeleteShards: func() error {
			return f.DeleteShards(ctx, []ShardRef{testRef})
		},
		OpWalkShards: func() error { return f.WalkShards(ctx, func(ShardFile) error { return nil }) },
	}
	for op, call := range calls {
		if err := call(); !errors.Is(err, ErrDriveFaulty) {
			t.Errorf("%s: %v, want the injected EIO", op, err)
		}
		if f.Calls(op)-before[op] != 1 {
			t.Errorf("%s: %d calls counted", op, f.Calls(op))
		}
	}
}

// Every: only every nth matching call after After fails; the others
// reach the drive.
func TestFaultyEvery(t *testing.T) {
	ctx := context.Background()
	f := NewFaulty(newLocal(t))
	put(t, f, "k", "v")
	f.Inject(Fault{Ops: []Op{OpGet}, After: 1, Every: 3, Err: ErrInjectedEIO})
	var failed []int
	for i := 1; i <= 10; i++ {
		if _, err := f.Get(ctx, TableObjects, "k"); err != nil {
			if !errors.Is(err, ErrDriveFaulty) {
				t.Fatalf("get %d: %v", i, err)
			}
			failed = append(failed, i)
		}
	}
	// Call 1 is within After; then calls 4, 7, 10 (the 3rd, 6th, 9th after it).
	if want := []int{4, 7, 10}; len(failed) != len(want) || failed[0] != 4 || failed[1] != 7 || failed[2] != 10 {
		t.Fatalf("failed calls %v, want %v", failed, want)
	}
}
