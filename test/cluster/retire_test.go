package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// ackedVersion is a version a client PUT and the cluster acknowledged.
type ackedVersion struct {
	key, id string
	body    []byte
}

// versionLoad keeps 3 writers and 2 readers going on a versioned bucket
// through a set of nodes that the test changes as the cluster changes
// (use), with the SDK's default settings: a request the SDK gave up on
// with a retryable outcome (503, or no answer: the node is stopped) is
// sent again to the next node of the set, as a load balancer would; any
// other failure is recorded. Writers overwrite some of their keys, so
// keys have several versions; every acknowledged version is recorded
// with its version id, and readers read random acknowledged versions by
// id and compare the bytes.
type versionLoad struct {
	loadTally // upgrade_test.go
	clients   atomic.Pointer[[]*s3.Client]
	versions  []ackedVersion
	stopFn    func()
}

func (l *versionLoad) use(clients []*s3.Client) { l.clients.Store(&clients) }

func startVersionLoad(t *testing.T, clients []*s3.Client, bucket string) *versionLoad {
	l := &versionLoad{loadTally: loadTally{retried: map[string]int{}}}
	l.use(clients)
	current := func() []*s3.Client { return *l.clients.Load() }
	try := func(what string, via int, do func(c *s3.Client) error) error { return l.try(what, via, current, do) }
	ctx := t.Context()
	l.stopFn = writers(5, func(w, k int) bool {
		time.Sleep(50 * time.Millisecond)
		if w < 3 { // writer: every fourth PUT a new version of an earlier key
			key := fmt.Sprintf("load/w%d/%d", w, k)
			if k%4 == 3 {
				key = fmt.Sprintf("load/w%d/%d", w, rand.IntN(k))
			}
			body := randBytes(8<<10 + k%7*5000)
			var id string
			err := try("PUT "+key, w+k, func(c *s3.Client) error {
				out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
				if err == nil {
					id = aws.ToString(out.VersionId)
				}
				return err
			})
			if err == nil {
				l.mu.Lock()
				l.versions = append(l.versions, ackedVersion{key, id, body})
				l.mu.Unlock()
			}
			return ctx.Err() == nil
		}
		l.mu.Lock()
		if len(l.versions) == 0 {
			l.mu.Unlock()
			return ctx.Err() == nil
		}
		v := l.versions[rand.IntN(len(l.versions))]
		l.mu.Unlock()
		_ = try("GET "+v.key+"?versionId="+v.id, w+k, func(c *s3.Client) error {
			got, err := getVersion(ctx, c, bucket, v)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, v.body) {
				l.mu.Lock()
				l.failures = append(l.failures, fmt.Sprintf("GET %s version %s: %d bytes that are not the %d acknowledged", v.key, v.id, len(got), len(v.body)))
				l.mu.Unlock()
			}
			return nil
		})
		return ctx.Err() == nil
	})
	return l
}

// stop ends the load and reports what it saw.
func (l *versionLoad) stop(t *testing.T) []ackedVersion {
	t.Helper()
	l.stopFn()
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Logf("client load: %d requests, %d versions acknowledged; outcomes the SDK gave up on and the next node served: %v", l.ops, len(l.versions), l.retried)
	for _, f := range l.failures {
		t.Errorf("failed without a retryable status: %s", f)
	}
	return l.versions
}

func getVersion(ctx context.Context, c *s3.Client, bucket string, v ackedVersion) ([]byte, error) {
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(v.key), VersionId: aws.String(v.id)})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

// waitDecommission waits until pool's decommission (asked through node
// via) is complete and returns the versions it moved.
func (c *testCluster) waitDecommission(via int, wait time.Duration) int64 {
	c.t.Helper()
	for deadline := time.Now().Add(wait); ; {
		var reply struct {
			Decommissions []struct {
				State    string
				Versions int64
			}
		}
		out, err := c.admin(via, "pool", "status", "--json")
		if err == nil {
			err = json.Unmarshal(out, &reply)
		}
		if err != nil {
			c.t.Fatal(err)
		}
		if len(reply.Decommissions) == 1 && reply.Decommissions[0].State == "complete" {
			return reply.Decommissions[0].Versions
		}
		if time.Now().After(deadline) {
			var tails []string
			for i, nd := range c.nodes {
				if nd != nil {
					tails = append(tails, fmt.Sprintf("node %d:\n%s", i+1, tailLines(nd.stderr.String(), 8)))
				}
			}
			c.t.Fatalf("decommission not complete within %v: %s\n%s", wait, out, strings.Join(tails, "\n"))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestClusterRetireFirstPool is issue 47's scenario end to end: one pool
// on 4 nodes (the lock nodes) is filled, expanded to two pools by 4 new
// nodes with a rolling restart of the old ones, its first pool is
// decommissioned and removed, and its nodes stopped, all while Go SDK
// writers and readers (default retries) run on a versioned bucket
// through the nodes that serve at each step. Removing pool 1 moves the
// lock nodes to pool 2's nodes (joint phase, then new, each recorded by
// the consensus leader once every node reports it) before pool 1's nodes
// leave the consensus group; then nodes 1-4 are stopped, every
// acknowledged version reads back byte-identical by version id through
// nodes 5-8, and writes still work, their locks on the new lock nodes
// alone. (It replaces TestClusterShrink and TestClusterRollingExpansion
// in CI: one cluster expanded under load, then shrunk to its second
// pool; both run in the nightly for what they check beyond it.)
func TestClusterRetireFirstPool(t *testing.T) {
	n := expandNodes(t)
	c, one, two := newExpansionCluster(t, n)
	onlyTwo := two[1:]
	old, fresh, all := make([]int, n), make([]int, n), make([]int, 2*n)
	for i := range all {
		all[i] = i
	}
	for i := range n {
		old[i], fresh[i] = i, n+i
		c.launch(i, one)
	}
	for i := range n {
		c.waitReady(i)
	}
	const bucket = "retiring"
	if _, err := c.client(0).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.client(0).PutBucketVersioning(ctx(t), &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	// Fill pool 1: keys with several versions each.
	var filled []ackedVersion
	for i := range 24 {
		key := fmt.Sprintf("fill/%02d", i%12)
		body := randBytes(4<<10 + i*3001)
		out, err := c.client(i%n).PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		filled = append(filled, ackedVersion{key, aws.ToString(out.VersionId), body})
	}
	for i := n; i < 2*n; i++ {
		for j := 1; j <= 2; j++ {
			if err := os.MkdirAll(filepath.Join(c.dirs[i], fmt.Sprintf("b%d", j)), 0o750); err != nil {
				t.Fatal(err)
			}
		}
	}
	clients := make([]*s3.Client, 2*n) // one per node, made once it is launched
	for _, i := range old {
		clients[i] = c.client(i)
	}
	nodesOf := func(idx []int) []*s3.Client {
		var out []*s3.Client
		for _, i := range idx {
			out = append(out, clients[i])
		}
		return out
	}

	// 1. Expand under load (through the old nodes: the new ones do not
	// serve until the expansion is recorded).
	load := startVersionLoad(t, nodesOf(old), bucket)
	for i := n; i < 2*n; i++ {
		c.launch(i, two)
		clients[i] = c.client(i)
	}
	for round, i := range old {
		time.Sleep(time.Second)
		c.stopNode(i)
		c.launch(i, two)
		c.waitReady(i)
		if round == 0 {
			if !strings.Contains(c.nodes[i].stderr.String(), "Cluster: expansion recorded: 2 pools") {
				t.Errorf("node %d did not record the expansion:\n%s", i+1, tailLines(c.nodes[i].stderr.String(), 20))
			}
			for _, j := range fresh {
				c.waitReady(j)
			}
		}
		c.waitOnline(old...)
	}
	c.waitLine("the expansion", "Cluster: expansion complete", 90*time.Second, all...)
	t.Logf("expanded under load")

	// 2. Decommission pool 1 under load, through every node. The mover
	// runs at full speed (adaptive throttle off): on a loaded 2-core
	// machine the clients' latency would hold it near its floor for
	// minutes (the throttle is tested in internal/engine and measured
	// in docs/performance.md).
	load.use(nodesOf(all))
	if _, err := c.admin(n, "pool", "throttle", "--adaptive", "off"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.admin(n, "pool", "decommission", "start", "1"); err != nil {
		t.Fatal(err)
	}
	moved := c.waitDecommission(n, 3*time.Minute)
	t.Logf("pool 1 decommissioned under load: %d versions moved", moved)
	if moved < int64(len(filled)) {
		t.Errorf("the decommission moved %d versions, fewer than the %d filled into pool 1", moved, len(filled))
	}

	// 3. Remove pool 1: nodes 5-8 restarted one at a time without it,
	// clients on them. The first records the removal and the joint
	// phase of the lock nodes' move; the leader records the new phase
	// once every node (nodes 1-4 included) locks on both sets, and
	// removes nodes 1-4 from the consensus group once nodes 5-8 lock on
	// the new lock nodes alone.
	load.use(nodesOf(fresh))
	for round, i := range fresh {
		time.Sleep(time.Second)
		c.stopNode(i)
		c.launch(i, onlyTwo)
		c.waitReady(i)
		if round == 0 {
			msg := c.nodes[i].stderr.String()
			if !strings.Contains(msg, "Cluster: pool removal recorded: pool(s) [1] left out") || !strings.Contains(msg, "the pools left out hold lock nodes: the locks move from") {
				t.Errorf("node %d did not record the removal and the lock nodes' move:\n%s", i+1, tailLines(msg, 20))
			}
		}
		// As docs/pools.md says: the next node only once every node
		// sees every drive online again.
		c.waitOnline(fresh...)
	}
	c.waitLine("the lock nodes' new phase", "Cluster: lock hand-over: every node locks on both sets", 90*time.Second, all...)
	c.waitLine("the lock hand-over complete", "Cluster: lock hand-over complete", 90*time.Second, all...)
	for _, i := range old {
		id := fmt.Sprintf("http://%s:%d", c.hosts[i], c.ports[i])
		c.waitLine("node "+id+" removed from the consensus group", "Cluster: node "+id+" holds no drive of the deployment's pools: removed from the consensus group", 90*time.Second, all...)
	}
	// Every node saw the phases: nodes 1-4 locked on both sets before
	// they left.
	for _, i := range all {
		if msg := c.nodes[i].stderr.String(); !strings.Contains(msg, "the lock nodes are moving: this node locks on a majority of") && i < n {
			t.Errorf("node %d never locked on both sets:\n%s", i+1, tailLines(msg, 20))
		}
	}

	// 4. Stop nodes 1-4; the load goes on through nodes 5-8.
	for _, i := range old {
		c.stopNode(i)
	}
	time.Sleep(2 * time.Second)
	versions := load.stop(t)

	// Writes still work, their locks on nodes 5-8 alone; bucket
	// changes go through the consensus group of the remaining nodes.
	for i := range 8 {
		key := fmt.Sprintf("fill/%02d", i)
		body := randBytes(16<<10 + i*111)
		out, err := clients[n+i%n].PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
		if err != nil {
			t.Fatalf("PUT %s after pool 1's nodes stopped: %v", key, err)
		}
		filled = append(filled, ackedVersion{key, aws.ToString(out.VersionId), body})
	}
	if _, err := clients[n+1].CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("after-retire")}); err != nil {
		t.Fatalf("create a bucket after pool 1's nodes stopped: %v", err)
	}

	// Every acknowledged version, byte-identical by version id, through
	// every remaining node.
	every := append(filled, versions...)
	for _, i := range fresh {
		for _, v := range every {
			got, err := getVersion(ctx(t), clients[i], bucket, v)
			if err != nil || !bytes.Equal(got, v.body) {
				t.Fatalf("node %d after pool 1 was retired: %s version %s: %d bytes, want %d (%v)", i+1, v.key, v.id, len(got), len(v.body), err)
			}
		}
	}
	t.Logf("%d versions (%d filled, %d under load) read back byte-identical through nodes %d-%d", len(every), len(filled), len(versions), n+1, 2*n)
}
