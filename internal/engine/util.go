package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/shardstore/shardstore/internal/drive"
)

// forEachDrive runs fn on every drive in parallel and returns the errors
// by position.
func forEachDrive(drives []drive.Drive, fn func(i int, d drive.Drive) error) []error {
	errs := make([]error, len(drives))
	var wg sync.WaitGroup
	for i, d := range drives {
		if d == nil {
			errs[i] = errDriveSkipped
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i, d)
		}()
	}
	wg.Wait()
	return errs
}

func countNil(errs []error) int {
	n := 0
	for _, err := range errs {
		if err == nil {
			n++
		}
	}
	return n
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// quorumError explains a write that reached ok of len(errs) drives, fewer
// than quorum. When full drives are what cost the quorum, the error is
// ErrStorageFull (clients see a capacity problem, not an outage).
func quorumError(what string, errs []error, ok, quorum int) error {
	full, conflicts := 0, 0
	for _, err := range errs {
		switch {
		case errors.Is(err, drive.ErrDriveFull):
			full++
		case errors.Is(err, drive.ErrConflict):
			conflicts++
		}
	}
	if full > 0 && ok+full >= quorum {
		return fmt.Errorf("%s: %w: %d of %d drives are full", what, ErrStorageFull, full, len(errs))
	}
	// Drives that refused a conditional batch hold another writer's
	// change: this writer lost the race (its cluster lock expired while
	// it was stalled). The key is fine; a retry reads it afresh.
	if conflicts > 0 && ok+conflicts >= quorum {
		return fmt.Errorf("%s: %w: the key changed under this request on %d of %d drives (its cluster lock expired?)", what, ErrBusy, conflicts, len(errs))
	}
	return fmt.Errorf("%s: %w: %d of %d drives, %d needed: %v", what, ErrWriteQuorum, ok, len(errs), quorum, firstErr(errs))
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
