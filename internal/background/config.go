package background

import "time"

// Config tunes the background jobs. The zero value is the production
// default: all of them on.
type Config struct {
	// Disabled turns off all background work (queue, scanner, drive
	// monitor); the engine's HealObject and Heal still work when called.
	Disabled bool
	// QueueDelay is how long a queued object waits before it is healed;
	// 0 means 2s.
	QueueDelay time.Duration
	// ScanInterval is the pause between scanner cycles; 0 means 5
	// minutes, negative disables the scanner.
	ScanInterval time.Duration
	// DeepScanEvery makes every Nth scanner cycle verify every chunk
	// checksum (bitrot); 0 means 288 (daily at the default interval).
	DeepScanEvery int
	// ScanThrottle is how long the scanner and drive refills rest per
	// unit of time they work (1 = rest as long as the last object took),
	// so they use at most a fraction of one drive queue; 0 means 1.
	ScanThrottle float64
	// MonitorInterval is how often drives are checked for replacement
	// (blank drive in a known slot) and missed bucket records; 0 means 5s.
	MonitorInterval time.Duration
	// OrphanGrace is how old an unreferenced shard file must be before a
	// full scan removes it; 0 means OrphanGrace (1 hour).
	OrphanGrace time.Duration
	// Clock is the time the jobs read and wait on; nil means the system
	// clock. Tests pass a fake one to run cycles without waiting.
	Clock Clock
}

// OrphanGrace is how old an unreferenced shard file must be before the
// scanner removes it: a PUT writes its shard files before the index batch
// that references them, so a young file may belong to a write in flight.
const OrphanGrace = time.Hour

func (c Config) withDefaults() Config {
	if c.QueueDelay <= 0 {
		c.QueueDelay = 2 * time.Second
	}
	if c.ScanInterval == 0 {
		c.ScanInterval = 5 * time.Minute
	}
	if c.DeepScanEvery <= 0 {
		c.DeepScanEvery = 288
	}
	if c.ScanThrottle <= 0 {
		c.ScanThrottle = 1
	}
	if c.MonitorInterval <= 0 {
		c.MonitorInterval = 5 * time.Second
	}
	if c.OrphanGrace <= 0 {
		c.OrphanGrace = OrphanGrace
	}
	if c.Clock == nil {
		c.Clock = systemClock{}
	}
	return c
}
