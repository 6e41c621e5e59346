//go:build !testhooks

package main

import "time"

// testFreeDelay is 0 in a release build: SHARDSTORE_TEST_FREE_DELAY is
// not read (see freedelay.go).
func testFreeDelay() (time.Duration, error) { return 0, nil }
