package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// waitLine waits until one of nodes' stderr holds line.
func (c *testCluster) waitLine(what, line string, wait time.Duration, nodes ...int) {
	c.t.Helper()
	deadline := time.Now().Add(wait)
	for {
		for _, i := range nodes {
			if strings.Contains(c.nodes[i].stderr.String(), line) {
				return
			}
		}
		if time.Now().After(deadline) {
			var tails []string
			for _, i := range nodes {
				tails = append(tails, fmt.Sprintf("node %d:\n%s", i+1, tailLines(c.nodes[i].stderr.String(), 15)))
			}
			c.t.Fatalf("%s: not within %v\n%s", what, wait, strings.Join(tails, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestClusterShrink expands a cluster of n nodes (pool 1, the lock
// nodes) by pool 2 on n new nodes, writes versions into both pools,
// decommissions pool 2, and removes it: a node started without pool 2
// while its decommission is not complete is refused, naming the pool;
// once complete, nodes 1-n are restarted one at a time without it while
// the Go SDK writes and reads through them; the first records the
// removal in the consensus group, the leader removes the new nodes from
// the group (RemoveServer), and they are stopped. The cluster keeps
// serving (a bucket created through the group, writes and reads), every
// acknowledged version reads back byte-identical through every
// remaining node. Nightly only: CI runs TestClusterRetireFirstPool,
// which retires pool 1 instead; this one also checks the refusal of a
// start without a pool not yet decommissioned and the removal of a
// pool added by an expansion.
func TestClusterShrink(t *testing.T) {
	nightlyOnly(t, "TestClusterRetireFirstPool's decommission and removal under load (of pool 1, its lock nodes moved)")
	n := expandNodes(t)
	c, one, two := newExpansionCluster(t, n)
	old := make([]int, n)
	for i := range n {
		old[i] = i
		c.launch(i, one)
	}
	for i := range n {
		c.waitReady(i)
	}
	const bucket = "shrinking"
	cl := c.client(0)
	if _, err := cl.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.PutBucketVersioning(ctx(t), &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	type version struct {
		key, id string
		body    []byte
	}
	var versions []version
	put := func(via int, key string, body []byte) {
		t.Helper()
		out, err := c.client(via).PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
		if err != nil {
			t.Fatalf("PUT %s via node %d: %v", key, via+1, err)
		}
		versions = append(versions, version{key, aws.ToString(out.VersionId), body})
	}
	for i := range 8 {
		put(i%n, fmt.Sprintf("k%02d", i), randBytes(4<<10+i*5000))
	}

	// Expand by pool 2 on nodes n+1..2n (rolling, no load: the
	// expansion under load is TestClusterRollingExpansion).
	for i := n; i < 2*n; i++ {
		for j := 1; j <= 2; j++ {
			if err := os.MkdirAll(filepath.Join(c.dirs[i], fmt.Sprintf("b%d", j)), 0o750); err != nil {
				t.Fatal(err)
			}
		}
		c.launch(i, two)
	}
	for _, i := range old {
		c.stopNode(i)
		c.launch(i, two)
		c.waitReady(i)
	}
	all := make([]int, 2*n)
	for i := range all {
		all[i] = i
	}
	c.waitLine("the expansion", "Cluster: expansion complete", 90*time.Second, all...)
	// New versions through the new nodes, of old keys and new ones:
	// some land in pool 2.
	for i := range 16 {
		put(n+i%n, fmt.Sprintf("new%02d", i), randBytes(64<<10+i*777))
	}
	for i := range 8 {
		put(n+i%n, fmt.Sprintf("k%02d", i), randBytes(32<<10+i*999))
	}

	// Leaving pool 2 off before its decommission is complete is
	// refused, naming the pool and what to do.
	c.stopNode(1)
	c.launch(1, one)
	select {
	case <-c.nodes[1].exited:
	case <-time.After(90 * time.Second):
		t.Fatalf("node 2 without pool 2 did not stop:\n%s", tailLines(c.nodes[1].stderr.String(), 20))
	}
	if msg := c.nodes[1].stderr.String(); c.nodes[1].exitErr == nil || !strings.Contains(msg, "pool 2 (") || !strings.Contains(msg, "is not being decommissioned") ||
		!strings.Contains(msg, "decommission start 2") {
		t.Errorf("node 2 without pool 2 before its decommission: %v\n%s", c.nodes[1].exitErr, tailLines(msg, 20))
	}
	c.launch(1, two)
	c.waitReady(1)

	// Decommission pool 2.
	if _, err := c.admin(0, "pool", "decommission", "start", "2"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; {
		var reply struct {
			Decommissions []struct {
				State    string
				Versions int64
			}
		}
		out, err := c.admin(0, "pool", "status", "--json")
		if err == nil {
			err = json.Unmarshal(out, &reply)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(reply.Decommissions) == 1 && reply.Decommissions[0].State == "complete" {
			t.Logf("pool 2 decommissioned: %d versions moved", reply.Decommissions[0].Versions)
			if reply.Decommissions[0].Versions == 0 {
				t.Error("the decommission moved no version: none of the 16 new keys went to pool 2")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("decommission not complete within 2 minutes: %+v", reply.Decommissions)
		}
		time.Sleep(250 * time.Millisecond)
	}

	// Remove it: nodes 1..n restarted one at a time with pool 1 alone,
	// clients writing and reading through them.
	var clients []*s3.Client
	for i := range n {
		clients = append(clients, c.client(i))
	}
	load := startClientLoad(t, clients, bucket, "load/")
	for round, i := range old {
		time.Sleep(time.Second)
		c.stopNode(i)
		c.launch(i, one)
		c.waitReady(i)
		if round == 0 && !strings.Contains(c.nodes[i].stderr.String(), "Cluster: pool removal recorded: pool(s) [2] left out") {
			t.Errorf("node %d did not record the removal:\n%s", i+1, tailLines(c.nodes[i].stderr.String(), 20))
		}
	}
	// The leader removes nodes n+1..2n from the consensus group once
	// every remaining node runs without pool 2; then they are stopped.
	for i := n; i < 2*n; i++ {
		id := fmt.Sprintf("http://%s:%d", c.hosts[i], c.ports[i])
		c.waitLine("node "+id+" removed from the consensus group", "Cluster: node "+id+" holds no drive of the deployment's pools: removed from the consensus group", 90*time.Second, all...)
	}
	load.stop(t)
	// Before nodes n+1..2n stop, every acknowledged object reads back
	// through node 1 (pool 1 only); one that does not is looked up
	// through node n+1, which still has pool 2, to say where it went.
	for key, want := range load.acked {
		if _, err := c.client(0).HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
			_, err2 := c.client(n).HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
			t.Errorf("acknowledged %s (%d bytes) not found through node 1 (%v); through node %d, which has pool 2: %v", key, len(want), err, n+1, err2)
		}
	}
	for i := n; i < 2*n; i++ {
		c.stopNode(i)
	}

	// Bucket changes go through the consensus group of the remaining
	// nodes.
	if _, err := c.client(1).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("after-shrink")}); err != nil {
		t.Fatalf("create a bucket after the removal: %v", err)
	}
	body := randBytes(100 << 10)
	if _, err := c.client(2).PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("after-shrink"), Key: aws.String("x"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	put(3%n, "after", randBytes(20<<10))
	for _, i := range old {
		mustGet(t, c.client(i), "after-shrink", "x", body, fmt.Sprintf("node %d after the removal", i+1))
		for _, v := range versions {
			g, err := c.client(i).GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(v.key), VersionId: aws.String(v.id)})
			if err != nil {
				t.Fatalf("node %d after the removal: %s version %s: %v", i+1, v.key, v.id, err)
			}
			got, err := io.ReadAll(g.Body)
			g.Body.Close()
			if err != nil || !bytes.Equal(got, v.body) {
				t.Fatalf("node %d after the removal: %s version %s differs (%v)", i+1, v.key, v.id, err)
			}
		}
		for key, want := range load.acked {
			mustGet(t, c.client(i), bucket, key, want, fmt.Sprintf("node %d after the removal", i+1))
		}
	}
	t.Logf("%d versions and %d objects written under load read back through nodes 1-%d", len(versions), len(load.acked), n)
}
