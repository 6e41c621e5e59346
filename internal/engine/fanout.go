package engine

import (
	"fmt"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// errSlowDrive marks a drive whose call had not finished when the rest of
// an operation had what it needed (write or read quorum) and the
// straggler grace had passed. The operation goes on without it, as
// without a failed drive; the call itself still runs to its end (or the
// drive's timeout) in the background.
var errSlowDrive = fmt.Errorf("%w: slower than the rest of its set; not waited for", drive.ErrDriveFaulty)

// Straggler grace: how long an operation that has its quorum still waits
// for the drives that have not answered. Twice the time the quorum took,
// at least minStragglerGrace (so ordinary jitter, an fsync that takes a
// few milliseconds more on one drive, never leaves a drive behind and
// queues a heal) and at most maxStragglerGrace (so a frozen or far slower
// node costs a write about that much, not the drive timeout).
const (
	minStragglerGrace = 50 * time.Millisecond
	maxStragglerGrace = time.Second
)

func stragglerGrace(toQuorum time.Duration) time.Duration {
	return min(max(2*toQuorum, minStragglerGrace), maxStragglerGrace)
}

// succeeded reports whether a drive's call succeeded.
func succeeded(err error) bool { return err == nil }

// fanOut runs fn on every drive (nil drives: errDriveSkipped) at once
// and returns each drive's value and error by position, like
// forEachDrive, but does not wait for stragglers: once enough says the
// calls that finished are enough (given their values and errors, done
// marking which finished) and the straggler grace passed, every call
// still running is reported as errSlowDrive and left to finish in the
// background. left, when not nil, is called for each such drive before
// fanOut returns (and before its late call); late, when not nil, gets
// its value and error when it finishes (on another goroutine, after
// fanOut returned: it must not touch what the caller reads). Until
// enough holds, fanOut waits for all.
//
// fn hands its result back by value only, so a straggler that finishes
// late never writes into the caller's state.
func fanOut[T any](drives []drive.Drive, enough func(vals []T, errs []error, done []bool) bool, fn func(i int, d drive.Drive) (T, error), left func(i int), late func(i int, v T, err error)) ([]T, []error) {
	type result struct {
		i   int
		v   T
		err error
	}
	n := len(drives)
	vals, errs := make([]T, n), make([]error, n)
	done := make([]bool, n)
	results := make(chan result, n)
	pending := 0
	for i, d := range drives {
		if d == nil {
			errs[i] = errDriveSkipped
			done[i] = true
			continue
		}
		pending++
		go func() {
			v, err := fn(i, d)
			results <- result{i, v, err}
		}()
	}
	start := time.Now()
	var grace <-chan time.Time
	for pending > 0 {
		select {
		case r := <-results:
			pending--
			vals[r.i], errs[r.i], done[r.i] = r.v, r.err, true
			if grace == nil && pending > 0 && enough(vals, errs, done) {
				t := time.NewTimer(stragglerGrace(time.Since(start)))
				defer t.Stop()
				grace = t.C
			}
		case <-grace:
			for i := range done {
				if !done[i] {
					errs[i] = errSlowDrive
					if left != nil {
						left(i)
					}
				}
			}
			go func(pending int) {
				for ; pending > 0; pending-- {
					r := <-results
					if late != nil {
						late(r.i, r.v, r.err)
					}
				}
			}(pending)
			return vals, errs
		}
	}
	return vals, errs
}

// atLeast is an enough for fanOut: need calls finished with ok(err).
func atLeast[T any](need int, ok func(error) bool) func([]T, []error, []bool) bool {
	return func(_ []T, errs []error, done []bool) bool {
		n := 0
		for i, err := range errs {
			if done[i] && ok(err) {
				n++
			}
		}
		return n >= need
	}
}

// fanOutErr is fanOut for calls that return only an error, waiting for
// need of them to succeed.
func fanOutErr(drives []drive.Drive, need int, fn func(i int, d drive.Drive) error, left func(i int), late func(i int, err error)) []error {
	_, errs := fanOut(drives, atLeast[struct{}](need, succeeded), func(i int, d drive.Drive) (struct{}, error) {
		return struct{}{}, fn(i, d)
	}, left, func(i int, _ struct{}, err error) {
		if late != nil {
			late(i, err)
		}
	})
	return errs
}

// indexWrites counts the index batches of an object that a write left
// behind on a drive (stragglers) and that are still being applied: such
// a batch goes on after the write was answered (and the key's lock
// released), and a later read of that drive could see the record from
// before it and build on it, to be overwritten or to overwrite. While one
// runs, readObject reports the drive as slow (errSlowDrive): commits,
// deletes and the heal leave it alone.
type indexWrites struct {
	mu sync.Mutex
	n  map[indexWriteKey]int
}

type indexWriteKey struct {
	set, drive int
	key        string
}

// begin notes a batch of key left running on drive p of set; the
// returned function notes its end.
func (w *indexWrites) begin(set, p int, key string) func() {
	k := indexWriteKey{set, p, key}
	w.mu.Lock()
	if w.n == nil {
		w.n = map[indexWriteKey]int{}
	}
	w.n[k]++
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		if w.n[k]--; w.n[k] <= 0 {
			delete(w.n, k)
		}
		w.mu.Unlock()
	}
}

// running reports whether a batch of key left behind is being applied on
// drive p.
func (w *indexWrites) running(set, p int, key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n[indexWriteKey{set, p, key}] > 0
}

// leftIndexWrites returns the left and late hooks of a fanOut of index
// batches of key: a drive left behind counts in e.indexWrites until its
// batch ends.
func (e *Engine) leftIndexWrites(set *erasureSet, key string) (left func(int), late func(int, error)) {
	ends := make([]func(), len(set.drives))
	return func(p int) { ends[p] = e.indexWrites.begin(set.index, p, key) },
		func(p int, _ error) { ends[p]() }
}
