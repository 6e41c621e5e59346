package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/shardstore/shardstore/internal/drive"
)

// HealConfig tunes the engine's background repair. The zero value is the
// production default: all of it on.
type HealConfig struct {
	// Disabled turns off all background work (queue, scanner, drive
	// monitor); HealObject and Heal still work when called.
	Disabled bool
	// QueueDelay is how long a queued object waits before it is healed;
	// 0 means 2s.
	QueueDelay time.Duration
	// ScanInterval is the pause between scanner cycles; 0 means 5
	// minutes, negative disables the scanner.
	ScanInterval time.Duration
	// DeepScanEvery makes every Nth scanner cycle verify every chunk
	// checksum (bitrot); 0 means 288 (daily at the default interval).
	DeepScanEvery int
	// ScanThrottle is how long the scanner and drive refills rest per
	// unit of time they work (1 = rest as long as the last object took),
	// so they use at most a fraction of one drive queue; 0 means 1.
	ScanThrottle float64
	// MonitorInterval is how often drives are checked for replacement
	// (blank drive in a known slot) and missed bucket records; 0 means 5s.
	MonitorInterval time.Duration
	// OrphanGrace is how old an unreferenced shard file must be before a
	// full scan removes it; 0 means OrphanGrace (1 hour).
	OrphanGrace time.Duration
}

func (c HealConfig) withDefaults() HealConfig {
	if c.QueueDelay <= 0 {
		c.QueueDelay = 2 * time.Second
	}
	if c.ScanInterval == 0 {
		c.ScanInterval = 5 * time.Minute
	}
	if c.DeepScanEvery <= 0 {
		c.DeepScanEvery = 288
	}
	if c.ScanThrottle <= 0 {
		c.ScanThrottle = 1
	}
	if c.MonitorInterval <= 0 {
		c.MonitorInterval = 5 * time.Second
	}
	return c
}

// runningFile is present on the drives while an engine runs; finding it
// at start means the last run did not close cleanly (killed or crashed).
const runningFile = "heal/running"

// markRunning records a start and reports whether the last run ended
// without Close.
func (e *Engine) markRunning(ctx context.Context) bool {
	unclean := false
	var mu sync.Mutex
	forEachDrive(e.allDrives(), func(i int, d drive.Drive) error {
		if _, err := sysGet(ctx, d, e.nodeFile(runningFile)); err == nil {
			mu.Lock()
			unclean = true
			mu.Unlock()
		}
		return sysPut(ctx, d, e.nodeFile(runningFile), []byte(time.Now().UTC().Format(time.RFC3339)))
	})
	return unclean
}

// markStopped records a clean stop.
func (e *Engine) markStopped(ctx context.Context) {
	forEachDrive(e.allDrives(), func(i int, d drive.Drive) error {
		return sysDelete(ctx, d, e.nodeFile(runningFile))
	})
}

// driveHealFile records a replaced drive's refill progress on that drive,
// so a restart resumes where it stopped.
const driveHealFile = "heal/drive.json"

type driveHealState struct {
	DriveID string    `json:"driveID"`
	Started time.Time `json:"started"`
	Bucket  string    `json:"bucket"` // bucket being refilled
	After   string    `json:"after"`  // last key done in Bucket
	Done    bool      `json:"done"`
	Objects int       `json:"objects"`
	Healed  int       `json:"healed"`
	Failed  int       `json:"failed"`
}

// background is the engine's repair machinery.
type background struct {
	cfg  HealConfig
	stop chan struct{}
	wg   sync.WaitGroup

	mu          sync.Mutex
	refilling   map[drive.Drive]*driveHealState
	scanCycles  int
	scanLastEnd time.Time
	scanStats   HealReport
	// savedUsage is the bucket usage an earlier run saved on the drives,
	// published until this run's first pass ends (usage.go).
	savedUsage *savedUsage
	// scanRunning, scanStarted, scanDone and scanTotal are the progress
	// of the scanner cycle under way.
	scanRunning bool
	// scanElsewhere is set while another cluster node runs the scanner.
	scanElsewhere       bool
	scanStarted         time.Time
	scanDone, scanTotal int
	mrfHealed           int
	mrfFailed           int
}

// startBackground launches the heal queue worker, the scanner and the
// drive monitor.
func (e *Engine) startBackground(cfg HealConfig) {
	b := &background{cfg: cfg.withDefaults(), stop: make(chan struct{}), refilling: map[drive.Drive]*driveHealState{}}
	e.bg = b
	e.heal.delay = b.cfg.QueueDelay
	if cfg.Disabled {
		return
	}
	b.wg.Add(3)
	go e.queueLoop()
	go e.monitorLoop()
	go func() {
		defer b.wg.Done()
		ctx, cancel := b.context()
		defer cancel()
		e.loadUsage(ctx)
	}()
	if e.uncleanStart {
		// A killed process may have left an overwrite split between two
		// versions (no metadata quorum) or remnants of a write that was
		// never acknowledged; nothing names those keys, so sweep them all
		// now instead of waiting for the next scanner cycle.
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			ctx, cancel := b.context()
			defer cancel()
			rep, err := e.heal0(ctx, HealRequest{}, b.cfg.ScanThrottle/4, nil)
			if err == nil && rep.Failed == 0 {
				e.listVerify.Store(false)
			}
			e.log.Warn("recovery sweep after unclean shutdown done", "objects", rep.Objects, "damaged", rep.Damaged,
				"recovered", rep.Recovered, "dangling", rep.Dangling, "failed", rep.Failed, "err", err)
		}()
	}
	if b.cfg.ScanInterval > 0 {
		b.wg.Add(1)
		go e.scanLoop()
	}
}

// stopBackground stops every loop and waits for them; the queue is
// persisted a last time.
func (e *Engine) stopBackground() {
	if e.bg == nil {
		return
	}
	select {
	case <-e.bg.stop:
		return
	default:
	}
	close(e.bg.stop)
	e.bg.wg.Wait()
	e.persistQueue(context.Background())
	e.markStopped(context.Background())
}

// sleep waits d or until stop; false means stop.
func (b *background) sleep(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-b.stop:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-b.stop:
		return false
	case <-t.C:
		return true
	}
}

// bgContext is cancelled when the background stops.
func (b *background) context() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-b.stop:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx, cancel
}

// queueLoop heals queued objects as they come due and persists the queue.
func (e *Engine) queueLoop() {
	b := e.bg
	defer b.wg.Done()
	ctx, cancel := b.context()
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	lastPersist := time.Time{}
	for {
		select {
		case <-b.stop:
			return
		case <-tick.C:
		case <-e.heal.wake:
		}
		for _, it := range e.heal.due(time.Now(), 64) {
			if ctx.Err() != nil {
				return
			}
			res, err := e.HealObject(ctx, it.bucket, it.key, HealOptions{})
			switch {
			case err == nil && res.Offline == 0,
				errors.Is(err, ErrBucketNotFound), errors.Is(err, ErrInvalidObjectName):
				e.heal.done(it)
				b.mu.Lock()
				b.mrfHealed++
				b.mu.Unlock()
			default:
				e.heal.retry(it)
				b.mu.Lock()
				b.mrfFailed++
				b.mu.Unlock()
			}
		}
		if time.Since(lastPersist) >= time.Second {
			e.persistQueue(ctx)
			lastPersist = time.Now()
		}
	}
}

// scanLoop runs scanner cycles forever, every DeepScanEvery-th one deep,
// each followed by Config.AfterScanCycle.
func (e *Engine) scanLoop() {
	b := e.bg
	defer b.wg.Done()
	ctx, cancel := b.context()
	defer cancel()
	for cycle := 1; ; cycle++ {
		if !b.sleep(b.cfg.ScanInterval) {
			return
		}
		if !e.cfg.Cluster.scansHere() {
			// Another node scans; show the usage it saved.
			b.mu.Lock()
			b.scanElsewhere = true
			b.mu.Unlock()
			e.loadUsage(ctx)
			cycle--
			continue
		}
		deep := cycle%b.cfg.DeepScanEvery == 0
		b.mu.Lock()
		b.scanRunning, b.scanStarted, b.scanDone, b.scanTotal = true, time.Now(), 0, 0
		b.scanElsewhere = false
		b.mu.Unlock()
		rep, err := e.heal0(ctx, HealRequest{Deep: deep}, b.cfg.ScanThrottle, func(p HealProgress) {
			b.mu.Lock()
			b.scanDone, b.scanTotal = p.Done, p.Total
			b.mu.Unlock()
		})
		b.mu.Lock()
		b.scanRunning = false
		b.mu.Unlock()
		if err != nil && ctx.Err() != nil {
			return
		}
		b.mu.Lock()
		b.scanCycles++
		b.scanLastEnd = time.Now()
		b.scanStats = rep
		b.savedUsage = nil
		b.mu.Unlock()
		e.saveUsage(ctx, b.scanLastEnd, rep.Usage)
		if rep.Damaged > 0 {
			e.log.Warn("scanner repaired objects", "deep", deep, "scanned", rep.Objects, "damaged", rep.Damaged,
				"shardsRewritten", rep.ShardsRewritten, "failed", rep.Failed)
		}
		// Bucket lifecycle rules run once per cycle, rate-limited like
		// the scan (Config.AfterScanCycle).
		if f := e.cfg.AfterScanCycle; f != nil {
			f(ctx, e, func(took time.Duration) error {
				if !b.sleep(time.Duration(float64(took) * b.cfg.ScanThrottle)) {
					return context.Canceled
				}
				return ctx.Err()
			})
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// HealRequest selects what Heal walks.
type HealRequest struct {
	Bucket string // "" = every bucket
	Prefix string
	Deep   bool // verify every chunk checksum
}

// HealProgress is reported after each object Heal visits.
type HealProgress struct {
	Done, Total int
	Result      HealResult
	Err         string
}

// HealReport sums up a Heal run.
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

// BucketUsage counts a bucket's current objects and their logical size
// (before erasure coding), as the scanner last found them.
type BucketUsage struct {
	Objects int64 `json:"objects"`
	Bytes   int64 `json:"bytes"`
}

// Heal checks (and repairs) every object selected by req, reporting
// progress after each one. It first repairs bucket records and volumes
// on every drive, then walks the keys in order.
func (e *Engine) Heal(ctx context.Context, req HealRequest, progress func(HealProgress)) (HealReport, error) {
	return e.heal0(ctx, req, 0, progress)
}

func (e *Engine) heal0(ctx context.Context, req HealRequest, throttle float64, progress func(HealProgress)) (HealReport, error) {
	start := time.Now()
	rep := HealReport{Deep: req.Deep}
	var buckets []string
	if req.Bucket != "" {
		if _, err := e.BucketInfo(ctx, req.Bucket); err != nil {
			return rep, err
		}
		buckets = []string{req.Bucket}
	} else {
		all, _ := e.ListBuckets(ctx)
		for _, bi := range all {
			buckets = append(buckets, bi.Name)
		}
	}
	e.healBucketRecords(ctx, e.allDrives())
	rep.Buckets = len(buckets)
	total := 0
	if progress != nil {
		for _, bk := range buckets {
			if err := e.walkKeys(ctx, bk, req.Prefix, "", func(string) error { total++; return nil }); err != nil {
				return rep, err
			}
		}
	}
	rep.Usage = make(map[string]BucketUsage, len(buckets))
	for _, bk := range buckets {
		var usage BucketUsage
		err := e.walkKeys(ctx, bk, req.Prefix, "", func(key string) error {
			t0 := time.Now()
			res, err := e.HealObject(ctx, bk, key, HealOptions{Deep: req.Deep})
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
			if throttle > 0 && e.bg != nil {
				if !e.bg.sleep(time.Duration(float64(time.Since(t0)) * throttle)) {
					return context.Canceled
				}
			}
			return ctx.Err()
		})
		if err != nil {
			rep.Duration = time.Since(start)
			return rep, err
		}
		rep.Usage[bk] = usage
	}
	if req.Bucket == "" && req.Prefix == "" {
		rep.Orphans += e.sweepOrphans(ctx, e.orphanGrace())
		rep.Orphans += e.sweepUploads(ctx, e.orphanGrace())
	}
	rep.Duration = time.Since(start)
	return rep, nil
}

// orphanGrace is OrphanGrace unless the heal config shortens it (tests).
func (e *Engine) orphanGrace() time.Duration {
	if g := e.cfg.Heal.OrphanGrace; g > 0 {
		return g
	}
	return OrphanGrace
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

// walkKeys calls fn for every key of bucket under prefix after after,
// in order, a batch at a time. It walks the drives' trees directly (the
// first parity+1 answering drives of every set, which see every object
// written with quorum) rather than calling ListObjects: healing must
// reach exactly the keys a listing cannot resolve, such as an overwrite
// left without metadata quorum or the remnants of an interrupted write.
func (e *Engine) walkKeys(ctx context.Context, bucket, prefix, after string, fn func(key string) error) error {
	const batch = 1000
	for {
		keys, more, err := e.rawKeys(ctx, bucket, prefix, after, batch)
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

// rawKeys returns the next keys after after in order, merged over the
// walked drives; more is set when a drive had further keys. Each drive
// yields at most limit keys, so only keys up to the smallest last key of
// a drive that hit the limit are known complete and returned.
func (e *Engine) rawKeys(ctx context.Context, bucket, prefix, after string, limit int) ([]string, bool, error) {
	var walkers []*walker
	for _, set := range e.sets {
		drives := walkedDrives(set)
		if len(drives) == 0 {
			return nil, false, fmt.Errorf("%w: no drive of set %d is online", ErrReadQuorum, set.index+1)
		}
		for _, d := range drives {
			walkers = append(walkers, newWalker(d, bucket, prefix, after, "", limit, true))
		}
	}
	fillAll(ctx, walkers)
	seen := map[string]bool{}
	bound, more := "", false
	for _, w := range walkers {
		got := 0
		for ent := w.next(ctx); ent != nil; ent = w.next(ctx) {
			seen[ent.key] = true
			got++
			if got == limit {
				if !more || ent.key < bound {
					bound = ent.key
				}
				more = true
				break
			}
		}
		if w.err != nil {
			return nil, false, w.err
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		if !more || k <= bound {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys, more, ctx.Err()
}

// healBucketRecords gives every drive in drives every bucket's record (a
// drive that was offline when a bucket was made, or replaced).
func (e *Engine) healBucketRecords(ctx context.Context, drives []drive.Drive) {
	e.healConfigs(ctx)
	all, _ := e.ListBuckets(ctx)
	forEachDrive(drives, func(i int, d drive.Drive) error {
		have, err := bucketNames(ctx, d)
		if err != nil {
			return err
		}
		b := &drive.Batch{}
		for _, bi := range all {
			if !have[bi.Name] {
				rec, _ := json.Marshal(recordOf(bi))
				b.Put(drive.TableBuckets, bi.Name, rec)
			}
		}
		if b.Len() == 0 {
			return nil
		}
		return d.Apply(ctx, b)
	})
}

// bucketNames lists the bucket records a drive holds.
func bucketNames(ctx context.Context, d drive.Drive) (map[string]bool, error) {
	ents, err := d.Scan(ctx, drive.TableBuckets, drive.ScanQuery{KeysOnly: true})
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, ent := range ents {
		have[ent.Key] = true
	}
	return have, nil
}

// sysGet, sysPut and sysDelete keep engine state under TableSystem.
func sysGet(ctx context.Context, d drive.Drive, name string) ([]byte, error) {
	return d.Get(ctx, drive.TableSystem, name)
}

func sysPut(ctx context.Context, d drive.Drive, name string, v []byte) error {
	b := &drive.Batch{}
	b.Put(drive.TableSystem, name, v)
	return d.Apply(ctx, b)
}

func sysDelete(ctx context.Context, d drive.Drive, name string) error {
	b := &drive.Batch{}
	b.Delete(drive.TableSystem, name)
	return d.Apply(ctx, b)
}

// OrphanGrace is how old an unreferenced shard file must be before the
// scanner removes it: a PUT writes its shard files before the index batch
// that references them, so a young file may belong to a write in flight.
const OrphanGrace = time.Hour

// sweepOrphans removes shard files no index entry references: left by a
// crash between writing data and committing its record, or by a delete
// whose file removal failed. It returns how many files went.
func (e *Engine) sweepOrphans(ctx context.Context, grace time.Duration) int {
	var mu sync.Mutex
	removed := 0
	forEachDrive(e.allDrives(), func(i int, d drive.Drive) error {
		now := time.Now()
		var orphans []drive.ShardRef
		err := d.WalkShards(ctx, func(f drive.ShardFile) error {
			if now.Sub(f.ModTime) < grace || e.pins.pinned(f.ID) {
				return nil
			}
			if _, err := d.Get(ctx, drive.TableRefs, f.ID); errors.Is(err, drive.ErrNotFound) {
				orphans = append(orphans, f.ShardRef)
			}
			return nil
		})
		if err != nil || len(orphans) == 0 {
			return err
		}
		if err := d.DeleteShards(ctx, orphans); err != nil {
			return err
		}
		e.log.Info("scanner removed orphan shard files", "drive", d.String(), "files", len(orphans))
		mu.Lock()
		removed += len(orphans)
		mu.Unlock()
		return nil
	})
	return removed
}

// monitorLoop watches the drives: a blank drive in a known slot is
// formatted and refilled, a refill interrupted by a restart resumes, and
// bucket records a drive missed are written.
func (e *Engine) monitorLoop() {
	b := e.bg
	defer b.wg.Done()
	ctx, cancel := b.context()
	defer cancel()
	for {
		e.checkDrives(ctx)
		if !b.sleep(b.cfg.MonitorInterval) {
			return
		}
	}
}

func (e *Engine) checkDrives(ctx context.Context) {
	for si, set := range e.sets {
		forEachDrive(set.drives, func(i int, d drive.Drive) error {
			if !e.cfg.Cluster.owns(si*len(set.drives) + i) {
				// Another node adopts and refills its own drives. Reading
				// the format keeps this node's view of the drive current:
				// the owner answers for a drive whose directory is gone
				// with a fault, which takes the drive offline here too
				// (status, readiness, the console), and a read that
				// succeeds brings it back.
				_, _ = d.ReadFormat(ctx)
				return nil
			}
			f, err := d.ReadFormat(ctx)
			if errors.Is(err, drive.ErrUnformatted) {
				if err := e.adoptDrive(ctx, si, i, d); err != nil {
					e.log.Error("replacement drive not adopted", "drive", d.String(), "err", err)
					return err
				}
				f, err = d.ReadFormat(ctx)
			}
			if err != nil {
				return err
			}
			if f.DeploymentID != e.deploymentID || f.SetIndex != si || f.DriveIndex != i {
				e.log.Error("drive holds another slot or deployment; not refilling it", "drive", d.String())
				return nil
			}
			e.maybeRefill(ctx, set, d, f)
			return nil
		})
	}
}

// adoptDrive formats a blank drive found in slot i of set si while
// running. A drive holding anything else may be someone else's data and
// is refused.
func (e *Engine) adoptDrive(ctx context.Context, si, i int, d drive.Drive) error {
	// WriteFormat itself refuses a directory that holds anything else.
	f := drive.Format{Version: drive.LayoutVersion, DeploymentID: e.deploymentID, SetCount: len(e.sets), SetSize: len(e.sets[si].drives),
		SetIndex: si, DriveIndex: i, DriveID: uuid.NewString(), Parity: e.sets[si].parity}
	if err := d.WriteFormat(ctx, f); err != nil {
		return fmt.Errorf("format: %w", err)
	}
	if err := markRefillNeeded(ctx, d, f.DriveID); err != nil {
		return err
	}
	e.log.Warn("blank drive adopted as replacement; refilling it", "drive", d.String(), "set", si+1, "slot", i+1)
	return nil
}

// markRefillNeeded records, right after a blank drive is formatted, that
// it must be refilled. Deciding later from what the drive holds would race
// with writers that put bucket records or objects on it first, and the
// drive would then never be refilled.
func markRefillNeeded(ctx context.Context, d drive.Drive, driveID string) error {
	raw, _ := json.Marshal(driveHealState{DriveID: driveID, Started: time.Now().UTC()})
	if err := sysPut(ctx, d, driveHealFile, raw); err != nil {
		return fmt.Errorf("record refill of %s: %w", d, err)
	}
	return nil
}

// maybeRefill starts (or resumes) the refill of a drive that has a
// refill record not done, or no bucket records while buckets exist.
func (e *Engine) maybeRefill(ctx context.Context, set *erasureSet, d drive.Drive, f drive.Format) {
	b := e.bg
	b.mu.Lock()
	_, running := b.refilling[d]
	b.mu.Unlock()
	if running {
		return
	}
	var st driveHealState
	raw, err := sysGet(ctx, d, driveHealFile)
	switch {
	case err == nil:
		if json.Unmarshal(raw, &st) != nil || st.DriveID != f.DriveID {
			st = driveHealState{}
		} else if st.Done {
			e.healBucketRecords(ctx, []drive.Drive{d})
			return
		}
	case errors.Is(err, drive.ErrNotFound):
	default:
		return
	}
	if st.DriveID == "" {
		names, err := bucketNames(ctx, d)
		if err != nil {
			return
		}
		all, _ := e.ListBuckets(ctx)
		if len(names) > 0 || len(all) == 0 {
			e.healBucketRecords(ctx, []drive.Drive{d})
			return // not a blank drive: the scanner and queue cover it
		}
		st = driveHealState{DriveID: f.DriveID, Started: time.Now().UTC()}
		if err := e.saveDriveHeal(ctx, d, &st); err != nil {
			return
		}
	}
	b.mu.Lock()
	b.refilling[d] = &st
	b.mu.Unlock()
	b.wg.Add(1)
	go e.refill(set, d, &st)
}

func (e *Engine) saveDriveHeal(ctx context.Context, d drive.Drive, st *driveHealState) error {
	raw, _ := json.Marshal(st)
	return sysPut(ctx, d, driveHealFile, raw)
}

// refill heals every object of set onto replaced drive d, saving its
// place every second so a restart resumes it.
func (e *Engine) refill(set *erasureSet, d drive.Drive, st *driveHealState) {
	b := e.bg
	defer b.wg.Done()
	ctx, cancel := b.context()
	defer cancel()
	defer func() {
		b.mu.Lock()
		delete(b.refilling, d)
		b.mu.Unlock()
	}()
	e.healBucketRecords(ctx, []drive.Drive{d})
	e.log.Warn("refilling replaced drive", "drive", d.String(), "resumeBucket", st.Bucket, "resumeAfter", st.After)
	all, _ := e.ListBuckets(ctx)
	names := make([]string, 0, len(all))
	for _, bi := range all {
		names = append(names, bi.Name)
	}
	sort.Strings(names)
	lastSave := time.Now()
	snapshot := func() driveHealState {
		b.mu.Lock()
		defer b.mu.Unlock()
		return *st
	}
	for _, bk := range names {
		if bk < st.Bucket {
			continue
		}
		after := ""
		if bk == st.Bucket {
			after = st.After
		} else {
			b.mu.Lock()
			st.Bucket, st.After = bk, ""
			b.mu.Unlock()
		}
		err := e.walkKeys(ctx, bk, "", after, func(key string) error {
			if e.setFor(bk, key) == set {
				t0 := time.Now()
				res, err := e.HealObject(ctx, bk, key, HealOptions{})
				b.mu.Lock()
				st.Objects++
				st.Healed += res.Healed
				if err != nil {
					st.Failed++
				}
				st.After = key // with the count, so a stop below never redoes it
				b.mu.Unlock()
				if !b.sleep(time.Duration(float64(time.Since(t0)) * b.cfg.ScanThrottle / 4)) {
					return context.Canceled
				}
			}
			b.mu.Lock()
			st.After = key
			b.mu.Unlock()
			if time.Since(lastSave) > time.Second {
				s := snapshot()
				e.saveDriveHeal(ctx, d, &s)
				lastSave = time.Now()
			}
			return ctx.Err()
		})
		if err != nil {
			s := snapshot()
			e.saveDriveHeal(context.Background(), d, &s)
			return
		}
	}
	b.mu.Lock()
	st.Done = true
	b.mu.Unlock()
	s := snapshot()
	if err := e.saveDriveHeal(ctx, d, &s); err != nil {
		e.log.Warn("cannot record refill completion", "drive", d.String(), "err", err)
	}
	e.log.Warn("replaced drive refilled", "drive", d.String(), "objects", s.Objects, "shards", s.Healed, "failed", s.Failed)
}

// DriveRefill reports a replaced drive's refill progress.
type DriveRefill struct {
	Drive   string `json:"drive"`
	Bucket  string `json:"bucket"`
	After   string `json:"after"`
	Objects int    `json:"objects"`
	Healed  int    `json:"healed"`
	Failed  int    `json:"failed"`
}

// HealStatus reports the background repair's state.
type HealStatus struct {
	Queued       int `json:"queued"`        // objects waiting in the heal queue
	QueueDropped int `json:"queue_dropped"` // entries dropped because the queue was full
	QueueHealed  int `json:"queue_healed"`
	QueueRetries int `json:"queue_retries"`
	ScanCycles   int `json:"scan_cycles"`
	// ScanRunning is true while a scanner cycle runs; ScanStarted,
	// ScanDone and ScanTotal are its start and objects visited of those
	// found so far (the total grows as buckets are walked).
	ScanRunning bool `json:"scan_running"`
	// ScanElsewhere: on a cluster, another node (the consensus leader)
	// runs the scanner and lifecycle now; this one has not since.
	ScanElsewhere bool          `json:"scan_elsewhere"`
	ScanStarted   time.Time     `json:"scan_started"`
	ScanDone      int           `json:"scan_done"`
	ScanTotal     int           `json:"scan_total"`
	LastScanEnd   time.Time     `json:"last_scan_end"`
	LastScan      HealReport    `json:"last_scan"`
	Refills       []DriveRefill `json:"refills"` // drives being refilled now
	DrivesOffline []string      `json:"drives_offline"`
}

// HealStatus reports what background repair is doing.
func (e *Engine) HealStatus() HealStatus {
	st := HealStatus{Queued: e.heal.len()}
	e.heal.mu.Lock()
	st.QueueDropped = e.heal.dropped
	e.heal.mu.Unlock()
	if b := e.bg; b != nil {
		b.mu.Lock()
		st.QueueHealed, st.QueueRetries = b.mrfHealed, b.mrfFailed
		st.ScanCycles, st.LastScanEnd, st.LastScan = b.scanCycles, b.scanLastEnd, b.scanStats
		st.ScanRunning, st.ScanStarted, st.ScanDone, st.ScanTotal = b.scanRunning, b.scanStarted, b.scanDone, b.scanTotal
		st.ScanElsewhere = b.scanElsewhere
		for d, r := range b.refilling {
			st.Refills = append(st.Refills, DriveRefill{Drive: d.String(), Bucket: r.Bucket, After: r.After,
				Objects: r.Objects, Healed: r.Healed, Failed: r.Failed})
		}
		b.mu.Unlock()
	}
	for _, d := range e.allDrives() {
		if reportsOffline(d) {
			st.DrivesOffline = append(st.DrivesOffline, d.String())
		}
	}
	sort.Slice(st.Refills, func(i, j int) bool { return st.Refills[i].Drive < st.Refills[j].Drive })
	return st
}

// RefillsDone reports whether no replaced drive is being refilled.
func (e *Engine) RefillsDone() bool {
	if e.bg == nil {
		return true
	}
	e.bg.mu.Lock()
	defer e.bg.mu.Unlock()
	return len(e.bg.refilling) == 0
}

// BucketUsage returns each bucket's usage as the last finished scanner
// cycle found it, and when that cycle ended: before this run's first
// cycle, or on a cluster node that does not scan now, the newest one
// saved on the drives (by an earlier run or the scanning node); nil and
// the zero time when there is none.
func (e *Engine) BucketUsage() (map[string]BucketUsage, time.Time) {
	if e.bg == nil {
		return nil, time.Time{}
	}
	e.bg.mu.Lock()
	defer e.bg.mu.Unlock()
	if s := e.bg.savedUsage; s != nil && (e.bg.scanCycles == 0 || s.At.After(e.bg.scanLastEnd)) {
		out := make(map[string]BucketUsage, len(s.Usage))
		for b, u := range s.Usage {
			out[b] = u
		}
		return out, s.At
	}
	if e.bg.scanCycles == 0 {
		return nil, time.Time{}
	}
	out := make(map[string]BucketUsage, len(e.bg.scanStats.Usage))
	for b, u := range e.bg.scanStats.Usage {
		out[b] = u
	}
	return out, e.bg.scanLastEnd
}
