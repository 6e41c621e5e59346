//go:build testhooks

package wallclock

import (
	"os"
	"time"
)

// Hooked reports whether this build honours SHARDSTORE_TEST_CLOCK_OFFSET
// (true: built with -tags testhooks).
const Hooked = true

// offset and offsetErr are read once, when the process starts, and never
// written again.
var offset, offsetErr = ParseOffset(os.Getenv(EnvOffset))

// Now is time.Now moved by the process's clock offset.
func Now() time.Time {
	if offsetErr != nil {
		return time.Now()
	}
	return time.Now().Add(offset)
}

// Offset is how far Now is from time.Now.
func Offset() time.Duration {
	if offsetErr != nil {
		return 0
	}
	return offset
}

// Check reports a bad SHARDSTORE_TEST_CLOCK_OFFSET: the server refuses
// to start with it.
func Check() error { return offsetErr }
