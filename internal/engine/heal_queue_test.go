package engine

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
	q := newHealQueue()
	rnd := rand.New(rand.NewSource(1))
	var want []dueItem
	for i := 0; i < 2000; i++ {
		b, k := fmt.Sprintf("b%d", rnd.Intn(3)), fmt.Sprintf("k%06d", rnd.Intn(1_000_000))
		q.add(b, k)
		if rnd.Intn(4) == 0 {
			q.pending[[2]string{b, k}].due = time.Now().Add(time.Hour)
		}
	}
	for k, ent := range q.pending {
		if !ent.due.After(time.Now()) {
			want = append(want, dueItem{k[0], k[1], ent.gen})
		}
	}
	slices.SortFunc(want, compareDue)
	for _, max := range []int{1, 64, len(want), len(want) + 10} {
		got := q.due(time.Now(), max)
		if n := min(max, len(want)); !slices.Equal(got, want[:n]) {
			t.Fatalf("due(%d): got %d items, want the first %d due keys in order", max, len(got), n)
		}
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
		if c.Table == drive.TableSystem && strings.HasPrefix(c.Key, queuePrefix) {
			d.sysChanges.Add(1)
		}
	}
	return d.Drive.Apply(ctx, b)
}

// TestHealQueuePersistence: a flush writes what changed since the last
// one, not the queue (a queue of thousands of keys once cost megabytes
// on every drive every second), and a new engine on the drives gets the
// queue back; one persisted in the earlier one-document form is
// converted and its document removed.
func TestHealQueuePersistence(t *testing.T) {
	ctx := context.Background()
	drives := localDrives(t, 4)
	counted := make([]drive.Drive, len(drives))
	var changes atomic.Int64
	for i, d := range drives {
		counted[i] = countingDrive{Drive: d, sysChanges: &changes}
	}
	e := engineOn(t, counted) // no healer: the queue only changes here
	e.heal.delay = 0
	for i := 0; i < 3000; i++ {
		e.heal.add("bkt", fmt.Sprintf("key/%05d", i))
	}
	e.persistQueue(ctx)
	if n := changes.Load(); n != 3000*4 {
		t.Fatalf("first flush wrote %d changes, want 3000 on each of 4 drives", n)
	}
	changes.Store(0)
	e.heal.add("bkt", "one more")
	for _, it := range e.heal.due(time.Now(), 10) {
		e.heal.done(it)
	}
	e.persistQueue(ctx)
	if n := changes.Load(); n != 11*4 {
		t.Fatalf("flush of 11 changes wrote %d changes, want 11 on each of 4 drives", n)
	}
	changes.Store(0)
	e.persistQueue(ctx)
	if n := changes.Load(); n != 0 {
		t.Fatalf("flush with nothing changed wrote %d changes", n)
	}
	want := e.heal.due(time.Now(), maxQueue)
	if len(want) != 2991 {
		t.Fatalf("%d queued, want 2991", len(want))
	}

	// A drive that missed a flush: the union of the drives is loaded.
	if err := clearPersistedQueue(ctx, drives[0], e.queueEntryPrefix()); err != nil {
		t.Fatal(err)
	}
	keys := func(items []dueItem) [][2]string {
		var out [][2]string
		for _, it := range items {
			out = append(out, [2]string{it.bucket, it.key})
		}
		return out
	}
	again := engineOn(t, drives)
	if got := again.heal.due(time.Now(), maxQueue); !slices.Equal(keys(got), keys(want)) {
		t.Fatalf("reloaded %d keys, want the %d persisted", len(got), len(want))
	}

	// The earlier form: one JSON document per node.
	legacy := [][2]string{{"bkt", "old/1"}, {"other", "old/2"}}
	raw, _ := json.Marshal(legacy)
	for _, d := range drives {
		if err := clearPersistedQueue(ctx, d, e.queueEntryPrefix()); err != nil {
			t.Fatal(err)
		}
		if err := sysPut(ctx, d, legacyQueueFile, raw); err != nil {
			t.Fatal(err)
		}
	}
	third := engineOn(t, drives)
	if got := keys(third.heal.due(time.Now(), maxQueue)); !slices.Equal(got, legacy) {
		t.Fatalf("converted queue holds %v, want %v", got, legacy)
	}
	for _, d := range drives {
		if _, err := sysGet(ctx, d, legacyQueueFile); err == nil {
			t.Fatalf("drive %s still holds the old queue document", d)
		}
		entries, err := d.Scan(ctx, drive.TableSystem, drive.ScanQuery{Prefix: third.queueEntryPrefix(), KeysOnly: true})
		if err != nil || len(entries) != len(legacy) {
			t.Fatalf("drive %s: %d queue entries after conversion (%v), want %d", d, len(entries), err, len(legacy))
		}
	}
}
