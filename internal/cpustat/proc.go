package cpustat

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// fallbackClockTicks is USER_HZ on every mainstream Linux architecture;
// it is only used when the auxiliary vector cannot be read.
const fallbackClockTicks = 100

// atClkTck is the auxiliary vector tag carrying USER_HZ (AT_CLKTCK).
const atClkTck = 17

// ClockTicks returns USER_HZ, the unit of the tick counters in /proc,
// read from the process's auxiliary vector (what sysconf(_SC_CLK_TCK)
// does in C) and falling back to 100.
func ClockTicks(procRoot string) int {
	if procRoot == "" {
		procRoot = DefaultProcRoot
	}
	b, err := os.ReadFile(filepath.Join(procRoot, "self", "auxv"))
	if err != nil {
		return fallbackClockTicks
	}
	word := int(unsafe.Sizeof(uintptr(0)))
	for off := 0; off+2*word <= len(b); off += 2 * word {
		var tag, val uint64
		if word == 8 {
			tag = binary.NativeEndian.Uint64(b[off:])
			val = binary.NativeEndian.Uint64(b[off+word:])
		} else {
			tag = uint64(binary.NativeEndian.Uint32(b[off:]))
			val = uint64(binary.NativeEndian.Uint32(b[off+word:]))
		}
		if tag == 0 {
			break
		}
		if tag == atClkTck && val > 0 {
			return int(val)
		}
	}
	return fallbackClockTicks
}

// TaskTimes is the CPU accounting of one process or thread from its
// /proc stat file.
type TaskTimes struct {
	// ID is the pid or tid.
	ID int
	// Name is the comm field (at most 15 bytes, set by the kernel or by
	// prctl(PR_SET_NAME)).
	Name string
	// User and System are cumulative clock ticks.
	User, System uint64
	// LastCPU is the core the task last ran on.
	LastCPU int
}

// ParseTaskStat parses the contents of /proc/PID/stat or
// /proc/PID/task/TID/stat. The comm field may itself contain spaces and
// parentheses, so fields are counted from the last ')'.
func ParseTaskStat(text string) (TaskTimes, error) {
	open := strings.IndexByte(text, '(')
	closing := strings.LastIndexByte(text, ')')
	if open < 0 || closing < open {
		return TaskTimes{}, fmt.Errorf("cpustat: task stat: no (comm) field")
	}
	id, err := strconv.Atoi(strings.TrimSpace(text[:open]))
	if err != nil {
		return TaskTimes{}, fmt.Errorf("cpustat: task stat: bad id: %w", err)
	}
	rest := strings.Fields(text[closing+1:])
	// rest[0] is field 3 (state); utime is field 14, stime 15,
	// processor 39 (1-based, as proc(5) numbers them).
	const utime, stime, processor = 14 - 3, 15 - 3, 39 - 3
	if len(rest) <= stime {
		return TaskTimes{}, fmt.Errorf("cpustat: task stat: %d fields after comm, want at least %d", len(rest), stime+1)
	}
	t := TaskTimes{ID: id, Name: text[open+1 : closing], LastCPU: -1}
	if t.User, err = strconv.ParseUint(rest[utime], 10, 64); err != nil {
		return TaskTimes{}, fmt.Errorf("cpustat: task stat utime: %w", err)
	}
	if t.System, err = strconv.ParseUint(rest[stime], 10, 64); err != nil {
		return TaskTimes{}, fmt.Errorf("cpustat: task stat stime: %w", err)
	}
	if len(rest) > processor {
		if t.LastCPU, err = strconv.Atoi(rest[processor]); err != nil {
			return TaskTimes{}, fmt.Errorf("cpustat: task stat processor: %w", err)
		}
	}
	return t, nil
}

// ReadProcess reads one process's accumulated CPU ticks from
// procRoot/PID/stat; pid 0 means the calling process.
func ReadProcess(procRoot string, pid int) (TaskTimes, error) {
	if procRoot == "" {
		procRoot = DefaultProcRoot
	}
	dir := "self"
	if pid > 0 {
		dir = strconv.Itoa(pid)
	}
	b, err := os.ReadFile(filepath.Join(procRoot, dir, "stat"))
	if err != nil {
		return TaskTimes{}, fmt.Errorf("cpustat: process %s: %w", dir, err)
	}
	t, err := ParseTaskStat(string(b))
	if err != nil {
		return TaskTimes{}, fmt.Errorf("cpustat: process %s: %w", dir, err)
	}
	return t, nil
}

// ReadThreads reads every thread of a process (pid 0: the calling
// process) from procRoot/PID/task/*/stat, sorted by thread id. Threads
// that exit while the directory is being read are skipped.
func ReadThreads(procRoot string, pid int) ([]TaskTimes, error) {
	if procRoot == "" {
		procRoot = DefaultProcRoot
	}
	dir := "self"
	if pid > 0 {
		dir = strconv.Itoa(pid)
	}
	taskDir := filepath.Join(procRoot, dir, "task")
	entries, err := os.ReadDir(taskDir)
	if err != nil {
		return nil, fmt.Errorf("cpustat: threads of %s: %w", dir, err)
	}
	out := make([]TaskTimes, 0, len(entries))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(taskDir, e.Name(), "stat"))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue // the thread exited between ReadDir and ReadFile
		}
		if err != nil {
			return nil, fmt.Errorf("cpustat: thread %s: %w", e.Name(), err)
		}
		t, err := ParseTaskStat(string(b))
		if err != nil {
			return nil, fmt.Errorf("cpustat: thread %s: %w", e.Name(), err)
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b TaskTimes) int { return a.ID - b.ID })
	return out, nil
}

// ThreadUsage is one thread's CPU use between two samples.
type ThreadUsage struct {
	ID      int
	Name    string
	LastCPU int
	// User and System are the CPU time used in the interval.
	User, System time.Duration
	// Cores is (User+System)/interval: 1.0 means one full core.
	Cores float64
}

// ThreadDeltas attributes CPU time to threads between two ReadThreads
// samples taken interval apart, busiest first. Threads born during the
// interval are counted from zero; threads that died are absent (their time
// is lost, as it is for top(1)). ticks is ClockTicks().
func ThreadDeltas(prev, cur []TaskTimes, interval time.Duration, ticks int) []ThreadUsage {
	if ticks <= 0 {
		ticks = fallbackClockTicks
	}
	before := make(map[int]TaskTimes, len(prev))
	for _, t := range prev {
		before[t.ID] = t
	}
	tick := time.Second / time.Duration(ticks)
	out := make([]ThreadUsage, 0, len(cur))
	for _, t := range cur {
		p := before[t.ID] // zero value for new threads
		u := ThreadUsage{ID: t.ID, Name: t.Name, LastCPU: t.LastCPU,
			User:   time.Duration(sub(t.User, p.User)) * tick,
			System: time.Duration(sub(t.System, p.System)) * tick,
		}
		if interval > 0 {
			u.Cores = float64(u.User+u.System) / float64(interval)
		}
		out = append(out, u)
	}
	slices.SortStableFunc(out, func(a, b ThreadUsage) int {
		switch {
		case a.User+a.System > b.User+b.System:
			return -1
		case a.User+a.System < b.User+b.System:
			return 1
		}
		return a.ID - b.ID
	})
	return out
}

// ProcessCPU is cumulative CPU time of a process.
type ProcessCPU struct {
	User, System time.Duration
}

// Total is User+System.
func (p ProcessCPU) Total() time.Duration { return p.User + p.System }

// SelfCPU returns this process's CPU time from getrusage(RUSAGE_SELF),
// which has microsecond resolution, finer than /proc's ticks.
func SelfCPU() (ProcessCPU, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return ProcessCPU{}, fmt.Errorf("cpustat: getrusage: %w", err)
	}
	return ProcessCPU{
		User:   time.Duration(ru.Utime.Nano()),
		System: time.Duration(ru.Stime.Nano()),
	}, nil
}

// PidCPU returns any process's CPU time from /proc/PID/stat.
func PidCPU(procRoot string, pid int) (ProcessCPU, error) {
	t, err := ReadProcess(procRoot, pid)
	if err != nil {
		return ProcessCPU{}, err
	}
	tick := time.Second / time.Duration(ClockTicks(procRoot))
	return ProcessCPU{User: time.Duration(t.User) * tick, System: time.Duration(t.System) * tick}, nil
}
