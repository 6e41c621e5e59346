package engine

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"", 0, false}, {"0", 0, false}, {"  0 ", 0, false}, {"1", 1, false}, {"64MiB", 64 << 20, false},
		{"64MiB/s", 64 << 20, false}, {"1G", 1 << 30, false}, {"10mb", 10_000_000, false}, {"5 KiB", 5 << 10, false},
		{"2TB", 2_000_000_000_000, false}, {"100Bps", 100, false},
		{"-1", 0, true}, {"1.5MiB", 0, true}, {"MiB", 0, true}, {"1XB", 0, true}, {"9999999999999999999", 0, true},
		{"9000000TiB", 0, true}, {"1e9", 0, true}, {"0x10", 0, true}, {"\x00", 0, true}, {"1MiB/s/s", 0, true},
		{"٣", 0, true},
	} {
		got, err := ParseRate(tc.in)
		if tc.bad {
			if err == nil || !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("ParseRate(%q) = %d, %v; want an invalid-argument error", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestParseObjectRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		bad  bool
	}{
		{"", 0, false}, {"0", 0, false}, {"100", 100, false}, {"2.5/s", 2.5, false}, {"1000000", 1e6, false},
		{"-1", 0, true}, {"NaN", 0, true}, {"Inf", 0, true}, {"1e7", 0, true}, {"ten", 0, true}, {"1,5", 0, true},
	} {
		got, err := ParseObjectRate(tc.in)
		if tc.bad {
			if err == nil || !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("ParseObjectRate(%q) = %v, %v; want an invalid-argument error", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseObjectRate(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseThreshold(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		bad  bool
	}{
		{"", DefaultRebalThreshold, false}, {"5%", 0.05, false}, {"0.1", 0.1, false}, {" 12.5% ", 0.125, false},
		{"0", 0, true}, {"0%", 0, true}, {"1", 0, true}, {"100%", 0, true}, {"-5%", 0, true}, {"NaN", 0, true},
		{"+Inf", 0, true}, {"5%%", 0, true}, {"%", 0, true}, {"abc", 0, true}, {"1e-400", 0, true},
	} {
		got, err := ParseThreshold(tc.in)
		if tc.bad {
			if err == nil || !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("ParseThreshold(%q) = %v, %v; want an invalid-argument error", tc.in, got, err)
			}
			continue
		}
		if err != nil || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("ParseThreshold(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"64MiB", "1G/s", "0", "", "-1", "9999999999999999999TiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseRate(s)
		if err == nil && n < 0 {
			t.Fatalf("ParseRate(%q) = %d: negative", s, n)
		}
		if _, err := ParseObjectRate(s); err != nil && !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("ParseObjectRate(%q): %v is not an invalid argument", s, err)
		}
		if v, err := ParseThreshold(s); err == nil && (v <= 0 || v >= 1) {
			t.Fatalf("ParseThreshold(%q) = %v: out of (0, 1)", s, v)
		}
	})
}

// TestMovePacer: the pacer spaces moves to the limits, starts a new
// window after a change of limits or an idle second, and never waits
// without a limit.
func TestMovePacer(t *testing.T) {
	var m movePacer
	now := time.Unix(1000, 0)
	if d := m.delay(now, 1<<30); d != 0 {
		t.Fatalf("no limit: waits %v", d)
	}
	m.set(MoveThrottle{Bandwidth: 1 << 20})
	if d := m.delay(now, 1<<20); d != time.Second {
		t.Fatalf("1 MiB at 1 MiB/s: waits %v, want 1s", d)
	}
	now = now.Add(time.Second)
	if d := m.delay(now, 512<<10); d != 500*time.Millisecond {
		t.Fatalf("another 512 KiB: waits %v, want 500ms", d)
	}
	// Idle for a while: a new window.
	now = now.Add(10 * time.Second)
	if d := m.delay(now, 0); d != 0 {
		t.Fatalf("after an idle spell, an empty move waits %v", d)
	}
	m.set(MoveThrottle{Objects: 4})
	if d := m.delay(now, 1<<30); d != 250*time.Millisecond {
		t.Fatalf("4 objects/s: waits %v, want 250ms", d)
	}
	m.set(MoveThrottle{Bandwidth: 1 << 20, Objects: 1000})
	if d := m.delay(now, 2<<20); d != 2*time.Second {
		t.Fatalf("both limits: waits %v, want the larger (2s)", d)
	}
}
