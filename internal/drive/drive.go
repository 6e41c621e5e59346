// Package drive is one storage device as the engine sees it, in layout v2:
// a format record, an ordered crash-safe index (object records, buckets,
// multipart state, the heal queue) and shard data files addressed by a
// random id, never by an object key. The drive owns its on-disk format the
// way an embedded database owns its files; the engine talks only to the
// Drive interface, so a remote drive can replace a local one later. Local
// implements it on a directory: a pebble LSM for the index and one file
// per (data id, part) for shard data. docs/ondisk.md describes the files
// and tables, and why they are so.
//
// Two wrappers implement Drive around another: Health (health.go:
// per-operation deadlines, offline after errors, a probe brings it back),
// which the engine puts around every drive, and Faulty (faulty.go:
// injected errors, delays and hangs per operation), which tests use.
// An index that pebble stopped on a fatal error (a commit that hit
// ENOSPC) takes the drive offline; Health's probe reopens it once the
// drive has space again (indexreopen.go), so a full drive comes back
// without a restart. An index opened on a drive without the space its
// WAL's replay needs is opened read-only (pebble's Open would otherwise
// retry the replay's flush for ever, and the process never start): the
// drive serves reads, refuses writes with ErrDriveFull, and its index is
// opened for writes again once space is free (indexfull.go). So that a
// full drive still takes deletions (the way out of a full cluster through
// S3), each drive keeps a reserve file (.shardstore.sys/reserve, 16 MiB,
// allocated while there is room): an index too full to open for writes
// releases it and opens in deletes-only mode, taking deletions, delete
// markers and small record changes but refusing with ErrDriveFull what
// adds data (inline data, refs, uploads, parts, shard files), until the
// filesystem has room for the reserve again (indexreserve.go). DiskInfo
// says which state a full drive's index is in (Index: read-only or
// deletes-only; admin status shows it).
// The drives of a process that share a filesystem group-commit their
// WAL syncs into one syncfs (sharedsync.go); a file beside them that is
// no drive's (a notification queue's segment) can ride those syncs as a
// guest (sharedsync_guest.go).
// Every implementation, driverpc.Client included, runs the conformance
// suite in package drivetest; Faulty with no fault must pass it exactly
// as the drive it wraps.
package drive

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/zeebo/xxh3"
)

// Errors a Drive returns; the engine matches them with errors.Is.
var (
	ErrUnformatted     = errors.New("drive is not formatted")
	ErrNotFound        = errors.New("not found")
	ErrFileCorrupt     = errors.New("file corrupt")
	ErrDriveFull       = errors.New("drive full")
	ErrDriveFaulty     = errors.New("drive faulty")
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrNotBlank refuses to format a directory that holds other data.
	ErrNotBlank = errors.New("drive is not blank")
	// ErrOldLayout refuses a drive written by a release that used layout v1.
	ErrOldLayout = errors.New("drive uses an older on-disk layout")
	// ErrNewerLayout refuses a drive written by a newer release.
	ErrNewerLayout = errors.New("drive uses a newer on-disk layout")
	// ErrLocked refuses a drive another process holds.
	ErrLocked = errors.New("drive is in use by another process")
	// ErrDriveMissing is a drive whose directory does not exist (a disk
	// that did not mount); errors carrying it also match ErrDriveFaulty.
	ErrDriveMissing = errors.New("drive directory does not exist")
	// ErrConflict refuses a batch whose condition (Batch.Expect) no longer
	// holds: another writer changed the entry since it was read. It says
	// nothing about the drive's health.
	ErrConflict = errors.New("index entry changed since it was read")
	// ErrBufferAbandoned is a DirectReader read given up on at the
	// deadline while the drive still had the caller's buffers: the late
	// read may write into them at any time, so they must never be read
	// or reused (nor go back to a pool). Errors carrying it also match
	// ErrDriveFaulty.
	ErrBufferAbandoned = errors.New("read abandoned with the caller's buffer")
)

// ErrFileNotFound is the name older code used for ErrNotFound.
var ErrFileNotFound = ErrNotFound

// LayoutVersion is the on-disk layout this package writes and reads.
const LayoutVersion = 2

// Format identifies a drive's place in a deployment.
type Format struct {
	// Version is the layout version (LayoutVersion).
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
	// Parity is the STANDARD parity the deployment was formatted with.
	Parity int `json:"parity,omitempty"`
	// Placement is how an object's erasure set is picked
	// (placement.Algorithm): "" is shardstore's own; an adopted MinIO
	// deployment keeps MinIO's ("minio-sipmod"), for its objects and
	// every later one.
	Placement string `json:"placement,omitempty"`
	// PoolID names the server pool the drive belongs to (a random id
	// given when the pool is formatted; SetCount, SetSize and SetIndex
	// are then the pool's). "" is a deployment's first pool formatted
	// before pools existed. The pool's position on the command line is
	// not recorded: a pool keeps its id when an earlier one is removed.
	PoolID string `json:"poolID,omitempty"`
}

// DiskInfo reports capacity, and whether the drive's index takes writes.
type DiskInfo struct {
	Total, Free, Used uint64
	// Index is "" while the index takes every write; IndexReadOnly or
	// IndexDeletesOnly while its disk is full (indexfull.go,
	// indexreserve.go). Older nodes leave it out (JSON, omitempty).
	Index string `json:",omitempty"`
}

// The DiskInfo.Index values of a full drive.
const (
	// IndexReadOnly: the index was opened read-only on a full disk with
	// no reserve to release: reads only, every write refused (507).
	IndexReadOnly = "read-only"
	// IndexDeletesOnly: the index was opened on a full disk by releasing
	// the drive's reserve: reads and deletions; writes that add data
	// refused (507).
	IndexDeletesOnly = "deletes-only"
)

// Table is one keyspace of a drive's index.
type Table byte

// The index tables. Keys are opaque bytes to the drive, ordered bytewise.
const (
	// TableBuckets: bucket name → bucket record.
	TableBuckets Table = 'b'
	// TableObjects: ObjectKey(bucket, key) → object record (meta.Record).
	TableObjects Table = 'o'
	// TableInline: DataKey(id, part) → bitrot-framed shard data of a small object.
	TableInline Table = 'i'
	// TableRefs: data id → who owns it (an object or an upload); a shard
	// file whose id has no ref is an orphan once it is old enough.
	TableRefs Table = 'r'
	// TableUploads: UploadKey(bucket, key, uploadID) → multipart upload record.
	TableUploads Table = 'u'
	// TableParts: PartKey(bucket, key, uploadID, n) → part record.
	TableParts Table = 'p'
	// TableSystem: engine state (heal queue, markers, refill progress).
	TableSystem Table = 's'
	// TableVersions: VersionKey(bucket, key, time, id) → one noncurrent
	// object version (meta.Object). The current version stays in
	// TableObjects, so listing current keys never reads old versions.
	TableVersions Table = 'v'
)

// ObjectKey is the TableObjects key of bucket/key. Bucket names never
// contain '/', so one bucket's keys are a contiguous range.
func ObjectKey(bucket, key string) string { return bucket + "/" + key }

// BucketPrefix is the TableObjects prefix of every key of bucket.
func BucketPrefix(bucket string) string { return bucket + "/" }

// VersionPrefix is the TableVersions prefix of every noncurrent version
// of bucket/key. Object keys never hold NUL, so one key's versions are a
// contiguous range that sorts right after the key itself.
func VersionPrefix(bucket, key string) string { return bucket + "/" + key + "\x00" }

// VersionKey is the TableVersions key of a version made at modTime (Unix
// nanoseconds) with id versionID ("" for the null version): the time is
// stored inverted, so a key's versions scan newest first.
func VersionKey(bucket, key string, modTime int64, versionID string) string {
	const hexdigits = "0123456789abcdef"
	var inv [16]byte
	t := ^uint64(modTime)
	for i := 15; i >= 0; i-- {
		inv[i] = hexdigits[t&15]
		t >>= 4
	}
	return VersionPrefix(bucket, key) + string(inv[:]) + versionID
}

// VersionKeyLen is the length of a VersionKey suffix without the version
// id: a key of exactly prefix+VersionKeyLen bytes is the null version.
const VersionKeyLen = 16

// UploadKey is the TableUploads key of an upload. Object keys never hold
// NUL, so the uploads of one bucket sort by key, then by upload id.
func UploadKey(bucket, key, uploadID string) string { return bucket + "/" + key + "\x00" + uploadID }

// PartKey is the TableParts key of part n of an upload; PartPrefix the
// prefix of all its parts.
func PartKey(bucket, key, uploadID string, n int) string {
	s := itoa(n)
	for len(s) < 5 {
		s = "0" + s
	}
	return PartPrefix(bucket, key, uploadID) + s
}

// PartPrefix is the TableParts prefix of every part of an upload.
func PartPrefix(bucket, key, uploadID string) string {
	return UploadKey(bucket, key, uploadID) + "\x00"
}

// DataKey is the TableInline key of one part of a data id.
func DataKey(id string, part int) string { return id + "/" + itoa(part) }

// MemoryReader is a drive that can answer some point reads from memory
// (Local's row cache), without I/O and without blocking, so a GET of a
// hot small object needs no drive call. ok false says only that the
// answer is not in memory: Get has it.
type MemoryReader interface {
	GetCached(t Table, key string) (value []byte, ok bool)
}

// Change is one change in a batch.
type Change struct {
	Table  Table
	Key    string
	Value  []byte
	Delete bool
}

// Cond is a precondition of a batch: the entry key of Table still holds
// the value a writer read (by its 128-bit xxh3 sum), or is still absent.
type Cond struct {
	Table  Table
	Key    string
	Absent bool
	Sum    [16]byte
}

// Batch is a set of index changes applied atomically and durably.
type Batch struct {
	Changes []Change
	// Conds are checked, atomically with the batch, against every other
	// conditional batch on the drive: one that no longer holds fails the
	// batch with ErrConflict and applies nothing. This is the fencing of
	// read-modify-write commits: a writer that lost its key's lock (a
	// cluster lease that expired while it was paused) and commits what it
	// read before another writer changed the key is refused on every drive
	// the other writer reached. Unconditional batches are not ordered
	// against the check; they are blind writes by design.
	Conds []Cond
	// Lazy applies the batch without waiting for its sync: it becomes
	// durable with the next synced batch (the log is ordered) or is lost
	// in a crash. For clean-ups that a crash-recovery sweep redoes.
	Lazy bool
}

// Put adds a write of key in t.
func (b *Batch) Put(t Table, key string, value []byte) {
	b.Changes = append(b.Changes, Change{Table: t, Key: key, Value: value})
}

// Delete adds a deletion of key in t.
func (b *Batch) Delete(t Table, key string) {
	b.Changes = append(b.Changes, Change{Table: t, Key: key, Delete: true})
}

// Expect adds the condition that key in t still holds value, or is still
// absent when value is nil.
func (b *Batch) Expect(t Table, key string, value []byte) {
	c := Cond{Table: t, Key: key, Absent: value == nil}
	if value != nil {
		c.Sum = ValueSum(value)
	}
	b.Conds = append(b.Conds, c)
}

// ValueSum is the sum a Cond compares: xxh3-128 of the value. Values are
// object records the server builds (with random ids and nanosecond
// times), so a collision by chance is out of reach and one by design
// would need a client to choose a record's bytes.
func ValueSum(value []byte) [16]byte { return xxh3.Hash128(value).Bytes() }

// Len is the number of changes.
func (b *Batch) Len() int { return len(b.Changes) }

// RecordReader is implemented by drives that read an object's record
// and, in the same call, the inline shard its current version keeps on
// the drive (meta.Object.HoldsInlineShard): one round trip instead of
// two for a drive on another node. record is what Get(TableObjects,
// ObjectKey(bucket, key)) returns, with its errors; inline is nil when
// the record is not readable, not inline, or
// its shard could not be read for any reason but a drive fault (the
// reader then reads it again and reports the error).
type RecordReader interface {
	GetRecord(ctx context.Context, bucket, key string) (record, inline []byte, err error)
}

// NodeRecordReader is a RecordReader on another machine that reads an
// object's record on several of that machine's drives in one call: a
// GET or PUT reads the record on every drive of its set, and a cluster
// node serves several of them.
type NodeRecordReader interface {
	RecordReader
	// Node names the machine serving the drive: drives with the same
	// node can be read together.
	Node() string
	// GetRecords reads bucket/key on each of drives (all on this drive's
	// node) as GetRecord does, with the inline shard only when withData,
	// in one call. deliver(i, ...) is called once for each drives[i], as
	// the node answers it (a slow drive does not hold the others back),
	// from GetRecords' goroutine; GetRecords returns once all are
	// delivered. A call that fails as a whole delivers its error to
	// every drive not yet answered.
	GetRecords(ctx context.Context, drives []NodeRecordReader, bucket, key string, withData bool,
		deliver func(i int, record, inline []byte, err error))
}

// NodeApplier is a drive on another machine that applies index batches
// on several of that machine's drives in one call: a commit writes a
// batch to every drive of its set.
type NodeApplier interface {
	Drive
	// Node names the machine serving the drive, as NodeRecordReader's.
	Node() string
	// ApplyBatches applies batches[i] on drives[i] (all on this drive's
	// node) as Apply does, in one call. deliver(i, err) is called once
	// for each drive as the node answers it (a slow drive does not hold
	// the others back), from ApplyBatches' goroutine; it returns once all
	// are delivered. A call that fails as a whole delivers its error to
	// every drive not yet answered: whether such a drive applied its
	// batch is unknown, as for an Apply whose answer was lost.
	ApplyBatches(ctx context.Context, drives []NodeApplier, batches []*Batch, deliver func(i int, err error))
}

// ScanQuery selects index entries of one table in key order.
type ScanQuery struct {
	// Prefix limits the scan to keys starting with it.
	Prefix string
	// After, when set, starts the scan after this key (exclusive).
	After string
	// Delimiter, when set, collapses keys that contain it after Prefix
	// into one CommonPrefix entry (Prefix up to and including the first
	// Delimiter), reported once, without visiting the keys below it.
	Delimiter string
	// Limit is the most entries to return; 0 means no limit.
	Limit int
	// KeysOnly leaves Value nil.
	KeysOnly bool
	// Digest, on TableObjects, returns instead of the entries a
	// ScanDigest of them, encoded as one Entry (ParseScanDigest): a
	// listing reads the records of one drive and checks that the
	// others hold the same versions by digest, without moving them.
	Digest bool
}

// Entry is one scanned key (or collapsed common prefix).
type Entry struct {
	Key          string
	Value        []byte
	CommonPrefix bool
}

// ShardRef names one shard file: a data id and a part number.
type ShardRef struct {
	ID   string
	Part int
}

// ShardFile is a shard file found by WalkShards.
type ShardFile struct {
	ShardRef
	Size    int64
	ModTime time.Time
}

// Drive is one storage device.
type Drive interface {
	// String names the drive in messages (its path or endpoint).
	String() string

	ReadFormat(ctx context.Context) (Format, error)
	// WriteFormat records f; a drive with no format yet is refused with
	// ErrNotBlank if it holds anything but shardstore's own files.
	WriteFormat(ctx context.Context, f Format) error
	DiskInfo(ctx context.Context) (DiskInfo, error)

	// Get returns the value of key in t, or ErrNotFound.
	Get(ctx context.Context, t Table, key string) ([]byte, error)
	// Apply applies b atomically; when it returns nil the batch is
	// durable. Concurrent Applies share one sync (group commit).
	Apply(ctx context.Context, b *Batch) error
	// Scan returns the entries of t that q selects, in key order.
	Scan(ctx context.Context, t Table, q ScanQuery) ([]Entry, error)

	// CreateShard opens a new shard file for streaming; Close makes it
	// durable (data and directory entry). Abort removes it.
	CreateShard(ctx context.Context, ref ShardRef) (FileWriter, error)
	// OpenShard opens a shard file for reading from offset; a missing
	// file is ErrNotFound.
	OpenShard(ctx context.Context, ref ShardRef, offset int64) (io.ReadCloser, error)
	// DeleteShards removes shard files; missing ones are not an error.
	DeleteShards(ctx context.Context, refs []ShardRef) error
	// WalkShards calls fn for every shard file on the drive (no order).
	WalkShards(ctx context.Context, fn func(ShardFile) error) error

	// Close releases the drive (index, lock). Later calls fail.
	Close() error
}

// FileReader is implemented by shard readers backed by a local file
// (OpenShard of a Local drive, through Health): File returns a file of
// its own, positioned where the reader is, and the bytes left, so a
// server can send the shard with sendfile instead of reading and
// writing it. The caller closes the file; the reader stays as it was.
type FileReader interface {
	File() (*os.File, int64, error)
}

// DirectReader is implemented by the shard readers of Health.OpenShard:
// ReadFull fills each of bufs in turn with the shard's next bytes,
// straight from the drive (a local file reads them with one preadv),
// where Read stages them in a buffer of its own and copies them over so
// that a read abandoned at the deadline never writes into the caller's
// memory. The price of skipping that copy: when ReadFull fails with
// ErrBufferAbandoned, bufs belong to the stuck read from then on.
// A shard that ends before bufs are full returns io.ErrUnexpectedEOF
// (io.EOF when no byte was read), as io.ReadFull does.
type DirectReader interface {
	ReadFull(bufs ...[]byte) error
}

// FileWriter is a file being written.
type FileWriter interface {
	io.Writer
	// Close flushes and syncs the file.
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

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
