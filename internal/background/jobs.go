package background

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// Engine is the engine side of the background jobs: what they ask of the
// object store. The engine implements it (engine/background.go) and
// keeps what needs its erasure sets, locks and quorum rules: healing one
// object, listing keys straight from the drives, telling an orphan shard
// file from one a reader still holds, formatting a replacement drive.
// The jobs decide when and how fast; the engine does the work on the data.
type Engine interface {
	// Sets returns the drives of every erasure set, in slot order.
	Sets() [][]drive.Drive
	// SetOf returns the index of the set bucket/key lives in.
	SetOf(bucket, key string) int
	// Owns reports whether this node looks after the drive in slot
	// (0-based over all drives): on a cluster only the node a drive is
	// attached to adopts and refills it.
	Owns(slot int) bool
	// CheckDrive reads the format of the drive in slot of set. A blank
	// drive there is formatted as that slot's replacement and marked for
	// refill (MarkRefillNeeded) first. It returns the drive's id, or an
	// error for a drive that is offline, could not be adopted, or holds
	// another slot or deployment (never refilled).
	CheckDrive(ctx context.Context, set, slot int) (driveID string, err error)
	// HoldsBuckets reports whether d holds any bucket record: a drive
	// without one while buckets exist is blank, a replacement to refill.
	HoldsBuckets(ctx context.Context, d drive.Drive) (bool, error)
	// ScansHere reports whether this node runs scanner cycles now; on a
	// cluster one node does (the consensus leader).
	ScansHere() bool
	// NodeRecord names a system record that belongs to this node (its
	// heal queue): on a cluster every node keeps its own on the shared
	// drives.
	NodeRecord(name string) string

	// Buckets lists the names of the buckets.
	Buckets(ctx context.Context) ([]string, error)
	// CheckBucket returns nil when bucket exists.
	CheckBucket(ctx context.Context, bucket string) error
	// Keys returns up to limit keys of bucket under prefix after after,
	// in order, as the drives hold them (not resolved by quorum: the heal
	// walk must reach the keys a listing cannot resolve); more is set
	// when there are further keys.
	Keys(ctx context.Context, bucket, prefix, after string, limit int) (keys []string, more bool, err error)
	// HealObject checks one object on every drive of its set and repairs
	// what is missing, stale or corrupt. An error that is
	// ErrNothingToHeal (errors.Is) means the object will never need
	// healing: its bucket is gone or its name is invalid.
	HealObject(ctx context.Context, bucket, key string, opts HealOptions) (HealResult, error)
	// HealBucketRecords gives each of drives every bucket record (and
	// config document) it lacks.
	HealBucketRecords(ctx context.Context, drives []drive.Drive)
	// SweepOrphans removes the shard files of d that no index entry
	// references and no reader holds, older than grace, and returns how
	// many went.
	SweepOrphans(ctx context.Context, d drive.Drive, grace time.Duration) (int, error)
	// SweepUploads removes the remnants of multipart uploads without
	// quorum older than grace, and returns how many went.
	SweepUploads(ctx context.Context, grace time.Duration) int
	// RecoveryDone is called when the recovery sweep after an unclean
	// start healed every key without failure.
	RecoveryDone()
	// AfterScanCycle runs what follows each scanner cycle on the node
	// that scans (the lifecycle pass), pacing it with rest.
	AfterScanCycle(ctx context.Context, rest func(took time.Duration) error)
}

var errNoDrive = errors.New("no drive in this slot")

// ErrNothingToHeal marks a HealObject error after which the heal queue
// drops the object instead of retrying it.
var ErrNothingToHeal = errors.New("nothing to heal")

// HealOptions select how thoroughly an object is checked.
type HealOptions struct {
	// Deep verifies every chunk checksum of every shard (bitrot); without
	// it only metadata and the presence of shard files are checked.
	Deep bool
}

// HealResult reports what healing one object found and did (the
// engine's HealObject fills it). The counts are drive positions of the
// object's set, as found before repair.
type HealResult struct {
	Bucket, Key string
	Size        int64
	// Missing: no metadata or shard file. Stale: an older version.
	// Corrupt: metadata or a shard chunk failed its checksum. Offline:
	// the drive did not answer, so it could not be checked or repaired.
	Missing, Stale, Corrupt, Offline int
	// Healed is how many drive positions were rewritten.
	Healed int
	// Dangling is set when fewer than read quorum drives held the object
	// (a write or delete interrupted before it was acknowledged) and the
	// remnants were removed: the object does not exist.
	Dangling bool
	// Recovered is set when no version had quorum metadata (an overwrite
	// interrupted mid-commit) and a version was rebuilt from its shard
	// data, which still had read quorum.
	Recovered bool
	// Orphans counts data directories no metadata referenced (left by an
	// interrupted overwrite or delete) that were removed.
	Orphans int
	// Versions counts the noncurrent versions checked (versioned buckets).
	Versions int
	// Live is set when the key's current version is an object (not a
	// delete marker, not removed as dangling); LiveSize is its size.
	// Size may be that of the last noncurrent version checked.
	Live     bool
	LiveSize int64
}

// Damaged reports whether the object had anything to repair.
func (r HealResult) Damaged() bool {
	return r.Missing+r.Stale+r.Corrupt > 0 || r.Dangling || r.Recovered
}

// Options are what Start needs besides the engine and the Config.
type Options struct {
	// Log receives the jobs' events; nil discards them.
	Log *slog.Logger
	// Unclean is set when the last run did not stop cleanly (killed or
	// crashed): a recovery sweep of every key starts at once.
	Unclean bool
}

// Jobs are one engine's background jobs. The engine calls QueueHeal
// from its data path, reports Status, Queued, RefillsDone and
// BucketUsage, runs an operator's Walk, and Stops them on Close.
type Jobs struct {
	eng   Engine
	cfg   Config
	clock Clock
	log   *slog.Logger
	queue *healQueue
	// ctx is the jobs' context, cancelled by Stop before stop closes:
	// a job that finds stop closed also finds ctx done, and so never
	// takes a cycle cut short for a finished one.
	ctx    context.Context
	cancel context.CancelFunc
	stop   chan struct{}
	wg     sync.WaitGroup

	mu sync.Mutex
	// refilling holds the progress of the refills running now.
	refilling map[drive.Drive]*RefillState
	scan      scanState
	// savedUsage is the bucket usage an earlier run or another node saved
	// on the drives, published until this node's next cycle ends.
	savedUsage   *savedUsage
	queueHealed  int
	queueRetries int
}

// scanState is the scanner's progress, under Jobs.mu.
type scanState struct {
	cycles  int
	lastEnd time.Time
	last    HealReport
	// running, started, done and total are the progress of the cycle
	// under way.
	running     bool
	started     time.Time
	done, total int
	// elsewhere is set while another cluster node runs the scanner.
	elsewhere bool
}

// Start loads the persisted heal queue and starts the jobs: the queue's
// loop, the drive monitor, the scanner and, after an unclean stop, the
// recovery sweep. With cfg.Disabled nothing runs, but the queue still
// collects (and persists on Stop) and Walk still works.
func Start(eng Engine, cfg Config, opts Options) *Jobs {
	cfg = cfg.withDefaults()
	j := &Jobs{eng: eng, cfg: cfg, clock: cfg.Clock, log: opts.Log, stop: make(chan struct{}),
		refilling: map[drive.Drive]*RefillState{}}
	j.ctx, j.cancel = context.WithCancel(context.Background())
	if j.log == nil {
		j.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	j.queue = newHealQueue(j.clock, cfg.QueueDelay)
	j.loadQueue(context.Background())
	if cfg.Disabled {
		return j
	}
	j.wg.Add(3)
	go j.queueLoop()
	go j.monitorLoop()
	go func() {
		defer j.wg.Done()
		ctx := j.ctx
		j.loadUsage(ctx)
	}()
	if opts.Unclean {
		j.wg.Add(1)
		go j.recoverySweep()
	}
	if cfg.ScanInterval > 0 {
		j.wg.Add(1)
		go j.scanLoop()
	}
	return j
}

// Stop stops every job, waits for them and persists the queue a last
// time. Later calls do nothing.
func (j *Jobs) Stop() {
	select {
	case <-j.stop:
		return
	default:
	}
	j.cancel()
	close(j.stop)
	j.wg.Wait()
	j.persistQueue(context.Background())
}

// allDrives is every drive of every set, in slot order.
func (j *Jobs) allDrives() []drive.Drive {
	var out []drive.Drive
	for _, set := range j.eng.Sets() {
		out = append(out, set...)
	}
	return out
}

// eachDrive runs fn on every drive in parallel and returns the errors by
// position.
func eachDrive(drives []drive.Drive, fn func(i int, d drive.Drive) error) []error {
	errs := make([]error, len(drives))
	var wg sync.WaitGroup
	for i, d := range drives {
		if d == nil {
			errs[i] = errNoDrive
			continue
		}
		wg.Go(func() { errs[i] = fn(i, d) })
	}
	wg.Wait()
	return errs
}

// getRecord, putRecord and the batches of the queue keep the jobs' state
// in the drives' system table.
func getRecord(ctx context.Context, d drive.Drive, name string) ([]byte, error) {
	return d.Get(ctx, drive.TableSystem, name)
}

func putRecord(ctx context.Context, d drive.Drive, name string, v []byte) error {
	b := &drive.Batch{}
	b.Put(drive.TableSystem, name, v)
	return d.Apply(ctx, b)
}
