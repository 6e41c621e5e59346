package bench

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/cpustat"
	"github.com/shardstore/shardstore/internal/engine"
)

// benchRunners are the bench commands as main calls them.
var benchRunners = map[string]func(ctx context.Context, args []string, ui CLI) error{
	"ec":    RunECCommand,
	"put":   RunPutCommand,
	"drive": RunDriveCommand,
	"s3":    RunS3Command,
}

// A bad command line is one *cli.UsageError carrying the bench's short
// usage, and the bench prints nothing itself: main prints it once.
func TestBenchUsageErrors(t *testing.T) {
	for name, run := range benchRunners {
		cases := [][]string{{"-no-such-flag"}, {"-size", "lots"}}
		if name != "drive" {
			cases = append(cases, []string{"extra", "args"})
		}
		for _, args := range cases {
			var out, errb bytes.Buffer
			err := run(context.Background(), args, CLI{Stdout: &out, Stderr: &errb, ProgressBar: true})
			var ue *cli.UsageError
			if !errors.As(err, &ue) {
				t.Errorf("%s %v: %v (%T), want a *cli.UsageError", name, args, err, err)
				continue
			}
			if want := "shardstore bench " + name + " "; !strings.HasPrefix(ue.Usage, want) || ue.Help != "shardstore bench "+name+" -h" {
				t.Errorf("%s %v: usage %q, help %q", name, args, ue.Usage, ue.Help)
			}
			if out.Len()+errb.Len() != 0 {
				t.Errorf("%s %v: printed %q / %q itself; main prints the error", name, args, out.String(), errb.String())
			}
			var rep bytes.Buffer
			if code := cli.Report(&rep, "bench", err); code != 2 || strings.Count(rep.String(), err.Error()) != 1 {
				t.Errorf("%s %v: reported (exit %d) as\n%s", name, args, code, rep.String())
			}
		}
		if args := []string{"extra"}; name != "drive" {
			err := run(context.Background(), args, CLI{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
			if err == nil || !strings.Contains(err.Error(), "unexpected arguments: extra") {
				t.Errorf("%s %v: %v", name, args, err)
			}
		}
		var errb bytes.Buffer
		err := run(context.Background(), []string{"-h"}, CLI{Stdout: &bytes.Buffer{}, Stderr: &errb})
		if !errors.Is(err, flag.ErrHelp) || !strings.Contains(errb.String(), "usage: shardstore bench "+name) ||
			!strings.Contains(errb.String(), "-quiet") {
			t.Errorf("%s -h: %v, help:\n%s", name, err, errb.String())
		}
	}
}

// Duration flags take plain seconds too.
func TestBenchDurationFlagsTakeSeconds(t *testing.T) {
	var d driveFlags
	fs := driveCommand.flagSet()
	d.register(fs)
	var p putFlags
	pfs := putCommand.flagSet()
	p.register(pfs)
	var s s3Flags
	sfs := s3Command.flagSet()
	s.register(sfs)
	if err := fs.Parse([]string{"-duration", "15"}); err != nil || d.duration != 15*time.Second {
		t.Errorf("drive -duration 15: %v, %v", d.duration, err)
	}
	if err := pfs.Parse([]string{"-load-interval", "0.25"}); err != nil || p.loadInterval != 250*time.Millisecond {
		t.Errorf("put -load-interval 0.25: %v, %v", p.loadInterval, err)
	}
	if err := sfs.Parse([]string{"-duration", "2m"}); err != nil || s.duration != 2*time.Minute {
		t.Errorf("s3 -duration 2m: %v, %v", s.duration, err)
	}
}

// Without a terminal no bench draws a progress bar.
func TestNoProgressBarWithoutTerminal(t *testing.T) {
	if p, _ := newProgress(CLI{Stderr: &bytes.Buffer{}}, false, "x", 3); p != nil {
		t.Error("newProgress drew a bar with ProgressBar unset")
	}
	var errb bytes.Buffer
	err := RunECCommand(context.Background(), tinyArgs, CLI{Stdout: &bytes.Buffer{}, Stderr: &errb})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(errb.String(), "\r") {
		t.Errorf("bench ec drew a bar without a terminal: %q", errb.String())
	}
}

// bench ec says how much memory it will take before it takes it, and
// warns when its measurements are too short for the CPU columns.
func TestECMemoryAndShortWindowNotes(t *testing.T) {
	opts := ECOptions{Configs: []ECConfig{{4, 2}, {3, 1}}, BlockSize: 2048, Blocks: 6}
	mem, err := ECMemory(opts)
	if err != nil {
		t.Fatal(err)
	}
	// 4+2: 6 shards of 512 B per block; 3+1: 4 shards of 683 B. Headers:
	// two views of (shards+1) slice headers per block.
	if want := int64(6*6*512 + 2*6*7*24); mem != want {
		t.Errorf("ECMemory = %d, want %d", mem, want)
	}
	big, _ := ECMemory(ECOptions{Configs: []ECConfig{{12, 4}}})
	if got := approxBytes(big); got != "1.3 GiB" {
		t.Errorf("default 12+4 working set: %s, want 1.3 GiB", got)
	}

	_, stderr, err := runCmd(t, tinyArgs...)
	if err != nil {
		t.Fatal(err)
	}
	note := strings.Index(stderr, "bench ec: will allocate about ")
	if note < 0 || strings.Contains(stderr[:note], "\r") {
		t.Errorf("no memory note before the progress bar:\n%q", stderr)
	}
	if !strings.Contains(stderr, "too short to sample CPU") {
		t.Errorf("tiny measurements but no short-window warning:\n%s", stderr)
	}
}

func TestShortWindowWarning(t *testing.T) {
	if got := minCPUWindow(""); got != minCPUTicks*time.Second/time.Duration(cpustat.ClockTicks("")) || got <= 0 {
		t.Errorf("minCPUWindow = %v", got)
	}
	long := []ECResult{{Seconds: 0.5}, {Seconds: 2}}
	if w := shortWindowWarning(long, 200*time.Millisecond); w != "" {
		t.Errorf("long windows warned: %s", w)
	}
	w := shortWindowWarning(append(long, ECResult{Seconds: 0.05}, ECResult{Seconds: 0.01}), 200*time.Millisecond)
	for _, want := range []string{"2 of 4 measurements", "less than 200ms", "shortest 10ms", "-rounds"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning lacks %q:\n%s", want, w)
		}
	}
}

// writeDeployment formats dirs as a deployment, with an object in a
// bucket when bucket is not empty, and closes it.
func writeDeployment(t *testing.T, dirs []string, bucket string) {
	t.Helper()
	eng, err := engine.New(engine.Config{Paths: dirs, Parity: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if bucket == "" {
		return
	}
	ctx := context.Background()
	if err := eng.MakeBucket(ctx, bucket, engine.BucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.PutObject(ctx, bucket, "mine", strings.NewReader("user data"), 9, engine.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

// listTree lists every path under dir, relative; directories end in /.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if fi.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var tinyDriveArgs = []string{"-queues", "1", "-objects", "1", "-size", "64KiB", "-failed", "1", "-parity", "1", "-quiet"}

// A formatted drive is refused before anything is written, and without
// -allow-formatted nothing is created or changed.
func TestDriveRefusesFormattedDrives(t *testing.T) {
	dir := t.TempDir()
	dep := []string{filepath.Join(dir, "f1"), filepath.Join(dir, "f2")}
	writeDeployment(t, dep, "")
	before := listTree(t, dir)
	args := append(append([]string{}, tinyDriveArgs...), dep[0], filepath.Join(dir, "new", "d2"), filepath.Join(dir, "new", "d3"), dep[1])
	var out, errb bytes.Buffer
	err := RunDriveCommand(context.Background(), args, CLI{Stdout: &out, Stderr: &errb})
	if err == nil || !strings.Contains(err.Error(), "-allow-formatted") || !strings.Contains(err.Error(), "(and 1 other)") {
		t.Fatalf("formatted drives: %v, want a refusal naming -allow-formatted", err)
	}
	if after := listTree(t, dir); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("a refused run changed the directory:\nbefore %v\nafter  %v", before, after)
	}

	// Not empty: refused the same way, before anything is written.
	foreign := filepath.Join(dir, "foreign")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "photo.jpg"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	args = append(append([]string{}, tinyDriveArgs...), filepath.Join(dir, "new", "d{1...3}"), foreign)
	if err := RunDriveCommand(context.Background(), args, CLI{Stdout: &out, Stderr: &errb}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("non-empty drive: %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused run created drive directories (%v)", err)
	}
}

// Directories the bench created are gone afterwards; empty ones it was
// given are empty again.
func TestDriveLeavesDirectoriesAsFound(t *testing.T) {
	dir := t.TempDir()
	empty := []string{filepath.Join(dir, "e1"), filepath.Join(dir, "e2")}
	for _, p := range empty {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(empty[1], lostAndFound), 0o700); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, tinyDriveArgs...), empty[0], empty[1], filepath.Join(dir, "new", "deep", "d{3...4}"))
	var out, errb bytes.Buffer
	if err := RunDriveCommand(context.Background(), args, CLI{Stdout: &out, Stderr: &errb}); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	want := []string{"./", "e1/", "e2/", "e2/lost+found/"}
	if got := listTree(t, dir); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("left behind %v, want %v", got, want)
	}
}

// With -allow-formatted the bench runs on a stopped deployment in a
// bucket of its own, which it removes; a bucket of that name that is
// already there is the user's and is refused.
func TestDriveAllowFormatted(t *testing.T) {
	dir := t.TempDir()
	dep := []string{filepath.Join(dir, "d1"), filepath.Join(dir, "d2"), filepath.Join(dir, "d3"), filepath.Join(dir, "d4")}
	writeDeployment(t, dep, "photos")
	args := append(append([]string{"-allow-formatted"}, tinyDriveArgs...), dep...)
	var out, errb bytes.Buffer
	if err := RunDriveCommand(context.Background(), args, CLI{Stdout: &out, Stderr: &errb}); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	eng, err := engine.New(engine.Config{Paths: dep})
	if err != nil {
		t.Fatal(err)
	}
	buckets, err := eng.ListBuckets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(buckets) != 1 || buckets[0].Name != "photos" {
		t.Errorf("buckets after the bench: %+v, want only the user's", buckets)
	}
	if err := eng.MakeBucket(context.Background(), benchBucket, engine.BucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.PutObject(context.Background(), benchBucket, "s000-0", strings.NewReader("mine"), 4, engine.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	eng.Close()

	err = RunDriveCommand(context.Background(), args, CLI{Stdout: &out, Stderr: &errb})
	if err == nil || !strings.Contains(err.Error(), "already has a bucket") {
		t.Fatalf("existing %q bucket: %v, want a refusal", benchBucket, err)
	}
	eng, err = engine.New(engine.Config{Paths: dep})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	info, err := eng.HeadObject(context.Background(), benchBucket, "s000-0", engine.GetOptions{})
	if err != nil || info.Size != 4 {
		t.Errorf("the user's object in %q: %+v, %v", benchBucket, info, err)
	}
}

// The busiest threads are shown by role, not by thread id.
func TestDriveThreadsByRole(t *testing.T) {
	if got := threadLabel("ss-client-3", "shardstore"); got != threadClientLabel {
		t.Errorf("client thread labelled %q", got)
	}
	if got := threadLabel("shardstore", "shardstore"); got != threadRuntimeLabel {
		t.Errorf("Go thread labelled %q", got)
	}
	if got := threadLabel("isal-worker", "shardstore"); got != "thread isal-worker" {
		t.Errorf("foreign thread labelled %q", got)
	}
	threads, err := cpustat.ReadThreads("", 0)
	if err != nil {
		t.Skip("no /proc:", err)
	}
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Skip("no /proc/self/comm:", err)
	}
	if got := mainThreadName(threads); got != strings.TrimSpace(string(comm)) {
		t.Errorf("main thread name %q, /proc/self/comm says %q", got, comm)
	}

	rep := DriveReport{Results: []DriveResult{{Op: DriveOpWrite, Queues: 2, Threads: []DriveThread{
		{ID: 4242, Name: "ss-client-0", Role: "client", Label: threadClientLabel, Cores: 0.62},
		{ID: 4243, Name: "bench.test", Role: "server", Label: threadRuntimeLabel, Cores: 0.31},
		{ID: 4244, Name: "ss-client-1", Role: "client", Label: threadClientLabel, Cores: 0.30},
		{ID: 4245, Name: "bench.test", Role: "server", Label: threadRuntimeLabel, Cores: 0.12},
	}}}}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	want := "write q=2: client request 0.62, 0.30; engine/Go runtime 0.31, 0.12"
	if !strings.Contains(out.String(), want) {
		t.Errorf("threads line missing %q:\n%s", want, out.String())
	}
	if strings.Contains(out.String(), "4242") {
		t.Errorf("table shows thread ids:\n%s", out.String())
	}
}

// bench put's closing lines talk about the user's choice, not targets.
func TestPutComparisonWording(t *testing.T) {
	var out bytes.Buffer
	targets := []PutTarget{
		{Name: checkBestFixed, Cell: "4 MiB, 1 at once, GOMAXPROCS 2", Pass: true, Detail: "auto 1 GB/s"},
		{Name: checkSingle, Cell: "4 MiB, 1 at once, GOMAXPROCS 2", Detail: "auto 0.9 GB/s, inline 1 GB/s: 0.90x"},
		{Name: checkSingle, Cell: "4 MiB, 4 at once, GOMAXPROCS 2", SameBackend: true},
	}
	if err := writeTargets(&out, targets); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"--hash-offload", "ok ", "SHORT", "noise", "at least as fast as inline"} {
		if !strings.Contains(s, want) {
			t.Errorf("comparison lacks %q:\n%s", want, s)
		}
	}
	for _, jargon := range []string{"Target", "target", "FAIL", "conc ", "issue"} {
		if strings.Contains(s, jargon) {
			t.Errorf("comparison says %q:\n%s", jargon, s)
		}
	}
}
