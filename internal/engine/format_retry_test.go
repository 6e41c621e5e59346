package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
)

// TestFreshFormatRidesOutASlowDrive: formatting a new deployment tries a
// drive's format again after a fault (a remote drive that timed out once
// under load) instead of failing the start; a refusal is not retried.
func TestFreshFormatRidesOutASlowDrive(t *testing.T) {
	var drives []drive.Drive
	var faulty []*drive.Faulty
	for i := 0; i < 4; i++ {
		l, err := drive.OpenLocal(t.TempDir(), drive.LocalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f := drive.NewFaulty(l)
		faulty = append(faulty, f)
		drives = append(drives, f)
	}
	faulty[2].Inject(drive.Fault{Ops: []drive.Op{drive.OpWriteFormat}, Times: 1, Err: drive.ErrInjectedEIO})
	e, err := New(Config{Drives: drives, Heal: HealConfig{Disabled: true}})
	if err != nil {
		t.Fatalf("a start with one drive failing its format once: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	if n := faulty[2].Calls(drive.OpWriteFormat); n != 2 {
		t.Fatalf("drive 3 saw %d format writes, want 2 (one failed, one retried)", n)
	}
	if _, err := faulty[2].Inner().ReadFormat(context.Background()); err != nil {
		t.Fatalf("drive 3 after the retry: %v", err)
	}

	// A refusal is final: the same drive refusing stays refused.
	d := drive.NewFaulty(faulty[0].Inner())
	d.Inject(drive.Fault{Ops: []drive.Op{drive.OpWriteFormat}, Err: drive.ErrNotBlank})
	if err := writeFormat(context.Background(), d, drive.Format{}); !errors.Is(err, drive.ErrNotBlank) || d.Calls(drive.OpWriteFormat) != 1 {
		t.Fatalf("refusal: %v after %d calls, want ErrNotBlank after 1", err, d.Calls(drive.OpWriteFormat))
	}
}
