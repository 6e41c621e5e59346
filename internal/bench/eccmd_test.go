package bench

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	// ProgressBar on: the bar must draw into Stderr without breaking
	// anything, even though a buffer is not a terminal.
	err := RunECCommand(context.Background(), args, CLI{Stdout: &out, Stderr: &errb, ProgressBar: true})
	return out.String(), errb.String(), err
}

var tinyArgs = []string{"-config", "4+2", "-config", "3+1,2+2", "-threads", "1,2", "-isa", "go",
	"-block-size", "2KiB", "-blocks", "6", "-verify"}

func TestECCommandTable(t *testing.T) {
	chart := filepath.Join(t.TempDir(), "ec.png")
	out, stderr, err := runCmd(t, append(tinyArgs, "-chart", chart)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	// 3 configs x 2 thread counts x (encode + K reconstructs: 3, 2, 3).
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "go ") {
			rows++
		}
	}
	if rows != 2*(3+2+3) {
		t.Errorf("table has %d result rows, want 16:\n%s", rows, out)
	}
	if !strings.Contains(out, "6 blocks x 2 KiB") {
		t.Errorf("header does not describe the run:\n%s", out)
	}
	if !strings.Contains(stderr, "bench ec") {
		t.Errorf("no progress bar on stderr: %q", stderr)
	}
	f, err := os.Open(chart)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("chart file is not a PNG: %v", err)
	}
}

func TestECCommandJSONAndCSV(t *testing.T) {
	out, _, err := runCmd(t, append(tinyArgs, "-json", "-quiet", "-max-lost", "1")...)
	if err != nil {
		t.Fatal(err)
	}
	var rep ECReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("-json output does not parse: %v\n%s", err, out)
	}
	if len(rep.Results) != 3*2*2 || rep.BlockSize != 2048 || rep.Blocks != 6 {
		t.Errorf("-json report: %d results, block size %d, blocks %d", len(rep.Results), rep.BlockSize, rep.Blocks)
	}

	out, stderr, err := runCmd(t, append(tinyArgs, "-csv", "-quiet", "-no-encode")...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr, "\r") {
		t.Errorf("-quiet still drew a progress bar: %q", stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("-csv output does not parse: %v", err)
	}
	if len(recs) != 1+2*(2+1+2) {
		t.Errorf("-csv: %d records, want header + 10", len(recs))
	}
	for _, r := range recs[1:] {
		if r[4] != OpReconstruct {
			t.Errorf("-no-encode still measured %v", r)
		}
	}
}

func TestECCommandErrors(t *testing.T) {
	if _, _, err := runCmd(t, "-h"); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: err = %v, want flag.ErrHelp", err)
	}
	for _, args := range [][]string{
		{"-config", "12x4"},
		{"-threads", "0"},
		{"-isa", "mmx"},
		{"-block-size", "lots"},
		{"-json", "-csv"},
		{"-no-encode", "-no-reconstruct"},
		{"-chart", "out.gif"},
		{"-max-threads", "0"},
		{"extra"},
	} {
		if _, _, err := runCmd(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int{"1048576": 1 << 20, "1MiB": 1 << 20, "64k": 64 << 10, "2 GiB": 2 << 30, "512B": 512} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "MiB", "1.5M"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q): no error", bad)
		}
	}
}
