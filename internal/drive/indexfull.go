package drive

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Opening the index of a full drive (H1 in docs/consistency.md).
//
// Pebble's Open replays the WAL the last process left into a memtable
// and, opened for writes, flushes it to a table and waits for that
// flush before it returns; a flush that fails is retried at once, for
// ever (thousands of "background error: … no space left on device" a
// second). On a drive with no space left Open therefore never returned,
// and a node restarted on full drives never opened its drives, never
// got ready and could free nothing.
//
// Before opening an existing index for writes, openIndex asks the
// filesystem for its free space (the index's vfs.FS, GetDiskUsage). With
// less than the replay's flush and a new WAL need (writableNeed), the
// index is opened read-only: pebble replays the WAL in memory and writes
// nothing, so the drive serves reads; writes to it fail with
// ErrDriveFull (pebble.ErrReadOnly, mapped by indexError), which the
// engine answers as a full drive (507 InsufficientStorage when too few
// drives have space) and which does not take the drive offline. A
// goroutine (reopenWhenSpace) checks the free space every
// writableProbeInterval and, once there is enough, reopens the index
// for writes in place, without a restart of the process.

// writableProbeInterval is how often a read-only index checks whether
// its drive has space again.
const writableProbeInterval = 2 * time.Second

// writableMargin is free space kept beyond the WAL replay's flush and a
// new WAL: the OPTIONS file, a MANIFEST rotation, a few commits.
const writableMargin = 4 << 20

// errIndexReadOnly is the error of a write to an index opened read-only.
var errIndexReadOnly = errors.New("the index is open read-only: the drive was full when it was opened (opened for writes again once space is free)")

// writableNeed is the free space the index in dir needs to be opened
// for writes: its WAL files (an upper bound of the tables their replay
// flushes), a new WAL (pebble preallocates about a memtable) and a
// margin.
func writableNeed(fs vfs.FS, dir string, memtable uint64) uint64 {
	need := 2*memtable + writableMargin
	names, err := fs.List(dir)
	if err != nil {
		return need
	}
	for _, name := range names {
		if !strings.HasSuffix(name, ".log") {
			continue
		}
		if fi, err := fs.Stat(fs.PathJoin(dir, name)); err == nil {
			need += uint64(fi.Size())
		}
	}
	return need
}

// tooFullToWrite reports whether the index in dir on fs should be opened
// read-only, with the free and needed bytes. A filesystem that cannot
// say is assumed to have space (the open then fails or succeeds as
// before).
func tooFullToWrite(fs vfs.FS, dir string, memtable uint64) (full bool, free, need uint64) {
	du, err := fs.GetDiskUsage(dir)
	if err != nil {
		return false, 0, 0
	}
	need = writableNeed(fs, dir, memtable)
	return du.AvailBytes < need, du.AvailBytes, need
}

// readOnlyState is what a read-only index keeps: the channel closed when
// it is closed, which stops its reopenWhenSpace.
type readOnlyState struct {
	once sync.Once
	done chan struct{}
}

func (r *readOnlyState) stop() {
	if r != nil {
		r.once.Do(func() { close(r.done) })
	}
}

// reopenWhenSpace (a goroutine, started when idx was opened read-only)
// reopens the index for writes once the drive has space for it; it ends
// when the drive closes, the index is replaced, or the reopen is done.
func (d *Local) reopenWhenSpace(idx *index) {
	t := time.NewTicker(writableProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-idx.readOnly.done:
			return
		case <-t.C:
		}
		if full, _, _ := tooFullToWrite(idx.fs, d.indexDir, idx.memtable); full {
			continue
		}
		d.mu.Lock()
		if d.closed || d.idx != idx {
			d.mu.Unlock()
			return
		}
		d.idx = nil
		if err := idx.close(); err != nil {
			d.indexErr = d.indexError("close", err)
			d.mu.Unlock()
			return // the next ReadFormat opens it again
		}
		d.idx, d.indexErr = d.openIndex(true)
		next := d.idx
		d.mu.Unlock()
		switch {
		case next == nil:
			fmt.Fprintf(os.Stderr, "shardstore: drive %s: index: cannot open it for writes: %v\n", d.root, d.indexErr)
			return // the next ReadFormat (Health's probe) tries again
		case next.full != nil:
			fmt.Fprintf(os.Stderr, "shardstore: drive %s: index: open for deletions (its reserve released); every write once space is free\n", d.root)
			go d.restoreReserveWhenSpace(next)
			return
		case next.readOnly == nil:
			fmt.Fprintf(os.Stderr, "shardstore: drive %s: index: open for writes again (space is free)\n", d.root)
			return
		}
		idx = next // space went again: still read-only
	}
}

// isReadOnly reports a write refused by a read-only pebble instance.
func isReadOnly(err error) bool { return errors.Is(err, pebble.ErrReadOnly) }
