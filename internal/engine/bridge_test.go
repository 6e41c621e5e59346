package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
)

// errCut is what a drive behind a network partition answers.
var errCut = errors.New("test: drive cut off by a partition")

// cutDrive is a drive that one engine (one side of a partition) cannot
// reach while cut is set, and whose lazy batches (a commit's settling)
// are lost while loseLazy is set.
type cutDrive struct {
	drive.Drive
	cut, loseLazy *atomic.Bool
}

func (d cutDrive) err() error {
	if d.cut.Load() {
		return errCut
	}
	return nil
}
func (d cutDrive) ReadFormat(ctx context.Context) (drive.Format, error) {
	if err := d.err(); err != nil {
		return drive.Format{}, err
	}
	return d.Drive.ReadFormat(ctx)
}
func (d cutDrive) DiskInfo(ctx context.Context) (drive.DiskInfo, error) {
	if err := d.err(); err != nil {
		return drive.DiskInfo{}, err
	}
	return d.Drive.DiskInfo(ctx)
}
func (d cutDrive) Get(ctx context.Context, t drive.Table, key string) ([]byte, error) {
	if err := d.err(); err != nil {
		return nil, err
	}
	return d.Drive.Get(ctx, t, key)
}
func (d cutDrive) Apply(ctx context.Context, b *drive.Batch) error {
	if err := d.err(); err != nil {
		return err
	}
	if b.Lazy && d.loseLazy != nil && d.loseLazy.Load() {
		return errCut
	}
	return d.Drive.Apply(ctx, b)
}
func (d cutDrive) Scan(ctx context.Context, t drive.Table, q drive.ScanQuery) ([]drive.Entry, error) {
	if err := d.err(); err != nil {
		return nil, err
	}
	return d.Drive.Scan(ctx, t, q)
}
func (d cutDrive) CreateShard(ctx context.Context, ref drive.ShardRef) (drive.FileWriter, error) {
	if err := d.err(); err != nil {
		return nil, err
	}
	return d.Drive.CreateShard(ctx, ref)
}
func (d cutDrive) OpenShard(ctx context.Context, ref drive.ShardRef, off int64) (io.ReadCloser, error) {
	if err := d.err(); err != nil {
		return nil, err
	}
	return d.Drive.OpenShard(ctx, ref, off)
}
func (d cutDrive) DeleteShards(ctx context.Context, refs []drive.ShardRef) error {
	if err := d.err(); err != nil {
		return err
	}
	return d.Drive.DeleteShards(ctx, refs)
}

// TestBridgePartitionKeepsAcknowledgedVersions is finding V3
// (docs/consistency.md) on one erasure set of ten drives (parity 4,
// write quorum 6), as five nodes of two drives each under a bridge
// partition: side A reaches drives 0-3 and the bridge's 8-9, side B
// drives 4-7 and 8-9. Each side's engine is a node there; the key's
// lock excludes them in turn (they run one after the other here).
// Side A writes version a1, acknowledged on its six drives; then side
// B writes. B's read of the key finds its own four drives on v0 and
// the bridge's two on a1 (or, when A's settling batch was lost there,
// on [a1, previous v0]): a1 may be acknowledged (2 drives + the 4 it
// cannot reach make a write quorum), so B must not replace it on the
// bridge without keeping it, nor read v0 as current. Whatever B
// answers, after the partition heals every version acknowledged must be
// readable by its id and listed.
func TestBridgePartitionKeepsAcknowledgedVersions(t *testing.T) {
	for _, tc := range []struct {
		name          string
		loseASettling bool // A's lazy settling batch never reaches the bridge
	}{
		{"bridge settled", false},
		{"bridge settling lost", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			drives := localDrives(t, 10)
			var cutA, cutB, lazyA atomic.Bool
			side := func(cut *atomic.Bool, reach func(p int) bool, lose *atomic.Bool) []drive.Drive {
				ds := make([]drive.Drive, len(drives))
				for p, d := range drives {
					c := cutDrive{Drive: d, cut: &atomic.Bool{}}
					if !reach(p) {
						c.cut = cut
					}
					if p >= 8 {
						c.loseLazy = lose
					}
					ds[p] = c
				}
				return ds
			}
			a := engineOn(t, side(&cutA, func(p int) bool { return p < 4 || p >= 8 }, &lazyA))
			if err := a.MakeBucket(ctx, "ver", BucketOptions{Owner: "o"}); err != nil {
				t.Fatal(err)
			}
			if err := a.SetBucketConfig(ctx, "ver", BucketConfigVersioning, VersioningEnabled); err != nil {
				t.Fatal(err)
			}
			acked := map[string]string{} // version id -> body
			put := func(e *Engine, body string) error {
				info, err := e.PutObject(ctx, "ver", "k", bytes.NewReader([]byte(body)), int64(len(body)), PutOptions{})
				if err == nil {
					acked[info.VersionID] = body
				}
				return err
			}
			if err := put(a, "v0"); err != nil {
				t.Fatal(err)
			}
			// B opens now: it knows the bucket as a node that was up does.
			b := engineOn(t, side(&cutB, func(p int) bool { return p >= 4 }, nil))
			cutA.Store(true)
			cutB.Store(true)
			lazyA.Store(tc.loseASettling)
			if err := put(a, "a1"); err != nil {
				t.Fatalf("side A's put: %v", err)
			}
			lazyA.Store(false)
			// A read through B must not answer v0 either: a1, acknowledged
			// after it, may be the current version (or it refuses).
			if rd, err := b.GetObject(ctx, "ver", "k", GetOptions{}); err == nil {
				got, _ := io.ReadAll(rd)
				rd.Close()
				if string(got) != "a1" {
					t.Errorf("side B reads %q after a1 was acknowledged", got)
				}
			} else {
				t.Logf("side B's get: %v", err)
			}
			errB := put(b, "b1")
			t.Logf("side B's put: %v", errB)
			cutA.Store(false)
			cutB.Store(false)

			all := engineOn(t, drives)
			for id, body := range acked {
				rd, err := all.GetObject(ctx, "ver", "k", GetOptions{VersionID: id})
				if err != nil {
					t.Errorf("acknowledged version %s (%q): %v", id, body, err)
					continue
				}
				got, err := io.ReadAll(rd)
				rd.Close()
				if err != nil || string(got) != body {
					t.Errorf("acknowledged version %s: read %q, %v; want %q", id, got, err, body)
				}
			}
			res, err := all.ListObjectVersions(ctx, "ver", ListVersionsOptions{})
			if err != nil {
				t.Fatal(err)
			}
			listed := map[string]bool{}
			for _, v := range res.Versions {
				listed[v.VersionID] = true
			}
			for id, body := range acked {
				if !listed[id] {
					t.Errorf("acknowledged version %s (%q) not listed", id, body)
				}
			}
		})
	}
}
