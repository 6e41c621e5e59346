//go:build testhooks

package main

import (
	"os"
	"time"
)

// testFreeDelay is the FreeDelay SHARDSTORE_TEST_FREE_DELAY sets in a
// testhooks build (0: the default; testHooks refuses a bad value).
func testFreeDelay() (time.Duration, error) {
	return parseTestFreeDelay(os.Getenv(envTestFreeDelay))
}
