package drive

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testSharedSync returns a SharedSync whose syncfs calls go to fake,
// and the filesystem group of dir joined members times.
func testSharedSync(t *testing.T, members int, fake func(fd int) error) *fsSync {
	t.Helper()
	s := NewSharedSync()
	s.enabled = true // the group logic is tested on any kernel
	dir := t.TempDir()
	var g *fsSync
	for range members {
		var err error
		if g, err = s.join(dir); err != nil {
			t.Fatal(err)
		}
	}
	g.syncfs = fake
	t.Cleanup(func() {
		for range members {
			g.leave()
		}
	})
	return g
}

// Every caller returns only after a syncfs that started after it
// called, and concurrent callers share syncfs calls.
func TestSharedSyncGroupCommit(t *testing.T) {
	var (
		calls   atomic.Int64
		mu      sync.Mutex
		started []time.Time // start of each syncfs
	)
	g := testSharedSync(t, 2, func(int) error {
		mu.Lock()
		started = append(started, time.Now())
		mu.Unlock()
		calls.Add(1)
		time.Sleep(2 * time.Millisecond) // a flush takes a while
		return nil
	})
	const callers = 64
	var wg sync.WaitGroup
	arrived := make([]time.Time, callers)
	returned := make([]time.Time, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			arrived[i] = time.Now()
			if err := g.sync(func() error { t.Error("own sync used with two members"); return nil }); err != nil {
				t.Error(err)
			}
			returned[i] = time.Now()
		}()
	}
	wg.Wait()
	n := calls.Load()
	if n >= callers {
		t.Fatalf("%d callers made %d syncfs calls: no grouping", callers, n)
	}
	// A caller is covered only by a syncfs that started after it arrived
	// and finished before it returned.
	for i := range callers {
		covered := false
		mu.Lock()
		for _, s := range started {
			if !s.Before(arrived[i]) && s.Before(returned[i]) {
				covered = true
			}
		}
		mu.Unlock()
		if !covered {
			t.Fatalf("caller %d (arrived %v, returned %v) returned without a syncfs started after its call", i, arrived[i], returned[i])
		}
	}
	t.Logf("%d callers, %d syncfs calls", callers, n)
}

// A failed syncfs falls back to the caller's own sync, whose result is
// what the caller gets.
func TestSharedSyncFailureFallsBack(t *testing.T) {
	errFS := errors.New("writeback error elsewhere on the filesystem")
	g := testSharedSync(t, 3, func(int) error { return errFS })
	own := 0
	if err := g.sync(func() error { own++; return nil }); err != nil || own != 1 {
		t.Fatalf("syncfs failed, own sync succeeded: got err %v after %d own syncs, want nil after 1", err, own)
	}
	errOwn := errors.New("the WAL's own writeback error")
	if err := g.sync(func() error { return errOwn }); !errors.Is(err, errOwn) {
		t.Fatalf("both failed: got %v, want the file's own error", err)
	}
}

// A drive alone on its filesystem keeps its own fdatasync.
func TestSharedSyncAloneUsesOwnSync(t *testing.T) {
	g := testSharedSync(t, 1, func(int) error { t.Error("syncfs used by a lone drive"); return nil })
	own := 0
	if err := g.sync(func() error { own++; return nil }); err != nil || own != 1 {
		t.Fatalf("got err %v after %d own syncs, want nil after 1", err, own)
	}
}

// Drives opened with a SharedSync in one directory tree join one group,
// their synced commits go through syncfs, and the group is gone once
// they close.
func TestSharedSyncDrives(t *testing.T) {
	s := NewSharedSync()
	if !s.enabled {
		t.Skip("kernel before Linux 5.8: syncfs reports no errors, so SharedSync is off by design")
	}
	root := t.TempDir()
	var drives []*Local
	for _, name := range []string{"d1", "d2"} {
		d := openLocal(t, root+"/"+name, LocalOptions{SharedSync: s})
		if err := d.WriteFormat(context.Background(), testFormat); err != nil {
			t.Fatal(err)
		}
		drives = append(drives, d)
	}
	s.mu.Lock()
	if len(s.byDev) != 1 {
		s.mu.Unlock()
		t.Fatalf("two drives in one directory tree made %d groups, want 1", len(s.byDev))
	}
	var g *fsSync
	for _, g = range s.byDev {
	}
	s.mu.Unlock()
	var calls atomic.Int64
	g.mu.Lock()
	members := g.members
	real := g.syncfs
	g.syncfs = func(fd int) error { calls.Add(1); return real(fd) }
	g.mu.Unlock()
	if members != 2 {
		t.Fatalf("group has %d members, want 2", members)
	}
	ctx := context.Background()
	for i, d := range drives {
		var b Batch
		b.Put(TableObjects, "b/k", []byte{byte(i)})
		if err := d.Apply(ctx, &b); err != nil {
			t.Fatal(err)
		}
	}
	if calls.Load() == 0 {
		t.Fatal("synced commits of two drives on one filesystem made no syncfs call")
	}
	for _, d := range drives {
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byDev) != 0 {
		t.Fatalf("%d groups left after every drive closed", len(s.byDev))
	}
}
