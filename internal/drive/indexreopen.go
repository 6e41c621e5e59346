package drive

import (
	"fmt"
	"os"
)

// Reopening an index that stopped on a fatal error.
//
// Pebble stops an instance for good when a commit's WAL write or sync
// fails (most often ENOSPC: a full drive), see the top of index.go; the
// drive's calls then fail with ErrDriveFaulty and Health takes the drive
// offline and probes it with ReadFormat every ProbeInterval. Each such
// probe lands here: the stopped instance is closed on the side (its
// state is undefined, so its Close may block or panic: it must not hold
// the drive's lock meanwhile) and, once that Close has returned and
// released the index directory's lock, the next probe opens the index
// afresh from its files. What the stopped instance had acknowledged was
// synced to its WAL and comes back by the WAL's replay; the commit that
// failed was never acknowledged and may or may not be there. While the
// drive is still full the open fails (ErrDriveFull) and the drive stays
// offline; once space is free the probe succeeds and Health brings the
// drive back online, as it does a drive back from I/O errors: no restart
// of the node. A Close that never returns (a pebble goroutine stopped
// holding a lock) leaves the drive offline until the process restarts,
// which is what every stopped index needed before.

// reopenBroken (from ReadFormat, mu not held) retires idx, which stopped
// with cause, unless that was done already, and opens the index again
// once the retired instance has closed.
func (d *Local) reopenBroken(idx *index, cause error) (Format, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return Format{}, d.closedErr()
	}
	if d.idx == idx {
		d.idx = nil
		d.indexErr = cause
		d.retiring = idx.retire()
		fmt.Fprintf(os.Stderr, "shardstore: drive %s: index: closing the stopped index to open it again\n", d.root)
	}
	f, err := d.readFormat()
	if err != nil {
		return Format{}, err
	}
	d.loadLocked()
	if d.idx == nil {
		return Format{}, d.indexErr
	}
	if b := d.idx.broken.Load(); b != nil {
		return Format{}, *b
	}
	return f, nil
}

// retiredLocked (mu held) reports whether no retired index instance is
// still closing, so the index may be opened. While one is, indexErr
// keeps the error that stopped it.
func (d *Local) retiredLocked() bool {
	if d.retiring == nil {
		return true
	}
	select {
	case <-d.retiring:
		d.retiring = nil
		fmt.Fprintf(os.Stderr, "shardstore: drive %s: index: the stopped index closed; opening it again\n", d.root)
		return true
	default:
		return false
	}
}

// retire closes a stopped instance on the side; the channel is closed
// when its Close has returned (whatever it returned, or a panic).
func (idx *index) retire() <-chan struct{} {
	idx.readOnly.stop()
	idx.full.stopFull()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = runGuarded(idx.db.Close)
		idx.leaveShared()
	}()
	return done
}
