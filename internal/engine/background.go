package engine

// The engine's side of its background jobs (internal/background): the
// heal queue's loop, the scanner and the lifecycle pass after it, the
// drive monitor and refills, the recovery sweep. They run in their own
// package, over two interfaces: backgroundJobs is what the engine calls
// (queue a key its data path found degraded, report, stop), and
// jobsSide implements background.Engine, what the jobs call back (list
// keys straight from the drives, heal one object, sweep orphans, adopt a
// blank drive). The types the jobs report keep their engine names here,
// so callers of the engine need not know where they live.

import (
	"context"
	"errors"
	"time"

	"github.com/shardstore/shardstore/internal/background"
	"github.com/shardstore/shardstore/internal/drive"
)

// The background jobs' types, under the names the engine's API has
// always used.
type (
	HealConfig   = background.Config
	HealOptions  = background.HealOptions
	HealResult   = background.HealResult
	HealRequest  = background.HealRequest
	HealProgress = background.HealProgress
	HealReport   = background.HealReport
	HealStatus   = background.Status
	DriveRefill  = background.DriveRefill
	BucketUsage  = background.BucketUsage
)

// OrphanGrace is how old an unreferenced shard file must be before the
// scanner removes it (background.OrphanGrace).
const OrphanGrace = background.OrphanGrace

// backgroundJobs is what the engine asks of its background jobs
// (*background.Jobs).
type backgroundJobs interface {
	// QueueHeal queues bucket/key for healing: a read rebuilt around a
	// bad shard, or a write missed a drive.
	QueueHeal(bucket, key string)
	Queued() int
	Walk(ctx context.Context, req HealRequest, progress func(HealProgress)) (HealReport, error)
	Status() HealStatus
	RefillsDone() bool
	BucketUsage() (map[string]BucketUsage, time.Time)
	// Stop ends every job and persists the heal queue.
	Stop()
}

// startJobs starts the background jobs; unclean says the last run was
// killed (a recovery sweep runs).
func (e *Engine) startJobs(cfg HealConfig, unclean bool) {
	e.jobs = background.Start(jobsSide{e}, cfg, background.Options{Log: e.log, Unclean: unclean})
}

// Heal checks (and repairs) every object selected by req, reporting
// progress after each one (`shardstore admin heal`). It first repairs
// bucket records and volumes on every drive, then walks the keys in
// order.
func (e *Engine) Heal(ctx context.Context, req HealRequest, progress func(HealProgress)) (HealReport, error) {
	return e.jobs.Walk(ctx, req, progress)
}

// HealStatus reports what background repair is doing.
func (e *Engine) HealStatus() HealStatus {
	st := e.jobs.Status()
	for _, d := range e.allDrives() {
		if reportsOffline(d) {
			st.DrivesOffline = append(st.DrivesOffline, d.String())
		}
	}
	return st
}

// PendingHeals reports how many objects wait for repair.
func (e *Engine) PendingHeals() int { return e.jobs.Queued() }

// RefillsDone reports whether no replaced drive is being refilled.
func (e *Engine) RefillsDone() bool { return e.jobs.RefillsDone() }

// BucketUsage returns each bucket's usage as the last finished scanner
// cycle found it, and when that cycle ended: before this run's first
// cycle, or on a cluster node that does not scan now, the newest one
// saved on the drives (by an earlier run or the scanning node); nil and
// the zero time when there is none.
func (e *Engine) BucketUsage() (map[string]BucketUsage, time.Time) { return e.jobs.BucketUsage() }

// jobsSide is the engine as its background jobs see it
// (background.Engine).
type jobsSide struct{ e *Engine }

func (s jobsSide) Sets() [][]drive.Drive {
	out := make([][]drive.Drive, len(s.e.sets))
	for i, set := range s.e.sets {
		out[i] = set.drives
	}
	return out
}

func (s jobsSide) SetOf(bucket, key string) int {
	set, err := s.e.readSet(context.Background(), bucket, key)
	if err != nil {
		return s.e.setIn(s.e.pools[0], bucket, key).index
	}
	return set.index
}

func (s jobsSide) Owns(slot int) bool { return s.e.cfg.Cluster.owns(slot) }

func (s jobsSide) CheckDrive(ctx context.Context, set, slot int) (string, error) {
	return s.e.checkDrive(ctx, set, slot)
}

func (s jobsSide) HoldsBuckets(ctx context.Context, d drive.Drive) (bool, error) {
	names, err := bucketNames(ctx, d)
	return len(names) > 0, err
}

func (s jobsSide) ScansHere() bool { return s.e.cfg.Cluster.scansHere() }

func (s jobsSide) NodeRecord(name string) string { return s.e.nodeFile(name) }

func (s jobsSide) Buckets(ctx context.Context) ([]string, error) {
	all, err := s.e.ListBuckets(ctx)
	names := make([]string, 0, len(all))
	for _, bi := range all {
		names = append(names, bi.Name)
	}
	return names, err
}

func (s jobsSide) CheckBucket(ctx context.Context, bucket string) error {
	_, err := s.e.BucketInfo(ctx, bucket)
	return err
}

func (s jobsSide) Keys(ctx context.Context, bucket, prefix, after string, limit int) ([]string, bool, error) {
	return s.e.rawKeys(ctx, bucket, prefix, after, limit)
}

func (s jobsSide) HealObject(ctx context.Context, bucket, key string, opts HealOptions) (HealResult, error) {
	res, err := s.e.HealObject(ctx, bucket, key, opts)
	if errors.Is(err, ErrBucketNotFound) || errors.Is(err, ErrInvalidObjectName) {
		err = nothingToHeal{err}
	}
	return res, err
}

func (s jobsSide) HealBucketRecords(ctx context.Context, drives []drive.Drive) {
	s.e.healBucketRecords(ctx, drives)
}

func (s jobsSide) SweepOrphans(ctx context.Context, d drive.Drive, grace time.Duration) (int, error) {
	return s.e.sweepOrphans(ctx, d, grace)
}

func (s jobsSide) SweepUploads(ctx context.Context, grace time.Duration) int {
	return s.e.sweepUploads(ctx, grace)
}

// RecoveryDone: every key was healed after an unclean start, so
// listings trust agreeing walked drives again.
func (s jobsSide) RecoveryDone() { s.e.listVerify.Store(false) }

func (s jobsSide) AfterScanCycle(ctx context.Context, rest func(took time.Duration) error) {
	if f := s.e.cfg.AfterScanCycle; f != nil {
		f(ctx, s.e, rest)
	}
}

// nothingToHeal marks an error of HealObject after which the heal queue
// drops the key (background.ErrNothingToHeal); its text is the cause's.
type nothingToHeal struct{ err error }

func (n nothingToHeal) Error() string        { return n.err.Error() }
func (n nothingToHeal) Unwrap() error        { return n.err }
func (n nothingToHeal) Is(target error) bool { return target == background.ErrNothingToHeal }
