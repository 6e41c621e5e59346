package main

import (
	"testing"
	"time"
)

func TestParseTestFreeDelay(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"", 0, false},
		{"100ms", 100 * time.Millisecond, false},
		{"30s", 30 * time.Second, false},
		{"1h", time.Hour, false},
		{"99ms", 0, true},
		{"0", 0, true},
		{"-5s", 0, true},
		{"1h0m0.001s", 0, true},
		{"30", 0, true},
		{"s", 0, true},
		{" 30s", 0, true},
		{"9999999999999999999h", 0, true},
		{"30s\x00", 0, true},
	} {
		got, err := parseTestFreeDelay(tc.in)
		if tc.bad != (err != nil) || got != tc.want {
			t.Errorf("parseTestFreeDelay(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
