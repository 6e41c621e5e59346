package drive

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// driveLock is the exclusive flock a process holds on a drive's
// .shardstore.sys/lock for as long as it has the drive open. flock
// belongs to the open file description, so a second open of the same
// drive fails inside one process as well as across processes, and the
// kernel drops the lock when the holder dies: a stale lock file never
// blocks a restart.
type driveLock struct{ fd int }

// acquireLock takes the lock at path and writes the holder's pid into
// it, or fails with ErrLocked naming the holder.
func acquireLock(root, path string) (*driveLock, error) {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	})
	if err != nil {
		return nil, fmt.Errorf("drive %s: lock: %w", root, classify(&fs.PathError{Op: "open", Path: path, Err: err}))
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			break
		}
	}
	if err == unix.EWOULDBLOCK {
		holder := "unknown"
		var b [32]byte
		if n, rerr := unix.Pread(fd, b[:], 0); rerr == nil && n > 0 {
			if pid, perr := strconv.Atoi(string(bytes.TrimSpace(b[:n]))); perr == nil && pid > 0 {
				holder = strconv.Itoa(pid)
			}
		}
		unix.Close(fd)
		return nil, fmt.Errorf("drive %s is in use by another process (pid %s): stop it first: %w", root, holder, ErrLocked)
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("drive %s: lock: %w", root, classify(&fs.PathError{Op: "flock", Path: path, Err: err}))
	}
	// The pid is for the message a second process prints; losing it in a
	// crash costs nothing, so no fsync.
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := unix.Ftruncate(fd, 0); err == nil {
		_, _ = unix.Pwrite(fd, pid, 0)
	}
	return &driveLock{fd: fd}, nil
}

// release drops the lock. The file stays: removing it would race with
// a process that has just opened it.
func (l *driveLock) release() error {
	if l == nil || l.fd < 0 {
		return nil
	}
	_ = unix.Flock(l.fd, unix.LOCK_UN)
	err := unix.Close(l.fd)
	l.fd = -1
	return err
}

// retryEINTR runs a syscall that returns an fd until it is not
// interrupted.
func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}
