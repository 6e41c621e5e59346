package drive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sys/unix"
)

// Local is a Drive on a local directory, in layout v2:
//
//	.shardstore.sys/format.json         the format record (JSON, version 2)
//	.shardstore.sys/lock                flock held while open; holds the pid
//	.shardstore.sys/index/              pebble LSM: every Table of the index
//	.shardstore.sys/data/<xx>/<id>.<p>  shard files; xx = first 2 chars of id
//	.shardstore.sys/cluster/            a cluster node's consensus log and
//	                                    snapshots, on one drive per node
//	                                    (ClusterStateDir; not the drive's)
//	.shardstore.sys/accesslog/          the node's server access log spool
//	                                    (AccessLogDir; not the drive's)
//
// Syscalls of one shard file (CreateShard, Writes, Close), S bytes:
//
//	O_DIRECT (disks): openat, one write(2) per 256 KiB staged (the last
//	one padded to 4 KiB), ftruncate when S is not a multiple of 4 KiB,
//	fdatasync, close, then openat+fsync+close of the fan-out directory:
//	6 + ceil(S/256Ki) syscalls, +1 when unaligned: 10 for a 1 MiB shard
//	(4 writes), 12 for 1 MiB + 1 byte (5 writes and the ftruncate).
//	buffered (tmpfs, DisableDirectIO): openat, one write/writev per
//	Write/WriteBuffers call, fdatasync, close, openat+fsync+close of the
//	fan-out directory: 6 + writes.
//	NoSync drops fdatasync and the directory's three.
//
// Reading one costs openat, one pread per Read, close; deleting one an
// unlink. An index Apply costs one WAL write and one shared fdatasync per
// commit group (pebble's group commit); Get and Scan usually none
// (block cache and OS page cache).
type Local struct {
	root     string
	sys      string
	dataDir  string
	indexDir string
	opts     LocalOptions

	// noDirect is set once O_DIRECT was refused on this drive, so later
	// shard files skip the attempt.
	noDirect atomic.Bool
	// verifiedAt is when checkIdentity last found the directories to be
	// the ones opened (unix nanoseconds).
	verifiedAt atomic.Int64
	// conds orders conditional index batches (Batch.Conds).
	conds condLocks

	mu     sync.RWMutex
	closed bool
	lock   *driveLock
	// rootID and sysID identify the directories this Local is bound to:
	// a drive swapped under a running process shows as a new inode.
	rootID, sysID dirID
	// formatted is true once a v2 format record was read or written:
	// shard calls work from then on.
	formatted bool
	// layoutErr says why the drive is not formatted (old layout, corrupt
	// or unreadable format record); nil means simply blank.
	layoutErr error
	idx       *index
	// indexErr is why the index did not open; ReadFormat retries.
	indexErr error
	// retiring is closed once the index instance that stopped on a fatal
	// error (see reopenBroken) has closed and released its directory;
	// nil when none is closing.
	retiring <-chan struct{}
	// createdSys is set when this Local created .shardstore.sys: if the
	// drive is still unformatted at Close (a refused start), it is
	// removed again, so the directory is left as it was found.
	createdSys bool
}

// LocalOptions configures OpenLocal.
type LocalOptions struct {
	// Cache is the index block cache, shared by the drives of a process;
	// nil gives the drive a private 8 MiB cache.
	Cache *IndexCache
	// SharedSync group-commits the index syncs of drives that share a
	// filesystem (see SharedSync); nil syncs each drive by itself.
	SharedSync *SharedSync
	// NoSync skips every fsync and commits the index without syncing its
	// WAL; only benchmarks on tmpfs set it.
	NoSync bool
	// DisableDirectIO writes shard files through the page cache even
	// where the filesystem supports O_DIRECT.
	DisableDirectIO bool
	// indexFS, in tests only, is the filesystem the index is opened on
	// (pebble's vfs; nil is the real one): a test injects ENOSPC.
	indexFS vfs.FS
	// NoCreate opens a drive whose directory does not exist as a missing
	// drive (every call fails with ErrDriveMissing) instead of creating
	// it: on a deployment that exists, a missing directory is a disk that
	// did not mount, and filling the parent filesystem in its place would
	// hide the failure. Once a directory appears at the path it is bound
	// to like a replaced drive.
	NoCreate bool
	// Name, when set, is what String returns instead of the directory: a
	// cluster node names its drives by URL, as the other nodes do.
	Name string
	// Beside lets WriteFormat format a drive that holds other entries at
	// its top (another store's files): only `shardstore migrate
	// from-minio` sets it, which formats MinIO's drives in place and
	// takes their data over. Shard files without a format record are
	// still refused.
	Beside bool
}

const (
	sysDirName     = ".shardstore.sys"
	formatFile     = "format.json"
	lockFileName   = "lock"
	indexDirName   = "index"
	dataDirName    = "data"
	clusterDirName = "cluster"
	accessLogDir   = "accesslog"
	lostAndFound   = "lost+found"
	oldBucketsDir  = "buckets" // layout v1 kept bucket records here
)

// ClusterStateDir is where a cluster node keeps its consensus log on the
// drive at root. The drive itself never reads it; a blank drive with
// only this directory in .shardstore.sys is still blank.
func ClusterStateDir(root string) string {
	return filepath.Join(root, sysDirName, clusterDirName)
}

// AccessLogDir is where a node spools server access log records on the
// drive at root (package accesslog); like ClusterStateDir, the drive
// itself never reads it.
func AccessLogDir(root string) string {
	return filepath.Join(root, sysDirName, accessLogDir)
}

// SysDir is the drive's own directory under root.
func SysDir(root string) string {
	return filepath.Join(root, sysDirName)
}

// HasFormat reports whether the drive at root holds a format record:
// a drive of a deployment, not a blank or missing one.
func HasFormat(root string) bool {
	fi, err := os.Stat(filepath.Join(root, sysDirName, formatFile))
	return err == nil && fi.Mode().IsRegular()
}

// OpenLocal opens the drive at dir, creating the directory if needed
// (unless opts.NoCreate), and takes its lock: a drive another process
// (or another OpenLocal in this one) holds is refused with ErrLocked. A
// formatted drive's index is opened at once. A drive that cannot serve
// (an index that does not open, an older layout, a missing directory
// with NoCreate) still opens: its calls report why, so one bad drive
// does not stop a deployment from starting.
func OpenLocal(dir string, opts LocalOptions) (*Local, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("drive %s: %w", dir, err)
	}
	d := &Local{
		root:     abs,
		sys:      filepath.Join(abs, sysDirName),
		dataDir:  filepath.Join(abs, sysDirName, dataDirName),
		indexDir: filepath.Join(abs, sysDirName, indexDirName),
		opts:     opts,
	}
	if opts.NoCreate {
		if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
			// Unbound: rootID stays zero, so the first identity check
			// that finds a directory at the path binds to it.
			d.layoutErr = d.missingErr()
			return d, nil
		}
	} else if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("drive %s: %w", abs, classify(err))
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("drive %s: %w", abs, classify(err))
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("drive %s: not a directory: %w", abs, ErrDriveFaulty)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.bindLocked(); err != nil {
		return nil, err
	}
	return d, nil
}

// missingErr is what every call of a drive without a directory returns.
func (d *Local) missingErr() error {
	return fmt.Errorf("drive %s: %w: %w (a disk that did not mount?); it stays offline until a directory is there",
		d.root, ErrDriveFaulty, ErrDriveMissing)
}

// bindLocked takes the drive's lock, records which directories it is
// bound to and loads the format (and the index).
func (d *Local) bindLocked() error {
	created := true
	if err := os.Mkdir(d.sys, 0o755); errors.Is(err, fs.ErrExist) {
		created = false
	} else if err != nil {
		return fmt.Errorf("drive %s: %w", d.root, classify(err))
	}
	lock, err := acquireLock(d.root, filepath.Join(d.sys, lockFileName))
	if err != nil {
		if created {
			_ = os.RemoveAll(d.sys)
		}
		return err
	}
	d.createdSys = created
	rootID, err := statDir(d.root)
	if err == nil {
		d.sysID, err = statDir(d.sys)
	}
	if err != nil {
		lock.release()
		return fmt.Errorf("drive %s: %w", d.root, classify(err))
	}
	d.lock, d.rootID = lock, rootID
	d.verifiedAt.Store(time.Now().UnixNano())
	d.loadLocked()
	return nil
}

// loadLocked reads the format record and, on a v2 drive, prepares the
// data directories and opens the index. Failures are recorded, not
// returned: the calls report them.
func (d *Local) loadLocked() {
	_, err := d.readFormat()
	switch {
	case err == nil:
		d.formatted, d.layoutErr = true, nil
		if d.idx == nil && !d.retiredLocked() {
			return // indexErr says why; the next ReadFormat retries
		}
		if d.idx == nil {
			d.indexErr = d.makeDataDirs()
			if d.indexErr == nil {
				d.idx, d.indexErr = d.openIndex(true)
				d.watchSpace(d.idx)
			}
		}
	case errors.Is(err, ErrUnformatted):
		d.formatted, d.layoutErr = false, nil
	default:
		d.formatted, d.layoutErr = false, err
	}
}

// dirID is a directory's device and inode.
type dirID struct{ dev, ino uint64 }

func statDir(path string) (dirID, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return dirID{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return dirID{}, &fs.PathError{Op: "stat", Path: path, Err: unix.ENOTDIR}
	}
	return dirID{dev: st.Dev, ino: st.Ino}, nil
}

// errReplaced marks the error of a drive whose directory changed.
var errReplaced = errors.New("the drive directory was replaced since it was opened")

// identityCheckInterval is how long a successful identity check is
// trusted by reads; writes (Apply) check every time.
const identityCheckInterval = 500 * time.Millisecond

// checkIdentity (mu held, read or write) reports a drive whose
// directory is gone (ErrDriveFaulty) or is no longer the one this Local
// is bound to (ErrDriveFaulty and errReplaced): a pulled drive, or one
// swapped under the running process. The index and lock this Local
// holds belong to the old directory, so nothing may be served from or
// written to them; ReadFormat and WriteFormat bind to the new one.
func (d *Local) checkIdentity(force bool) error {
	now := time.Now().UnixNano()
	if !force && d.verifiedLately(now) {
		return nil
	}
	id, err := statDir(d.root)
	if errors.Is(err, fs.ErrNotExist) {
		return d.missingErr()
	}
	if err != nil {
		return fmt.Errorf("drive %s: %w: %v", d.root, ErrDriveFaulty, err)
	}
	if id == d.rootID {
		id, err = statDir(d.sys)
		if err == nil && id == d.sysID {
			d.verifiedAt.Store(now)
			return nil
		}
	}
	return fmt.Errorf("drive %s: %w: %w", d.root, ErrDriveFaulty, errReplaced)
}

// verifiedLately reports whether checkIdentity found the directories to
// be the ones opened less than identityCheckInterval before now (Unix ns).
func (d *Local) verifiedLately(now int64) bool {
	return now-d.verifiedAt.Load() < int64(identityCheckInterval)
}

// readyLocked (mu held) checks that index and shard calls can run.
func (d *Local) readyLocked(force bool) error {
	if d.closed {
		return d.closedErr()
	}
	if err := d.checkIdentity(force); err != nil {
		return err
	}
	if !d.formatted {
		return d.unformattedErr()
	}
	return nil
}

// rebindIfReplaced binds the drive to the directory now at its path
// when that is not the one it was bound to: the old index is closed,
// the old lock released, and the new directory's lock taken and format
// read. A pulled drive (nothing there) is reported, not rebound.
func (d *Local) rebindIfReplaced() error {
	d.mu.RLock()
	err := d.closedErr()
	if !d.closed {
		err = d.checkIdentity(true)
	}
	d.mu.RUnlock()
	if err == nil || !errors.Is(err, errReplaced) {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return d.closedErr()
	}
	if err := d.checkIdentity(true); err == nil || !errors.Is(err, errReplaced) {
		return err // rebound meanwhile, or gone
	}
	if d.idx != nil {
		// Its files may be gone with the old directory: close it on the
		// side.
		idx := d.idx
		go func() { _ = runGuarded(idx.db.Close) }()
		d.idx = nil
	}
	d.lock.release()
	d.lock = nil
	d.createdSys = false
	d.noDirect.Store(false)
	d.formatted, d.layoutErr, d.indexErr = false, nil, nil
	return d.bindLocked()
}

func (d *Local) String() string {
	if d.opts.Name != "" {
		return d.opts.Name
	}
	return d.root
}

// Close closes the index and releases the lock. Later calls fail.
func (d *Local) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	var err error
	if d.idx != nil {
		if cerr := d.idx.close(); cerr != nil {
			err = d.indexError("close", cerr)
		}
		d.idx = nil
	}
	if d.createdSys && !d.formatted && d.lock != nil && d.checkIdentity(true) == nil {
		// Removed while the lock is still held, so no other process can
		// be using what is removed.
		_ = os.RemoveAll(d.sys)
	}
	if lerr := d.lock.release(); lerr != nil && err == nil {
		err = fmt.Errorf("drive %s: release lock: %w", d.root, classify(lerr))
	}
	d.lock = nil
	return err
}

// classify maps OS errors onto the drive error vocabulary, keeping the
// original error in the chain: errors.Is finds both the drive sentinel
// and the OS error (syscall.ENOSPC, fs.ErrNotExist).
func classify(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return fmt.Errorf("%w: %w", ErrDriveFull, err)
	case errors.Is(err, syscall.EIO), errors.Is(err, syscall.EROFS),
		errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%w: %w", ErrDriveFaulty, err)
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

func (d *Local) closedErr() error {
	return fmt.Errorf("drive %s: closed: %w", d.root, ErrDriveFaulty)
}

// unformattedErr is what index and shard calls return on a drive with
// no v2 format: ErrUnformatted, or the reason the format is unusable.
func (d *Local) unformattedErr() error {
	if d.layoutErr != nil {
		return d.layoutErr
	}
	return fmt.Errorf("drive %s: %w", d.root, ErrUnformatted)
}

// oldLayoutMsg is what an operator reads when pointing this release at
// a drive of the previous one.
const oldLayoutMsg = "this drive was written by an older shardstore release using layout v1 " +
	"(one directory per object key); this release reads layout v2 only; copy the objects out " +
	"with the older release (e.g. `aws s3 sync`) into a new deployment on empty drives"

// readFormat reads and checks format.json; it touches no state.
func (d *Local) readFormat() (Format, error) {
	var f Format
	if err := d.checkRoot(); err != nil {
		return f, err
	}
	b, err := readWhole(filepath.Join(d.sys, formatFile))
	if errors.Is(err, fs.ErrNotExist) {
		return f, ErrUnformatted
	}
	if err != nil {
		return f, fmt.Errorf("drive %s: read format: %w", d.root, classify(err))
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return Format{}, fmt.Errorf("drive %s: format record %s unreadable: %w: %v",
			d.root, filepath.Join(d.sys, formatFile), ErrFileCorrupt, err)
	}
	switch {
	case f.Version == LayoutVersion:
		return f, nil
	case f.Version == 1:
		return Format{}, fmt.Errorf("drive %s: %w: %s", d.root, ErrOldLayout, oldLayoutMsg)
	case f.Version > LayoutVersion:
		return Format{}, fmt.Errorf("drive %s: %w: the format record says layout v%d; this release reads layout v%d only: run a newer shardstore",
			d.root, ErrNewerLayout, f.Version, LayoutVersion)
	}
	// No (or a nonsense) version: layout v1's shape says which release
	// wrote it.
	if what := d.oldLayoutShape(); what != "" {
		return Format{}, fmt.Errorf("drive %s: %w: %s (found %s)", d.root, ErrOldLayout, oldLayoutMsg, what)
	}
	return Format{}, fmt.Errorf("drive %s: format record %s: %w: layout version %d",
		d.root, filepath.Join(d.sys, formatFile), ErrFileCorrupt, f.Version)
}

// oldLayoutShape describes what marks the drive as layout v1 (bucket
// directories at the top, .shardstore.sys/buckets), or "".
func (d *Local) oldLayoutShape() string {
	if fi, err := os.Stat(filepath.Join(d.sys, oldBucketsDir)); err == nil && fi.IsDir() {
		return filepath.Join(sysDirName, oldBucketsDir)
	}
	if others := d.foreignEntries(); len(others) > 0 {
		return fmt.Sprintf("top-level entry %q", others[0])
	}
	return ""
}

// foreignEntries lists the top-level entries that are not shardstore's.
func (d *Local) foreignEntries() []string {
	ents, err := readDir(d.root)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); n != sysDirName && n != lostAndFound {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// PeekFormat reads the format record of the drive directory dir without
// creating, locking or opening anything, so a start that is going to be
// refused can decide before it writes. A directory that does not exist
// is ErrDriveMissing; one without a record is ErrUnformatted when it is
// blank and ErrNotBlank when it holds anything but shardstore's files;
// layout v1 is ErrOldLayout.
func PeekFormat(dir string) (Format, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Format{}, fmt.Errorf("drive %s: %w", dir, err)
	}
	d := &Local{root: abs, sys: filepath.Join(abs, sysDirName)}
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		return Format{}, d.missingErr()
	}
	f, err := d.readFormat()
	if errors.Is(err, ErrUnformatted) {
		if others := d.foreignEntries(); len(others) > 0 {
			return Format{}, d.notBlankErr(others)
		}
		return Format{}, fmt.Errorf("drive %s: %w", abs, ErrUnformatted)
	}
	return f, err
}

// ReadFormat reads the format record. A missing one is ErrUnformatted;
// layout v1 is ErrOldLayout. On a formatted drive whose index failed to
// open, it retries the open and reports its failure, so a health probe
// sees the drive as faulty until the index serves. A drive directory
// replaced since it was opened (a swapped drive) is bound to afresh.
func (d *Local) ReadFormat(ctx context.Context) (Format, error) {
	if err := d.rebindIfReplaced(); err != nil {
		return Format{}, err
	}
	d.mu.RLock()
	idx := d.idx
	d.mu.RUnlock()
	f, err := d.readFormat()
	if err != nil {
		return Format{}, err
	}
	if idx == nil {
		return d.reloadFormat()
	}
	if b := idx.broken.Load(); b != nil {
		return d.reopenBroken(idx, *b)
	}
	return f, nil
}

func (d *Local) reloadFormat() (Format, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return Format{}, d.closedErr()
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

// WriteFormat records f as the drive's format (Version set to
// LayoutVersion). A drive with no format record yet must be blank:
// nothing at its top but .shardstore.sys and lost+found, and no index
// records or shard files left in .shardstore.sys; otherwise it is
// refused with ErrNotBlank. A layout v1 drive is refused with
// ErrOldLayout. The record is written atomically (tmp file, fsync,
// rename, fsync of the directory) after the data directories and the
// index exist, so a format record always has an index beside it.
func (d *Local) WriteFormat(ctx context.Context, f Format) error {
	f.Version = LayoutVersion
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := d.rebindIfReplaced(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return d.closedErr()
	}
	_, cur := d.readFormat()
	switch {
	case cur == nil:
		// A formatted drive: only the record changes.
	case errors.Is(cur, ErrUnformatted):
		if err := d.checkBlank(); err != nil {
			return err
		}
	case errors.Is(cur, ErrFileCorrupt):
		// A damaged record on a drive of ours: rewriting it repairs it,
		// but a foreign drive is still refused.
		if others := d.foreignEntries(); len(others) > 0 {
			return d.notBlankErr(others)
		}
	default:
		return cur
	}
	if d.idx == nil {
		if err := d.makeDataDirs(); err != nil {
			return err
		}
		idx, err := d.openIndex(false)
		if err != nil {
			d.indexErr = err
			return err
		}
		if cur != nil && errors.Is(cur, ErrUnformatted) {
			if err := d.checkIndexEmpty(idx.db); err != nil {
				_ = idx.close()
				return err
			}
		}
		d.idx, d.indexErr = idx, nil
	}
	if err := d.writeFileAtomic(d.sys, formatFile, b); err != nil {
		return fmt.Errorf("drive %s: write format: %w", d.root, err)
	}
	d.formatted, d.layoutErr = true, nil
	return nil
}

func (d *Local) notBlankErr(others []string) error {
	more := ""
	if len(others) > 1 {
		more = fmt.Sprintf(" and %d other entries", len(others)-1)
	}
	return fmt.Errorf("drive %s: %w: it holds %q%s besides %s; shardstore formats empty drives only",
		d.root, ErrNotBlank, others[0], more, sysDirName)
}

// checkBlank refuses a drive with foreign data before its first format.
func (d *Local) checkBlank() error {
	if what := d.oldLayoutShape(); strings.HasPrefix(what, sysDirName) {
		return fmt.Errorf("drive %s: %w: %s (found %s)", d.root, ErrOldLayout, oldLayoutMsg, what)
	}
	if others := d.foreignEntries(); len(others) > 0 && !d.opts.Beside {
		return d.notBlankErr(others)
	}
	// Shard files left by an earlier format whose record is gone: not
	// ours to overwrite silently.
	found := ""
	errFound := errors.New("found")
	verify := func() error { return d.checkIdentity(true) } // mu is held
	_ = d.walkShards(context.Background(), verify, func(sf ShardFile) error {
		found = filepath.Join(sysDirName, dataDirName, sf.ID[:2], sf.ID+"."+itoa(sf.Part))
		return errFound
	})
	if found != "" {
		return fmt.Errorf("drive %s: %w: it holds shard file %s but no format record; remove %s to reuse the drive",
			d.root, ErrNotBlank, found, filepath.Join(d.root, sysDirName))
	}
	return nil
}

// writeFileAtomic durably replaces dir/name with data.
func (d *Local) writeFileAtomic(dir, name string, data []byte) error {
	final := filepath.Join(dir, name)
	tmp := final + ".tmp"
	f, err := openFile(tmp, unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, 0o644)
	if err != nil {
		return classify(err)
	}
	_, err = f.Write(data)
	if err == nil && !d.opts.NoSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		os.Remove(tmp)
		return classify(err)
	}
	return d.syncDir(dir)
}

// makeDataDirs creates data/ and its 256 fan-out directories, syncing
// the parents of any it created.
func (d *Local) makeDataDirs() error {
	created := false
	if err := os.Mkdir(d.dataDir, 0o755); err == nil {
		created = true
	} else if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("drive %s: create data directory: %w", d.root, classify(err))
	}
	if created {
		if err := d.syncDir(d.sys); err != nil {
			return fmt.Errorf("drive %s: %w", d.root, err)
		}
	}
	made := false
	for i := range 256 {
		err := unix.Mkdir(filepath.Join(d.dataDir, fanout[i]), 0o755)
		if err == nil {
			made = true
		} else if err != unix.EEXIST {
			return fmt.Errorf("drive %s: create data directory: %w", d.root,
				classify(&fs.PathError{Op: "mkdir", Path: filepath.Join(d.dataDir, fanout[i]), Err: err}))
		}
	}
	if made {
		if err := d.syncDir(d.dataDir); err != nil {
			return fmt.Errorf("drive %s: %w", d.root, err)
		}
	}
	return nil
}

// fanout holds the 256 fan-out directory names, "00" to "ff".
var fanout = func() (n [256]string) {
	const hex = "0123456789abcdef"
	for i := range n {
		n[i] = string([]byte{hex[i>>4], hex[i&15]})
	}
	return n
}()

// DiskInfo reports the filesystem's capacity.
func (d *Local) DiskInfo(ctx context.Context) (DiskInfo, error) {
	d.mu.RLock()
	closed := d.closed
	d.mu.RUnlock()
	if closed {
		return DiskInfo{}, d.closedErr()
	}
	var st unix.Statfs_t
	if err := unix.Statfs(d.root, &st); err != nil {
		return DiskInfo{}, fmt.Errorf("drive %s: statfs: %w", d.root, classify(&fs.PathError{Op: "statfs", Path: d.root, Err: err}))
	}
	bs := uint64(st.Bsize)
	total := st.Blocks * bs
	free := st.Bavail * bs
	di := DiskInfo{Total: total, Free: free, Used: total - st.Bfree*bs}
	switch {
	case d.ReadOnly():
		di.Index = IndexReadOnly
	case d.deletesOnly():
		di.Index = IndexDeletesOnly
	}
	return di, nil
}

func (d *Local) syncDir(dir string) error {
	if d.opts.NoSync {
		return nil
	}
	// Raw calls, not even an *os.File: this runs once per shard file.
	// See openFile for what os.Open would add.
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
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
// epoll_ctl around every open. Drive files are never pollable, so
// nothing is lost. (Shard files go further and use raw descriptors:
// os.NewFile still costs an fcntl to ask whether the fd is
// non-blocking.)
func openFile(path string, flag int, perm uint32) (*os.File, error) {
	fd, err := retryEINTR(func() (int, error) { return unix.Open(path, flag|unix.O_CLOEXEC, perm) })
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// readWhole is os.ReadFile through openFile.
func readWhole(path string) ([]byte, error) {
	f, err := openFile(path, unix.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// readDir is os.ReadDir through openFile, unsorted.
func readDir(path string) ([]fs.DirEntry, error) {
	f, err := openFile(path, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}
