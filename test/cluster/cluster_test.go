package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/peerauth"
	"github.com/shardstore/shardstore/internal/release"
	"github.com/shardstore/shardstore/test/internal/serverbin"
)

func randBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func put(t *testing.T, c *s3.Client, bucket, key string, body []byte) error {
	_, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
	return err
}

func get(t *testing.T, c *s3.Client, bucket, key string) ([]byte, error) {
	out, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

func mustGet(t *testing.T, c *s3.Client, bucket, key string, want []byte, via string) {
	t.Helper()
	mustGetWritten(t, c, bucket, key, writtenOf(want), via)
}

// written is what a test remembers of an acknowledged object: its size
// and SHA-256, so that long runs (the nightly crash test writes GiBs)
// do not keep every body in memory.
type written struct {
	size int
	sum  [sha256.Size]byte
}

func writtenOf(body []byte) written { return written{len(body), sha256.Sum256(body)} }

// mustGetWritten is mustGet against what was remembered of the body.
func mustGetWritten(t *testing.T, c *s3.Client, bucket, key string, want written, via string) {
	t.Helper()
	got, err := get(t, c, bucket, key)
	if err != nil {
		t.Fatalf("GET %s via %s: %v", key, via, err)
	}
	if g := writtenOf(got); g != want {
		t.Fatalf("GET %s via %s: %d bytes differ from the %d written", key, via, g.size, want.size)
	}
}

func errCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// TestAnyNodeServesAnyRequest: 4 nodes x 4 drives (one set of 16, 12+4):
// buckets, objects, multipart, listing, versioning and deletes work
// through whichever node a request reaches.
func TestAnyNodeServesAnyRequest(t *testing.T) {
	c := startCluster(t, 4, 4)
	n1, n2, n3, n4 := c.client(0), c.client(1), c.client(2), c.client(3)
	if _, err := n1.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("shared")}); err != nil {
		t.Fatal(err)
	}
	// A bucket made on node 1 is known at once on the others (their
	// cache is filled from the drives on a miss or by the notice).
	if _, err := n3.HeadBucket(ctx(t), &s3.HeadBucketInput{Bucket: aws.String("shared")}); err != nil {
		t.Fatalf("bucket created on node 1, HEAD on node 3: %v", err)
	}
	// Created again by its owner on node 2: S3's us-east-1 answer (200,
	// or BucketAlreadyOwnedByYou), never a second bucket.
	if _, err := n2.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("shared")}); err != nil && errCode(err) != "BucketAlreadyOwnedByYou" {
		t.Fatalf("creating it again on node 2: %v", err)
	}

	small, medium := randBytes(1000), randBytes(5<<20+123)
	if err := put(t, n2, "shared", "dir/small", small); err != nil {
		t.Fatal(err)
	}
	if err := put(t, n3, "shared", "dir/medium", medium); err != nil {
		t.Fatal(err)
	}
	for i := range c.nodes {
		mustGet(t, c.client(i), "shared", "dir/small", small, fmt.Sprintf("node %d", i+1))
		mustGet(t, c.client(i), "shared", "dir/medium", medium, fmt.Sprintf("node %d", i+1))
	}

	// Multipart: started on node 2, parts on nodes 3 and 4, completed on 1.
	up, err := n2.CreateMultipartUpload(ctx(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("shared"), Key: aws.String("mp")})
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := randBytes(5<<20), randBytes(1<<20)
	var parts []types.CompletedPart
	for i, p := range []struct {
		c    *s3.Client
		body []byte
	}{{n3, p1}, {n4, p2}} {
		out, err := p.c.UploadPart(ctx(t), &s3.UploadPartInput{Bucket: aws.String("shared"), Key: aws.String("mp"), UploadId: up.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p.body)})
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	lp, err := n1.ListParts(ctx(t), &s3.ListPartsInput{Bucket: aws.String("shared"), Key: aws.String("mp"), UploadId: up.UploadId})
	if err != nil || len(lp.Parts) != 2 {
		t.Fatalf("list parts on node 1: %v %+v", err, lp)
	}
	if _, err := n1.CompleteMultipartUpload(ctx(t), &s3.CompleteMultipartUploadInput{Bucket: aws.String("shared"), Key: aws.String("mp"),
		UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatal(err)
	}
	mustGet(t, n4, "shared", "mp", append(append([]byte{}, p1...), p2...), "node 4")

	// Listing from every node.
	for i := range c.nodes {
		out, err := c.client(i).ListObjectsV2(ctx(t), &s3.ListObjectsV2Input{Bucket: aws.String("shared")})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, o := range out.Contents {
			keys = append(keys, *o.Key)
		}
		if strings.Join(keys, ",") != "dir/medium,dir/small,mp" {
			t.Fatalf("list via node %d: %v", i+1, keys)
		}
	}

	// Versioning set on node 4 applies to a PUT through node 2 at once.
	if _, err := n4.PutBucketVersioning(ctx(t), &s3.PutBucketVersioningInput{Bucket: aws.String("shared"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	v1 := randBytes(100)
	if err := put(t, n2, "shared", "dir/small", v1); err != nil {
		t.Fatal(err)
	}
	vers, err := n3.ListObjectVersions(ctx(t), &s3.ListObjectVersionsInput{Bucket: aws.String("shared"), Prefix: aws.String("dir/small")})
	if err != nil || len(vers.Versions) != 2 {
		t.Fatalf("versions via node 3 after versioning was enabled on node 4: %v, %d versions", err, len(vers.Versions))
	}

	// Delete on node 3; gone on every node.
	if _, err := n3.DeleteObject(ctx(t), &s3.DeleteObjectInput{Bucket: aws.String("shared"), Key: aws.String("dir/medium")}); err != nil {
		t.Fatal(err)
	}
	for i := range c.nodes {
		if _, err := get(t, c.client(i), "shared", "dir/medium"); errCode(err) != "NoSuchKey" {
			t.Fatalf("deleted key via node %d: %v", i+1, err)
		}
	}

	// A bucket deleted on one node is gone on the others.
	if _, err := n1.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("short-lived")}); err != nil {
		t.Fatal(err)
	}
	if _, err := n2.HeadBucket(ctx(t), &s3.HeadBucketInput{Bucket: aws.String("short-lived")}); err != nil {
		t.Fatal(err)
	}
	if _, err := n1.DeleteBucket(ctx(t), &s3.DeleteBucketInput{Bucket: aws.String("short-lived")}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node 2 to forget the deleted bucket", func() bool {
		err := put(t, n2, "short-lived", "x", []byte("x"))
		return errCode(err) == "NoSuchBucket"
	})
}

// waitFor polls cond for up to 10 s (a change notice travels between
// processes in the background).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSameKeyFromEveryNode: PUTs of one key through all nodes at once are
// serialized by the cluster lock: afterwards every node returns the same
// object, and it is one of the bodies written, whole.
func TestSameKeyFromEveryNode(t *testing.T) {
	c := startCluster(t, 4, 4)
	if _, err := c.client(0).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("race")}); err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range c.nodes {
		for r := 0; r < 5; r++ {
			body := randBytes(200 << 10) // inline data: the commit is the whole write
			if r%2 == 1 {
				body = randBytes(3 << 20) // shard files
			}
			mu.Lock()
			bodies[string(body[:16])] = body
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := put(t, c.client(i), "race", "contended", body); err != nil {
					t.Errorf("PUT via node %d: %v", i+1, err)
				}
			}()
		}
	}
	wg.Wait()
	first, err := get(t, c.client(0), "race", "contended")
	if err != nil {
		t.Fatal(err)
	}
	if want, ok := bodies[string(first[:16])]; !ok || !bytes.Equal(first, want) {
		t.Fatalf("the object is not one of the bodies written (%d bytes)", len(first))
	}
	for i := range c.nodes {
		mustGet(t, c.client(i), "race", "contended", first, fmt.Sprintf("node %d", i+1))
	}
}

// TestNodeCrashDuringWrites: kill -9 of a node while PUTs run through
// every node, twice in CI (two different nodes), SHARDSTORE_CLUSTER_KILLS
// times in the nightly script: every acknowledged object reads back
// byte-identical through every node while the node is down and after it
// returns. With SHARDSTORE_CLUSTER_ENCRYPT_ALL=1 every object is also
// SSE-S3 encrypted (HEAD says so).
func TestNodeCrashDuringWrites(t *testing.T) {
	nightlyOnly(t, "test/jepsen TestSlice (kill -9 under concurrent writes, every acknowledged write checked) and TestClusterPoolMovesKilled (kill -9 of the moving node under load)")
	began := time.Now()
	kills := 2
	if v := os.Getenv("SHARDSTORE_CLUSTER_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SHARDSTORE_CLUSTER_KILLS=%q: want a positive number", v)
		}
		kills = n
	}
	victims := make([]int, kills)
	for r := range victims {
		victims[r] = (r + 1) % 4
	}
	c := startCluster(t, 4, 4)
	if _, err := c.client(0).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("crash")}); err != nil {
		t.Fatal(err)
	}
	acked := map[string]written{}
	var mu sync.Mutex
	for round, victim := range victims {
		stop := writers(4, func(w, k int) bool {
			key := fmt.Sprintf("r%d/w%d/%d", round, w, k)
			body := randBytes(64<<10 + k%3*(1<<20))
			// Writers use every node, the victim too until it dies.
			if err := put(t, c.client((w+k)%4), "crash", key, body); err == nil {
				mu.Lock()
				acked[key] = writtenOf(body)
				mu.Unlock()
			}
			return true
		})
		time.Sleep(1500 * time.Millisecond)
		c.kill(victim)
		time.Sleep(1500 * time.Millisecond)
		stop()
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n == 0 {
			t.Fatal("no PUT was acknowledged")
		}
		// admin status through another node shows the node down.
		out, err := c.admin((victim+1)%4, "status")
		if err != nil {
			t.Fatal(err)
		}
		if want := "node " + c.nodes[victim].endpoint; !strings.Contains(string(out), want) ||
			!strings.Contains(string(out), "0 of 4 drives online; DOWN") {
			t.Fatalf("admin status does not show node %d down:\n%s", victim+1, out)
		}
		// With the node down, what was acknowledged reads through the
		// others (its 4 drives are 4 missing shards of 16, parity 4): all
		// of this round's objects, and up to 100 of earlier rounds' (map
		// order is random), so long nightly runs stay linear. The end
		// checks everything.
		prefix := fmt.Sprintf("r%d/", round)
		older := 0
		for key, w := range acked {
			if !strings.HasPrefix(key, prefix) {
				if older++; older > 100 {
					continue
				}
			}
			for i := range c.nodes {
				if i != victim {
					mustGetWritten(t, c.client(i), "crash", key, w, fmt.Sprintf("node %d with node %d down", i+1, victim+1))
				}
			}
		}
		// The node returns; once every node sees its drives again, a heal
		// (run through another node) rewrites the shards it missed, so
		// the next crash finds every object with full redundancy. Without
		// it, objects written while it was down sit on exactly write
		// quorum drives and a second node loss makes them unreadable
		// (never lost) until healed.
		c.restart(victim)
		c.waitAllOnline()
		c.heal((victim + 1) % 4)
	}
	for i := range c.nodes {
		for key, w := range acked {
			mustGetWritten(t, c.client(i), "crash", key, w, fmt.Sprintf("node %d after restarts", i+1))
		}
	}
	encrypted := ""
	if encryptAll {
		for key := range acked {
			h, err := c.client(len(key)%4).HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String("crash"), Key: aws.String(key)})
			if err != nil {
				t.Fatalf("HEAD %s: %v", key, err)
			}
			if h.ServerSideEncryption != types.ServerSideEncryptionAes256 {
				t.Fatalf("HEAD %s: x-amz-server-side-encryption %q; want AES256 (SHARDSTORE_CLUSTER_ENCRYPT_ALL=1)", key, h.ServerSideEncryption)
			}
		}
		encrypted = ", every one SSE-S3 encrypted (--encrypt-all)"
	}
	t.Logf("%d acknowledged objects verified through every node%s; %d node kills in %v", len(acked), encrypted, kills, time.Since(began).Round(time.Second))
}

// TestQuorumWithNodesDown: 8 nodes x 2 drives, one set of 16 at parity 4.
// Two nodes down (4 drives): reads and writes go on. A third down (6
// drives): writes are refused with a clear error, nothing half-written
// appears, and everything comes back when the nodes return. The health
// checks (ours and MinIO's paths) say so on every node that is up.
func TestQuorumWithNodesDown(t *testing.T) {
	c := startCluster(t, 8, 2)
	n1 := c.client(0)
	if _, err := n1.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("quorum")}); err != nil {
		t.Fatal(err)
	}
	before := randBytes(2 << 20)
	if err := put(t, n1, "quorum", "before", before); err != nil {
		t.Fatal(err)
	}
	c.kill(6)
	c.kill(7)
	mustGet(t, c.client(3), "quorum", "before", before, "node 4 with 2 nodes down")
	for _, path := range []string{"/shardstore/health/ready", "/shardstore/health/read"} {
		c.waitHealth(3, path, http.StatusOK) // 12 of 16 drives: both quorums hold
	}
	during := randBytes(1 << 20)
	if err := put(t, c.client(2), "quorum", "during", during); err != nil {
		t.Fatalf("PUT with 2 of 8 nodes down (12 of 16 drives, write quorum 12): %v", err)
	}
	c.kill(5)
	err := put(t, c.client(1), "quorum", "refused", randBytes(1<<20))
	if err == nil {
		t.Fatal("PUT with 3 of 8 nodes down (10 of 16 drives) was acknowledged")
	}
	var re interface{ HTTPStatusCode() int }
	if !errors.As(err, &re) || re.HTTPStatusCode() != http.StatusServiceUnavailable {
		t.Fatalf("PUT without write quorum: want 503, got %v", err)
	}
	if !strings.Contains(err.Error(), "quorum") {
		t.Errorf("the error does not say quorum: %v", err)
	}
	// 10 of 16 drives: below write quorum (12) and read quorum (12).
	for i := range 5 {
		c.waitHealth(i, "/shardstore/health/ready", http.StatusServiceUnavailable)
		c.waitHealth(i, "/minio/health/cluster/read", http.StatusServiceUnavailable)
		c.waitHealth(i, "/shardstore/health/live", http.StatusOK)
	}
	for _, i := range []int{5, 6, 7} {
		c.restart(i)
	}
	for i := range c.nodes {
		c.waitHealth(i, "/minio/health/cluster", http.StatusOK)
		c.waitHealth(i, "/shardstore/health/read", http.StatusOK)
	}
	for i := range c.nodes {
		mustGet(t, c.client(i), "quorum", "before", before, fmt.Sprintf("node %d", i+1))
		mustGet(t, c.client(i), "quorum", "during", during, fmt.Sprintf("node %d", i+1))
		if _, err := get(t, c.client(i), "quorum", "refused"); errCode(err) != "NoSuchKey" {
			t.Fatalf("the refused PUT is visible via node %d: %v", i+1, err)
		}
	}
}

// TestNodesThatDisagreeRefuseToStart: a node given other drives than its
// peers does not form a cluster with them; the message names the node
// and the difference.
func TestNodesThatDisagreeRefuseToStart(t *testing.T) {
	dir := t.TempDir()
	ports := freePorts(t, 2)
	good := []string{fmt.Sprintf("http://127.0.0.1:%d%s/a/d{1...2}", ports[0], dir), fmt.Sprintf("http://127.0.0.1:%d%s/b/d{1...2}", ports[1], dir)}
	bad := []string{good[0], fmt.Sprintf("http://127.0.0.1:%d%s/b/e{1...2}", ports[1], dir)}
	env := []string{"SHARDSTORE_ROOT_USER=" + rootUser, "SHARDSTORE_ROOT_PASSWORD=" + rootPass, "SHARDSTORE_ALLOW_ROOT_DRIVES=1", "SHARDSTORE_CERTS_DIR=" + serverbin.NoCertsDir()}
	start := func(port int, eps []string) (*exec.Cmd, *serverbin.SyncBuffer) {
		cmd := exec.Command(binary, append([]string{"server", "--address", fmt.Sprintf("127.0.0.1:%d", port), "--console-address", ""}, eps...)...)
		serverbin.DieWithParent(cmd)
		cmd.Env = append(cmd.Environ(), env...)
		out := &serverbin.SyncBuffer{}
		cmd.Stderr = out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, out
	}
	a, aOut := start(ports[0], good)
	b, bOut := start(ports[1], bad)
	defer func() { _ = a.Process.Kill(); _ = b.Process.Kill() }()
	// Whichever node first hears the other's hello refuses and exits
	// (the other may then wait for it, as for a node that is down).
	exited := make(chan error, 2)
	go func() { exited <- a.Wait() }()
	go func() { exited <- b.Wait() }()
	select {
	case err := <-exited:
		if err == nil {
			t.Fatal("a node that disagrees exited with status 0")
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("neither node refused\nA:\n%s\nB:\n%s", aOut, bOut)
	}
	msg := aOut.String() + bOut.String()
	for _, want := range []string{"does not agree with this node", "the drive endpoints differ (drive 2 is", "start every node with the same arguments"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	// Neither formatted anything: a new deployment needs every node.
	for _, d := range []string{"a/d1", "a/d2", "b/d1", "b/d2", "b/e1", "b/e2"} {
		if _, err := os.Stat(filepath.Join(dir, d, ".shardstore.sys", "format.json")); err == nil {
			t.Errorf("%s was formatted", d)
		}
	}
}

// TestInternalCallsNeedTheClusterKey: the drive, lock and peer calls
// under /_shardstore/ answer only requests signed with the cluster key;
// S3 credentials or an unsigned request never reach a drive. A signed
// request is taken once: sent again (a replay), or sent to a node it was
// not signed for, it is refused.
func TestInternalCallsNeedTheClusterKey(t *testing.T) {
	c := startCluster(t, 2, 2)
	for _, path := range []string{"/_shardstore/drive/v1/format?drive=0", "/_shardstore/lock/v1/batch", "/_shardstore/peer/v1/hello"} {
		// Unsigned: an S3 request for a bucket named _shardstore (an
		// invalid name), never an internal call.
		resp, err := c.hc.Get(c.nodes[0].endpoint + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || bytes.Contains(body, []byte("deploymentID")) {
			t.Fatalf("unsigned GET %s: %d %s", path, resp.StatusCode, body)
		}
		// A forged peer signature: refused by the internal handler.
		method := http.MethodGet
		if strings.Contains(path, "/lock/") {
			method = http.MethodPost // lock calls are POST; the signature is what fails
		}
		req, _ := http.NewRequest(method, c.nodes[0].endpoint+path, nil)
		req.Header.Set("X-Shardstore-Peer-Date", fmt.Sprint(time.Now().UnixNano()))
		req.Header.Set("X-Shardstore-Peer-Nonce", strings.Repeat("0", 32)+".1")
		req.Header.Set("X-Shardstore-Peer-Content-Sha256", "UNSIGNED")
		req.Header.Set("X-Shardstore-Peer-Signature", strings.Repeat("0", 64))
		release.Current("test").Set(req.Header) // past the release guard
		resp, err = c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("forged signature on %s: %d %s", path, resp.StatusCode, body)
		}
	}
	// Signed with the cluster key (derived from the root credentials, as
	// every node does) and stamped with a release, as every node's calls
	// are: answered once, refused when sent again.
	key := peerauth.Derive(rootUser, rootPass)
	send := func(r *http.Request) (int, string) {
		resp, err := c.hc.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// Without a release stamp: refused once every node stamps its calls
	// (the stamped-calls gate is active in a cluster of one release).
	unstamped, _ := http.NewRequest(http.MethodGet, c.nodes[0].endpoint+"/_shardstore/peer/v1/hello", nil)
	key.Sign(unstamped, peerauth.BodyHash(nil))
	if code, body := send(unstamped); code != http.StatusUpgradeRequired || !strings.Contains(body, release.StampedCalls) {
		t.Fatalf("unstamped signed hello: %d %s", code, body)
	}
	hello, _ := http.NewRequest(http.MethodGet, c.nodes[0].endpoint+"/_shardstore/peer/v1/hello", nil)
	release.Current("test").Set(hello.Header)
	key.Sign(hello, peerauth.BodyHash(nil))
	if code, body := send(hello); code != http.StatusOK || !strings.Contains(body, "deployment") {
		t.Fatalf("signed hello: %d %s", code, body)
	}
	again := hello.Clone(context.Background())
	if code, body := send(again); code != http.StatusForbidden || !strings.Contains(body, "replayed") {
		t.Fatalf("replayed hello: %d %s", code, body)
	}
	// Signed for node 2, sent to node 1.
	other, _ := http.NewRequest(http.MethodGet, c.nodes[1].endpoint+"/_shardstore/peer/v1/hello", nil)
	release.Current("test").Set(other.Header)
	key.Sign(other, peerauth.BodyHash(nil))
	other.URL.Host = strings.TrimPrefix(c.nodes[0].endpoint, c.scheme+"://")
	if code, body := send(other); code != http.StatusMisdirectedRequest {
		t.Fatalf("hello signed for node 2 sent to node 1: %d %s", code, body)
	}
}

// TestDownloadThroughAnotherNodeSurvivesOverwrite: a GET streaming
// through node 2 keeps reading the version it resolved while node 1
// overwrites and then deletes the key, and the writers do not wait for
// the reader. (The shard files it streams are already open; that replaced
// data is also kept for a while for readers that open files later, after
// a drive fails mid-stream, is pinSet's delay, tested in the engine.)
func TestDownloadThroughAnotherNodeSurvivesOverwrite(t *testing.T) {
	c := startCluster(t, 4, 4)
	n1, n2 := c.client(0), c.client(1)
	if _, err := n1.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("stream")}); err != nil {
		t.Fatal(err)
	}
	old := randBytes(24 << 20)
	if err := put(t, n1, "stream", "k", old); err != nil {
		t.Fatal(err)
	}
	out, err := n2.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("stream"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	head := make([]byte, 1<<20)
	if _, err := io.ReadFull(out.Body, head); err != nil {
		t.Fatal(err)
	}
	fresh := randBytes(24 << 20)
	done := make(chan error, 1)
	go func() {
		if err := put(t, n1, "stream", "k", fresh); err != nil {
			done <- err
			return
		}
		_, err := n1.DeleteObject(ctx(t), &s3.DeleteObjectInput{Bucket: aws.String("stream"), Key: aws.String("k")})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("overwrite and delete while a download is open: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("overwrite waited for the reader on another node")
	}
	rest, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("the download broke after the overwrite: %v", err)
	}
	if !bytes.Equal(append(head, rest...), old) {
		t.Fatal("the download does not return the version it started with")
	}
}

// TestNodeRestartedWithWipedDrive: a node comes back with one drive
// replaced by an empty directory; it adopts the drive and refills it
// from the other nodes, so that the objects then survive the loss of
// another whole node (which needs every remaining drive, the new one
// included).
func TestNodeRestartedWithWipedDrive(t *testing.T) {
	c := startCluster(t, 4, 4)
	n1 := c.client(0)
	if _, err := n1.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("wiped")}); err != nil {
		t.Fatal(err)
	}
	objects := map[string][]byte{}
	for i := 0; i < 12; i++ {
		body := randBytes(1000 + i*(700<<10)) // inline and shard-file objects
		key := fmt.Sprintf("o%02d", i)
		if err := put(t, c.client(i%4), "wiped", key, body); err != nil {
			t.Fatal(err)
		}
		objects[key] = body
	}
	c.kill(1)
	wiped := c.driveDir(1, 1)
	if err := os.RemoveAll(wiped); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(wiped, 0o750); err != nil {
		t.Fatal(err)
	}
	c.restart(1)
	c.waitAllOnline()
	// Refilled: the node reports no refill running and the drive holds
	// shard files again.
	shardFiles := func() int {
		files := 0
		_ = filepath.WalkDir(filepath.Join(wiped, ".shardstore.sys", "data"), func(_ string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files++
			}
			return nil
		})
		return files
	}
	c.waitStatus(1, time.Now().Add(90*time.Second), "the wiped drive refilled (no refill running, shard files on it)",
		func(st admin.StatusReply) bool { return len(st.Heal.Refills) == 0 && shardFiles() > 0 })
	c.kill(2)
	for key, body := range objects {
		mustGet(t, c.client(3), "wiped", key, body, "node 4 with node 3 down, after node 2's drive was refilled")
	}
}

// TestNodeWithEveryDriveMissing: a node restarted with every drive
// directory missing (disks that did not mount) cannot tell that from a
// first start by itself. It asks the other nodes, learns the deployment
// exists, and refuses to start with a message saying what to do: it
// creates no directory (nothing is written to the filesystem beneath
// the mount points) and grants no lock. Given empty directories (new
// disks), it starts, waits out its lock quiet period like any restarted
// node, and its drives are adopted and refilled.
func TestNodeWithEveryDriveMissing(t *testing.T) {
	c := startCluster(t, 4, 2)
	n1 := c.client(0)
	if _, err := n1.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("unmounted")}); err != nil {
		t.Fatal(err)
	}
	objects := map[string][]byte{}
	for i := 0; i < 6; i++ {
		body := randBytes(1000 + i*(500<<10))
		key := fmt.Sprintf("o%02d", i)
		if err := put(t, c.client(i%4), "unmounted", key, body); err != nil {
			t.Fatal(err)
		}
		objects[key] = body
	}
	c.kill(1)
	for j := 1; j <= 2; j++ {
		if err := os.Rename(c.driveDir(1, j), filepath.Join(c.dir, fmt.Sprintf("unmounted%d", j))); err != nil {
			t.Fatal(err)
		}
	}
	c.launch(1, c.args)
	n := c.nodes[1]
	select {
	case <-n.exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("node 2 with every drive missing still runs after 60s:\n%s", n.stderr)
	}
	if !strings.Contains(n.stderr.String(), "every drive directory of this node is missing") {
		t.Fatalf("node 2 exited (%v) without saying why:\n%s", n.exitErr, n.stderr)
	}
	for j := 1; j <= 2; j++ {
		if _, err := os.Stat(c.driveDir(1, j)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("node 2 created its missing drive directory %s (%v)", c.driveDir(1, j), err)
		}
	}
	// The others serve meanwhile: node 2's drives are offline ones.
	for key, body := range objects {
		mustGet(t, c.client(2), "unmounted", key, body, "node 3 with node 2 refusing to start")
	}

	// New disks: empty directories are adopted.
	for j := 1; j <= 2; j++ {
		if err := os.Mkdir(c.driveDir(1, j), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	c.restart(1)
	// Its consensus log went with the drives: it forgot its votes, and
	// waits out any election it may have voted in before voting again
	// (10 s, which also covers the lock quiet period: a node that kept
	// its log says "this node restarted; it serves S3 in ...").
	if !strings.Contains(c.nodes[1].stderr.String(), "consensus log is new in an existing deployment") {
		t.Errorf("node 2 with blank drives in an existing deployment joined the votes and granted locks at once:\n%s", c.nodes[1].stderr)
	}
	// Nor does it bootstrap a group of its own (its first log entry could
	// differ from the group's): it joins the group, in which it is still
	// a voter, and the leader brings it up to date.
	if !strings.Contains(c.nodes[1].stderr.String(), "it joins the consensus group (a membership change)") {
		t.Errorf("node 2 with a wiped consensus log did not join the existing group:\n%s", c.nodes[1].stderr)
	}
	c.waitAllOnline()
	c.waitStatus(1, time.Now().Add(90*time.Second), "node 2's new drives refilled",
		func(st admin.StatusReply) bool { return len(st.Heal.Refills) == 0 })
	for key, body := range objects {
		mustGet(t, c.client(1), "unmounted", key, body, "node 2 after its new drives were refilled")
	}
}

// TestRollingRestart: every node is restarted in turn while writers keep
// going through the nodes that are up, as an operator upgrades a cluster:
// stop a node, start it, wait until every node sees all drives online
// and the heal queues are empty (objects written meanwhile are healed
// onto the returning node automatically), then the next. No write
// through a live node fails, and everything written reads back through
// every node at the end.
func TestRollingRestart(t *testing.T) {
	nightlyOnly(t, "TestRollingRestartUnderLoad (a rolling restart under load, read back through every node) and TestClusterRollingExpansion")
	c := startCluster(t, 4, 4)
	if _, err := c.client(0).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("rolling")}); err != nil {
		t.Fatal(err)
	}
	written := map[string][]byte{}
	for victim := range c.nodes {
		var mu sync.Mutex
		var failures []error
		stop := writers(1, func(_, k int) bool {
			if k == 60 {
				return false // enough for this round: the checks below read them all
			}
			time.Sleep(100 * time.Millisecond) // a steady trickle across the restart
			via := (victim + 1 + k%3) % 4      // never the node being restarted
			key := fmt.Sprintf("v%d/%d", victim, k)
			body := randBytes(32<<10 + k%4/3*(2<<20))
			err := put(t, c.client(via), "rolling", key, body)
			mu.Lock()
			if err != nil {
				failures = append(failures, fmt.Errorf("PUT %s via node %d: %w", key, via+1, err))
			} else {
				written[key] = body
			}
			mu.Unlock()
			return true
		})
		time.Sleep(500 * time.Millisecond)
		n := c.nodes[victim]
		_ = n.cmd.Process.Signal(syscall.SIGTERM)
		<-n.exited
		// With the node stopped, what was written in earlier rounds reads
		// through the others: it was healed onto the nodes restarted
		// before, so it has all its shards but this node's.
		mu.Lock()
		earlier := map[string][]byte{}
		for key, body := range written {
			if !strings.HasPrefix(key, fmt.Sprintf("v%d/", victim)) {
				earlier[key] = body
			}
		}
		mu.Unlock()
		for key, body := range earlier {
			mustGet(t, c.client((victim+1)%4), "rolling", key, body, fmt.Sprintf("node %d while node %d restarts", (victim+1)%4+1, victim+1))
		}
		c.restart(victim)
		stop()
		for _, err := range failures {
			t.Errorf("restart of node %d: %v", victim+1, err)
		}
		c.waitAllOnline()
		c.waitHealQueuesEmpty()
	}
	for i := range c.nodes {
		for key, body := range written {
			mustGet(t, c.client(i), "rolling", key, body, fmt.Sprintf("node %d after the rolling restart", i+1))
		}
	}
	t.Logf("%d objects written during the rolling restart", len(written))
}
