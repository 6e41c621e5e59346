package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/shardstore/shardstore/internal/bitrot"
	"github.com/shardstore/shardstore/internal/cluster"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/durable"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/minioformat"
	"github.com/shardstore/shardstore/internal/peerauth"
	"github.com/shardstore/shardstore/internal/placement"
	"github.com/shardstore/shardstore/internal/sealing"
)

// Options configure FromMinIO.
type Options struct {
	// Drives are MinIO's drive directories (any order: format.json
	// decides each one's position).
	Drives []string
	// DryRun decodes and reports without writing anything.
	DryRun bool
	// Finish removes MinIO's names of the adopted keys after a completed
	// adoption.
	Finish bool
	// Owner is recorded as the owner of the adopted buckets and objects
	// (an access key; empty: none, the root user's).
	Owner string
	// InlineLimit is the shard size up to which a MinIO inline shard
	// stays inline in shardstore's index; 0 means
	// engine.DefaultInlineLimit.
	InlineLimit int64
	// Out receives the progress lines and the report; nil discards them.
	Out io.Writer
	// NoSync skips fsyncs (tests on tmpfs only).
	NoSync bool
	// UploadKeys are bucket/key pairs of unfinished multipart uploads
	// (MinIO keeps only their hash; see minio_uploads.go).
	UploadKeys [][2]string
	// Address is this node's address (HOST:PORT, as the server's
	// --address) when Drives are the endpoints of a multi-node MinIO
	// deployment (cluster.go); "" finds the node by its host names.
	Address string
	// PeerKey authenticates the nodes' migrations to each other in a
	// multi-node adoption (peerauth.Derive of the root credentials).
	PeerKey peerauth.Key
	// Pools are the drives of each server pool, as the arguments gave
	// them (ellipses.Pools), and PoolArgs those arguments (MinIO records
	// a pool by its argument in pool.bin); nil or one pool: Drives are
	// one pool (pools.go).
	Pools    [][]string
	PoolArgs []string
	// MinIOKeys opens the KMS data keys of MinIO's encrypted versions
	// (the static key MinIO ran with), and Keys seals their new object
	// keys (minio_sse.go); without both, encrypted versions are refused.
	MinIOKeys MinIOKeyring
	Keys      sealing.Keys
}

// Refusal is a key (or bucket) left untouched, and why.
type Refusal struct {
	Bucket, Key, Reason string
}

// Report is what an adoption did (or, in a dry run, would do).
type Report struct {
	Buckets  int
	Keys     int   // keys adopted
	Versions int   // versions adopted (objects and delete markers)
	Bytes    int64 // object bytes adopted (sizes S3 reports)
	Linked   int   // part files taken over by hard link
	// ShardBytes is the size of the part files taken over (not copied).
	ShardBytes int64
	// Written is the bytes written as inline shards turned into shard
	// files (MinIO inlines more than shardstore does).
	Written  int64
	Uploads  int // unfinished multipart uploads adopted
	Refused  []Refusal
	Finished int // keys whose MinIO names --finish removed
	// Moved are keys of this pool adopted by another pool (holding
	// their newest version), this pool's versions copied there.
	Moved   int
	Elapsed time.Duration

	// UploadParts are the parts of the adopted uploads (linked);
	// UploadPartsLeft the part numbers left out.
	UploadParts, UploadPartsLeft int
	// UploadsUnknown are unfinished uploads not adopted because their key
	// is unknown; UnknownUploads their directories under
	// .minio.sys/multipart.
	UploadsUnknown int
	UnknownUploads []string
	// CopiedVersions are versions adopted by copy (compressed or
	// encrypted by MinIO, or moved from another pool), Decrypted those of
	// them MinIO stored encrypted (re-encrypted here: minio_sse.go),
	// CopiedBytes their object bytes and CopiedShardBytes the shard
	// files written for them on all drives.
	CopiedVersions int
	Decrypted      int
	// Decompressed are the copied versions MinIO stored compressed,
	// PoolCopied those moved from another server pool into the pool
	// of their key's newest version (pools.go).
	Decompressed     int
	PoolCopied       int
	CopiedBytes      int64
	CopiedShardBytes int64
	// MetaBytes is the size of the index entries written (keys and
	// values, before the index's own overhead), InlineBytes the inline
	// shard data among them.
	MetaBytes, InlineBytes int64
	// Total is the key count of the counting pass (0 if none).
	Total int
}

// ObjectsPerSecond is the adoption rate in versions per second.
func (r *Report) ObjectsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Versions) / r.Elapsed.Seconds()
}

// ErrRefused is wrapped by a refusal of the whole deployment (layout).
var ErrRefused = errors.New("migrate: deployment not adoptable")

// stateKey is the TableSystem key of the migration's state on each drive
// (the engine refuses to start while it says stateAdopting).
const stateKey = engine.AdoptionStateKey

const (
	stateAdopting = engine.AdoptionRunning
	stateAdopted  = "adopted"
	stateFinished = "finished"
)

// minioSys is MinIO's system directory on each drive.
const minioSys = ".minio.sys"

// dirSuffix is how MinIO stores a key ending in "/".
const dirSuffix = "__XLDIR__"

type adopter struct {
	opts   Options
	paths  []string // by place in the deployment: set by set, each by position
	format *minioformat.Format
	// sets and setSize are MinIO's erasure sets; placer picks a key's
	// set as MinIO did (sets.go).
	sets, setSize int
	placer        *placement.Placer
	drives        []*drive.Local // as paths; nil in a dry run
	mu            sync.Mutex     // guards rep and last while keys are adopted concurrently
	rep           Report
	start         time.Time
	last          time.Time
	steps         int // writes made, for crashAt
	// seenIn is, for each key of the bucket being adopted, the sets
	// (bit s) whose drives hold an xl.meta of it.
	seenIn map[string]uint64

	// uploads tracks MinIO's unfinished uploads (minio_uploads.go).
	uploads *uploadTracker
	// etaFrom and etaDone are the first progress line's time and keys
	// done, which the ETA's rate is measured from (minio_progress.go).
	etaFrom time.Time
	etaDone int

	// cl is this node's part of a multi-node adoption (nil: a single
	// node's), and local which drives (by place, as paths) are this
	// node's: the others are staged copies, read but never written.
	cl    *clusterRun
	local []bool
	// slotOff is the cluster slot of this adopter's first drive (a pool
	// after the first of a multi-node deployment of several pools).
	slotOff int
	// packs are the staged drives read from packs (stagefs.go), by the
	// path standing for the drive in paths.
	packs map[string]*packedDrive

	// poolSet is the deployment's pools when it has several (pools.go):
	// this adopter adopts pool poolSet.all[pool]; nil for a deployment
	// of one pool.
	poolSet *poolSet
	pool    int
	// poolID is the pool id written into the drives' formats ("" for a
	// deployment of one pool).
	poolID string
}

// keyWorkers is how many keys are decoded and linked at once.
const keyWorkers = 8

// crashAtEnv, for tests only, makes the process kill itself (SIGKILL)
// at its Nth write (a link, a shard file, an index batch, or another
// node's drive staged in a cluster adoption), so a test
// can interrupt an adoption at every kind of point
// (TestMigrateFromMinIOKilled).
const crashAtEnv = "SHARDSTORE_TEST_MIGRATE_CRASH_AT"

func (a *adopter) add(f func(r *Report)) {
	a.mu.Lock()
	f(&a.rep)
	a.mu.Unlock()
}

// FromMinIO adopts (or with DryRun, inspects) the MinIO drives of opts.
func FromMinIO(ctx context.Context, opts Options) (*Report, error) {
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.InlineLimit == 0 {
		opts.InlineLimit = engine.DefaultInlineLimit
	}
	a := &adopter{opts: opts, start: time.Now()}
	a.last = a.start
	if cluster.IsCluster(opts.Drives) {
		return a.fromCluster(ctx)
	}
	if len(opts.Pools) > 1 {
		return a.fromPools(ctx)
	}
	return a.adopt(ctx)
}

// adopt runs the adoption over a.opts.Drives (a node's share: over the
// local and staged drives, cluster.go).
func (a *adopter) adopt(ctx context.Context) (*Report, error) {
	opts := a.opts
	if err := a.orderDrives(); err != nil {
		return nil, err
	}
	if a.cl != nil {
		if err := a.checkClusterOrder(); err != nil {
			return nil, err
		}
	}
	if err := a.checkPools(); err != nil {
		return nil, err
	}
	fmt.Fprint(opts.Out, a.describeLayout())
	return a.run(ctx)
}

// run adopts (or finishes) the drives that orderDrives ordered.
func (a *adopter) run(ctx context.Context) (*Report, error) {
	opts := a.opts
	if opts.Finish {
		return a.finish(ctx)
	}
	if !opts.DryRun {
		if err := a.openDrives(ctx); err != nil {
			return nil, err
		}
		defer a.closeDrives()
		st, err := a.state(ctx)
		if err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		if st == stateAdopted || st == stateFinished {
			fmt.Fprintf(opts.Out, "already adopted (state %q): nothing done; shardstore may have changed the data since, so an adoption is not redone over it\n", st)
			return &a.rep, nil
		}
		if err := a.setState(ctx, stateAdopting); err != nil {
			return nil, err
		}
	}
	a.rep.Total = a.countKeys()
	fmt.Fprintf(opts.Out, "counted %d keys on one drive of each erasure set\n", a.rep.Total)
	if err := a.loadUploads(); err != nil {
		return nil, err
	}
	a.last = time.Now()
	buckets, err := a.buckets()
	if err != nil {
		return nil, err
	}
	for _, b := range buckets {
		if err := a.adoptBucket(ctx, b); err != nil {
			return nil, err
		}
	}
	if err := a.adoptUploads(ctx); err != nil {
		return nil, err
	}
	if !opts.DryRun {
		if err := a.setState(ctx, stateAdopted); err != nil {
			return nil, err
		}
	}
	a.rep.Elapsed = time.Since(a.start)
	a.printReport()
	return &a.rep, nil
}

// n is the number of drives of the deployment (every set).
func (a *adopter) n() int { return len(a.paths) }

// openDrives opens each drive for shardstore and formats it beside
// MinIO's files (the slot is MinIO's position).
func (a *adopter) openDrives(ctx context.Context) error {
	n := a.setSize
	parity := defaultParity(n)
	a.drives = make([]*drive.Local, a.n())
	for i, p := range a.paths {
		if !a.isLocal(i) {
			continue // another node's: it formats its own
		}
		d, err := drive.OpenLocal(p, drive.LocalOptions{Beside: true, NoSync: a.opts.NoSync, NoCreate: true})
		if err != nil {
			return fmt.Errorf("migrate: open drive %s: %w", p, err)
		}
		a.drives[i] = d
		f, err := d.ReadFormat(ctx)
		switch {
		case err == nil:
			// A single set adopted before placements were recorded has none.
			samePlace := f.Placement == string(a.placer.Algorithm()) || (a.sets == 1 && f.Placement == "")
			if f.DeploymentID != a.format.DeploymentID || f.SetCount != a.sets || f.SetSize != n || f.SetIndex != i/n || f.DriveIndex != i%n || !samePlace ||
				f.PoolID != a.poolID {
				return fmt.Errorf("%w: drive %s already holds a shardstore format for another deployment or slot", ErrRefused, p)
			}
		case errors.Is(err, drive.ErrUnformatted):
			f := drive.Format{DeploymentID: a.format.DeploymentID, SetCount: a.sets, SetSize: n, SetIndex: i / n,
				DriveIndex: i % n, DriveID: uuid.NewString(), Parity: parity, Placement: string(a.placer.Algorithm()), PoolID: a.poolID}
			if err := d.WriteFormat(ctx, f); err != nil {
				return fmt.Errorf("migrate: format drive %s: %w", p, err)
			}
		default:
			return fmt.Errorf("migrate: drive %s: %w", p, err)
		}
	}
	return nil
}

// defaultParity is MinIO's default STANDARD parity for a set of n drives
// (which shardstore's defaults match).
func defaultParity(n int) int {
	switch {
	case n == 1:
		return 0
	case n <= 3:
		return 1
	case n <= 5:
		return 2
	case n <= 7:
		return 3
	default:
		return 4
	}
}

func (a *adopter) closeDrives() {
	for _, d := range a.drives {
		if d != nil {
			d.Close()
		}
	}
}

func (a *adopter) setState(ctx context.Context, state string) error {
	for _, d := range a.drives {
		if d == nil {
			continue
		}
		b := &drive.Batch{}
		b.Put(drive.TableSystem, stateKey, []byte(state))
		if err := d.Apply(ctx, b); err != nil {
			return fmt.Errorf("migrate: record state on %s: %w", d, err)
		}
	}
	return nil
}

// state returns the migration state the drives record ("" when none):
// "adopting" when any drive says so, else what most say ("adopted" or
// "finished").
func (a *adopter) state(ctx context.Context) (string, error) {
	votes := map[string]int{}
	for _, d := range a.drives {
		if d == nil {
			continue
		}
		v, err := d.Get(ctx, drive.TableSystem, stateKey)
		if err == nil {
			votes[string(v)]++
		} else if !errors.Is(err, drive.ErrNotFound) {
			return "", err
		}
	}
	if votes[stateAdopting] > 0 {
		return stateAdopting, nil // interrupted, perhaps while recording the end
	}
	best := ""
	for s, c := range votes {
		if c > votes[best] {
			best = s
		}
	}
	return best, nil
}

// buckets lists MinIO's buckets: top-level directories present on a
// majority of the drives (in a multi-pool adoption: of any pool's).
func (a *adopter) buckets() ([]string, error) {
	for _, p := range a.paths {
		if _, err := a.readDir(p); err != nil {
			return nil, fmt.Errorf("migrate: drive %s: %w", p, err)
		}
	}
	all := map[string]bool{}
	if a.poolSet != nil {
		for _, b := range a.poolSet.buckets {
			all[b] = true
		}
	}
	for b, c := range bucketDirs(a.paths, a.readDir) {
		if c > a.n()/2 {
			all[b] = true
		} else if !all[b] {
			a.refuse(b, "", fmt.Sprintf("bucket directory on %d of %d drives only", c, a.n()))
		}
	}
	var out []string
	for b := range all {
		out = append(out, b)
	}
	sort.Strings(out)
	return out, nil
}

// bucketDirs counts the drives of paths that have each top-level
// directory (a bucket's); unreadable drives count for none.
func bucketDirs(paths []string, readDir func(string) ([]fs.DirEntry, error)) map[string]int {
	count := map[string]int{}
	for _, p := range paths {
		ents, err := readDir(p)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if !e.IsDir() || strings.HasPrefix(name, ".") || name == "lost+found" {
				continue
			}
			count[name]++
		}
	}
	return count
}

func (a *adopter) refuse(bucket, key, reason string) {
	a.add(func(r *Report) { r.Refused = append(r.Refused, Refusal{Bucket: bucket, Key: key, Reason: reason}) })
}

// adoptBucket writes the bucket's record and adopts its keys.
func (a *adopter) adoptBucket(ctx context.Context, bucket string) error {
	info, err := a.bucketInfo(bucket)
	if err != nil {
		a.refuse(bucket, "", err.Error())
		return nil
	}
	keys, err := a.keys(bucket)
	if err != nil {
		return err
	}
	if !a.opts.DryRun {
		rec := engine.BucketRecord(info)
		for _, d := range a.drives {
			if d == nil {
				continue // another node's: it writes the same record
			}
			b := &drive.Batch{}
			b.Put(drive.TableBuckets, bucket, rec)
			if err := d.Apply(ctx, b); err != nil {
				return fmt.Errorf("migrate: bucket %s on %s: %w", bucket, d, err)
			}
		}
	}
	a.rep.Buckets++
	a.noteKeys(bucket, keys)
	for at := 0; at < len(keys); at += chunkKeys {
		if err := a.adoptChunk(ctx, bucket, keys[at:min(at+chunkKeys, len(keys))]); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// chunkKeys is how many keys share one index batch per drive: a synced
// batch per key and drive made the adoption wait on syncs (335 objects/s
// on 16 drives); a chunk's links and shard files are made before its
// batches, as each key's would be.
const chunkKeys = 256

// adoptChunk adopts keys (keyWorkers at a time) and applies their
// records as one batch per drive.
func (a *adopter) adoptChunk(ctx context.Context, bucket string, keys []string) error {
	per := make([][]*drive.Batch, len(keys))
	work := make(chan int)
	errs := make([]error, keyWorkers)
	var wg sync.WaitGroup
	for w := range keyWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if errs[w] == nil {
					per[i], errs[w] = a.adoptKey(ctx, bucket, keys[i])
				}
			}
		}()
	}
	for i := range keys {
		work <- i
	}
	close(work)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if a.opts.DryRun {
		return nil
	}
	applyErrs := make([]error, a.n())
	for p := range a.n() {
		b := &drive.Batch{}
		for _, kb := range per {
			if kb != nil && kb[p] != nil {
				b.Changes = append(b.Changes, kb[p].Changes...)
			}
		}
		if b.Len() == 0 || a.drives[p] == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.noteBatch(b)
			a.step()
			if err := a.drives[p].Apply(ctx, b); err != nil {
				applyErrs[p] = fmt.Errorf("migrate: bucket %s on %s: %w", bucket, a.drives[p], err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(applyErrs...)
}

// keys lists the bucket's keys in MinIO's path form: every directory
// holding an xl.meta, on any drive; a.seenIn records the sets each was
// found in.
func (a *adopter) keys(bucket string) ([]string, error) {
	var mu sync.Mutex
	seen := map[string]uint64{}
	errs := make([]error, a.n())
	var wg sync.WaitGroup
	for i, p := range a.paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			root := filepath.Join(p, bucket)
			errs[i] = a.walkDir(root, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					if errors.Is(err, fs.ErrNotExist) {
						return nil
					}
					return err
				}
				if d.IsDir() || d.Name() != "xl.meta" {
					return nil
				}
				rel, err := filepath.Rel(root, filepath.Dir(path))
				if err != nil {
					return err
				}
				mu.Lock()
				seen[filepath.ToSlash(rel)] |= 1 << (i / a.setSize)
				mu.Unlock()
				return nil
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("migrate: list %s on %s: %w", bucket, a.paths[i], err)
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	a.mu.Lock()
	a.seenIn = seen
	a.mu.Unlock()
	return out, nil
}

// objectKey is the S3 key of MinIO's key path.
func objectKey(rel string) string {
	if k, ok := strings.CutSuffix(rel, dirSuffix); ok {
		return k + "/"
	}
	return rel
}

// driveVersion is one drive's copy of one version.
type driveVersion struct {
	v    *minioformat.Version
	meta *minioformat.Meta
}

// candidate is one version as the drives report it.
type candidate struct {
	ver    *minioformat.Version // the first agreeing copy
	copies map[int]driveVersion // by drive position
}

// versionIdentity is what drives must agree on to count as holding the
// same version.
func versionIdentity(v *minioformat.Version) string {
	id := fmt.Sprintf("%x/%d/%d", v.Header.VersionID, v.Kind, v.Header.ModTime)
	if o := v.Object; o != nil {
		id += fmt.Sprintf("/%s/%d/%d+%d/%d/%x/%v", o.ETag(), o.Size, o.DataBlocks, o.ParityBlocks, o.BlockSize, o.DataDir, o.Distribution)
	}
	return id
}

// adoptKey decides the key's versions by quorum, gives each drive its
// shards (links, shard files) and returns each drive's index batch (nil
// for a refused key, or in a dry run).
func (a *adopter) adoptKey(ctx context.Context, bucket, rel string) ([]*drive.Batch, error) {
	key := objectKey(rel)
	n := a.setSize
	set := a.setOf(bucket, rel)
	a.mu.Lock()
	seen := a.seenIn[rel]
	a.mu.Unlock()
	if other := seen &^ (1 << set); other != 0 {
		a.refuse(bucket, key, fmt.Sprintf("MinIO's files of it are on drives of set(s) %s, but MinIO places it in set %d", setList(other, a.sets), set+1))
		return nil, nil
	}
	off := set * n // the set's first drive in a.paths
	kept, reason := a.decideKey(bucket, rel, set)
	if reason != "" {
		a.refuse(bucket, key, reason)
		return nil, nil
	}
	// A key whose versions MinIO spread over several pools (it puts a
	// new version of a key in a pool picked by free space) is adopted
	// into one of them, with the others' versions copied (pools.go).
	var from []*adopter // per kept version: the pool it is copied from; nil: this one
	if a.poolSet != nil {
		var move bool
		kept, from, move, reason = a.mergePools(bucket, rel, kept)
		if reason != "" {
			a.refuse(bucket, key, reason)
			return nil, nil
		}
		if move {
			// Adopted by the pool holding its newest version; this pool's
			// drives only journal MinIO's files of it, for --finish.
			a.add(func(r *Report) { r.Moved++ })
			if a.opts.DryRun {
				return nil, nil
			}
			// The entry is a moved one (movedKey): --finish removes
			// MinIO's files it names only where the owning pool's
			// journal says that pool adopted the key (finishMoved), so
			// a refusal the owner makes while copying (decided from the
			// data, after this entry is written) leaves them.
			batches := make([]*drive.Batch, a.n())
			for p := 0; p < n; p++ {
				if a.isLocal(off + p) {
					b := &drive.Batch{}
					b.Put(drive.TableSystem, movedKey(bucket, key), []byte(rel))
					b.Delete(drive.TableSystem, journalKey(bucket, key)) // an earlier release's entry
					batches[off+p] = b
				}
			}
			return batches, nil
		}
	}
	if len(kept) == 0 {
		return nil, nil
	}
	base := make([]*meta.Object, len(kept))
	for i, c := range kept {
		conv := a
		if from != nil && from[i] != nil && c.ver.Object != nil {
			conv = from[i] // its geometry is that pool's until copied
		}
		m, err := conv.convert(bucket, key, c.ver)
		if err != nil {
			a.refuse(bucket, key, fmt.Sprintf("version %s: %v", c.ver.ID(), err))
			return nil, nil
		}
		base[i] = m
	}
	// Compressed versions are adopted by copy (minio_copy.go), their
	// shards read from the set's drives and written to them.
	copies := make([]*copiedVersion, len(kept))
	for i, c := range kept {
		if from != nil && from[i] != nil {
			cp, err := a.copyFromPool(from[i], set, bucket, rel, c, base[i])
			if errors.Is(err, errNotCopyable) {
				a.refuse(bucket, key, fmt.Sprintf("version %s from pool %d: %v", c.ver.ID(), from[i].pool+1, err))
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			copies[i], base[i] = cp, cp.m
			a.add(func(r *Report) { r.PoolCopied++ })
			continue
		}
		if o := c.ver.Object; o == nil || !o.Compressed() && !o.Encrypted() {
			continue
		}
		if a.cl != nil && c.ver.Object.Encrypted() {
			a.refuse(bucket, key, fmt.Sprintf("version %s: encrypted by MinIO: adopting it by copy is not supported yet for a node's share of a cluster (its shards are on every node)", c.ver.ID()))
			return nil, nil
		}
		if a.cl != nil {
			// Every node decides this alike: the copy would need the
			// shards of every node's drives.
			a.refuse(bucket, key, fmt.Sprintf("version %s: compressed by MinIO: adopting it by copy is not supported yet for a node's share of a cluster (its shards are on every node)", c.ver.ID()))
			return nil, nil
		}
		cp, err := a.copyVersion(set, bucket, rel, c, base[i])
		if errors.Is(err, errNotCopyable) {
			a.refuse(bucket, key, fmt.Sprintf("version %s: %v", c.ver.ID(), err))
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		copies[i], base[i] = cp, cp.m
	}
	// Per drive of the set: the versions it holds, with its shard of
	// each; the drives' batches are applied together (batches has one
	// per drive of the deployment, nil outside the set).
	batches := make([]*drive.Batch, a.n())
	for p := 0; p < n; p++ {
		if !a.isLocal(off + p) {
			continue // another node's drive: that node writes its records
		}
		var mine []*meta.Object
		for i, c := range kept {
			if copies[i] != nil {
				mine = append(mine, copies[i].forDrive(p))
				continue
			}
			dv, ok := c.copies[p]
			if !ok {
				continue
			}
			m := *base[i]
			m.Erasure.Distribution = append([]int(nil), base[i].Erasure.Distribution...)
			if o := dv.v.Object; o != nil {
				m.Erasure.Index = o.Index
				held, err := a.takeShards(off+p, bucket, rel, &m, dv)
				if err != nil {
					return nil, err
				}
				if !held {
					continue // its data is missing here: heal restores it
				}
			}
			mine = append(mine, &m)
		}
		if a.opts.DryRun || len(mine) == 0 {
			continue
		}
		b := &drive.Batch{}
		engine.ImportBatch(b, bucket, key, mine)
		b.Put(drive.TableSystem, journalKey(bucket, key), []byte(rel))
		batches[off+p] = b
	}
	a.mu.Lock()
	a.rep.Keys++
	a.rep.Versions += len(kept)
	for _, m := range base {
		a.rep.Bytes += m.Size
	}
	a.progressLocked()
	a.mu.Unlock()
	return batches, nil
}

// decideKey decides the versions of bucket/rel that this pool's drives
// of set hold, by quorum, newest first; a reason refuses the key.
func (a *adopter) decideKey(bucket, rel string, set int) ([]*candidate, string) {
	n := a.setSize
	metas := make([]*minioformat.Meta, n)
	for i, p := range a.setPaths(set) {
		raw, err := a.readFile(filepath.Join(p, bucket, filepath.FromSlash(rel), "xl.meta"))
		if err != nil {
			continue // missing here: the other drives decide
		}
		m, err := minioformat.Decode(raw)
		if err != nil {
			if errors.Is(err, minioformat.ErrUnsupported) {
				return nil, fmt.Sprintf("xl.meta on %s: %v", p, err)
			}
			continue // a damaged copy counts as missing
		}
		metas[i] = m
	}
	var order []string
	cands := map[string]*candidate{}
	for i, m := range metas {
		if m == nil {
			continue
		}
		for vi := range m.Versions {
			v := &m.Versions[vi]
			id := versionIdentity(v)
			c := cands[id]
			if c == nil {
				c = &candidate{ver: v, copies: map[int]driveVersion{}}
				cands[id] = c
				order = append(order, id)
			}
			if o := v.Object; o != nil && (i >= len(o.Distribution) || int(o.Distribution[i]) != o.Index) {
				continue // the copy does not hold the shard its position says
			}
			c.copies[i] = driveVersion{v: v, meta: m}
		}
	}
	var kept []*candidate
	for _, id := range order {
		c := cands[id]
		need := n/2 + 1
		if o := c.ver.Object; o != nil {
			need = o.DataBlocks
		}
		if len(c.copies) < need {
			return nil, fmt.Sprintf("version %s (%s) on %d drives, %d needed", c.ver.ID(), c.ver.Kind, len(c.copies), need)
		}
		if reason := refusal(c.ver); reason != "" {
			return nil, fmt.Sprintf("version %s: %s", c.ver.ID(), reason)
		}
		kept = append(kept, c)
	}
	// Newest first, as MinIO and shardstore keep them; equal times keep
	// the drives' order.
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].ver.Header.ModTime > kept[j].ver.Header.ModTime })
	seenIDs := map[[16]byte]bool{}
	for _, c := range kept {
		if seenIDs[c.ver.Header.VersionID] {
			return nil, fmt.Sprintf("version %s held in two forms by the drives", c.ver.ID())
		}
		seenIDs[c.ver.Header.VersionID] = true
	}
	return kept, ""
}

// journalPrefix keys the adoption's journal in each drive's system
// table: one entry per key the drive got records of, naming MinIO's
// directory of it, so that --finish removes MinIO's names of what was
// adopted and of nothing else (not of a refused key that a client wrote
// through shardstore since).
const journalPrefix = "migrate/minio/adopted/"

func journalKey(bucket, key string) string { return journalPrefix + bucket + "/" + key }

// movedPrefix keys the journal entries of a pool whose MinIO files of a
// key hold versions another pool adopts by copy (a key split over
// pools, pools.go): the same form as journalPrefix's, but --finish
// removes what one names only where a journalPrefix entry of the key
// says the owning pool adopted it (finishMoved).
const movedPrefix = "migrate/minio/moved/"

func movedKey(bucket, key string) string { return movedPrefix + bucket + "/" + key }

// step counts a write and, under crashAtEnv, dies at the chosen one.
func (a *adopter) step() {
	at, _ := strconv.Atoi(os.Getenv(crashAtEnv))
	if at <= 0 {
		return
	}
	a.mu.Lock()
	a.steps++
	n := a.steps
	a.mu.Unlock()
	if n == at {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
}

// refusal says why a version cannot be adopted, or "".
func refusal(v *minioformat.Version) string {
	switch v.Kind {
	case minioformat.KindLegacy:
		return "legacy (pre-2020) version"
	case minioformat.KindDeleteMarker:
		if v.Header.Flags&minioformat.FlagFreeVersion != 0 {
			return "tiering free version"
		}
		if dm := v.DeleteMarker; dm != nil {
			if len(dm.Unknown) > 0 {
				return "unknown fields " + strings.Join(dm.Unknown, ", ")
			}
			for k := range dm.MetaSys {
				return "delete marker internal metadata " + k + " not understood"
			}
		}
		return ""
	case minioformat.KindObject:
	default:
		return "unknown version kind " + v.Kind.String()
	}
	o := v.Object
	if o == nil {
		return "object version without its fields"
	}
	switch {
	case len(v.Unknown) > 0 || len(o.Unknown) > 0:
		return "unknown fields " + strings.Join(append(append([]string{}, v.Unknown...), o.Unknown...), ", ")
	case o.Encrypted():
		return sseRefusal(o) // adopted by copy with the keys given (minio_sse.go)
	case o.Compressed() && copyRefusal(o) != "":
		return copyRefusal(o)
	case o.Transitioned():
		return "transitioned to a remote tier"
	case o.ErasureAlgorithm != 1 || o.ChecksumAlgo != 1:
		return fmt.Sprintf("erasure algorithm %d, checksum %d", o.ErasureAlgorithm, o.ChecksumAlgo)
	}
	for k, val := range o.MetaSys {
		switch strings.ToLower(k) {
		case minioformat.MetaInlineData, minioformat.MetaChecksums:
		case minioformat.MetaCompression:
		case minioformat.MetaActualSize:
			if !o.Compressed() && string(val) != strconv.FormatInt(o.Size, 10) {
				return "actual size differs from the stored size"
			}
		default:
			return "internal metadata " + k + " not understood"
		}
	}
	for k := range o.MetaUser {
		lk := strings.ToLower(k)
		if knownUserMeta[lk] || strings.HasPrefix(lk, "x-amz-meta-") {
			continue
		}
		return "metadata " + k + " not understood"
	}
	return ""
}

var knownUserMeta = map[string]bool{
	"etag": true, "content-type": true, "content-encoding": true, "content-disposition": true,
	"content-language": true, "cache-control": true, "expires": true, "x-amz-storage-class": true,
	"x-amz-tagging": true, "x-amz-object-lock-mode": true, "x-amz-object-lock-retain-until-date": true,
	"x-amz-object-lock-legal-hold": true,
}

// storedHeaders maps MinIO's metadata names to the header names
// shardstore's S3 layer stores.
var storedHeaders = map[string]string{
	"content-encoding": "Content-Encoding", "content-disposition": "Content-Disposition",
	"content-language": "Content-Language", "cache-control": "Cache-Control", "expires": "Expires",
}

// convert builds shardstore's record of v, common to every drive (the
// shard index and inline data are set per drive).
func (a *adopter) convert(bucket, key string, v *minioformat.Version) (*meta.Object, error) {
	n := a.setSize
	vid := ""
	if v.ID() != "null" {
		vid = v.ID()
	}
	if v.Kind == minioformat.KindDeleteMarker {
		parity := defaultParity(n)
		dist := make([]int, n)
		for i := range dist {
			dist[i] = i + 1
		}
		return &meta.Object{ModTime: v.Header.ModTime, VersionID: vid, Flags: meta.FlagDeleteMarker,
			Erasure: meta.Erasure{DataShards: n - parity, ParityShards: parity, BlockSize: 1 << 20,
				Distribution: dist, Bitrot: uint8(bitrot.Default)}}, nil
	}
	o := v.Object
	if o.DataBlocks+o.ParityBlocks != n || len(o.Distribution) != n {
		return nil, fmt.Errorf("erasure %d+%d over %d positions on a set of %d drives", o.DataBlocks, o.ParityBlocks, len(o.Distribution), n)
	}
	m := &meta.Object{Size: o.Size, ModTime: o.ModTime, ETag: o.ETag(), StorageClass: "STANDARD",
		Owner: a.opts.Owner, ACL: "private", VersionID: vid, Inline: o.Inline()}
	if o.ModTime == 0 {
		m.ModTime = v.Header.ModTime
	}
	for k, val := range o.MetaUser {
		lk := strings.ToLower(k)
		switch {
		case lk == "content-type":
			m.ContentType = val
		case storedHeaders[lk] != "":
			if m.Headers == nil {
				m.Headers = map[string]string{}
			}
			m.Headers[storedHeaders[lk]] = val
		case lk == "x-amz-storage-class":
			m.StorageClass = val
		case strings.HasPrefix(lk, "x-amz-meta-"):
			if m.UserMeta == nil {
				m.UserMeta = map[string]string{}
			}
			m.UserMeta[lk[len("x-amz-meta-"):]] = val
		case lk == "x-amz-tagging":
			q, err := url.ParseQuery(val)
			if err != nil {
				return nil, fmt.Errorf("tags %q: %w", val, err)
			}
			if len(q) > 0 {
				m.Tags = map[string]string{}
				for tk, tv := range q {
					m.Tags[tk] = tv[0]
				}
			}
		case lk == "x-amz-object-lock-mode":
			m.LockMode = strings.ToUpper(val)
		case lk == "x-amz-object-lock-retain-until-date":
			t, err := time.Parse(time.RFC3339Nano, val)
			if err != nil {
				return nil, fmt.Errorf("retention date %q: %w", val, err)
			}
			m.RetainUntil = t.UnixNano()
		case lk == "x-amz-object-lock-legal-hold":
			m.LegalHold = strings.ToUpper(val)
		}
	}
	var cs []minioformat.Checksum
	var err error
	if !o.Encrypted() { // sealed with the object key: read by the copy (minio_sse.go)
		if cs, err = o.Checksums(); err != nil {
			return nil, err
		}
	}
	if len(cs) > 1 {
		return nil, fmt.Errorf("%d checksums on one version", len(cs))
	}
	if len(cs) == 1 {
		m.ChecksumAlgo, m.ChecksumVal, m.ChecksumType = cs[0].Algorithm, cs[0].String(), cs[0].Type()
	}
	m.DataID = uuid.UUID(o.DataDir).String()
	if o.DataDir == ([16]byte{}) {
		m.DataID = uuid.NewSHA1(uuid.NameSpaceURL, []byte("minio:"+a.format.DeploymentID+"/"+bucket+"/"+key+"/"+v.ID())).String()
	}
	for _, p := range o.Parts {
		m.Parts = append(m.Parts, meta.Part{Number: p.Number, Size: p.Size, ETag: p.ETag})
	}
	m.Erasure = meta.Erasure{DataShards: o.DataBlocks, ParityShards: o.ParityBlocks, BlockSize: int(o.BlockSize),
		Bitrot: uint8(bitrot.HighwayHash256MinIO)}
	for _, s := range o.Distribution {
		m.Erasure.Distribution = append(m.Erasure.Distribution, int(s))
	}
	return m, nil
}

// takeShards gives drive p its shard of version m: the inline shard
// (into m.InlineData, or written out as a shard file when it is larger
// than shardstore inlines), or MinIO's part files hard-linked into the
// data area. It reports false when the drive lacks the data.
func (a *adopter) takeShards(p int, bucket, rel string, m *meta.Object, dv driveVersion) (bool, error) {
	o := dv.v.Object
	if m.Inline {
		data := dv.meta.InlineData(dv.v.ID())
		if data == nil && o.Size > 0 {
			return false, nil
		}
		if want := o.ShardFileSize(o.Size); int64(len(data)) != want {
			return false, nil
		}
		if int64(len(data)) <= a.opts.InlineLimit || len(o.Parts) != 1 {
			m.InlineData = append([]byte{}, data...)
			if m.InlineData == nil {
				m.InlineData = []byte{}
			}
			return true, nil
		}
		m.Inline = false
		a.add(func(r *Report) { r.Written += int64(len(data)) })
		if a.opts.DryRun {
			return true, nil
		}
		a.step()
		dst := drive.ShardPath(a.paths[p], drive.ShardRef{ID: m.DataID, Part: o.Parts[0].Number})
		if err := writeFileSync(dst, data, !a.opts.NoSync); err != nil {
			return false, fmt.Errorf("migrate: %s/%s: %w", bucket, rel, err)
		}
		return true, nil
	}
	for _, part := range o.Parts {
		src := filepath.Join(a.paths[p], bucket, filepath.FromSlash(rel), uuid.UUID(o.DataDir).String(), "part."+strconv.Itoa(part.Number))
		fi, err := os.Stat(src)
		if err != nil || fi.Size() != o.ShardFileSize(part.Size) {
			return false, nil
		}
		a.add(func(r *Report) { r.Linked++; r.ShardBytes += fi.Size() })
		if a.opts.DryRun {
			continue
		}
		a.step()
		dst := drive.ShardPath(a.paths[p], drive.ShardRef{ID: m.DataID, Part: part.Number})
		if err := linkShard(src, dst, !a.opts.NoSync); err != nil {
			return false, fmt.Errorf("migrate: %s/%s: %w", bucket, rel, err)
		}
	}
	return true, nil
}

// linkShard gives src the second name dst (durably); a dst that already
// is src (a resumed run) is kept, another file at dst is replaced.
func linkShard(src, dst string, sync bool) error {
	if fi, err := os.Stat(dst); err == nil {
		si, err := os.Stat(src)
		if err == nil && os.SameFile(fi, si) {
			return nil
		}
		if err := os.Remove(dst); err != nil {
			return err
		}
	}
	if err := os.Link(src, dst); err != nil {
		return err
	}
	if sync {
		return durable.SyncDir(filepath.Dir(dst))
	}
	return nil
}

func writeFileSync(path string, data []byte, sync bool) error {
	tmp := path + ".migrate-tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if sync {
		return durable.SyncDir(filepath.Dir(path))
	}
	return nil
}

// progressLocked prints a progress line at most once a second.
func (a *adopter) progressLocked() {
	now := time.Now()
	if now.Sub(a.last) < time.Second {
		return
	}
	a.last = now
	a.progressLine(now)
}

func (a *adopter) printReport() {
	r := &a.rep
	verb := "adopted"
	if a.opts.DryRun {
		verb = "would adopt"
	}
	fmt.Fprintf(a.opts.Out, "%s %d buckets, %d keys, %d versions, %d bytes of objects\n", verb, r.Buckets, r.Keys, r.Versions, r.Bytes)
	fmt.Fprintf(a.opts.Out, "shard data: %d part files (%d bytes) taken over by hard link, not copied; %d bytes of inline shards written as shard files\n",
		r.Linked, r.ShardBytes, r.Written)
	fmt.Fprintf(a.opts.Out, "refused: %d\n", len(r.Refused))
	for _, f := range r.Refused {
		fmt.Fprintf(a.opts.Out, "  refused %s/%s: %s\n", f.Bucket, f.Key, f.Reason)
	}
	a.printStats()
	fmt.Fprintf(a.opts.Out, "took %s (%.0f objects/s)\n", r.Elapsed.Round(time.Millisecond), r.ObjectsPerSecond())
	if !a.opts.DryRun {
		fmt.Fprintln(a.opts.Out, "MinIO's files are still in place; once `shardstore server` serves the data as expected, run again with --finish to remove MinIO's names of the adopted objects")
	}
}
