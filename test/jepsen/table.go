package jepsen

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The nemesis x workload table: every successful operation counted
// under the faults active when it was invoked, by workload, and every
// anomaly under the faults active when its operation was invoked.
// Report prints it last; docs/consistency.md shows it.

// Workload classes of the table's columns.
const (
	wlReg  = "reg"  // GET/PUT/DELETE/conditional PUT (linearizability)
	wlList = "list" // register listings (list-after-write)
	wlVer  = "ver"  // versioned PUTs and version listings
	wlMPU  = "mpu"  // multipart completes and GETs
)

var tableWorkloads = []string{wlReg, wlList, wlVer, wlMPU}

// workloadOf is the table column of an operation kind.
func workloadOf(k Kind) string {
	switch k {
	case OpGet, OpPut, OpPutIfAbsent, OpPutIfMatch, OpDelete:
		return wlReg
	case OpList:
		return wlList
	case OpVPut, OpVList:
		return wlVer
	case OpMPComplete, OpMPGet:
		return wlMPU
	}
	return string(k)
}

// noFault labels the time between rounds (and before the first, after
// the last).
const noFault = "none"

// activeFaults names the faults active at t, sorted and joined by " + "
// ("none" when none): the row an operation invoked at t counts in.
// Instant events (a node found dead of a full disk) are no round.
func activeFaults(faults []FaultEvent, t time.Duration) string {
	var names []string
	for _, f := range faults {
		if f.End <= f.Start || t < f.Start || t > f.End {
			continue
		}
		if !contains(names, f.Name) {
			names = append(names, f.Name)
		}
	}
	if len(names) == 0 {
		return noFault
	}
	sort.Strings(names)
	return strings.Join(names, " + ")
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TableRow is one row of the nemesis x workload table.
type TableRow struct {
	Faults    string         // the active faults ("none", "kill + partition-bridge")
	Ok        int            // successful operations invoked under them
	Workload  map[string]int // of Ok, per workload (reg, list, ver, mpu)
	Anomalies map[string]int // checker/type → anomalies whose operation was invoked under them
}

// NemesisTable makes the table of results, rows by successful
// operations, most first (ties by name).
func NemesisTable(results []*Result) []TableRow {
	rows := map[string]*TableRow{}
	row := func(name string) *TableRow {
		r := rows[name]
		if r == nil {
			r = &TableRow{Faults: name, Workload: map[string]int{}, Anomalies: map[string]int{}}
			rows[name] = r
		}
		return r
	}
	for _, res := range results {
		for _, o := range res.Ops {
			if o.Outcome != Ok {
				continue
			}
			r := row(activeFaults(res.Faults, o.Call))
			r.Ok++
			r.Workload[workloadOf(o.Kind)]++
		}
		for _, a := range res.Anomalies {
			row(activeFaults(res.Faults, a.when())).Anomalies[a.Checker+"/"+a.Type]++
		}
	}
	out := make([]TableRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Ok != out[j].Ok {
			return out[i].Ok > out[j].Ok
		}
		return out[i].Faults < out[j].Faults
	})
	return out
}

// excerptCall is the invocation time at the start of an excerpt line
// ("[   39.129s    43.143s] c11 ...").
var excerptCall = regexp.MustCompile(`^\[\s*([0-9]+(?:\.[0-9]+)?)s(?:\s|$)`)

// when is the invocation of the anomalous operation: At, or for a
// history saved before anomalies carried it, the first excerpt line's
// call (the listing, for the listing checkers); -1 when neither says.
func (a Anomaly) when() time.Duration {
	if a.At > 0 {
		return a.At
	}
	if len(a.Excerpt) > 0 {
		if m := excerptCall.FindStringSubmatch(a.Excerpt[0]); m != nil {
			if s, err := strconv.ParseFloat(m[1], 64); err == nil && s < 1e9 {
				return time.Duration(s * float64(time.Second))
			}
		}
	}
	return -1
}

// WriteTable prints rows as the Markdown table docs/consistency.md
// shows.
func WriteTable(w io.Writer, rows []TableRow) {
	fmt.Fprintln(w, "| nemesis active at invocation | ok ops | "+strings.Join(tableWorkloads, " | ")+" | anomalies |")
	fmt.Fprintln(w, "|---|---|"+strings.Repeat("---|", len(tableWorkloads))+"---|")
	for _, r := range rows {
		cells := []string{strings.ReplaceAll(r.Faults, "|", `\|`), strconv.Itoa(r.Ok)}
		for _, wl := range tableWorkloads {
			cells = append(cells, strconv.Itoa(r.Workload[wl]))
		}
		var types []string
		for t := range r.Anomalies {
			types = append(types, t)
		}
		sort.Strings(types)
		an := "0"
		if len(types) > 0 {
			parts := make([]string, len(types))
			for i, t := range types {
				parts[i] = fmt.Sprintf("%s %d", t, r.Anomalies[t])
			}
			an = strings.Join(parts, ", ")
		}
		cells = append(cells, an)
		fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
	}
}

// LoadResult reads a history file Result.save wrote
// (SHARDSTORE_JEPSEN_OUT/history-seedN.json). Files written before they
// held the cluster's size, the run's length and the checkers' counts
// read back with those zero (the length: the last operation's return).
func LoadResult(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Seed      uint64        `json:"seed"`
		Network   string        `json:"network"`
		Nodes     int           `json:"nodes"`
		Drives    int           `json:"drives"`
		Elapsed   time.Duration `json:"elapsed"`
		Stats     CheckStats    `json:"stats"`
		Ops       []Op          `json:"ops"`
		Faults    []FaultEvent  `json:"faults"`
		Anomalies []Anomaly     `json:"anomalies"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := &Result{Seed: f.Seed, Network: f.Network, Nodes: f.Nodes, Drives: f.Drives, Elapsed: f.Elapsed, Stats: f.Stats,
		Ops: f.Ops, Faults: f.Faults, Anomalies: f.Anomalies}
	if r.Elapsed == 0 {
		for _, o := range f.Ops {
			r.Elapsed = max(r.Elapsed, o.Return)
		}
	}
	return r, nil
}
