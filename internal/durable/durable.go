// Package durable makes file-system changes outside a drive's own
// write paths survive a crash: what the access log spool, the
// notification queues and the MinIO adoption write beside the drives' data. (internal/drive keeps its own
// raw-syscall versions on its hot paths.)
package durable

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// SyncDir fsyncs directory dir, making the creations, renames and
// removals of entries in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteCopies appends buf to every copy of a replicated file (the spool
// and queue segments kept on several drives) and, when datasync is set,
// fdatasyncs each, all at once so that the slowest drive sets the pace
// rather than their sum. A nil entry is a copy already dropped and is
// skipped. errs[i] is copy i's failure; the caller decides what a
// failed copy means.
func WriteCopies(files []*os.File, buf []byte, datasync bool) (errs []error) {
	errs = make([]error, len(files))
	write := func(i int) {
		_, err := files[i].Write(buf)
		if err == nil && datasync {
			err = unix.Fdatasync(int(files[i].Fd()))
		}
		errs[i] = err
	}
	if len(files) == 1 {
		if files[0] != nil {
			write(0)
		}
		return errs
	}
	var wg sync.WaitGroup
	for i, f := range files {
		if f == nil {
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); write(i) }()
	}
	wg.Wait()
	return errs
}
