package drivefault

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// EnvFile names the variable that points a testhooks build at its
// faults file.
const EnvFile = "SHARDSTORE_TEST_DRIVE_FAULTS"

// Limits on a faults file.
const (
	MaxFileSize = 16 << 10
	MaxLines    = 32
	MaxDelay    = 10 * time.Minute
	MaxEvery    = 1 << 20
)

// ErrSpec is wrapped by Parse's errors.
var ErrSpec = errors.New("drivefault: bad faults file")

var readOps = []drive.Op{drive.OpGet, drive.OpScan, drive.OpOpenShard, drive.OpRead, drive.OpWalkShards, drive.OpReadFormat, drive.OpDiskInfo}

var allOps = []drive.Op{drive.OpReadFormat, drive.OpWriteFormat, drive.OpDiskInfo, drive.OpGet, drive.OpApply, drive.OpScan,
	drive.OpCreateShard, drive.OpWrite, drive.OpSync, drive.OpOpenShard, drive.OpRead, drive.OpDeleteShards, drive.OpWalkShards}

// Parse reads a faults file's text into the faults it asks for, the
// EIO faults before the delays.
func Parse(text string) ([]drive.Fault, error) {
	if len(text) > MaxFileSize {
		return nil, fmt.Errorf("%w: %d bytes (at most %d)", ErrSpec, len(text), MaxFileSize)
	}
	var eios, delays []drive.Fault
	lines := 0
	for n, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if lines++; lines > MaxLines {
			return nil, fmt.Errorf("%w: more than %d faults", ErrSpec, MaxLines)
		}
		ops := allOps
		var delay time.Duration
		every := 0
		seen := map[string]bool{}
		for _, f := range fields {
			k, v, ok := strings.Cut(f, "=")
			if !ok || v == "" {
				return nil, fmt.Errorf("%w: line %d: %q is not key=value", ErrSpec, n+1, f)
			}
			if seen[k] {
				return nil, fmt.Errorf("%w: line %d: %s twice", ErrSpec, n+1, k)
			}
			seen[k] = true
			switch k {
			case "ops":
				o, err := parseOps(v)
				if err != nil {
					return nil, fmt.Errorf("%w: line %d: %w", ErrSpec, n+1, err)
				}
				ops = o
			case "delay":
				d, err := time.ParseDuration(v)
				if err != nil || d <= 0 || d > MaxDelay {
					return nil, fmt.Errorf("%w: line %d: delay %q: want a duration in (0, %v]", ErrSpec, n+1, v, MaxDelay)
				}
				delay = d
			case "eio":
				e, err := strconv.Atoi(v)
				if err != nil || e < 1 || e > MaxEvery {
					return nil, fmt.Errorf("%w: line %d: eio %q: want 1 to %d (1 call in N fails)", ErrSpec, n+1, v, MaxEvery)
				}
				every = e
			default:
				return nil, fmt.Errorf("%w: line %d: unknown key %q (ops, delay, eio)", ErrSpec, n+1, k)
			}
		}
		if delay == 0 && every == 0 {
			return nil, fmt.Errorf("%w: line %d: no delay and no eio: nothing to do", ErrSpec, n+1)
		}
		if every > 0 {
			eios = append(eios, drive.Fault{Ops: ops, Every: every, Err: drive.ErrInjectedEIO})
		}
		if delay > 0 {
			delays = append(delays, drive.Fault{Ops: ops, Delay: delay})
		}
	}
	return append(eios, delays...), nil
}

func parseOps(v string) ([]drive.Op, error) {
	switch v {
	case "all":
		return allOps, nil
	case "reads":
		return readOps, nil
	case "writes":
		return drive.WriteOps, nil
	}
	var out []drive.Op
	for _, name := range strings.Split(v, ",") {
		found := false
		for _, o := range allOps {
			if string(o) == name {
				out = append(out, o)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown op %q (all, reads, writes, or of %v)", name, allOps)
		}
	}
	return out, nil
}
