package drive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/google/uuid"
	"golang.org/x/sys/unix"
)

const formatFile = "format.json"

// Local is a Drive on a local directory.
type Local struct {
	root string
	// NoSync skips fsync; only benchmarks on tmpfs set it.
	NoSync bool
}

// OpenLocal returns the drive at dir, creating the directory if needed.
func OpenLocal(dir string) (*Local, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("drive %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("drive %s: %w", abs, classify(err))
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("drive %s: %w", abs, classify(err))
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("drive %s: not a directory: %w", abs, ErrDriveFaulty)
	}
	return &Local{root: abs}, nil
}

func (d *Local) String() string { return d.root }

// classify maps OS errors onto the drive error vocabulary, keeping the
// original error in the chain for messages.
func classify(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %v", ErrFileNotFound, err)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return fmt.Errorf("%w: %v", ErrDriveFull, err)
	case errors.Is(err, syscall.EIO), errors.Is(err, syscall.EROFS),
		errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%w: %v", ErrDriveFaulty, err)
	}
	return err
}

// checkRoot reports a drive whose directory vanished or was replaced by
// a file, so a pulled drive is not mistaken for an empty one.
func (d *Local) checkRoot() error {
	fi, err := os.Stat(d.root)
	if err != nil {
		return fmt.Errorf("drive %s: %w: %v", d.root, ErrDriveFaulty, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("drive %s: %w: root is not a directory", d.root, ErrDriveFaulty)
	}
	return nil
}

// validName rejects volume names and paths that could leave the volume.
func validPath(p string) bool {
	if p == "" || strings.ContainsRune(p, 0) || strings.HasPrefix(p, "/") {
		return false
	}
	for _, seg := range strings.Split(strings.TrimSuffix(p, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

func (d *Local) volPath(vol string) (string, error) {
	if !validPath(vol) || strings.Contains(vol, "/") {
		return "", fmt.Errorf("volume %q: %w", vol, ErrInvalidArgument)
	}
	return filepath.Join(d.root, vol), nil
}

func (d *Local) filePath(vol, p string) (string, error) {
	vp, err := d.volPath(vol)
	if err != nil {
		return "", err
	}
	if !validPath(p) {
		return "", fmt.Errorf("path %q: %w", p, ErrInvalidArgument)
	}
	return filepath.Join(vp, filepath.FromSlash(p)), nil
}

// ReadFormat reads the drive's format record.
func (d *Local) ReadFormat(ctx context.Context) (Format, error) {
	var f Format
	if err := d.checkRoot(); err != nil {
		return f, err
	}
	b, err := os.ReadFile(filepath.Join(d.root, SystemVolume, formatFile))
	if errors.Is(err, fs.ErrNotExist) {
		return f, ErrUnformatted
	}
	if err != nil {
		return f, fmt.Errorf("drive %s: read format: %w", d.root, classify(err))
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("drive %s: format file unreadable: %w: %v", d.root, ErrFileCorrupt, err)
	}
	return f, nil
}

// WriteFormat durably writes the format record.
func (d *Local) WriteFormat(ctx context.Context, f Format) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := d.MakeVol(ctx, SystemVolume); err != nil && !errors.Is(err, ErrVolumeExists) {
		return err
	}
	return d.WriteFile(ctx, SystemVolume, formatFile, b)
}

// DiskInfo reports the filesystem's capacity.
func (d *Local) DiskInfo(ctx context.Context) (DiskInfo, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(d.root, &st); err != nil {
		return DiskInfo{}, fmt.Errorf("drive %s: statfs: %w", d.root, classify(err))
	}
	total := st.Blocks * uint64(st.Bsize)
	free := st.Bavail * uint64(st.Bsize)
	return DiskInfo{Total: total, Free: free, Used: total - st.Bfree*uint64(st.Bsize)}, nil
}

// MakeVol creates a volume directory.
func (d *Local) MakeVol(ctx context.Context, vol string) error {
	vp, err := d.volPath(vol)
	if err != nil {
		return err
	}
	if err := d.checkRoot(); err != nil {
		return err
	}
	if err := os.Mkdir(vp, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return ErrVolumeExists
		}
		return fmt.Errorf("drive %s: make volume %s: %w", d.root, vol, classify(err))
	}
	return d.syncDir(d.root)
}

// StatVol reports a volume.
func (d *Local) StatVol(ctx context.Context, vol string) (VolInfo, error) {
	vp, err := d.volPath(vol)
	if err != nil {
		return VolInfo{}, err
	}
	fi, err := os.Stat(vp)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if rerr := d.checkRoot(); rerr != nil {
				return VolInfo{}, rerr
			}
			return VolInfo{}, ErrVolumeNotFound
		}
		return VolInfo{}, fmt.Errorf("drive %s: stat volume %s: %w", d.root, vol, classify(err))
	}
	return VolInfo{Name: vol, Created: fi.ModTime()}, nil
}

// ListVols lists volumes, the system volume included.
func (d *Local) ListVols(ctx context.Context) ([]VolInfo, error) {
	ents, err := os.ReadDir(d.root)
	if err != nil {
		return nil, fmt.Errorf("drive %s: list volumes: %w", d.root, ErrDriveFaulty)
	}
	var out []VolInfo
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, VolInfo{Name: e.Name(), Created: fi.ModTime()})
	}
	return out, nil
}

// DeleteVol removes a volume.
func (d *Local) DeleteVol(ctx context.Context, vol string, force bool) error {
	vp, err := d.volPath(vol)
	if err != nil {
		return err
	}
	if force {
		if _, err := os.Stat(vp); errors.Is(err, fs.ErrNotExist) {
			return ErrVolumeNotFound
		}
		return d.removeAllViaTmp(vp)
	}
	if err := os.Remove(vp); err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return ErrVolumeNotFound
		case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
			return ErrVolumeNotEmpty
		}
		return fmt.Errorf("drive %s: delete volume %s: %w", d.root, vol, classify(err))
	}
	return nil
}

// removeAllViaTmp renames a tree into the tmp area first so that the
// removal is atomic from a reader's view, then deletes it.
func (d *Local) removeAllViaTmp(p string) error {
	trash := filepath.Join(d.root, SystemVolume, TmpDir, "trash-"+uuid.NewString())
	if err := withParents(trash, func() error { return os.Rename(p, trash) }); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ErrFileNotFound
		}
		return fmt.Errorf("drive %s: %w", d.root, classify(err))
	}
	return classify(os.RemoveAll(trash))
}

// ReadFile reads a whole file.
func (d *Local) ReadFile(ctx context.Context, vol, p string) ([]byte, error) {
	fp, err := d.filePath(vol, p)
	if err != nil {
		return nil, err
	}
	b, err := readWhole(fp)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			if rerr := d.checkRoot(); rerr != nil {
				return nil, rerr
			}
			return nil, ErrFileNotFound
		}
		if errors.Is(err, syscall.EISDIR) {
			return nil, ErrFileNotFound
		}
		return nil, fmt.Errorf("drive %s: read %s/%s: %w", d.root, vol, p, classify(err))
	}
	return b, nil
}

// WriteFile writes data to a tmp file, fsyncs it and renames it into place.
func (d *Local) WriteFile(ctx context.Context, vol, p string, data []byte) error {
	fp, err := d.filePath(vol, p)
	if err != nil {
		return err
	}
	tmp := filepath.Join(d.root, SystemVolume, TmpDir, uuid.NewString())
	if err := d.writeSynced(tmp, data); err != nil {
		return fmt.Errorf("drive %s: write %s/%s: %w", d.root, vol, p, err)
	}
	if err := withParents(fp, func() error { return os.Rename(tmp, fp) }); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("drive %s: write %s/%s: %w", d.root, vol, p, classify(err))
	}
	return d.syncDir(filepath.Dir(fp))
}

func (d *Local) writeSynced(name string, data []byte) error {
	var f *os.File
	err := withParents(name, func() (err error) {
		f, err = openFile(name, unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, 0o644)
		return err
	})
	if err != nil {
		return classify(err)
	}
	_, err = f.Write(data)
	if err == nil && !d.NoSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return classify(err)
	}
	return nil
}

func (d *Local) syncDir(dir string) error {
	if d.NoSync {
		return nil
	}
	// Raw calls, not even an *os.File: this runs three times per drive
	// per PUT. See openFile for what os.Open would add.
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return classify(&fs.PathError{Op: "open", Path: dir, Err: err})
	}
	err = unix.Fsync(fd)
	unix.Close(fd)
	if err != nil {
		return classify(&fs.PathError{Op: "fsync", Path: dir, Err: err})
	}
	return nil
}

// openFile opens path like os.OpenFile but without offering it to the
// runtime's network poller. os.OpenFile does that for every file: it
// sets O_NONBLOCK, tries epoll_ctl (which refuses regular files and
// directories) and clears O_NONBLOCK again, four fcntl and a failing
// epoll_ctl around every open. Listing and metadata reads open two files
// per key and drive, so those were most of their syscalls. Drive files
// are never pollable, so nothing is lost.
func openFile(path string, flag int, perm uint32) (*os.File, error) {
	for {
		fd, err := unix.Open(path, flag|unix.O_CLOEXEC, perm)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// readWhole is os.ReadFile through openFile.
func readWhole(path string) ([]byte, error) {
	f, err := openFile(path, unix.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := 0
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() < 1<<30 {
		size = int(st.Size()) + 1 // +1: the read that sees EOF needs room
	}
	size = max(size, 512)
	b := make([]byte, 0, size)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// readDir is os.ReadDir through openFile, unsorted (the caller sorts).
func readDir(path string) ([]fs.DirEntry, error) {
	f, err := openFile(path, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// withParents runs op, which creates path, and when it fails because a
// parent directory is missing creates the parents and runs it once more.
// Most calls find their parents in place; this spares them the stat that
// MkdirAll makes first.
func withParents(path string, op func() error) error {
	err := op()
	if errors.Is(err, fs.ErrNotExist) {
		if merr := os.MkdirAll(filepath.Dir(path), 0o755); merr != nil {
			return merr
		}
		err = op()
	}
	return err
}

type localWriter struct {
	f      *os.File
	name   string
	noSync bool
	err    error
}

func (w *localWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.f.Write(p)
	if err != nil {
		w.err = classify(err)
		return n, w.err
	}
	return n, nil
}

// WriteBuffers writes bufs with writev, resuming after short writes.
func (w *localWriter) WriteBuffers(bufs [][]byte) error {
	if w.err != nil {
		return w.err
	}
	iov := make([][]byte, 0, len(bufs))
	for _, b := range bufs {
		if len(b) > 0 {
			iov = append(iov, b)
		}
	}
	for len(iov) > 0 {
		n, err := unix.Writev(int(w.f.Fd()), iov)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			w.err = classify(&os.PathError{Op: "writev", Path: w.name, Err: err})
			return w.err
		}
		for n > 0 && len(iov) > 0 {
			if n >= len(iov[0]) {
				n -= len(iov[0])
				iov = iov[1:]
				continue
			}
			iov[0] = iov[0][n:]
			n = 0
		}
	}
	return nil
}

func (w *localWriter) Close() error {
	if w.f == nil {
		return w.err
	}
	err := w.err
	if err == nil && !w.noSync {
		err = classify(w.f.Sync())
	}
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = classify(cerr)
	}
	w.f = nil
	if err != nil {
		os.Remove(w.name)
		w.err = err
	}
	return err
}

func (w *localWriter) Abort() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	os.Remove(w.name)
}

// CreateFile creates (truncating) a file for streaming writes.
func (d *Local) CreateFile(ctx context.Context, vol, p string) (FileWriter, error) {
	fp, err := d.filePath(vol, p)
	if err != nil {
		return nil, err
	}
	// MkdirAll first, not withParents: shard files go into a fresh
	// tmp/<id>/ directory, so the parents are almost always missing.
	if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
		return nil, fmt.Errorf("drive %s: create %s/%s: %w", d.root, vol, p, classify(err))
	}
	f, err := openFile(fp, unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("drive %s: create %s/%s: %w", d.root, vol, p, classify(err))
	}
	return &localWriter{f: f, name: fp, noSync: d.NoSync}, nil
}

// OpenFile opens a file for reading at offset.
func (d *Local) OpenFile(ctx context.Context, vol, p string, offset int64) (io.ReadCloser, error) {
	fp, err := d.filePath(vol, p)
	if err != nil {
		return nil, err
	}
	f, err := openFile(fp, unix.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if rerr := d.checkRoot(); rerr != nil {
				return nil, rerr
			}
			return nil, ErrFileNotFound
		}
		return nil, fmt.Errorf("drive %s: open %s/%s: %w", d.root, vol, p, classify(err))
	}
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			f.Close()
			return nil, fmt.Errorf("drive %s: seek %s/%s: %w", d.root, vol, p, classify(err))
		}
	}
	return &readErrClassifier{f}, nil
}

type readErrClassifier struct{ f *os.File }

func (r *readErrClassifier) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	if err != nil && err != io.EOF {
		err = classify(err)
	}
	return n, err
}

func (r *readErrClassifier) Close() error { return r.f.Close() }

// Delete removes a file or tree and then the empty parents it leaves.
func (d *Local) Delete(ctx context.Context, vol, p string, recursive bool) error {
	fp, err := d.filePath(vol, p)
	if err != nil {
		return err
	}
	if recursive {
		err = d.removeAllViaTmp(fp)
	} else {
		err = os.Remove(fp)
		if errors.Is(err, fs.ErrNotExist) {
			err = ErrFileNotFound
		}
	}
	if err != nil {
		if errors.Is(err, ErrFileNotFound) {
			if rerr := d.checkRoot(); rerr != nil {
				return rerr
			}
			return ErrFileNotFound
		}
		return fmt.Errorf("drive %s: delete %s/%s: %w", d.root, vol, p, classify(err))
	}
	vp, _ := d.volPath(vol)
	d.removeEmptyParents(vp, filepath.Dir(fp))
	return nil
}

// removeEmptyParents walks up from dir removing empty directories until
// it reaches the volume root or a non-empty directory.
func (d *Local) removeEmptyParents(volRoot, dir string) {
	for dir != volRoot && strings.HasPrefix(dir, volRoot+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// Rename moves src to dst, creating dst's parents and syncing its directory.
func (d *Local) Rename(ctx context.Context, srcVol, srcPath, dstVol, dstPath string) error {
	src, err := d.filePath(srcVol, srcPath)
	if err != nil {
		return err
	}
	dst, err := d.filePath(dstVol, dstPath)
	if err != nil {
		return err
	}
	if err := withParents(dst, func() error { return os.Rename(src, dst) }); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("drive %s: rename %s/%s: %w", d.root, srcVol, srcPath, ErrFileNotFound)
		}
		return fmt.Errorf("drive %s: rename %s/%s: %w", d.root, srcVol, srcPath, classify(err))
	}
	return d.syncDir(filepath.Dir(dst))
}

// ListDir lists a directory sorted by name, directories suffixed by "/".
func (d *Local) ListDir(ctx context.Context, vol, dir string) ([]string, error) {
	var fp string
	var err error
	if dir == "" {
		fp, err = d.volPath(vol)
	} else {
		fp, err = d.filePath(vol, dir)
	}
	if err != nil {
		return nil, err
	}
	ents, err := readDir(fp)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			if rerr := d.checkRoot(); rerr != nil {
				return nil, rerr
			}
			return nil, ErrFileNotFound
		}
		return nil, fmt.Errorf("drive %s: list %s/%s: %w", d.root, vol, dir, classify(err))
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// CleanTmp empties the tmp area; the engine calls it at start, when no
// write can be in flight, to drop leftovers of interrupted writes.
func (d *Local) CleanTmp(ctx context.Context) error {
	tmp := filepath.Join(d.root, SystemVolume, TmpDir)
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("drive %s: clean tmp: %w", d.root, classify(err))
	}
	return classify(os.MkdirAll(tmp, 0o755))
}

// Join is path.Join for drive paths, kept here so callers don't mix in
// filepath by accident.
func Join(elem ...string) string { return path.Join(elem...) }
