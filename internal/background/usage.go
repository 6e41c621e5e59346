package background

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// BucketUsage counts a bucket's current objects and their logical size
// (before erasure coding), as the scanner last found them.
type BucketUsage struct {
	Objects int64 `json:"objects"`
	Bytes   int64 `json:"bytes"`
}

// usageRecord is where every drive keeps the bucket usage of the last
// finished scanner cycle (system table), so a restarted server shows the
// counts it had instead of none until its first cycle ends, and a
// cluster node that does not scan shows what the scanning node counted.
const usageRecord = "bucket-usage"

// savedUsage is the usage record on the drives.
type savedUsage struct {
	At    time.Time              `json:"at"`
	Usage map[string]BucketUsage `json:"usage"`
}

// BucketUsage returns each bucket's usage as the last finished scanner
// cycle found it, and when that cycle ended: before this run's first
// cycle, or on a cluster node that does not scan now, the newest one
// saved on the drives (by an earlier run or the scanning node); nil and
// the zero time when there is none.
func (j *Jobs) BucketUsage() (map[string]BucketUsage, time.Time) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if s := j.savedUsage; s != nil && (j.scan.cycles == 0 || s.At.After(j.scan.lastEnd)) {
		out := make(map[string]BucketUsage, len(s.Usage))
		maps.Copy(out, s.Usage)
		return out, s.At
	}
	if j.scan.cycles == 0 {
		return nil, time.Time{}
	}
	out := make(map[string]BucketUsage, len(j.scan.last.Usage))
	maps.Copy(out, j.scan.last.Usage)
	return out, j.scan.lastEnd
}

// saveUsage records a finished cycle's usage on every drive. A drive
// that misses it keeps an older record; loadUsage takes the newest.
func (j *Jobs) saveUsage(ctx context.Context, at time.Time, usage map[string]BucketUsage) {
	raw, err := json.Marshal(savedUsage{At: at.UTC(), Usage: usage})
	if err != nil {
		return
	}
	eachDrive(j.allDrives(), func(_ int, d drive.Drive) error {
		if err := putRecord(ctx, d, usageRecord, raw); err != nil && !errors.Is(err, drive.ErrDriveFaulty) {
			j.log.Debug("bucket usage not saved on a drive", "drive", d.String(), "err", err)
		}
		return nil
	})
}

// loadUsage reads the newest usage record the drives hold, unless a
// cycle of this run has finished since it was saved.
func (j *Jobs) loadUsage(ctx context.Context) {
	drives := j.allDrives()
	saved := make([]*savedUsage, len(drives))
	eachDrive(drives, func(i int, d drive.Drive) error {
		raw, err := getRecord(ctx, d, usageRecord)
		if err != nil {
			return err
		}
		var s savedUsage
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		saved[i] = &s
		return nil
	})
	var newest *savedUsage
	for _, s := range saved {
		if s != nil && (newest == nil || s.At.After(newest.At)) {
			newest = s
		}
	}
	if newest == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	// Newer than this node's own last cycle: an earlier run's, or on a
	// cluster the node that scans now.
	if j.scan.cycles == 0 || newest.At.After(j.scan.lastEnd) {
		j.savedUsage = newest
	}
}
