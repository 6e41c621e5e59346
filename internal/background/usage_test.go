package background

import (
	"context"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// TestBucketUsageSurvivesRestart: the usage of the last cycle is kept on
// the drives, so jobs started again on them publish it (with that
// cycle's time) before their own first cycle.
func TestBucketUsageSurvivesRestart(t *testing.T) {
	clock := newFakeClock()
	drives := localDrives(t, 4)
	f := newFakeEngine(clock)
	f.sets = [][]drive.Drive{drives}
	f.put("bucket", "k1", "k22")
	j := start(t, f, Config{ScanInterval: time.Minute, MonitorInterval: time.Hour}, Options{})
	waitFor(t, "the scanner to wait", func() bool { return clock.waiting(time.Minute) })
	clock.Advance(time.Minute)
	waitFor(t, "a cycle", func() bool { return f.cyclesAfter() == 1 })
	_, at := j.BucketUsage()
	if _, err := getRecord(context.Background(), drives[0], usageRecord); err != nil {
		t.Fatalf("no usage record on the drives after a cycle: %v", err)
	}
	j.Stop()

	// Started again with no cycle to come: the saved usage is what they
	// publish.
	clock.Advance(time.Hour)
	again := start(t, f, Config{ScanInterval: time.Hour, MonitorInterval: time.Hour}, Options{})
	waitFor(t, "the saved usage", func() bool { u, _ := again.BucketUsage(); return u != nil })
	u, at2 := again.BucketUsage()
	if u["bucket"] != (BucketUsage{Objects: 2, Bytes: 5}) || !at2.Equal(at) {
		t.Fatalf("restored usage %+v at %v, want the cycle's of %v", u, at2, at)
	}
}

// TestIdleNodeShowsSavedUsage: a cluster node that does not scan shows
// the usage the scanning node saved on the shared drives, on its next
// turn.
func TestIdleNodeShowsSavedUsage(t *testing.T) {
	clock := newFakeClock()
	drives := localDrives(t, 4)
	scanner, idle := newFakeEngine(clock), newFakeEngine(clock)
	scanner.sets, idle.sets = [][]drive.Drive{drives}, [][]drive.Drive{drives}
	scanner.put("bucket", "abc")
	idle.notScan = true
	// The two nodes' scanner loops wait different times, so the test can
	// move them one at a time.
	s := start(t, scanner, Config{ScanInterval: time.Minute, MonitorInterval: time.Hour}, Options{})
	i := start(t, idle, Config{ScanInterval: 2 * time.Minute, MonitorInterval: time.Hour}, Options{})
	waitFor(t, "both nodes to wait", func() bool { return clock.waiting(time.Minute) && clock.waiting(2*time.Minute) })
	clock.Advance(time.Minute)
	waitFor(t, "a cycle", func() bool { return scanner.cyclesAfter() == 1 })
	_, first := s.BucketUsage()
	if u, _ := i.BucketUsage(); u != nil {
		t.Fatalf("the idle node shows usage before its turn: %v", u)
	}
	clock.Advance(time.Minute)
	waitFor(t, "the idle node's turn", func() bool { return i.Status().ScanElsewhere })
	waitFor(t, "the usage on the idle node", func() bool { u, _ := i.BucketUsage(); return u != nil })
	// The scanning node's first cycle, or its second if it saved that
	// before the idle node read the drives.
	u, at := i.BucketUsage()
	if u["bucket"] != (BucketUsage{Objects: 1, Bytes: 3}) || at.Before(first) {
		t.Fatalf("idle node shows %v at %v, want the scanning node's of %v or later", u, at, first)
	}
	if st := i.Status(); st.ScanCycles != 0 || len(idle.healCalls()) != 0 {
		t.Fatalf("the idle node scanned: %+v", st)
	}
}
