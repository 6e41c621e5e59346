package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/cpustat"
)

// clientThreadName is the name (comm) the drive bench gives the OS
// threads its client goroutines are locked to, so /proc/self/task tells
// the work done in client context (which in the engine includes reading
// the body, erasure coding and inline hashing: they run on the caller's
// goroutine) from the work of the engine's own goroutines (drive writers,
// hashers, readers), which run on the Go runtime's other threads.
const clientThreadName = "ss-client"

// nameThread sets the calling OS thread's name. The caller must have
// locked its goroutine to the thread (runtime.LockOSThread) first.
func nameThread(procRoot, name string) error {
	if procRoot == "" {
		procRoot = cpustat.DefaultProcRoot
	}
	// /proc/thread-self/comm is the thread's own name, writable by the
	// thread itself; it avoids a raw prctl.
	if err := os.WriteFile(filepath.Join(procRoot, "thread-self", "comm"), []byte(name), 0); err != nil {
		return fmt.Errorf("naming thread: %w", err)
	}
	return nil
}

// threadSampler reads /proc/self/task periodically during a measurement.
// Each thread's CPU time between two samples is charged to the core it
// last ran on, which estimates this process's own per-core load: on a
// shared machine /proc/stat's per-core numbers include everybody else.
type threadSampler struct {
	procRoot string
	ticks    int
	start    time.Time
	first    []cpustat.TaskTimes
	// mainComm is the name of the process's main thread: the binary's
	// name, which every thread the Go runtime starts inherits.
	mainComm string

	mu      sync.Mutex
	prev    []cpustat.TaskTimes
	perCore map[int]time.Duration

	stop, done chan struct{}
}

func startThreadSampler(procRoot string, interval time.Duration) (*threadSampler, error) {
	first, err := cpustat.ReadThreads(procRoot, 0)
	if err != nil {
		return nil, err
	}
	t := &threadSampler{procRoot: procRoot, ticks: cpustat.ClockTicks(procRoot), start: time.Now(), first: first,
		mainComm: mainThreadName(first), prev: first, perCore: map[int]time.Duration{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tk.C:
				// A failed read keeps the previous sample; the next one
				// then covers both intervals.
				_ = t.sample()
			}
		}
	}()
	return t, nil
}

func (t *threadSampler) sample() error {
	cur, err := cpustat.ReadThreads(t.procRoot, 0)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, u := range cpustat.ThreadDeltas(t.prev, cur, 0, t.ticks) {
		if d := u.User + u.System; d > 0 && u.LastCPU >= 0 {
			t.perCore[u.LastCPU] += d
		}
	}
	t.prev = cur
	return nil
}

// mainThreadName is the name of the thread whose id is the process id
// (the main thread), or "" when threads is not this process's.
func mainThreadName(threads []cpustat.TaskTimes) string {
	pid := os.Getpid()
	for _, t := range threads {
		if t.ID == pid {
			return t.Name
		}
	}
	return ""
}

// threadReport is what one measurement's threads did.
type threadReport struct {
	elapsed  time.Duration
	threads  []cpustat.ThreadUsage // busiest first
	perCore  map[int]time.Duration
	mainComm string
}

// finish stops sampling, takes a last sample and returns the totals.
func (t *threadSampler) finish() (threadReport, error) {
	close(t.stop)
	<-t.done
	err := t.sample()
	t.mu.Lock()
	defer t.mu.Unlock()
	el := time.Since(t.start)
	return threadReport{elapsed: el, threads: cpustat.ThreadDeltas(t.first, t.prev, el, t.ticks), perCore: t.perCore,
		mainComm: t.mainComm}, err
}

// DriveThread is one thread's share of a measurement.
type DriveThread struct {
	// ID is the thread id, a detail: Go runtime threads are
	// interchangeable, so which one did the work says little.
	ID int `json:"tid"`
	// Name is the thread's name (comm) in /proc.
	Name string `json:"name"`
	// Role is "client" for the bench's named client threads, "server"
	// for every other thread of the process (the engine's goroutines,
	// the Go runtime and GC): the CLIENT and SERVER columns.
	Role string `json:"role"`
	// Label says what the thread does, for people: threadClientLabel,
	// threadRuntimeLabel, or "thread NAME" for a thread that named
	// itself (one a C library started, say).
	Label string  `json:"label"`
	Cores float64 `json:"cores"`
}

// Thread labels. A client thread runs one request stream's calls into
// the engine, and with them the work the engine does on the caller's
// goroutine: reading the body, erasure coding and inline hashing on
// PUT, decoding on GET. Every other Go thread carries the name of the
// binary: the runtime multiplexes the engine's own goroutines (drive
// writers, hashers, readers) and the garbage collector over them, so
// none of them has a role of its own.
const (
	threadClientLabel  = "client request"
	threadRuntimeLabel = "engine/Go runtime"
)

func threadRole(name string) string {
	if strings.HasPrefix(name, clientThreadName) {
		return "client"
	}
	return "server"
}

// threadLabel names a thread's role from its name; mainComm is the
// process's main thread name ("" when unknown: then every thread that
// is not a client is taken for a Go runtime thread).
func threadLabel(name, mainComm string) string {
	switch {
	case strings.HasPrefix(name, clientThreadName):
		return threadClientLabel
	case mainComm == "" || name == mainComm:
		return threadRuntimeLabel
	}
	return "thread " + name
}

// summarize splits the threads' CPU into client and server cores, lists
// the top n threads, and turns per-core time into busy fractions over
// the given cores (cores with no samples count as idle).
func (r threadReport) summarize(n int, coreIDs []int) (client, server float64, top []DriveThread, loads []float64) {
	for _, u := range r.threads {
		role := threadRole(u.Name)
		if role == "client" {
			client += u.Cores
		} else {
			server += u.Cores
		}
		if len(top) < n && u.User+u.System > 0 {
			top = append(top, DriveThread{ID: u.ID, Name: u.Name, Role: role, Label: threadLabel(u.Name, r.mainComm), Cores: u.Cores})
		}
	}
	seen := map[int]bool{}
	ids := append([]int(nil), coreIDs...)
	for _, id := range ids {
		seen[id] = true
	}
	for id := range r.perCore {
		if !seen[id] {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	for _, id := range ids {
		f := 0.0
		if r.elapsed > 0 {
			f = float64(r.perCore[id]) / float64(r.elapsed)
		}
		loads = append(loads, min(f, 1))
	}
	return client, server, top, loads
}
