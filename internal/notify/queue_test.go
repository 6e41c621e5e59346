package notify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"
)

// recorder is a Send that keeps what it accepted, refusing while down.
type recorder struct {
	mu   sync.Mutex
	got  []string
	down bool
	ch   chan struct{}
}

func newRecorder() *recorder { return &recorder{ch: make(chan struct{}, 1<<16)} }

func (r *recorder) send(_ context.Context, d Delivery) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		return errors.New("target down")
	}
	r.got = append(r.got, d.Key)
	r.ch <- struct{}{}
	return nil
}

func (r *recorder) setDown(v bool) {
	r.mu.Lock()
	r.down = v
	r.mu.Unlock()
}

func (r *recorder) keys() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// wait waits for n deliveries (failing after a generous bound: this is
// a liveness check, not a timing assertion).
func (r *recorder) wait(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for len(r.keys()) < n {
		select {
		case <-r.ch:
		case <-deadline:
			t.Fatalf("only %d of %d records delivered", len(r.keys()), n)
		}
	}
}

func openTestQueue(t *testing.T, dirs []string, r *recorder, mod func(*QueueConfig)) *Queue {
	t.Helper()
	cfg := QueueConfig{Dirs: dirs, Send: r.send, RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	q, err := OpenQueue(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func delivery(i int) Delivery {
	return Delivery{EventName: "s3:ObjectCreated:Put", Key: fmt.Sprintf("b/k%05d", i), Time: time.Unix(int64(i), 0),
		Payload: []byte(fmt.Sprintf(`{"n":%d}`, i)), Record: []byte("{}")}
}

func TestQueueDeliversInOrder(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	r := newRecorder()
	// One lane: every record in queue order (the per-key order of
	// parallel lanes is TestQueueParallelKeepsKeyOrder's).
	q := openTestQueue(t, dirs, r, func(c *QueueConfig) { c.SegmentBytes = 200; c.Parallel = 1 })
	for i := range 50 {
		if err := q.Append(delivery(i)); err != nil {
			t.Fatal(err)
		}
	}
	r.wait(t, 50)
	for i, k := range r.keys() {
		if want := fmt.Sprintf("b/k%05d", i); k != want {
			t.Fatalf("record %d is %s, want %s", i, k, want)
		}
	}
	_ = q.Close()
	// Delivered segments are removed: only the open one is left.
	for _, d := range dirs {
		segs, _ := filepath.Glob(filepath.Join(d, "*"+segSuffix))
		if len(segs) > 1 {
			t.Errorf("%s keeps %d segments after delivery", d, len(segs))
		}
	}
}

func TestQueueRetriesWhileDown(t *testing.T) {
	r := newRecorder()
	r.setDown(true)
	q := openTestQueue(t, []string{t.TempDir()}, r, nil)
	defer q.Close()
	for i := range 10 {
		if err := q.Append(delivery(i)); err != nil {
			t.Fatal(err)
		}
	}
	for q.Stats().Failed < 3 {
		time.Sleep(5 * time.Millisecond)
	}
	if s := q.Stats(); s.Queued != 10 || s.LastError == "" {
		t.Fatalf("while down: %+v", s)
	}
	r.setDown(false)
	r.wait(t, 10)
}

// TestQueueReplaysAfterRestart: records not delivered before a stop
// (or a crash) are delivered by the next open, in order.
func TestQueueReplaysAfterRestart(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	r := newRecorder()
	r.setDown(true)
	q := openTestQueue(t, dirs, r, func(c *QueueConfig) { c.SegmentBytes = 300 })
	for i := range 30 {
		if err := q.Append(delivery(i)); err != nil {
			t.Fatal(err)
		}
	}
	_ = q.Close()
	r2 := newRecorder()
	q2 := openTestQueue(t, dirs, r2, func(c *QueueConfig) { c.Parallel = 1 })
	defer q2.Close()
	if got := q2.Stats().Queued; got != 30 {
		t.Fatalf("replayed queue holds %d records, want 30", got)
	}
	r2.wait(t, 30)
	for i, k := range r2.keys() {
		if want := fmt.Sprintf("b/k%05d", i); k != want {
			t.Fatalf("record %d is %s, want %s", i, k, want)
		}
	}
}

// TestQueueCrashTails: a torn last frame, a frame failing its CRC and a
// garbage cursor are what a crash leaves; the valid records before them
// are delivered, nothing after, and a copy with more valid records
// wins over a shorter one.
func TestQueueCrashTails(t *testing.T) {
	var whole []byte
	for i := range 5 {
		d := delivery(i)
		var err error
		if whole, err = appendFrame(whole, &d); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		a, b  []byte // the two copies of segment 0
		want  int
		extra func(dir string)
	}{
		{"torn tail", whole[:len(whole)-3], nil, 4, nil},
		{"crc flipped", flip(whole, len(whole)-2), nil, 4, nil},
		{"header garbage", append(append([]byte(nil), whole...), 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4), nil, 5, nil},
		{"longer copy wins", whole[:len(whole)-3], whole, 5, nil},
		{"garbage cursor", whole, nil, 5, func(dir string) {
			_ = os.WriteFile(filepath.Join(dir, cursorFile), []byte("zz 99 00000000\n"), 0o600)
		}},
		{"huge length", append([]byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0}, whole...), nil, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := t.TempDir(), t.TempDir()
			must(t, os.WriteFile(filepath.Join(a, segName(0)), c.a, 0o600))
			if c.b != nil {
				must(t, os.WriteFile(filepath.Join(b, segName(0)), c.b, 0o600))
			}
			if c.extra != nil {
				c.extra(a)
			}
			r := newRecorder()
			q := openTestQueue(t, []string{a, b}, r, nil)
			r.wait(t, c.want)
			// New records after the replayed ones still go out.
			must(t, q.Append(delivery(100)))
			r.wait(t, c.want+1)
			_ = q.Close()
			got := r.keys()
			if len(got) != c.want+1 || got[c.want] != "b/k00100" {
				t.Fatalf("delivered %v", got)
			}
		})
	}
}

// TestQueueCursorSkipsDelivered: after a clean stop, records already
// delivered are not sent again.
func TestQueueCursorSkipsDelivered(t *testing.T) {
	dir := t.TempDir()
	r := newRecorder()
	q := openTestQueue(t, []string{dir}, r, nil)
	for i := range 7 {
		must(t, q.Append(delivery(i)))
	}
	r.wait(t, 7)
	_ = q.Close()
	r2 := newRecorder()
	q2 := openTestQueue(t, []string{dir}, r2, nil)
	must(t, q2.Append(delivery(7)))
	r2.wait(t, 1)
	_ = q2.Close()
	if got := r2.keys(); len(got) != 1 || got[0] != "b/k00007" {
		t.Fatalf("after restart delivered %v", got)
	}
}

func TestQueueBounds(t *testing.T) {
	r := newRecorder()
	r.setDown(true)
	q := openTestQueue(t, []string{t.TempDir()}, r, func(c *QueueConfig) { c.MaxRecords = 3 })
	defer q.Close()
	for i := range 3 {
		must(t, q.Append(delivery(i)))
	}
	if err := q.Append(delivery(3)); !errors.Is(err, ErrFull) {
		t.Fatalf("4th record: %v, want ErrFull", err)
	}
	if s := q.Stats(); s.Refused != 1 || s.Queued != 3 {
		t.Fatalf("stats %+v", s)
	}
	r.setDown(false)
	r.wait(t, 3)
	for q.Stats().Queued != 0 {
		time.Sleep(time.Millisecond)
	}
	must(t, q.Append(delivery(4)))
	r.wait(t, 4)

	rb := newRecorder()
	rb.setDown(true)
	qb := openTestQueue(t, []string{t.TempDir()}, rb, func(c *QueueConfig) { c.MaxBytes = 100 })
	defer qb.Close()
	must(t, qb.Append(delivery(0)))
	big := delivery(1)
	big.Payload = make([]byte, 200)
	if err := qb.Append(big); !errors.Is(err, ErrFull) {
		t.Fatalf("oversized record: %v, want ErrFull", err)
	}
	huge := delivery(2)
	huge.Payload = make([]byte, maxFrame+1)
	if err := qb.Append(huge); !errors.Is(err, errFrameTooLarge) {
		t.Fatalf("huge record: %v", err)
	}
}

// TestQueueConcurrentAppends: appends from many goroutines are all
// delivered once each (sharing syncs).
func TestQueueConcurrentAppends(t *testing.T) {
	r := newRecorder()
	q := openTestQueue(t, []string{t.TempDir(), t.TempDir()}, r, func(c *QueueConfig) { c.SegmentBytes = 1000 })
	defer q.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if err := q.Append(delivery(g*100 + i)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	r.wait(t, 200)
	got := r.keys()
	sort.Strings(got)
	for i := 1; i < len(got); i++ {
		if got[i] == got[i-1] {
			t.Fatalf("%s delivered twice", got[i])
		}
	}
}

func TestFrameRoundTrip(t *testing.T) {
	d := Delivery{EventName: "s3:ObjectRemoved:Delete", Key: "b/\x00ü", Time: time.Unix(5, 7).UTC(), Payload: []byte("p"), Record: []byte("r")}
	b, err := appendFrame(nil, &d)
	must(t, err)
	n, sum, ok := frameLen(b)
	if !ok || n != len(b)-frameHeader || sum == 0 {
		t.Fatal("bad header")
	}
	got, ok := decodePayload(b[frameHeader:])
	if !ok || got.Key != d.Key || !got.Time.Equal(d.Time) || string(got.Payload) != "p" || string(got.Record) != "r" || got.EventName != d.EventName {
		t.Fatalf("round trip: %+v", got)
	}
	for i := range len(b) - frameHeader {
		if _, ok := decodePayload(b[frameHeader : frameHeader+i]); ok && i < len(b)-frameHeader {
			t.Fatalf("a payload cut to %d bytes decoded", i)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0x40
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
