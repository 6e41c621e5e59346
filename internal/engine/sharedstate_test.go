package engine

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// TestSharedStates runs one sequence of bucket and config changes on each
// store the engine can choose when it opens: the engine answers alike,
// bucket records reach the drives with every store (a consensus group
// keeps copies there), config documents reach them only without a group,
// and the other nodes get a notice of each change.
func TestSharedStates(t *testing.T) {
	for _, tc := range []struct {
		name           string
		cluster, group bool
		// notices are the change notices the sequence sends, in order.
		notices []string
	}{
		{name: "drives, one node"},
		{name: "drives, a cluster", cluster: true, notices: []string{
			"bucket bkt", "bucket bkt", "config doc",
			// The drives may hold part of a failed config write, so
			// even the refused one tells the others to re-read.
			"config doc",
			"bucket bkt"}},
		{name: "consensus group", cluster: true, group: true, notices: []string{
			"bucket bkt", "bucket bkt", "config doc", "bucket bkt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var mu sync.Mutex
			var notices []string
			cfg := Config{Drives: localDrives(t, 4), Heal: HealConfig{Disabled: true}}
			if tc.cluster {
				cfg.Cluster = &ClusterConfig{FormatNew: true, NodeID: "n1", Changed: func(kind, name string) {
					mu.Lock()
					notices = append(notices, kind+" "+name)
					mu.Unlock()
				}}
			}
			var group *memState
			if tc.group {
				group = newMemState()
				cfg.Cluster.State = group
			}
			e, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if group != nil {
				group.mu.Lock()
				group.onChange = e.StateChanged
				group.mu.Unlock()
			}
			if _, onGroup := e.shared.(raftState); onGroup != tc.group {
				t.Fatalf("engine keeps its state in %T", e.shared)
			}
			onDrives := driveState{e}

			if err := e.MakeBucket(ctx, "bkt", BucketOptions{Owner: "o"}); err != nil {
				t.Fatal(err)
			}
			if err := e.MakeBucket(ctx, "bkt", BucketOptions{Owner: "o"}); !errors.Is(err, ErrBucketExists) {
				t.Fatalf("second make: %v, want ErrBucketExists", err)
			}
			if err := e.SetBucketConfig(ctx, "bkt", BucketConfigTagging, "<Tagging/>"); err != nil {
				t.Fatal(err)
			}
			if err := e.ReloadBuckets(ctx); err != nil {
				t.Fatal(err)
			}
			if err := e.ReloadBucket(ctx, "bkt"); err != nil {
				t.Fatal(err)
			}
			if info, err := e.BucketInfo(ctx, "bkt"); err != nil || info.Tagging != "<Tagging/>" || info.Owner != "o" {
				t.Fatalf("bucket after reloads: %+v, %v", info, err)
			}
			if info, err := onDrives.readRecord(ctx, "bkt"); err != nil || info.Tagging != "<Tagging/>" {
				t.Fatalf("bucket record on the drives: %+v, %v", info, err)
			}

			if _, _, err := e.ReadConfig(ctx, "doc"); !errors.Is(err, ErrNoConfig) {
				t.Fatalf("config never written: %v, want ErrNoConfig", err)
			}
			ver, err := e.WriteConfig(ctx, "doc", 0, []byte("one"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.WriteConfig(ctx, "doc", 0, []byte("lost")); !errors.Is(err, ErrConfigConflict) {
				t.Fatalf("write at a stale version: %v, want ErrConfigConflict", err)
			}
			if data, got, err := e.ReadConfig(ctx, "doc"); err != nil || string(data) != "one" || got != ver {
				t.Fatalf("config: %q at %d, %v; want \"one\" at %d", data, got, err, ver)
			}
			_, _, err = onDrives.readConfig(ctx, "doc")
			if tc.group != errors.Is(err, ErrNoConfig) {
				t.Fatalf("config document on the drives: %v", err)
			}

			if err := e.DeleteBucket(ctx, "bkt"); err != nil {
				t.Fatal(err)
			}
			if err := e.ReloadBucket(ctx, "bkt"); err != nil {
				t.Fatal(err)
			}
			if _, err := e.BucketInfo(ctx, "bkt"); !errors.Is(err, ErrBucketNotFound) {
				t.Fatalf("deleted bucket: %v", err)
			}
			if _, err := onDrives.readRecord(ctx, "bkt"); !errors.Is(err, ErrBucketNotFound) {
				t.Fatalf("deleted bucket's record on the drives: %v", err)
			}

			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(notices, tc.notices) {
				t.Fatalf("notices %q, want %q", notices, tc.notices)
			}
		})
	}
}
