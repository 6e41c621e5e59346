package cpustat

import (
	"math"
	"strings"
	"testing"
	"time"
)

// Two /proc/stat samples one second apart on a 4-core machine: core 2 is
// saturated, core 0 moderately busy, cores 1 and 3 idle-ish.
const statA = `cpu  1000 10 500 40000 100 5 5 0 0 0
cpu0 300 5 100 10000 25 1 1 0 0 0
cpu1 200 0 100 10000 25 1 1 0 0 0
cpu2 300 5 200 10000 25 2 2 0 0 0
cpu3 200 0 100 10000 25 1 1 0 0 0
intr 123456 1 2 3
ctxt 99999
btime 1700000000
processes 1234
procs_running 2
procs_blocked 0
softirq 1 2 3
`

const statB = `cpu  1100 10 560 40240 100 5 5 0 0 0
cpu0 330 5 110 10060 25 1 1 0 0 0
cpu1 205 0 100 10095 25 1 1 0 0 0
cpu2 360 5 240 10000 25 2 2 0 0 0
cpu3 205 0 110 10085 25 1 1 0 0 0
intr 123999 1 2 3
`

func mustParse(t *testing.T, s string) Stat {
	t.Helper()
	st, err := ParseStat(strings.NewReader(s))
	if err != nil {
		t.Fatalf("ParseStat: %v", err)
	}
	return st
}

func TestParseStat(t *testing.T) {
	st := mustParse(t, statA)
	if len(st.Cores) != 4 {
		t.Fatalf("cores = %d, want 4", len(st.Cores))
	}
	want := Times{User: 300, Nice: 5, System: 200, Idle: 10000, IOWait: 25, IRQ: 2, SoftIRQ: 2}
	if st.Cores[2].ID != 2 || st.Cores[2].Times != want {
		t.Errorf("cpu2 = %+v, want %+v", st.Cores[2], want)
	}
	if st.All.User != 1000 || st.All.Idle != 40000 {
		t.Errorf("aggregate = %+v", st.All)
	}
}

func TestParseStatOldKernelAndSteal(t *testing.T) {
	// Linux 2.4-style line with only four columns, and one with steal.
	st := mustParse(t, "cpu 1 2 3 4\ncpu0 1 2 3 4\ncpu7 1 0 0 1 0 0 0 9 0 0\n")
	if st.Cores[0].Times != (Times{User: 1, Nice: 2, System: 3, Idle: 4}) {
		t.Errorf("short line = %+v", st.Cores[0].Times)
	}
	if st.Cores[1].ID != 7 || st.Cores[1].Steal != 9 || st.Cores[1].BusyTicks() != 10 {
		t.Errorf("steal line = %+v", st.Cores[1])
	}
}

func TestParseStatErrors(t *testing.T) {
	for name, text := range map[string]string{
		"empty":     "",
		"no cpu":    "intr 1 2 3\n",
		"bad value": "cpu 1 2 x 4\n",
		"bad name":  "cpu 1 2 3 4\ncpuX 1 2 3 4\n",
		"too short": "cpu 1 2\n",
	} {
		if _, err := ParseStat(strings.NewReader(text)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestLoads(t *testing.T) {
	u := Loads(mustParse(t, statA), mustParse(t, statB))
	// Per core deltas (busy/total): cpu0 40/100, cpu1 5/100, cpu2 100/100, cpu3 15/100.
	want := []float64{0.40, 0.05, 1.00, 0.15}
	for i, w := range want {
		if math.Abs(u.Cores[i].Busy-w) > 1e-9 || u.Cores[i].ID != i {
			t.Errorf("core %d = %+v, want busy %.2f", i, u.Cores[i], w)
		}
	}
	// Aggregate: busy 160 of 400.
	if math.Abs(u.Average-0.4) > 1e-9 {
		t.Errorf("average = %v, want 0.4", u.Average)
	}
	if got := MostConsumed(u.BusyFractions()); got != "1x100%, 1x40%" {
		t.Errorf("MostConsumed = %q", got)
	}
	if got := Imbalance(u.BusyFractions()); math.Abs(got-1.0/0.4) > 1e-9 {
		t.Errorf("Imbalance = %v, want 2.5", got)
	}
}

func TestLoadsHotplugAndReset(t *testing.T) {
	prev := mustParse(t, "cpu 100 0 0 100\ncpu0 100 0 0 100\n")
	// cpu1 came online; cpu0's counters went backwards.
	cur := mustParse(t, "cpu 150 0 0 150\ncpu0 50 0 0 50\ncpu1 100 0 0 100\n")
	u := Loads(prev, cur)
	if len(u.Cores) != 2 || u.Cores[0].Busy != 0 || u.Cores[1].Busy != 0 {
		t.Errorf("loads = %+v, want two zero cores", u.Cores)
	}
	if u.Average != 0.5 {
		t.Errorf("average = %v, want 0.5", u.Average)
	}
}

func TestGroups(t *testing.T) {
	for _, tc := range []struct {
		loads []float64
		want  string
	}{
		// The RAID study's shape: one saturated core, the rest light.
		{[]float64{0.11, 0.92, 0.10, 0.12, 0.11, 0.09, 0.13, 0.11, 0.10}, "1x92%, 8x11%"},
		// Even spread is one group.
		{[]float64{0.50, 0.55, 0.52, 0.48}, "4x51%"},
		// Exactly 10 points apart stays in the group; anchoring on the
		// first core stops a gradient from chaining into one group.
		{[]float64{0.92, 0.82, 0.72, 0.62}, "2x87%, 2x67%"},
		{[]float64{0.9, 0.5, 0.1}, "1x90%, 1x50%"},
		{nil, "-"},
	} {
		if got := MostConsumed(tc.loads); got != tc.want {
			t.Errorf("MostConsumed(%v) = %q, want %q", tc.loads, got, tc.want)
		}
	}
	g := Groups([]float64{0.3, 0.9, 0.85}, 0.1)
	if len(g) != 2 || g[0].Count != 2 || g[0].Max != 0.9 || g[0].Min != 0.85 || g[1].Count != 1 {
		t.Errorf("Groups = %+v", g)
	}
	if got := FormatGroups(g, 0); got != "2x88%, 1x30%" {
		t.Errorf("FormatGroups all = %q", got)
	}
}

func TestImbalance(t *testing.T) {
	if got := Imbalance([]float64{1, 0, 0, 0}); got != 4 {
		t.Errorf("one hot core of 4 = %v, want 4", got)
	}
	if got := Imbalance([]float64{0.5, 0.5}); got != 1 {
		t.Errorf("even = %v, want 1", got)
	}
	if got := Imbalance([]float64{0, 0}); got != 1 {
		t.Errorf("idle = %v, want 1", got)
	}
	if got := Imbalance(nil); !math.IsNaN(got) {
		t.Errorf("empty = %v, want NaN", got)
	}
}

func TestParseTaskStat(t *testing.T) {
	// comm with spaces and a closing parenthesis, as a thread can name itself.
	line := "4242 (my (odd) name) R 1 4242 4242 0 -1 4194304 100 0 0 0 " +
		"733 41 0 0 20 0 3 0 12345 1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
	tt, err := ParseTaskStat(line)
	if err != nil {
		t.Fatal(err)
	}
	want := TaskTimes{ID: 4242, Name: "my (odd) name", User: 733, System: 41, LastCPU: 1}
	if tt != want {
		t.Errorf("got %+v, want %+v", tt, want)
	}
	if _, err := ParseTaskStat("4242 (x) R 1 2"); err == nil {
		t.Error("truncated stat: no error")
	}
	if _, err := ParseTaskStat("no parens here"); err == nil {
		t.Error("no comm: no error")
	}
}

func TestThreadDeltas(t *testing.T) {
	prev := []TaskTimes{{ID: 1, Name: "main", User: 100, System: 10}, {ID: 2, Name: "gone", User: 5}}
	cur := []TaskTimes{
		{ID: 1, Name: "main", User: 150, System: 10, LastCPU: 0},
		{ID: 3, Name: "new", User: 80, System: 20, LastCPU: 1},
	}
	d := ThreadDeltas(prev, cur, time.Second, 100)
	if len(d) != 2 || d[0].ID != 3 || d[1].ID != 1 {
		t.Fatalf("order = %+v", d)
	}
	if d[0].User != 800*time.Millisecond || d[0].System != 200*time.Millisecond || math.Abs(d[0].Cores-1) > 1e-9 {
		t.Errorf("new thread = %+v", d[0])
	}
	if d[1].User != 500*time.Millisecond || math.Abs(d[1].Cores-0.5) > 1e-9 {
		t.Errorf("main thread = %+v", d[1])
	}
}
