package engine

import (
	"context"
	"errors"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// sweepOrphans removes d's shard files that no index entry references,
// older than grace: left by a crash between writing data and committing
// its record, or by a delete whose file removal failed. A file a reader
// still pins is replaced data waiting for that reader, not an orphan. It
// returns how many files went. The scanner sweeps every drive after a
// full cycle (internal/background).
func (e *Engine) sweepOrphans(ctx context.Context, d drive.Drive, grace time.Duration) (int, error) {
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
		return 0, err
	}
	if err := d.DeleteShards(ctx, orphans); err != nil {
		return 0, err
	}
	return len(orphans), nil
}
