//go:build !testhooks

package drivefault

import (
	"log/slog"

	"github.com/shardstore/shardstore/internal/drive"
)

// Hooked reports whether this build honours SHARDSTORE_TEST_DRIVE_FAULTS
// (false: a release build).
const Hooked = false

// Wrap returns d: a release build injects no faults.
func Wrap(d drive.Drive, _ *slog.Logger) drive.Drive { return d }
