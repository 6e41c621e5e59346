package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardstore/shardstore/internal/cpustat"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/hashing"
)

// Drive bench operations.
const (
	DriveOpWrite = "write"
	DriveOpRead  = "read"
)

// DriveOptions configures RunDrive, the RAID-study reproduction: the
// real engine on the given drives, sequential write and sequential read
// with drives failed, at several queue counts. Zero values take the
// defaults unless said otherwise.
type DriveOptions struct {
	// Paths are the drive directories. Empty: Drives directories under a
	// fresh temporary directory in Dir, removed afterwards. Given ones
	// must be empty or missing, and are left as found (see prepareDirs).
	Paths []string
	// AllowFormatted lets Paths include drives that already belong to a
	// deployment (they hold .shardstore.sys): the bench then runs on that
	// deployment, in a bucket it creates (refused if it exists) and
	// deletes at the end. Without it such drives are refused before
	// anything is written: the bench would otherwise format or join them.
	AllowFormatted bool
	// Dir is where the temporary drives go (default DefaultBenchDir()).
	Dir string
	// Drives is the drive count when Paths is empty (default 16).
	Drives int
	// Parity is the parity shard count; 0 means the engine's default for
	// the set size (4 for 16 drives).
	Parity int
	// Queues are the parallel streams measured (default 1, 2, 4, 8).
	Queues []int
	// Depth is each stream's number of outstanding requests (default 1).
	Depth int
	// Size is the object size (default 16 MiB).
	Size int64
	// Failed is how many drives are taken offline for the reads (0: none;
	// the CLI defaults to 2, the study's case).
	Failed int
	// Duration is each row's measuring time (default 5s); requests in
	// flight at the deadline finish and count.
	Duration time.Duration
	// Objects, when positive, replaces Duration: every request slot does
	// exactly this many requests per row.
	Objects int
	// Ops are the operations measured, in order (default write, read).
	Ops []string
	// Policy is the hashing policy (default auto).
	Policy hashing.Policy
	// NoThreadNames keeps client goroutines off dedicated, named OS
	// threads; the CLIENT and SERVER columns are then not split.
	NoThreadNames bool
	// TopThreads is how many of the busiest threads each row lists
	// (default 8; negative lists none).
	TopThreads int
	// SampleInterval is how often /proc/self/task is read to attribute
	// the process's CPU to cores (default 100ms).
	SampleInterval time.Duration
	// Seed makes the object contents reproducible.
	Seed uint64
	// ProcRoot is where /proc is mounted (default /proc).
	ProcRoot string
}

func (o *DriveOptions) fill() error {
	if o.Dir == "" {
		o.Dir = DefaultBenchDir()
	}
	if o.Drives == 0 {
		o.Drives = 16
	}
	if len(o.Paths) > 0 {
		o.Drives = len(o.Paths)
	}
	if len(o.Queues) == 0 {
		o.Queues = []int{1, 2, 4, 8}
	}
	if o.Depth == 0 {
		o.Depth = 1
	}
	if o.Size == 0 {
		o.Size = 16 << 20
	}
	if o.Duration == 0 {
		o.Duration = 5 * time.Second
	}
	if len(o.Ops) == 0 {
		o.Ops = []string{DriveOpWrite, DriveOpRead}
	}
	if o.Policy == "" {
		o.Policy = hashing.PolicyAuto
	}
	if o.TopThreads == 0 {
		o.TopThreads = 8
	} else if o.TopThreads < 0 {
		o.TopThreads = 0 // negative: list none
	}
	if o.SampleInterval == 0 {
		o.SampleInterval = 100 * time.Millisecond
	}
	for _, q := range o.Queues {
		if q < 1 {
			return fmt.Errorf("queues %d: must be >= 1", q)
		}
	}
	for _, op := range o.Ops {
		if op != DriveOpWrite && op != DriveOpRead {
			return fmt.Errorf("operation %q: want %s or %s", op, DriveOpWrite, DriveOpRead)
		}
	}
	if _, err := hashing.ParsePolicy(string(o.Policy)); err != nil {
		return err
	}
	if o.Depth < 1 || o.Size < 1 || o.Size > engine.MaxPutSize || o.Duration < 0 || o.Objects < 0 || o.Failed < 0 ||
		o.SampleInterval < 0 || o.Drives < 1 {
		return fmt.Errorf("depth %d, size %d, duration %v, objects %d, failed %d: out of range",
			o.Depth, o.Size, o.Duration, o.Objects, o.Failed)
	}
	if o.Failed >= o.Drives {
		return fmt.Errorf("failed drives %d: must be fewer than the %d drives", o.Failed, o.Drives)
	}
	return nil
}

// DriveResult is one row: one operation at one queue count.
type DriveResult struct {
	Op     string `json:"op"`
	Queues int    `json:"queues"`
	Depth  int    `json:"depth"`
	// Failed is how many drives were offline during this row.
	Failed  int     `json:"failed_drives"`
	Size    int64   `json:"size"`
	Objects int     `json:"objects"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	GBps    float64 `json:"gb_per_s"`
	// CPUAvg, MostConsumed and Imbalance are the whole machine's cores
	// from /proc/stat (everything running, not only this process).
	CPUAvg       float64 `json:"cpu_avg"`
	MostConsumed string  `json:"most_consumed_cores"`
	Imbalance    float64 `json:"core_imbalance"`
	// CPUPerGiB is this process's CPU seconds (getrusage) per GiB moved;
	// ProcessCores its CPU time over wall time.
	CPUPerGiB    float64 `json:"cpu_s_per_gib"`
	ProcessCores float64 `json:"process_cores"`
	// ProcMostConsumed and ProcImbalance are this process's own load per
	// core (thread CPU time charged to the core each thread last ran on,
	// sampled every SampleInterval): the spread shardstore achieves,
	// independent of other work on the machine.
	ProcMostConsumed string  `json:"process_most_consumed_cores"`
	ProcImbalance    float64 `json:"process_core_imbalance"`
	// ClientCores is CPU used on the bench's client threads (the
	// caller's goroutine: body read, erasure coding, inline hashing on
	// PUT; decoding on GET); ServerCores on every other thread.
	ClientCores float64       `json:"client_cores"`
	ServerCores float64       `json:"server_cores"`
	Threads     []DriveThread `json:"top_threads"`
}

// DriveReport is the outcome of RunDrive.
type DriveReport struct {
	Started time.Time     `json:"started"`
	CPU     string        `json:"cpu"`
	Cores   int           `json:"cores"`
	Drives  []string      `json:"drives"`
	Data    int           `json:"data_shards"`
	Parity  int           `json:"parity_shards"`
	Policy  string        `json:"hashing_policy"`
	Results []DriveResult `json:"results"`
}

// DriveRows is how many rows RunDrive measures, for progress.
func DriveRows(opts DriveOptions) (int, error) {
	if err := opts.fill(); err != nil {
		return 0, err
	}
	return len(opts.Ops) * len(opts.Queues), nil
}

// RunDrive runs the drive study. progress, if not nil, is called after
// every row.
func RunDrive(ctx context.Context, opts DriveOptions, progress func(done, total int)) (rep DriveReport, err error) {
	if err := opts.fill(); err != nil {
		return DriveReport{}, fmt.Errorf("bench drive: %w", err)
	}
	total, _ := DriveRows(opts)
	rep = DriveReport{Started: time.Now().UTC(), CPU: CPUName(), Cores: runtime.NumCPU(), Policy: string(opts.Policy)}
	dirs, err := prepareDirs(&opts)
	if err != nil {
		return rep, fmt.Errorf("bench drive: %w", err)
	}
	rep.Drives = dirs.paths
	rig, err := openDriveRig(dirs, &opts)
	if err != nil {
		return rep, fmt.Errorf("bench drive: %w", err)
	}
	defer func() {
		if cerr := rig.close(); cerr != nil && err == nil {
			err = fmt.Errorf("bench drive: cleanup: %w", cerr)
		}
	}()
	data := benchData(opts.Size, opts.Seed)
	done := 0
	for _, op := range opts.Ops {
		failed := 0
		if op == DriveOpRead {
			if err := rig.prepareReads(ctx, data, &opts); err != nil {
				return rep, err
			}
			failed = opts.Failed
		}
		rig.setFailed(failed)
		for _, q := range opts.Queues {
			r, err := driveRow(ctx, rig.be.eng, data, &opts, rig.keys, op, q, failed)
			if err != nil {
				return rep, err
			}
			rep.Results = append(rep.Results, r)
			if rep.Data == 0 {
				rep.Data, rep.Parity = rig.geometry(ctx)
			}
			done++
			if progress != nil {
				progress(done, total)
			}
		}
		rig.setFailed(0)
	}
	return rep, nil
}

// driveRig is a drive bench's engine on its drives, with the off
// switches that fail drives, the objects written and the directories to
// restore at the end.
type driveRig struct {
	dirs     *benchDirs
	cache    *drive.IndexCache
	switches []*switchDrive
	healths  []*drive.Health
	be       *benchEngine
	keys     *keySet
}

// openDriveRig opens the drives in dirs and an engine on them. On
// failure everything opened is closed and dirs are restored.
func openDriveRig(dirs *benchDirs, opts *DriveOptions) (*driveRig, error) {
	// One index block cache for all the drives, as a server has.
	r := &driveRig{dirs: dirs, cache: drive.NewIndexCache(64 << 20), keys: newKeySet()}
	drives := make([]drive.Drive, len(dirs.paths))
	shared := drive.NewSharedSync() // and its syncs, as a server does
	for i, p := range dirs.paths {
		l, err := drive.OpenLocal(p, drive.LocalOptions{Cache: r.cache, SharedSync: shared})
		if err != nil {
			return nil, errors.Join(err, r.close())
		}
		s := newSwitchDrive(l)
		r.switches = append(r.switches, s)
		// The health wrapper is what a server puts around every drive
		// (per-operation deadlines, offline state): its cost is part of
		// the engine's. A short probe interval brings a drive switched
		// back on online quickly, so the cleanup reaches every drive.
		h := drive.NewHealth(s, drive.HealthConfig{ProbeInterval: 100 * time.Millisecond})
		r.healths = append(r.healths, h)
		drives[i] = h
	}
	be, err := newBenchEngine(engine.Config{Drives: drives, Parity: opts.Parity}, "", opts.Policy, 250*time.Millisecond, opts.ProcRoot)
	if err != nil {
		return nil, errors.Join(err, r.close())
	}
	r.be = be
	return r, nil
}

// setFailed switches the first n drives off and the others on.
func (r *driveRig) setFailed(n int) {
	for i, s := range r.switches {
		s.SetOffline(i < n)
	}
}

// prepareReads writes objects to read, unmeasured, when no write row
// has left any.
func (r *driveRig) prepareReads(ctx context.Context, data []byte, opts *DriveOptions) error {
	if len(r.keys.list()) > 0 {
		return nil
	}
	if _, err := driveWrite(ctx, r.be.eng, data, opts, r.keys, slicesMax(opts.Queues)*opts.Depth, 2, time.Time{}); err != nil {
		return fmt.Errorf("bench drive: preparing objects to read: %w", err)
	}
	return nil
}

// geometry is the data and parity shard counts the engine chose, as
// recorded in the first object written (0, 0 before any).
func (r *driveRig) geometry(ctx context.Context) (data, parity int) {
	ks := r.keys.list()
	if len(ks) == 0 {
		return 0, 0
	}
	info, err := r.be.eng.HeadObject(ctx, benchBucket, ks[0], engine.GetOptions{})
	if err != nil {
		return 0, 0
	}
	return info.DataShards, info.ParityShards
}

// close brings every drive back online, deletes the bench's objects
// where a deployment stays (formatted drives), closes the engine and
// the drives (releasing their locks) and then restores the directories.
func (r *driveRig) close() error {
	r.setFailed(0)
	if r.be != nil && r.dirs.formatted {
		waitOnline(r.healths, 5*time.Second)
		cleanupBench(r.be.eng, r.keys.list())
	}
	var errs []error
	if r.be != nil {
		errs = append(errs, r.be.close())
	}
	// Closing the health wrappers closes their drives.
	for _, h := range r.healths {
		errs = append(errs, h.Close())
	}
	r.cache.Close()
	errs = append(errs, r.dirs.undo())
	return errors.Join(errs...)
}

func slicesMax(v []int) int {
	m := 0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// keySet records the objects written, for the reads and the cleanup.
type keySet struct {
	mu   sync.Mutex
	keys map[string]bool
}

func newKeySet() *keySet { return &keySet{keys: map[string]bool{}} }

func (k *keySet) add(key string) {
	k.mu.Lock()
	k.keys[key] = true
	k.mu.Unlock()
}

func (k *keySet) list() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]string, 0, len(k.keys))
	for key := range k.keys {
		out = append(out, key)
	}
	sort.Strings(out)
	return out
}

// waitOnline waits (at most limit) until every drive is online again.
func waitOnline(hs []*drive.Health, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		up := true
		for _, h := range hs {
			up = up && h.Online()
		}
		if up {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cleanupBench deletes the bench's objects and bucket, best effort: on
// drives of a deployment that stays, what the bench wrote must go.
func cleanupBench(eng *engine.Engine, keys []string) {
	ctx := context.Background()
	for _, k := range keys {
		_ = eng.DeleteObject(ctx, benchBucket, k)
	}
	_ = eng.DeleteBucket(ctx, benchBucket)
}

// keysPerSlot is how many keys each request slot cycles through when
// writing: enough that reads touch more than one object per slot, few
// enough that the drives hold a bounded amount of data.
const keysPerSlot = 2

// driveRow measures one operation at q queues.
func driveRow(ctx context.Context, eng *engine.Engine, data []byte, opts *DriveOptions, keys *keySet, op string, q, failed int) (DriveResult, error) {
	res := DriveResult{Op: op, Queues: q, Depth: opts.Depth, Failed: failed, Size: opts.Size}
	name := fmt.Sprintf("%s queues=%d depth=%d", op, q, opts.Depth)
	coreIDs := []int{}
	if st, err := cpustat.ReadStat(opts.ProcRoot); err == nil {
		for _, c := range st.Cores {
			coreIDs = append(coreIDs, c.ID)
		}
	}
	runtime.GC()
	ts, tsErr := startThreadSampler(opts.ProcRoot, opts.SampleInterval)
	before, cpuErr := cpustat.TakeMark(opts.ProcRoot)
	var deadline time.Time
	if opts.Objects == 0 {
		deadline = time.Now().Add(opts.Duration)
	}
	slots := q * opts.Depth
	start := time.Now()
	var st *slotRun
	var err error
	if op == DriveOpWrite {
		st, err = driveWrite(ctx, eng, data, opts, keys, slots, opts.Objects, deadline)
	} else {
		st, err = driveRead(ctx, eng, opts, keys.list(), slots, opts.Objects, deadline)
	}
	elapsed := time.Since(start)
	var after cpustat.Mark
	if cpuErr == nil {
		after, cpuErr = cpustat.TakeMark(opts.ProcRoot)
	}
	var tr threadReport
	if tsErr == nil {
		tr, tsErr = ts.finish()
	}
	if st != nil {
		// Client threads stay alive (and countable) until now.
		st.release()
	}
	if err != nil {
		return res, fmt.Errorf("bench drive: %s: %w", name, err)
	}
	res.Objects = int(st.objects.Load())
	res.Bytes = st.bytes.Load()
	res.Seconds = elapsed.Seconds()
	if res.Seconds > 0 {
		res.GBps = float64(res.Bytes) / res.Seconds / 1e9
	}
	if cpuErr == nil {
		iv := after.Since(before)
		res.CPUAvg = iv.Average
		res.MostConsumed = iv.MostConsumed()
		if len(iv.Cores) > 0 {
			res.Imbalance = iv.Imbalance()
		}
		res.ProcessCores = iv.ProcessCores
		if res.Bytes > 0 {
			res.CPUPerGiB = iv.Process.Total().Seconds() / (float64(res.Bytes) / (1 << 30))
		}
	}
	if tsErr == nil {
		var loads []float64
		res.ClientCores, res.ServerCores, res.Threads, loads = tr.summarize(opts.TopThreads, coreIDs)
		if len(loads) > 0 {
			res.ProcMostConsumed = cpustat.MostConsumed(loads)
			res.ProcImbalance = cpustat.Imbalance(loads)
		}
	}
	return res, nil
}

// slotRun is one row's request slots: the counters, and the gate that
// keeps their named client threads alive until the row's CPU use has
// been read (a goroutine that exits while locked takes its thread with
// it, and /proc forgets a dead thread's time).
type slotRun struct {
	objects atomic.Int64
	bytes   atomic.Int64
	wg      sync.WaitGroup
	gate    chan struct{}
	once    sync.Once
}

func (s *slotRun) release() {
	s.once.Do(func() { close(s.gate) })
	s.wg.Wait()
}

// runSlots starts n request slots, each on its own named OS thread
// (unless NoThreadNames), and waits until every one has finished its
// work; the threads then park until release.
func runSlots(ctx context.Context, opts *DriveOptions, n int, work func(ctx context.Context, slot int, run *slotRun) error) (*slotRun, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	run := &slotRun{gate: make(chan struct{})}
	errs := make([]error, n)
	var finished sync.WaitGroup
	for i := range n {
		run.wg.Add(1)
		finished.Add(1)
		go func() {
			defer run.wg.Done()
			if !opts.NoThreadNames {
				// Never unlocked: when this goroutine exits its thread
				// exits too, so the name cannot leak onto a runtime
				// thread that later runs server goroutines.
				runtime.LockOSThread()
				if err := nameThread(opts.ProcRoot, fmt.Sprintf("%s-%d", clientThreadName, i)); err != nil {
					errs[i] = err
					cancel()
					finished.Done()
					<-run.gate
					return
				}
			}
			if err := work(ctx, i, run); err != nil {
				errs[i] = err
				cancel()
			}
			finished.Done()
			<-run.gate
		}()
	}
	finished.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return run, err
		}
	}
	return run, errors.Join(errs...)
}

// more reports whether a slot that has done i requests goes on: a fixed
// count when count > 0, else until the deadline.
func more(ctx context.Context, i, count int, deadline time.Time) bool {
	if ctx.Err() != nil {
		return false
	}
	if count > 0 {
		return i < count
	}
	return time.Now().Before(deadline)
}

// driveWrite PUTs objects from n slots, each cycling over keysPerSlot
// keys of its own.
func driveWrite(ctx context.Context, eng *engine.Engine, data []byte, opts *DriveOptions, keys *keySet, n, count int, deadline time.Time) (*slotRun, error) {
	run, err := runSlots(ctx, opts, n, func(ctx context.Context, slot int, run *slotRun) error {
		for i := 0; more(ctx, i, count, deadline); i++ {
			key := fmt.Sprintf("s%03d-%d", slot, i%keysPerSlot)
			if _, err := eng.PutObject(ctx, benchBucket, key, objectBody(data, opts.Size, slot, i), opts.Size, engine.PutOptions{}); err != nil {
				return fmt.Errorf("put %s: %w", key, err)
			}
			keys.add(key)
			run.objects.Add(1)
			run.bytes.Add(opts.Size)
		}
		return nil
	})
	return run, err
}

// readBufSize is the client's read size: large, as a streaming client's
// socket writes would be, so the bench measures the engine's reads and
// not millions of tiny copies.
const readBufSize = 1 << 20

// driveRead GETs whole objects from n slots; slot i reads keys i, i+n,
// i+2n, ... of the written objects, wrapping around.
func driveRead(ctx context.Context, eng *engine.Engine, opts *DriveOptions, keys []string, n, count int, deadline time.Time) (*slotRun, error) {
	if len(keys) == 0 {
		return nil, errors.New("no objects to read")
	}
	return runSlots(ctx, opts, n, func(ctx context.Context, slot int, run *slotRun) error {
		buf := make([]byte, readBufSize)
		for i := 0; more(ctx, i, count, deadline); i++ {
			key := keys[(slot+i*n)%len(keys)]
			got, err := readObject(ctx, eng, key, buf)
			if err != nil {
				return err
			}
			run.objects.Add(1)
			run.bytes.Add(got)
		}
		return nil
	})
}

func readObject(ctx context.Context, eng *engine.Engine, key string, buf []byte) (int64, error) {
	r, err := eng.GetObject(ctx, benchBucket, key, engine.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("get %s: %w", key, err)
	}
	defer r.Close()
	var got int64
	for {
		n, err := r.Read(buf)
		got += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return got, fmt.Errorf("get %s: %w", key, err)
		}
	}
	if got != r.Length {
		return got, fmt.Errorf("get %s: read %d bytes, want %d", key, got, r.Length)
	}
	return got, nil
}
