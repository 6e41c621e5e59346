package notify

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// A queue's round is one write(2) per directory and then its sync. By
// default the sync is the file's own fdatasync(2); QueueConfig.SyncWith
// can replace it per directory with one that covers the file's writes
// otherwise: cmd/shardstore gives drive.SharedSync's Guest, so a queue
// directory on a filesystem two or more drives share waits for the
// syncfs(2) the drives' index commits group-commit on (the concurrent
// PUTs' commits issue it anyway) instead of its own journal commit and
// flush. The record is durable when the round returns either way.

// syncFunc makes what was written to one directory's file durable, by
// own (its fdatasync) or by a sync that covers it.
type syncFunc = func(own func() error) error

// writeRound appends buf to every open copy in parallel and syncs each
// through its directory's sync; errs[i] is copy i's failure.
func (q *Queue) writeRound(buf []byte) []error {
	errs := make([]error, len(q.files))
	one := func(i int) {
		f := q.files[i]
		if _, err := f.Write(buf); err != nil {
			errs[i] = err
			return
		}
		own := func() error { return unix.Fdatasync(int(f.Fd())) }
		if i < len(q.syncs) && q.syncs[i] != nil {
			errs[i] = q.syncs[i](own)
			return
		}
		errs[i] = own()
	}
	open := 0
	for _, f := range q.files {
		if f != nil {
			open++
		}
	}
	if open == 1 {
		for i, f := range q.files {
			if f != nil {
				one(i)
			}
		}
		return errs
	}
	var wg sync.WaitGroup
	for i, f := range q.files {
		if f == nil {
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); one(i) }()
	}
	wg.Wait()
	return errs
}

// openSyncs asks cfg.SyncWith for each directory's sync (nil entries:
// fdatasync); a directory it cannot place keeps fdatasync.
func (q *Queue) openSyncs() {
	if q.cfg.SyncWith == nil {
		return
	}
	q.syncs = make([]syncFunc, len(q.cfg.Dirs))
	for i, dir := range q.cfg.Dirs {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		s, err := q.cfg.SyncWith(dir)
		if err != nil {
			q.log.Warn("notification queue directory syncs by itself", "dir", dir, "err", err)
			continue
		}
		q.syncs[i] = s
	}
}
