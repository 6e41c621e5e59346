package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"runtime"
	"strings"
	"testing"
)

// tinyPutArgs is a matrix small enough for a unit test: 2 sizes x 2
// concurrencies x 1 procs x 2 policies, about 6 MiB per cell, on drives
// under the test's temp dir.
func tinyPutArgs(t *testing.T) []string {
	return []string{"-size", "256KiB,3MiB", "-concurrency", "1,3", "-procs", "2", "-policy", "inline,auto",
		"-bytes", "6MiB", "-drives", "6", "-parity", "2", "-dir", t.TempDir(), "-load-interval", "20ms"}
}

func TestPutCommandJSON(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	var out, errb bytes.Buffer
	err := RunPutCommand(context.Background(), append(tinyPutArgs(t), "-json"), CLI{Stdout: &out, Stderr: &errb, ProgressBar: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS is %d after the bench, was %d", got, procs)
	}
	var rep PutReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	if len(rep.Results) != 8 {
		t.Fatalf("%d results, want 8", len(rep.Results))
	}
	if rep.Data != 4 || rep.Parity != 2 {
		t.Errorf("geometry %d+%d, want 4+2", rep.Data, rep.Parity)
	}
	for _, r := range rep.Results {
		if r.Objects < r.Concurrency || r.Bytes != int64(r.Objects)*r.Size || r.GBps <= 0 {
			t.Errorf("%+v: implausible counts", r)
		}
		if r.Procs != 2 {
			t.Errorf("procs %d, want 2", r.Procs)
		}
		// Every measured PUT reported its phases: one backend count
		// each, and the drive writes took some time.
		n := 0
		for _, c := range r.Backends {
			n += c
		}
		if n != r.Objects {
			t.Errorf("%s %s x%d: phase observer saw %d PUTs, bench made %d", r.Policy, humanBytes(r.Size), r.Concurrency, n, r.Objects)
		}
		if r.Phases.Write <= 0 || r.Phases.Receive <= 0 {
			t.Errorf("%+v: no write or receive time recorded", r.Phases)
		}
		if r.Policy == "inline" && (len(r.Backends) != 1 || r.Backends["inline"] == 0) {
			t.Errorf("policy inline ran on %v", r.Backends)
		}
		if r.CPUPerGiB <= 0 {
			t.Errorf("%s: no CPU per GiB", r.Policy)
		}
	}
	// With auto and inline in every cell, every cell gets the 5 % check
	// and the concurrency-1 cells the not-slower check.
	var within, conc1 int
	for _, tg := range rep.Targets {
		switch tg.Name {
		case checkBestFixed:
			within++
		case checkSingle:
			conc1++
		}
	}
	if within != 4 || conc1 != 2 {
		t.Errorf("targets: %d within-5%% checks (want 4), %d concurrency-1 checks (want 2): %+v", within, conc1, rep.Targets)
	}
}

func TestPutCommandTableAndCleanup(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-size", "1MiB", "-concurrency", "2", "-procs", "1", "-policy", "pipelined,auto", "-bytes", "2MiB",
		"-drives", "4", "-parity", "1", "-dir", dir, "-repeat", "3"}
	var out, errb bytes.Buffer
	if err := RunPutCommand(context.Background(), args, CLI{Stdout: &out, Stderr: &errb}); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	s := out.String()
	for _, want := range []string{"POLICY", "pipelined", "auto", "Auto hashing policy", "fastest fixed policy", "median of 3"} {
		if !strings.Contains(s, want) {
			t.Errorf("table lacks %q:\n%s", want, s)
		}
	}
	// Three repeats per policy: the RUNS column lists three numbers.
	if strings.Count(s, "/") < 4 {
		t.Errorf("table does not list the repeats:\n%s", s)
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("bench left %d entries in %s", len(left), dir)
	}
}

func TestPutCommandErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-size", "0"},
		{"-concurrency", "0"},
		{"-policy", "fastest"},
		{"-policy", "device"},
		{"-parity", "9"},
		{"extra"},
	} {
		var out, errb bytes.Buffer
		if err := RunPutCommand(context.Background(), append(args, "-dir", t.TempDir()), CLI{Stdout: &out, Stderr: &errb}); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	var out, errb bytes.Buffer
	if err := RunPutCommand(context.Background(), []string{"-h"}, CLI{Stdout: &out, Stderr: &errb}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
}

func TestEvaluatePutTargets(t *testing.T) {
	cell := func(size int64, conc int, pol string, gbps, cpu float64) PutResult {
		return PutResult{Size: size, Concurrency: conc, Procs: 2, Policy: pol, GBps: gbps, CPUPerGiB: cpu}
	}
	res := []PutResult{
		// 32 MiB x16: auto 1.6x inline throughput at half the CPU, and
		// within 5 % of multibuffer: every check passes.
		cell(32<<20, 16, "inline", 1.0, 2.0),
		cell(32<<20, 16, "multibuffer", 1.65, 1.0),
		cell(32<<20, 16, "auto", 1.6, 1.0),
		// 4 MiB x1: auto slower than inline: two failures.
		cell(4<<20, 1, "inline", 1.0, 2.0),
		cell(4<<20, 1, "pipelined", 0.9, 2.1),
		cell(4<<20, 1, "auto", 0.9, 2.1),
	}
	got := EvaluatePutTargets(res)
	if len(got) != 4 {
		t.Fatalf("%d checks, want 4: %+v", len(got), got)
	}
	want := []bool{true, true, false, false}
	for i, tg := range got {
		if tg.Pass != want[i] {
			t.Errorf("check %d %s %s: pass=%v, want %v (%s)", i, tg.Name, tg.Cell, tg.Pass, want[i], tg.Detail)
		}
	}
	// Throughput alone is not enough at concurrency 16: CPU must drop too.
	res[2].CPUPerGiB = 1.5
	if got := EvaluatePutTargets(res[:3]); got[1].Pass {
		t.Errorf("auto at 0.75x inline CPU passed the 0.6x check: %s", got[1].Detail)
	}
	for _, tg := range got {
		if tg.SameBackend {
			t.Errorf("%s %s marked same-backend without backend counts", tg.Name, tg.Cell)
		}
	}
	// A loss to the very backend auto ran is marked as such, still not
	// passed; a loss to a different backend is not.
	res[3].Backends = map[string]int{"inline": 4}
	res[5].Backends = map[string]int{"inline": 4}
	res[4].Backends = map[string]int{"pipelined": 4}
	got = EvaluatePutTargets(res[3:])
	if len(got) != 2 || got[0].Pass || got[1].Pass {
		t.Fatalf("checks %+v: want two failures", got)
	}
	if !got[1].SameBackend {
		t.Errorf("auto ran inline like inline and lost: not marked same-backend: %s", got[1].Detail)
	}
	res[4].GBps = 1.2 // now pipelined is the best fixed backend
	if got := EvaluatePutTargets(res[3:]); got[0].SameBackend {
		t.Errorf("auto (inline) lost to pipelined but was marked same-backend: %s", got[0].Detail)
	}
}

func TestMedianPut(t *testing.T) {
	m := medianPut([]PutResult{{GBps: 3, Objects: 3}, {GBps: 1, Objects: 1}, {GBps: 2, Objects: 2}})
	if m.GBps != 2 || m.Objects != 2 {
		t.Errorf("median picked %+v", m)
	}
	if len(m.RunsGBps) != 3 || m.RunsGBps[0] != 3 {
		t.Errorf("runs %v, want all three in run order", m.RunsGBps)
	}
}
