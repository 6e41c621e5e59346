package engine

import (
	"bytes"
	"context"
	"math/rand"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// lateDrive answers some calls late, as a drive of an overloaded or
// distant node does: opening shard files (slowCreate) or reading one
// key's record (slowRecord).
type lateDrive struct {
	drive.Drive
	slowCreate bool
	slowRecord string // a drive.ObjectKey
	armed      *atomic.Bool
	delay      time.Duration
}

func (d lateDrive) CreateShard(ctx context.Context, ref drive.ShardRef) (drive.FileWriter, error) {
	if d.slowCreate && d.armed.Load() {
		time.Sleep(d.delay)
	}
	return d.Drive.CreateShard(ctx, ref)
}

func (d lateDrive) Get(ctx context.Context, t drive.Table, key string) ([]byte, error) {
	if t == drive.TableObjects && key == d.slowRecord && d.armed.Load() {
		time.Sleep(d.delay)
	}
	return d.Drive.Get(ctx, t, key)
}

// TestStragglersOfTwoPhasesDoNotSinkTheCommit: a PUT leaves behind the
// drives that open their shard files late (2 of 16), then reads every
// drive's record to commit, where 3 other drives answer late. Leaving
// those behind too would leave the commit 11 drives it can write to, one
// short of write quorum, and fail a PUT that 14 drives could take: the
// record read counts only the drives that took the data, so it waits for
// the late readers instead.
func TestStragglersOfTwoPhasesDoNotSinkTheCommit(t *testing.T) {
	ctx := context.Background()
	const bucket, key = "bkt", "k"
	armed := &atomic.Bool{}
	drives := localDrives(t, 16)
	late := make([]drive.Drive, len(drives))
	for i, d := range drives {
		ld := lateDrive{Drive: d, armed: armed, delay: lagAfter + 600*time.Millisecond}
		switch i {
		case 0, 1:
			ld.slowCreate = true
		case 2, 3, 4:
			ld.slowRecord = drive.ObjectKey(bucket, key)
		}
		late[i] = ld
	}
	e := engineOn(t, late)
	if err := e.MakeBucket(ctx, bucket, BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	body := randBytes(rand.New(rand.NewSource(3)), 1<<20) // shard files, not inline
	armed.Store(true)
	if _, err := e.PutObject(ctx, bucket, key, bytes.NewReader(body), int64(len(body)), PutOptions{}); err != nil {
		t.Fatalf("put with 5 late drives in two phases: %v", err)
	}
	armed.Store(false)
	rd, err := e.GetObject(ctx, bucket, key, GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var got bytes.Buffer
	if _, err := got.ReadFrom(rd); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), body) {
		t.Fatal("object read back differs")
	}
	// The commit reached the 14 drives that took the data.
	n := 0
	for _, d := range drives {
		if _, err := d.Get(ctx, drive.TableObjects, drive.ObjectKey(bucket, key)); err == nil {
			n++
		}
	}
	if n != 14 {
		t.Fatalf("record on %d drives, want the 14 that took the data", n)
	}
}
