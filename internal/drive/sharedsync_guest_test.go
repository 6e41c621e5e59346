package drive

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// A guest file on a filesystem two drives share rides their syncfs
// (own never runs); on a filesystem with one drive, or none, it runs
// own; a failing syncfs falls back to own, whose error is returned.
func TestSharedSyncGuest(t *testing.T) {
	s := NewSharedSync()
	s.enabled = true
	dir := t.TempDir()
	guest, err := s.Guest(dir)
	if err != nil {
		t.Fatal(err)
	}
	var owns atomic.Int64
	own := func() error { owns.Add(1); return nil }

	// No drive on the filesystem yet: own.
	if err := guest(own); err != nil || owns.Load() != 1 {
		t.Fatalf("no drive: err %v, own ran %d times, want 1", err, owns.Load())
	}
	g1, err := s.join(dir)
	if err != nil {
		t.Fatal(err)
	}
	// One drive: a guest must not switch it to syncfs.
	if err := guest(own); err != nil || owns.Load() != 2 {
		t.Fatalf("one drive: err %v, own ran %d times, want 2", err, owns.Load())
	}
	g2, err := s.join(dir)
	if err != nil {
		t.Fatal(err)
	}
	if g1 != g2 {
		t.Fatal("two drives of one filesystem in two groups")
	}
	var calls atomic.Int64
	fail := atomic.Bool{}
	g1.syncfs = func(int) error {
		calls.Add(1)
		if fail.Load() {
			return errors.New("writeback error")
		}
		return nil
	}
	// Two drives: guests and drives share syncfs calls.
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := guest(func() error { t.Error("guest ran its own sync beside two drives"); return nil }); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if err := g1.sync(func() error { t.Error("drive ran its own sync"); return nil }); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := calls.Load(); n < 1 || n > 64 {
		t.Fatalf("%d syncfs calls for 64 callers", n)
	}
	// A failed syncfs: the guest's own sync decides.
	fail.Store(true)
	ownErr := errors.New("own failed")
	if err := guest(func() error { return ownErr }); !errors.Is(err, ownErr) {
		t.Fatalf("failed syncfs: got %v, want the own sync's error", err)
	}
	before := owns.Load()
	if err := guest(own); err != nil || owns.Load() != before+1 {
		t.Fatalf("failed syncfs: err %v, own not run", err)
	}
	fail.Store(false)
	// Every drive gone (the group's directory closed): own again.
	g2.leave()
	g1.leave()
	before = owns.Load()
	if err := guest(own); err != nil || owns.Load() != before+1 {
		t.Fatalf("drives gone: err %v, own not run", err)
	}
}

// A SharedSync that is nil, or disabled (a kernel whose syncfs hides
// errors), gives a guest that always runs own; a directory that cannot
// be read is an error with a guest that still runs own.
func TestSharedSyncGuestPlain(t *testing.T) {
	var nilS *SharedSync
	ran := 0
	for _, s := range []*SharedSync{nilS, {byDev: map[uint64]*fsSync{}}} {
		guest, err := s.Guest(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := guest(func() error { ran++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if ran != 2 {
		t.Fatalf("own ran %d times, want 2", ran)
	}
	s := NewSharedSync()
	s.enabled = true
	guest, err := s.Guest(t.TempDir() + "/missing")
	if err == nil {
		t.Fatal("a missing directory gave no error")
	}
	if err := guest(func() error { ran++; return nil }); err != nil || ran != 3 {
		t.Fatalf("the plain guest of a missing directory: err %v, ran %d", err, ran)
	}
}
