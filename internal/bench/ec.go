package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/reedsolomon"

	"github.com/shardstore/shardstore/internal/cpustat"
)

// ECConfig is a Reed-Solomon geometry: Data data shards plus Parity
// parity shards.
type ECConfig struct {
	Data, Parity int
}

// String formats the config as "M+K".
func (c ECConfig) String() string { return fmt.Sprintf("%d+%d", c.Data, c.Parity) }

// ParseECConfig parses "M+K", e.g. "12+4".
func ParseECConfig(s string) (ECConfig, error) {
	m, k, ok := strings.Cut(strings.TrimSpace(s), "+")
	if !ok {
		return ECConfig{}, fmt.Errorf("erasure config %q: want DATA+PARITY, e.g. 12+4", s)
	}
	d, err := strconv.Atoi(m)
	if err != nil {
		return ECConfig{}, fmt.Errorf("erasure config %q: data shards: %w", s, err)
	}
	p, err := strconv.Atoi(k)
	if err != nil {
		return ECConfig{}, fmt.Errorf("erasure config %q: parity shards: %w", s, err)
	}
	c := ECConfig{Data: d, Parity: p}
	if err := c.validate(); err != nil {
		return ECConfig{}, err
	}
	return c, nil
}

func (c ECConfig) validate() error {
	// GF(2^8) allows 256 shards in total; the classic codec is what the
	// store uses, so larger (Leopard GF16) layouts are out of scope here.
	if c.Data < 1 || c.Parity < 1 || c.Data+c.Parity > 256 {
		return fmt.Errorf("erasure config %s: need data >= 1, parity >= 1, data+parity <= 256", c)
	}
	return nil
}

// DefaultECConfigs are the study's three geometries.
func DefaultECConfigs() []ECConfig {
	return []ECConfig{{12, 4}, {8, 8}, {4, 4}}
}

// ThreadSteps returns 1, 2, 4, ... up to limit, with limit itself added
// when it is not a power of two (so a 6-core machine is measured at 6).
func ThreadSteps(limit int) []int {
	var out []int
	for t := 1; t <= limit; t *= 2 {
		out = append(out, t)
	}
	if limit >= 1 && out[len(out)-1] != limit {
		out = append(out, limit)
	}
	return out
}

// Default sizes of the study: 1 GiB in 1 MiB blocks, far larger than any
// CPU cache, so the numbers include memory bandwidth as a real PUT does.
const (
	DefaultECBlockSize = 1 << 20
	DefaultECBlocks    = 1024
)

// ECOptions configures RunEC. Zero values take the defaults.
type ECOptions struct {
	Configs []ECConfig // default DefaultECConfigs
	Threads []int      // default ThreadSteps(runtime.NumCPU())
	ISAs    []ISA      // default AvailableISAs(); unsupported ones are an error
	// BlockSize is the user data per block (default 1 MiB); each data
	// shard is ceil(BlockSize/Data) bytes, as internal/erasure cuts them.
	BlockSize int
	// Blocks is how many blocks make up the working set (default 1024).
	Blocks int
	// Rounds is how many passes over all blocks one measurement makes
	// (default 1). More rounds mean steadier numbers on a noisy machine.
	Rounds int
	// SkipEncode and SkipReconstruct leave out one kind of operation;
	// Encode still runs once, unmeasured, to give reconstruct valid parity.
	SkipEncode, SkipReconstruct bool
	// MaxLost caps the lost-shard counts measured (default: Parity, i.e.
	// reconstruct with 1..K shards lost).
	MaxLost int
	// Verify zeroes erased shards before reconstructing them (inside the
	// timed part, so it lowers the numbers) and checks every block's
	// parity and that the codec rebuilt into our buffers afterwards. Tests
	// turn it on to prove the bench really reconstructs.
	Verify bool
	// Seed makes the random block contents reproducible.
	Seed uint64
	// ProcRoot is where /proc is mounted, for the CPU columns.
	ProcRoot string
}

// Operation names in ECResult.Op.
const (
	OpEncode      = "encode"
	OpReconstruct = "reconstruct"
)

// ECResult is one measurement.
type ECResult struct {
	ISA    ISA    `json:"isa"`
	Config string `json:"config"`
	Data   int    `json:"data_shards"`
	Parity int    `json:"parity_shards"`
	Op     string `json:"op"`
	// Lost is how many shards were erased before reconstruct (0 for encode).
	Lost    int `json:"lost"`
	Threads int `json:"threads"`
	// Bytes is the user data bytes processed (blocks x block size x
	// rounds); parity and padding are not counted.
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	// GBps is Bytes/Seconds in 10^9 bytes per second; Gbitps is the same
	// in 10^9 bits per second.
	GBps   float64 `json:"gb_per_s"`
	Gbitps float64 `json:"gbit_per_s"`
	// CPUAvg is the machine's average busy fraction (0..1) while this
	// measurement ran, MostConsumed the hottest core groups ("1x98%, 1x3%")
	// and Imbalance the max-core/mean-core ratio.
	CPUAvg       float64 `json:"cpu_avg"`
	MostConsumed string  `json:"most_consumed_cores"`
	Imbalance    float64 `json:"core_imbalance"`
	// ProcessCores is the CPU time this process used divided by wall
	// time: 2.0 means two full cores.
	ProcessCores float64 `json:"process_cores"`
	// GBPerCPUSecond is Bytes per CPU second this process spent (10^9
	// bytes): the cost per byte, which unlike GBps stays meaningful when
	// other programs compete for the cores. 0 when CPU time is unknown.
	GBPerCPUSecond float64 `json:"gb_per_cpu_s"`
}

// Name is the result's operation label: "encode" or "reconstruct-N".
func (r ECResult) Name() string {
	if r.Op == OpReconstruct {
		return fmt.Sprintf("%s-%d", OpReconstruct, r.Lost)
	}
	return r.Op
}

// ECReport is the outcome of RunEC.
type ECReport struct {
	Started    time.Time `json:"started"`
	CPU        string    `json:"cpu"`
	Cores      int       `json:"cores"`
	GOMAXPROCS int       `json:"gomaxprocs"`
	// ISAsAvailable is what the CPU supports; the results cover the ISAs
	// that were asked for.
	ISAsAvailable []ISA      `json:"isas_available"`
	BlockSize     int        `json:"block_size"`
	Blocks        int        `json:"blocks"`
	Rounds        int        `json:"rounds"`
	Results       []ECResult `json:"results"`
}

func (o *ECOptions) fill() error {
	if len(o.Configs) == 0 {
		o.Configs = DefaultECConfigs()
	}
	for _, c := range o.Configs {
		if err := c.validate(); err != nil {
			return err
		}
	}
	if len(o.Threads) == 0 {
		o.Threads = ThreadSteps(runtime.NumCPU())
	}
	for _, t := range o.Threads {
		if t < 1 {
			return fmt.Errorf("thread count %d: must be >= 1", t)
		}
	}
	if len(o.ISAs) == 0 {
		o.ISAs = AvailableISAs()
	}
	for _, isa := range o.ISAs {
		if !isa.Supported() {
			return fmt.Errorf("instruction set %s: not supported by this CPU (available: %v)", isa, AvailableISAs())
		}
	}
	if o.BlockSize == 0 {
		o.BlockSize = DefaultECBlockSize
	}
	if o.Blocks == 0 {
		o.Blocks = DefaultECBlocks
	}
	if o.Rounds == 0 {
		o.Rounds = 1
	}
	if o.BlockSize < 1 || o.Blocks < 1 || o.Rounds < 1 || o.MaxLost < 0 {
		return fmt.Errorf("block size %d, blocks %d, rounds %d, max lost %d: must be positive",
			o.BlockSize, o.Blocks, o.Rounds, o.MaxLost)
	}
	return nil
}

// lostCounts is the list of erasure counts measured for c.
func (o *ECOptions) lostCounts(c ECConfig) []int {
	if o.SkipReconstruct {
		return nil
	}
	n := c.Parity
	if o.MaxLost > 0 && o.MaxLost < n {
		n = o.MaxLost
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// ECMeasurements is how many measurements RunEC will make, for progress.
func ECMeasurements(opts ECOptions) (int, error) {
	if err := opts.fill(); err != nil {
		return 0, err
	}
	total := 0
	for _, c := range opts.Configs {
		perThread := len(opts.lostCounts(c))
		if !opts.SkipEncode {
			perThread++
		}
		total += perThread * len(opts.Threads) * len(opts.ISAs)
	}
	return total, nil
}

// ecSet is the working set of one configuration: every block's shards
// carved out of one arena, so the whole set is one allocation and blocks
// are contiguous in memory as they would be in a pooled buffer.
type ecSet struct {
	cfg       ECConfig
	shardSize int
	blocks    [][][]byte // [block][shard] -> full-capacity slices
	work      [][][]byte // [block][shard] -> what the codec sees; reset per op
}

// ECMemory is about how many bytes RunEC allocates for its buffers, so
// a user can see before a run whether it fits: the working set of the
// largest config, since configs run one after the other and each one's
// arena is released before the next is allocated. Thread counts add
// only goroutine stacks: the threads split one working set between
// them, and the codec rebuilds lost shards into that set in place.
func ECMemory(opts ECOptions) (int64, error) {
	if err := opts.fill(); err != nil {
		return 0, err
	}
	var most int64
	for _, c := range opts.Configs {
		most = max(most, ecSetBytes(c, opts.BlockSize, opts.Blocks))
	}
	return most, nil
}

// ecSetBytes is what newECSet allocates for cfg: the arena of every
// block's shards, and two views (blocks and work) of slice headers.
func ecSetBytes(cfg ECConfig, blockSize, blocks int) int64 {
	const sliceHeader = 24
	shardSize := int64((blockSize + cfg.Data - 1) / cfg.Data)
	shards := int64(cfg.Data + cfg.Parity)
	arena := int64(blocks) * shards * shardSize
	headers := 2 * int64(blocks) * (shards + 1) * sliceHeader
	return arena + headers
}

func newECSet(cfg ECConfig, blockSize, blocks int, rng *rand.ChaCha8) *ecSet {
	ss := (blockSize + cfg.Data - 1) / cfg.Data
	total := cfg.Data + cfg.Parity
	arena := make([]byte, blocks*total*ss)
	s := &ecSet{cfg: cfg, shardSize: ss, blocks: make([][][]byte, blocks), work: make([][][]byte, blocks)}
	for b := range blocks {
		s.blocks[b] = make([][]byte, total)
		s.work[b] = make([][]byte, total)
		for i := range total {
			off := (b*total + i) * ss
			// Three-index slices cap each shard at its own end, so a
			// codec reusing a zero-length shard's capacity cannot run
			// into the neighbour.
			s.blocks[b][i] = arena[off : off+ss : off+ss]
		}
		// Random user data, then zero padding in the last data shard,
		// exactly as a block of blockSize bytes would be split.
		data := arena[b*total*ss : b*total*ss+cfg.Data*ss]
		_, _ = rng.Read(data[:blockSize])
		clear(data[blockSize:])
	}
	return s
}

// lose resets the work views of block b with the first n shards erased.
// Data shards are erased first: that is the degraded read, where the
// codec must rebuild user data, the expensive case. Beyond Data, parity
// shards go too.
func (s *ecSet) lose(b, n int, wipe bool) [][]byte {
	w := s.work[b]
	for i, sh := range s.blocks[b] {
		if i < n {
			if wipe {
				clear(sh)
			}
			w[i] = sh[:0]
		} else {
			w[i] = sh
		}
	}
	return w
}

// RunEC runs the erasure-coding study. progress, if not nil, is called
// after every measurement with the number done and the total. The context
// is checked between blocks, so cancelling stops a run within a block.
func RunEC(ctx context.Context, opts ECOptions, progress func(done, total int)) (ECReport, error) {
	if err := opts.fill(); err != nil {
		return ECReport{}, fmt.Errorf("bench ec: %w", err)
	}
	total, _ := ECMeasurements(opts)
	rep := ECReport{
		Started: time.Now().UTC(), CPU: CPUName(), Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		ISAsAvailable: AvailableISAs(), BlockSize: opts.BlockSize, Blocks: opts.Blocks, Rounds: opts.Rounds,
	}
	rng := rand.NewChaCha8(seed32(opts.Seed))
	done := 0
	for _, cfg := range opts.Configs {
		set := newECSet(cfg, opts.BlockSize, opts.Blocks, rng)
		// One unmeasured encode with the fastest path gives reconstruct
		// valid parity and, just as important, faults in the parity
		// pages: the first pass over fresh memory otherwise measures the
		// kernel zeroing 1 GiB of pages, not the codec.
		primer, err := reedsolomon.New(cfg.Data, cfg.Parity)
		if err != nil {
			return rep, fmt.Errorf("bench ec: encoder %s: %w", cfg, err)
		}
		if err := runPass(ctx, set, primer, 0, runtime.GOMAXPROCS(0), 1, false); err != nil {
			return rep, fmt.Errorf("bench ec: %s priming encode: %w", cfg, err)
		}
		for _, isa := range opts.ISAs {
			// One encoder per (config, ISA), shared by all threads: it is
			// safe for concurrent use and its inversion cache is part of
			// what a server would reuse. MaxGoroutines(1) keeps each call
			// on its caller's thread, so "threads" means exactly our
			// goroutines and not the library's internal fan-out.
			enc, err := reedsolomon.New(cfg.Data, cfg.Parity,
				append(isa.options(), reedsolomon.WithMaxGoroutines(1))...)
			if err != nil {
				return rep, fmt.Errorf("bench ec: encoder %s %s: %w", cfg, isa, err)
			}
			for _, threads := range opts.Threads {
				lost := opts.lostCounts(cfg)
				ops := make([]int, 0, len(lost)+1)
				if !opts.SkipEncode {
					ops = append(ops, 0)
				}
				ops = append(ops, lost...)
				for _, n := range ops {
					r, err := measure(ctx, opts, set, enc, isa, threads, n)
					if err != nil {
						return rep, err
					}
					rep.Results = append(rep.Results, r)
					done++
					if progress != nil {
						progress(done, total)
					}
				}
			}
		}
		// Let the next config's arena reuse this memory instead of
		// holding two working sets (up to 3 GiB) at once.
		set = nil
		debug.FreeOSMemory()
	}
	return rep, nil
}

func seed32(s uint64) [32]byte {
	var b [32]byte
	for i := range 4 {
		v := s + uint64(i)*0x9e3779b97f4a7c15
		for j := range 8 {
			b[i*8+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// measure runs one timed pass of op (lost == 0: encode; else reconstruct
// with lost shards erased) over all blocks with the given thread count.
func measure(ctx context.Context, opts ECOptions, set *ecSet, enc reedsolomon.Encoder, isa ISA, threads, lost int) (ECResult, error) {
	r := ECResult{ISA: isa, Config: set.cfg.String(), Data: set.cfg.Data, Parity: set.cfg.Parity,
		Op: OpEncode, Lost: lost, Threads: threads}
	if lost > 0 {
		r.Op = OpReconstruct
	}
	// Collect garbage from earlier passes now, not inside the timing.
	runtime.GC()
	before, cpuErr := cpustat.TakeMark(opts.ProcRoot)
	start := time.Now()
	err := runPass(ctx, set, enc, lost, threads, opts.Rounds, opts.Verify)
	elapsed := time.Since(start)
	if err != nil {
		return r, fmt.Errorf("bench ec: %s %s %s threads=%d: %w", isa, set.cfg, r.Name(), threads, err)
	}
	if cpuErr == nil {
		// CPU columns are best effort: without /proc they stay empty
		// rather than failing the throughput measurement.
		if after, err := cpustat.TakeMark(opts.ProcRoot); err == nil {
			iv := after.Since(before)
			r.CPUAvg = iv.Average
			r.MostConsumed = iv.MostConsumed()
			if len(iv.Cores) > 0 { // Imbalance of nothing is NaN, which JSON cannot carry
				r.Imbalance = iv.Imbalance()
			}
			r.ProcessCores = iv.ProcessCores
			if cpu := iv.Process.Total().Seconds(); cpu > 0 {
				r.GBPerCPUSecond = float64(int64(opts.BlockSize)*int64(len(set.blocks))*int64(opts.Rounds)) / cpu / 1e9
			}
		}
	}
	r.Bytes = int64(opts.BlockSize) * int64(len(set.blocks)) * int64(opts.Rounds)
	r.Seconds = elapsed.Seconds()
	if r.Seconds > 0 {
		r.GBps = float64(r.Bytes) / r.Seconds / 1e9
		r.Gbitps = r.GBps * 8
	}
	if opts.Verify && lost > 0 {
		for b := range set.blocks {
			for i := range lost {
				// The codec must rebuild into the capacity we handed it;
				// a fresh allocation per call would make the bench
				// measure the allocator and leave our buffers zeroed.
				if w := set.work[b][i]; len(w) != set.shardSize || &w[0] != &set.blocks[b][i][0] {
					return r, fmt.Errorf("bench ec: block %d shard %d was not rebuilt in place", b, i)
				}
			}
			ok, err := enc.Verify(set.blocks[b])
			if err != nil {
				return r, fmt.Errorf("bench ec: verify block %d after %s: %w", b, r.Name(), err)
			}
			if !ok {
				return r, fmt.Errorf("bench ec: block %d does not verify after %s %s %s", b, isa, set.cfg, r.Name())
			}
		}
	}
	return r, nil
}

// errStopped marks a worker that gave up because another one failed.
var errStopped = errors.New("stopped")

// runPass splits the blocks into threads contiguous ranges, one goroutine
// each, released together, and waits for all of them.
func runPass(ctx context.Context, set *ecSet, enc reedsolomon.Encoder, lost, threads, rounds int, wipe bool) error {
	n := len(set.blocks)
	var wg sync.WaitGroup
	errs := make([]error, threads)
	startGate := make(chan struct{})
	var failed sync.Once
	stop := make(chan struct{})
	for t := range threads {
		lo, hi := t*n/threads, (t+1)*n/threads
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-startGate
			for range rounds {
				for b := lo; b < hi; b++ {
					select {
					case <-stop:
						errs[t] = errStopped
						return
					default:
					}
					if err := ctx.Err(); err != nil {
						errs[t] = err
						return
					}
					var err error
					if lost == 0 {
						err = enc.Encode(set.blocks[b])
					} else {
						err = enc.Reconstruct(set.lose(b, lost, wipe))
					}
					if err != nil {
						errs[t] = fmt.Errorf("block %d: %w", b, err)
						failed.Do(func() { close(stop) })
						return
					}
				}
			}
		}()
	}
	close(startGate)
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, errStopped) {
			return err
		}
	}
	return nil
}
