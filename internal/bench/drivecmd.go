package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shardstore/shardstore/internal/cli"
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
		"CLIENT: cores used on the request threads (body read, encode, inline hash / decode); SERVER: all other threads\n" +
		"(the engine's goroutines, the Go runtime and the garbage collector).\n")
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
	fmt.Fprintln(w, "\nBusiest threads per row, by role (cores each, busiest first):\n"+
		"  "+threadClientLabel+": a request stream's own thread (body read, erasure coding, inline hashing; decoding on reads);\n"+
		"  "+threadRuntimeLabel+": the Go runtime's shared threads, running the engine's drive writers, hashers and\n"+
		"  readers and the garbage collector; they are interchangeable, so only their loads are listed.")
	for _, res := range r.Results {
		fmt.Fprintf(w, "  %s q=%d: %s\n", res.Op, res.Queues, orDash(threadGroups(res.Threads)))
	}
	return nil
}

// threadGroups lists threads by label, each label once with its
// threads' loads, in the order the busiest of each appears:
// "client request 0.62, 0.60; engine/Go runtime 0.31, 0.12".
func threadGroups(threads []DriveThread) string {
	var order []string
	loads := map[string][]string{}
	for _, t := range threads {
		label := t.Label
		if label == "" { // unlabelled (built by hand): the name is all there is
			label = t.Name
		}
		if _, ok := loads[label]; !ok {
			order = append(order, label)
		}
		loads[label] = append(loads[label], fmt.Sprintf("%.2f", t.Cores))
	}
	groups := make([]string, len(order))
	for i, label := range order {
		groups[i] = label + " " + strings.Join(loads[label], ", ")
	}
	return strings.Join(groups, "; ")
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

var driveCommand = benchCommand{name: "drive", usage: "shardstore bench drive [flags] [DRIVE...]", positional: true,
	about: "Sequential write, then sequential read with -failed drives offline, through the real engine\n" +
		"on DRIVE... (ellipsis patterns like /mnt/d{1...16} expand; default: -drives directories under\n" +
		"a temporary directory in -dir), at every -queues count. Per row: throughput, machine and\n" +
		"process CPU per core in the study's \"most consumed cores\" form, CPU seconds per GiB, and\n" +
		"per-thread attribution.\n\n" +
		"The bench formats the drives as a deployment of its own. Each DRIVE must be an empty\n" +
		"directory or not exist yet; afterwards it is left as found: directories the bench created\n" +
		"are removed, and an empty one is emptied again. A drive that already belongs to a\n" +
		"deployment (it holds " + driveSysDir + ") is refused unless -allow-formatted."}

// driveFlags are the flags of `shardstore bench drive`.
type driveFlags struct {
	queues, ops                            listFlag
	depth, failed, objects, drives         int
	parity, top                            int
	size, dir, policy, cpuProfile          string
	duration                               time.Duration
	noNames, asJSON, quiet, allowFormatted bool
	seed                                   uint64
}

func (f *driveFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.queues, "queues", "parallel streams, comma list (default 1,2,4,8)")
	fs.Var(&f.ops, "op", "operations in order, comma list of write,read (default write,read)")
	fs.IntVar(&f.depth, "depth", 1, "outstanding requests per stream")
	fs.StringVar(&f.size, "size", "16MiB", "object size")
	fs.IntVar(&f.failed, "failed", 2, "drives taken offline for the reads")
	cli.DurationVar(fs, &f.duration, "duration", 0, "measuring time per row, a `DURATION` such as 5s or 5 (seconds) (default 5s)")
	fs.IntVar(&f.objects, "objects", 0, "requests per stream slot per row instead of -duration")
	fs.IntVar(&f.drives, "drives", 16, "temporary drives when no DRIVE is given")
	fs.IntVar(&f.parity, "parity", 0, "parity shards (default: the engine's for the set size)")
	fs.StringVar(&f.dir, "dir", DefaultBenchDir(), "where temporary drives go when no DRIVE is given")
	fs.StringVar(&f.policy, "policy", "auto", "hashing policy")
	fs.BoolVar(&f.noNames, "no-thread-names", false, "do not run requests on named client threads (no CLIENT/SERVER split)")
	fs.IntVar(&f.top, "threads", 8, "busiest threads listed per row")
	fs.Uint64Var(&f.seed, "seed", 1, "seed for the random object contents")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON instead of a table")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to `FILE` (go tool pprof)")
	fs.BoolVar(&f.allowFormatted, "allow-formatted", false,
		"run on the drives of an existing deployment, its server stopped (a running server holds\n"+
			"the drive locks): the bench writes its objects into a new bucket \""+benchBucket+"\" there and\n"+
			"deletes them and the bucket at the end; refused if the deployment already has that bucket")
}

// options turns the flags and the DRIVE arguments into RunDrive's options.
func (f *driveFlags) options(args []string) (opts DriveOptions, err error) {
	opts = DriveOptions{Depth: f.depth, Failed: f.failed, Duration: f.duration, Objects: f.objects, Drives: f.drives,
		Parity: f.parity, Dir: f.dir, NoThreadNames: f.noNames, TopThreads: f.top, Seed: f.seed, AllowFormatted: f.allowFormatted}
	if f.top == 0 {
		opts.TopThreads = -1 // fill treats 0 as the default; -threads 0 means none
	}
	if opts.Policy, err = hashing.ParsePolicy(f.policy); err != nil {
		return opts, fmt.Errorf("-policy: %w", err)
	}
	if len(args) > 0 {
		if opts.Paths, err = ellipses.ExpandAll(args); err != nil {
			return opts, fmt.Errorf("drives: %w", err)
		}
	}
	n, err := ParseSize(f.size)
	if err != nil {
		return opts, fmt.Errorf("-size: %w", err)
	}
	opts.Size = int64(n)
	if opts.Queues, err = parseCounts("queues", f.queues); err != nil {
		return opts, err
	}
	opts.Ops = f.ops
	return opts, nil
}

// RunDriveCommand is `shardstore bench drive [flags] DRIVE...`: it
// parses args, runs RunDrive and prints the table (or JSON). It returns
// flag.ErrHelp after -h, and a *cli.UsageError for a flag it cannot use.
func RunDriveCommand(ctx context.Context, args []string, ui CLI) error {
	fs := driveCommand.flagSet()
	var f driveFlags
	f.register(fs)
	if err := driveCommand.parse(fs, args, ui.Stderr); err != nil {
		return err
	}
	opts, err := f.options(fs.Args())
	if err != nil {
		return driveCommand.usageError(err)
	}
	total, err := DriveRows(opts)
	if err != nil {
		return driveCommand.usageError(err)
	}
	return runAndPrint(ui, f.quiet, f.cpuProfile, "bench drive", total, f.asJSON,
		func(progress func(done, total int)) (DriveReport, error) { return RunDrive(ctx, opts, progress) })
}
