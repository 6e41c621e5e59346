package engine

import (
	"errors"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
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
	var lag fanOuts
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

// TestFanOutWaitsLongerWhenEveryDriveIsSlow: when the quorum itself took
// long (an overloaded machine: every drive's queue is slow), a drive a
// second behind it is not left behind; it is once it is four times the
// quorum's time behind.
func TestFanOutWaitsLongerWhenEveryDriveIsSlow(t *testing.T) {
	var lag fanOuts
	const toQuorum = 400 * time.Millisecond
	slow := toQuorum + lagAfter + 300*time.Millisecond // past lagAfter, within 4x the quorum's time
	errs := fanOutErr(&lag, stubDrives(6), 4, func(i int, _ drive.Drive) error {
		d := toQuorum
		if i >= 4 {
			d = slow
		}
		time.Sleep(d)
		return nil
	}, func(i int) { t.Errorf("drive %d left behind %v after the quorum", i, slow-toQuorum) }, nil)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("drive %d: %v", i, err)
		}
	}
	if got := lagAfterFor(toQuorum); got != 4*toQuorum {
		t.Fatalf("lagAfterFor(%v) = %v", toQuorum, got)
	}
	if got := lagAfterFor(10 * time.Millisecond); got != lagAfter {
		t.Fatalf("lagAfterFor(10ms) = %v, want lagAfter", got)
	}
	if got := lagAfterFor(time.Minute); got != maxLagAfter {
		t.Fatalf("lagAfterFor(1m) = %v, want the cap", got)
	}
}

// TestFanOutWaitsWithoutQuorum: with fewer successes than needed every
// call is waited for, and nothing is reported slow.
func TestFanOutWaitsWithoutQuorum(t *testing.T) {
	var lag fanOuts
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

// TestFanOutStaged: the second wave is called only when the first cannot
// be enough: never when it is, at once when one of its calls fails, when
// it finished without enough, and hedgeAfter after the start when it is
// slow.
func TestFanOutStaged(t *testing.T) {
	ds := stubDrives(6)
	first := []bool{true, true, true, true, false, false}
	type outcome struct {
		called []int
		errs   []error
		took   time.Duration
	}
	run := func(fn func(i int) (int, error)) outcome {
		var mu sync.Mutex
		var called []int
		start := time.Now()
		// Enough: 4 calls that returned the same value.
		enough := func(vals []int, errs []error, done []bool) bool {
			count := map[int]int{}
			for i := range vals {
				if done[i] && errs[i] == nil {
					count[vals[i]]++
					if count[vals[i]] >= 4 {
						return true
					}
				}
			}
			return false
		}
		_, errs := fanOutStaged(&fanOuts{}, ds, first, enough, func(i int, _ drive.Drive) (int, error) {
			mu.Lock()
			called = append(called, i)
			mu.Unlock()
			return fn(i)
		}, nil, nil)
		mu.Lock()
		defer mu.Unlock()
		slices.Sort(called)
		return outcome{called, errs, time.Since(start)}
	}
	all := []int{0, 1, 2, 3, 4, 5}

	o := run(func(int) (int, error) { return 7, nil })
	if !slices.Equal(o.called, []int{0, 1, 2, 3}) {
		t.Fatalf("first wave enough: called %v, want only the first wave", o.called)
	}
	for _, i := range []int{4, 5} {
		if !errors.Is(o.errs[i], errNotCalled) {
			t.Fatalf("drive %d not called: error %v, want errNotCalled", i, o.errs[i])
		}
	}

	o = run(func(i int) (int, error) {
		if i == 1 {
			return 0, errors.New("failed")
		}
		return 7, nil
	})
	if !slices.Equal(o.called, all) || o.took >= hedgeAfter || o.errs[4] != nil || o.errs[5] != nil {
		t.Fatalf("first wave with a failure: called %v in %v (errs %v), want all at once", o.called, o.took, o.errs)
	}

	o = run(func(i int) (int, error) {
		if i == 2 {
			return 8, nil // disagrees
		}
		return 7, nil
	})
	if !slices.Equal(o.called, all) || o.took >= hedgeAfter {
		t.Fatalf("first wave not enough: called %v in %v, want all once it finished", o.called, o.took)
	}

	// A slow drive of the first wave: the second is called at the hedge,
	// not when the slow drive ends (which is then waited for, as fanOut
	// waits for any drive not known to lag).
	start := time.Now()
	var calledAt atomic.Int64
	o = run(func(i int) (int, error) {
		switch i {
		case 3:
			time.Sleep(hedgeAfter + 300*time.Millisecond)
		case 4:
			calledAt.Store(int64(time.Since(start)))
		}
		return 7, nil
	})
	if at := time.Duration(calledAt.Load()); !slices.Equal(o.called, all) || at < hedgeAfter || at >= hedgeAfter+300*time.Millisecond {
		t.Fatalf("slow first wave: called %v, the second wave after %v, want at the hedge (%v)", o.called, at, hedgeAfter)
	}
}

// runners runs every call, reuses parked goroutines, and close ends them
// while later calls still run.
func TestRunners(t *testing.T) {
	var r runners
	var wg sync.WaitGroup
	var ran atomic.Int64
	for range 3 {
		for range 50 {
			wg.Add(1)
			r.run(func() { ran.Add(1); wg.Done() })
		}
		wg.Wait()
	}
	if ran.Load() != 150 {
		t.Fatalf("%d of 150 calls ran", ran.Load())
	}
	waitUntil(t, "runners parked", 5*time.Second, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return len(r.idle) > 0 })
	r.mu.Lock()
	parked := len(r.idle)
	r.mu.Unlock()
	if parked > 50 {
		t.Fatalf("%d goroutines parked for 50 concurrent calls", parked)
	}
	before := runtime.NumGoroutine()
	r.close()
	waitUntil(t, "parked runners ended", 5*time.Second, func() bool { return runtime.NumGoroutine() <= before-parked })
	wg.Add(1)
	r.run(func() { ran.Add(1); wg.Done() })
	wg.Wait()
	if ran.Load() != 151 {
		t.Fatal("a call after close did not run")
	}
}
