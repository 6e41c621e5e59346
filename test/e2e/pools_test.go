package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// poolServer runs the binary on one node with the given drive arguments
// (each with ellipses: a server pool each).
func poolServer(t *testing.T, dir string, drives ...string) *server {
	t.Helper()
	args := append([]string{"server", "--address", "127.0.0.1:0", "--console-address", ""}, drives...)
	return launch(t, dir, serverEnv(), args)
}

// TestPoolsSingleNodeExpansion starts one node with one pool, fills it
// (a versioned bucket included), restarts it with a second pool of
// another geometry appended, and checks with the Go SDK that every
// object and version reads back byte for byte, that new objects go to
// both pools, and that listings name every key once.
func TestPoolsSingleNodeExpansion(t *testing.T) {
	singleNodeOnly(t, "it starts its own single-node server with two pools")
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	s := poolServer(t, dir, a+"{1...4}")
	c := s.root()
	createBucket(t, c, "pools")
	createBucket(t, c, "pools-v")
	if _, err := c.PutBucketVersioning(ctx(t), &s3.PutBucketVersioningInput{Bucket: aws.String("pools-v"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	put := func(c *s3.Client, bucket, key string, body []byte) string {
		t.Helper()
		out, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
		if err != nil {
			t.Fatalf("PUT %s/%s: %v", bucket, key, err)
		}
		return aws.ToString(out.VersionId)
	}
	for i := 0; i < 30; i++ {
		key := fmt.Sprintf("before/%02d", i)
		body := pattern(1000+i*3000, byte(i))
		put(c, "pools", key, body)
		want[key] = body
	}
	versions := map[string][]byte{} // version id -> body, of pools-v/doc
	for i := 0; i < 3; i++ {
		body := pattern(500+i, byte(100+i))
		versions[put(c, "pools-v", "doc", body)] = body
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	// The new pool's drives are empty directories (new disks); a pool of
	// directories that do not exist is refused (they may be unmounted).
	for i := 1; i <= 6; i++ {
		if err := os.MkdirAll(fmt.Sprintf("%s%d", b, i), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	s = poolServer(t, dir, a+"{1...4}", b+"{1...6}")
	if !strings.Contains(s.stderr.String(), "Server pools: 2") {
		t.Fatalf("the start-up output does not name the two pools:\n%s", s.stderr)
	}
	c = s.root()
	for i := 0; i < 60; i++ {
		key := fmt.Sprintf("after/%02d", i)
		body := pattern(200+i*1500, byte(i+7))
		if i%6 == 0 {
			body = pattern(1<<20+i, byte(i+7)) // shard files, not inline data
		}
		put(c, "pools", key, body)
		want[key] = body
	}
	// Overwrites of keys from before the expansion stay readable.
	for i := 0; i < 10; i++ {
		key := fmt.Sprintf("before/%02d", i)
		body := pattern(777+i, byte(200+i))
		put(c, "pools", key, body)
		want[key] = body
	}
	body := pattern(4321, 42)
	versions[put(c, "pools-v", "doc", body)] = body

	for key, body := range want {
		g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("pools"), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("GET %s: %v", key, err)
		}
		if got := mustRead(t, g.Body); !bytes.Equal(got, body) {
			t.Fatalf("GET %s: %d bytes differ from the %d written", key, len(got), len(body))
		}
	}
	seen := map[string]int{}
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String("pools"), MaxKeys: aws.Int32(25)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			seen[aws.ToString(o.Key)]++
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("listing names %d keys, %d were written", len(seen), len(want))
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("listing names %s %d times", k, n)
		}
	}
	lv, err := c.ListObjectVersions(ctx(t), &s3.ListObjectVersionsInput{Bucket: aws.String("pools-v")})
	if err != nil {
		t.Fatal(err)
	}
	if len(lv.Versions) != len(versions) {
		t.Fatalf("pools-v/doc has %d versions listed, %d written", len(lv.Versions), len(versions))
	}
	for id, body := range versions {
		g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("pools-v"), Key: aws.String("doc"), VersionId: aws.String(id)})
		if err != nil {
			t.Fatalf("GET doc version %s: %v", id, err)
		}
		if got := mustRead(t, g.Body); !bytes.Equal(got, body) {
			t.Fatalf("doc version %s differs", id)
		}
	}
	// The operator sees both pools, through the admin API.
	cmd := exec.Command(binary, "admin", "pool", "status", "--json")
	cmd.Env = append(os.Environ(), "SHARDSTORE_ENDPOINT="+s.endpoint,
		"SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("admin pool status: %v\n%s", err, out)
	}
	var reply struct {
		Pools []struct {
			Drives, SetSize int
			ID              string
		}
	}
	if err := json.Unmarshal(out, &reply); err != nil || len(reply.Pools) != 2 || reply.Pools[0].Drives != 4 || reply.Pools[1].Drives != 6 ||
		reply.Pools[0].ID == reply.Pools[1].ID {
		t.Fatalf("admin pool status: %+v, %v\n%s", reply, err, out)
	}
	// The new pool got shard files of new objects.
	if n := countShardFiles(t, b+"1"); n == 0 {
		t.Errorf("drive %s1 holds no shard file: no new object reached the new pool", b)
	}
}

// countShardFiles counts the shard files (.shardstore.sys/data) of a drive.
func countShardFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.Walk(filepath.Join(dir, ".shardstore.sys", "data"), func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
