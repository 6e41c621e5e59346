package drivefault

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

func TestParse(t *testing.T) {
	fs, err := Parse("# slow and failing\nops=Write,Sync delay=400ms\n\nops=all eio=5 # one in five\nops=writes delay=1s eio=3\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 4 {
		t.Fatalf("%d faults, want 4: %+v", len(fs), fs)
	}
	// EIO faults first, in file order, then the delays.
	if fs[0].Every != 5 || len(fs[0].Ops) != len(allOps) || !errors.Is(fs[0].Err, drive.ErrDriveFaulty) {
		t.Errorf("fault 0: %+v", fs[0])
	}
	if fs[1].Every != 3 || len(fs[1].Ops) != len(drive.WriteOps) {
		t.Errorf("fault 1: %+v", fs[1])
	}
	if fs[2].Delay != 400*time.Millisecond || fs[2].Err != nil || len(fs[2].Ops) != 2 || fs[2].Ops[1] != drive.OpSync {
		t.Errorf("fault 2: %+v", fs[2])
	}
	if fs[3].Delay != time.Second || fs[3].Every != 0 {
		t.Errorf("fault 3: %+v", fs[3])
	}
	for _, empty := range []string{"", "\n\n", "# nothing\n   \t\n"} {
		if fs, err := Parse(empty); err != nil || len(fs) != 0 {
			t.Errorf("Parse(%q) = %v, %v; want no faults", empty, fs, err)
		}
	}
	if fs, err := Parse("delay=1ms"); err != nil || len(fs[0].Ops) != len(allOps) {
		t.Errorf("no ops= means all: %v, %v", fs, err)
	}
}

func TestParseHostile(t *testing.T) {
	bad := []string{
		"ops=all", // nothing to do
		"delay",   // not key=value
		"delay=",  // empty value
		"=1s",     // no key
		"delay=0s", "delay=-1s", "delay=11m", "delay=1", "delay=1e3s", "delay=NaN",
		"eio=0", "eio=-1", "eio=x", "eio=1.5", "eio=99999999999999999999", "eio=1048577",
		"ops=Write,,Sync delay=1s", "ops=write delay=1s", "ops= delay=1s", "ops=all,Write delay=1s", "ops=Hang delay=1s",
		"delay=1s delay=2s", "eio=2 eio=3",
		"speed=1 delay=1s", "delay=1s\x00", "delay=1s\neio=0",
		strings.Repeat("delay=1s\n", MaxLines+1),
		strings.Repeat("#", MaxFileSize+1),
	}
	for _, in := range bad {
		if fs, err := Parse(in); !errors.Is(err, ErrSpec) {
			t.Errorf("Parse(%.40q) = %v, %v; want ErrSpec", in, fs, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"ops=all eio=5", "ops=Write,Sync delay=400ms # x", "delay=1s\neio=2", "ops=reads eio=1 delay=10m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs, err := Parse(s)
		if err != nil {
			return
		}
		for _, fl := range fs {
			if fl.Delay < 0 || fl.Delay > MaxDelay || fl.Every < 0 || fl.Every > MaxEvery || len(fl.Ops) == 0 || (fl.Err == nil && fl.Delay == 0) {
				t.Fatalf("Parse(%q) gave %+v", s, fl)
			}
		}
	})
}
