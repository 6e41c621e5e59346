package engine

import (
	"errors"
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
		ds[i] = stubDrive{}
	}
	return ds
}

// TestFanOutLeavesStragglersBehind: once enough calls succeeded and the
// grace passed, a call still running is errSlowDrive, left is called for
// it before fanOut returns, and late gets its result when it ends.
func TestFanOutLeavesStragglersBehind(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var leftAt []int
	lateErr := make(chan error, 1)
	start := time.Now()
	vals, errs := fanOut(stubDrives(5), atLeast[int](3, succeeded), func(i int, _ drive.Drive) (int, error) {
		if i == 4 {
			<-release
			return 0, errors.New("late failure")
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
	waited := time.Since(start)
	if !errors.Is(errs[4], errSlowDrive) || !errors.Is(errs[4], drive.ErrDriveFaulty) {
		t.Fatalf("straggler: %v, want errSlowDrive", errs[4])
	}
	for i := range 4 {
		if errs[i] != nil || vals[i] != i*10 {
			t.Fatalf("drive %d: %d, %v", i, vals[i], errs[i])
		}
	}
	mu.Lock()
	if len(leftAt) != 1 || leftAt[0] != 4 {
		t.Fatalf("left called for %v, want [4]", leftAt)
	}
	mu.Unlock()
	if waited < minStragglerGrace {
		t.Fatalf("returned after %v, before the grace", waited)
	}
	close(release)
	select {
	case err := <-lateErr:
		if err == nil || err.Error() != "late failure" {
			t.Fatalf("late got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("late never called")
	}
}

// TestFanOutWaitsWithoutQuorum: with fewer successes than needed every
// call is waited for, and nothing is reported slow.
func TestFanOutWaitsWithoutQuorum(t *testing.T) {
	errs := fanOutErr(stubDrives(4), 3, func(i int, _ drive.Drive) error {
		switch i {
		case 0, 1:
			return errors.New("failed")
		case 3:
			time.Sleep(3 * maxStragglerGrace / 2)
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
	if !w.running(0, 3, "k") || w.running(0, 2, "k") || w.running(1, 3, "k") || w.running(0, 3, "j") {
		t.Fatal("running reports the wrong drives")
	}
	end1()
	if !w.running(0, 3, "k") {
		t.Fatal("one of two batches ended, drive no longer counted")
	}
	end2()
	if w.running(0, 3, "k") || len(w.n) != 0 {
		t.Fatalf("after both ended: %v", w.n)
	}
}
