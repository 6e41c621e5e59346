package cluster

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/test/internal/testfs"
)

// TestClusterNodeRestartsOnFullDrives is H1 of docs/consistency.md: a
// node restarted with no space left on its drives never got ready (its
// drives' index open retried the flush of the WAL it replays for ever),
// so it served nothing and could free nothing. Node 3's two drives are
// on one small tmpfs; it is killed, the tmpfs is filled by a file, and
// it is started again: it must get ready, serve every object through
// its S3 endpoint (its own drives' shards included), take PUTs (the
// other nodes' drives make the write quorum), and take writes on its own
// drives again by itself once the file is removed.
func TestClusterNodeRestartsOnFullDrives(t *testing.T) {
	const nodes, drives = 3, 2
	c := &testCluster{t: t, dir: t.TempDir(), ports: freePorts(t, nodes), scheme: "http", kms: encryptAll}
	fsDir := filepath.Join(c.dir, "node3")
	testfs.Tmpfs(t, fsDir, "shardstore-cluster-full", 64<<20, "the drives must fill up on their own")
	if useTLS {
		c.scheme, c.tlsFiles = "https", newTLSFiles(t, c.dir, nodes)
	}
	c.hc = c.tlsFiles.httpClient()
	for i := 0; i < nodes; i++ {
		c.args = append(c.args, fmt.Sprintf("%s://127.0.0.1:%d%s/node%d/d{1...%d}", c.scheme, c.ports[i], c.dir, i+1, drives))
	}
	c.nodes = make([]*node, nodes)
	t.Cleanup(c.stopAll)
	for i := range c.nodes {
		c.launch(i, c.args)
	}
	for i := range c.nodes {
		c.waitReady(i)
	}

	n1 := c.client(0)
	if _, err := n1.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("full")}); err != nil {
		t.Fatal(err)
	}
	// Inline objects (their shards in the drives' index records) and
	// one with shard files.
	objects := map[string][]byte{}
	for i, size := range []int{10, 1000, 40000, 1 << 20} {
		b := make([]byte, size)
		_, _ = rand.Read(b)
		k := fmt.Sprintf("obj%d", i)
		objects[k] = b
		if _, err := n1.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("full"), Key: aws.String(k), Body: bytes.NewReader(b)}); err != nil {
			t.Fatal(err)
		}
	}

	c.kill(2)
	filler := filepath.Join(fsDir, "filler")
	testfs.Fill(t, filler)

	c.restart(2) // waits for ready: before the fix, "want 200 within 1m30s, last 503"
	n3 := c.client(2)
	for k, want := range objects {
		out, err := n3.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("full"), Key: aws.String(k)})
		if err != nil {
			t.Fatalf("GET %s through the node on full drives: %v", k, err)
		}
		got, err := io.ReadAll(out.Body)
		out.Body.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("GET %s through the node on full drives: %d bytes, %v; want %d bytes as written", k, len(got), err, len(want))
		}
	}
	if _, err := n3.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("full"), Key: aws.String("while-full"), Body: strings.NewReader("w")}); err != nil {
		t.Fatalf("PUT through the node on full drives (the other nodes' drives make the write quorum): %v", err)
	}

	// Node 3's drives share the tmpfs: the first to open released its
	// reserve (deletes-only), which may have left the second enough
	// room to open for writes; a drive with too little room and no
	// reserve opens read-only. Either way admin status names the full
	// ones, and none once the file is gone.
	full := func(st admin.StatusReply) int {
		n := 0
		for _, d := range st.Drives {
			if strings.Contains(d.Path, "/node3/") && d.Index != "" {
				n++
			}
		}
		return n
	}
	c.waitStatus(2, time.Now().Add(30*time.Second), "a drive of node 3 shown as full", func(st admin.StatusReply) bool { return full(st) > 0 })
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	c.waitStatus(2, time.Now().Add(time.Minute), "node 3's drives open for writes once space was freed", func(st admin.StatusReply) bool { return full(st) == 0 })
	if n := strings.Count(c.nodes[2].stderr.String(), "index: open for writes again"); n == 0 {
		t.Fatalf("node 3 never logged that a drive is open for writes again:\n%s", tailLines(c.nodes[2].stderr.String(), 20))
	}
	if _, err := n3.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("full"), Key: aws.String("after"), Body: strings.NewReader("a")}); err != nil {
		t.Fatalf("PUT after space was freed: %v", err)
	}
}
