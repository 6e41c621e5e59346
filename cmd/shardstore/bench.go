package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"

	"github.com/shardstore/shardstore/internal/bench"
)

// benchCommand is one `shardstore bench NAME` study; run gets the
// arguments after NAME.
type benchCommand struct {
	summary string
	run     func(ctx context.Context, args []string) error
}

// benchCommands is the dispatch table. To add a bench, add a line here
// and implement it in internal/bench; nil run means not written yet.
func benchCommands() map[string]benchCommand {
	return map[string]benchCommand{
		"ec":    {"Reed-Solomon encode/reconstruct throughput per config, thread count and instruction set", runBenchEC},
		"put":   {"engine PUT pipeline per object size, concurrency, GOMAXPROCS and hashing policy", runBenchPut},
		"drive": {"sequential write and degraded read on the given drives, with per-core and per-thread CPU", runBenchDrive},
		"s3":    {"PUT/GET/mixed/small-object load against any S3 endpoint: throughput, latency, TTFB, server CPU/GiB", func(ctx context.Context, args []string) error { return bench.RunS3Command(ctx, args, benchCLI()) }},
	}
}

func benchUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: shardstore bench NAME [flags]\n\nbenches:")
	cmds := benchCommands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-6s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nrun 'shardstore bench NAME -h' for a bench's flags")
}

func runBench(args []string) error {
	if len(args) == 0 {
		benchUsage(os.Stderr)
		return fmt.Errorf("missing bench name")
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		benchUsage(os.Stderr)
		return flag.ErrHelp
	}
	cmd, ok := benchCommands()[args[0]]
	if !ok {
		benchUsage(os.Stderr)
		return fmt.Errorf("unknown bench %q", args[0])
	}
	if cmd.run == nil {
		return fmt.Errorf("%s: not yet written", args[0])
	}
	// Ctrl-C stops a long bench between blocks and still exits cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := cmd.run(ctx, args[1:]); err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	return nil
}

func runBenchEC(ctx context.Context, args []string) error {
	return bench.RunECCommand(ctx, args, bench.CLI{
		Stdout:      os.Stdout,
		Stderr:      os.Stderr,
		ProgressBar: isTerminal(os.Stderr),
	})
}

func runBenchPut(ctx context.Context, args []string) error {
	return bench.RunPutCommand(ctx, args, benchCLI())
}

func runBenchDrive(ctx context.Context, args []string) error {
	return bench.RunDriveCommand(ctx, args, benchCLI())
}

// benchCLI is where every bench writes: results to stdout, progress to
// stderr when it is a terminal.
func benchCLI() bench.CLI {
	return bench.CLI{Stdout: os.Stdout, Stderr: os.Stderr, ProgressBar: isTerminal(os.Stderr)}
}

// isTerminal reports whether f is a character device (a TTY), where a
// progress bar helps; in a pipe or a log file it would be noise.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
