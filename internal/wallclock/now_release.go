//go:build !testhooks

package wallclock

import "time"

// Hooked reports whether this build honours SHARDSTORE_TEST_CLOCK_OFFSET
// (false: a release build).
const Hooked = false

// Now is the server's wall clock: time.Now.
func Now() time.Time { return time.Now() }

// Offset is how far Now is from time.Now: always 0 in a release build.
func Offset() time.Duration { return 0 }

// Check reports a bad SHARDSTORE_TEST_CLOCK_OFFSET; a release build
// never reads it.
func Check() error { return nil }
