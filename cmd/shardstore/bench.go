package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"

	"github.com/shardstore/shardstore/internal/bench"
	"github.com/shardstore/shardstore/internal/cli"
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
	fmt.Fprintln(w, "usage: "+benchUsageLine+"\n\nbenches:")
	cmds := benchCommands()
	for _, n := range benchNames() {
		fmt.Fprintf(w, "  %-6s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nrun 'shardstore bench NAME -h' for a bench's flags")
}

// benchUsageLine is the short usage main prints under a usage error.
const benchUsageLine = "shardstore bench NAME [flags]"

func runBench(args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		benchUsage(os.Stderr)
		return flag.ErrHelp
	}
	if len(args) == 0 {
		return cli.Usagef(benchUsageLine, "shardstore bench -h", "missing bench name (one of %s)", strings.Join(benchNames(), ", "))
	}
	cmd, ok := benchCommands()[args[0]]
	if !ok {
		return cli.Usagef(benchUsageLine, "shardstore bench -h", "unknown bench %q (benches: %s)", args[0], strings.Join(benchNames(), ", "))
	}
	if cmd.run == nil {
		return fmt.Errorf("%s: not yet written", args[0])
	}
	// Ctrl-C stops a long bench between blocks and still exits cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return benchError(args[0], cmd.run(ctx, args[1:]))
}

// benchNames lists the benches, sorted.
func benchNames() []string {
	cmds := benchCommands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// benchError prefixes a bench's error with its name. A usage error
// stays one, so main still prints it once with the bench's short usage.
func benchError(name string, err error) error {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	var ue *cli.UsageError
	if errors.As(err, &ue) {
		return &cli.UsageError{Err: fmt.Errorf("%s: %w", name, ue.Err), Usage: ue.Usage, Help: ue.Help}
	}
	return prefixedError{err: err, name: name}
}

// prefixedError names the bench once: the bench library already starts
// its errors with "bench NAME: ", which main's "shardstore bench: "
// would otherwise repeat.
type prefixedError struct {
	err  error
	name string
}

func (e prefixedError) Error() string {
	return e.name + ": " + strings.TrimPrefix(e.err.Error(), "bench "+e.name+": ")
}

func (e prefixedError) Unwrap() error { return e.err }

func runBenchEC(ctx context.Context, args []string) error {
	return bench.RunECCommand(ctx, args, benchCLI())
}

func runBenchPut(ctx context.Context, args []string) error {
	return bench.RunPutCommand(ctx, args, benchCLI())
}

func runBenchDrive(ctx context.Context, args []string) error {
	return bench.RunDriveCommand(ctx, args, benchCLI())
}

// benchCLI is where every bench writes: results to stdout, progress
// bars to stderr only when it is a terminal (not a pipe, a log file or
// /dev/null).
func benchCLI() bench.CLI {
	return bench.CLI{Stdout: os.Stdout, Stderr: os.Stderr, ProgressBar: cli.IsTerminal(os.Stderr)}
}
