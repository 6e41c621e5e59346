package engine

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// stubDrive is a non-nil drive.Drive for fanOut, which only passes it on.
type stubDrive struct{ drive.Drive }

func stubDrives(n int) []drive.Drive {
	ds := make([]drive.Drive, n)
	for i := range ds {
		ds[i] = &stubDrive{} // distinct, as lagging tells drives apart
	}
	return ds
}

// TestFanOutLeavesLaggingDrivesBehind: a drive still running lagAfter
// after the quorum is left behind (errSlowDrive, left called before
// fanOut returns, late with its result when it ends) and marked lagging;
// the next operation waits for it only the short grace. A drive that is
// merely slower than the others, within lagAfter, is waited for.
func TestFanOutLeavesLaggingDrivesBehind(t *testing.T) {
	var lag lagging
	ds := stubDrives(5)
	release := make(chan struct{})
	var mu sync.Mutex
	var leftAt []int
	lateErr := make(chan error, 2)
	run := func() ([]int, []error, time.Duration) {
		start := time.Now()
		vals, errs := fanOut(&lag, ds, atLeast[int](3, succeeded), func(i int, _ drive.Drive) (int, error) {
			switch i {
			case 4:
				<-release
				return 0, errors.New("late failure")
			case 3:
				time.Sleep(300 * time.Millisecond) // slower, not lagging
			}
			return i * 10, nil
		}, func(i int) {
			mu.Lock()
			leftAt = append(leftAt, i)
			mu.Unlock()
		}, func(i int, _ int, err error) {
			if i != 4 {
				t.Errorf("late call for drive %d", i)
			}
			lateErr <- err
		})
		return vals, errs, time.Since(start)
	}
	check := func(vals []int, errs []error) {
		t.Helper()
		if !errors.Is(errs[4], errSlowDrive) || !errors.Is(errs[4], drive.ErrDriveFaulty) {
			t.Fatalf("straggler: %v, want errSlowDrive", errs[4])
		}
		for i := range 4 {
			if errs[i] != nil || vals[i] != i*10 {
				t.Fatalf("drive %d: %d, %v (a drive within lagAfter must be waited for)", i, vals[i], errs[i])
			}
		}
	}
	vals, errs, took := run()
	check(vals, errs)
	if took < lagAfter {
		t.Fatalf("first operation returned after %v, before lagAfter", took)
	}
	now, pending := time.Now(), []bool{false}
	if !lag.allLagging(ds[4:5], pending, now) || lag.allLagging(ds[3:4], pending, now) {
		t.Fatal("lagging should mark drive 4 only")
	}
	// Now known to lag: left behind once drive 3 (300 ms) is done and
	// the grace passed, well before lagAfter.
	vals, errs, took = run()
	check(vals, errs)
	if took >= lagAfter {
		t.Fatalf("second operation took %v: it waited lagAfter for a drive known to lag", took)
	}
	mu.Lock()
	if len(leftAt) != 2 || leftAt[0] != 4 || leftAt[1] != 4 {
		t.Fatalf("left called for %v, want [4 4]", leftAt)
	}
	mu.Unlock()
	close(release)
	for range 2 {
		select {
		case err := <-lateErr:
			if err == nil || err.Error() != "late failure" {
				t.Fatalf("late got %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("late never called")
		}
	}
}

// TestFanOutWaitsWithoutQuorum: with fewer successes than needed every
// call is waited for, and nothing is reported slow.
func TestFanOutWaitsWithoutQuorum(t *testing.T) {
	var lag lagging
	errs := fanOutErr(&lag, stubDrives(4), 3, func(i int, _ drive.Drive) error {
		switch i {
		case 0, 1:
			return errors.New("failed")
		case 3:
			time.Sleep(3 * lagAfter / 2)
		}
		return nil
	}, func(i int) { t.Errorf("drive %d left behind", i) }, nil)
	for i, err := range errs {
		if errors.Is(err, errSlowDrive) || (i >= 2) != (err == nil) {
			t.Fatalf("drive %d: %v", i, err)
		}
	}
}

// TestIndexWritesCounted: a batch left running hides the drive from
// readObject's view until it ends.
func TestIndexWritesCounted(t *testing.T) {
	var w indexWrites
	end1 := w.begin(0, 3, "k")
	end2 := w.begin(0, 3, "k")
	end3 := w.begin(1, 2, "k")
	if got := w.running(0, "k"); !slices.Equal(got, []int{3}) {
		t.Fatalf("running(0, k) = %v, want [3]", got)
	}
	if got := w.running(0, "j"); len(got) != 0 {
		t.Fatalf("running(0, j) = %v, want none", got)
	}
	end3()
	end1()
	if got := w.running(0, "k"); !slices.Equal(got, []int{3}) {
		t.Fatal("one of two batches ended, drive no longer counted")
	}
	end2()
	if got := w.running(0, "k"); len(got) != 0 || len(w.n) != 0 {
		t.Fatalf("after both ended: %v", w.n)
	}
}
