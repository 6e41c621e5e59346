package engine

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestPinSetDelay: with a delay (cluster nodes), a free runs only after
// it, and not before the last local reader unpins; stop drops the frees
// still waiting.
func TestPinSetDelay(t *testing.T) {
	s := newPinSet()
	s.delay = 50 * time.Millisecond
	var freed atomic.Int32
	s.free("a", func() { freed.Add(1) })
	if freed.Load() != 0 {
		t.Fatal("freed before the delay")
	}
	time.Sleep(200 * time.Millisecond)
	if freed.Load() != 1 {
		t.Fatalf("freed %d times after the delay, want 1", freed.Load())
	}

	s.pin([]string{"b"})
	s.free("b", func() { freed.Add(1) })
	time.Sleep(200 * time.Millisecond)
	if freed.Load() != 1 {
		t.Fatal("freed while a reader holds it")
	}
	s.unpin([]string{"b"})
	if freed.Load() != 2 {
		t.Fatal("not freed when the last reader unpinned")
	}

	s.free("c", func() { freed.Add(1) })
	s.stop()
	time.Sleep(200 * time.Millisecond)
	if freed.Load() != 2 {
		t.Fatal("a free ran after stop")
	}
	s.free("d", func() { freed.Add(1) })
	time.Sleep(100 * time.Millisecond)
	if freed.Load() != 2 {
		t.Fatal("a free scheduled after stop ran")
	}
}
