package engine

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// usageKey is where every drive keeps the bucket usage of the last
// finished scanner pass (TableSystem), so a restarted server shows the
// counts it had instead of none until its first pass ends.
const usageKey = "bucket-usage"

// savedUsage is the usage record on the drives.
type savedUsage struct {
	At    time.Time              `json:"at"`
	Usage map[string]BucketUsage `json:"usage"`
}

// saveUsage records a finished pass's usage on every drive. A drive
// that misses it keeps an older record; loadUsage takes the newest.
func (e *Engine) saveUsage(ctx context.Context, at time.Time, usage map[string]BucketUsage) {
	raw, err := json.Marshal(savedUsage{At: at.UTC(), Usage: usage})
	if err != nil {
		return
	}
	forEachDrive(e.allDrives(), func(_ int, d drive.Drive) error {
		if err := sysPut(ctx, d, usageKey, raw); err != nil && !errors.Is(err, drive.ErrDriveFaulty) {
			e.log.Debug("bucket usage not saved on a drive", "drive", d.String(), "err", err)
		}
		return nil
	})
}

// loadUsage reads the newest usage record the drives hold into the
// background state, unless a pass of this run has finished already.
func (e *Engine) loadUsage(ctx context.Context) {
	b := e.bg
	var newest *savedUsage
	drives := e.allDrives()
	saved := make([]*savedUsage, len(drives))
	forEachDrive(drives, func(i int, d drive.Drive) error {
		raw, err := sysGet(ctx, d, usageKey)
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
	for _, s := range saved {
		if s != nil && (newest == nil || s.At.After(newest.At)) {
			newest = s
		}
	}
	if newest == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// Newer than this node's own last cycle: an earlier run's, or on a
	// cluster the node that scans now.
	if b.scanCycles == 0 || newest.At.After(b.scanLastEnd) {
		b.savedUsage = newest
	}
}
