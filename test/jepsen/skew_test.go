package jepsen

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestSkewedRestartServes is finding S1 (docs/consistency.md): a node
// restarted with its clock ahead of the others' by D, within the
// node-to-node signatures' 5 minutes, refused every peer's request for D
// after its start (peerauth's replay guard judged them by date: all
// dated before its start), so it served nothing for D. Now the peers'
// requests name its new run once it has called them, and it serves as
// soon as it has joined. The bound checked is D less a minute: before
// the fix the node could not be ready before D had passed.
func TestSkewedRestartServes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a 3-node cluster and restarts a node (about a minute)")
	}
	if os.Getenv("SHARDSTORE_BIN") != "" {
		t.Skip("SHARDSTORE_BIN is set: the clock offset needs the harness's testhooks build")
	}
	const ahead = 4 * time.Minute
	nw, note, err := NewNetwork(os.Getenv("SHARDSTORE_JEPSEN_NET"), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer nw.Close()
	t.Logf("network: %s", note)
	c, err := StartCluster(binary, t.TempDir(), nw, 3, 2, "--drive-timeout", "3s")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	ctx, cancel := ctxTimeout(time.Minute)
	defer cancel()
	bucket, key := aws.String("skew"), aws.String("k")
	if _, err := c.Client(0).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: bucket}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	if _, err := c.Client(0).PutObject(ctx, &s3.PutObjectInput{Bucket: bucket, Key: key, Body: bytes.NewReader([]byte("before"))}); err != nil {
		t.Fatalf("put: %v", err)
	}

	c.SetEnv(1, clockEnv(ahead))
	if err := c.Term(1); err != nil {
		t.Fatal(err)
	}
	if err := c.launch(1); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitReady(1, ahead-time.Minute); err != nil {
		t.Fatalf("node 2, restarted with its clock %v ahead: %v\nnode 1's log:\n%s", ahead, err, c.Log(0, 20))
	}
	ctx2, cancel2 := ctxTimeout(time.Minute)
	defer cancel2()
	out, err := c.Client(1).GetObject(ctx2, &s3.GetObjectInput{Bucket: bucket, Key: key})
	if err != nil {
		t.Fatalf("GET through the skewed node: %v\n%s", err, c.Log(1, 20))
	}
	b, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if string(b) != "before" {
		t.Fatalf("GET through the skewed node: %q", b)
	}
	if _, err := c.Client(1).PutObject(ctx2, &s3.PutObjectInput{Bucket: bucket, Key: key, Body: bytes.NewReader([]byte("after"))}); err != nil {
		t.Fatalf("PUT through the skewed node: %v\n%s", err, c.Log(1, 20))
	}
	out, err = c.Client(2).GetObject(ctx2, &s3.GetObjectInput{Bucket: bucket, Key: key})
	if err != nil {
		t.Fatalf("GET through another node: %v", err)
	}
	b, _ = io.ReadAll(out.Body)
	out.Body.Close()
	if string(b) != "after" {
		t.Fatalf("GET through another node after the skewed node's PUT: %q", b)
	}
}
