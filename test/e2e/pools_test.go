package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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
		Expansion struct {
			Pools, NewKeyPools int
			State              string
		}
	}
	if err := json.Unmarshal(out, &reply); err != nil || len(reply.Pools) != 2 || reply.Pools[0].Drives != 4 || reply.Pools[1].Drives != 6 ||
		reply.Pools[0].ID == reply.Pools[1].ID {
		t.Fatalf("admin pool status: %+v, %v\n%s", reply, err, out)
	}
	// A single node's expansion is complete at once (every pool takes new
	// keys); the text says so too.
	if x := reply.Expansion; x.State != "complete" || x.Pools != 2 || x.NewKeyPools != 2 {
		t.Fatalf("admin pool status: expansion %+v\n%s", x, out)
	}
	if out := poolsCLI(t, s, "status"); !bytes.Contains(out, []byte("expansion complete: all 2 pools take new keys")) {
		t.Fatalf("admin pool status printed:\n%s", out)
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

// poolsCLI runs `shardstore admin pool ARGS` against s as root.
func poolsCLI(t *testing.T, s *server, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"admin", "pool"}, args...)...)
	cmd.Env = append(os.Environ(), "SHARDSTORE_ENDPOINT="+s.endpoint,
		"SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("admin pool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// decomState reads the first decommission's state and progress.
func decomState(t *testing.T, s *server) (state string, versions int64) {
	t.Helper()
	var reply struct {
		Decommissions []struct {
			State    string
			Versions int64
		}
	}
	out := poolsCLI(t, s, "decommission", "status", "--json")
	if err := json.Unmarshal(out, &reply); err != nil || len(reply.Decommissions) != 1 {
		t.Fatalf("decommission status: %v\n%s", err, out)
	}
	return reply.Decommissions[0].State, reply.Decommissions[0].Versions
}

// loadRun writes new objects and reads the filled ones until stop is
// closed; acked gets every write the server acknowledged. A read must
// return the bytes written (the SDK retries 503s); a write that fails is
// not acknowledged and not checked.
func loadRun(t *testing.T, c *s3.Client, fixed map[string][]byte, acked map[string][]byte, mu *sync.Mutex, stop <-chan struct{}, prefix string) (reads, writes int, err error) {
	keys := make([]string, 0, len(fixed))
	for k := range fixed {
		keys = append(keys, k)
	}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return reads, writes, nil
		default:
		}
		key := fmt.Sprintf("%s/%04d", prefix, i)
		body := pattern(100+i*37, byte(i))
		if _, werr := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("pools"), Key: aws.String(key), Body: bytes.NewReader(body)}); werr == nil {
			mu.Lock()
			acked[key] = body
			mu.Unlock()
			writes++
		}
		k := keys[i%len(keys)]
		g, gerr := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("pools"), Key: aws.String(k)})
		if gerr != nil {
			return reads, writes, fmt.Errorf("GET %s during the decommission: %w", k, gerr)
		}
		got, rerr := io.ReadAll(g.Body)
		g.Body.Close()
		if rerr != nil || !bytes.Equal(got, fixed[k]) {
			return reads, writes, fmt.Errorf("GET %s during the decommission: %d bytes, %v; want the %d written", k, len(got), rerr, len(fixed[k]))
		}
		reads++
	}
}

// TestPoolsDecommissionKilled fills two pools of one node, decommissions
// pool 1 while a writer and a reader run, kills the server (SIGKILL) in
// the middle, restarts it (the decommission resumes from its persisted
// state), and once it is complete restarts with pool 1 removed: every
// acknowledged object and every version (ids, ETags, bytes) reads back.
func TestPoolsDecommissionKilled(t *testing.T) {
	singleNodeOnly(t, "it starts its own single-node server with two pools")
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a")+"{1...4}", filepath.Join(dir, "b")+"{1...4}"
	s := poolServer(t, dir, a, b)
	c := s.root()
	createBucket(t, c, "pools")
	createBucket(t, c, "pools-v")
	if _, err := c.PutBucketVersioning(ctx(t), &s3.PutBucketVersioningInput{Bucket: aws.String("pools-v"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	fixed := map[string][]byte{}
	for i := 0; i < 300; i++ {
		key := fmt.Sprintf("fill/%03d", i)
		body := pattern(50+i*97, byte(i))
		if i%50 == 0 {
			body = pattern(2<<20+i, byte(i))
		}
		if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("pools"), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
		fixed[key] = body
	}
	type version struct {
		id, etag string
		body     []byte
	}
	versions := map[string][]version{}
	for i := 0; i < 20; i++ {
		key := fmt.Sprintf("v/%02d", i)
		for j := 0; j < 2; j++ {
			body := pattern(300+i*10+j, byte(i+j))
			out, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("pools-v"), Key: aws.String(key), Body: bytes.NewReader(body)})
			if err != nil {
				t.Fatal(err)
			}
			versions[key] = append(versions[key], version{aws.ToString(out.VersionId), aws.ToString(out.ETag), body})
		}
		if i%4 == 0 {
			if _, err := c.DeleteObject(ctx(t), &s3.DeleteObjectInput{Bucket: aws.String("pools-v"), Key: aws.String(key)}); err != nil {
				t.Fatal(err)
			}
		}
	}

	acked := map[string][]byte{}
	var mu sync.Mutex
	load := func(s *server, prefix string) func() {
		stop := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			r, w, err := loadRun(t, s.root(), fixed, acked, &mu, stop, prefix)
			t.Logf("load %s: %d reads, %d acknowledged writes", prefix, r, w)
			done <- err
		}()
		return func() {
			close(stop)
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}
	stopLoad := load(s, "load1")
	poolsCLI(t, s, "decommission", "start", "1")
	killed := false
	deadline := time.Now().Add(60 * time.Second)
	for !killed {
		state, moved := decomState(t, s)
		if state == "complete" {
			t.Log("the decommission completed before the kill: the kill tests the restart only")
			break
		}
		if moved > 0 {
			killed = true
		}
		if time.Now().After(deadline) {
			t.Fatalf("no progress within 60s: %s\n%s", state, s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stopLoad()
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
	s.exitErr = nil

	s = poolServer(t, dir, a, b)
	stopLoad = load(s, "load2")
	for deadline := time.Now().Add(90 * time.Second); ; {
		state, _ := decomState(t, s)
		if state == "complete" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("decommission not complete within 90s after the restart: %s\n%s", state, poolsCLI(t, s, "decommission", "status"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	stopLoad()
	t.Logf("%s", poolsCLI(t, s, "decommission", "status"))
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	// Pool 1 is empty: the server starts without it, and every object,
	// version and delete marker is there, byte for byte.
	s = poolServer(t, dir, b)
	c = s.root()
	mu.Lock()
	for k, body := range acked {
		fixed[k] = body
	}
	mu.Unlock()
	for key, body := range fixed {
		g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("pools"), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("GET %s after pool 1's removal: %v", key, err)
		}
		if got := mustRead(t, g.Body); !bytes.Equal(got, body) {
			t.Fatalf("GET %s after pool 1's removal: %d bytes differ from the %d written", key, len(got), len(body))
		}
	}
	for key, vs := range versions {
		for _, v := range vs {
			g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("pools-v"), Key: aws.String(key), VersionId: aws.String(v.id)})
			if err != nil {
				t.Fatalf("GET %s version %s after pool 1's removal: %v", key, v.id, err)
			}
			if aws.ToString(g.ETag) != v.etag {
				t.Fatalf("%s version %s: ETag %s, was %s", key, v.id, aws.ToString(g.ETag), v.etag)
			}
			if got := mustRead(t, g.Body); !bytes.Equal(got, v.body) {
				t.Fatalf("%s version %s differs after pool 1's removal", key, v.id)
			}
		}
		lv, err := c.ListObjectVersions(ctx(t), &s3.ListObjectVersionsInput{Bucket: aws.String("pools-v"), Prefix: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		markers := 0
		if key[len(key)-2:] == "00" || key[len(key)-2:] == "04" || key[len(key)-2:] == "08" || key[len(key)-2:] == "12" || key[len(key)-2:] == "16" {
			markers = 1
		}
		if len(lv.Versions) != len(vs) || len(lv.DeleteMarkers) != markers {
			t.Fatalf("%s: %d versions and %d delete markers listed, want %d and %d", key, len(lv.Versions), len(lv.DeleteMarkers), len(vs), markers)
		}
	}
}
