package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// CLI is where a command-line bench writes: results to Stdout, progress
// and diagnostics to Stderr. ProgressBar says whether Stderr is a
// terminal worth drawing a progress bar on (cli.IsTerminal); every bench
// draws bars only when it is set, never in a pipe or a log file.
type CLI struct {
	Stdout, Stderr io.Writer
	ProgressBar    bool
}

// ParseSize reads a byte count: plain digits, or with a K/KiB/M/MiB/G/GiB
// suffix (all binary; KB/MB/GB are accepted as the same binary units
// because block sizes are always powers of two in practice).
func ParseSize(s string) (int, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := 1
	for _, suf := range []struct {
		name string
		mult int
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, suf.name) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, suf.name)), suf.mult
			break
		}
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 1 || n > math.MaxInt/mult {
		return 0, fmt.Errorf("size %q: want a positive byte count such as 1048576 or 1MiB", s)
	}
	return n * mult, nil
}

var ecCommand = benchCommand{name: "ec", usage: "shardstore bench ec [flags]",
	about: "Measures Reed-Solomon GF(2^8) encode and reconstruct throughput per erasure config,\n" +
		"thread count and instruction set, with the machine's per-core CPU use.\n" +
		"Throughput counts user data bytes (not parity); GB = 10^9 bytes."}

// ecFlags are the flags of `shardstore bench ec`.
type ecFlags struct {
	configs, threads, isas       listFlag
	maxThreads, blocks, rounds   int
	maxLost                      int
	blockSize, chart             string
	noEncode, noReconstruct      bool
	verify, asJSON, asCSV, quiet bool
	seed                         uint64
}

func (f *ecFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.configs, "config", "erasure config DATA+PARITY; repeatable or comma list (default 12+4,8+8,4+4)")
	fs.Var(&f.threads, "threads", "thread counts to measure, comma list (default 1,2,4,... up to -max-threads)")
	fs.IntVar(&f.maxThreads, "max-threads", runtime.NumCPU(), "measure 1,2,4,... up to this many threads (may exceed the core count)")
	fs.Var(&f.isas, "isa", "instruction sets to measure, comma list of "+isaNames(AllISAs())+" (default: all this CPU has: "+isaNames(AvailableISAs())+")")
	fs.StringVar(&f.blockSize, "block-size", "1MiB", "user data per block")
	fs.IntVar(&f.blocks, "blocks", DefaultECBlocks, "blocks in the working set; 1024 x 1MiB = 1 GiB keeps it out of cache")
	fs.IntVar(&f.rounds, "rounds", 1, "passes over all blocks per measurement")
	fs.IntVar(&f.maxLost, "max-lost", 0, "measure reconstruct with 1..N lost shards (default: up to the parity count)")
	fs.BoolVar(&f.noEncode, "no-encode", false, "skip the encode measurements")
	fs.BoolVar(&f.noReconstruct, "no-reconstruct", false, "skip the reconstruct measurements")
	fs.BoolVar(&f.verify, "verify", false, "wipe lost shards and verify every block after reconstruct (slower; a correctness check)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed for the random block contents")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON instead of a table")
	fs.BoolVar(&f.asCSV, "csv", false, "print the results as CSV instead of a table")
	fs.StringVar(&f.chart, "chart", "", "also draw throughput vs threads to `FILE` (.png or .svg)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar")
}

// options turns the flags into RunEC's options; chartFormat is the
// chart's format, checked before a long run rather than after it.
func (f *ecFlags) options() (opts ECOptions, chartFormat string, err error) {
	if f.asJSON && f.asCSV {
		return opts, "", errors.New("-json and -csv are exclusive")
	}
	opts = ECOptions{Blocks: f.blocks, Rounds: f.rounds, MaxLost: f.maxLost,
		SkipEncode: f.noEncode, SkipReconstruct: f.noReconstruct, Verify: f.verify, Seed: f.seed}
	if opts.SkipEncode && opts.SkipReconstruct {
		return opts, "", errors.New("-no-encode and -no-reconstruct leave nothing to measure")
	}
	if opts.BlockSize, err = ParseSize(f.blockSize); err != nil {
		return opts, "", fmt.Errorf("-block-size: %w", err)
	}
	for _, c := range f.configs {
		cfg, err := ParseECConfig(c)
		if err != nil {
			return opts, "", fmt.Errorf("-config: %w", err)
		}
		opts.Configs = append(opts.Configs, cfg)
	}
	if opts.Threads, err = parseCounts("threads", f.threads); err != nil {
		return opts, "", err
	}
	if len(opts.Threads) == 0 {
		if f.maxThreads < 1 {
			return opts, "", fmt.Errorf("-max-threads %d: must be >= 1", f.maxThreads)
		}
		opts.Threads = ThreadSteps(f.maxThreads)
	}
	for _, s := range f.isas {
		isa, err := ParseISA(s)
		if err != nil {
			return opts, "", fmt.Errorf("-isa: %w", err)
		}
		opts.ISAs = append(opts.ISAs, isa)
	}
	if f.chart != "" {
		if chartFormat, err = ChartFormat(f.chart); err != nil {
			return opts, "", err
		}
	}
	return opts, chartFormat, nil
}

// RunECCommand is `shardstore bench ec`: it parses args, runs RunEC and
// writes the table (or JSON/CSV) and optional chart. It returns
// flag.ErrHelp after printing help for -h, and a *cli.UsageError for a
// flag it cannot use.
func RunECCommand(ctx context.Context, args []string, ui CLI) error {
	fs := ecCommand.flagSet()
	var f ecFlags
	f.register(fs)
	if err := ecCommand.parse(fs, args, ui.Stderr); err != nil {
		return err
	}
	opts, chartFormat, err := f.options()
	if err != nil {
		return ecCommand.usageError(err)
	}
	total, err := ECMeasurements(opts)
	if err != nil {
		return ecCommand.usageError(err)
	}
	fmt.Fprintln(ui.Stderr, memoryNote(opts))
	progress, finish := newProgress(ui, f.quiet, "bench ec", total)
	rep, err := RunEC(ctx, opts, progress)
	finish()
	if err != nil {
		return err
	}
	if w := shortWindowWarning(rep.Results, minCPUWindow(opts.ProcRoot)); w != "" {
		fmt.Fprintln(ui.Stderr, w)
	}
	switch {
	case f.asJSON:
		err = rep.WriteJSON(ui.Stdout)
	case f.asCSV:
		err = rep.WriteCSV(ui.Stdout)
	default:
		err = rep.WriteTable(ui.Stdout)
	}
	if err != nil {
		return err
	}
	if f.chart != "" {
		return writeChartFile(rep, f.chart, chartFormat)
	}
	return nil
}

func writeChartFile(rep ECReport, path, format string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("chart: closing %s: %w", path, cerr)
		}
	}()
	return rep.WriteChart(f, format)
}

func isaNames(isas []ISA) string {
	s := make([]string, len(isas))
	for i, isa := range isas {
		s[i] = string(isa)
	}
	return strings.Join(s, ",")
}
