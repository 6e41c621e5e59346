package migrate

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
)

// TestFinishMoved: a moved journal entry's MinIO files go only where a
// drive journals the key as adopted; a key no drive journals (the
// owning pool refused it while copying) keeps every file and its entry,
// and is listed; hostile entries (no bucket, no value, a directory
// that leaves the drive) are skipped.
func TestFinishMoved(t *testing.T) {
	ctx := context.Background()
	dirs := []string{t.TempDir(), t.TempDir()} // pool 2's drive, pool 1's drive
	var ds []*drive.Local
	for _, d := range dirs {
		l, err := drive.OpenLocal(d, drive.LocalOptions{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		f := drive.Format{DeploymentID: "dep", SetCount: 1, SetSize: 1, DriveID: "drive-" + filepath.Base(d), Parity: 0}
		if err := l.WriteFormat(ctx, f); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, l)
	}
	write := func(p string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("minio"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// MinIO's files of two split keys on pool 2's drive.
	for _, k := range []string{"adopted.txt", "refused.txt"} {
		write(filepath.Join(dirs[0], "b", k, "xl.meta"))
		write(filepath.Join(dirs[0], "b", k, "0d1c5e0e-2d8e-4b2e-9a3c-5f8f3a5d2b11", "part.1"))
	}
	outside := filepath.Join(filepath.Dir(dirs[0]), "outside", "xl.meta")
	write(outside)
	b := &drive.Batch{}
	b.Put(drive.TableSystem, movedKey("b", "adopted.txt"), []byte("adopted.txt"))
	b.Put(drive.TableSystem, movedKey("b", "refused.txt"), []byte("refused.txt"))
	b.Put(drive.TableSystem, movedPrefix+"nobucket", []byte("x"))
	b.Put(drive.TableSystem, movedKey("b", "empty"), nil)
	b.Put(drive.TableSystem, movedKey("b", "escape"), []byte("../../outside"))
	if err := ds[0].Apply(ctx, b); err != nil {
		t.Fatal(err)
	}
	// Pool 1 adopted adopted.txt (its journal entry), not refused.txt.
	b = &drive.Batch{}
	b.Put(drive.TableSystem, journalKey("b", "adopted.txt"), []byte("adopted.txt"))
	b.Put(drive.TableSystem, journalKey("b", "escape"), []byte("../../outside"))
	if err := ds[1].Apply(ctx, b); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	a := &adopter{opts: Options{Out: &out}}
	for run := range 2 { // again: as after a kill, the same outcome
		removed, err := a.finishMoved(ctx, ds[:1], dirs[:1], ds)
		if err != nil {
			t.Fatal(err)
		}
		if want := run == 0; removed["b/adopted.txt"] != want || len(removed) != map[bool]int{true: 1}[want] {
			t.Fatalf("run %d: removed %v", run+1, removed)
		}
		if _, err := os.Stat(filepath.Join(dirs[0], "b", "adopted.txt")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("run %d: MinIO's files of the adopted key: %v, want gone", run+1, err)
		}
		for _, p := range []string{filepath.Join(dirs[0], "b", "refused.txt", "xl.meta"),
			filepath.Join(dirs[0], "b", "refused.txt", "0d1c5e0e-2d8e-4b2e-9a3c-5f8f3a5d2b11", "part.1"), outside} {
			if _, err := os.Stat(p); err != nil {
				t.Fatalf("run %d: %s: %v, want kept", run+1, p, err)
			}
		}
		if _, err := ds[0].Get(ctx, drive.TableSystem, movedKey("b", "refused.txt")); err != nil {
			t.Fatalf("run %d: the refused key's moved entry: %v, want kept", run+1, err)
		}
		if _, err := ds[0].Get(ctx, drive.TableSystem, movedKey("b", "adopted.txt")); !errors.Is(err, drive.ErrNotFound) {
			t.Fatalf("run %d: the adopted key's moved entry: %v, want removed", run+1, err)
		}
	}
	if len(a.rep.Refused) != 2 || a.rep.Refused[0].Key != "refused.txt" || !strings.Contains(out.String(), "left MinIO's files of b/refused.txt") {
		t.Fatalf("refused %v, output:\n%s", a.rep.Refused, out.String())
	}
}
