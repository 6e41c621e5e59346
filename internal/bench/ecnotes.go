package bench

import (
	"fmt"
	"time"

	"github.com/shardstore/shardstore/internal/cpustat"
)

// minCPUTicks is how many clock ticks a measurement must span for its
// per-core CPU numbers to mean something. /proc/stat counts each core's
// busy time in ticks (USER_HZ, 100 per second: 10 ms), and a window
// cut at arbitrary moments can be off by up to a tick at each end, so
// each core's busy fraction is uncertain by 2 ticks over the window. At
// 20 ticks (200 ms) that is 10 percentage points: the tolerance within
// which MOST CONSUMED groups cores anyway; shorter windows give core
// loads that are mostly rounding.
const minCPUTicks = 20

// minCPUWindow is the shortest measurement whose per-core CPU columns
// are trustworthy on this machine (200 ms at the usual 100 ticks/s).
func minCPUWindow(procRoot string) time.Duration {
	return minCPUTicks * time.Second / time.Duration(cpustat.ClockTicks(procRoot))
}

// shortWindowWarning says, when any result was measured over less than
// limit, that its machine CPU columns are rough and how to lengthen
// the measurements; "" when every window was long enough.
func shortWindowWarning(results []ECResult, limit time.Duration) string {
	short, shortest := 0, time.Duration(0)
	for _, r := range results {
		d := time.Duration(r.Seconds * float64(time.Second))
		if d >= limit {
			continue
		}
		if short == 0 || d < shortest {
			shortest = d
		}
		short++
	}
	if short == 0 {
		return ""
	}
	return fmt.Sprintf("bench ec: warning: %d of %d measurements lasted less than %v (shortest %v), too short to sample CPU:\n"+
		"  /proc/stat counts per-core time in %v ticks, so their CPU AVG and MOST CONSUMED are mostly rounding.\n"+
		"  Throughput, PROC and GB/CPU-s (getrusage, not ticks) are unaffected; for the per-core numbers raise -rounds or -blocks until each measurement takes %v or more.",
		short, len(results), limit, shortest.Round(time.Microsecond), limit/minCPUTicks, limit)
}

// memoryNote tells the user, before RunEC allocates it, how much memory
// the run's buffers take (see ECMemory).
func memoryNote(opts ECOptions) string {
	mem, err := ECMemory(opts)
	if err != nil {
		return fmt.Sprintf("bench ec: buffer size unknown: %v", err)
	}
	what := "the working set"
	if len(opts.Configs) != 1 {
		what = "the largest config's working set; configs run one at a time"
	}
	return fmt.Sprintf("bench ec: will allocate about %s for buffers (%s)", approxBytes(mem), what)
}
