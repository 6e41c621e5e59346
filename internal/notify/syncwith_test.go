package notify

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// A queue with SyncWith syncs every round through the directory's sync
// (here one that runs no own fdatasync, as a shared syncfs does), the
// records are in the segment files when Append returns and are
// delivered; a directory whose sync fails is dropped from the segment
// as a failed write is, and when every directory's sync fails the
// record is refused (ErrNoCopy), never acknowledged.
func TestQueueSyncWith(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	var (
		mu     sync.Mutex
		asked  []string
		rounds atomic.Int64
		owns   atomic.Int64
		fail   = map[string]bool{}
	)
	syncWith := func(dir string) (func(own func() error) error, error) {
		mu.Lock()
		asked = append(asked, dir)
		mu.Unlock()
		return func(own func() error) error {
			rounds.Add(1)
			mu.Lock()
			bad := fail[dir]
			mu.Unlock()
			if bad {
				// A failed shared sync falls back to own, which fails.
				owns.Add(1)
				return errors.New("sync failed on " + dir)
			}
			return nil // covered by a shared sync: own not run
		}, nil
	}
	r := newRecorder()
	q := openTestQueue(t, dirs, r, func(c *QueueConfig) { c.SyncWith = syncWith })
	defer q.Close()
	if len(asked) != 2 {
		t.Fatalf("SyncWith asked for %v, want both directories", asked)
	}
	for i := range 20 {
		if err := q.Append(delivery(i)); err != nil {
			t.Fatal(err)
		}
	}
	if rounds.Load() < 2 || owns.Load() != 0 {
		t.Fatalf("%d syncs through SyncWith (want one per round per directory), %d own syncs (want 0)", rounds.Load(), owns.Load())
	}
	for _, d := range dirs {
		if n := countFrames(t, d); n != 20 {
			t.Fatalf("%s holds %d records after 20 Appends, want 20", d, n)
		}
	}
	r.wait(t, 20)

	// One directory's sync fails: it leaves the segment, the record is
	// still synced on the other one.
	mu.Lock()
	fail[dirs[0]] = true
	mu.Unlock()
	if err := q.Append(delivery(20)); err != nil {
		t.Fatalf("one directory of two failed its sync: %v", err)
	}
	r.wait(t, 21)
	// Both fail: refused, not acknowledged.
	mu.Lock()
	fail[dirs[1]] = true
	mu.Unlock()
	if err := q.Append(delivery(21)); !errors.Is(err, ErrNoCopy) {
		t.Fatalf("every directory failed its sync: got %v, want ErrNoCopy", err)
	}
}

// A SyncWith that cannot place a directory leaves it on fdatasync.
func TestQueueSyncWithError(t *testing.T) {
	r := newRecorder()
	q := openTestQueue(t, []string{t.TempDir()}, r, func(c *QueueConfig) {
		c.SyncWith = func(string) (func(own func() error) error, error) { return nil, errors.New("no group") }
	})
	defer q.Close()
	if err := q.Append(delivery(1)); err != nil {
		t.Fatal(err)
	}
	r.wait(t, 1)
}

// countFrames counts the valid records in dir's segments.
func countFrames(t *testing.T, dir string) int {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "*"+segSuffix))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range segs {
		data, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		_, c := scanFrames(data)
		n += c
	}
	return n
}
