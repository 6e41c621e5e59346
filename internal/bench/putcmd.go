package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/hashing"
)

// parseSizes parses a list flag of byte counts.
func parseSizes(name string, l listFlag) ([]int64, error) {
	var out []int64
	for _, s := range l {
		n, err := ParseSize(s)
		if err != nil {
			return nil, fmt.Errorf("-%s: %w", name, err)
		}
		out = append(out, int64(n))
	}
	return out, nil
}

// parseCounts parses a list flag of positive integers.
func parseCounts(name string, l listFlag) ([]int, error) {
	var out []int
	for _, s := range l {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-%s: %q is not a positive count", name, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// newProgress returns a progress callback drawing a bar on ui.Stderr,
// or nil when ui.ProgressBar says there is no terminal to draw on (or
// quiet); finish clears the bar. Every bench draws its bars through
// here or s3ProgressBar, both gated the same way.
func newProgress(ui CLI, quiet bool, desc string, total int) (progress func(done, total int), finish func()) {
	if !ui.ProgressBar || quiet {
		return nil, func() {}
	}
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(ui.Stderr),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish())
	return func(done, _ int) { _ = bar.Set(done) }, func() { _ = bar.Finish() }
}

// startCPUProfile writes a CPU profile of the run to path (for go tool
// pprof) until the returned stop is called; an empty path does nothing.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		return nil
	}, nil
}

// report is what an engine bench prints.
type report interface {
	WriteJSON(w io.Writer) error
	WriteTable(w io.Writer) error
}

// runAndPrint runs an engine bench of total steps under an optional CPU
// profile, with a progress bar, and prints its report as a table or JSON.
func runAndPrint[R report](ui CLI, quiet bool, profile, desc string, total int, asJSON bool,
	run func(progress func(done, total int)) (R, error)) error {
	stopProfile, err := startCPUProfile(profile)
	if err != nil {
		return err
	}
	progress, finish := newProgress(ui, quiet, desc, total)
	rep, err := run(progress)
	finish()
	if perr := stopProfile(); err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	if asJSON {
		return rep.WriteJSON(ui.Stdout)
	}
	return rep.WriteTable(ui.Stdout)
}

var putCommand = benchCommand{name: "put", usage: "shardstore bench put [flags]",
	about: "Measures the engine's PUT path (no HTTP) for every object size x concurrency x GOMAXPROCS x\n" +
		"hashing policy, each cell on a fresh 12+4 engine: throughput, CPU seconds per GiB and where\n" +
		"the time went (receive, hash, encode, bitrot checksum, write, sync, commit)."}

// putFlags are the flags of `shardstore bench put`.
type putFlags struct {
	sizes, concs, procs, policies listFlag
	drives, parity, repeat        int
	dir, bytes, cpuProfile        string
	loadInterval                  time.Duration
	seed                          uint64
	asJSON, quiet                 bool
}

func (f *putFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.sizes, "size", "object sizes, comma list (default 4MiB,32MiB,128MiB)")
	fs.Var(&f.concs, "concurrency", "concurrent PUTs, comma list (default 1,4,16)")
	fs.Var(&f.procs, "procs", "GOMAXPROCS values, comma list (default 1,2)")
	fs.Var(&f.policies, "policy", "hashing policies, comma list (default inline,pipelined,multibuffer,auto)")
	fs.IntVar(&f.drives, "drives", 16, "drive directories per engine")
	fs.IntVar(&f.parity, "parity", 4, "parity shards")
	fs.StringVar(&f.dir, "dir", DefaultBenchDir(), "where each cell's drive directories are created (tmpfs keeps the disk out of the comparison)")
	fs.StringVar(&f.bytes, "bytes", "1GiB", "bytes written per cell (at least one object per concurrent PUT)")
	fs.IntVar(&f.repeat, "repeat", 1, "run every cell N times and report the median throughput")
	cli.DurationVar(fs, &f.loadInterval, "load-interval", 0, "CPU-load sampling interval for the auto policy, a `DURATION` such as 250ms or 0.25 (seconds) (default 250ms)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed for the random object contents")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON instead of a table")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to `FILE` (go tool pprof)")
}

// options turns the flags into RunPut's options.
func (f *putFlags) options() (opts PutOptions, err error) {
	opts = PutOptions{Drives: f.drives, Parity: f.parity, Dir: f.dir, Repeat: f.repeat, LoadInterval: f.loadInterval, Seed: f.seed}
	if opts.Sizes, err = parseSizes("size", f.sizes); err != nil {
		return opts, err
	}
	if opts.Concurrency, err = parseCounts("concurrency", f.concs); err != nil {
		return opts, err
	}
	if opts.Procs, err = parseCounts("procs", f.procs); err != nil {
		return opts, err
	}
	for _, p := range f.policies {
		pol, err := hashing.ParsePolicy(p)
		if err != nil {
			return opts, fmt.Errorf("-policy: %w", err)
		}
		opts.Policies = append(opts.Policies, pol)
	}
	n, err := ParseSize(f.bytes)
	if err != nil {
		return opts, fmt.Errorf("-bytes: %w", err)
	}
	opts.Bytes = int64(n)
	return opts, nil
}

// RunPutCommand is `shardstore bench put`: it parses args, runs RunPut
// and prints the table (or JSON). It returns flag.ErrHelp after -h, and
// a *cli.UsageError for a flag it cannot use.
func RunPutCommand(ctx context.Context, args []string, ui CLI) error {
	fs := putCommand.flagSet()
	var f putFlags
	f.register(fs)
	if err := putCommand.parse(fs, args, ui.Stderr); err != nil {
		return err
	}
	opts, err := f.options()
	if err != nil {
		return putCommand.usageError(err)
	}
	total, err := PutCells(opts)
	if err != nil {
		return putCommand.usageError(err)
	}
	return runAndPrint(ui, f.quiet, f.cpuProfile, "bench put", total, f.asJSON,
		func(progress func(done, total int)) (PutReport, error) { return RunPut(ctx, opts, progress) })
}
