package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/schollz/progressbar/v3"
)

// CLI is where a command-line bench writes: results to Stdout, progress
// and diagnostics to Stderr. ProgressBar says whether Stderr is a
// terminal worth drawing a progress bar on.
type CLI struct {
	Stdout, Stderr io.Writer
	ProgressBar    bool
}

// listFlag collects a repeatable flag whose values may also be comma lists.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*l = append(*l, part)
		}
	}
	return nil
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
	if err != nil || n < 1 {
		return 0, fmt.Errorf("size %q: want a positive byte count such as 1048576 or 1MiB", s)
	}
	return n * mult, nil
}

// RunECCommand is `shardstore bench ec`: it parses args, runs RunEC and
// writes the table (or JSON/CSV) and optional chart. It returns
// flag.ErrHelp after printing help for -h.
func RunECCommand(ctx context.Context, args []string, cli CLI) error {
	fs := flag.NewFlagSet("bench ec", flag.ContinueOnError)
	fs.SetOutput(cli.Stderr)
	var configs, threadList, isaList listFlag
	fs.Var(&configs, "config", "erasure config DATA+PARITY; repeatable or comma list (default 12+4,8+8,4+4)")
	fs.Var(&threadList, "threads", "thread counts to measure, comma list (default 1,2,4,... up to -max-threads)")
	maxThreads := fs.Int("max-threads", runtime.NumCPU(), "measure 1,2,4,... up to this many threads (may exceed the core count)")
	fs.Var(&isaList, "isa", "instruction sets to measure, comma list of "+isaNames(AllISAs())+" (default: all this CPU has: "+isaNames(AvailableISAs())+")")
	blockSize := fs.String("block-size", "1MiB", "user data per block")
	blocks := fs.Int("blocks", DefaultECBlocks, "blocks in the working set; 1024 x 1MiB = 1 GiB keeps it out of cache")
	rounds := fs.Int("rounds", 1, "passes over all blocks per measurement")
	maxLost := fs.Int("max-lost", 0, "measure reconstruct with 1..N lost shards (default: up to the parity count)")
	noEncode := fs.Bool("no-encode", false, "skip the encode measurements")
	noReconstruct := fs.Bool("no-reconstruct", false, "skip the reconstruct measurements")
	verify := fs.Bool("verify", false, "wipe lost shards and verify every block after reconstruct (slower; a correctness check)")
	seed := fs.Uint64("seed", 1, "seed for the random block contents")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of a table")
	asCSV := fs.Bool("csv", false, "print the results as CSV instead of a table")
	chart := fs.String("chart", "", "also draw throughput vs threads to `FILE` (.png or .svg)")
	quiet := fs.Bool("quiet", false, "no progress bar")
	if err := parseFlags(fs, args, "usage: shardstore bench ec [flags]\n\n"+
		"Measures Reed-Solomon GF(2^8) encode and reconstruct throughput per erasure config,\n"+
		"thread count and instruction set, with the machine's per-core CPU use.\n"+
		"Throughput counts user data bytes (not parity); GB = 10^9 bytes.", false); err != nil {
		return err
	}
	if *asJSON && *asCSV {
		return errors.New("-json and -csv are exclusive")
	}

	opts := ECOptions{Blocks: *blocks, Rounds: *rounds, MaxLost: *maxLost,
		SkipEncode: *noEncode, SkipReconstruct: *noReconstruct, Verify: *verify, Seed: *seed}
	if opts.SkipEncode && opts.SkipReconstruct {
		return errors.New("-no-encode and -no-reconstruct leave nothing to measure")
	}
	var err error
	if opts.BlockSize, err = ParseSize(*blockSize); err != nil {
		return fmt.Errorf("-block-size: %w", err)
	}
	for _, c := range configs {
		cfg, err := ParseECConfig(c)
		if err != nil {
			return fmt.Errorf("-config: %w", err)
		}
		opts.Configs = append(opts.Configs, cfg)
	}
	for _, t := range threadList {
		n, err := strconv.Atoi(t)
		if err != nil || n < 1 {
			return fmt.Errorf("-threads: %q is not a positive count", t)
		}
		opts.Threads = append(opts.Threads, n)
	}
	if len(opts.Threads) == 0 {
		if *maxThreads < 1 {
			return fmt.Errorf("-max-threads %d: must be >= 1", *maxThreads)
		}
		opts.Threads = ThreadSteps(*maxThreads)
	}
	for _, s := range isaList {
		isa, err := ParseISA(s)
		if err != nil {
			return fmt.Errorf("-isa: %w", err)
		}
		opts.ISAs = append(opts.ISAs, isa)
	}
	chartFormat := ""
	if *chart != "" {
		// Check the extension before a long run, not after.
		if chartFormat, err = ChartFormat(*chart); err != nil {
			return err
		}
	}

	total, err := ECMeasurements(opts)
	if err != nil {
		return err
	}
	var progress func(done, total int)
	if cli.ProgressBar && !*quiet {
		bar := progressbar.NewOptions(total,
			progressbar.OptionSetWriter(cli.Stderr),
			progressbar.OptionSetDescription("bench ec"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish())
		defer func() { _ = bar.Finish() }()
		progress = func(done, _ int) { _ = bar.Set(done) }
	}
	rep, err := RunEC(ctx, opts, progress)
	if err != nil {
		return err
	}

	switch {
	case *asJSON:
		err = rep.WriteJSON(cli.Stdout)
	case *asCSV:
		err = rep.WriteCSV(cli.Stdout)
	default:
		err = rep.WriteTable(cli.Stdout)
	}
	if err != nil {
		return err
	}
	if *chart != "" {
		if err := writeChartFile(rep, *chart, chartFormat); err != nil {
			return err
		}
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
