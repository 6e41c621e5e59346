package background

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// HealRequest selects what a heal walk visits.
type HealRequest struct {
	Bucket string // "" = every bucket
	Prefix string
	Deep   bool // verify every chunk checksum
}

// HealProgress is reported after each object a walk visits.
type HealProgress struct {
	Done, Total int
	Result      HealResult
	Err         string
}

// HealReport sums up a heal walk.
type HealReport struct {
	Deep            bool          `json:"deep"`
	Buckets         int           `json:"buckets"`
	Objects         int           `json:"objects"`          // objects visited
	Damaged         int           `json:"damaged"`          // objects that had something to repair
	ShardsRewritten int           `json:"shards_rewritten"` // drive positions rewritten
	Dangling        int           `json:"dangling"`         // unreadable remnants removed
	Recovered       int           `json:"recovered"`        // versions rebuilt without metadata quorum
	Orphans         int           `json:"orphans"`          // unreferenced shard files and remnant versions removed
	Unreachable     int           `json:"unreachable"`      // objects with drives that did not answer
	Failed          int           `json:"failed"`           // objects that could not be healed
	Errors          []string      `json:"errors"`
	Duration        time.Duration `json:"duration_ns"`
	// Usage is what the walk found in each bucket it visited: current
	// objects (delete markers not counted) and their bytes. A bucket
	// whose walk failed part way is left out.
	Usage map[string]BucketUsage `json:"usage,omitempty"`
}

func (r *HealReport) add(res HealResult, err error) {
	r.Objects++
	if res.Damaged() {
		r.Damaged++
	}
	r.ShardsRewritten += res.Healed
	if res.Dangling {
		r.Dangling++
	}
	if res.Recovered {
		r.Recovered++
	}
	r.Orphans += res.Orphans
	if res.Offline > 0 {
		r.Unreachable++
	}
	if err != nil {
		r.Failed++
		if len(r.Errors) < 20 {
			r.Errors = append(r.Errors, err.Error())
		}
	}
}

// scanLoop runs scanner cycles until the jobs stop, every
// DeepScanEvery-th one deep, each followed by the engine's after-cycle
// work (the lifecycle pass).
func (j *Jobs) scanLoop() {
	defer j.wg.Done()
	ctx := j.ctx
	for cycle := 1; ; cycle++ {
		if !j.sleep(j.cfg.ScanInterval) {
			return
		}
		if !j.eng.ScansHere() {
			// Another node scans; show the usage it saved.
			j.mu.Lock()
			j.scan.elsewhere = true
			j.mu.Unlock()
			j.loadUsage(ctx)
			cycle--
			continue
		}
		deep := cycle%j.cfg.DeepScanEvery == 0
		j.mu.Lock()
		j.scan.running, j.scan.started, j.scan.done, j.scan.total = true, j.clock.Now(), 0, 0
		j.scan.elsewhere = false
		j.mu.Unlock()
		rep, err := j.walk(ctx, HealRequest{Deep: deep}, j.cfg.ScanThrottle, func(p HealProgress) {
			j.mu.Lock()
			j.scan.done, j.scan.total = p.Done, p.Total
			j.mu.Unlock()
		})
		j.mu.Lock()
		j.scan.running = false
		j.mu.Unlock()
		if err != nil && ctx.Err() != nil {
			return
		}
		j.mu.Lock()
		j.scan.cycles++
		j.scan.lastEnd = j.clock.Now()
		j.scan.last = rep
		j.savedUsage = nil
		end := j.scan.lastEnd
		j.mu.Unlock()
		j.saveUsage(ctx, end, rep.Usage)
		if rep.Damaged > 0 {
			j.log.Warn("scanner repaired objects", "deep", deep, "scanned", rep.Objects, "damaged", rep.Damaged,
				"shardsRewritten", rep.ShardsRewritten, "failed", rep.Failed)
		}
		// Bucket lifecycle rules run once per cycle, rate-limited like
		// the scan.
		j.eng.AfterScanCycle(ctx, j.throttle(ctx, j.cfg.ScanThrottle))
		if ctx.Err() != nil {
			return
		}
	}
}

// recoverySweep heals every key after an unclean stop: a killed process
// may have left an overwrite split between two versions (no metadata
// quorum) or remnants of a write that was never acknowledged, and
// nothing names those keys, so they are swept now instead of at the
// next scanner cycle. It rests a quarter as long as the scanner.
func (j *Jobs) recoverySweep() {
	defer j.wg.Done()
	ctx := j.ctx
	rep, err := j.walk(ctx, HealRequest{}, j.cfg.ScanThrottle/4, nil)
	if err == nil && rep.Failed == 0 {
		j.eng.RecoveryDone()
	}
	j.log.Warn("recovery sweep after unclean shutdown done", "objects", rep.Objects, "damaged", rep.Damaged,
		"recovered", rep.Recovered, "dangling", rep.Dangling, "failed", rep.Failed, "err", err)
}

// Walk checks (and repairs) every object selected by req, reporting
// progress after each one, without resting: an operator's heal. It
// first repairs bucket records on every drive, then walks the keys in
// order; a walk of everything ends with the orphan sweep.
func (j *Jobs) Walk(ctx context.Context, req HealRequest, progress func(HealProgress)) (HealReport, error) {
	return j.walk(ctx, req, 0, progress)
}

// walk is Walk resting factor times as long as each object took (see
// throttle).
func (j *Jobs) walk(ctx context.Context, req HealRequest, factor float64, progress func(HealProgress)) (HealReport, error) {
	start := j.clock.Now()
	rep := HealReport{Deep: req.Deep}
	var buckets []string
	if req.Bucket != "" {
		if err := j.eng.CheckBucket(ctx, req.Bucket); err != nil {
			return rep, err
		}
		buckets = []string{req.Bucket}
	} else {
		buckets, _ = j.eng.Buckets(ctx)
	}
	j.eng.HealBucketRecords(ctx, j.allDrives())
	rep.Buckets = len(buckets)
	total := 0
	if progress != nil {
		for _, bk := range buckets {
			if err := j.walkKeys(ctx, bk, req.Prefix, "", func(string) error { total++; return nil }); err != nil {
				return rep, err
			}
		}
	}
	rest := j.throttle(ctx, factor)
	rep.Usage = make(map[string]BucketUsage, len(buckets))
	for _, bk := range buckets {
		var usage BucketUsage
		err := j.walkKeys(ctx, bk, req.Prefix, "", func(key string) error {
			t0 := j.clock.Now()
			res, err := j.eng.HealObject(ctx, bk, key, HealOptions{Deep: req.Deep})
			rep.add(res, err)
			if res.Live {
				usage.Objects++
				usage.Bytes += res.LiveSize
			}
			if progress != nil {
				p := HealProgress{Done: rep.Objects, Total: max(total, rep.Objects), Result: res}
				if err != nil {
					p.Err = err.Error()
				}
				progress(p)
			}
			return rest(j.since(t0))
		})
		if err != nil {
			rep.Duration = j.since(start)
			return rep, err
		}
		rep.Usage[bk] = usage
	}
	if req.Bucket == "" && req.Prefix == "" {
		rep.Orphans += j.sweepOrphans(ctx)
		rep.Orphans += j.eng.SweepUploads(ctx, j.cfg.OrphanGrace)
	}
	rep.Duration = j.since(start)
	return rep, nil
}

// walkBatch is how many keys walkKeys asks the drives for at a time.
const walkBatch = 1000

// walkKeys calls fn for every key of bucket under prefix after after,
// in order, a batch at a time, as the drives hold them (Engine.Keys):
// healing must reach exactly the keys a listing cannot resolve, such as
// an overwrite left without metadata quorum or the remnants of an
// interrupted write.
func (j *Jobs) walkKeys(ctx context.Context, bucket, prefix, after string, fn func(key string) error) error {
	for {
		keys, more, err := j.eng.Keys(ctx, bucket, prefix, after, walkBatch)
		if err != nil {
			return fmt.Errorf("walk %s: %w", bucket, err)
		}
		for _, k := range keys {
			if err := fn(k); err != nil {
				return err
			}
			after = k
		}
		if !more {
			return nil
		}
	}
}

// sweepOrphans removes, on every drive at once, the shard files no index
// entry references: left by a crash between writing data and committing
// its record, or by a delete whose file removal failed. It returns how
// many files went.
func (j *Jobs) sweepOrphans(ctx context.Context) int {
	var mu sync.Mutex
	removed := 0
	eachDrive(j.allDrives(), func(i int, d drive.Drive) error {
		n, err := j.eng.SweepOrphans(ctx, d, j.cfg.OrphanGrace)
		if n > 0 {
			j.log.Info("scanner removed orphan shard files", "drive", d.String(), "files", n)
			mu.Lock()
			removed += n
			mu.Unlock()
		}
		return err
	})
	return removed
}
