package cli

import (
	"bytes"
	"errors"
	"flag"
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
