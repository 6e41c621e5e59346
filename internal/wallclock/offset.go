package wallclock

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// EnvOffset names the variable a testhooks build reads its clock offset
// from.
const EnvOffset = "SHARDSTORE_TEST_CLOCK_OFFSET"

// MaxOffset bounds an offset: far enough for any skew a test wants,
// near enough that a time stays representable.
const MaxOffset = 30 * 24 * time.Hour

// ErrOffset is wrapped by ParseOffset's errors.
var ErrOffset = errors.New("wallclock: bad clock offset")

// ParseOffset reads a clock offset: empty for none, else a Go duration
// with an optional sign ("+90s", "-4m30s", "0"), at most MaxOffset either
// way.
func ParseOffset(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%w %q: %w", ErrOffset, s, err)
	}
	if d > MaxOffset || d < -MaxOffset {
		return 0, fmt.Errorf("%w %q: more than %v", ErrOffset, s, MaxOffset)
	}
	return d, nil
}
