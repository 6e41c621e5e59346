package cpustat

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Interval is the CPU use over one measured span: what a benchmark
// reports next to its throughput.
type Interval struct {
	// Elapsed is wall-clock time between the two samples.
	Elapsed time.Duration
	Usage
	// Process is the CPU time this process used in the span.
	Process ProcessCPU
	// ProcessCores is Process.Total()/Elapsed: 2.0 means two full cores.
	ProcessCores float64
}

// MostConsumed formats the span's hottest core groups, e.g. "1x92%, 1x8%".
func (iv Interval) MostConsumed() string { return MostConsumed(iv.BusyFractions()) }

// Imbalance is the span's max-core/mean-core ratio.
func (iv Interval) Imbalance() float64 { return Imbalance(iv.BusyFractions()) }

// Mark is one point-in-time sample of machine and process counters.
type Mark struct {
	Time    time.Time
	Stat    Stat
	Process ProcessCPU
}

// TakeMark samples /proc/stat and this process's rusage now.
func TakeMark(procRoot string) (Mark, error) {
	st, err := ReadStat(procRoot)
	if err != nil {
		return Mark{}, err
	}
	p, err := SelfCPU()
	if err != nil {
		return Mark{}, err
	}
	return Mark{Time: time.Now(), Stat: st, Process: p}, nil
}

// Since computes the CPU use between an earlier mark and m.
func (m Mark) Since(earlier Mark) Interval {
	iv := Interval{
		Elapsed: m.Time.Sub(earlier.Time),
		Usage:   Loads(earlier.Stat, m.Stat),
		Process: ProcessCPU{
			User:   max(0, m.Process.User-earlier.Process.User),
			System: max(0, m.Process.System-earlier.Process.System),
		},
	}
	if iv.Elapsed > 0 {
		iv.ProcessCores = float64(iv.Process.Total()) / float64(iv.Elapsed)
	}
	return iv
}

// SamplerOptions configures a Sampler.
type SamplerOptions struct {
	// Interval between samples; default 1s.
	Interval time.Duration
	// Window is the span Busy and Snapshot average over; default
	// 3*Interval. It is rounded up to whole intervals.
	Window time.Duration
	// ProcRoot is where /proc is mounted; default DefaultProcRoot.
	ProcRoot string
}

// Snapshot is the Sampler's latest view.
type Snapshot struct {
	// Interval covers the current window; it is zero (Elapsed 0, no
	// cores) until the sampler has two samples.
	Interval
	// Time is when the newest sample was taken.
	Time time.Time
	// ProcessTotal is this process's cumulative CPU time at Time.
	ProcessTotal ProcessCPU
}

// Sampler samples CPU counters in the background and keeps the load over
// a recent window. All methods are safe for concurrent use.
type Sampler struct {
	interval time.Duration
	keep     int // samples kept: window/interval + 1
	procRoot string

	mu      sync.Mutex
	ring    []Mark
	snap    Snapshot
	started bool
	stop    chan struct{}
	done    chan struct{}
}

// NewSampler returns a stopped sampler.
func NewSampler(opts SamplerOptions) *Sampler {
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.Window <= 0 {
		opts.Window = 3 * opts.Interval
	}
	keep := int((opts.Window+opts.Interval-1)/opts.Interval) + 1
	return &Sampler{interval: opts.Interval, keep: keep, procRoot: opts.ProcRoot}
}

// Start takes a first sample (so a missing /proc fails here, not
// silently later) and starts sampling every interval until Stop.
func (s *Sampler) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("cpustat: sampler already started")
	}
	m, err := TakeMark(s.procRoot)
	if err != nil {
		return fmt.Errorf("cpustat: starting sampler: %w", err)
	}
	s.ring = append(s.ring[:0], m)
	s.snap = Snapshot{Time: m.Time, ProcessTotal: m.Process}
	s.started = true
	s.stop = make(chan struct{})
	s.done = make(chan struct{})
	go s.loop(s.stop, s.done)
	return nil
}

// Stop ends sampling and waits for the goroutine to exit. The last
// snapshot stays readable. Stop on a stopped sampler does nothing.
func (s *Sampler) Stop() {
	s.mu.Lock()
	if !s.started {
		s.mu.Unlock()
		return
	}
	s.started = false
	stop, done := s.stop, s.done
	s.mu.Unlock()
	close(stop)
	<-done
}

func (s *Sampler) loop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			// A failed read (e.g. /proc briefly unavailable in a
			// container) keeps the previous snapshot; the next tick
			// tries again rather than killing the sampler.
			if m, err := TakeMark(s.procRoot); err == nil {
				s.add(m)
			}
		}
	}
}

func (s *Sampler) add(m Mark) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ring = append(s.ring, m)
	if len(s.ring) > s.keep {
		// Shift instead of reslicing forward so the backing array does
		// not grow without bound.
		n := copy(s.ring, s.ring[len(s.ring)-s.keep:])
		s.ring = s.ring[:n]
	}
	s.snap = Snapshot{Interval: m.Since(s.ring[0]), Time: m.Time, ProcessTotal: m.Process}
}

// Busy is the fraction (0..1) of the whole machine's CPU that was busy
// over the recent window. It is 0 until two samples exist, which the
// hashing policy reads as "not busy": do the work on the CPU.
func (s *Sampler) Busy() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap.Average
}

// Snapshot returns a copy of the latest window.
func (s *Sampler) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.snap
	snap.Cores = append([]CoreLoad(nil), s.snap.Cores...)
	return snap
}
