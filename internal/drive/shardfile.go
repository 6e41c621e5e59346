package drive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Shard files live at data/<xx>/<id>.<part>, xx the id's first two
// characters. They are written once, with O_DIRECT where the filesystem
// takes it (the data is not read back soon, and keeping it out of the
// page cache spares the cache and a copy the kernel would flush later),
// and synced with fdatasync plus an fsync of the fan-out directory, so a
// file is durable, name included, when Close returns: the engine commits
// an index record pointing at it right after.

// Syscalls used on shard files, replaceable by tests.
var (
	sysOpen  = unix.Open
	sysWrite = unix.Write
)

const (
	// directAlign is the alignment O_DIRECT needs of buffer addresses,
	// file offsets and lengths: 4 KiB covers 512-byte and 4K-sector
	// devices alike.
	directAlign = 4096
	// directBufSize is the staging buffer of one O_DIRECT writer: each
	// full buffer is one write(2).
	directBufSize = 256 << 10
	// maxPart bounds part numbers.
	maxPart = 1 << 20
)

// validID reports whether id can name a shard file: 8 to 64 characters
// of [0-9a-z-], starting with two hex digits (its fan-out directory).
// Nothing else is accepted, so no id can leave the data directory.
func validID(id string) bool {
	if len(id) < 8 || len(id) > 64 || !isHex(id[0]) || !isHex(id[1]) {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-') {
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

// shardPath returns the fan-out directory and the path of ref.
func (d *Local) shardPath(ref ShardRef) (dir, path string, err error) {
	if !validID(ref.ID) || ref.Part < 0 || ref.Part > maxPart {
		return "", "", fmt.Errorf("drive %s: shard %q part %d: %w", d.root, ref.ID, ref.Part, ErrInvalidArgument)
	}
	dir = filepath.Join(d.dataDir, ref.ID[:2])
	return dir, filepath.Join(dir, ref.ID+"."+itoa(ref.Part)), nil
}

// shardReady checks that shard calls can run: open, bound to the
// directory it opened, formatted. The index need not be: shard data
// stays readable on a drive whose index failed.
func (d *Local) shardReady() error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.readyLocked(false)
}

// verify tells a missing file from a missing (or swapped) drive.
func (d *Local) verify() error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.checkIdentity(true)
}

// parseShardName parses "<id>.<part>" found in fan-out directory dir.
func parseShardName(dir, name string) (ShardRef, bool) {
	i := len(name) - 1
	for i >= 0 && name[i] != '.' {
		i--
	}
	if i < 0 {
		return ShardRef{}, false
	}
	id, ps := name[:i], name[i+1:]
	if !validID(id) || id[:2] != dir || ps == "" || len(ps) > 7 {
		return ShardRef{}, false
	}
	part, err := strconv.Atoi(ps)
	if err != nil || part < 0 || part > maxPart || itoa(part) != ps {
		return ShardRef{}, false
	}
	return ShardRef{ID: id, Part: part}, true
}

// CreateShard creates ref's file (it must not exist) for streaming.
// Close makes it durable: data, size and directory entry.
func (d *Local) CreateShard(ctx context.Context, ref ShardRef) (FileWriter, error) {
	dir, name, err := d.shardPath(ref)
	if err != nil {
		return nil, err
	}
	if err := d.shardReady(); err != nil {
		return nil, err
	}
	if d.deletesOnly() {
		return nil, fmt.Errorf("drive %s: create shard %s.%d: %w: %w", d.root, ref.ID, ref.Part, ErrDriveFull, errDeletesOnly)
	}
	fail := func(err error) (FileWriter, error) {
		if errors.Is(err, ErrNotFound) {
			if rerr := d.verify(); rerr != nil {
				return nil, rerr
			}
		}
		return nil, fmt.Errorf("drive %s: create shard %s.%d: %w", d.root, ref.ID, ref.Part, err)
	}
	fd, direct, err := d.openShardFile(name)
	if err == unix.ENOENT && d.verify() == nil {
		// The fan-out directory went missing (a repair tool, a hand):
		// make it again.
		if merr := d.makeDataDirs(); merr != nil {
			return nil, merr
		}
		fd, direct, err = d.openShardFile(name)
	}
	if err != nil {
		if err == unix.EEXIST {
			return nil, fmt.Errorf("drive %s: create shard %s.%d: %w: file exists", d.root, ref.ID, ref.Part, ErrInvalidArgument)
		}
		return fail(classify(&fs.PathError{Op: "open", Path: name, Err: err}))
	}
	w := &shardWriter{d: d, fd: fd, name: name, dir: dir, direct: direct, shared: d.sharedSync()}
	if direct {
		w.buf = directBufPool.Get().(*[]byte)
	}
	return w, nil
}

// openShardFile creates name exclusively, O_DIRECT when the drive can.
func (d *Local) openShardFile(name string) (fd int, direct bool, err error) {
	const flags = unix.O_CREAT | unix.O_EXCL | unix.O_WRONLY | unix.O_CLOEXEC
	direct = !d.opts.DisableDirectIO && !d.noDirect.Load()
	if direct {
		fd, err = retryEINTR(func() (int, error) { return sysOpen(name, flags|unix.O_DIRECT, 0o644) })
		if err == unix.EINVAL {
			// The filesystem refuses O_DIRECT. Linux checks that after
			// creating the file, so it exists now: open it buffered.
			d.noDirect.Store(true)
			direct = false
			fd, err = retryEINTR(func() (int, error) { return sysOpen(name, unix.O_WRONLY|unix.O_CLOEXEC, 0) })
			if err == unix.ENOENT {
				fd, err = retryEINTR(func() (int, error) { return sysOpen(name, flags, 0o644) })
			}
		}
	} else {
		fd, err = retryEINTR(func() (int, error) { return sysOpen(name, flags, 0o644) })
	}
	return fd, direct, err
}

// directBufPool holds directAlign-aligned staging buffers.
var directBufPool = sync.Pool{New: func() any { return AlignedBuffer(directBufSize) }}

// AlignedBuffer returns n bytes whose address is a multiple of the 4 KiB
// that direct I/O needs (Go's heap does not move objects). A local
// drive's shard writer writes the whole pages of such a buffer to the
// file as they are, where any other buffer is copied into its staging
// buffer first: a caller that fills large buffers (a shard received from
// the network) saves that copy by filling these.
func AlignedBuffer(n int) *[]byte {
	raw := make([]byte, n+directAlign)
	off := int(-uintptr(unsafe.Pointer(&raw[0])) & (directAlign - 1))
	b := raw[off : off+n : off+n]
	return &b
}

// aligned reports whether p starts on a directAlign boundary.
func aligned(p []byte) bool {
	return len(p) > 0 && uintptr(unsafe.Pointer(&p[0]))&(directAlign-1) == 0
}

// shardWriter writes one shard file on a raw descriptor. Direct: Writes
// are staged in an aligned buffer, written 256 KiB at a time (a Write of
// an aligned buffer while nothing is staged writes its whole pages from
// where they are, see AlignedBuffer); Close
// writes the tail padded to 4 KiB, then truncates to the real size (a
// writer that had to drop O_DIRECT keeps staging, unpadded). Buffered:
// every Write (or WriteBuffers, as one writev) goes straight to the
// file.
type shardWriter struct {
	d      *Local
	fd     int
	name   string
	dir    string
	direct bool
	shared *fsSync // group commit with the filesystem's other drives, or nil
	buf    *[]byte // staging buffer (opened direct), else nil
	n      int     // bytes staged
	size   int64   // bytes accepted
	err    error
	done   bool
}

var errWriterClosed = errors.New("shard writer already closed")

func (w *shardWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.done {
		return 0, errWriterClosed
	}
	if w.buf == nil {
		if err := w.writeAll(p); err != nil {
			return 0, err
		}
		w.size += int64(len(p))
		return len(p), nil
	}
	total := len(p)
	if w.n == 0 && w.direct && aligned(p) {
		// Nothing staged and an aligned caller's buffer: its whole pages
		// go to the file from where they are, without the copy.
		if k := len(p) &^ (directAlign - 1); k > 0 {
			if err := w.writeAll(p[:k]); err != nil {
				return 0, err
			}
			p = p[k:]
		}
	}
	buf := *w.buf
	for len(p) > 0 {
		c := copy(buf[w.n:], p)
		w.n += c
		p = p[c:]
		if w.n == len(buf) {
			if err := w.writeAll(buf); err != nil {
				return 0, err
			}
			w.n = 0
		}
	}
	w.size += int64(total)
	return total, nil
}

// WriteBuffers writes bufs in order: one writev when buffered, staged
// when direct.
func (w *shardWriter) WriteBuffers(bufs [][]byte) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return errWriterClosed
	}
	if w.buf != nil {
		for _, b := range bufs {
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	}
	iov := make([][]byte, 0, len(bufs))
	var total int64
	for _, b := range bufs {
		if len(b) > 0 {
			iov = append(iov, b)
			total += int64(len(b))
		}
	}
	for len(iov) > 0 {
		n, err := unix.Writev(w.fd, iov)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			w.err = classify(&fs.PathError{Op: "writev", Path: w.name, Err: err})
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
	w.size += total
	return nil
}

// writeAll writes p at the current offset, resuming after short writes.
// A direct write the filesystem refuses (EINVAL: an alignment it wants
// larger than 4 KiB) turns the descriptor buffered and retries.
func (w *shardWriter) writeAll(p []byte) error {
	for len(p) > 0 {
		n, err := sysWrite(w.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EINVAL && w.direct:
			if ferr := w.dropDirect(); ferr != nil {
				w.err = ferr
				return ferr
			}
			continue
		case err != nil:
			w.err = classify(&fs.PathError{Op: "write", Path: w.name, Err: err})
			return w.err
		case n == 0:
			w.err = classify(&fs.PathError{Op: "write", Path: w.name, Err: io.ErrShortWrite})
			return w.err
		}
		p = p[n:]
	}
	return nil
}

// dropDirect clears O_DIRECT on the descriptor; the staged writes go on
// through the page cache.
func (w *shardWriter) dropDirect() error {
	fl, err := unix.FcntlInt(uintptr(w.fd), unix.F_GETFL, 0)
	if err == nil {
		_, err = unix.FcntlInt(uintptr(w.fd), unix.F_SETFL, fl&^unix.O_DIRECT)
	}
	if err != nil {
		return classify(&fs.PathError{Op: "fcntl", Path: w.name, Err: err})
	}
	w.d.noDirect.Store(true)
	w.direct = false
	return nil
}

// sync makes the file's data, size and directory entry durable: by
// fdatasync and an fsync of the fan-out directory, or by the syncfs the
// drive shares with the other drives on its filesystem, which covers
// both.
func (w *shardWriter) sync() error {
	own := func() error {
		if err := unix.Fdatasync(w.fd); err != nil {
			return classify(&fs.PathError{Op: "fdatasync", Path: w.name, Err: err})
		}
		return w.d.syncDir(w.dir)
	}
	if w.shared != nil {
		return w.shared.sync(own)
	}
	return own()
}

// Close writes what is staged, syncs the data and then the directory
// entry. On any failure the file is removed.
func (w *shardWriter) Close() error {
	if w.done {
		return w.err
	}
	err := w.err
	if err == nil && w.buf != nil && w.n > 0 {
		buf := *w.buf
		n := w.n
		if w.direct {
			// The tail padded to the alignment, then cut back to size.
			n = (w.n + directAlign - 1) &^ (directAlign - 1)
			clear(buf[w.n:n])
		}
		err = w.writeAll(buf[:n])
		if err == nil && n != w.n {
			if terr := unix.Ftruncate(w.fd, w.size); terr != nil {
				err = classify(&fs.PathError{Op: "ftruncate", Path: w.name, Err: terr})
			}
		}
	}
	if err == nil && !w.d.opts.NoSync {
		err = w.sync()
	}
	if err != nil {
		unlinkOwn(w.fd, w.name)
	}
	if cerr := unix.Close(w.fd); cerr != nil && err == nil {
		err = classify(&fs.PathError{Op: "close", Path: w.name, Err: cerr})
		unix.Unlink(w.name) // closed already: the name is all there is
	}
	w.fd = -1
	w.release()
	if err != nil {
		w.err = err
		return err
	}
	return nil
}

// unlinkOwn removes name if it is still the file open as fd. A writer
// that gives up late (a drive left behind, its Abort running after the
// heal) must not remove a file someone else has since created under the
// same name.
func unlinkOwn(fd int, name string) {
	var mine, there unix.Stat_t
	if unix.Fstat(fd, &mine) != nil || unix.Stat(name, &there) != nil {
		return
	}
	if mine.Dev == there.Dev && mine.Ino == there.Ino {
		unix.Unlink(name)
	}
}

func (w *shardWriter) release() {
	w.done = true
	if w.buf != nil {
		directBufPool.Put(w.buf)
		w.buf = nil
	}
}

// Abort closes and removes the file. After a Close (which kept the
// file, or removed it when it failed) it does nothing.
func (w *shardWriter) Abort() {
	if w.done {
		return
	}
	unlinkOwn(w.fd, w.name)
	unix.Close(w.fd)
	w.fd = -1
	w.release()
	if w.err == nil {
		w.err = errWriterClosed
	}
}

// OpenShard opens ref's file for reading from offset.
func (d *Local) OpenShard(ctx context.Context, ref ShardRef, offset int64) (io.ReadCloser, error) {
	_, name, err := d.shardPath(ref)
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, fmt.Errorf("drive %s: shard %s.%d offset %d: %w", d.root, ref.ID, ref.Part, offset, ErrInvalidArgument)
	}
	if err := d.shardReady(); err != nil {
		return nil, err
	}
	fd, err := retryEINTR(func() (int, error) { return unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0) })
	if err != nil {
		if err == unix.ENOENT {
			if rerr := d.verify(); rerr != nil {
				return nil, rerr
			}
			return nil, fmt.Errorf("drive %s: shard %s.%d: %w", d.root, ref.ID, ref.Part, ErrNotFound)
		}
		return nil, fmt.Errorf("drive %s: open shard %s.%d: %w", d.root, ref.ID, ref.Part,
			classify(&fs.PathError{Op: "open", Path: name, Err: err}))
	}
	return &shardReader{fd: fd, name: name, off: offset}, nil
}

// shardReader reads a shard file with pread from a running offset, on a
// raw descriptor; read errors are classified. The mutex keeps Close from
// releasing the descriptor number under a Read in another goroutine.
type shardReader struct {
	mu   sync.Mutex
	fd   int
	name string
	off  int64
}

// File implements FileReader: a new descriptor of the shard file (the
// reader keeps its own), positioned where the reader is, and the bytes
// from there to the end.
func (r *shardReader) File() (*os.File, int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fd < 0 {
		return nil, 0, fs.ErrClosed
	}
	var st unix.Stat_t
	if err := unix.Fstat(r.fd, &st); err != nil {
		return nil, 0, classify(&fs.PathError{Op: "fstat", Path: r.name, Err: err})
	}
	// Opened again rather than dup'ed: a dup shares the file offset,
	// which the Seek below would move under anyone else's descriptor.
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(fmt.Sprintf("/proc/self/fd/%d", r.fd), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, 0, classify(&fs.PathError{Op: "reopen", Path: r.name, Err: err})
	}
	f := os.NewFile(uintptr(fd), r.name)
	if _, err := f.Seek(r.off, io.SeekStart); err != nil {
		f.Close()
		return nil, 0, classify(&fs.PathError{Op: "seek", Path: r.name, Err: err})
	}
	return f, max(st.Size-r.off, 0), nil
}

func (r *shardReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fd < 0 {
		return 0, fs.ErrClosed
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Pread(r.fd, p, r.off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, classify(&fs.PathError{Op: "read", Path: r.name, Err: err})
		}
		if n == 0 {
			return 0, io.EOF
		}
		r.off += int64(n)
		return n, nil
	}
}

// readFullv implements vectorReader: preadv until every buffer is full.
func (r *shardReader) readFullv(bufs [][]byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fd < 0 {
		return fs.ErrClosed
	}
	iov := make([][]byte, 0, len(bufs))
	for _, b := range bufs {
		if len(b) > 0 {
			iov = append(iov, b)
		}
	}
	total := 0
	for len(iov) > 0 {
		n, err := unix.Preadv(r.fd, iov, r.off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return classify(&fs.PathError{Op: "read", Path: r.name, Err: err})
		}
		if n == 0 {
			if total == 0 {
				return io.EOF
			}
			return io.ErrUnexpectedEOF
		}
		r.off += int64(n)
		total += n
		for n > 0 {
			if n < len(iov[0]) {
				iov[0] = iov[0][n:]
				break
			}
			n -= len(iov[0])
			iov = iov[1:]
		}
	}
	return nil
}

func (r *shardReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fd < 0 {
		return nil
	}
	err := unix.Close(r.fd)
	r.fd = -1
	if err != nil {
		return classify(&fs.PathError{Op: "close", Path: r.name, Err: err})
	}
	return nil
}

// DeleteShards removes shard files; missing ones are not an error. The
// directory is not synced: a file a crash brings back is an orphan (no
// index record refers to it), which the scanner removes.
func (d *Local) DeleteShards(ctx context.Context, refs []ShardRef) error {
	names := make([]string, len(refs))
	for i, ref := range refs {
		_, name, err := d.shardPath(ref)
		if err != nil {
			return err
		}
		names[i] = name
	}
	if err := d.shardReady(); err != nil {
		return err
	}
	var first error
	for _, name := range names {
		err := unix.Unlink(name)
		if err == nil || err == unix.ENOENT {
			continue
		}
		if first == nil {
			first = fmt.Errorf("drive %s: delete shard: %w", d.root, classify(&fs.PathError{Op: "unlink", Path: name, Err: err}))
		}
	}
	if first == nil && len(names) > 0 {
		// ENOENT everywhere because the drive is gone is not success.
		if err := d.verify(); err != nil {
			return err
		}
	}
	return first
}

// WalkShards calls fn for every shard file, directory by directory.
// Names that do not parse as <id>.<part> (strays, temp files) are
// skipped. fn's error stops the walk and is returned.
func (d *Local) WalkShards(ctx context.Context, fn func(ShardFile) error) error {
	if err := d.shardReady(); err != nil {
		return err
	}
	return d.walkShards(ctx, d.verify, fn)
}

// walkShards walks the fan-out directories; verify says whether a
// missing one means a missing drive.
func (d *Local) walkShards(ctx context.Context, verify func() error, fn func(ShardFile) error) error {
	for _, sub := range fanout {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := d.walkDir(sub, verify, fn); err != nil {
			return err
		}
	}
	return nil
}

func (d *Local) walkDir(sub string, verify func() error, fn func(ShardFile) error) error {
	dir := filepath.Join(d.dataDir, sub)
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err == unix.ENOENT {
		return verify()
	}
	if err != nil {
		return fmt.Errorf("drive %s: walk shards: %w", d.root, classify(&fs.PathError{Op: "open", Path: dir, Err: err}))
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	for {
		ents, err := f.ReadDir(1024)
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue
			}
			ref, ok := parseShardName(sub, e.Name())
			if !ok {
				continue
			}
			var st unix.Stat_t
			if serr := unix.Fstatat(fd, e.Name(), &st, unix.AT_SYMLINK_NOFOLLOW); serr != nil {
				if serr == unix.ENOENT {
					continue // deleted since the readdir
				}
				return fmt.Errorf("drive %s: walk shards: %w", d.root,
					classify(&fs.PathError{Op: "stat", Path: filepath.Join(dir, e.Name()), Err: serr}))
			}
			sf := ShardFile{ShardRef: ref, Size: st.Size, ModTime: time.Unix(st.Mtim.Unix())}
			if ferr := fn(sf); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF || (err == nil && len(ents) == 0) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("drive %s: walk shards: %w", d.root, classify(err))
		}
	}
}
