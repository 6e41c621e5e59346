package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/shardstore/shardstore/internal/engine"
)

// TestClusterExpansionCancel starts one pool on 3 nodes, starts 3 new
// nodes with a second pool and restarts node 1 with it (the expansion is
// recorded, the new nodes join the consensus group and format pool 2),
// then cancels the expansion through `admin pool expansion cancel` while
// nodes 2 and 3 still run the old list: the answer names pool 2, node 1
// to restart and the new nodes as leaving; the old nodes keep serving;
// node 1 started again with the longer list is refused (the record says
// the pool's expansion was canceled), with the old list it starts; the
// leader removes the new nodes from the consensus group; they are
// stopped, and one started again with the longer list is refused; a bucket is created and written through the group, every
// object reads back through the old nodes, and a second cancel is
// refused with a message.
func TestClusterExpansionCancel(t *testing.T) {
	nightlyOnly(t, "internal/cluster's TestPlanCancel and TestPlanStartAfterShrink, internal/admin's TestExpansionCancelCall and TestClusterRollingExpansion")
	const n = 3
	c, one, two := newExpansionCluster(t, n)
	old := []int{0, 1, 2}
	for _, i := range old {
		c.launch(i, one)
	}
	for _, i := range old {
		c.waitReady(i)
	}
	const bucket = "canceled"
	if _, err := c.client(0).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	objects := map[string][]byte{}
	put := func(via int, key string) {
		t.Helper()
		body := randBytes(8<<10 + len(objects)*1000)
		if _, err := c.client(via).PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatalf("PUT %s via node %d: %v", key, via+1, err)
		}
		objects[key] = body
	}
	for i := range 10 {
		put(i%n, fmt.Sprintf("before/%02d", i))
	}
	for i := n; i < 2*n; i++ {
		for j := 1; j <= 2; j++ {
			if err := os.MkdirAll(filepath.Join(c.dirs[i], fmt.Sprintf("b%d", j)), 0o750); err != nil {
				t.Fatal(err)
			}
		}
		c.launch(i, two)
	}
	c.stopNode(0)
	c.launch(0, two)
	c.waitReady(0)
	if !strings.Contains(c.nodes[0].stderr.String(), "Cluster: expansion recorded: 2 pools") {
		t.Fatalf("node 1 did not record the expansion:\n%s", tailLines(c.nodes[0].stderr.String(), 20))
	}
	for i := n; i < 2*n; i++ {
		c.waitReady(i)
	}
	for i := range 6 {
		put(i%(2*n), fmt.Sprintf("during/%02d", i))
	}

	// Cancel, asking an old node that runs the old list.
	out, err := c.admin(1, "pool", "expansion", "cancel", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got engine.ExpansionCancel
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	newIDs := []string{"http://127.0.0.4:" + fmt.Sprint(c.ports[0]), "http://127.0.0.5:" + fmt.Sprint(c.ports[0]), "http://127.0.0.6:" + fmt.Sprint(c.ports[0])}
	if got.Pools != 1 || !slices.Equal(got.Canceled, []int{2}) || !slices.Equal(got.Leaving, newIDs) || !slices.Contains(got.Restart, "http://127.0.0.1:"+fmt.Sprint(c.ports[0])) {
		t.Fatalf("cancel answered %+v", got)
	}
	// The old nodes keep serving, the one on the longer list too.
	for i := range 6 {
		put(i%n, fmt.Sprintf("canceled/%02d", i))
	}

	// Node 1 started again with the longer list is refused: the record
	// says pool 2's expansion was canceled. With the old list it starts.
	c.stopNode(0)
	c.launch(0, two)
	select {
	case <-c.nodes[0].exited:
	case <-time.After(90 * time.Second):
		t.Fatalf("node 1 with the canceled list did not stop:\n%s", tailLines(c.nodes[0].stderr.String(), 20))
	}
	if msg := c.nodes[0].stderr.String(); c.nodes[0].exitErr == nil || !strings.Contains(msg, "its expansion was canceled") || !strings.Contains(msg, "--readd-removed-pools") {
		t.Fatalf("node 1 with the canceled list: %v\n%s", c.nodes[0].exitErr, tailLines(msg, 20))
	}
	c.launch(0, one)
	c.waitReady(0)

	// Every node of the list runs with it: the leader removes the new
	// nodes from the consensus group, then they are stopped.
	deadline := time.Now().Add(90 * time.Second)
	for {
		removed := 0
		for _, i := range old {
			for _, id := range newIDs {
				if strings.Contains(c.nodes[i].stderr.String(), "node "+id+" holds no drive of the deployment's pools: removed from the consensus group") {
					removed++
				}
			}
		}
		if removed >= len(newIDs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new nodes were not removed from the consensus group within 90 s (%d of %d)", removed, len(newIDs))
		}
		time.Sleep(500 * time.Millisecond)
	}
	for i := n; i < 2*n; i++ {
		c.kill(i)
	}
	// A removed node started again with the longer list (a service that
	// restarts it) is refused too, not taken for an expansion.
	c.launch(n, two)
	select {
	case <-c.nodes[n].exited:
	case <-time.After(3 * time.Minute):
		t.Fatalf("node %d, removed, started again with the canceled list did not stop:\n%s", n+1, tailLines(c.nodes[n].stderr.String(), 20))
	}
	if msg := c.nodes[n].stderr.String(); c.nodes[n].exitErr == nil || !strings.Contains(msg, "no longer a member of the consensus group") || !strings.Contains(msg, "--readd-removed-pools") {
		t.Fatalf("node %d, removed, started again with the canceled list: %v\n%s", n+1, c.nodes[n].exitErr, tailLines(msg, 20))
	}

	// The group still commits (a bucket record), and every object reads
	// back through every old node.
	if _, err := c.client(2).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("after-cancel")}); err != nil {
		t.Fatalf("create a bucket after the cancel: %v", err)
	}
	for i := range 4 {
		put(i%n, fmt.Sprintf("after/%02d", i))
	}
	for key, body := range objects {
		for _, i := range old {
			mustGet(t, c.client(i), bucket, key, body, fmt.Sprintf("node %d after the cancel", i+1))
		}
	}
	// Nothing is under way any more: a second cancel is refused.
	if out, err := c.admin(2, "pool", "expansion", "cancel"); err == nil || !strings.Contains(err.Error(), "no expansion is under way") {
		t.Fatalf("second cancel: %v %s", err, out)
	}
}
