package jepsen

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestActiveFaults(t *testing.T) {
	s := time.Second
	faults := []FaultEvent{
		{Name: NemKill, Start: 10 * s, End: 20 * s},
		{Name: NemBridge, Start: 15 * s, End: 25 * s},
		{Name: NemKill, Start: 18 * s, End: 19 * s},                // a second kill inside the first: one name
		{Name: "crashed-on-full-disk", Start: 16 * s, End: 16 * s}, // an instant: no round
		{Name: NemPause, Start: 40 * s, End: 30 * s},               // end before start: ignored
		{Name: "a|b", Start: 50 * s, End: 60 * s},
	}
	for _, c := range []struct {
		at   time.Duration
		want string
	}{
		{0, "none"},
		{-s, "none"},
		{10 * s, "kill"},
		{16 * s, "kill + partition-bridge"},
		{18500 * time.Millisecond, "kill + partition-bridge"},
		{20 * s, "kill + partition-bridge"},
		{21 * s, "partition-bridge"},
		{26 * s, "none"},
		{35 * s, "none"},
		{55 * s, "a|b"},
		{1 << 62, "none"},
	} {
		if got := activeFaults(faults, c.at); got != c.want {
			t.Errorf("activeFaults(%v) = %q, want %q", c.at, got, c.want)
		}
	}
	if got := activeFaults(nil, 5*s); got != "none" {
		t.Errorf("no faults: %q", got)
	}
}

func TestAnomalyWhen(t *testing.T) {
	for _, c := range []struct {
		a    Anomaly
		want time.Duration
	}{
		{Anomaly{At: 3 * time.Second, Excerpt: []string{"[    9.000s    9.100s] c1 n1 list"}}, 3 * time.Second},
		{Anomaly{Excerpt: []string{"[   39.129s    43.143s] c11 n1 put    e001/k6 \"c11.193\" → ok"}}, 39129 * time.Millisecond},
		{Anomaly{Excerpt: []string{"[1.5s 2s] x"}}, 1500 * time.Millisecond},
		{Anomaly{}, -1},
		{Anomaly{Excerpt: []string{""}}, -1},
		{Anomaly{Excerpt: []string{"[   -3.000s    1.000s] c1"}}, -1},
		{Anomaly{Excerpt: []string{"[ 1e400s 2s]"}}, -1},
		{Anomaly{Excerpt: []string{"[99999999999999999999999.5s 2s]"}}, -1},
		{Anomaly{Excerpt: []string{"[  nan s"}}, -1},
		{Anomaly{Excerpt: []string{"c1 [ 5.000s 6.000s]"}}, -1},
		{Anomaly{Excerpt: []string{"[ 5.000s"}}, 5 * time.Second},
	} {
		if got := c.a.when(); got != c.want {
			t.Errorf("when(%q, at %v) = %v, want %v", c.a.Excerpt, c.a.At, got, c.want)
		}
	}
}

// TestNemesisTable counts a small history of two runs by hand.
func TestNemesisTable(t *testing.T) {
	s := time.Second
	r1 := &Result{
		Faults: []FaultEvent{{Name: NemKill, Start: 10 * s, End: 20 * s}, {Name: NemHalves, Start: 15 * s, End: 30 * s}},
		Ops: []Op{
			{Kind: OpGet, Outcome: Ok, Call: 1 * s},
			{Kind: OpPut, Outcome: Fail, Call: 2 * s}, // not counted: not ok
			{Kind: OpList, Outcome: Ok, Call: 11 * s},
			{Kind: OpVPut, Outcome: Ok, Call: 16 * s},
			{Kind: OpMPGet, Outcome: Ok, Call: 17 * s},
			{Kind: OpPutIfMatch, Outcome: Unknown, Call: 18 * s}, // not counted
			{Kind: OpDelete, Outcome: Ok, Call: 25 * s},
		},
		Anomalies: []Anomaly{
			{Checker: "list-after-write", Type: "stale", At: 16 * s},
			{Checker: "versions", Type: "lost", Excerpt: []string{"[   12.000s    12.500s] c3 n2 vlist"}}, // saved before At
			{Checker: "versions", Type: "lost", At: 40 * s},
		},
	}
	r2 := &Result{
		Faults: []FaultEvent{{Name: NemKill, Start: 0, End: 5 * s}},
		Ops: []Op{
			{Kind: OpPutIfAbsent, Outcome: Ok, Call: 1 * s},
			{Kind: OpVList, Outcome: Ok, Call: 2 * s},
			{Kind: OpMPComplete, Outcome: Ok, Call: 6 * s},
		},
	}
	got := NemesisTable([]*Result{r1, r2})
	want := []TableRow{
		{Faults: "kill", Ok: 3, Workload: map[string]int{"reg": 1, "list": 1, "ver": 1}, Anomalies: map[string]int{"versions/lost": 1}},
		{Faults: "kill + partition-halves", Ok: 2, Workload: map[string]int{"ver": 1, "mpu": 1}, Anomalies: map[string]int{"list-after-write/stale": 1}},
		{Faults: "none", Ok: 2, Workload: map[string]int{"reg": 1, "mpu": 1}, Anomalies: map[string]int{"versions/lost": 1}},
		{Faults: "partition-halves", Ok: 1, Workload: map[string]int{"reg": 1}, Anomalies: map[string]int{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("table:\n got %+v\nwant %+v", got, want)
	}
	var b bytes.Buffer
	WriteTable(&b, got)
	wantText := `| nemesis active at invocation | ok ops | reg | list | ver | mpu | anomalies |
|---|---|---|---|---|---|---|
| kill | 3 | 1 | 1 | 1 | 0 | versions/lost 1 |
| kill + partition-halves | 2 | 0 | 0 | 1 | 1 | list-after-write/stale 1 |
| none | 2 | 1 | 0 | 0 | 1 | versions/lost 1 |
| partition-halves | 1 | 1 | 0 | 0 | 0 | 0 |
`
	if b.String() != wantText {
		t.Errorf("WriteTable:\n%s\nwant:\n%s", b.String(), wantText)
	}

	// The report ends with the table.
	b.Reset()
	Report(&b, []*Result{r1, r2})
	if !strings.HasSuffix(b.String(), wantText) {
		t.Errorf("Report does not end with the table:\n%s", b.String())
	}
}

func TestWriteTableEscapesBar(t *testing.T) {
	var b bytes.Buffer
	WriteTable(&b, []TableRow{{Faults: "a|b", Ok: 1, Workload: map[string]int{}, Anomalies: map[string]int{}}})
	if !strings.Contains(b.String(), `| a\|b | 1 |`) {
		t.Errorf("a fault name with | must not split the row:\n%s", b.String())
	}
}

// TestLoadResult reads back what Result.save writes.
func TestLoadResult(t *testing.T) {
	dir := t.TempDir()
	r := &Result{Seed: 7, Network: "proxy", Nodes: 5, Drives: 2, Elapsed: 4 * time.Second, Stats: CheckStats{LinearKeys: 3, VersionsSeen: 9}, Ops: []Op{{Kind: OpGet, Outcome: Ok, Call: time.Second, Return: 3 * time.Second, Value: "c1.1"}},
		Faults:    []FaultEvent{{Name: NemKill, Nodes: "2", Start: 0, End: 2 * time.Second}},
		Anomalies: []Anomaly{{Checker: "versions", Type: "lost", Key: "v1", At: time.Second}}}
	if err := r.save(dir); err != nil {
		t.Fatal(err)
	}
	got, err := LoadResult(filepath.Join(dir, "history-seed7.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("loaded %+v, saved %+v", got, r)
	}
	// A file from before the size, length and counts were saved.
	old := filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte(`{"seed": 8, "ops": [{"kind": "get", "outcome": "ok", "call": 1, "return": 5000000000}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = LoadResult(old)
	if err != nil || got.Seed != 8 || got.Elapsed != 5*time.Second || got.Nodes != 0 || len(got.Ops) != 1 {
		t.Errorf("old file: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "{", "[]", `{"ops": 3}`, `{"seed": -1}`} {
		p := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadResult(p); err == nil {
			t.Errorf("LoadResult(%q): no error", bad)
		}
	}
	if _, err := LoadResult(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file: no error")
	}
}

// TestReportKept prints the report (with the nemesis x workload table)
// of the histories a run kept in SHARDSTORE_JEPSEN_REPORT=DIR
// (SHARDSTORE_JEPSEN_OUT of that run); in files written before they were
// saved, the cluster's size and the checkers' counts print as 0.
func TestReportKept(t *testing.T) {
	dir := os.Getenv("SHARDSTORE_JEPSEN_REPORT")
	if dir == "" {
		t.Skip("SHARDSTORE_JEPSEN_REPORT is not set: it names a SHARDSTORE_JEPSEN_OUT directory to report on")
	}
	files, err := filepath.Glob(filepath.Join(dir, "history-seed*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no history-seed*.json in %s (%v)", dir, err)
	}
	var results []*Result
	for _, f := range files {
		r, err := LoadResult(f)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	var b bytes.Buffer
	Report(&b, results)
	t.Log("\n" + b.String())
}
