package main

import (
	"fmt"
	"time"
)

// envTestFreeDelay shortens a cluster node's FreeDelay (how long data it
// replaced or deleted is kept for readers on other nodes, 10 minutes) in
// a build made with -tags testhooks only (freedelay_testhooks.go), so a
// test can see delayed frees come due, and resume after a kill -9,
// within minutes (TestClusterFreesResumeAfterKill). A release build
// ignores it.
const envTestFreeDelay = "SHARDSTORE_TEST_FREE_DELAY"

// parseTestFreeDelay parses envTestFreeDelay's value: empty (the
// default delay), or a Go duration from 100ms to 1h.
func parseTestFreeDelay(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %w", envTestFreeDelay, s, err)
	}
	if d < 100*time.Millisecond || d > time.Hour {
		return 0, fmt.Errorf("%s=%q: want 100ms to 1h", envTestFreeDelay, s)
	}
	return d, nil
}
