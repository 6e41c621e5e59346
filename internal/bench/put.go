package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardstore/shardstore/internal/cpustat"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/hashing"
)

// PutOptions configures RunPut, the engine-level PUT pipeline study. Zero
// values take the defaults.
type PutOptions struct {
	// Sizes are the object sizes (default 4, 32 and 128 MiB).
	Sizes []int64
	// Concurrency lists how many PUTs run at once (default 1, 4, 16).
	Concurrency []int
	// Procs lists the GOMAXPROCS values to measure (default 1 and 2).
	// RunPut sets runtime.GOMAXPROCS per cell and restores it afterwards,
	// which affects the whole process: do not run other work beside it.
	Procs []int
	// Policies are the hashing policies compared (default inline,
	// pipelined, multibuffer and auto).
	Policies []hashing.Policy
	// Drives is the drive count (default 16); Parity the parity shards
	// (default 4, i.e. 12+4 on 16 drives).
	Drives, Parity int
	// Dir is where each cell's drive directories are created (a fresh
	// temporary directory per cell, removed afterwards). Default
	// /dev/shm when it exists, so the disk does not cap the comparison,
	// else the system temp directory.
	Dir string
	// Bytes is how much each cell writes (default 1 GiB); every worker
	// writes at least one object, so a cell may write more.
	Bytes int64
	// Repeat runs every cell this many times (default 1) and reports the
	// run with the median throughput; the policies of one (size,
	// concurrency, procs) group are interleaved so that they see the same
	// background load.
	Repeat int
	// LoadInterval is the cpustat sampler interval feeding the hashing
	// engine's Load signal (default 250ms, window 4 intervals).
	LoadInterval time.Duration
	// Seed makes the object contents reproducible.
	Seed uint64
	// ProcRoot is where /proc is mounted (default /proc).
	ProcRoot string
}

// DefaultPutPolicies are the fixed backends and auto.
func DefaultPutPolicies() []hashing.Policy {
	return []hashing.Policy{hashing.PolicyInline, hashing.PolicyPipelined, hashing.PolicyMultibuffer, hashing.PolicyAuto}
}

// DefaultBenchDir is /dev/shm when it is a directory (tmpfs: the
// engine's fsyncs cost nothing and the disk does not cap the numbers),
// else the system temp directory.
func DefaultBenchDir() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

func (o *PutOptions) fill() error {
	if len(o.Sizes) == 0 {
		o.Sizes = []int64{4 << 20, 32 << 20, 128 << 20}
	}
	if len(o.Concurrency) == 0 {
		o.Concurrency = []int{1, 4, 16}
	}
	if len(o.Procs) == 0 {
		o.Procs = []int{1, 2}
	}
	if len(o.Policies) == 0 {
		o.Policies = DefaultPutPolicies()
	}
	for _, p := range o.Policies {
		if _, err := hashing.ParsePolicy(string(p)); err != nil {
			return err
		}
		if p == hashing.PolicyDevice {
			return errors.New("policy device needs an accelerator; this bench measures the CPU backends")
		}
	}
	if o.Drives == 0 {
		o.Drives = 16
	}
	if o.Parity == 0 {
		o.Parity = 4
	}
	if o.Dir == "" {
		o.Dir = DefaultBenchDir()
	}
	if o.Bytes == 0 {
		o.Bytes = 1 << 30
	}
	if o.Repeat == 0 {
		o.Repeat = 1
	}
	if o.LoadInterval == 0 {
		o.LoadInterval = 250 * time.Millisecond
	}
	for _, s := range o.Sizes {
		if s < 1 || s > engine.MaxPutSize {
			return fmt.Errorf("object size %d: must be 1..%d", s, int64(engine.MaxPutSize))
		}
	}
	for _, c := range o.Concurrency {
		if c < 1 {
			return fmt.Errorf("concurrency %d: must be >= 1", c)
		}
	}
	for _, p := range o.Procs {
		if p < 1 {
			return fmt.Errorf("GOMAXPROCS %d: must be >= 1", p)
		}
	}
	if o.Drives < 2 || o.Parity < 1 || o.Parity > o.Drives/2 || o.Bytes < 1 || o.Repeat < 1 || o.LoadInterval < 0 {
		return fmt.Errorf("drives %d, parity %d, bytes %d, repeat %d: need drives >= 2, 1 <= parity <= drives/2, positive bytes and repeat",
			o.Drives, o.Parity, o.Bytes, o.Repeat)
	}
	return nil
}

// PutPhaseCost is engine.PutPhases summed over a cell's PUTs, in seconds
// per GiB written. Receive, Encode, HashWait, Sync and Commit are wall
// time on the request path; Hash, Bitrot and Write are work summed over
// the goroutines that did it (see engine.PutPhases).
type PutPhaseCost struct {
	Receive  float64 `json:"receive"`
	Hash     float64 `json:"hash"`
	HashWait float64 `json:"hash_wait"`
	Encode   float64 `json:"encode"`
	Bitrot   float64 `json:"bitrot"`
	Write    float64 `json:"write"`
	Sync     float64 `json:"sync"`
	Commit   float64 `json:"commit"`
}

// PutResult is one cell of the matrix.
type PutResult struct {
	Size        int64  `json:"size"`
	Concurrency int    `json:"concurrency"`
	Procs       int    `json:"gomaxprocs"`
	Policy      string `json:"policy"`
	Objects     int    `json:"objects"`
	// Bytes written in the measured pass, Seconds its wall time.
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	// GBps is Bytes/Seconds in 10^9 bytes per second.
	GBps float64 `json:"gb_per_s"`
	// CPUPerGiB is this process's CPU seconds (getrusage) per GiB
	// written: the cost per byte, robust to other load on the machine.
	CPUPerGiB float64 `json:"cpu_s_per_gib"`
	// ProcessCores is process CPU time / wall time.
	ProcessCores float64 `json:"process_cores"`
	// CPUAvg and MostConsumed describe the whole machine in the span.
	CPUAvg       float64 `json:"cpu_avg"`
	MostConsumed string  `json:"most_consumed_cores"`
	// Phases is where the PUTs' time went, per GiB.
	Phases PutPhaseCost `json:"phases_s_per_gib"`
	// Backends counts the PUTs per hashing backend that ran their MD5
	// (what auto chose).
	Backends map[string]int `json:"backends"`
	// LaneFill is the multi-lane MD5 service's useful share of its kernel
	// work in the measured pass (1 = every lane of every call carried
	// data), or 0 when it did not run.
	LaneFill float64 `json:"lane_fill,omitempty"`
	// RunsGBps and RunsCPUPerGiB list every repeat; the fields above are
	// from the repeat with the median throughput.
	RunsGBps      []float64 `json:"runs_gb_per_s"`
	RunsCPUPerGiB []float64 `json:"runs_cpu_s_per_gib"`
}

// PutTarget is one comparison of the auto hashing policy with a fixed
// one in one cell (see EvaluatePutTargets): Name completes "auto is
// ...", Cell is the size, concurrency and GOMAXPROCS, Detail the numbers.
type PutTarget struct {
	Name   string `json:"name"`
	Cell   string `json:"cell"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail"`
	// SameBackend is set on a comparison auto lost while running the very
	// backend it was compared with on every PUT: the policy chose what
	// won, and the gap is run-to-run noise, not a worse choice. Pass
	// stays false; the table prints "noise" instead of "SHORT".
	SameBackend bool `json:"same_backend,omitempty"`
}

// PutReport is the outcome of RunPut.
type PutReport struct {
	Started time.Time `json:"started"`
	CPU     string    `json:"cpu"`
	Cores   int       `json:"cores"`
	Dir     string    `json:"dir"`
	Drives  int       `json:"drives"`
	Data    int       `json:"data_shards"`
	Parity  int       `json:"parity_shards"`
	Repeat  int       `json:"repeat"`
	// CellBytes is the target bytes per cell.
	CellBytes int64       `json:"cell_bytes"`
	Results   []PutResult `json:"results"`
	Targets   []PutTarget `json:"targets"`
}

// PutCells is how many measurements RunPut makes, for progress.
func PutCells(opts PutOptions) (int, error) {
	if err := opts.fill(); err != nil {
		return 0, err
	}
	return len(opts.Sizes) * len(opts.Concurrency) * len(opts.Procs) * len(opts.Policies) * opts.Repeat, nil
}

// RunPut runs the PUT pipeline matrix: every size x concurrency x
// GOMAXPROCS x policy cell on a fresh engine. progress, if not nil, is
// called after every measurement.
func RunPut(ctx context.Context, opts PutOptions, progress func(done, total int)) (PutReport, error) {
	if err := opts.fill(); err != nil {
		return PutReport{}, fmt.Errorf("bench put: %w", err)
	}
	total, _ := PutCells(opts)
	rep := PutReport{Started: time.Now().UTC(), CPU: CPUName(), Cores: runtime.NumCPU(), Dir: opts.Dir,
		Drives: opts.Drives, Data: opts.Drives - opts.Parity, Parity: opts.Parity, Repeat: opts.Repeat, CellBytes: opts.Bytes}
	data := benchData(slices.Max(opts.Sizes), opts.Seed)
	done := 0
	for _, size := range opts.Sizes {
		for _, conc := range opts.Concurrency {
			for _, procs := range opts.Procs {
				runs := make([][]PutResult, len(opts.Policies))
				for range opts.Repeat {
					for i, pol := range opts.Policies {
						r, err := runPutCell(ctx, &opts, data, size, conc, procs, pol)
						if err != nil {
							return rep, err
						}
						runs[i] = append(runs[i], r)
						done++
						if progress != nil {
							progress(done, total)
						}
					}
				}
				for _, rs := range runs {
					rep.Results = append(rep.Results, medianPut(rs))
				}
			}
		}
	}
	rep.Targets = EvaluatePutTargets(rep.Results)
	return rep, nil
}

// benchData is the shared object source: random bytes (so nothing can
// compress or dedupe them) with room to start each object at a different
// offset, so small objects do not all come from one cache-hot window.
func benchData(maxSize int64, seed uint64) []byte {
	b := make([]byte, maxSize+benchDataSlack)
	_, _ = rand.NewChaCha8(seed32(seed)).Read(b)
	return b
}

// benchDataSlack is how far object start offsets wander in benchData.
const benchDataSlack = 16 << 20

// objectBody returns a reader over size bytes of data for the i-th object
// of worker w. bytes.Reader hands out slices of the shared buffer, so the
// only copy is the engine's own read into its block (what a network
// receive costs too).
func objectBody(data []byte, size int64, w, i int) *bytes.Reader {
	off := (int64(w)*7919 + int64(i)*4099) * 4096 % benchDataSlack
	return bytes.NewReader(data[off : off+size])
}

// medianPut picks the repeat with the median throughput and records all.
func medianPut(rs []PutResult) PutResult {
	sorted := slices.Clone(rs)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].GBps < sorted[j].GBps })
	m := sorted[(len(sorted)-1)/2]
	m.RunsGBps, m.RunsCPUPerGiB = nil, nil
	for _, r := range rs {
		m.RunsGBps = append(m.RunsGBps, r.GBps)
		m.RunsCPUPerGiB = append(m.RunsCPUPerGiB, r.CPUPerGiB)
	}
	return m
}

// phaseSum accumulates engine.PutPhases while measuring is on.
type phaseSum struct {
	measuring atomic.Bool
	mu        sync.Mutex
	sum       engine.PutPhases
	backends  map[string]int
}

func (p *phaseSum) observe(ph engine.PutPhases) {
	if !p.measuring.Load() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := &p.sum
	s.Bytes += ph.Bytes
	s.Receive += ph.Receive
	s.Hash += ph.Hash
	s.HashWait += ph.HashWait
	s.Encode += ph.Encode
	s.Bitrot += ph.Bitrot
	s.Write += ph.Write
	s.Sync += ph.Sync
	s.Commit += ph.Commit
	if p.backends == nil {
		p.backends = map[string]int{}
	}
	p.backends[ph.Backend]++
}

func (p *phaseSum) perGiB(bytes int64) PutPhaseCost {
	p.mu.Lock()
	defer p.mu.Unlock()
	if bytes <= 0 {
		return PutPhaseCost{}
	}
	g := float64(bytes) / (1 << 30)
	f := func(d time.Duration) float64 { return d.Seconds() / g }
	s := p.sum
	return PutPhaseCost{Receive: f(s.Receive), Hash: f(s.Hash), HashWait: f(s.HashWait), Encode: f(s.Encode),
		Bitrot: f(s.Bitrot), Write: f(s.Write), Sync: f(s.Sync), Commit: f(s.Commit)}
}

// benchEngine is one cell's engine with everything it owns.
type benchEngine struct {
	eng     *engine.Engine
	hasher  *hashing.Engine
	sampler *cpustat.Sampler
	root    string
}

func (b *benchEngine) close() error {
	var errs []error
	if b.eng != nil {
		errs = append(errs, b.eng.Close())
	}
	if b.hasher != nil {
		b.hasher.Close()
	}
	if b.sampler != nil {
		b.sampler.Stop()
	}
	if b.root != "" {
		errs = append(errs, os.RemoveAll(b.root))
	}
	return errors.Join(errs...)
}

// newBenchEngine builds an engine from ecfg (drives, parity, phase
// observer) with the given hashing policy, fed by a CPU-load sampler as a
// server's would be. GOMAXPROCS must already be set: the hashing engine
// sizes its policy and multi-lane services from it. root, when not
// empty, is removed by close.
func newBenchEngine(ecfg engine.Config, root string, pol hashing.Policy, loadInterval time.Duration, procRoot string) (*benchEngine, error) {
	b := &benchEngine{root: root}
	hcfg := hashing.Config{Policy: pol}
	s := cpustat.NewSampler(cpustat.SamplerOptions{Interval: loadInterval, Window: 4 * loadInterval, ProcRoot: procRoot})
	// Without /proc the policy sees an idle machine; that is the hashing
	// engine's documented fallback, so the bench still runs.
	if err := s.Start(); err == nil {
		b.sampler = s
		hcfg.Load = s
	}
	var err error
	if b.hasher, err = hashing.New(hcfg); err != nil {
		b.close()
		return nil, fmt.Errorf("hashing engine: %w", err)
	}
	ecfg.Hashing = b.hasher
	ecfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	// Background healing and scanning would steal CPU from the
	// measurement; the bench heals nothing.
	ecfg.Heal = engine.HealConfig{Disabled: true}
	if b.eng, err = engine.New(ecfg); err != nil {
		b.close()
		return nil, fmt.Errorf("engine: %w", err)
	}
	// The bucket must be new: the bench deletes it and everything in it
	// at the end, so one that exists (on the drives of a deployment that
	// bench drive was allowed to use) is not the bench's to write into.
	if err := b.eng.MakeBucket(context.Background(), benchBucket, engine.BucketOptions{}); err != nil {
		b.close()
		if errors.Is(err, engine.ErrBucketExists) {
			return nil, fmt.Errorf("the deployment on these drives already has a bucket %q; the bench writes only into a bucket it creates: %w", benchBucket, err)
		}
		return nil, fmt.Errorf("make bucket: %w", err)
	}
	return b, nil
}

// tempDrives creates n drive directories under a fresh temporary
// directory in dir and returns that directory and the paths. It makes
// the drive directories itself rather than count on whoever opens them
// to: opening a drive need not create a missing one.
func tempDrives(dir string, n int) (string, []string, error) {
	root, err := os.MkdirTemp(dir, "shardstore-bench-")
	if err != nil {
		return "", nil, fmt.Errorf("drive directory: %w", err)
	}
	paths := make([]string, n)
	for i := range paths {
		paths[i] = filepath.Join(root, fmt.Sprintf("d%d", i+1))
		if err := os.Mkdir(paths[i], 0o755); err != nil {
			os.RemoveAll(root)
			return "", nil, fmt.Errorf("drive directory: %w", err)
		}
	}
	return root, paths, nil
}

const benchBucket = "bench"

// runPutCell measures one cell on a fresh engine.
func runPutCell(ctx context.Context, opts *PutOptions, data []byte, size int64, conc, procs int, pol hashing.Policy) (res PutResult, err error) {
	res = PutResult{Size: size, Concurrency: conc, Procs: procs, Policy: string(pol)}
	cell := fmt.Sprintf("size=%s conc=%d procs=%d policy=%s", humanBytes(size), conc, procs, pol)
	prev := runtime.GOMAXPROCS(procs)
	defer runtime.GOMAXPROCS(prev)
	var phases phaseSum
	root, paths, err := tempDrives(opts.Dir, opts.Drives)
	if err != nil {
		return res, fmt.Errorf("bench put: %s: %w", cell, err)
	}
	be, err := newBenchEngine(engine.Config{Paths: paths, Parity: opts.Parity, PhaseObserver: phases.observe},
		root, pol, opts.LoadInterval, opts.ProcRoot)
	if err != nil {
		os.RemoveAll(root)
		return res, fmt.Errorf("bench put: %s: %w", cell, err)
	}
	defer func() {
		if cerr := be.close(); cerr != nil && err == nil {
			err = fmt.Errorf("bench put: %s: cleanup: %w", cell, cerr)
		}
	}()

	// Warm-up at the cell's concurrency: the engine's pools fill, the
	// load sampler gets its first samples and auto's concurrency window
	// sees the burst, as on a server that has been taking this load.
	warm := min(size, 4<<20)
	if _, err := putPass(ctx, be.eng, data, warm, conc, 1); err != nil {
		return res, fmt.Errorf("bench put: %s: warm-up: %w", cell, err)
	}
	perWorker := int(max(1, (opts.Bytes+size*int64(conc)-1)/(size*int64(conc))))
	runtime.GC()
	lanes0 := be.hasher.Stats().Multibuffer
	before, cpuErr := cpustat.TakeMark(opts.ProcRoot)
	phases.measuring.Store(true)
	start := time.Now()
	n, err := putPass(ctx, be.eng, data, size, conc, perWorker)
	elapsed := time.Since(start)
	phases.measuring.Store(false)
	if err != nil {
		return res, fmt.Errorf("bench put: %s: %w", cell, err)
	}
	res.Objects = n
	res.Bytes = int64(n) * size
	res.Seconds = elapsed.Seconds()
	if res.Seconds > 0 {
		res.GBps = float64(res.Bytes) / res.Seconds / 1e9
	}
	if cpuErr == nil {
		if after, err := cpustat.TakeMark(opts.ProcRoot); err == nil {
			iv := after.Since(before)
			res.CPUAvg = iv.Average
			res.MostConsumed = iv.MostConsumed()
			res.ProcessCores = iv.ProcessCores
			res.CPUPerGiB = iv.Process.Total().Seconds() / (float64(res.Bytes) / (1 << 30))
		}
	}
	res.Phases = phases.perGiB(res.Bytes)
	res.Backends = phases.backends
	if lanes := be.hasher.Stats().Multibuffer; lanes.KernelBlocks > lanes0.KernelBlocks {
		res.LaneFill = float64(lanes.LaneBlocks-lanes0.LaneBlocks) / float64(lanes.KernelBlocks-lanes0.KernelBlocks)
	}
	return res, nil
}

// putPass runs conc workers, each PUTting perWorker objects of size bytes
// to its own key (overwriting, so the drives hold at most two versions
// per worker), and returns how many PUTs completed. The first error stops
// every worker.
func putPass(ctx context.Context, eng *engine.Engine, data []byte, size int64, conc, perWorker int) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var completed atomic.Int64
	errs := make([]error, conc)
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("w%03d", w)
			for i := range perWorker {
				if _, err := eng.PutObject(ctx, benchBucket, key, objectBody(data, size, w, i), size, engine.PutOptions{}); err != nil {
					errs[w] = err
					cancel()
					return
				}
				completed.Add(1)
			}
		}()
	}
	wg.Wait()
	// Report the error that started it, not the cancellations it caused.
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return int(completed.Load()), err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return int(completed.Load()), err
	}
	return int(completed.Load()), nil
}
