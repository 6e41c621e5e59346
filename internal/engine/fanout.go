package engine

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// errSlowDrive marks a lagging drive whose call had not finished when the
// rest of an operation had what it needed (write or read quorum) and the
// straggler grace had passed. The operation goes on without it, as
// without a failed drive; the call itself still runs to its end (or the
// drive's timeout) in the background.
var errSlowDrive = fmt.Errorf("%w: slower than the rest of its set; not waited for", drive.ErrDriveFaulty)

// Stragglers. An operation that has its quorum waits for the other
// drives as long as they are not known to lag: a drive is left behind
// (its object then sits on fewer drives until the heal, and one more
// lost node could make it unreadable for a while) only once it proved
// far slower than its set. A drive still running lagAfter after the
// quorum (or four times what the quorum took, if longer: lagAfterFor) is
// marked lagging for lagFor (renewed while it goes on lagging);
// an operation waits for a lagging drive only the straggler grace:
// twice the time the quorum took, within [minStragglerGrace,
// maxStragglerGrace]. So a frozen or much slower node costs about
// lagAfter once, then the grace per phase, instead of the drive timeout
// on every write; ordinary jitter (one fsync a few milliseconds slower, a
// loaded CPU) never leaves a drive behind.
const (
	lagAfter          = time.Second
	lagFor            = 10 * time.Second
	minStragglerGrace = 50 * time.Millisecond
	maxStragglerGrace = time.Second
)

func stragglerGrace(toQuorum time.Duration) time.Duration {
	return min(max(2*toQuorum, minStragglerGrace), maxStragglerGrace)
}

// maxLagAfter caps lagAfterFor.
const maxLagAfter = 10 * time.Second

// lagAfterFor is how long after the quorum a drive still running is left
// behind and marked lagging: lagAfter, or four times what the quorum
// took when that is longer (at most maxLagAfter). On an overloaded
// machine every drive's queue is slow and the quorum itself takes
// seconds; a drive a second behind it is not slower than its set, and
// leaving it behind only puts the object on fewer drives until a heal (a
// 48-writer fill on 2 cores left 6-15 % of its keys to the heal queue).
func lagAfterFor(toQuorum time.Duration) time.Duration {
	return min(max(lagAfter, 4*toQuorum), maxLagAfter)
}

// fanOuts is what the fan-outs of an engine share: the drives known to
// lag and the goroutines parked for the next call.
type fanOuts struct {
	lagging
	runners runners
}

// runners parks the goroutines that ran a fan-out's drive calls for the
// next ones. A new goroutine starts with a small stack, and a drive
// call's wait for its worker outgrew it every time: a stack copy per
// drive per GET, 6 % of the server's CPU on small-object GETs.
type runners struct {
	mu     sync.Mutex
	idle   []chan func()
	closed bool
}

// maxIdleRunners bounds the parked goroutines: a GET of each of 64
// concurrent requests to 16 drives.
const maxIdleRunners = 1024

// run calls fn on a parked goroutine, or a new one.
func (r *runners) run(fn func()) {
	r.mu.Lock()
	if n := len(r.idle); n > 0 {
		c := r.idle[n-1]
		r.idle = r.idle[:n-1]
		r.mu.Unlock()
		c <- fn
		return
	}
	r.mu.Unlock()
	go r.loop(make(chan func()), fn)
}

func (r *runners) loop(c chan func(), fn func()) {
	for ok := true; ok; fn, ok = <-c {
		fn()
		r.mu.Lock()
		if r.closed || len(r.idle) >= maxIdleRunners {
			r.mu.Unlock()
			return
		}
		r.idle = append(r.idle, c)
		r.mu.Unlock()
	}
}

// close ends the parked goroutines; later calls get goroutines of their
// own that end with them.
func (r *runners) close() {
	r.mu.Lock()
	idle := r.idle
	r.idle, r.closed = nil, true
	r.mu.Unlock()
	for _, c := range idle {
		close(c)
	}
}

// lagging remembers the drives that fell lagAfter behind their set, until
// when they count as lagging.
type lagging struct {
	mu    sync.Mutex
	until map[drive.Drive]time.Time
}

// allLagging reports whether every drive not done is lagging at now.
func (l *lagging) allLagging(drives []drive.Drive, done []bool, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, d := range drives {
		if !done[i] && !now.Before(l.until[d]) {
			return false
		}
	}
	return true
}

// isLagging reports whether d counts as lagging at now.
func (l *lagging) isLagging(d drive.Drive, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return now.Before(l.until[d])
}

func (l *lagging) mark(d drive.Drive, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.until == nil {
		l.until = map[drive.Drive]time.Time{}
	}
	for k, t := range l.until {
		if !now.Before(t) {
			delete(l.until, k) // expired: keeps the map at the drives lagging now
		}
	}
	l.until[d] = now.Add(lagFor)
}

// succeeded reports whether a drive's call succeeded.
func succeeded(err error) bool { return err == nil }

// fanOut runs fn on every drive (nil drives: errDriveSkipped) at once
// and returns each drive's value and error by position, like
// forEachDrive, but does not wait for drives that lag (see lagAfter):
// once enough says the calls that finished are enough (given their
// values and errors, done marking which finished), a call still running
// on a lagging drive is waited for only the straggler grace, and any call
// still running lagAfter after that point marks its drive lagging. Such
// calls are reported as errSlowDrive and left to finish in the
// background. left, when not nil, is called for each such drive before
// fanOut returns (and before its late call); late, when not nil, gets
// its value and error when it finishes (on another goroutine, after
// fanOut returned: it must not touch what the caller reads). Until
// enough holds, fanOut waits for all; with lag nil it always does.
//
// fn hands its result back by value only, so a straggler that finishes
// late never writes into the caller's state.
func fanOut[T any](lag *fanOuts, drives []drive.Drive, enough func(vals []T, errs []error, done []bool) bool, fn func(i int, d drive.Drive) (T, error), left func(i int), late func(i int, v T, err error)) ([]T, []error) {
	return fanOutStaged(lag, drives, nil, enough, fn, left, late)
}

// hedgeAfter is how long a staged fanOut gives its first wave before it
// calls the other drives too: a drive of the first wave that is slow but
// not yet known to lag then costs a read its set's speed plus this, not
// the drive's speed.
const hedgeAfter = 50 * time.Millisecond

// fanOutStaged is fanOut calling first the drives first marks (nil: all
// at once, as fanOut): the others are called only when the first wave
// cannot be enough, i.e. once one of its calls failed, once all of it
// finished without enough holding, or hedgeAfter after the start. A read
// that usually needs only some drives (a GET needs the records of as many
// drives as the object has data shards) thereby costs only those.
func fanOutStaged[T any](lag *fanOuts, drives []drive.Drive, first []bool, enough func(vals []T, errs []error, done []bool) bool, fn func(i int, d drive.Drive) (T, error), left func(i int), late func(i int, v T, err error)) ([]T, []error) {
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
	spawn := func(f func()) { go f() }
	if lag != nil {
		spawn = lag.runners.run
	}
	launch := func(i int, d drive.Drive) {
		pending++
		spawn(func() {
			v, err := fn(i, d)
			results <- result{i, v, err}
		})
	}
	var waiting []int // the second wave, not called yet
	for i, d := range drives {
		switch {
		case d == nil:
			errs[i] = errDriveSkipped
			done[i] = true
		case first == nil || first[i]:
			launch(i, d)
		default:
			waiting = append(waiting, i)
		}
	}
	var hedge <-chan time.Time
	if len(waiting) > 0 {
		hedgeTimer := time.NewTimer(hedgeAfter)
		defer hedgeTimer.Stop()
		hedge = hedgeTimer.C
	}
	callRest := func() {
		for _, i := range waiting {
			launch(i, drives[i])
		}
		waiting, hedge = nil, nil
	}
	if pending == 0 {
		callRest() // no first wave
	}
	start := time.Now()
	var quorumAt time.Time
	var grace, lagLimit time.Duration
	var timer *time.Timer
	var wake <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for pending > 0 {
		select {
		case r := <-results:
			pending--
			vals[r.i], errs[r.i], done[r.i] = r.v, r.err, true
			if quorumAt.IsZero() && enough(vals, errs, done) {
				quorumAt = time.Now()
				grace = stragglerGrace(quorumAt.Sub(start))
				lagLimit = lagAfterFor(quorumAt.Sub(start))
				for _, i := range waiting {
					errs[i], done[i] = errNotCalled, true
				}
				waiting, hedge = nil, nil
			}
			if len(waiting) > 0 && (r.err != nil || pending == 0) {
				callRest()
			}
		case <-hedge:
			callRest()
		case <-wake:
		}
		if quorumAt.IsZero() || pending == 0 || lag == nil {
			continue
		}
		now := time.Now()
		onlyLagging := lag.allLagging(drives, done, now)
		since := now.Sub(quorumAt)
		if (onlyLagging && since >= grace) || since >= lagLimit {
			for i := range done {
				if !done[i] {
					lag.mark(drives[i], now)
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
		next := lagLimit - since
		if onlyLagging {
			next = grace - since
		}
		if timer == nil {
			timer = time.NewTimer(next)
		} else {
			timer.Stop()
			timer.Reset(next)
		}
		wake = timer.C
	}
	return vals, errs
}

// errNotCalled marks a drive a staged fanOut did not need to call.
var errNotCalled = errors.New("drive not read: the others were enough")

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
func fanOutErr(lag *fanOuts, drives []drive.Drive, need int, fn func(i int, d drive.Drive) error, left func(i int), late func(i int, err error)) []error {
	_, errs := fanOut(lag, drives, atLeast[struct{}](need, succeeded), func(i int, d drive.Drive) (struct{}, error) {
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

// running returns the drives of set on which a batch of key left behind
// is being applied (one lock for all of them: every read asks).
func (w *indexWrites) running(set int, key string) []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []int
	for k := range w.n {
		if k.set == set && k.key == key {
			out = append(out, k.drive)
		}
	}
	return out
}

// leftIndexWrites returns the left and late hooks of a fanOut of index
// batches of key: a drive left behind counts in e.indexWrites until its
// batch ends.
func (e *Engine) leftIndexWrites(set *erasureSet, key string) (left func(int), late func(int, error)) {
	ends := make([]func(), len(set.drives))
	return func(p int) { ends[p] = e.indexWrites.begin(set.index, p, key) },
		func(p int, _ error) { ends[p]() }
}
