package accesslog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// sink is a Deliver that records what it was given, by key.
type sink struct {
	mu      sync.Mutex
	objects map[string][]byte
	calls   int
	// fail, when set, decides each call's error first.
	fail func(o Object) error
}

func newSink() *sink { return &sink{objects: map[string][]byte{}} }

func (k *sink) deliver(_ context.Context, o Object) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls++
	if k.fail != nil {
		if err := k.fail(o); err != nil {
			return err
		}
	}
	k.objects[o.Dest.TargetBucket+"/"+o.Key] = append([]byte(nil), o.Body...)
	return nil
}

// requestIDs lists the request ids of every delivered line, in order of
// object key and line.
func (k *sink) requestIDs(t *testing.T) []string {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	keys := make([]string, 0, len(k.objects))
	for key := range k.objects {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	var ids []string
	for _, key := range keys {
		for _, line := range strings.SplitAfter(string(k.objects[key]), "\n") {
			if line == "" {
				continue
			}
			ids = append(ids, parseLine(t, line)[5])
		}
	}
	return ids
}

func entry(id string, at time.Time) Entry {
	r := sampleRecord()
	r.RequestID, r.Time = id, at
	return Entry{Dest: Destination{SourceBucket: "src", SourceOwner: "o", TargetBucket: "logs", TargetPrefix: "p/"}, Record: r}
}

func dirs(t testing.TB, n int) []string {
	base := t.TempDir()
	out := make([]string, n)
	for i := range out {
		out[i] = filepath.Join(base, fmt.Sprintf("d%d", i))
	}
	return out
}

func open(t *testing.T, cfg Config) *Spool {
	t.Helper()
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func flush(t *testing.T, s *Spool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// copyDirs copies the spool directories as a kill would leave them:
// what was written is on disk, nothing else happens.
func copyDirs(t *testing.T, from []string) []string {
	t.Helper()
	to := dirs(t, len(from))
	for i := range from {
		if err := os.MkdirAll(to[i], 0o700); err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(from[i])
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			data, err := os.ReadFile(filepath.Join(from[i], e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(to[i], e.Name()), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return to
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestDeliverOnce: records appended to a spool of three copies are
// delivered once each, in one object per destination, and the
// segments are gone afterwards.
func TestDeliverOnce(t *testing.T) {
	k := newSink()
	ds := dirs(t, 3)
	s := open(t, Config{Dirs: ds, Deliver: k.deliver, Interval: time.Hour})
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := entry(fmt.Sprintf("R%03d", i), base.Add(time.Duration(i)*time.Second))
			if i%2 == 0 {
				e.Dest.TargetBucket = "logs2"
			}
			gen, err := s.Append(e)
			if err != nil {
				t.Error(err)
				return
			}
			e.Record.BytesSent = 7
			s.Amend(e, gen)
		}()
	}
	wg.Wait()
	flush(t, s)
	ids := k.requestIDs(t)
	if len(ids) != 50 || len(k.objects) != 2 {
		t.Fatalf("%d records in %d objects, want 50 in 2: %v", len(ids), len(k.objects), ids)
	}
	sort.Strings(ids)
	for i, id := range ids {
		if id != fmt.Sprintf("R%03d", i) {
			t.Fatalf("records %v", ids)
		}
	}
	for key, body := range k.objects {
		if !strings.HasPrefix(key, "logs/p/2025-03-01-12-00-4") && !strings.HasPrefix(key, "logs2/p/2025-03-01-12-00-4") {
			t.Errorf("key %q: want the target's prefix and the batch's last record's time", key)
		}
		for _, line := range strings.SplitAfter(string(body), "\n") {
			if line == "" {
				continue
			}
			if f := parseLine(t, line); f[11] != "7" {
				t.Errorf("line %q: bytes sent %q, want the amended 7", line, f[11])
			}
		}
	}
	for _, d := range ds {
		if f := files(t, d); len(f) != 0 {
			t.Errorf("%s keeps %v after delivery", d, f)
		}
	}
	if st := s.Stats(); st.Appended != 50 || st.Delivered != 50 || st.Objects != 2 || st.BacklogBytes != 0 || st.PendingSegments != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestCrashReplay: a spool left by a kill (a segment still open, a torn
// frame at its end on one copy, another copy missing its last batch) is
// delivered in full by the next Open: every record whose Append
// returned, once.
func TestCrashReplay(t *testing.T) {
	ds := dirs(t, 2)
	s := open(t, Config{Dirs: ds, Deliver: newSink().deliver, Interval: time.Hour})
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 20 {
		if _, err := s.Append(entry(fmt.Sprintf("R%03d", i), base)); err != nil {
			t.Fatal(err)
		}
	}
	crashed := copyDirs(t, ds)
	// One copy lost its tail (a drive cut mid-write), the other got a
	// torn frame after its last whole one.
	segs := files(t, crashed[0])
	if len(segs) != 1 || !strings.HasSuffix(segs[0], segSuffix) {
		t.Fatalf("spool holds %v, want one open segment", segs)
	}
	p0 := filepath.Join(crashed[0], segs[0])
	data, _ := os.ReadFile(p0)
	if err := os.WriteFile(p0, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	p1 := filepath.Join(crashed[1], segs[0])
	f, err := os.OpenFile(p1, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	torn, _ := appendFrame(nil, &Entry{Record: Record{RequestID: "TORN"}})
	_, _ = f.Write(torn[:len(torn)-3])
	f.Close()

	k := newSink()
	r := open(t, Config{Dirs: crashed, Deliver: k.deliver, Interval: time.Hour})
	flush(t, r)
	ids := k.requestIDs(t)
	if len(ids) != 20 {
		t.Fatalf("replay delivered %d records, want 20: %v", len(ids), ids)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] || id == "TORN" {
			t.Fatalf("record %s twice or torn: %v", id, ids)
		}
		seen[id] = true
	}
	// Records appended after the restart go into a segment of their own.
	if _, err := r.Append(entry("AFTER", base)); err != nil {
		t.Fatal(err)
	}
	flush(t, r)
	if n := len(k.requestIDs(t)); n != 21 {
		t.Fatalf("%d records after a new append, want 21", n)
	}
}

// TestReplayAfterDelivery: a kill after a log object was written but
// before its segment was removed delivers it again under the same key
// with the same body, an overwrite; a segment already marked done is
// removed without being delivered.
func TestReplayAfterDelivery(t *testing.T) {
	ds := dirs(t, 2)
	first := newSink()
	var crashed []string
	first.fail = func(o Object) error {
		if crashed == nil {
			crashed = copyDirs(t, ds) // the state of the disks while delivering
		}
		return nil
	}
	s := open(t, Config{Dirs: ds, Deliver: first.deliver, Interval: time.Hour})
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 5 {
		e := entry(fmt.Sprintf("R%d", i), base)
		if i == 3 {
			e.Dest.TargetPrefix = "other/"
		}
		if _, err := s.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, s)
	if len(first.objects) != 2 || crashed == nil {
		t.Fatalf("first delivery: %d objects", len(first.objects))
	}
	marked := copyDirs(t, crashed)
	again := newSink()
	r := open(t, Config{Dirs: crashed, Deliver: again.deliver, Interval: time.Hour})
	flush(t, r)
	if len(again.objects) != 2 {
		t.Fatalf("replay wrote %d objects, want the same 2", len(again.objects))
	}
	for key, body := range first.objects {
		if !bytes.Equal(again.objects[key], body) {
			t.Errorf("replay of %s: got %q, want the same body %q", key, again.objects[key], body)
		}
	}

	// A done mark on one copy: the segment was delivered.
	seg := files(t, marked[0])[0]
	if err := os.Rename(filepath.Join(marked[0], seg), filepath.Join(marked[0], strings.TrimSuffix(seg, segSuffix)+doneSuffix)); err != nil {
		t.Fatal(err)
	}
	none := newSink()
	m := open(t, Config{Dirs: marked, Deliver: none.deliver, Interval: time.Hour})
	flush(t, m)
	if none.calls != 0 {
		t.Errorf("a segment marked done was delivered again (%d calls)", none.calls)
	}
	for _, d := range marked {
		if f := files(t, d); len(f) != 0 {
			t.Errorf("%s keeps %v", d, f)
		}
	}
}

// TestUndeliverableAndRetry: a target that is gone drops its records
// with a count; a failing one is retried until it takes them, and
// objects already delivered are not written again meanwhile.
func TestUndeliverableAndRetry(t *testing.T) {
	k := newSink()
	failures := 0
	k.fail = func(o Object) error {
		switch o.Dest.TargetBucket {
		case "gone":
			return fmt.Errorf("target: %w", ErrUndeliverable)
		case "flaky":
			if failures < 2 {
				failures++
				return errors.New("write quorum lost")
			}
		}
		return nil
	}
	s := open(t, Config{Dirs: dirs(t, 1), Deliver: k.deliver, Interval: time.Hour})
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, target := range []string{"logs", "gone", "gone", "flaky"} {
		e := entry(fmt.Sprintf("R%d", i), base)
		e.Dest.TargetBucket = target
		if _, err := s.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.Dropped != 2 || st.Delivered != 2 || st.DeliveryErrors != 2 || len(k.objects) != 2 {
		t.Fatalf("stats %+v, objects %d", st, len(k.objects))
	}
	// logs, gone, flaky x3 (two failures, one success): "logs" once.
	if k.calls != 5 {
		t.Errorf("%d deliveries, want 5 (no object delivered twice)", k.calls)
	}
}

// TestAmendAfterClose: an amendment whose batch has closed is dropped,
// so a request is never in two log objects.
func TestAmendAfterClose(t *testing.T) {
	k := newSink()
	s := open(t, Config{Dirs: dirs(t, 1), Deliver: k.deliver, Interval: time.Hour})
	e := entry("R1", time.Now())
	gen, err := s.Append(e)
	if err != nil {
		t.Fatal(err)
	}
	flush(t, s)
	s.Amend(e, gen)
	if _, err := s.Append(entry("R2", time.Now())); err != nil {
		t.Fatal(err)
	}
	flush(t, s)
	if ids := k.requestIDs(t); len(ids) != 2 {
		t.Fatalf("records %v, want R1 and R2 once each", ids)
	}
}

// TestBatchLimits: a batch closes after MaxRecords records, and after
// Interval without more traffic.
func TestBatchLimits(t *testing.T) {
	k := newSink()
	s := open(t, Config{Dirs: dirs(t, 1), Deliver: k.deliver, Interval: 50 * time.Millisecond, MaxRecords: 3})
	for i := range 7 {
		if _, err := s.Append(entry(fmt.Sprintf("R%d", i), time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(k.requestIDs(t)) < 7 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d records delivered without a flush", len(k.requestIDs(t)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.objects) < 3 {
		t.Errorf("%d log objects for 7 records in batches of at most 3, want 3 or more", len(k.objects))
	}
	for key, body := range k.objects {
		if n := strings.Count(string(body), "\n"); n > 3 {
			t.Errorf("%s holds %d records, more than MaxRecords", key, n)
		}
	}
}

// TestBacklogBound: records beyond MaxBacklog are refused, not queued
// without bound, and counted.
func TestBacklogBound(t *testing.T) {
	block := make(chan struct{})
	s := open(t, Config{Dirs: dirs(t, 1), Interval: time.Millisecond, MaxBacklog: 4 << 10,
		Deliver: func(ctx context.Context, o Object) error {
			select {
			case <-block:
			case <-ctx.Done():
			}
			return errors.New("target unavailable")
		}})
	defer close(block)
	var refused error
	for i := range 100 {
		if _, err := s.Append(entry(fmt.Sprintf("R%d", i), time.Now())); err != nil {
			refused = err
			break
		}
	}
	if !errors.Is(refused, ErrBacklog) {
		t.Fatalf("appends beyond the backlog: %v, want ErrBacklog", refused)
	}
	if st := s.Stats(); st.Refused != 1 || st.BacklogBytes > 4<<10 {
		t.Errorf("stats %+v", st)
	}
}

// TestCloseLeavesRest: Close delivers what it can; records it could not
// deliver stay for the next Open, and Append after Close is refused.
func TestCloseLeavesRest(t *testing.T) {
	ds := dirs(t, 1)
	s, err := Open(Config{Dirs: ds, Interval: time.Hour, Deliver: func(context.Context, Object) error {
		return errors.New("no quorum")
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(entry("R1", time.Now())); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.Close(ctx); err == nil {
		t.Fatal("Close reported nothing left although delivery failed")
	}
	if _, err := s.Append(entry("R2", time.Now())); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	k := newSink()
	r := open(t, Config{Dirs: ds, Deliver: k.deliver, Interval: time.Hour})
	flush(t, r)
	if ids := k.requestIDs(t); len(ids) != 1 || ids[0] != "R1" {
		t.Fatalf("next start delivered %v, want R1", ids)
	}
}

// TestObjectKeys: simple and partitioned keys, dated by event or
// delivery time.
func TestObjectKeys(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 30, 5, 0, time.UTC)
	d := Destination{SourceBucket: "src", SourceAccount: "acct", SourceRegion: "eu-west-1", TargetPrefix: "logs/"}
	if got := ObjectKey(d, at, "", "ABCDEF0123456789"); got != "logs/2025-03-01-12-30-05-ABCDEF0123456789" {
		t.Errorf("simple key %q", got)
	}
	d.Partitioned = true
	if got := ObjectKey(d, at, "2025/02/28", "U"); got != "logs/acct/eu-west-1/src/2025/02/28/2025-03-01-12-30-05-U" {
		t.Errorf("partitioned by event time %q", got)
	}
	if got := ObjectKey(d, at, "", "U"); got != "logs/acct/eu-west-1/src/2025/03/01/2025-03-01-12-30-05-U" {
		t.Errorf("partitioned by delivery time %q", got)
	}
	// Event-time partitions split a batch spanning midnight.
	e1, e2 := entry("A", time.Date(2025, 2, 28, 23, 59, 59, 0, time.UTC)), entry("B", at)
	e1.Dest, e2.Dest = d, d
	if objs := batchObjects("seg", []Entry{e1, e2}); len(objs) != 2 ||
		!strings.Contains(objs[0].Key, "/2025/02/28/") || !strings.Contains(objs[1].Key, "/2025/03/01/") {
		t.Errorf("objects %+v", objs)
	}
	e1.Dest.DeliveryDate, e2.Dest.DeliveryDate = true, true
	if objs := batchObjects("seg", []Entry{e1, e2}); len(objs) != 1 || objs[0].Records != 2 {
		t.Errorf("delivery-time partition split a batch: %+v", objs)
	}
}

// TestFrames: frames round-trip; a short or corrupt one ends the read.
func TestFrames(t *testing.T) {
	var b []byte
	for _, id := range []string{"A", "B", "C"} {
		var err error
		if b, err = appendFrame(b, &Entry{Record: Record{RequestID: id}}); err != nil {
			t.Fatal(err)
		}
	}
	if es, torn := readFrames(b); len(es) != 3 || torn {
		t.Fatalf("read %d entries, torn %v", len(es), torn)
	}
	for cut := 1; cut < len(b); cut++ {
		es, _ := readFrames(b[:cut])
		if len(es) > 3 {
			t.Fatalf("cut at %d: %d entries", cut, len(es))
		}
	}
	bad := append([]byte(nil), b...)
	bad[len(bad)-2] ^= 1
	if es, torn := readFrames(bad); len(es) != 2 || !torn {
		t.Fatalf("corrupt last frame: %d entries, torn %v", len(es), torn)
	}
	huge := Entry{Record: Record{UserAgent: strings.Repeat("x", maxFrame)}}
	if _, err := appendFrame(nil, &huge); !errors.Is(err, errFrameTooLarge) {
		t.Fatalf("huge entry: %v", err)
	}
}

// TestUnreadableSegmentKept: a segment no copy of which can be read (a
// drive failing, not a file missing) is retried, not removed: its
// records are delivered once it reads again.
func TestUnreadableSegmentKept(t *testing.T) {
	ds := dirs(t, 1)
	name := "0000000000000007-0badcafe" + segSuffix
	if err := os.MkdirAll(filepath.Join(ds[0], name), 0o700); err != nil { // reading it fails (EISDIR)
		t.Fatal(err)
	}
	k := newSink()
	s := open(t, Config{Dirs: ds, Deliver: k.deliver, Interval: time.Hour})
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().DeliveryErrors == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the unreadable segment was not reported")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := s.Stats(); st.PendingSegments != 1 || k.calls != 0 {
		t.Fatalf("stats %+v after an unreadable segment", st)
	}
	frames, _ := appendFrame(nil, &Entry{Dest: Destination{SourceBucket: "src", TargetBucket: "logs"}, Record: Record{RequestID: "KEPT", Bucket: "src"}})
	if err := os.Remove(filepath.Join(ds[0], name)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ds[0], name), frames, 0o600); err != nil {
		t.Fatal(err)
	}
	flush(t, s)
	if ids := k.requestIDs(t); len(ids) != 1 || ids[0] != "KEPT" {
		t.Fatalf("delivered %v, want the kept record", ids)
	}
	// New segments are numbered after the ones found.
	if _, err := s.Append(entry("NEXT", time.Now())); err != nil {
		t.Fatal(err)
	}
	if f := files(t, ds[0]); len(f) != 1 || !strings.HasPrefix(f[0], "0000000000000008-") {
		t.Fatalf("spool holds %v, want segment 8", f)
	}
}
