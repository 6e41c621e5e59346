package engine

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestAdaptDecide: the adaptive throttle's decisions, from tables of
// state and client latency to the new state.
func TestAdaptDecide(t *testing.T) {
	ms := time.Millisecond
	w := func(n int64, d time.Duration) latencyWindow { return latencyWindow{Count: n, Mean: d} }
	for _, c := range []struct {
		name string
		s    adaptState
		w    latencyWindow
		idle bool
		want adaptState
	}{
		{"first window sets the baseline, full speed", adaptState{}, w(10, 4*ms), false, adaptState{4 * ms, 1}},
		{"idle window takes the baseline and keeps the speed", adaptState{}, w(10, 4*ms), true, adaptState{4 * ms, 1}},
		{"idle window moves the baseline a fifth of the way", adaptState{10 * ms, 0.5}, w(10, 20*ms), true, adaptState{12 * ms, 0.5}},
		{"clients over 1.5x as slow and 1 ms more: halve", adaptState{10 * ms, 1}, w(10, 16*ms), false, adaptState{10 * ms, 0.5}},
		{"clients at exactly the limit: raise", adaptState{10 * ms, 0.5}, w(10, 15*ms), false, adaptState{10 * ms, 0.5 + speedStep}},
		{"slack: 1 ms baseline, 2 ms is not congestion", adaptState{1 * ms, 0.5}, w(10, 2*ms), false, adaptState{1 * ms, 0.5 + speedStep}},
		{"slack: 1 ms baseline, 3 ms is", adaptState{1 * ms, 0.5}, w(10, 3*ms), false, adaptState{1 * ms, 0.25}},
		{"never below the floor", adaptState{1 * ms, minMoveSpeed}, w(10, 100*ms), false, adaptState{1*ms + time.Duration(baselineWeight*float64(99*ms)), minMoveSpeed}},
		{"never above full speed", adaptState{10 * ms, 1}, w(10, 10*ms), false, adaptState{10 * ms, 1}},
		{"a faster client lowers the baseline while moving", adaptState{10 * ms, 0.5}, w(10, 2*ms), false, adaptState{2 * ms, 0.5 + speedStep}},
		{"slow clients while moving do not raise the baseline", adaptState{10 * ms, 0.5}, w(10, 50*ms), false, adaptState{10 * ms, 0.25}},
		{"too few requests: speed up, baseline kept", adaptState{10 * ms, 0.25}, w(4, 500*ms), false, adaptState{10 * ms, 0.25 + speedStep}},
		{"no requests: speed up", adaptState{0, 0.25}, w(0, 0), false, adaptState{0, 0.25 + speedStep}},
		{"no requests while idle: nothing changes", adaptState{3 * ms, 0.25}, w(0, 0), true, adaptState{3 * ms, 0.25}},
		{"hostile: negative mean is no sample", adaptState{10 * ms, 0.5}, w(100, -time.Hour), false, adaptState{10 * ms, 0.5 + speedStep}},
		{"hostile: speed out of range is full speed", adaptState{10 * ms, 7}, w(10, 10*ms), false, adaptState{10 * ms, 1}},
		{"hostile: negative speed is full speed, then halved", adaptState{10 * ms, -1}, w(10, time.Hour), false, adaptState{10 * ms, 0.5}},
		{"hostile: huge latency", adaptState{10 * ms, 1}, w(1<<40, time.Duration(1<<62)), false, adaptState{10 * ms, 0.5}},
	} {
		if got := adaptDecide(c.s, c.w, c.idle); got != c.want {
			t.Errorf("%s: adaptDecide(%+v, %+v, idle %v) = %+v, want %+v", c.name, c.s, c.w, c.idle, got, c.want)
		}
	}
}

// TestAdaptDecideConverges: under sustained congestion the speed falls to
// the floor in a few windows; if the clients stay slow with the mover at
// its slowest, the baseline follows them (it is not the mover's doing)
// and the mover speeds up again; it climbs back to full speed once the
// clients are fast.
func TestAdaptDecideConverges(t *testing.T) {
	s := adaptDecide(adaptState{}, latencyWindow{10, time.Millisecond}, true)
	for range 6 {
		s = adaptDecide(s, latencyWindow{10, 50 * time.Millisecond}, false)
	}
	if s.Speed != minMoveSpeed || s.Baseline != time.Millisecond {
		t.Fatalf("after 6 congested windows %+v, want speed %v and the baseline kept", s, minMoveSpeed)
	}
	for range 5 {
		s = adaptDecide(s, latencyWindow{10, 50 * time.Millisecond}, false)
	}
	if s.Speed <= minMoveSpeed || s.Baseline < 30*time.Millisecond {
		t.Fatalf("after 5 more congested windows at the floor %+v, want the baseline to have followed and the speed up", s)
	}
	for range 16 {
		s = adaptDecide(s, latencyWindow{10, time.Millisecond}, false)
	}
	if s.Speed != 1 {
		t.Fatalf("after 16 calm windows speed = %v, want 1", s.Speed)
	}
}

func TestAdaptRest(t *testing.T) {
	for _, c := range []struct {
		speed float64
		took  time.Duration
		want  time.Duration
	}{
		{1, time.Second, 0},
		{0.5, time.Second, time.Second},
		{0.25, 100 * time.Millisecond, 300 * time.Millisecond},
		{minMoveSpeed, 10 * time.Millisecond, 630 * time.Millisecond},
		{0, time.Second, 0},
		{-1, time.Second, 0},
		{0.5, -time.Second, 0},
		{2, time.Second, 0},
	} {
		if got := adaptRest(c.speed, c.took); got != c.want {
			t.Errorf("adaptRest(%v, %v) = %v, want %v", c.speed, c.took, got, c.want)
		}
	}
}

// TestAdaptiveRest: the pacer decides once a window, from what the
// clients reported, and counts a long pause as idle (the baseline).
func TestAdaptiveRest(t *testing.T) {
	var a adaptive
	var lat clientLatency
	obs := func(n int, d time.Duration) {
		for range n {
			lat.count.Add(1)
			lat.sum.Add(int64(d))
		}
	}
	t0 := time.Unix(1000, 0)
	obs(10, 2*time.Millisecond) // before the mover: the baseline
	if d := a.rest(t0, 100*time.Millisecond, &lat); d != 0 {
		t.Fatalf("first move rests %v, want 0", d)
	}
	obs(10, 50*time.Millisecond)
	if d := a.rest(t0.Add(500*time.Millisecond), 100*time.Millisecond, &lat); d != 0 {
		t.Fatalf("within the first window rests %v, want 0", d)
	}
	if d := a.rest(t0.Add(time.Second), 100*time.Millisecond, &lat); d != 0 {
		t.Fatalf("first decision (sets the baseline) rests %v, want 0", d)
	}
	if a.state.Baseline != 26*time.Millisecond {
		t.Fatalf("baseline %v, want 26ms (the mean of the first window)", a.state.Baseline)
	}
	obs(10, 100*time.Millisecond)
	if d := a.rest(t0.Add(2*time.Second), 100*time.Millisecond, &lat); d != 100*time.Millisecond {
		t.Fatalf("congested: rests %v, want 100ms (speed 1/2)", d)
	}
	obs(10, 10*time.Millisecond) // while the mover paused 10 s
	if d := a.rest(t0.Add(12*time.Second), 100*time.Millisecond, &lat); d != 100*time.Millisecond {
		t.Fatalf("after a pause: rests %v, want 100ms (speed kept)", d)
	}
	if want := 26*time.Millisecond + time.Duration(baselineWeight*float64(-16*time.Millisecond)); a.state.Baseline != want {
		t.Fatalf("baseline after a pause %v, want %v", a.state.Baseline, want)
	}
}

func TestParseAdaptive(t *testing.T) {
	for _, c := range []struct {
		in, want string
		bad      bool
	}{
		{"", "", false}, {"on", "on", false}, {"off", "off", false}, {" OFF ", "off", false}, {"On", "on", false},
		{"yes", "", true}, {"1", "", true}, {"true", "", true}, {"o n", "", true}, {"off\x00", "", true},
		{"on;off", "", true}, {strings.Repeat("on", 1000), "", true}, {"\u00f6n", "", true}, {"-1", "", true},
	} {
		got, err := ParseAdaptive(c.in)
		if c.bad {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("ParseAdaptive(%q) = %q, %v; want ErrInvalidArgument", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseAdaptive(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func FuzzParseAdaptive(f *testing.F) {
	for _, s := range []string{"", "on", "off", " Off ", "yes", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseAdaptive(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) || got != "" {
				t.Fatalf("ParseAdaptive(%q) = %q, %v", s, got, err)
			}
			return
		}
		if got != "" && got != "on" && got != "off" {
			t.Fatalf("ParseAdaptive(%q) = %q", s, got)
		}
	})
}
