package background

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// TestHealQueueDue: due hands out the first max due keys in key order,
// never an entry whose time has not come.
func TestHealQueueDue(t *testing.T) {
	clock := newFakeClock()
	q := newHealQueue(clock, 0)
	rnd := rand.New(rand.NewSource(1))
	var want []dueItem
	for i := 0; i < 2000; i++ {
		b, k := fmt.Sprintf("b%d", rnd.Intn(3)), fmt.Sprintf("k%06d", rnd.Intn(1_000_000))
		wait := time.Duration(0)
		if rnd.Intn(4) == 0 {
			wait = time.Hour
		}
		q.add(b, k, wait)
	}
	for k, ent := range q.pending {
		if !ent.due.After(clock.Now()) {
			want = append(want, dueItem{k[0], k[1], ent.gen})
		}
	}
	slices.SortFunc(want, compareDue)
	for _, max := range []int{1, 64, len(want), len(want) + 10} {
		got := q.due(clock.Now(), max)
		if n := min(max, len(want)); !slices.Equal(got, want[:n]) {
			t.Fatalf("due(%d): got %d items, want the first %d due keys in order", max, len(got), n)
		}
	}
}

// TestQueueLoop: a queued object is healed once QueueDelay has passed;
// one whose heal could not reach every drive is retried with backoff,
// one that needs no heal any more (ErrNothingToHeal) is dropped.
func TestQueueLoop(t *testing.T) {
	clock := newFakeClock()
	f := newFakeEngine(clock)
	f.results["b/offline"] = []HealResult{{Offline: 1}}
	f.errs["b/gone"] = []error{fmt.Errorf("heal b/gone: %w", ErrNothingToHeal)}
	j := start(t, f, Config{ScanInterval: -1, MonitorInterval: time.Hour}, Options{})
	for _, k := range []string{"ok", "offline", "gone"} {
		j.QueueHeal("b", k)
	}
	if n := j.Queued(); n != 3 {
		t.Fatalf("%d queued, want 3", n)
	}
	clock.Advance(time.Second) // not due before QueueDelay (2s)
	clock.Advance(time.Second)
	waitFor(t, "the first heals", func() bool { return len(f.healCalls()) == 3 })
	waitFor(t, "the queue to keep only the retry", func() bool { return j.Queued() == 1 })
	if st := j.Status(); st.QueueHealed != 2 || st.QueueRetries != 1 {
		t.Fatalf("after the first round: %+v", st)
	}
	clock.Advance(2 * time.Second) // the retry waits QueueDelay << 1
	time.Sleep(10 * time.Millisecond)
	if n := len(f.healCalls()); n != 3 {
		t.Fatalf("the retry ran before its backoff: %d heals", n)
	}
	clock.Advance(2 * time.Second)
	waitFor(t, "the retry", func() bool { return j.Queued() == 0 })
	if st := j.Status(); st.QueueHealed != 3 || st.QueueRetries != 1 {
		t.Fatalf("after the retry: %+v", st)
	}
}

// countingDrive counts the changes of heal queue entries that batches
// carry to it.
type countingDrive struct {
	drive.Drive
	sysChanges *atomic.Int64
}

func (d countingDrive) Apply(ctx context.Context, b *drive.Batch) error {
	for _, c := range b.Changes {
		if c.Table == drive.TableSystem && strings.HasPrefix(c.Key, QueueRecords) {
			d.sysChanges.Add(1)
		}
	}
	return d.Drive.Apply(ctx, b)
}

// clearPersistedQueue removes the queue entries under prefix from d.
func clearPersistedQueue(t *testing.T, d drive.Drive, prefix string) {
	t.Helper()
	ctx := context.Background()
	entries, err := d.Scan(ctx, drive.TableSystem, drive.ScanQuery{Prefix: prefix, KeysOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	b := &drive.Batch{}
	for _, ent := range entries {
		b.Delete(drive.TableSystem, ent.Key)
	}
	if b.Len() > 0 {
		if err := d.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHealQueuePersistence: a flush writes what changed since the last
// one, not the queue (a queue of thousands of keys once cost megabytes
// on every drive every second), and jobs started again on the drives get
// the queue back, under this node's name; one persisted in the earlier
// one-document form is converted and its document removed.
func TestHealQueuePersistence(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	drives := localDrives(t, 4)
	counted := make([]drive.Drive, len(drives))
	var changes atomic.Int64
	for i, d := range drives {
		counted[i] = countingDrive{Drive: d, sysChanges: &changes}
	}
	onDrives := func(ds []drive.Drive) *Jobs {
		f := newFakeEngine(clock)
		f.sets, f.node = [][]drive.Drive{ds}, "n1"
		return start(t, f, Config{Disabled: true}, Options{}) // no loop: the queue only changes here
	}
	j := onDrives(counted)
	for i := 0; i < 3000; i++ {
		j.queue.add("bkt", fmt.Sprintf("key/%05d", i), 0)
	}
	j.persistQueue(ctx)
	if n := changes.Load(); n != 3000*4 {
		t.Fatalf("first flush wrote %d changes, want 3000 on each of 4 drives", n)
	}
	changes.Store(0)
	j.queue.add("bkt", "one more", 0)
	for _, it := range j.queue.due(clock.Now(), 10) {
		j.queue.done(it)
	}
	j.persistQueue(ctx)
	if n := changes.Load(); n != 11*4 {
		t.Fatalf("flush of 11 changes wrote %d changes, want 11 on each of 4 drives", n)
	}
	changes.Store(0)
	j.persistQueue(ctx)
	if n := changes.Load(); n != 0 {
		t.Fatalf("flush with nothing changed wrote %d changes", n)
	}
	want := j.queue.due(clock.Now(), maxQueue)
	if len(want) != 2991 {
		t.Fatalf("%d queued, want 2991", len(want))
	}
	prefix := j.queueEntryPrefix()
	if prefix != QueueRecords+"@n1/" {
		t.Fatalf("queue entries under %q, want them named for the node", prefix)
	}

	// A drive that missed a flush: the union of the drives is loaded,
	// every entry due at once.
	clearPersistedQueue(t, drives[0], prefix)
	keys := func(items []dueItem) [][2]string {
		var out [][2]string
		for _, it := range items {
			out = append(out, [2]string{it.bucket, it.key})
		}
		return out
	}
	again := onDrives(drives)
	if got := again.queue.due(clock.Now(), maxQueue); !slices.Equal(keys(got), keys(want)) {
		t.Fatalf("reloaded %d keys, want the %d persisted", len(got), len(want))
	}

	// The earlier form: one JSON document per node.
	legacy := [][2]string{{"bkt", "old/1"}, {"other", "old/2"}}
	raw, _ := json.Marshal(legacy)
	for _, d := range drives {
		clearPersistedQueue(t, d, prefix)
		if err := putRecord(ctx, d, legacyQueueFile+"@n1", raw); err != nil {
			t.Fatal(err)
		}
	}
	third := onDrives(drives)
	if got := keys(third.queue.due(clock.Now(), maxQueue)); !slices.Equal(got, legacy) {
		t.Fatalf("converted queue holds %v, want %v", got, legacy)
	}
	for _, d := range drives {
		if _, err := getRecord(ctx, d, legacyQueueFile+"@n1"); err == nil {
			t.Fatalf("drive %s still holds the old queue document", d)
		}
		entries, err := d.Scan(ctx, drive.TableSystem, drive.ScanQuery{Prefix: prefix, KeysOnly: true})
		if err != nil || len(entries) != len(legacy) {
			t.Fatalf("drive %s: %d queue entries after conversion (%v), want %d", d, len(entries), err, len(legacy))
		}
	}
}
