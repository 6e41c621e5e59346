// Package durable makes file-system changes outside a drive's own
// write paths survive a crash: what the access log spool and the MinIO
// adoption write beside the drives' data. (internal/drive keeps its own
// raw-syscall versions on its hot paths.)
package durable

import "os"

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
