// Package cpustat measures CPU use per core, per process and per thread
// from Linux /proc, because an average hides the case that matters most for
// a storage server: one saturated core (a single-threaded hash or parity
// loop) while the machine average still looks low.
//
// The building blocks are plain functions over parsed samples (ParseStat,
// Loads, Groups, FormatMostConsumed), so they can be tested on fixed text;
// Sampler ties them together in a background goroutine whose Busy method
// feeds the hashing offload policy, and Collector exports the same numbers
// to Prometheus.
package cpustat

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultProcRoot is where the proc filesystem is normally mounted.
const DefaultProcRoot = "/proc"

// Times holds cumulative CPU time of one core (or of the whole machine) in
// clock ticks (USER_HZ), as /proc/stat reports it.
//
// Guest and guest_nice are deliberately absent: the kernel already counts
// them inside user and nice, and adding them again would double count.
type Times struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// BusyTicks is the time the core spent doing anything but idling or
// waiting for I/O. Steal counts as busy: the core was not available to us,
// which for capacity planning is the same as being used.
func (t Times) BusyTicks() uint64 {
	return t.User + t.Nice + t.System + t.IRQ + t.SoftIRQ + t.Steal
}

// TotalTicks is all time accounted to the core.
func (t Times) TotalTicks() uint64 {
	return t.BusyTicks() + t.Idle + t.IOWait
}

// Core is one "cpuN" line of /proc/stat.
type Core struct {
	ID int
	Times
}

// Stat is one parsed sample of /proc/stat's CPU lines.
type Stat struct {
	// All is the aggregate "cpu" line.
	All Times
	// Cores holds the "cpuN" lines in file order (normally ascending ID;
	// offline cores are simply missing).
	Cores []Core
}

// ParseStat parses the CPU lines of /proc/stat text. Lines that are not
// CPU lines (intr, ctxt, btime, ...) are ignored. Older kernels print fewer
// columns; missing trailing columns read as zero.
func ParseStat(r io.Reader) (Stat, error) {
	var st Stat
	sawAll := false
	sc := bufio.NewScanner(r)
	// The intr line lists every interrupt and can exceed the default
	// 64 KiB token limit on large machines.
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for lineNo := 1; sc.Scan(); lineNo++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || !strings.HasPrefix(fields[0], "cpu") {
			continue
		}
		if len(fields) < 5 {
			return Stat{}, fmt.Errorf("cpustat: /proc/stat line %d: %d fields, want at least 5", lineNo, len(fields))
		}
		var vals [8]uint64
		for i := 0; i < len(vals) && i+1 < len(fields); i++ {
			v, err := strconv.ParseUint(fields[i+1], 10, 64)
			if err != nil {
				return Stat{}, fmt.Errorf("cpustat: /proc/stat line %d field %d: %w", lineNo, i+1, err)
			}
			vals[i] = v
		}
		t := Times{User: vals[0], Nice: vals[1], System: vals[2], Idle: vals[3],
			IOWait: vals[4], IRQ: vals[5], SoftIRQ: vals[6], Steal: vals[7]}
		if fields[0] == "cpu" {
			st.All = t
			sawAll = true
			continue
		}
		id, err := strconv.Atoi(fields[0][3:])
		if err != nil {
			return Stat{}, fmt.Errorf("cpustat: /proc/stat line %d: bad cpu name %q: %w", lineNo, fields[0], err)
		}
		st.Cores = append(st.Cores, Core{ID: id, Times: t})
	}
	if err := sc.Err(); err != nil {
		return Stat{}, fmt.Errorf("cpustat: reading /proc/stat: %w", err)
	}
	if !sawAll && len(st.Cores) == 0 {
		return Stat{}, fmt.Errorf("cpustat: no cpu lines in /proc/stat")
	}
	return st, nil
}

// ReadStat reads and parses procRoot/stat ("" means DefaultProcRoot).
func ReadStat(procRoot string) (Stat, error) {
	if procRoot == "" {
		procRoot = DefaultProcRoot
	}
	b, err := os.ReadFile(filepath.Join(procRoot, "stat"))
	if err != nil {
		return Stat{}, fmt.Errorf("cpustat: %w", err)
	}
	return ParseStat(bytes.NewReader(b))
}

// CoreLoad is the busy fraction of one core between two samples.
type CoreLoad struct {
	ID int
	// Busy is 0..1.
	Busy float64
}

// Usage is the CPU use between two samples.
type Usage struct {
	// Cores is in the order of the later sample.
	Cores []CoreLoad
	// Average is the busy fraction of the whole machine (0..1), from the
	// aggregate line, so it stays right even if a core went offline
	// between the samples.
	Average float64
}

// Loads computes per-core and machine busy fractions between two samples.
// Cores are matched by ID; a core missing from prev (just came online)
// gets load 0 because nothing is known about its interval. Counters that
// went backwards (a core's counters reset by hotplug) count as zero
// progress rather than a huge unsigned difference.
func Loads(prev, cur Stat) Usage {
	before := make(map[int]Times, len(prev.Cores))
	for _, c := range prev.Cores {
		before[c.ID] = c.Times
	}
	u := Usage{Cores: make([]CoreLoad, 0, len(cur.Cores))}
	for _, c := range cur.Cores {
		p, ok := before[c.ID]
		load := 0.0
		if ok {
			load = busyFraction(p, c.Times)
		}
		u.Cores = append(u.Cores, CoreLoad{ID: c.ID, Busy: load})
	}
	u.Average = busyFraction(prev.All, cur.All)
	return u
}

func busyFraction(prev, cur Times) float64 {
	busy := sub(cur.BusyTicks(), prev.BusyTicks())
	total := sub(cur.TotalTicks(), prev.TotalTicks())
	if total == 0 {
		return 0
	}
	f := float64(busy) / float64(total)
	if f > 1 { // busy and total can move inconsistently after a reset
		f = 1
	}
	return f
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
