package notify

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// keyedTarget is a Send that checks the pipeline's promises: no two
// records of a key in Send at once, each key's records in the order
// appended (their payload counts up per key). Keys in stuck are
// refused until released; delay sleeps a random while in every Send.
type keyedTarget struct {
	t     *testing.T
	delay time.Duration

	mu       sync.Mutex
	inFlight map[string]bool
	last     map[string]int // highest per-key number accepted
	got      map[string][]int
	sent     map[string]bool // payloads accepted
	stuck    map[string]bool
	ch       chan struct{}
}

func newKeyedTarget(t *testing.T, delay time.Duration) *keyedTarget {
	return &keyedTarget{t: t, delay: delay, inFlight: map[string]bool{}, last: map[string]int{},
		got: map[string][]int{}, sent: map[string]bool{}, stuck: map[string]bool{}, ch: make(chan struct{}, 1<<16)}
}

func (k *keyedTarget) send(ctx context.Context, d Delivery) error {
	var n int
	if _, err := fmt.Sscanf(string(d.Payload), `{"n":%d}`, &n); err != nil {
		k.t.Errorf("payload %q: %v", d.Payload, err)
	}
	k.mu.Lock()
	if k.inFlight[d.Key] {
		k.t.Errorf("two records of %s in Send at once", d.Key)
	}
	k.inFlight[d.Key] = true
	stuck := k.stuck[d.Key]
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.inFlight[d.Key] = false
		k.mu.Unlock()
	}()
	if stuck {
		return errors.New("refused")
	}
	if k.delay > 0 {
		select {
		case <-time.After(rand.N(k.delay)):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if last, ok := k.last[d.Key]; ok && n < last {
		k.t.Errorf("%s: record %d after %d", d.Key, n, last)
	}
	k.last[d.Key] = n
	k.got[d.Key] = append(k.got[d.Key], n)
	k.sent[string(d.Payload)] = true
	k.ch <- struct{}{}
	return nil
}

func (k *keyedTarget) setStuck(key string, v bool) {
	k.mu.Lock()
	k.stuck[key] = v
	k.mu.Unlock()
}

func (k *keyedTarget) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.sent)
}

func (k *keyedTarget) accepted(payload string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.sent[payload]
}

// waitFor waits until cond holds (a liveness bound, not a timing
// assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func keyed(key string, n int) Delivery {
	return Delivery{EventName: "s3:ObjectCreated:Put", Key: key, Time: time.Unix(int64(n), 0),
		Payload: []byte(fmt.Sprintf(`{"n":%d}`, n)), Record: []byte("{}")}
}

// keysInLanes returns n keys whose lane among p is (in == true) or is
// not lane.
func keysInLanes(lane, p, n int, in bool) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		k := fmt.Sprintf("b/key%d", i)
		if (laneOf(k, p) == lane) == in {
			out = append(out, k)
		}
	}
	return out
}

// TestQueueParallelKeepsKeyOrder: with 16 lanes and a target that
// answers after a random delay, every record arrives once, records of a
// key never overlap in Send and arrive in the order appended.
func TestQueueParallelKeepsKeyOrder(t *testing.T) {
	k := newKeyedTarget(t, 3*time.Millisecond)
	q, err := OpenQueue(QueueConfig{Dirs: []string{t.TempDir(), t.TempDir()}, Send: k.send, Parallel: 16,
		SegmentBytes: 2000, RetryMin: time.Millisecond, RetryMax: 10 * time.Millisecond})
	must(t, err)
	defer q.Close()
	const keys, per = 24, 25
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each goroutine appends its own keys, so per-key order is
			// the append order.
			for i := range per {
				for j := g; j < keys; j += 4 {
					if err := q.Append(keyed(fmt.Sprintf("b/k%02d", j), j*1000+i)); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	waitFor(t, "every record", func() bool { return k.count() == keys*per })
	k.mu.Lock()
	defer k.mu.Unlock()
	for j := range keys {
		got := k.got[fmt.Sprintf("b/k%02d", j)]
		if len(got) != per {
			t.Fatalf("key %d: %d records, want %d", j, len(got), per)
		}
		for i, n := range got {
			if n != j*1000+i {
				t.Fatalf("key %d: record %d is %d", j, i, n)
			}
		}
	}
}

// TestQueueSlowKeyDoesNotBlockOthers: while one key's record is refused
// (retried with backoff), records of keys in the other lanes are
// delivered; the refused one follows once the target takes it.
func TestQueueSlowKeyDoesNotBlockOthers(t *testing.T) {
	const p = 4
	k := newKeyedTarget(t, 0)
	slow := "b/slow"
	k.setStuck(slow, true)
	q, err := OpenQueue(QueueConfig{Dirs: []string{t.TempDir()}, Send: k.send, Parallel: p,
		RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond})
	must(t, err)
	defer q.Close()
	must(t, q.Append(keyed(slow, 0)))
	others := keysInLanes(laneOf(slow, p), p, 3*p*windowPerLane, false)
	for i, key := range others {
		must(t, q.Append(keyed(key, i+1)))
	}
	waitFor(t, "the other keys' records", func() bool { return k.count() == len(others) })
	if k.accepted(`{"n":0}`) {
		t.Fatal("the refused record was accepted")
	}
	if s := q.Stats(); s.Queued != int64(len(others)+1) {
		// Nothing past the refused record is settled yet.
		t.Fatalf("queued %d, want %d", s.Queued, len(others)+1)
	}
	k.setStuck(slow, false)
	waitFor(t, "the slow key's record", func() bool { return k.accepted(`{"n":0}`) })
	waitFor(t, "an empty queue", func() bool { return q.Stats().Queued == 0 })
}

// TestQueueCursorNeverPassesUnacked: a record the target keeps
// refusing holds the cursor; a crash (the directories copied as they
// are, no Close) and a clean stop both replay it and every record
// behind it in its lane, and the next run delivers them all.
func TestQueueCursorNeverPassesUnacked(t *testing.T) {
	const p = 4
	dir := t.TempDir()
	k := newKeyedTarget(t, 0)
	stuck := "b/stuck"
	k.setStuck(stuck, true)
	q, err := OpenQueue(QueueConfig{Dirs: []string{dir}, Send: k.send, Parallel: p,
		RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond})
	must(t, err)
	free := keysInLanes(laneOf(stuck, p), p, 30, false)
	behind := keysInLanes(laneOf(stuck, p), p, 3, true) // wait behind stuck in its lane
	var all []Delivery
	var stuckOff int64 // where the stuck record's frame starts (segment 0)
	var off int64
	for i := range 10 {
		all = append(all, keyed(free[i], len(all)))
	}
	for _, d := range all {
		fr, _ := appendFrame(nil, &d)
		off += int64(len(fr))
	}
	stuckOff = off
	all = append(all, keyed(stuck, len(all)))
	for _, key := range behind {
		all = append(all, keyed(key, len(all)))
	}
	for _, key := range free[10:] {
		all = append(all, keyed(key, len(all)))
	}
	for _, d := range all {
		must(t, q.Append(d))
	}
	want := len(all) - 1 - len(behind)
	waitFor(t, "the records not behind the stuck one", func() bool { return k.count() == want })
	// The cursor on disk once the sender is idle.
	waitFor(t, "the cursor to be written", func() bool {
		_, _, ok := readCursor(filepath.Join(dir, cursorFile))
		q.ackMu.Lock()
		idle := q.sinceCursor == 0
		q.ackMu.Unlock()
		return ok && idle
	})
	seq, coff, _ := readCursor(filepath.Join(dir, cursorFile))
	if seq > 0 || coff > stuckOff {
		t.Fatalf("cursor at segment %d offset %d passes the unacknowledged record at segment 0 offset %d", seq, coff, stuckOff)
	}
	if _, err := os.Stat(filepath.Join(dir, segName(0))); err != nil {
		t.Fatalf("the segment of the unacknowledged record is gone: %v", err)
	}
	crash := t.TempDir()
	ents, err := os.ReadDir(dir)
	must(t, err)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue // renamed or deleted meanwhile, as a crash might find it
		}
		must(t, err)
		must(t, os.WriteFile(filepath.Join(crash, e.Name()), b, 0o600))
	}
	must(t, q.Close())

	for _, d := range []string{crash, dir} {
		k2 := newKeyedTarget(t, 0)
		q2, err := OpenQueue(QueueConfig{Dirs: []string{d}, Send: k2.send, Parallel: p})
		must(t, err)
		for _, r := range all {
			if k.accepted(string(r.Payload)) {
				continue
			}
			waitFor(t, "replay of "+string(r.Payload), func() bool { return k2.accepted(string(r.Payload)) })
		}
		waitFor(t, "an empty queue", func() bool { return q2.Stats().Queued == 0 })
		must(t, q2.Close())
	}
}

// TestQueueSegmentKeptUntilAllAcked: segments read to their end are
// deleted only once every record in them, and before them, is
// acknowledged.
func TestQueueSegmentKeptUntilAllAcked(t *testing.T) {
	const p = 4
	dir := t.TempDir()
	k := newKeyedTarget(t, 0)
	stuck := "b/stuck"
	k.setStuck(stuck, true)
	q, err := OpenQueue(QueueConfig{Dirs: []string{dir}, Send: k.send, Parallel: p, SegmentBytes: 200,
		RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond})
	must(t, err)
	defer q.Close()
	must(t, q.Append(keyed(stuck, 0)))
	free := keysInLanes(laneOf(stuck, p), p, 40, false)
	for i, key := range free {
		must(t, q.Append(keyed(key, i+1)))
	}
	waitFor(t, "the other records", func() bool { return k.count() == len(free) })
	segs, _ := filepath.Glob(filepath.Join(dir, "*"+segSuffix))
	if len(segs) < 3 {
		t.Fatalf("%d segments; the test wants several", len(segs))
	}
	if _, err := os.Stat(filepath.Join(dir, segName(0))); err != nil {
		t.Fatalf("segment 0 holds an unacknowledged record and is gone: %v", err)
	}
	k.setStuck(stuck, false)
	waitFor(t, "delivered segments to be deleted", func() bool {
		segs, _ := filepath.Glob(filepath.Join(dir, "*"+segSuffix))
		return len(segs) <= 1 && q.Stats().Queued == 0
	})
}

func TestLaneOfSpreads(t *testing.T) {
	for _, n := range []int{1, 2, 16, 256} {
		seen := map[int]bool{}
		for i := range 4096 {
			l := laneOf(fmt.Sprintf("b/%d", i), n)
			if l < 0 || l >= n {
				t.Fatalf("lane %d of %d", l, n)
			}
			seen[l] = true
		}
		if len(seen) != n {
			t.Fatalf("%d of %d lanes used", len(seen), n)
		}
	}
	if laneOf("", 16) != laneOf("", 16) || laneOf("b/\xff\x00", 7) >= 7 {
		t.Fatal("laneOf is not stable")
	}
}
