package background

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// fakeClock is a Clock that moves only when the test advances it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	// asked records the duration of every timer made (not tickers): the
	// scanner's pauses and the throttle's rests.
	asked []time.Duration
}

type fakeTimer struct {
	clock  *fakeClock
	c      chan time.Time
	at     time.Time
	period time.Duration // tickers
	d      time.Duration
	live   bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, d)
	return c.add(&fakeTimer{clock: c, c: make(chan time.Time, 1), at: c.now.Add(d), d: d, live: true})
}

func (c *fakeClock) NewTicker(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.add(&fakeTimer{clock: c, c: make(chan time.Time, 1), at: c.now.Add(d), period: d, d: d, live: true})
}

func (c *fakeClock) add(t *fakeTimer) *fakeTimer {
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() {
	t.clock.mu.Lock()
	t.live = false
	t.clock.mu.Unlock()
}

// Advance moves the clock d forward and fires the timers that came due
// (a ticker once, however many periods passed, as time.Ticker drops
// ticks nobody took).
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	live := c.timers[:0]
	for _, t := range c.timers {
		if t.live && !t.at.After(c.now) {
			select {
			case t.c <- c.now:
			default:
			}
			if t.period > 0 {
				for !t.at.After(c.now) {
					t.at = t.at.Add(t.period)
				}
			} else {
				t.live = false
			}
		}
		if t.live {
			live = append(live, t)
		}
	}
	c.timers = live
}

// waiting reports whether a live timer (not a ticker) of duration d is
// armed: a job is sleeping d.
func (c *fakeClock) waiting(d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.timers {
		if t.live && t.period == 0 && t.d == d {
			return true
		}
	}
	return false
}

// waitFor polls cond (in real time) until it holds or a few seconds
// passed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// healCall is one HealObject the fake engine answered.
type healCall struct {
	bucket, key string
	deep        bool
}

// fakeEngine is the engine side of the jobs over an in-memory namespace
// (buckets of keys, one set) and, where a test needs persistence, real
// drives.
type fakeEngine struct {
	clock *fakeClock
	// work is how long each HealObject takes on the fake clock.
	work time.Duration
	sets [][]drive.Drive
	node string

	mu        sync.Mutex
	buckets   map[string][]string // sorted keys
	calls     []healCall
	results   map[string][]HealResult // per "bucket/key": answers to give in turn (then the zero result)
	errs      map[string][]error
	notScan   bool
	afterScan int
	recovered bool
	driveIDs  map[drive.Drive]string
	setOf     func(bucket, key string) int
}

func newFakeEngine(clock *fakeClock) *fakeEngine {
	return &fakeEngine{clock: clock, buckets: map[string][]string{}, results: map[string][]HealResult{},
		errs: map[string][]error{}, driveIDs: map[drive.Drive]string{}}
}

// put adds keys to bucket.
func (f *fakeEngine) put(bucket string, keys ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buckets[bucket] = append(f.buckets[bucket], keys...)
	slices.Sort(f.buckets[bucket])
}

func (f *fakeEngine) healCalls() []healCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeEngine) Sets() [][]drive.Drive { return f.sets }

func (f *fakeEngine) SetOf(bucket, key string) int {
	if f.setOf != nil {
		return f.setOf(bucket, key)
	}
	return 0
}

func (f *fakeEngine) Owns(slot int) bool { return true }

func (f *fakeEngine) CheckDrive(ctx context.Context, set, slot int) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id, ok := f.driveIDs[f.sets[set][slot]]; ok {
		return id, nil
	}
	return "", errors.New("not a drive this test refills")
}

func (f *fakeEngine) HoldsBuckets(ctx context.Context, d drive.Drive) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, blank := f.driveIDs[d]
	return !blank, nil
}

func (f *fakeEngine) ScansHere() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.notScan
}

func (f *fakeEngine) NodeRecord(name string) string {
	if f.node != "" {
		return name + "@" + f.node
	}
	return name
}

func (f *fakeEngine) Buckets(ctx context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for b := range f.buckets {
		out = append(out, b)
	}
	slices.Sort(out)
	return out, nil
}

var errNoBucket = errors.New("no such bucket")

func (f *fakeEngine) CheckBucket(ctx context.Context, bucket string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.buckets[bucket]; !ok {
		return errNoBucket
	}
	return nil
}

func (f *fakeEngine) Keys(ctx context.Context, bucket, prefix, after string, limit int) ([]string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, k := range f.buckets[bucket] {
		if k <= after || !strings.HasPrefix(k, prefix) {
			continue
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, k)
	}
	return out, false, nil
}

func (f *fakeEngine) HealObject(ctx context.Context, bucket, key string, opts HealOptions) (HealResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, healCall{bucket, key, opts.Deep})
	k := bucket + "/" + key
	res := HealResult{Bucket: bucket, Key: key, Live: true, LiveSize: int64(len(key))}
	if rs := f.results[k]; len(rs) > 0 {
		res, f.results[k] = rs[0], rs[1:]
	}
	var err error
	if es := f.errs[k]; len(es) > 0 {
		err, f.errs[k] = es[0], es[1:]
	}
	f.mu.Unlock()
	if f.work > 0 {
		f.clock.Advance(f.work)
	}
	return res, err
}

func (f *fakeEngine) HealBucketRecords(ctx context.Context, drives []drive.Drive) {}

func (f *fakeEngine) SweepOrphans(ctx context.Context, d drive.Drive, grace time.Duration) (int, error) {
	return 0, nil
}

func (f *fakeEngine) SweepUploads(ctx context.Context, grace time.Duration) int { return 0 }

func (f *fakeEngine) RecoveryDone() {
	f.mu.Lock()
	f.recovered = true
	f.mu.Unlock()
}

func (f *fakeEngine) AfterScanCycle(ctx context.Context, rest func(took time.Duration) error) {
	f.mu.Lock()
	f.afterScan++
	f.mu.Unlock()
}

func (f *fakeEngine) cyclesAfter() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.afterScan
}

// localDrives opens n drives of one set on temporary directories,
// formatted as the engine would.
func localDrives(t *testing.T, n int) []drive.Drive {
	t.Helper()
	root := t.TempDir()
	drives := make([]drive.Drive, n)
	for i := range drives {
		l, err := drive.OpenLocal(filepath.Join(root, fmt.Sprintf("d%d", i+1)), drive.LocalOptions{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		f := drive.Format{Version: drive.LayoutVersion, DeploymentID: "test", SetCount: 1, SetSize: n,
			DriveIndex: i, DriveID: fmt.Sprintf("drive-%d", i), Parity: n / 2}
		if err := l.WriteFormat(context.Background(), f); err != nil {
			t.Fatal(err)
		}
		drives[i] = l
	}
	return drives
}

// start starts jobs on f, stopped when the test ends.
func start(t *testing.T, f *fakeEngine, cfg Config, opts Options) *Jobs {
	t.Helper()
	if cfg.Clock == nil {
		cfg.Clock = f.clock
	}
	j := Start(f, cfg, opts)
	t.Cleanup(j.Stop)
	return j
}
