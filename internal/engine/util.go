package engine

import (
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
