package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/shardstore/shardstore/test/internal/testfs"
)

// TestClusterMoveThroughput measures a rebalance and then a
// decommission on a cluster of node processes on loopback
// (docs/performance.md): SHARDSTORE_MOVE_NODES nodes (default 3), each
// with 2 drives in each pool, every drive a tmpfs of its own;
// SHARDSTORE_MOVE_OBJECTS objects of SHARDSTORE_MOVE_SIZE bytes (default
// 65536) fill pool 1 through every node, the nodes are restarted with a
// second pool like it, a rebalance runs (threshold 2%), then a
// decommission of pool 1 moves what is left there. A probe client PUTs
// 4 KiB objects and GETs filled ones in turn through node 2 (not where
// the moves start: the consensus leader moves) for 5 s before and all
// through each move. SHARDSTORE_MOVE_THROTTLE (a bandwidth, none by
// default) and SHARDSTORE_MOVE_ADAPTIVE (on, the default, or off) set
// the movers' throttle. It logs objects/s and MiB/s of each move and the
// probe's p50/p99 beside; it asserts no timing. Without
// SHARDSTORE_MOVE_OBJECTS it is skipped (a measurement, run by hand or
// from the nightly).
func TestClusterMoveThroughput(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SHARDSTORE_MOVE_OBJECTS"))
	if n <= 0 {
		t.Skip("set SHARDSTORE_MOVE_OBJECTS to a count of objects to measure a cluster's rebalance and decommission")
	}
	size := 65536
	if v, err := strconv.Atoi(os.Getenv("SHARDSTORE_MOVE_SIZE")); err == nil && v > 0 {
		size = v
	}
	nodes := 3
	if v, err := strconv.Atoi(os.Getenv("SHARDSTORE_MOVE_NODES")); err == nil && v >= 2 && v <= 8 {
		nodes = v
	}
	c := &testCluster{t: t, dir: t.TempDir(), ports: freePorts(t, nodes), scheme: "http"}
	c.hc = c.tlsFiles.httpClient()
	// Coded data (at most twice the bytes) spread over a pool's drives,
	// with room for the index.
	fsSize := int64(n)*int64(size)*2/int64(2*nodes) + 96<<20
	for _, p := range []string{"a", "b"} {
		for i := range nodes {
			for j := 1; j <= 2; j++ {
				testfs.Tmpfs(t, filepath.Join(c.dir, p, fmt.Sprintf("node%d", i+1), fmt.Sprintf("d%d", j)), "shardstore-cluster-pool", fsSize, "a rebalance needs pools on filesystems of their own")
			}
		}
	}
	endpoints := func(pools ...string) []string {
		var out []string
		for _, p := range pools {
			for i := range c.ports {
				out = append(out, fmt.Sprintf("%s://127.0.0.1:%d%s/%s/node%d/d{1...2}", c.scheme, c.ports[i], c.dir, p, i+1))
			}
		}
		return out
	}
	relaunch := func(pools ...string) {
		c.stopAll()
		c.args = endpoints(pools...)
		for i := range c.nodes {
			c.launch(i, c.args)
		}
		for i := range c.nodes {
			c.waitReady(i)
		}
	}
	c.nodes = make([]*node, nodes)
	t.Cleanup(c.stopAll)
	relaunch("a")
	if _, err := c.client(0).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("moves")}); err != nil {
		t.Fatal(err)
	}
	body := randBytes(size)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	fillStart := time.Now()
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := c.client(w % nodes)
			for i := w; i < n; i += 8 {
				if err := put(t, cl, "moves", fmt.Sprintf("o/%06d", i), body); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("filled pool 1 with %d objects of %d bytes in %v", n, size, time.Since(fillStart).Round(time.Millisecond))
	relaunch("a", "b")
	adminOK := func(i int, args ...string) []byte {
		t.Helper()
		out, err := c.admin(i, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if _, err := c.client(0).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("probe")}); err != nil {
		t.Fatal(err)
	}
	probeVia := min(1, nodes-1)
	probe := func(stop <-chan struct{}, puts, gets *[]time.Duration) {
		cl := c.client(probeVia)
		small := randBytes(4096)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			if err := put(t, cl, "probe", fmt.Sprintf("p/%06d", i), small); err != nil {
				t.Errorf("probe PUT: %v", err)
				return
			}
			*puts = append(*puts, time.Since(t0))
			t0 = time.Now()
			g, err := cl.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("moves"), Key: aws.String(fmt.Sprintf("o/%06d", i%n))})
			if err != nil {
				t.Errorf("probe GET: %v", err)
				return
			}
			got, err := io.ReadAll(g.Body)
			g.Body.Close()
			if err != nil || !bytes.Equal(got, body) {
				t.Errorf("probe GET o/%06d: %d bytes, %v", i%n, len(got), err)
				return
			}
			*gets = append(*gets, time.Since(t0))
		}
	}
	quantiles := func(d []time.Duration) string {
		if len(d) == 0 {
			return "none"
		}
		slices.Sort(d)
		return fmt.Sprintf("p50 %v p99 %v (%d)", d[len(d)/2].Round(100*time.Microsecond), d[len(d)*99/100].Round(100*time.Microsecond), len(d))
	}
	var basePuts, baseGets []time.Duration
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { probe(stop, &basePuts, &baseGets); close(done) }()
	time.Sleep(5 * time.Second)
	close(stop)
	<-done
	if th := os.Getenv("SHARDSTORE_MOVE_THROTTLE"); th != "" {
		adminOK(0, "pool", "throttle", "--bandwidth", th)
	}
	if ad := os.Getenv("SHARDSTORE_MOVE_ADAPTIVE"); ad != "" {
		adminOK(0, "pool", "throttle", "--adaptive", ad)
	}
	t.Logf("throttle: %s", bytes.TrimSpace(adminOK(0, "pool", "throttle")))
	t.Logf("probe through node %d before the moves: 4 KiB PUT %s; GET of a filled object %s", probeVia+1, quantiles(basePuts), quantiles(baseGets))

	// measure runs one move with the probe beside and logs its rates.
	measure := func(kind string, start func(), state func() (string, int64, int64)) {
		var puts, gets []time.Duration
		stop, done := make(chan struct{}), make(chan struct{})
		go func() { probe(stop, &puts, &gets); close(done) }()
		t0 := time.Now()
		start()
		var st string
		var objects, moved int64
		for {
			st, objects, moved = state()
			if st == "complete" {
				break
			}
			if time.Since(t0) > 30*time.Minute {
				t.Fatalf("%s not complete within 30 minutes", kind)
			}
			time.Sleep(100 * time.Millisecond)
		}
		took := time.Since(t0)
		close(stop)
		<-done
		t.Logf("cluster %s (%d nodes, 2+2 tmpfs drives each, %d CPUs) of %d objects of %d bytes: moved %d objects, %.1f MiB in %v: %.0f objects/s, %.1f MiB/s",
			kind, nodes, runtime.NumCPU(), n, size, objects, float64(moved)/(1<<20), took.Round(time.Millisecond),
			float64(objects)/took.Seconds(), float64(moved)/(1<<20)/took.Seconds())
		t.Logf("probe through node %d during the %s: 4 KiB PUT %s; GET of a filled object %s", probeVia+1, kind, quantiles(puts), quantiles(gets))
	}
	measure("rebalance", func() { adminOK(0, "pool", "rebalance", "start", "--threshold", "2%") }, func() (string, int64, int64) {
		var st struct {
			State string
			Pools []struct{ Objects, Bytes int64 }
		}
		if err := json.Unmarshal(adminOK(0, "pool", "rebalance", "status", "--json"), &st); err != nil {
			t.Fatal(err)
		}
		var o, b int64
		for _, p := range st.Pools {
			o, b = o+p.Objects, b+p.Bytes
		}
		return st.State, o, b
	})
	t.Logf("%s", adminOK(0, "pool", "rebalance", "status"))
	measure("decommission", func() { adminOK(0, "pool", "decommission", "start", "1") }, func() (string, int64, int64) {
		var st struct {
			Decommissions []struct {
				State          string
				Objects, Bytes int64
			}
		}
		if err := json.Unmarshal(adminOK(0, "pool", "decommission", "status", "--json"), &st); err != nil || len(st.Decommissions) != 1 {
			t.Fatalf("decommission status: %v", err)
		}
		d := st.Decommissions[0]
		return d.State, d.Objects, d.Bytes
	})
	t.Logf("%s", adminOK(0, "pool", "decommission", "status"))
	// Every filled object still reads back, through another node.
	for i := 0; i < n; i += max(1, n/200) {
		g, err := c.client(nodes-1).GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("moves"), Key: aws.String(fmt.Sprintf("o/%06d", i))})
		if err != nil {
			t.Fatalf("GET o/%06d after the moves: %v", i, err)
		}
		got, err := io.ReadAll(g.Body)
		g.Body.Close()
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("GET o/%06d after the moves: %d bytes, %v", i, len(got), err)
		}
	}
}
