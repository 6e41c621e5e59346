package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestClusterPoolsDecommission starts two nodes with one pool (2 drives
// on each node), writes, expands to two pools by restarting both nodes
// with a second pool appended (written node by node), writes through both
// nodes, decommissions pool 1 through the admin CLI of one node, and once
// it is complete restarts both nodes without pool 1: every object and
// version reads back byte for byte through either node.
func TestClusterPoolsDecommission(t *testing.T) {
	nightlyOnly(t, "TestClusterPoolMovesKilled (a cluster decommission under load with kill -9, the pool then removed) and TestClusterShrink (removal by rolling restart)")
	c := &testCluster{t: t, dir: t.TempDir(), ports: freePorts(t, 2), scheme: "http"}
	if useTLS {
		c.scheme, c.tlsFiles = "https", newTLSFiles(t, c.dir, 2)
	}
	c.hc = c.tlsFiles.httpClient()
	endpoints := func(pools ...string) []string {
		var out []string
		for _, p := range pools {
			for i := range c.ports {
				out = append(out, fmt.Sprintf("%s://127.0.0.1:%d%s/node%d/%s{1...2}", c.scheme, c.ports[i], c.dir, i+1, p))
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
	// One pool first, with objects in it; then every node restarted
	// with a second pool appended (its directories made empty, as new
	// disks): an expansion by a full restart.
	c.nodes = make([]*node, 2)
	t.Cleanup(c.stopAll)
	relaunch("a")
	c0 := c.client(0)
	for _, b := range []string{"cpool", "cpoolv"} {
		if _, err := c0.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	objects := map[string][]byte{}
	for i := 0; i < 20; i++ {
		key := fmt.Sprintf("before/%02d", i)
		body := bytes.Repeat([]byte{byte(100 + i)}, 500+i*9000)
		if _, err := c.client(i%2).PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("cpool"), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
		objects[key] = body
	}
	for i := range c.nodes {
		for j := 1; j <= 2; j++ {
			if err := os.MkdirAll(filepath.Join(c.dir, fmt.Sprintf("node%d", i+1), fmt.Sprintf("b%d", j)), 0o750); err != nil {
				t.Fatal(err)
			}
		}
	}
	relaunch("a", "b")
	var reply struct {
		Pools []struct {
			Drives int
		}
		Decommissions []struct {
			State    string
			Versions int64
		}
	}
	poolStatus := func(i int) {
		t.Helper()
		out, err := c.admin(i, "pool", "status", "--json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &reply); err != nil {
			t.Fatalf("pool status: %v\n%s", err, out)
		}
	}
	poolStatus(1)
	if len(reply.Pools) != 2 || reply.Pools[0].Drives != 4 || reply.Pools[1].Drives != 4 {
		t.Fatalf("pool status: %+v, want 2 pools of 4 drives", reply)
	}

	c0 = c.client(0)
	if _, err := c0.PutBucketVersioning(ctx(t), &s3.PutBucketVersioningInput{Bucket: aws.String("cpoolv"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	type version struct {
		key, id string
		body    []byte
	}
	var versions []version
	for i := 0; i < 60; i++ {
		cl := c.client(i % 2)
		key := fmt.Sprintf("o/%02d", i)
		body := bytes.Repeat([]byte{byte(i)}, 1000+i*5000)
		if _, err := cl.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("cpool"), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
		objects[key] = body
		if i%6 == 0 {
			out, err := cl.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("cpoolv"), Key: aws.String("doc"), Body: bytes.NewReader(body)})
			if err != nil {
				t.Fatal(err)
			}
			versions = append(versions, version{"doc", aws.ToString(out.VersionId), body})
		}
	}
	if _, err := c.admin(1, "pool", "decommission", "start", "1"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; {
		poolStatus(0)
		if len(reply.Decommissions) == 1 && reply.Decommissions[0].State == "complete" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("decommission not complete within 2 minutes: %+v\n%s\n%s", reply.Decommissions, tailLines(c.nodes[0].stderr.String(), 20), tailLines(c.nodes[1].stderr.String(), 20))
		}
		time.Sleep(200 * time.Millisecond)
	}
	check := func(when string) {
		t.Helper()
		for i := range c.nodes {
			cl := c.client(i)
			for key, body := range objects {
				mustGet(t, cl, "cpool", key, body, fmt.Sprintf("node %d %s", i+1, when))
			}
			for _, v := range versions {
				g, err := cl.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("cpoolv"), Key: aws.String(v.key), VersionId: aws.String(v.id)})
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
