package cli

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"15": 15 * time.Second, "0.5": 500 * time.Millisecond, "2m": 2 * time.Minute, " 30s ": 30 * time.Second} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"-1", "-2s", "soon", ""} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

func TestParseAndReport(t *testing.T) {
	newFS := func() (*flag.FlagSet, *time.Duration) {
		fs := flag.NewFlagSet("demo", flag.ContinueOnError)
		var d time.Duration
		DurationVar(fs, &d, "wait", 3*time.Second, "how long")
		return fs, &d
	}
	fs, d := newFS()
	var out bytes.Buffer
	if err := Parse(fs, []string{"--wait", "7"}, &out, "shardstore demo", "usage: shardstore demo"); err != nil || *d != 7*time.Second || out.Len() != 0 {
		t.Fatalf("parse: %v %v %q", err, *d, out.String())
	}
	fs, _ = newFS()
	if err := Parse(fs, []string{"-h"}, &out, "shardstore demo", "usage: shardstore demo"); !errors.Is(err, flag.ErrHelp) ||
		!strings.Contains(out.String(), "usage: shardstore demo") || !strings.Contains(out.String(), "-wait") {
		t.Fatalf("help: %v %q", err, out.String())
	}
	fs, _ = newFS()
	out.Reset()
	err := Parse(fs, []string{"--bogus"}, &out, "shardstore demo", "usage")
	var ue *UsageError
	if !errors.As(err, &ue) || out.Len() != 0 {
		t.Fatalf("bad flag: %v, printed %q", err, out.String())
	}
	var w bytes.Buffer
	if code := Report(&w, "demo", err); code != 2 || strings.Count(w.String(), "-bogus") != 1 ||
		!strings.Contains(w.String(), "usage: shardstore demo") || !strings.Contains(w.String(), "shardstore demo -h") {
		t.Fatalf("report %d:\n%s", code, w.String())
	}
	w.Reset()
	if code := Report(&w, "demo", errors.New("disk on fire")); code != 1 || w.String() != "shardstore demo: disk on fire\n" {
		t.Fatalf("plain error %d: %q", code, w.String())
	}
	if code := Report(&w, "demo", flag.ErrHelp); code != 0 {
		t.Fatalf("help exit %d", code)
	}
}

// TestGroupPick: a group's subcommand, its refusals (listing what it
// accepts) and its help, with hostile first arguments.
func TestGroupPick(t *testing.T) {
	g := Group{Name: "admin pool", Usage: "shardstore admin pool COMMAND", Head: "the pools\n", Commands: []string{"status", "decommission", "rebalance"}}
	what, rest, err := g.Pick([]string{"decommission", "start", "2"}, io.Discard)
	if err != nil || what != "decommission" || strings.Join(rest, " ") != "start 2" {
		t.Fatalf("Pick: %q %q %v", what, rest, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "missing pool command (status, decommission or rebalance)"},
		{[]string{""}, `unknown pool command "" (status, decommission or rebalance)`},
		{[]string{"STATUS"}, `unknown pool command "STATUS"`},
		{[]string{"status\x00"}, `unknown pool command "status\x00"`},
		{[]string{"--status"}, `unknown pool command "--status"`},
		{[]string{strings.Repeat("x", 4096)}, "unknown pool command"},
	} {
		_, _, err := g.Pick(tc.args, io.Discard)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || ue.Help != "shardstore admin pool -h" || ue.Usage != g.Usage {
			t.Errorf("Pick(%q): %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	for _, h := range []string{"-h", "-help", "--help", "help"} {
		var out strings.Builder
		if _, _, err := g.Pick([]string{h}, &out); !errors.Is(err, flag.ErrHelp) || out.String() != "the pools\n" {
			t.Errorf("Pick(%s): %v, printed %q", h, err, out.String())
		}
	}
	{
		one := Group{Name: "admin cluster", Commands: []string{"upgrade-status"}}
		if _, _, err := one.Pick(nil, io.Discard); err == nil || err.Error() != "missing cluster command (upgrade-status)" {
			t.Errorf("one command: %v", err)
		}
	}
}
