package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/shardstore/shardstore/test/internal/testfs"
)

// TestClusterPoolMovesKilled runs a rebalance and then a decommission on
// a cluster of three node processes under client load (four writers
// through the nodes that are up), each with a kill -9 of the node that
// moves the objects (the consensus leader) in the middle: a new leader
// resumes from the saved state, the killed node is restarted, both
// complete; every object written before and every acknowledged PUT reads
// back byte-identical through every node, the versions of a versioned
// key too, and again once the nodes run without the decommissioned pool.
// Each drive (2 a node in each pool) is a tmpfs of its own.
func TestClusterPoolMovesKilled(t *testing.T) {
	c := &testCluster{t: t, dir: t.TempDir(), ports: freePorts(t, 3), scheme: "http"}
	if useTLS {
		c.scheme, c.tlsFiles = "https", newTLSFiles(t, c.dir, 3)
	}
	c.hc = c.tlsFiles.httpClient()
	// Each drive on a tmpfs of its own, as drives are disks of their own.
	for _, p := range []string{"a", "b"} {
		for i := range c.ports {
			for j := 1; j <= 2; j++ {
				testfs.Tmpfs(t, filepath.Join(c.dir, p, fmt.Sprintf("node%d", i+1), fmt.Sprintf("d%d", j)), "shardstore-cluster-pool", 160<<20, "a rebalance needs pools on filesystems of their own")
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
	c.nodes = make([]*node, 3)
	t.Cleanup(c.stopAll)
	for i := range c.nodes {
		for j := 1; j <= 2; j++ {
			if err := os.MkdirAll(filepath.Join(c.dir, "a", fmt.Sprintf("node%d", i+1), fmt.Sprintf("d%d", j)), 0o750); err != nil {
				t.Fatal(err)
			}
		}
	}
	relaunch("a")
	c0 := c.client(0)
	for _, b := range []string{"moves", "movesv"} {
		if _, err := c0.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c0.PutBucketVersioning(ctx(t), &s3.PutBucketVersioningInput{Bucket: aws.String("movesv"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	objects := map[string][]byte{}
	for i := 0; i < 40; i++ {
		key := fmt.Sprintf("fill/%02d", i)
		body := randBytes(1<<20 + i*1000)
		if i%5 == 0 {
			body = randBytes(200 + i)
		}
		if err := put(t, c.client(i%3), "moves", key, body); err != nil {
			t.Fatal(err)
		}
		objects[key] = body
	}
	type version struct {
		key, id string
		body    []byte
	}
	var versions []version
	for i := 0; i < 6; i++ {
		body := randBytes(100<<10 + i)
		out, err := c.client(i%3).PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("movesv"), Key: aws.String("doc"), Body: bytes.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, version{"doc", aws.ToString(out.VersionId), body})
	}
	// The second pool: empty directories on its own tmpfs, every node
	// restarted with it appended.
	for i := range c.nodes {
		for j := 1; j <= 2; j++ {
			if err := os.MkdirAll(filepath.Join(c.dir, "b", fmt.Sprintf("node%d", i+1), fmt.Sprintf("d%d", j)), 0o750); err != nil {
				t.Fatal(err)
			}
		}
	}
	relaunch("a", "b")

	// The load: two writers PUT small objects and a reader GETs the
	// objects written before, each through the nodes that are up. A
	// read must return the bytes written (a transport error from a node
	// being killed is retried on the next); a PUT acknowledged is
	// checked at the end.
	var mu sync.Mutex
	down := -1 // the node killed, while it is down
	via := func(k int) int {
		mu.Lock()
		defer mu.Unlock()
		n := k % 3
		if n == down {
			n = (n + 1) % 3
		}
		return n
	}
	acked := map[string][]byte{}
	keys := slices.Sorted(maps.Keys(objects))
	var readErr error
	reads, readFails := 0, 0
	stopLoad := sync.OnceFunc(writers(3, func(w, k int) bool {
		time.Sleep(100 * time.Millisecond)
		if w == 2 {
			key := keys[k%len(keys)]
			g, err := c.client(via(k)).GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("moves"), Key: aws.String(key)})
			if err != nil {
				// A key not found means a reader missed its copy; other
				// errors (a node going away, 503s past the SDK's
				// retries while a node is down) are counted.
				if code := errCode(err); code == "NoSuchKey" {
					mu.Lock()
					readErr = fmt.Errorf("GET %s during the moves: %w", key, err)
					mu.Unlock()
					return false
				}
				mu.Lock()
				readFails++
				mu.Unlock()
				return true
			}
			got, err := io.ReadAll(g.Body)
			g.Body.Close()
			if err == nil && !bytes.Equal(got, objects[key]) {
				mu.Lock()
				readErr = fmt.Errorf("GET %s during the moves: %d bytes, not the %d written", key, len(got), len(objects[key]))
				mu.Unlock()
				return false
			}
			mu.Lock()
			reads++
			mu.Unlock()
			return true
		}
		key := fmt.Sprintf("load/w%d/%04d", w, k)
		body := randBytes(8<<10 + k%7*8<<10)
		if err := put(t, c.client(via(k+w)), "moves", key, body); err == nil {
			mu.Lock()
			acked[key] = body
			mu.Unlock()
		}
		return true
	}))
	defer stopLoad()
	adminOK := func(i int, args ...string) []byte {
		t.Helper()
		out, err := c.admin(i, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// moved reads how many versions the rebalance or the decommission
	// moved so far, and its state.
	moved := func(i int, what string) (string, int64) {
		t.Helper()
		var st struct {
			State string
			Pools []struct{ Versions int64 }
		}
		var decom struct {
			Decommissions []struct {
				State    string
				Versions int64
			}
		}
		if what == "rebalance" {
			out := adminOK(i, "pool", "rebalance", "status", "--json")
			if err := json.Unmarshal(out, &st); err != nil {
				t.Fatalf("rebalance status: %v\n%s", err, out)
			}
			var n int64
			for _, p := range st.Pools {
				n += p.Versions
			}
			return st.State, n
		}
		out := adminOK(i, "pool", "decommission", "status", "--json")
		if err := json.Unmarshal(out, &decom); err != nil || len(decom.Decommissions) != 1 {
			t.Fatalf("decommission status: %v\n%s", err, out)
		}
		return decom.Decommissions[0].State, decom.Decommissions[0].Versions
	}
	// killMidway kills the leader once the move has made progress,
	// restarts it, lifts the throttle and waits for completion.
	killMidway := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); ; {
			state, n := moved(0, what)
			if state == "complete" {
				t.Fatalf("the %s completed before the kill", what)
			}
			if n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no progress within 2 minutes", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
		l := c.leader(0, 1, 2)
		mu.Lock()
		down = l
		mu.Unlock()
		c.kill(l)
		t.Logf("%s: killed node %d (the leader) in the middle", what, l+1)
		live := (l + 1) % 3
		time.Sleep(2 * time.Second)
		c.restart(l)
		mu.Lock()
		down = -1
		mu.Unlock()
		adminOK(live, "pool", "throttle", "--bandwidth", "0")
		for deadline := time.Now().Add(4 * time.Minute); ; {
			state, _ := moved(live, what)
			if state == "complete" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not complete within 4 minutes after the kill", what)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}

	// A rebalance: pool 1 is full, pool 2 empty.
	adminOK(1, "pool", "throttle", "--bandwidth", "2MiB")
	t.Logf("%s", adminOK(1, "pool", "rebalance", "start", "--threshold", "2%"))
	killMidway("rebalance")
	t.Logf("%s", adminOK(2, "pool", "rebalance", "status"))
	var rb struct {
		Pools []struct {
			Source      bool
			Goal, Moved int64
			Objects     int64
		}
	}
	if out := adminOK(2, "pool", "rebalance", "status", "--json"); json.Unmarshal(out, &rb) != nil || len(rb.Pools) != 2 ||
		!rb.Pools[0].Source || rb.Pools[0].Moved < rb.Pools[0].Goal || rb.Pools[0].Objects == 0 || rb.Pools[1].Source {
		t.Fatalf("rebalance: pool 1 should be the source and have freed its goal, pool 2 the target:\n%s", out)
	}

	// A decommission of pool 1.
	adminOK(2, "pool", "throttle", "--bandwidth", "2MiB")
	adminOK(2, "pool", "decommission", "start", "1")
	killMidway("decommission")
	t.Logf("%s", adminOK(0, "pool", "decommission", "status"))
	stopLoad()
	mu.Lock()
	if readErr != nil {
		t.Fatal(readErr)
	}
	for k, body := range acked {
		objects[k] = body
	}
	t.Logf("during the moves: %d PUTs acknowledged, %d GETs byte-identical, %d GETs failed without an answer (node killed)", len(acked), reads, readFails)
	mu.Unlock()
	check := func(when string) {
		t.Helper()
		for i := range c.nodes {
			cl := c.client(i)
			for key, body := range objects {
				mustGet(t, cl, "moves", key, body, fmt.Sprintf("node %d %s", i+1, when))
			}
			for _, v := range versions {
				g, err := cl.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("movesv"), Key: aws.String(v.key), VersionId: aws.String(v.id)})
				if err != nil {
					t.Fatalf("node %d %s: version %s: %v", i+1, when, v.id, err)
				}
				got, err := io.ReadAll(g.Body)
				g.Body.Close()
				if err != nil || !bytes.Equal(got, v.body) {
					t.Fatalf("node %d %s: version %s differs", i+1, when, v.id)
				}
			}
		}
	}
	check("after the decommission")
	relaunch("b")
	check("with pool 1 removed")
}
