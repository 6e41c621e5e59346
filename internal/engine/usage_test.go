package engine

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Integration tests of the bucket usage the background jobs count with
// the engine's healer (internal/background has the unit tests, on a fake
// engine: the usage record surviving a restart among them).

// TestHealCountsBucketUsage: a whole-store heal walk counts each bucket's
// current objects and bytes; delete markers and noncurrent versions are
// not objects, and the scanner publishes the count of its last cycle.
func TestHealCountsBucketUsage(t *testing.T) {
	e, _ := testEngine(t, 4, Config{Heal: HealConfig{ScanInterval: -1}})
	ctx := context.Background()
	put := func(bucket, key, body string) {
		t.Helper()
		if _, err := e.PutObject(ctx, bucket, key, strings.NewReader(body), int64(len(body)), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.MakeBucket(ctx, "other", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	if err := e.MakeBucket(ctx, "empty", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	put("bucket", "a", "12345")
	put("bucket", "b/c", strings.Repeat("x", 100_000))
	put("other", "x", "1")
	setVersioning(t, e, "Enabled")
	put("bucket", "v", "old")
	put("bucket", "v", "newer!") // the old version is noncurrent
	put("bucket", "gone", "zz")
	if err := e.DeleteObject(ctx, "bucket", "gone"); err != nil { // a delete marker
		t.Fatal(err)
	}
	rep, err := e.Heal(ctx, HealRequest{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]BucketUsage{
		"bucket": {Objects: 3, Bytes: 5 + 100_000 + 6},
		"other":  {Objects: 1, Bytes: 1},
		"empty":  {},
	}
	for b, w := range want {
		if got := rep.Usage[b]; got != w {
			t.Errorf("usage of %s = %+v, want %+v", b, got, w)
		}
	}
	if len(rep.Usage) != len(want) {
		t.Errorf("usage has %d buckets, want %d: %+v", len(rep.Usage), len(want), rep.Usage)
	}
	if u, at := e.BucketUsage(); u != nil || !at.IsZero() {
		t.Errorf("usage before any scanner cycle = %v at %v, want none", u, at)
	}
}

// TestScannerPublishesBucketUsage: after a scanner cycle BucketUsage
// holds what it counted, stamped with the cycle's end.
func TestScannerPublishesBucketUsage(t *testing.T) {
	e, _ := testEngine(t, 4, Config{Heal: HealConfig{ScanInterval: 20 * time.Millisecond}})
	body := "hello"
	if _, err := e.PutObject(context.Background(), "bucket", "k", strings.NewReader(body), int64(len(body)), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		u, at := e.BucketUsage()
		if u["bucket"].Objects == 1 {
			if u["bucket"].Bytes != int64(len(body)) || at.IsZero() {
				t.Fatalf("usage %+v at %v", u["bucket"], at)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scanner cycle counted the object within 10s: %+v", u)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOneClusterNodeScans: on a cluster every node sees every drive, so
// only the node ScansHere names (the consensus leader) runs scanner
// cycles; another shows the bucket usage that node saved, and says the
// scanner runs elsewhere.
func TestOneClusterNodeScans(t *testing.T) {
	ctx := context.Background()
	drives := localDrives(t, 4)
	open := func(scans bool, interval time.Duration) *Engine {
		e, err := New(Config{Drives: drives, Heal: HealConfig{ScanInterval: interval},
			Cluster: &ClusterConfig{FormatNew: true, ScansHere: func() bool { return scans }}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	idle := open(false, 20*time.Millisecond)
	if err := idle.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	body := "counted by the other node"
	if _, err := idle.PutObject(ctx, "bucket", "k", strings.NewReader(body), int64(len(body)), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	// Several of idle's turns pass without a cycle of its own.
	time.Sleep(200 * time.Millisecond)
	if st := idle.HealStatus(); st.ScanCycles != 0 || st.ScanRunning || !st.ScanElsewhere {
		t.Fatalf("the node that does not scan: %d cycles, running %v, elsewhere %v", st.ScanCycles, st.ScanRunning, st.ScanElsewhere)
	}
	scanner := open(true, 20*time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for {
		u, at := idle.BucketUsage()
		if u["bucket"].Objects == 1 && u["bucket"].Bytes == int64(len(body)) && !at.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle node never showed the usage the scanning node saved: %+v (scanner: %+v)", u, scanner.HealStatus())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := scanner.HealStatus(); st.ScanCycles == 0 || st.ScanElsewhere {
		t.Fatalf("the scanning node: %d cycles, elsewhere %v", st.ScanCycles, st.ScanElsewhere)
	}
	if st := idle.HealStatus(); st.ScanCycles != 0 {
		t.Fatalf("the node that does not scan ran %d cycles", st.ScanCycles)
	}
}
