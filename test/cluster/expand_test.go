package cluster

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/shardstore/shardstore/internal/admin"
)

// expandNodes is how many nodes the cluster starts with, and how many
// the expansion adds (SHARDSTORE_EXPAND_NODES, 4 when unset).
func expandNodes(t *testing.T) int {
	n := 4
	if v := os.Getenv("SHARDSTORE_EXPAND_NODES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 3 || n > 16 {
			t.Fatalf("SHARDSTORE_EXPAND_NODES=%q: want 3 to 16", v)
		}
	}
	return n
}

// newExpansionCluster lays out a cluster that is expanded with new nodes:
// nodes on 127.0.0.1 .. 127.0.0.(2n), all on one port, each in its own
// working directory, so that a pool's argument names its nodes with
// ellipses in the host (http://127.0.0.{1...4}:P/proc/self/cwd/a{1...2},
// as http://n{1...4}:9000/d{1...2} on servers) while every node's
// drives are its own directories (/proc/self/cwd is the node process's
// working directory). It returns the cluster (nodes not started) and the
// arguments of pool 1 alone and of pools 1 and 2.
func newExpansionCluster(t *testing.T, n int) (c *testCluster, one, two []string) {
	port := freePorts(t, 1)[0]
	c = &testCluster{t: t, dir: t.TempDir(), scheme: "http", nodes: make([]*node, 2*n)}
	c.hc = c.tlsFiles.httpClient()
	for i := range 2 * n {
		c.ports = append(c.ports, port)
		c.hosts = append(c.hosts, fmt.Sprintf("127.0.0.%d", i+1))
		dir := filepath.Join(c.dir, fmt.Sprintf("node%d", i+1))
		if err := os.MkdirAll(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		c.dirs = append(c.dirs, dir)
	}
	t.Cleanup(c.stopAll)
	one = []string{fmt.Sprintf("http://127.0.0.{1...%d}:%d/proc/self/cwd/a{1...2}", n, port)}
	two = append(one, fmt.Sprintf("http://127.0.0.{%d...%d}:%d/proc/self/cwd/b{1...2}", n+1, 2*n, port))
	return c, one, two
}

// waitOnline waits until nodes see every drive online and their heal
// queues are empty.
func (c *testCluster) waitOnline(nodes ...int) {
	c.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for _, i := range nodes {
		c.waitStatus(i, deadline, "every drive online and an empty heal queue", func(st admin.StatusReply) bool {
			for _, d := range st.Drives {
				if d.State != "online" {
					return false
				}
			}
			return st.Heal.Queued == 0
		})
	}
}

// bytesUnder sums the sizes of the files under the drive directories
// dirs (shard files and indexes).
func bytesUnder(t *testing.T, dirs ...string) int64 {
	var total int64
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(_ string, e fs.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() {
				if fi, err := e.Info(); err == nil {
					total += fi.Size()
				}
			}
			return nil
		})
	}
	return total
}

// TestClusterRollingExpansion starts one pool on 4 nodes, writes, and
// expands it to two pools with new nodes while clients write and read
// through the old nodes (Go SDK, default retries; a request the SDK gave
// up on with a retryable outcome goes to the next node, as through a
// load balancer): the new nodes start with both pools and wait; the old
// nodes are restarted one at a time with the pool appended, the first of
// them recording the expansion in the consensus group, which lets the
// new nodes join it (raft membership changes) and format pool 2. Once
// every node runs with both pools the expansion completes: no request
// failed without a retryable status, every acknowledged object reads
// back through every node, new objects land in pool 2, and an old node
// started again with the old list is refused, saying why. Last, an old
// node's consensus log is wiped: it joins the changed group again.
func TestClusterRollingExpansion(t *testing.T) {
	nightlyOnly(t, "TestClusterRetireFirstPool's expansion under load (the same steps, then pool 1 retired)")
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
	const bucket = "expanding"
	if _, err := c.client(0).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for i := range 20 {
		key := fmt.Sprintf("before/%02d", i)
		body := randBytes(4<<10 + i*3000)
		if _, err := c.client(i%n).PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
		before[key] = body
	}
	// The new pool's directories exist, empty (new disks).
	var pool2 []string
	for i := n; i < 2*n; i++ {
		for j := 1; j <= 2; j++ {
			d := filepath.Join(c.dirs[i], fmt.Sprintf("b%d", j))
			if err := os.MkdirAll(d, 0o750); err != nil {
				t.Fatal(err)
			}
			pool2 = append(pool2, d)
		}
	}

	var clients []*s3.Client
	for i := range n {
		clients = append(clients, c.client(i))
	}
	load := startClientLoad(t, clients, bucket, "load/")
	// The new nodes start first and wait to be taken in.
	for i := n; i < 2*n; i++ {
		c.launch(i, two)
	}
	for round, victim := range old {
		time.Sleep(time.Second)
		c.stopNode(victim)
		c.launch(victim, two)
		c.waitReady(victim)
		if round == 0 {
			if !strings.Contains(c.nodes[victim].stderr.String(), "Cluster: expansion recorded: 2 pools") {
				t.Errorf("node %d did not record the expansion:\n%s", victim+1, tailLines(c.nodes[victim].stderr.String(), 20))
			}
			for i := n; i < 2*n; i++ {
				c.waitReady(i)
				if !strings.Contains(c.nodes[i].stderr.String(), "voting member of the consensus group") {
					t.Errorf("new node %d did not join the consensus group:\n%s", i+1, tailLines(c.nodes[i].stderr.String(), 20))
				}
			}
		}
		c.waitOnline(old...)
	}
	// Every node runs with both pools: the leader completes the
	// expansion within a round.
	deadline := time.Now().Add(60 * time.Second)
	for completed := false; !completed; {
		for _, nd := range c.nodes {
			completed = completed || strings.Contains(nd.stderr.String(), "Cluster: expansion complete")
		}
		if !completed && time.Now().After(deadline) {
			t.Fatal("the expansion did not complete within 60 s of the last restart")
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second)
	load.stop(t)
	all := make([]int, 2*n)
	for i := range all {
		all[i] = i
	}
	for key, body := range before {
		for i := range all {
			mustGet(t, c.client(i), bucket, key, body, fmt.Sprintf("node %d after the expansion", i+1))
		}
	}
	load.checkAll(t, c, bucket, "after the expansion")

	// New objects go to both pools by free space: some land in pool 2.
	used := bytesUnder(t, pool2...)
	written := map[string][]byte{}
	for i := range 16 {
		key := fmt.Sprintf("after/%02d", i)
		body := randBytes(256 << 10)
		if _, err := c.client(n+i%n).PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
		written[key] = body
	}
	if grown := bytesUnder(t, pool2...) - used; grown < 256<<10 {
		t.Errorf("pool 2's drives grew by %d bytes for 16 new objects of 256 KiB: none went there", grown)
	}
	for key, body := range written {
		mustGet(t, c.client(0), bucket, key, body, "node 1 after the expansion")
	}

	// A node of the deployment started again with the old list is
	// refused: it would not see pool 2.
	c.stopNode(1)
	c.launch(1, one)
	select {
	case <-c.nodes[1].exited:
	case <-time.After(90 * time.Second):
		t.Fatalf("node 2 with the old pool list did not stop:\n%s", tailLines(c.nodes[1].stderr.String(), 20))
	}
	if msg := c.nodes[1].stderr.String(); c.nodes[1].exitErr == nil || !strings.Contains(msg, "the deployment records 2 pool(s)") || !strings.Contains(msg, "start it with the full list") {
		t.Errorf("node 2 with the old pool list: %v\n%s", c.nodes[1].exitErr, tailLines(msg, 20))
	}
	c.launch(1, two)
	c.waitReady(1)

	// A node whose consensus log is wiped after the membership changed
	// does not bootstrap a group of its own (its first entry would name
	// other members than the group's): it joins the group, which still
	// lists it, and is brought up to date.
	c.stopNode(2)
	wiped := 0
	for j := 1; j <= 2; j++ {
		dir := filepath.Join(c.dirs[2], fmt.Sprintf("a%d", j), ".shardstore.sys", "cluster")
		if _, err := os.Stat(dir); err == nil {
			wiped++
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	if wiped != 1 {
		t.Fatalf("node 3 had its consensus log on %d drives, want 1", wiped)
	}
	c.launch(2, two)
	c.waitReady(2)
	if msg := c.nodes[2].stderr.String(); !strings.Contains(msg, "it joins the consensus group (a membership change)") || !strings.Contains(msg, "voting member of the consensus group") {
		t.Errorf("node 3 with a wiped consensus log:\n%s", tailLines(msg, 20))
	}
	// The bucket records reached it through the group: it serves them,
	// and a write through it is read through a new node.
	body := randBytes(10 << 10)
	if _, err := c.client(2).PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("after-wipe"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	mustGet(t, c.client(2*n-1), bucket, "after-wipe", body, "the last new node after node 3's log was wiped")
}
