package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/shardstore/shardstore/internal/release"
)

// clientLoad keeps writers and readers going through every node of a
// cluster with the SDK's default settings (its standard retryer), as
// applications behind a load balancer do during a rolling restart or
// upgrade: a request the SDK gave up on with a retryable outcome (503,
// or no answer at all: the node is stopped) is sent again to the next
// node, as a load balancer would; any other failure is recorded.
type clientLoad struct {
	loadTally
	acked     map[string][]byte
	keys      []string
	stopFn    func()
	nodeCount int
}

// loadTally is what a client load counts of its requests, under mu.
type loadTally struct {
	mu       sync.Mutex
	ops      int
	retried  map[string]int // outcome the SDK gave up on → count
	failures []string       // requests that failed without a retryable status
}

// try sends one request through node via of clients(), then the next
// ones, until one answers or 40 tries passed: a retryable outcome is
// counted and sent on, any other failure recorded and returned.
func (l *loadTally) try(what string, via int, clients func() []*s3.Client, do func(c *s3.Client) error) error {
	var err error
	for attempt := 0; attempt < 40; attempt++ {
		cs := clients()
		err = do(cs[(via+attempt)%len(cs)])
		l.mu.Lock()
		l.ops++
		l.mu.Unlock()
		if err == nil {
			return nil
		}
		kind, ok := outcome(err)
		l.mu.Lock()
		if !ok {
			l.failures = append(l.failures, fmt.Sprintf("%s via node %d: %v", what, (via+attempt)%len(cs)+1, err))
			l.mu.Unlock()
			return err
		}
		l.retried[kind]++
		l.mu.Unlock()
		time.Sleep(250 * time.Millisecond)
	}
	l.mu.Lock()
	l.failures = append(l.failures, fmt.Sprintf("%s: no node served it in 40 tries: %v", what, err))
	l.mu.Unlock()
	return err
}

// outcome classifies a failed request: retryable with a name, or not.
func outcome(err error) (string, bool) {
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() != 0 { // 0: the request got no answer
		if re.HTTPStatusCode() == 503 {
			msg := ""
			var ae smithy.APIError
			if errors.As(err, &ae) {
				msg, _, _ = strings.Cut(ae.ErrorMessage(), ":")
			}
			return "503 " + msg, true
		}
		return fmt.Sprintf("%d", re.HTTPStatusCode()), false
	}
	// No HTTP answer: the node was stopped or starting to listen (the
	// SDK retried connection errors, or ran out of its retry budget).
	return "no answer (connection)", true
}

// startClientLoad runs 3 writers and 2 readers against clients (one per
// node, reused: the SDK's retry budget is per client).
func startClientLoad(t *testing.T, clients []*s3.Client, bucket, prefix string) *clientLoad {
	l := &clientLoad{loadTally: loadTally{retried: map[string]int{}}, acked: map[string][]byte{}, nodeCount: len(clients)}
	all := func() []*s3.Client { return clients }
	try := func(what string, via int, do func(c *s3.Client) error) error { return l.try(what, via, all, do) }
	ctx := t.Context()
	l.stopFn = writers(5, func(w, k int) bool {
		time.Sleep(50 * time.Millisecond)
		if w < 3 { // writer
			key := fmt.Sprintf("%sw%d/%d", prefix, w, k)
			body := randBytes(8<<10 + k%5/4*(1<<20))
			err := try("PUT "+key, w+k, func(c *s3.Client) error {
				_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
				return err
			})
			if err == nil {
				l.mu.Lock()
				l.acked[key] = body
				l.keys = append(l.keys, key)
				l.mu.Unlock()
			}
			return ctx.Err() == nil
		}
		l.mu.Lock()
		if len(l.keys) == 0 {
			l.mu.Unlock()
			return ctx.Err() == nil
		}
		key := l.keys[rand.IntN(len(l.keys))]
		want := l.acked[key]
		l.mu.Unlock()
		_ = try("GET "+key, w+k, func(c *s3.Client) error {
			out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
			if err != nil {
				return err
			}
			defer out.Body.Close()
			got, err := io.ReadAll(out.Body)
			if err != nil {
				return err // a cut body: retried as no answer
			}
			if !bytes.Equal(got, want) {
				l.mu.Lock()
				l.failures = append(l.failures, fmt.Sprintf("GET %s: %d bytes that are not the %d acknowledged", key, len(got), len(want)))
				l.mu.Unlock()
			}
			return nil
		})
		return ctx.Err() == nil
	})
	return l
}

// stop ends the load and reports what it saw.
func (l *clientLoad) stop(t *testing.T) {
	t.Helper()
	l.stopFn()
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Logf("client load: %d requests, %d objects acknowledged; outcomes the SDK gave up on and the next node served: %v", l.ops, len(l.acked), l.retried)
	for _, f := range l.failures {
		t.Errorf("failed without a retryable status: %s", f)
	}
}

// checkAll reads every acknowledged object through every node.
func (l *clientLoad) checkAll(t *testing.T, c *testCluster, bucket, when string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range c.nodes {
		for key, body := range l.acked {
			mustGet(t, c.client(i), bucket, key, body, fmt.Sprintf("node %d %s", i+1, when))
		}
	}
}

// upgradeStatus reads `admin cluster upgrade-status --json` through node i.
func (c *testCluster) upgradeStatus(i int) (release.UpgradeStatus, error) {
	var st release.UpgradeStatus
	out, err := c.admin(i, "cluster", "upgrade-status", "--json")
	if err == nil {
		err = json.Unmarshal(out, &st)
	}
	return st, err
}

// gate is the status of feature f in st.
func gate(st release.UpgradeStatus, f release.Feature) release.GateStatus {
	for _, g := range st.Gates {
		if g.Feature == f {
			return g
		}
	}
	return release.GateStatus{Feature: f}
}

// stopNode stops node i with SIGTERM (a graceful stop) and waits for it.
func (c *testCluster) stopNode(i int) {
	c.t.Helper()
	n := c.nodes[i]
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(stopWait):
		c.t.Fatalf("node %d did not stop within %v\n%s", i+1, stopWait, n.stderr)
	}
	if n.exitErr != nil {
		c.t.Errorf("node %d did not stop cleanly: %v\n%s", i+1, n.exitErr, tailLines(n.stderr.String(), 30))
	}
}

// TestUpgradeStatus: a cluster of the current release has every feature
// active from its start (the gate round before S3 is served), and
// upgrade-status shows each node's release, protocol and features, and a
// node that is down, through any node.
func TestUpgradeStatus(t *testing.T) {
	c := startCluster(t, 4, 2)
	st, err := c.upgradeStatus(1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Answering != c.nodes[1].endpoint || st.Protocol != release.Protocol || len(st.Nodes) != 4 {
		t.Fatalf("status %+v", st)
	}
	for _, n := range st.Nodes {
		if !n.Up || n.Protocol != release.Protocol || n.Release == "" || strings.Join(n.Features, ",") != strings.Join(release.Supported(), ",") {
			t.Errorf("node %+v", n)
		}
	}
	for _, f := range release.Supported() {
		if g := gate(st, f); !g.Active || g.Since == "" {
			t.Errorf("gate %+v not active in a cluster of one release", g)
		}
	}
	c.stopNode(3)
	st, err = c.upgradeStatus(0)
	if err != nil {
		t.Fatal(err)
	}
	if down := st.Nodes[3]; down.Node != c.nodes[3].endpoint || down.Up || down.Err == "" {
		t.Errorf("stopped node reported %+v", down)
	}
	if g := gate(st, release.EncryptedRecords); !g.Active {
		t.Errorf("a gate went inactive with a node down: %+v", g)
	}
	out, err := c.admin(0, "cluster", "upgrade-status")
	if err != nil || !strings.Contains(string(out), "DOWN") || !strings.Contains(string(out), "active since") {
		t.Errorf("upgrade-status for people: %v\n%s", err, out)
	}
	c.restart(3)
}

// TestRollingRestartUnderLoad: each of 4 nodes is stopped gracefully
// (SIGTERM) and started again in turn, the consensus leader first, while
// writers and readers go through every node, the stopping one included,
// with the SDK's default retries. The leader hands leadership over
// before it stops; no request fails without a retryable status (503, or
// no answer from the stopped node, which the next node serves); every
// acknowledged object reads back through every node at the end.
func TestRollingRestartUnderLoad(t *testing.T) {
	c := startCluster(t, 4, 4)
	const bucket = "rolling-load"
	if _, err := c.client(0).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	var clients []*s3.Client
	for i := range c.nodes {
		clients = append(clients, c.client(i))
	}
	load := startClientLoad(t, clients, bucket, "")
	all := []int{0, 1, 2, 3}
	leader := c.leader(all...)
	order := []int{leader}
	for i := range c.nodes {
		if i != leader {
			order = append(order, i)
		}
	}
	for round, victim := range order {
		time.Sleep(time.Second)
		c.stopNode(victim)
		if round == 0 && !strings.Contains(c.nodes[victim].stderr.String(), "handed consensus leadership to another node (") {
			t.Errorf("the leader (node %d) stopped without handing leadership over:\n%s", victim+1, tailLines(c.nodes[victim].stderr.String(), 20))
		}
		time.Sleep(time.Second)
		c.restart(victim)
		c.waitAllOnline()
		c.waitHealQueuesEmpty()
	}
	time.Sleep(time.Second)
	load.stop(t)
	load.checkAll(t, c, bucket, "after the rolling restart")
}

// SSE headers of an SSE-S3 PUT.
func sseS3(o *s3.PutObjectInput) *s3.PutObjectInput {
	o.ServerSideEncryption = types.ServerSideEncryptionAes256
	return o
}

// previousRelease is the release TestUpgradeFromPreviousRelease upgrades
// from: main just before release stamps and feature gates (77bda1c, the
// commit this branch started from). SHARDSTORE_UPGRADE_FROM names another
// commit (one from before or after 5e12901, encryption at rest, both
// work: a release before stamps reports no feature).
const previousRelease = "77bda1c465d7c422f44b66d45b22cdf47c8e7d87"

// buildRelease builds the server of commit in a git worktree of this
// repository (removed again at the end of the test) and returns the
// binary's path.
func buildRelease(t *testing.T, commit string) string {
	t.Helper()
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("the upgrade test builds an older release with git worktree: not in a git checkout: %v", err)
	}
	root := strings.TrimSpace(string(top))
	dir := filepath.Join(t.TempDir(), "src")
	if out, err := exec.Command("git", "-C", root, "worktree", "add", "--detach", dir, commit).CombinedOutput(); err != nil {
		t.Fatalf("git worktree add %s: %v\n%s", commit, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("git", "-C", root, "worktree", "remove", "--force", dir).Run() })
	bin := filepath.Join(t.TempDir(), "shardstore-"+commit[:min(12, len(commit))])
	// Named by its commit (main.version, the release builds' -X), so
	// upgrade-status shows which nodes still run it: Go embeds no VCS
	// information in a git worktree (.git is a file there) or with
	// -buildvcs=false.
	build := exec.Command("go", "build", "-ldflags", "-X main.version="+commit[:min(12, len(commit))], "-o", bin, "./cmd/shardstore")
	build.Dir = dir
	start := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building release %s: %v\n%s", commit, err, out)
	}
	t.Logf("built release %s in %v", commit, time.Since(start).Round(time.Second))
	return bin
}

// ssePut PUTs an SSE-S3 object through node i and returns the error.
func (c *testCluster) ssePut(t *testing.T, i int, bucket, key string, body []byte) error {
	_, err := c.client(i).PutObject(ctx(t), sseS3(&s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}))
	return err
}

// TestUpgradeFromPreviousRelease (scripts/nightly; SHARDSTORE_UPGRADE_TEST=1):
// builds the previous release (previousRelease, or SHARDSTORE_UPGRADE_FROM)
// with git worktree, starts 4 nodes of it, and upgrades them one at a
// time to the binary under test while clients write and read through
// every node. While releases are mixed, upgrade-status shows both and
// the gates blocked by the old nodes, and an SSE write through an
// upgraded node is refused with 503; once every node is upgraded the
// gates activate and SSE writes are stored. A node of the old release
// started again after that is refused by the others (it waits, saying
// why). No request fails without a retryable status, and every
// acknowledged object reads back through every node.
func TestUpgradeFromPreviousRelease(t *testing.T) {
	if os.Getenv("SHARDSTORE_UPGRADE_TEST") != "1" {
		t.Skip("slow (builds the previous release with git worktree): scripts/nightly runs it with SHARDSTORE_UPGRADE_TEST=1; SHARDSTORE_UPGRADE_FROM picks the commit (default " + previousRelease + ")")
	}
	from := os.Getenv("SHARDSTORE_UPGRADE_FROM")
	if from == "" {
		from = previousRelease
	}
	old := buildRelease(t, from)
	c := startBins(t, 4, 4, false, true, nil, []string{old, old, old, old})
	const bucket = "upgrade"
	if _, err := c.client(0).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	var clients []*s3.Client
	for i := range c.nodes {
		clients = append(clients, c.client(i))
	}
	load := startClientLoad(t, clients, bucket, "")
	for i := range c.nodes {
		time.Sleep(time.Second)
		c.stopNode(i)
		c.bins[i] = "" // the binary under test
		c.restart(i)
		c.waitAllOnline()
		c.waitHealQueuesEmpty()
		if i == len(c.nodes)-1 {
			break
		}
		st, err := c.upgradeStatus(i)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("after upgrading node %d: %+v", i+1, st.Nodes)
		if st.Nodes[i].Protocol != release.Protocol || st.Nodes[len(st.Nodes)-1].Protocol != release.Unstamped ||
			!strings.Contains(st.Nodes[len(st.Nodes)-1].Release, from[:7]) {
			t.Errorf("mixed releases reported as %+v", st.Nodes)
		}
		g := gate(st, release.EncryptedRecords)
		if g.Active || g.Ready || len(g.Blocked) != len(c.nodes)-1-i {
			t.Errorf("with %d old nodes, gate %+v", len(c.nodes)-1-i, g)
		}
		err = c.ssePut(t, i, bucket, fmt.Sprintf("sse-mixed-%d", i), []byte("secret"))
		if err == nil || !strings.Contains(err.Error(), "Server side encryption is not available yet") {
			t.Errorf("SSE PUT through upgraded node %d with old nodes in the cluster: %v", i+1, err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := c.upgradeStatus(1)
		if err == nil && gate(st, release.EncryptedRecords).Active && gate(st, release.StampedCalls).Active {
			out, _ := c.admin(1, "cluster", "upgrade-status")
			t.Logf("after the upgrade:\n%s", out)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gates did not activate after every node was upgraded: %+v %v", st, err)
		}
		time.Sleep(time.Second)
	}
	secret := randBytes(100 << 10)
	if err := c.ssePut(t, 2, bucket, "sse-after", secret); err != nil {
		t.Fatalf("SSE PUT after the upgrade: %v", err)
	}
	mustGet(t, c.client(0), bucket, "sse-after", secret, "node 1 after the upgrade")
	load.stop(t)
	load.checkAll(t, c, bucket, "after the upgrade")

	// A node of the old release cannot rejoin now: the others refuse its
	// calls (426), and it keeps waiting, saying why.
	c.stopNode(3)
	c.bins[3] = old
	c.launch(3, c.args)
	n := c.nodes[3]
	deadline = time.Now().Add(60 * time.Second)
	for !strings.Contains(n.stderr.String(), "lacks feature") {
		select {
		case <-n.exited:
			t.Fatalf("the old node exited instead of waiting: %v\n%s", n.exitErr, n.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the old node was not refused:\n%s", tailLines(n.stderr.String(), 20))
		}
		time.Sleep(500 * time.Millisecond)
	}
	_ = n.cmd.Process.Kill()
	<-n.exited
	c.bins[3] = ""
	c.restart(3)
}
