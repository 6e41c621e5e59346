package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/shardstore/shardstore/internal/ellipses"
	"github.com/shardstore/shardstore/internal/hashing"
)

// Header describes the run and the columns.
func (r DriveReport) Header() string {
	var b strings.Builder
	where := "(none)"
	if len(r.Drives) > 0 {
		where = r.Drives[0]
		if len(r.Drives) > 1 {
			where += " ... " + r.Drives[len(r.Drives)-1]
		}
	}
	fmt.Fprintf(&b, "Drives: %d (%d+%d) %s; hashing policy %s; started %s\n", len(r.Drives), r.Data, r.Parity, where,
		r.Policy, r.Started.Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "CPU: %s, %d cores. GB = 10^9 bytes.\n", r.CPU, r.Cores)
	b.WriteString("CPU AVG, MOST CONSUMED, MAX/MEAN: the whole machine (/proc/stat). CPU s/GiB, PROC: this process (getrusage).\n" +
		"PROC CORES, PROC MAX/MEAN: this process's own load per core (thread time charged to the core it ran on).\n" +
		"CLIENT: cores used on the request threads (body read, encode, inline hash / decode); SERVER: all other threads.\n")
	return b.String()
}

// WriteTable prints the header, one row per measurement and each row's
// busiest threads.
func (r DriveReport) WriteTable(w io.Writer) error {
	if _, err := io.WriteString(w, r.Header()+"\n"); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OP\tQUEUES\tDEPTH\tFAILED\tSIZE\tGB/s\tCPU AVG\tMOST CONSUMED\tMAX/MEAN\tCPU s/GiB\tPROC\tPROC CORES\tPROC MAX/MEAN\tCLIENT\tSERVER")
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%.3f\t%s\t%s\t%.2f\t%.2f\t%.2f\t%s\t%.2f\t%.2f\t%.2f\n",
			res.Op, res.Queues, res.Depth, res.Failed, humanBytes(res.Size), res.GBps,
			percent(res.CPUAvg, res.MostConsumed != ""), orDash(res.MostConsumed), res.Imbalance,
			res.CPUPerGiB, res.ProcessCores, orDash(res.ProcMostConsumed), res.ProcImbalance, res.ClientCores, res.ServerCores)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	fmt.Fprintln(w, "\nBusiest threads per row (cores used):")
	for _, res := range r.Results {
		parts := make([]string, len(res.Threads))
		for i, t := range res.Threads {
			parts[i] = fmt.Sprintf("%s/%d %.2f", t.Name, t.ID, t.Cores)
		}
		fmt.Fprintf(w, "  %s q=%d: %s\n", res.Op, res.Queues, orDash(strings.Join(parts, ", ")))
	}
	return nil
}

// WriteJSON writes the whole report as indented JSON.
func (r DriveReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("writing json: %w", err)
	}
	return nil
}

// RunDriveCommand is `shardstore bench drive [flags] DRIVE...`: it
// parses args, runs RunDrive and prints the table (or JSON). It returns
// flag.ErrHelp after -h.
func RunDriveCommand(ctx context.Context, args []string, cli CLI) error {
	fs := flag.NewFlagSet("bench drive", flag.ContinueOnError)
	fs.SetOutput(cli.Stderr)
	var queues, ops listFlag
	fs.Var(&queues, "queues", "parallel streams, comma list (default 1,2,4,8)")
	fs.Var(&ops, "op", "operations in order, comma list of write,read (default write,read)")
	depth := fs.Int("depth", 1, "outstanding requests per stream")
	size := fs.String("size", "16MiB", "object size")
	failed := fs.Int("failed", 2, "drives taken offline for the reads")
	duration := fs.Duration("duration", 0, "measuring time per row (default 5s)")
	objects := fs.Int("objects", 0, "requests per stream slot per row instead of -duration")
	drives := fs.Int("drives", 16, "temporary drives when no DRIVE is given")
	parity := fs.Int("parity", 0, "parity shards (default: the engine's for the set size)")
	dir := fs.String("dir", DefaultBenchDir(), "where temporary drives go when no DRIVE is given")
	policy := fs.String("policy", "auto", "hashing policy")
	noNames := fs.Bool("no-thread-names", false, "do not run requests on named client threads (no CLIENT/SERVER split)")
	top := fs.Int("threads", 8, "busiest threads listed per row")
	seed := fs.Uint64("seed", 1, "seed for the random object contents")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of a table")
	quiet := fs.Bool("quiet", false, "no progress bar")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `FILE` (go tool pprof)")
	if err := parseFlags(fs, args, "usage: shardstore bench drive [flags] [DRIVE...]\n\n"+
		"Sequential write, then sequential read with -failed drives offline, through the real engine\n"+
		"on DRIVE... (ellipsis patterns like /mnt/d{1...16} expand; default: -drives directories under\n"+
		"a temporary directory in -dir), at every -queues count. Per row: throughput, machine and\n"+
		"process CPU per core in the study's \"most consumed cores\" form, CPU seconds per GiB, and\n"+
		"per-thread attribution. Objects the bench writes on given drives are deleted at the end.", true); err != nil {
		return err
	}
	opts := DriveOptions{Depth: *depth, Failed: *failed, Duration: *duration, Objects: *objects, Drives: *drives,
		Parity: *parity, Dir: *dir, NoThreadNames: *noNames, TopThreads: *top, Seed: *seed}
	if *top == 0 {
		opts.TopThreads = -1 // fill treats 0 as the default; -threads 0 means none
	}
	var err error
	if opts.Policy, err = hashing.ParsePolicy(*policy); err != nil {
		return fmt.Errorf("-policy: %w", err)
	}
	if fs.NArg() > 0 {
		if opts.Paths, err = ellipses.ExpandAll(fs.Args()); err != nil {
			return fmt.Errorf("drives: %w", err)
		}
	}
	n, err := ParseSize(*size)
	if err != nil {
		return fmt.Errorf("-size: %w", err)
	}
	opts.Size = int64(n)
	if opts.Queues, err = parseCounts("queues", queues); err != nil {
		return err
	}
	opts.Ops = ops
	total, err := DriveRows(opts)
	if err != nil {
		return err
	}
	return runAndPrint(cli, *quiet, *cpuProfile, "bench drive", total, *asJSON,
		func(progress func(done, total int)) (DriveReport, error) { return RunDrive(ctx, opts, progress) })
}
