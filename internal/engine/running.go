package engine

import (
	"context"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// runningFile is present on the drives while an engine runs; finding it
// at start means the last run did not close cleanly (killed or crashed):
// listings then confirm every key by quorum (listVerify) until the
// recovery sweep of the background jobs has healed every key.
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
