package drive

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The reserve: deletions on a full drive.
//
// A drive whose filesystem is full opens its index read-only
// (indexfull.go), and so refused every write, a DELETE's too: a cluster
// whose every drive was full answered DELETE 507 and an operator had no
// S3 way to free space. Now each drive keeps a reserve file
// (.shardstore.sys/reserve, reserveSize bytes, allocated while the drive
// has space to spare: ensureReserve). When the index is found too full
// to open for writes and releasing the reserve gives it enough space,
// the reserve file is removed and the index opened for writes in
// deletes-only mode (idx.full): it takes batches that free or change
// small records (a DELETE's, a delete marker's, an abort's, metadata
// changes, the engine's own state) and refuses with ErrDriveFull those
// that add data (shard files, inline data, refs, uploads, parts, or a
// batch larger than deletesOnlyBatchBytes), exactly as a full drive
// refuses them. A goroutine (restoreReserveWhenSpace) checks every
// writableProbeInterval; once the filesystem has room for the reserve
// and the index again, it allocates the reserve anew and the drive takes
// every write ("index: open for writes again (space is free; reserve
// restored)"). Without a reserve (a drive formatted by an older release
// that filled up before it could allocate one, or one the filesystem
// never had room for), the index opens read-only as before.

// reserveFileName is the reserve's name in the drive's .shardstore.sys.
const reserveFileName = "reserve"

// reserveSize is the reserve: what openIndex needs beyond the space its
// WAL already takes to open the index for writes (writableNeed: two
// memtables and the margin) plus a memtable's worth of WAL to replay.
const reserveSize = 16 << 20

// deletesOnlyBatchBytes bounds the keys and values one batch may put on
// a drive in deletes-only mode.
const deletesOnlyBatchBytes = 256 << 10

// errDeletesOnly is the error of a write refused in deletes-only mode.
var errDeletesOnly = errors.New("the drive is full: it takes only deletions (its reserve is in use) until space is free")

// fullState is what an index opened for writes by releasing the reserve
// keeps: deletesOnly until the reserve is back, and the channel closed
// when the index closes (which stops restoreReserveWhenSpace).
type fullState struct {
	readOnlyState
	deletesOnly atomic.Bool
}

// stopFull stops restoreReserveWhenSpace (nil: nothing to stop).
func (s *fullState) stopFull() {
	if s != nil {
		s.stop()
	}
}

// addsData reports whether b would add data to a drive: a put of inline
// data, a ref, an upload or a part, or more than deletesOnlyBatchBytes
// of keys and values put.
func addsData(b *Batch) bool {
	n := 0
	for _, c := range b.Changes {
		if c.Delete {
			continue
		}
		switch c.Table {
		case TableInline, TableRefs, TableUploads, TableParts:
			return true
		}
		n += len(c.Key) + len(c.Value)
	}
	return n > deletesOnlyBatchBytes
}

// deletesOnly reports whether the drive takes only deletions now.
func (d *Local) deletesOnly() bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.idx != nil && d.idx.full != nil && d.idx.full.deletesOnly.Load()
}

// DeletesOnly reports whether the drive's index was opened on a full
// disk by releasing its reserve, so that it takes deletions but no new
// data (admin status: state "full").
func (d *Local) DeletesOnly() bool { return d.deletesOnly() }

// ReadOnly reports whether the drive's index is open read-only because
// its disk was full (no reserve to release): reads only.
func (d *Local) ReadOnly() bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.idx != nil && d.idx.readOnly != nil
}

// reservePath is the reserve file of the drive.
func (d *Local) reservePath() string { return filepath.Join(d.sys, reserveFileName) }

// releaseReserve removes the reserve file if, with its bytes, free bytes
// would reach need; it returns whether it did.
func (d *Local) releaseReserve(free, need uint64) bool {
	fi, err := os.Stat(d.reservePath())
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if free+uint64(fi.Size()) < need {
		return false
	}
	if err := os.Remove(d.reservePath()); err != nil {
		return false
	}
	return true
}

// ensureReserve allocates the reserve file when it is missing and the
// index's filesystem has room for it and for the index to stay open for
// writes; it reports whether the reserve is there.
func (d *Local) ensureReserve(idx *index) bool {
	path := d.reservePath()
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() >= reserveSize {
		return true
	}
	du, err := idx.fs.GetDiskUsage(d.indexDir)
	if err != nil || du.AvailBytes < reserveSize+writableNeed(idx.fs, d.indexDir, idx.memtable) {
		return false
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return false
	}
	err = allocate(f, reserveSize)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return false
	}
	return true
}

// allocate gives f size bytes of disk: fallocate, or zeros written where
// the filesystem has no fallocate.
func allocate(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if err == nil || !(errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS)) {
		return err
	}
	buf := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(buf)) {
		n := min(int64(len(buf)), size-off)
		if _, err := f.Write(buf[:n]); err != nil {
			return err
		}
	}
	return nil
}

// watchSpace starts the goroutine that takes idx out of a full state
// once space is free: reopenWhenSpace for a read-only index,
// restoreReserveWhenSpace for one in deletes-only mode.
func (d *Local) watchSpace(idx *index) {
	switch {
	case idx == nil:
	case idx.readOnly != nil:
		go d.reopenWhenSpace(idx)
	case idx.full != nil:
		go d.restoreReserveWhenSpace(idx)
	}
}

// restoreReserveWhenSpace (a goroutine, started when idx was opened in
// deletes-only mode) allocates the reserve again once the filesystem has
// room for it, and then lets idx take every write; it ends when the
// index closes or the reserve is back.
func (d *Local) restoreReserveWhenSpace(idx *index) {
	t := time.NewTicker(writableProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-idx.full.done:
			return
		case <-t.C:
		}
		if !d.ensureReserve(idx) {
			continue
		}
		idx.full.deletesOnly.Store(false)
		fmt.Fprintf(os.Stderr, "shardstore: drive %s: index: open for writes again (space is free; reserve restored)\n", d.root)
		return
	}
}
