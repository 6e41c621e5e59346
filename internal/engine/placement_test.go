package engine

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/placement"
)

// formatDrives writes the format of a deployment of sets sets of size
// drives, with placement alg, on fresh directories (as migrate from-minio
// does for an adopted MinIO deployment).
func formatDrives(t *testing.T, paths []string, depID string, sets, size int, alg placement.Algorithm) {
	t.Helper()
	for i, p := range paths {
		d, err := drive.OpenLocal(p, drive.LocalOptions{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		f := drive.Format{DeploymentID: depID, SetCount: sets, SetSize: size, SetIndex: i / size, DriveIndex: i % size,
			DriveID: fmt.Sprintf("drive-%d", i), Parity: 2, Placement: string(alg)}
		if err := d.WriteFormat(context.Background(), f); err != nil {
			t.Fatal(err)
		}
		d.Close()
	}
}

// TestPlacementFromFormat: an engine on drives whose format records
// MinIO's placement puts and finds every object in the set MinIO's
// SipHash picks (nowhere else), across a restart; drives disagreeing on
// the placement are refused.
func TestPlacementFromFormat(t *testing.T) {
	const depID = "ecf5b48f-a874-4de9-834b-d916fc7aa2a3"
	_, paths := dirPaths(t, 8)
	formatDrives(t, paths, depID, 2, 4, placement.MinIOSipMod)
	want, err := placement.New(placement.MinIOSipMod, depID)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	keys := []string{"folder-1/", "multi-block-0.bin", "folder-0/", "multi-block-2.bin", "a", "b", "c", "d/e/f", "ünïcødé"}
	bySet := map[int]int{}
	for round := range 2 {
		e, err := New(Config{Paths: paths})
		if err != nil {
			t.Fatal(err)
		}
		if e.placer.Algorithm() != placement.MinIOSipMod {
			t.Fatalf("placement %q", e.placer.Algorithm())
		}
		if round == 0 {
			if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
				t.Fatal(err)
			}
		}
		for _, k := range keys {
			body := []byte("body of " + k)
			if round == 0 {
				if _, err := e.PutObject(ctx, "bucket", k, bytes.NewReader(body), int64(len(body)), PutOptions{}); err != nil {
					t.Fatalf("put %s: %v", k, err)
				}
			}
			s := want.Set("bucket", k, 2)
			bySet[s]++
			if got := e.setFor("bucket", k).index; got != s {
				t.Fatalf("%s: engine set %d, MinIO's %d", k, got, s)
			}
			for si, set := range e.sets {
				if rec := recordOn(t, set.drives[0], k); (rec != nil) != (si == s) {
					t.Errorf("%s: record on set %d: %v (placed in set %d)", k, si, rec != nil, s)
				}
			}
			got, err := getAll(t, e, k, GetOptions{})
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("get %s: %q %v", k, got, err)
			}
		}
		e.Close()
	}
	if bySet[0] == 0 || bySet[1] == 0 {
		t.Fatalf("keys per set %v: the test keys must cover both sets", bySet)
	}

	// One drive recording another placement: refused, naming it.
	_, mixed := dirPaths(t, 8)
	formatDrives(t, mixed, depID, 2, 4, placement.MinIOSipMod)
	d, err := drive.OpenLocal(mixed[3], drive.LocalOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	f, err := d.ReadFormat(ctx)
	if err == nil {
		f.Placement = ""
		err = d.WriteFormat(ctx, f)
	}
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Paths: mixed}); err == nil || !strings.Contains(err.Error(), "placement") {
		t.Fatalf("mixed placements: %v", err)
	}
	// An unknown placement (a newer release): refused.
	_, unknown := dirPaths(t, 4)
	formatDrives(t, unknown, depID, 1, 4, "minio-future")
	if _, err := New(Config{Paths: unknown}); err == nil || !strings.Contains(err.Error(), "not known") {
		t.Fatalf("unknown placement: %v", err)
	}
}

// TestRecordedSetSizeKept: drives formatted with sets of another size
// than shardstore would choose for their count (MinIO with
// MINIO_ERASURE_SET_DRIVE_COUNT: 12 drives as 3 sets of 4, where
// shardstore picks one set of 12) form the recorded sets when started
// without --set-size, in argument order.
func TestRecordedSetSizeKept(t *testing.T) {
	const depID = "ecf5b48f-a874-4de9-834b-d916fc7aa2a3"
	_, paths := dirPaths(t, 12)
	formatDrives(t, paths, depID, 3, 4, placement.MinIOSipMod)
	e, err := New(Config{Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if len(e.sets) != 3 {
		t.Fatalf("%d sets, want the 3 recorded", len(e.sets))
	}
	for si, s := range e.sets {
		for i, d := range s.drives {
			if want := paths[si*4+i]; !strings.HasSuffix(d.String(), want) && d.String() != want {
				t.Errorf("set %d slot %d is %s, want %s", si, i, d, want)
			}
		}
	}
}
