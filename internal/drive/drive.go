// Package drive is one storage device as the engine sees it: a place for
// a format record, volumes (buckets and the system volume) and files,
// with durable writes (fsync) and atomic commits (rename). The engine
// talks only to the Drive interface so a remote drive can replace a local
// one later; Local implements it on a directory.
package drive

import (
	"context"
	"errors"
	"io"
	"time"
)

// Errors a Drive returns; the engine matches them with errors.Is.
var (
	ErrUnformatted     = errors.New("drive is not formatted")
	ErrVolumeNotFound  = errors.New("volume not found")
	ErrVolumeExists    = errors.New("volume already exists")
	ErrVolumeNotEmpty  = errors.New("volume not empty")
	ErrFileNotFound    = errors.New("file not found")
	ErrFileCorrupt     = errors.New("file corrupt")
	ErrDriveFull       = errors.New("drive full")
	ErrDriveFaulty     = errors.New("drive faulty")
	ErrInvalidArgument = errors.New("invalid argument")
)

// SystemVolume holds the engine's own state on every drive: format,
// tmp area, multipart uploads and bucket records. It cannot collide with
// a bucket because bucket names cannot start with a dot.
const SystemVolume = ".shardstore.sys"

// TmpDir is the tmp area inside SystemVolume; it is emptied at start.
const TmpDir = "tmp"

// Format identifies a drive's place in a deployment.
type Format struct {
	Version      int    `json:"version"`
	DeploymentID string `json:"deploymentID"`
	// SetCount and SetSize describe the whole deployment's layout, so a
	// changed drive count is detected on any single drive.
	SetCount   int `json:"setCount"`
	SetSize    int `json:"setSize"`
	SetIndex   int `json:"setIndex"`
	DriveIndex int `json:"driveIndex"`
	// DriveID is unique per drive; it tells a swapped drive from a moved one.
	DriveID string `json:"driveID"`
}

// VolInfo describes a volume.
type VolInfo struct {
	Name    string
	Created time.Time
}

// DiskInfo reports capacity.
type DiskInfo struct {
	Total, Free, Used uint64
}

// Drive is one storage device. Paths are slash-separated and relative to a
// volume; implementations must refuse paths that escape the volume.
type Drive interface {
	// String names the drive in messages (its path or endpoint).
	String() string

	ReadFormat(ctx context.Context) (Format, error)
	WriteFormat(ctx context.Context, f Format) error
	DiskInfo(ctx context.Context) (DiskInfo, error)

	MakeVol(ctx context.Context, vol string) error
	StatVol(ctx context.Context, vol string) (VolInfo, error)
	ListVols(ctx context.Context) ([]VolInfo, error)
	// DeleteVol removes a volume; unless force, it must hold no files.
	DeleteVol(ctx context.Context, vol string, force bool) error

	// ReadFile returns a whole (small) file.
	ReadFile(ctx context.Context, vol, path string) ([]byte, error)
	// WriteFile durably and atomically replaces a (small) file.
	WriteFile(ctx context.Context, vol, path string, data []byte) error
	// CreateFile opens a new file for streaming; Close fsyncs it. Abort
	// removes what was written.
	CreateFile(ctx context.Context, vol, path string) (FileWriter, error)
	// OpenFile opens a file for reading from offset.
	OpenFile(ctx context.Context, vol, path string, offset int64) (io.ReadCloser, error)
	// Delete removes a file or, if recursive, a directory tree; empty
	// parent directories up to the volume are removed too.
	Delete(ctx context.Context, vol, path string, recursive bool) error
	// Rename moves a file or directory, creating destination parents and
	// syncing the destination directory. An existing file is replaced.
	Rename(ctx context.Context, srcVol, srcPath, dstVol, dstPath string) error
	// ListDir lists a directory's entries sorted by name; directories end
	// in "/". A missing directory yields ErrFileNotFound.
	ListDir(ctx context.Context, vol, dir string) ([]string, error)
	// CleanTmp empties the tmp area of interrupted writes; called at start.
	CleanTmp(ctx context.Context) error
}

// FileWriter is a file being written.
type FileWriter interface {
	io.Writer
	// Close flushes and fsyncs the file.
	Close() error
	// Abort discards the file.
	Abort()
}

// BuffersWriter is implemented by writers that can write several buffers
// in one call (writev): a shard record is a checksum and a chunk that
// live in different buffers, and one syscall per record halves the
// syscalls of the PUT path.
type BuffersWriter interface {
	WriteBuffers(bufs [][]byte) error
}

// WriteBuffers writes bufs in order, in one call when w supports it.
func WriteBuffers(w io.Writer, bufs [][]byte) error {
	if bw, ok := w.(BuffersWriter); ok {
		return bw.WriteBuffers(bufs)
	}
	for _, b := range bufs {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
