package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/shardstore/shardstore/internal/hashing"
)

// putGroup is one (size, concurrency, procs) cell of the matrix with the
// result of every policy measured in it.
type putGroup struct {
	size        int64
	conc, procs int
	byPolicy    map[string]PutResult
}

// name describes the cell to a user: object size, PUTs in flight and
// GOMAXPROCS.
func (g putGroup) name() string {
	return fmt.Sprintf("%s, %d at once, GOMAXPROCS %d", humanBytes(g.size), g.conc, g.procs)
}

func groupPut(results []PutResult) []putGroup {
	type key struct {
		size        int64
		conc, procs int
	}
	idx := map[key]int{}
	var out []putGroup
	for _, r := range results {
		k := key{r.Size, r.Concurrency, r.Procs}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, putGroup{size: r.Size, conc: r.Concurrency, procs: r.Procs, byPolicy: map[string]PutResult{}})
		}
		out[i].byPolicy[r.Policy] = r
	}
	return out
}

// The comparisons EvaluatePutTargets makes, as the table names them.
// Each completes "auto is ..." for the cell it is checked in.
const (
	checkBestFixed  = "within 5% of the fastest fixed policy"
	checkConcurrent = "at least 1.5x as fast as inline, for at most 0.6x its CPU"
	checkSingle     = "at least as fast as inline"
)

// EvaluatePutTargets compares the auto hashing policy (the server's
// default) with the fixed ones in every cell that measured them, to
// tell a user whether keeping auto costs anything on this machine:
//
//   - auto within 5 % of the best fixed policy's throughput;
//   - with 16 concurrent PUTs of 32 MiB or more, where hashing off the
//     request thread should pay most, auto at least 1.5x inline's
//     throughput and at most 0.6x its CPU per GiB;
//   - with one PUT at a time, auto never slower than inline.
func EvaluatePutTargets(results []PutResult) []PutTarget {
	auto, inline := string(hashing.PolicyAuto), string(hashing.PolicyInline)
	var out []PutTarget
	for _, g := range groupPut(results) {
		a, ok := g.byPolicy[auto]
		if !ok {
			continue
		}
		best, bestName := 0.0, ""
		for name, r := range g.byPolicy {
			if name != auto && r.GBps > best {
				best, bestName = r.GBps, name
			}
		}
		if bestName != "" {
			ratio := a.GBps / best
			t := PutTarget{Name: checkBestFixed, Cell: g.name(), Pass: ratio >= 0.95,
				Detail: fmt.Sprintf("auto %.3f GB/s, %s %.3f GB/s: %.2fx", a.GBps, bestName, best, ratio)}
			out = append(out, sameBackend(t, a, g.byPolicy[bestName]))
		}
		in, ok := g.byPolicy[inline]
		if !ok || in.GBps == 0 {
			continue
		}
		if g.conc == 16 && g.size >= 32<<20 {
			tr := a.GBps / in.GBps
			cr := 0.0
			if in.CPUPerGiB > 0 {
				cr = a.CPUPerGiB / in.CPUPerGiB
			}
			out = append(out, PutTarget{Name: checkConcurrent, Cell: g.name(),
				Pass:   tr >= 1.5 && cr > 0 && cr <= 0.6,
				Detail: fmt.Sprintf("speed %.2fx inline's, CPU per GiB %.2fx inline's", tr, cr)})
		}
		if g.conc == 1 {
			tr := a.GBps / in.GBps
			t := PutTarget{Name: checkSingle, Cell: g.name(), Pass: tr >= 1,
				Detail: fmt.Sprintf("auto %.3f GB/s, inline %.3f GB/s: %.2fx", a.GBps, in.GBps, tr)}
			out = append(out, sameBackend(t, a, in))
		}
	}
	return out
}

// sameBackend marks a failed comparison where auto and the cell it was
// compared with ran one and the same backend on every PUT.
func sameBackend(t PutTarget, auto, other PutResult) PutTarget {
	if t.Pass {
		return t
	}
	a, b := onlyBackend(auto.Backends), onlyBackend(other.Backends)
	if a != "" && a == b {
		t.SameBackend = true
		t.Detail += fmt.Sprintf("; both ran %s on every PUT", a)
	}
	return t
}

// onlyBackend is the backend that ran every PUT of a cell, or "".
func onlyBackend(m map[string]int) string {
	if len(m) != 1 {
		return ""
	}
	for b := range m {
		return b
	}
	return ""
}

// Header describes the run and the units.
func (r PutReport) Header() string {
	var b strings.Builder
	fmt.Fprintf(&b, "PUT pipeline (engine level, no HTTP): %d drives (%d+%d) under %s, ~%s per cell, median of %d, started %s\n",
		r.Drives, r.Data, r.Parity, r.Dir, humanBytes(r.CellBytes), r.Repeat, r.Started.Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "CPU: %s, %d cores. GB = 10^9 bytes. CPU s/GiB: this process's CPU seconds (getrusage) per GiB written.\n", r.CPU, r.Cores)
	b.WriteString("Phases in seconds per GiB: RECV, ENC, SYNC, COMMIT are request wall time; HASH, BITROT, WRITE are work summed over goroutines.\n" +
		"BACKENDS: PUTs per hashing backend that ran the MD5 (i=inline p=pipelined m=multibuffer d=device).\n" +
		"LANES: useful share of the multi-lane MD5 kernel's work (100% = every lane of every call carried data).\n")
	return b.String()
}

// WriteTable prints the header, one row per cell and how auto compared.
func (r PutReport) WriteTable(w io.Writer) error {
	if _, err := io.WriteString(w, r.Header()+"\n"); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SIZE\tCONC\tPROCS\tPOLICY\tGB/s\tCPU s/GiB\tPROC\tRECV\tHASH\tHWAIT\tENC\tBITROT\tWRITE\tSYNC\tCOMMIT\tBACKENDS\tLANES\tRUNS GB/s\t")
	for _, res := range r.Results {
		ph := res.Phases
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%.3f\t%.2f\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%s\t%s\t\n",
			humanBytes(res.Size), res.Concurrency, res.Procs, res.Policy, res.GBps, res.CPUPerGiB, res.ProcessCores,
			ph.Receive, ph.Hash, ph.HashWait, ph.Encode, ph.Bitrot, ph.Write, ph.Sync, ph.Commit,
			formatBackends(res.Backends), formatFill(res.LaneFill), formatRuns(res.RunsGBps))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return writeTargets(w, r.Targets)
}

// targetsHead introduces the closing comparison; targetsLegend says
// what each verdict means for the user's choice of policy.
const (
	targetsHead   = "\nAuto hashing policy (the server's default, --hash-offload auto) against the fixed policies, per cell:"
	targetsLegend = "ok: keeping auto costs nothing measurable in that cell. SHORT: auto fell short of the policy named;\n" +
		"if that cell is like your workload, --hash-offload with that policy may serve you better.\n" +
		"noise: auto ran that very policy on every PUT, so the gap is run-to-run variation, not a worse choice."
)

// writeTargets prints the comparisons of EvaluatePutTargets in words a
// user can act on.
func writeTargets(w io.Writer, targets []PutTarget) error {
	if len(targets) == 0 {
		return nil
	}
	fmt.Fprintln(w, targetsHead)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \tCELL\tAUTO IS\tMEASURED")
	for _, t := range targets {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", verdict(t), t.Cell, t.Name, t.Detail)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	fmt.Fprintln(w, targetsLegend)
	return nil
}

func verdict(t PutTarget) string {
	switch {
	case t.Pass:
		return "ok"
	case t.SameBackend:
		return "noise"
	}
	return "SHORT"
}

// formatFill prints the multi-lane service's lane fill as a percentage.
func formatFill(f float64) string {
	if f == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

func formatBackends(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		short := n
		if n != "" {
			short = n[:1]
		}
		parts[i] = fmt.Sprintf("%s%d", short, m[n])
	}
	return strings.Join(parts, ",")
}

func formatRuns(v []float64) string {
	if len(v) < 2 {
		return "-"
	}
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, "/")
}

// WriteJSON writes the whole report as indented JSON.
func (r PutReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("writing json: %w", err)
	}
	return nil
}
