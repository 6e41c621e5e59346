package wallclock

import (
	"errors"
	"testing"
	"time"
)

func TestParseOffset(t *testing.T) {
	good := map[string]time.Duration{
		"": 0, "  ": 0, "0": 0, "+90s": 90 * time.Second, "-4m30s": -270 * time.Second,
		"1h": time.Hour, " -2s ": -2 * time.Second, "720h": MaxOffset, "-720h": -MaxOffset, "1.5s": 1500 * time.Millisecond,
	}
	for in, want := range good {
		got, err := ParseOffset(in)
		if err != nil || got != want {
			t.Errorf("ParseOffset(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	bad := []string{"90", "+", "-", "s", "1d", "720h1ns", "-721h", "9223372036854775807ns1h", "1e9s", "++1s", "1s; rm -rf /",
		"\x00", "1h\n2h", "NaN", "inf", "99999999999999999999h", "１s"}
	for _, in := range bad {
		if d, err := ParseOffset(in); !errors.Is(err, ErrOffset) {
			t.Errorf("ParseOffset(%q) = %v, %v; want ErrOffset", in, d, err)
		}
	}
}

func FuzzParseOffset(f *testing.F) {
	for _, s := range []string{"", "+90s", "-4m", "720h", "1d", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseOffset(s)
		if err == nil && (d > MaxOffset || d < -MaxOffset) {
			t.Fatalf("ParseOffset(%q) = %v, past MaxOffset", s, d)
		}
		if err != nil && d != 0 {
			t.Fatalf("ParseOffset(%q) = %v with error %v", s, d, err)
		}
	})
}

func TestNowIsOffset(t *testing.T) {
	// Without SHARDSTORE_TEST_CLOCK_OFFSET (go test does not set it) both
	// builds read the real clock.
	if Offset() != 0 {
		t.Skipf("%s is set in this test's environment (offset %v): nothing to compare", EnvOffset, Offset())
	}
	before := time.Now()
	n := Now()
	if n.Before(before) || Check() != nil {
		t.Fatalf("Now() = %v before time.Now() = %v (check: %v)", n, before, Check())
	}
}
