package background

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// refillState reads d's refill record.
func refillState(t *testing.T, d drive.Drive) (RefillState, bool) {
	t.Helper()
	raw, err := getRecord(context.Background(), d, RefillRecord)
	if err != nil {
		return RefillState{}, false
	}
	var st RefillState
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	return st, true
}

// refillFake is a namespace of two buckets over two sets, the keys of
// set 0 those ending in an even digit, with drive 1 of set 0 blank.
func refillFake(t *testing.T) (*fakeEngine, []drive.Drive, []string) {
	clock := newFakeClock()
	f := newFakeEngine(clock)
	drives := localDrives(t, 4)
	f.sets = [][]drive.Drive{drives[:2], drives[2:]}
	f.setOf = func(bucket, key string) int { return int(key[len(key)-1]-'0') % 2 }
	var mine []string
	for _, b := range []string{"a", "b"} {
		for i := 0; i < 10; i++ {
			k := fmt.Sprintf("k%d", i)
			f.put(b, k)
			if i%2 == 0 {
				mine = append(mine, b+"/"+k)
			}
		}
	}
	f.driveIDs[drives[1]] = "new-drive"
	return f, drives, mine
}

func healedKeys(f *fakeEngine) []string {
	var out []string
	for _, c := range f.healCalls() {
		out = append(out, c.bucket+"/"+c.key)
	}
	return out
}

// TestRefillBlankDrive: the drive monitor finds a blank drive (no bucket
// record while buckets exist) and heals onto it every object of its set,
// recording its progress on the drive until done.
func TestRefillBlankDrive(t *testing.T) {
	f, drives, mine := refillFake(t)
	j := start(t, f, Config{ScanInterval: -1, MonitorInterval: time.Hour}, Options{})
	waitFor(t, "the refill", func() bool { st, _ := refillState(t, drives[1]); return st.Done })
	waitFor(t, "the refill to end", j.RefillsDone)
	st, _ := refillState(t, drives[1])
	if st.DriveID != "new-drive" || st.Objects != len(mine) || st.Bucket != "b" || st.After != "k9" {
		t.Fatalf("refill record %+v", st)
	}
	if got := healedKeys(f); !slices.Equal(got, mine) {
		t.Fatalf("healed %v, want the set's objects %v", got, mine)
	}
	if _, ok := refillState(t, drives[0]); ok {
		t.Fatal("a drive that holds its buckets got a refill record")
	}
}

// TestRefillResumes: a refill recorded part way (the engine adopted the
// drive, MarkRefillNeeded, and a restart stopped it after a key) goes on
// after that key instead of starting again.
func TestRefillResumes(t *testing.T) {
	f, drives, mine := refillFake(t)
	ctx := context.Background()
	if err := MarkRefillNeeded(ctx, drives[1], "new-drive"); err != nil {
		t.Fatal(err)
	}
	st, _ := refillState(t, drives[1])
	st.Bucket, st.After, st.Objects = "a", "k4", 3
	if err := saveRefill(ctx, drives[1], &st); err != nil {
		t.Fatal(err)
	}
	start(t, f, Config{ScanInterval: -1, MonitorInterval: time.Hour}, Options{})
	waitFor(t, "the refill", func() bool { st, _ := refillState(t, drives[1]); return st.Done })
	st, _ = refillState(t, drives[1])
	var rest []string
	for _, k := range mine {
		if k > "a/k4" {
			rest = append(rest, k)
		}
	}
	if got := healedKeys(f); !slices.Equal(got, rest) || st.Objects != len(mine) {
		t.Fatalf("resumed refill healed %v (%d objects in all), want %v (%d)", got, st.Objects, rest, len(mine))
	}
	if st.Started.IsZero() || st.Started.Year() == f.clock.Now().Year() {
		t.Fatalf("refill started %v: the time MarkRefillNeeded recorded was lost", st.Started)
	}
}
