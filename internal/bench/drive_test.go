package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/cpustat"
	"github.com/shardstore/shardstore/internal/drive"
)

func TestDriveCommandJSON(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"-queues", "1,2", "-depth", "2", "-objects", "2", "-size", "1MiB", "-drives", "6", "-parity", "2", "-failed", "2",
		"-dir", t.TempDir(), "-json"}
	if err := RunDriveCommand(context.Background(), args, CLI{Stdout: &out, Stderr: &errb, ProgressBar: true}); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	var rep DriveReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	if len(rep.Results) != 4 || len(rep.Drives) != 6 {
		t.Fatalf("%d rows on %d drives, want 4 rows on 6", len(rep.Results), len(rep.Drives))
	}
	for i, r := range rep.Results {
		wantOp, wantFailed := DriveOpWrite, 0
		if i >= 2 {
			wantOp, wantFailed = DriveOpRead, 2
		}
		slots := r.Queues * r.Depth
		if r.Op != wantOp || r.Failed != wantFailed || r.Objects != 2*slots || r.Bytes != int64(r.Objects)<<20 {
			t.Errorf("row %d: %+v", i, r)
		}
		if r.CPUPerGiB <= 0 || r.ProcessCores <= 0 {
			t.Errorf("row %d: no process CPU recorded", i)
		}
		if r.ClientCores+r.ServerCores <= 0 && len(r.Threads) > 0 {
			t.Errorf("row %d: threads listed but no cores attributed", i)
		}
	}
	// With 2 of 6 drives (4+2) offline reads still succeed: the engine
	// reconstructed from parity. That the reads ran at all proves it.
	if rep.Data != 4 || rep.Parity != 2 {
		t.Errorf("geometry %d+%d, want 4+2", rep.Data, rep.Parity)
	}
}

func TestDriveCommandTableOnGivenDrives(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"-queues", "2", "-objects", "1", "-size", "300KiB", "-failed", "1", "-parity", "1",
		filepath.Join(dir, "d{1...4}")}
	if err := RunDriveCommand(context.Background(), args, CLI{Stdout: &out, Stderr: &errb}); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	s := out.String()
	for _, want := range []string{"Drives: 4 (3+1)", "MOST CONSUMED", "Busiest threads", "write", "read"} {
		if !strings.Contains(s, want) {
			t.Errorf("table lacks %q:\n%s", want, s)
		}
	}
	// The drive directories did not exist: the bench made them, and
	// removed them again.
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Errorf("bench left %d entries in %s (err %v)", len(left), dir, err)
	}
}

func TestDriveCommandErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-queues", "0"},
		{"-op", "erase"},
		{"-failed", "16"},
		{"-size", "x"},
		{"/tmp/d{1...2}", "/tmp/d{1...2}"},
	} {
		var out, errb bytes.Buffer
		if err := RunDriveCommand(context.Background(), append([]string{"-dir", t.TempDir()}, args...), CLI{Stdout: &out, Stderr: &errb}); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestSwitchDrive(t *testing.T) {
	l, err := drive.OpenLocal(t.TempDir(), drive.LocalOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s := newSwitchDrive(l)
	defer s.Close()
	ctx := context.Background()
	if err := s.WriteFormat(ctx, drive.Format{DeploymentID: "d", SetCount: 1, SetSize: 1}); err != nil {
		t.Fatal(err)
	}
	var b drive.Batch
	b.Put(drive.TableObjects, "f", []byte("x"))
	if err := s.Apply(ctx, &b); err != nil {
		t.Fatal(err)
	}
	s.SetOffline(true)
	if _, err := s.Get(ctx, drive.TableObjects, "f"); !errors.Is(err, drive.ErrDriveFaulty) {
		t.Errorf("offline read: %v, want ErrDriveFaulty", err)
	}
	if _, err := s.ReadFormat(ctx); !errors.Is(err, drive.ErrDriveFaulty) {
		t.Errorf("offline format read: %v, want ErrDriveFaulty", err)
	}
	if _, err := s.CreateShard(ctx, drive.ShardRef{ID: "abcdef12", Part: 0}); !errors.Is(err, drive.ErrDriveFaulty) {
		t.Errorf("offline create: %v, want ErrDriveFaulty", err)
	}
	s.SetOffline(false)
	if v, err := s.Get(ctx, drive.TableObjects, "f"); err != nil || string(v) != "x" {
		t.Errorf("back online: %q, %v", v, err)
	}
}

func TestThreadSummary(t *testing.T) {
	tr := threadReport{
		elapsed: time.Second,
		threads: []cpustat.ThreadUsage{
			{ID: 10, Name: "ss-client-0", User: 600 * time.Millisecond, Cores: 0.6},
			{ID: 11, Name: "shardstore", User: 300 * time.Millisecond, Cores: 0.3},
			{ID: 12, Name: "shardstore", Cores: 0},
		},
		perCore: map[int]time.Duration{0: 600 * time.Millisecond, 1: 300 * time.Millisecond, 3: 100 * time.Millisecond},
	}
	client, server, top, loads := tr.summarize(5, []int{0, 1, 2})
	if client != 0.6 || server != 0.3 {
		t.Errorf("client %v server %v, want 0.6 and 0.3", client, server)
	}
	if len(top) != 2 || top[0].Role != "client" || top[1].Role != "server" {
		t.Errorf("top threads %+v: want the two busy ones, client first", top)
	}
	if len(top) == 2 && (top[0].Label != threadClientLabel || top[1].Label != threadRuntimeLabel) {
		t.Errorf("top threads %+v: want labelled by role", top)
	}
	// Core 2 had nothing (idle), core 3 was not in /proc/stat's list but
	// ran our threads, so it is counted too.
	want := []float64{0.6, 0.3, 0, 0.1}
	if len(loads) != len(want) {
		t.Fatalf("loads %v, want %v", loads, want)
	}
	for i := range want {
		if d := loads[i] - want[i]; d > 1e-9 || d < -1e-9 {
			t.Errorf("loads %v, want %v", loads, want)
			break
		}
	}
}
