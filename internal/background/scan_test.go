package background

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// TestScanCycleOnFakeClock: a cycle starts when the clock has moved a
// ScanInterval, heals every key of every bucket in order, publishes what
// it found (status, usage) at the clock's time and runs the engine's
// after-cycle work; every DeepScanEvery-th cycle is deep.
func TestScanCycleOnFakeClock(t *testing.T) {
	clock := newFakeClock()
	f := newFakeEngine(clock)
	f.put("a", "k1", "k2", "k3")
	f.put("b", "x")
	j := start(t, f, Config{ScanInterval: time.Minute, DeepScanEvery: 2, MonitorInterval: time.Hour}, Options{})
	waitFor(t, "the scanner to wait for its first cycle", func() bool { return clock.waiting(time.Minute) })
	if st := j.Status(); st.ScanCycles != 0 || len(f.healCalls()) != 0 {
		t.Fatalf("a cycle ran before the clock moved: %+v", st)
	}
	if u, at := j.BucketUsage(); u != nil || !at.IsZero() {
		t.Fatalf("usage before any cycle: %v at %v", u, at)
	}
	clock.Advance(time.Minute)
	waitFor(t, "the first cycle", func() bool { return f.cyclesAfter() == 1 })
	st := j.Status()
	if st.ScanCycles != 1 || st.ScanRunning || st.LastScan.Objects != 4 || st.LastScan.Deep || !st.LastScanEnd.Equal(clock.Now()) {
		t.Fatalf("after the first cycle: %+v", st)
	}
	want := []healCall{{"a", "k1", false}, {"a", "k2", false}, {"a", "k3", false}, {"b", "x", false}}
	if got := f.healCalls(); !slices.Equal(got, want) {
		t.Fatalf("healed %v, want %v", got, want)
	}
	u, at := j.BucketUsage()
	if u["a"] != (BucketUsage{Objects: 3, Bytes: 6}) || u["b"] != (BucketUsage{Objects: 1, Bytes: 1}) || !at.Equal(st.LastScanEnd) {
		t.Fatalf("usage %v at %v", u, at)
	}

	waitFor(t, "the scanner to wait for its second cycle", func() bool { return clock.waiting(time.Minute) })
	clock.Advance(time.Minute)
	waitFor(t, "the second cycle", func() bool { return f.cyclesAfter() == 2 })
	for _, c := range f.healCalls()[4:] {
		if !c.deep {
			t.Fatalf("the second cycle (DeepScanEvery 2) healed %s/%s shallow", c.bucket, c.key)
		}
	}
	if st := j.Status(); st.ScanCycles != 2 || !st.LastScan.Deep {
		t.Fatalf("after the second cycle: %+v", st)
	}
}

// TestThrottleRestsAsLongAsWorkTook: after each object the scanner rests
// ScanThrottle times as long as healing it took, on the jobs' clock.
func TestThrottleRestsAsLongAsWorkTook(t *testing.T) {
	clock := newFakeClock()
	f := newFakeEngine(clock)
	f.work = 30 * time.Millisecond
	f.put("a", "k1", "k2", "k3")
	j := start(t, f, Config{ScanInterval: time.Minute, ScanThrottle: 2, MonitorInterval: time.Hour}, Options{})
	waitFor(t, "the scanner to wait", func() bool { return clock.waiting(time.Minute) })
	clock.Advance(time.Minute)
	for i := 0; i < 3; i++ {
		waitFor(t, "a rest of twice the work", func() bool { return clock.waiting(60 * time.Millisecond) })
		clock.Advance(60 * time.Millisecond)
	}
	waitFor(t, "the cycle", func() bool { return f.cyclesAfter() == 1 })
	if d := j.Status().LastScan.Duration; d != 3*90*time.Millisecond {
		t.Fatalf("cycle took %v on the clock, want 3 x (30ms work + 60ms rest)", d)
	}
}

// TestStopEndsARest: stopping the jobs ends a rest at once; the cycle it
// interrupted does not count.
func TestStopEndsARest(t *testing.T) {
	clock := newFakeClock()
	f := newFakeEngine(clock)
	f.work = time.Hour
	f.put("a", "k1", "k2")
	j := Start(f, Config{ScanInterval: time.Minute, MonitorInterval: 24 * time.Hour, Clock: clock}, Options{})
	waitFor(t, "the scanner to wait", func() bool { return clock.waiting(time.Minute) })
	clock.Advance(time.Minute)
	waitFor(t, "a rest of an hour", func() bool { return clock.waiting(time.Hour) })
	j.Stop()
	if st := j.Status(); st.ScanCycles != 0 || len(f.healCalls()) != 1 || f.cyclesAfter() != 0 {
		t.Fatalf("after a stop mid-cycle: %d cycles, %d heals, %d after-cycle runs", st.ScanCycles, len(f.healCalls()), f.cyclesAfter())
	}
}

// TestRecoverySweep: after an unclean stop every key is healed at once,
// and the engine hears that it was (listings may trust the drives again)
// only when no heal failed.
func TestRecoverySweep(t *testing.T) {
	for _, fail := range []bool{false, true} {
		clock := newFakeClock()
		f := newFakeEngine(clock)
		f.put("a", "k1", "k2")
		if fail {
			f.errs["a/k2"] = []error{errors.New("read quorum lost")}
		}
		j := start(t, f, Config{ScanInterval: -1, MonitorInterval: time.Hour}, Options{Unclean: true})
		waitFor(t, "the sweep", func() bool { return len(f.healCalls()) == 2 })
		j.Stop()
		f.mu.Lock()
		recovered := f.recovered
		f.mu.Unlock()
		if recovered == fail {
			t.Fatalf("a heal failed: %v; engine told the sweep was clean: %v", fail, recovered)
		}
	}
}

// TestOnlyTheScanningNodeScans: a cluster node that does not scan runs
// no cycle and no after-cycle work, and says the scanner runs elsewhere.
func TestOnlyTheScanningNodeScans(t *testing.T) {
	clock := newFakeClock()
	f := newFakeEngine(clock)
	f.notScan = true
	f.put("a", "k1")
	j := start(t, f, Config{ScanInterval: time.Minute, MonitorInterval: time.Hour}, Options{})
	for i := 0; i < 3; i++ {
		waitFor(t, "the scanner to wait", func() bool { return clock.waiting(time.Minute) })
		clock.Advance(time.Minute)
	}
	waitFor(t, "its turn to pass", func() bool { return j.Status().ScanElsewhere })
	if st := j.Status(); st.ScanCycles != 0 || len(f.healCalls()) != 0 || f.cyclesAfter() != 0 {
		t.Fatalf("a node that does not scan: %+v, %d heals, %d after-cycle runs", st, len(f.healCalls()), f.cyclesAfter())
	}
}

// TestWalkReportsProgress: an operator's walk of one bucket and prefix
// reports each object with the total found, never rests, and does not
// sweep orphans (only a walk of everything does).
func TestWalkReportsProgress(t *testing.T) {
	clock := newFakeClock()
	f := newFakeEngine(clock)
	f.work = time.Second
	f.put("a", "p/1", "p/2", "q/3")
	f.put("b", "p/4")
	f.results["a/p/2"] = []HealResult{{Bucket: "a", Key: "p/2", Missing: 1, Healed: 1, Live: true, LiveSize: 10}}
	j := start(t, f, Config{Disabled: true}, Options{})
	var seen []HealProgress
	rep, err := j.Walk(t.Context(), HealRequest{Bucket: "a", Prefix: "p/"}, func(p HealProgress) { seen = append(seen, p) })
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0].Done != 1 || seen[1].Done != 2 || seen[1].Total != 2 || seen[1].Result.Healed != 1 {
		t.Fatalf("progress %+v", seen)
	}
	if rep.Objects != 2 || rep.Damaged != 1 || rep.ShardsRewritten != 1 || rep.Buckets != 1 ||
		rep.Usage["a"] != (BucketUsage{Objects: 2, Bytes: 13}) || rep.Duration != 2*time.Second {
		t.Fatalf("report %+v", rep)
	}
	if _, err := j.Walk(t.Context(), HealRequest{Bucket: "none"}, nil); !errors.Is(err, errNoBucket) {
		t.Fatalf("walk of a missing bucket: %v", err)
	}
}
