package cluster

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/shardstore/shardstore/test/internal/serverbin"
)

// TestClusterFreesResumeAfterKill: in a cluster, data a node replaced or
// deleted is freed FreeDelay later by that node's timers; a node killed
// meanwhile dropped those frees, and the shard files waited for the
// scanner's orphan sweep (an hour; H1 in docs/consistency.md). Now each
// free is queued on its drive in the batch that drops the version, and
// the drive's own node frees it. Three nodes of the testhooks build with
// SHARDSTORE_TEST_FREE_DELAY=30s (the release build ignores it; its
// delay is 10 minutes): node 1 overwrites 8 objects twice, is killed -9
// before the delay is out, and restarted; every drive must come back to
// the live objects' shard files only, well within the hour, and every
// object read back byte for byte through every node. Before the fix
// every drive kept the replaced versions' files.
func TestClusterFreesResumeAfterKill(t *testing.T) {
	nightlyOnly(t, "TestDelayedFreesSurviveRestart (internal/engine: the same queue and restart on one engine)")
	bin, cleanup, err := serverbin.BuildTags("shardstore-cluster-hooks-", "testhooks")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	t.Setenv("SHARDSTORE_TEST_FREE_DELAY", "30s")
	const nodes, drives, objects = 3, 2, 8
	c := startBins(t, nodes, drives, false, encryptAll, nil, []string{bin, bin, bin})

	n1 := c.client(0)
	if _, err := n1.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("frees")}); err != nil {
		t.Fatal(err)
	}
	live := map[string][]byte{}
	for round := 0; round < 3; round++ {
		for i := 0; i < objects; i++ {
			b := make([]byte, 1<<20)
			_, _ = rand.Read(b)
			k := fmt.Sprintf("obj%d", i)
			live[k] = b
			if _, err := n1.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("frees"), Key: aws.String(k), Body: bytes.NewReader(b)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	counts := func() []int {
		var out []int
		for i := 0; i < nodes; i++ {
			for j := 1; j <= drives; j++ {
				out = append(out, shardFileCount(t, c.driveDir(i, j)))
			}
		}
		return out
	}
	before := counts()
	c.kill(0)
	pending := false
	for _, n := range before {
		if n < objects {
			t.Fatalf("shard files per drive before the kill: %v, want at least %d (each object's live version)", before, objects)
		}
		pending = pending || n > objects
	}
	if !pending {
		t.Fatalf("shard files per drive before the kill: %v: every replaced version was freed already, so the kill proves nothing (the machine took more than the 30 s delay to write 24 objects)", before)
	}
	t.Logf("shard files per drive at the kill: %v (%d live objects)", before, objects)
	c.restart(0)
	// Due 30 s after each overwrite; a drive's node frees what is still
	// queued 30 s after that (sweeping every 7.5 s). The orphan sweep's
	// grace is an hour.
	deadline := time.Now().Add(4 * time.Minute)
	for {
		got := counts()
		done := true
		for _, n := range got {
			done = done && n == objects
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("shard files per drive 4 minutes after the restart: %v, want %d each: the frees pending at the kill were dropped", got, objects)
		}
		time.Sleep(2 * time.Second)
	}
	for i := 0; i < nodes; i++ {
		for k, want := range live {
			out, err := c.client(i).GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("frees"), Key: aws.String(k)})
			if err != nil {
				t.Fatalf("GET %s through node %d: %v", k, i+1, err)
			}
			got, err := io.ReadAll(out.Body)
			out.Body.Close()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("GET %s through node %d: %d bytes (%v), want the %d written", k, i+1, len(got), err, len(want))
			}
		}
	}
}

// shardFileCount counts the shard files of a drive (regular files under
// its data directory).
func shardFileCount(t *testing.T, driveDir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(driveDir, ".shardstore.sys", "data"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
