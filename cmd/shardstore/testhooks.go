package main

import (
	"fmt"
	"log/slog"

	"github.com/shardstore/shardstore/internal/drivefault"
	"github.com/shardstore/shardstore/internal/wallclock"
)

// testHooks refuses a bad SHARDSTORE_TEST_CLOCK_OFFSET and says, in a
// build made with -tags testhooks (the fault harness's, test/jepsen),
// which test hooks it honours. A release build has none: both checks
// are constants there.
func testHooks(log *slog.Logger) error {
	if err := wallclock.Check(); err != nil {
		return fmt.Errorf("%s: %w", wallclock.EnvOffset, err)
	}
	if _, err := testFreeDelay(); err != nil {
		return err
	}
	if wallclock.Hooked || drivefault.Hooked {
		log.Warn("testhooks build: not for production (honours "+wallclock.EnvOffset+", "+drivefault.EnvFile+" and "+envTestFreeDelay+")",
			"clock_offset", wallclock.Offset().String())
	}
	cpuProfileHook(log)
	return nil
}
