package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// dirPaths returns n drive paths under a new temporary directory.
func dirPaths(t *testing.T, n int) (root string, paths []string) {
	root = t.TempDir()
	for i := range n {
		paths = append(paths, filepath.Join(root, fmt.Sprintf("d%d", i+1)))
	}
	return root, paths
}

// listTree lists every path under root, relative to it.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			t.Fatalf("walk %s: %v", p, err)
		}
		if rel, _ := filepath.Rel(root, p); rel != "." {
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func TestRefusedStartWritesNothing(t *testing.T) {
	t.Run("parity too high, directories missing", func(t *testing.T) {
		root, paths := dirPaths(t, 4)
		_, err := New(Config{Paths: paths, Parity: 3})
		if err == nil || !strings.Contains(err.Error(), "parity 3 is invalid for sets of 4") {
			t.Fatalf("parity 3 on 4 drives: %v", err)
		}
		if got := listTree(t, root); len(got) != 0 {
			t.Fatalf("refused start left %v", got)
		}
	})
	t.Run("parity too high, empty directories", func(t *testing.T) {
		root, paths := dirPaths(t, 4)
		for _, p := range paths {
			os.Mkdir(p, 0o755)
		}
		if _, err := New(Config{Paths: paths, Parity: 3}); err == nil {
			t.Fatal("parity 3 on 4 drives accepted")
		}
		if got := listTree(t, root); len(got) != 4 {
			t.Fatalf("refused start changed the drives: %v", got)
		}
	})
	t.Run("bad set size", func(t *testing.T) {
		root, paths := dirPaths(t, 6)
		if _, err := New(Config{Paths: paths, SetSize: 4}); err == nil {
			t.Fatal("set size 4 on 6 drives accepted")
		}
		if got := listTree(t, root); len(got) != 0 {
			t.Fatalf("refused start left %v", got)
		}
	})
	t.Run("one drive not blank", func(t *testing.T) {
		root, paths := dirPaths(t, 4)
		os.MkdirAll(filepath.Join(paths[2], "photos"), 0o755)
		_, err := New(Config{Paths: paths})
		if !errors.Is(err, drive.ErrNotBlank) || !strings.Contains(err.Error(), paths[2]) {
			t.Fatalf("non-blank drive: %v", err)
		}
		if got := listTree(t, root); len(got) != 2 { // d3 and d3/photos
			t.Fatalf("refused start left %v", got)
		}
	})
	t.Run("drive of another deployment", func(t *testing.T) {
		_, paths := dirPaths(t, 4)
		e, err := New(Config{Paths: paths})
		if err != nil {
			t.Fatal(err)
		}
		e.Close()
		_, others := dirPaths(t, 4)
		o, err := New(Config{Paths: others})
		if err != nil {
			t.Fatal(err)
		}
		o.Close()
		// Slot 2 is a blank replacement, slot 4 belongs elsewhere: the
		// blank one must not be formatted (or even touched) by a refused
		// start.
		os.RemoveAll(paths[1])
		os.Mkdir(paths[1], 0o755)
		mixed := []string{paths[0], paths[1], paths[2], others[3]}
		if _, err := New(Config{Paths: mixed}); err == nil || !strings.Contains(err.Error(), "another shardstore") {
			t.Fatalf("foreign drive: %v", err)
		}
		if got := listTree(t, paths[1]); len(got) != 0 {
			t.Fatalf("refused start wrote to the blank drive: %v", got)
		}
	})
}

func TestLayoutRecordedAtFormat(t *testing.T) {
	_, paths := dirPaths(t, 8)
	e, err := New(Config{Paths: paths, SetSize: 4, Parity: 1})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	// Without flags the recorded layout is used.
	e, err = New(Config{Paths: paths})
	if err != nil {
		t.Fatalf("restart without --set-size/--parity: %v", err)
	}
	if l := e.Layout(); l.SetSize != 4 || l.Sets != 2 || l.Parity != 1 {
		t.Fatalf("restart layout %+v, want 2 sets of 4 with parity 1", l)
	}
	e.Close()
	// Another set size or parity is refused before anything is written,
	// even with a blank replacement drive waiting to be formatted.
	os.RemoveAll(paths[5])
	os.Mkdir(paths[5], 0o755)
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{SetSize: 8}, "formatted with sets of 4 drives, but --set-size 8"},
		{Config{Parity: 2}, "formatted with parity 1, but --parity 2"},
	} {
		c.cfg.Paths = paths
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%+v: %v, want %q", c.cfg, err, c.want)
		}
		if got := listTree(t, paths[5]); len(got) != 0 {
			t.Fatalf("refused restart wrote to the blank drive: %v", got)
		}
	}
}

func TestMissingDriveIsOfflineNotCreated(t *testing.T) {
	root, paths := dirPaths(t, 4)
	cfg := Config{Paths: paths, DriveProbeInterval: 20 * time.Millisecond,
		Heal: HealConfig{MonitorInterval: 20 * time.Millisecond}}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("shardstore "), 100_000)
	if _, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader(body), int64(len(body)), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Close()

	// The disk of d3 did not mount: its directory is gone.
	if err := os.Rename(paths[2], filepath.Join(root, "unmounted")); err != nil {
		t.Fatal(err)
	}
	e, err = New(cfg)
	if err != nil {
		t.Fatalf("start with a missing drive: %v", err)
	}
	defer e.Close()
	if _, err := os.Stat(paths[2]); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing drive directory was created: %v", err)
	}
	st := e.Status()
	if st.DrivesOnline != 3 || !st.WriteQuorumOK {
		t.Fatalf("status with a missing drive: %+v", st)
	}
	if got, err := getAll(t, e, "k", GetOptions{}); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("degraded read: %v", err)
	}
	if _, err := os.Stat(paths[2]); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing drive directory was created while serving: %v", err)
	}
	ds := e.DriveStatus(ctx)
	if !strings.Contains(ds[2].Error, "does not exist") || ds[2].State != "offline" {
		t.Fatalf("drive status of the missing drive: %+v", ds[2])
	}

	// A replacement disk is mounted there (an empty directory): it is
	// adopted and refilled.
	if err := os.Mkdir(paths[2], 0o755); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		rec := recordOn(t, e.sets[0].drives[2], "k")
		if rec != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("replacement drive was not refilled")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
