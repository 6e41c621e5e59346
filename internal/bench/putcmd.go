package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"

	"github.com/schollz/progressbar/v3"

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

// newProgress returns a progress callback drawing a bar on cli.Stderr,
// or nil when there is no terminal to draw on; finish clears it.
func newProgress(cli CLI, quiet bool, desc string, total int) (progress func(done, total int), finish func()) {
	if !cli.ProgressBar || quiet {
		return nil, func() {}
	}
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(cli.Stderr),
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

// parseFlags gives fs a usage text (usage, then the flag list), parses
// args and, unless positional, refuses arguments left after the flags.
// The bench subcommands share it.
func parseFlags(fs *flag.FlagSet, args []string, usage string, positional bool) error {
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage+"\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !positional && fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return nil
}

// runAndPrint runs an engine bench of total steps under an optional CPU
// profile, with a progress bar, and prints its report as a table or JSON.
func runAndPrint[R report](cli CLI, quiet bool, profile, desc string, total int, asJSON bool,
	run func(progress func(done, total int)) (R, error)) error {
	stopProfile, err := startCPUProfile(profile)
	if err != nil {
		return err
	}
	progress, finish := newProgress(cli, quiet, desc, total)
	rep, err := run(progress)
	finish()
	if perr := stopProfile(); err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	if asJSON {
		return rep.WriteJSON(cli.Stdout)
	}
	return rep.WriteTable(cli.Stdout)
}

// RunPutCommand is `shardstore bench put`: it parses args, runs RunPut
// and prints the table (or JSON). It returns flag.ErrHelp after -h.
func RunPutCommand(ctx context.Context, args []string, cli CLI) error {
	fs := flag.NewFlagSet("bench put", flag.ContinueOnError)
	fs.SetOutput(cli.Stderr)
	var sizes, concs, procs, policies listFlag
	fs.Var(&sizes, "size", "object sizes, comma list (default 4MiB,32MiB,128MiB)")
	fs.Var(&concs, "concurrency", "concurrent PUTs, comma list (default 1,4,16)")
	fs.Var(&procs, "procs", "GOMAXPROCS values, comma list (default 1,2)")
	fs.Var(&policies, "policy", "hashing policies, comma list (default inline,pipelined,multibuffer,auto)")
	drives := fs.Int("drives", 16, "drive directories per engine")
	parity := fs.Int("parity", 4, "parity shards")
	dir := fs.String("dir", DefaultBenchDir(), "where each cell's drive directories are created (tmpfs keeps the disk out of the comparison)")
	cellBytes := fs.String("bytes", "1GiB", "bytes written per cell (at least one object per concurrent PUT)")
	repeat := fs.Int("repeat", 1, "run every cell N times and report the median throughput")
	loadInterval := fs.Duration("load-interval", 0, "CPU-load sampling interval for the auto policy (default 250ms)")
	seed := fs.Uint64("seed", 1, "seed for the random object contents")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of a table")
	quiet := fs.Bool("quiet", false, "no progress bar")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `FILE` (go tool pprof)")
	if err := parseFlags(fs, args, "usage: shardstore bench put [flags]\n\n"+
		"Measures the engine's PUT path (no HTTP) for every object size x concurrency x GOMAXPROCS x\n"+
		"hashing policy, each cell on a fresh 12+4 engine: throughput, CPU seconds per GiB and where\n"+
		"the time went (receive, hash, encode, bitrot checksum, write, sync, commit).", false); err != nil {
		return err
	}
	opts := PutOptions{Drives: *drives, Parity: *parity, Dir: *dir, Repeat: *repeat, LoadInterval: *loadInterval, Seed: *seed}
	var err error
	if opts.Sizes, err = parseSizes("size", sizes); err != nil {
		return err
	}
	if opts.Concurrency, err = parseCounts("concurrency", concs); err != nil {
		return err
	}
	if opts.Procs, err = parseCounts("procs", procs); err != nil {
		return err
	}
	for _, p := range policies {
		pol, err := hashing.ParsePolicy(p)
		if err != nil {
			return fmt.Errorf("-policy: %w", err)
		}
		opts.Policies = append(opts.Policies, pol)
	}
	n, err := ParseSize(*cellBytes)
	if err != nil {
		return fmt.Errorf("-bytes: %w", err)
	}
	opts.Bytes = int64(n)
	total, err := PutCells(opts)
	if err != nil {
		return err
	}
	return runAndPrint(cli, *quiet, *cpuProfile, "bench put", total, *asJSON,
		func(progress func(done, total int)) (PutReport, error) { return RunPut(ctx, opts, progress) })
}
