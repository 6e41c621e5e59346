package background

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// RefillRecord is where a replaced drive keeps its refill progress
// (system table of that drive), so a restart resumes where it stopped.
const RefillRecord = "heal/drive.json"

// RefillState is a drive's refill progress, as RefillRecord holds it.
type RefillState struct {
	DriveID string    `json:"driveID"`
	Started time.Time `json:"started"`
	Bucket  string    `json:"bucket"` // bucket being refilled
	After   string    `json:"after"`  // last key done in Bucket
	Done    bool      `json:"done"`
	Objects int       `json:"objects"`
	Healed  int       `json:"healed"`
	Failed  int       `json:"failed"`
}

// MarkRefillNeeded records, right after a blank drive is formatted, that
// it must be refilled. Deciding later from what the drive holds would
// race with writers that put bucket records or objects on it first, and
// the drive would then never be refilled. The engine calls it when it
// adopts a blank drive, at start or from CheckDrive.
func MarkRefillNeeded(ctx context.Context, d drive.Drive, driveID string) error {
	raw, _ := json.Marshal(RefillState{DriveID: driveID, Started: time.Now().UTC()})
	if err := putRecord(ctx, d, RefillRecord, raw); err != nil {
		return fmt.Errorf("record refill of %s: %w", d, err)
	}
	return nil
}

// monitorLoop watches the drives: a blank drive in a known slot is
// formatted and refilled, a refill interrupted by a restart resumes, and
// bucket records a drive missed are written.
func (j *Jobs) monitorLoop() {
	defer j.wg.Done()
	ctx := j.ctx
	for {
		j.checkDrives(ctx)
		if !j.sleep(j.cfg.MonitorInterval) {
			return
		}
	}
}

func (j *Jobs) checkDrives(ctx context.Context) {
	for si, set := range j.eng.Sets() {
		eachDrive(set, func(i int, d drive.Drive) error {
			if !j.eng.Owns(si*len(set) + i) {
				// Another node adopts and refills its own drives. Reading
				// the format keeps this node's view of the drive current:
				// the owner answers for a drive whose directory is gone
				// with a fault, which takes the drive offline here too
				// (status, readiness, the console), and a read that
				// succeeds brings it back.
				_, _ = d.ReadFormat(ctx)
				return nil
			}
			id, err := j.eng.CheckDrive(ctx, si, i)
			if err != nil {
				return err
			}
			j.maybeRefill(ctx, si, d, id)
			return nil
		})
	}
}

// maybeRefill starts (or resumes) the refill of drive d of set that has
// a refill record not done, or no bucket records while buckets exist.
func (j *Jobs) maybeRefill(ctx context.Context, set int, d drive.Drive, driveID string) {
	j.mu.Lock()
	_, running := j.refilling[d]
	j.mu.Unlock()
	if running {
		return
	}
	var st RefillState
	raw, err := getRecord(ctx, d, RefillRecord)
	switch {
	case err == nil:
		if json.Unmarshal(raw, &st) != nil || st.DriveID != driveID {
			st = RefillState{}
		} else if st.Done {
			j.eng.HealBucketRecords(ctx, []drive.Drive{d})
			return
		}
	case errors.Is(err, drive.ErrNotFound):
	default:
		return
	}
	if st.DriveID == "" {
		holds, err := j.eng.HoldsBuckets(ctx, d)
		if err != nil {
			return
		}
		all, _ := j.eng.Buckets(ctx)
		if holds || len(all) == 0 {
			j.eng.HealBucketRecords(ctx, []drive.Drive{d})
			return // not a blank drive: the scanner and queue cover it
		}
		st = RefillState{DriveID: driveID, Started: j.clock.Now().UTC()}
		if err := saveRefill(ctx, d, &st); err != nil {
			return
		}
	}
	j.mu.Lock()
	j.refilling[d] = &st
	j.mu.Unlock()
	j.wg.Add(1)
	go j.refill(set, d, &st)
}

func saveRefill(ctx context.Context, d drive.Drive, st *RefillState) error {
	raw, _ := json.Marshal(st)
	return putRecord(ctx, d, RefillRecord, raw)
}

// refill heals every object of set onto replaced drive d, saving its
// place every second so a restart resumes it. It rests a quarter as long
// as the scanner: a drive short of its shards is worth more of the
// drives' time than a routine check.
func (j *Jobs) refill(set int, d drive.Drive, st *RefillState) {
	defer j.wg.Done()
	ctx := j.ctx
	defer func() {
		j.mu.Lock()
		delete(j.refilling, d)
		j.mu.Unlock()
	}()
	j.eng.HealBucketRecords(ctx, []drive.Drive{d})
	j.log.Warn("refilling replaced drive", "drive", d.String(), "resumeBucket", st.Bucket, "resumeAfter", st.After)
	names, _ := j.eng.Buckets(ctx)
	sort.Strings(names)
	lastSave := j.clock.Now()
	snapshot := func() RefillState {
		j.mu.Lock()
		defer j.mu.Unlock()
		return *st
	}
	rest := j.throttle(ctx, j.cfg.ScanThrottle/4)
	for _, bk := range names {
		if bk < st.Bucket {
			continue
		}
		after := ""
		if bk == st.Bucket {
			after = st.After
		} else {
			j.mu.Lock()
			st.Bucket, st.After = bk, ""
			j.mu.Unlock()
		}
		err := j.walkKeys(ctx, bk, "", after, func(key string) error {
			if j.eng.SetOf(bk, key) == set {
				t0 := j.clock.Now()
				res, err := j.eng.HealObject(ctx, bk, key, HealOptions{})
				j.mu.Lock()
				st.Objects++
				st.Healed += res.Healed
				if err != nil {
					st.Failed++
				}
				st.After = key // with the count, so a stop below never redoes it
				j.mu.Unlock()
				if err := rest(j.since(t0)); err != nil {
					return err
				}
			}
			j.mu.Lock()
			st.After = key
			j.mu.Unlock()
			if j.since(lastSave) > time.Second {
				s := snapshot()
				saveRefill(ctx, d, &s)
				lastSave = j.clock.Now()
			}
			return ctx.Err()
		})
		if err != nil {
			s := snapshot()
			saveRefill(context.Background(), d, &s)
			return
		}
	}
	j.mu.Lock()
	st.Done = true
	j.mu.Unlock()
	s := snapshot()
	if err := saveRefill(ctx, d, &s); err != nil {
		j.log.Warn("cannot record refill completion", "drive", d.String(), "err", err)
	}
	j.log.Warn("replaced drive refilled", "drive", d.String(), "objects", s.Objects, "shards", s.Healed, "failed", s.Failed)
}
