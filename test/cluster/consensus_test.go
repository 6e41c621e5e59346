package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/shardstore/shardstore/internal/admin"
)

// leader returns the index of the node every live node names as the
// consensus leader (waiting for an election).
func (c *testCluster) leader(live ...int) int {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		names := map[string]bool{}
		for _, i := range live {
			st, err := c.status(i)
			if err != nil || st.Consensus == nil {
				names["?"] = true
				continue
			}
			names[st.Consensus.Leader] = true
		}
		if len(names) == 1 {
			for name := range names {
				for i, n := range c.nodes {
					if n.endpoint == name {
						return i
					}
				}
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("nodes %v do not agree on a leader: %v", live, names)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestClusterStateThroughConsensus: bucket records and identities are
// agreed through the Raft group. With the leader killed, the others elect
// one and take bucket and identity changes; the old leader, restarted,
// has them at once (from the group's log, with no change notice: it was
// down when they were sent); a restart of every node keeps them (the log
// is on the drives); and admin status names the leader on every node.
func TestClusterStateThroughConsensus(t *testing.T) {
	c := startCluster(t, 4, 4)
	all := []int{0, 1, 2, 3}
	if _, err := c.client(0).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("before")}); err != nil {
		t.Fatal(err)
	}
	l := c.leader(all...)
	out, err := c.admin((l+1)%4, "status")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Cluster state (Raft): leader " + c.nodes[l].endpoint; !strings.Contains(string(out), want) {
		t.Fatalf("admin status does not say %q:\n%s", want, out)
	}

	c.kill(l)
	var live []int
	for _, i := range all {
		if i != l {
			live = append(live, i)
		}
	}
	other := c.client(live[0])
	if _, err := other.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("during")}); err != nil {
		t.Fatalf("create bucket with the leader down: %v", err)
	}
	if _, err := c.client(live[1]).PutBucketVersioning(ctx(t), &s3.PutBucketVersioningInput{Bucket: aws.String("before"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.client(live[2]).PutBucketTagging(ctx(t), &s3.PutBucketTaggingInput{Bucket: aws.String("during"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("team"), Value: aws.String("storage")}}}}); err != nil {
		t.Fatal(err)
	}
	raw, err := c.admin(live[1], "user", "add", "latecomer", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var user admin.NewUserReply
	if err := json.Unmarshal(raw, &user); err != nil || user.SecretKey == "" {
		t.Fatalf("user add answered %s (%v)", raw, err)
	}
	if l2 := c.leader(live...); l2 == l {
		t.Fatalf("the killed node %d is still named leader", l+1)
	}

	check := func(via int, when string) {
		t.Helper()
		cl := c.client(via)
		if _, err := cl.HeadBucket(ctx(t), &s3.HeadBucketInput{Bucket: aws.String("during")}); err != nil {
			t.Fatalf("%s: node %d does not see bucket 'during': %v", when, via+1, err)
		}
		v, err := cl.GetBucketVersioning(ctx(t), &s3.GetBucketVersioningInput{Bucket: aws.String("before")})
		if err != nil || v.Status != types.BucketVersioningStatusEnabled {
			t.Fatalf("%s: node %d: versioning of 'before' is %q (%v)", when, via+1, v.Status, err)
		}
		tags, err := cl.GetBucketTagging(ctx(t), &s3.GetBucketTaggingInput{Bucket: aws.String("during")})
		if err != nil || len(tags.TagSet) != 1 || aws.ToString(tags.TagSet[0].Value) != "storage" {
			t.Fatalf("%s: node %d: tags of 'during': %+v (%v)", when, via+1, tags, err)
		}
		// The new user is known (refused for lack of a policy, not as
		// an unknown key).
		_, err = c.clientAs(via, user.Name, user.SecretKey).ListBuckets(ctx(t), &s3.ListBucketsInput{})
		if code := errCode(err); code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" {
			t.Fatalf("%s: node %d does not know the user added meanwhile: %v", when, via+1, err)
		}
	}
	c.restart(l)
	check(l, "old leader restarted")

	// Every node stops; all start again from their drives.
	c.stopAll()
	for _, i := range all {
		c.launch(i, c.args)
	}
	for _, i := range all {
		c.waitReady(i)
	}
	for _, i := range all {
		check(i, "after a restart of every node")
	}
	// A delete through one node is seen by every node at once.
	if _, err := c.client(2).DeleteBucket(ctx(t), &s3.DeleteBucketInput{Bucket: aws.String("during")}); err != nil {
		t.Fatal(err)
	}
	for _, i := range all {
		_, err := c.client(i).HeadBucket(ctx(t), &s3.HeadBucketInput{Bucket: aws.String("during")})
		if code := errCode(err); code != "NotFound" && code != "NoSuchBucket" {
			t.Fatalf("node %d after the delete: HeadBucket %v", i+1, err)
		}
	}

	// A node that finds its consensus log on two drives (one came back
	// after the node started a new log elsewhere) refuses to start
	// rather than pick one and maybe roll back.
	c.kill(2)
	src := filepath.Join(c.driveDir(2, 1), ".shardstore.sys", "cluster")
	dst := filepath.Join(c.driveDir(2, 2), ".shardstore.sys", "cluster")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	c.launch(2, c.args)
	select {
	case <-c.nodes[2].exited:
	case <-time.After(60 * time.Second):
		t.Fatal("node 3 started with its consensus log on two drives")
	}
	if msg := c.nodes[2].stderr.String(); !strings.Contains(msg, "consensus log is on more than one drive") {
		t.Fatalf("node 3 stopped without saying why:\n%s", tailLines(msg, 20))
	}
	// Removed from the drive the operator finds stale, the node starts.
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	c.restart(2)
	v, err := c.client(2).GetBucketVersioning(ctx(t), &s3.GetBucketVersioningInput{Bucket: aws.String("before")})
	if err != nil || v.Status != types.BucketVersioningStatusEnabled {
		t.Fatalf("node 3 after the stale log was removed: versioning of 'before' is %q (%v)", v.Status, err)
	}
}

// TestFrozenNode cuts one node off from all others, the consensus leader,
// by freezing its process (SIGSTOP) for longer than the lock lease, then
// lets it go (SIGCONT): a partition of one node that heals, without the
// node knowing it was away. Meanwhile writes and a bucket change go
// through the other nodes (which elect a new leader); writes through the
// frozen node itself were in flight when it stopped. After it resumes,
// it serves again, has the bucket change, and every acknowledged object
// reads back byte-identical through every node.
func TestFrozenNode(t *testing.T) {
	// A frozen node's drives hang rather than fail: writes through the
	// others leave them behind once they lag (1 s), and the drive timeout
	// takes them offline; a short one keeps that well inside the freeze
	// (the default, 15 s, is longer than it).
	c := startCluster(t, 4, 4, "--drive-timeout", "3s")
	if _, err := c.client(0).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("frozen")}); err != nil {
		t.Fatal(err)
	}
	victim := c.leader(0, 1, 2, 3)
	var frozen atomic.Bool
	w := startWrites(t, c, "frozen", "", func(w, k int) int {
		via := (w + k) % 4
		if frozen.Load() && via == victim {
			// A client of the frozen node just hangs (one writer may
			// be stuck there since the freeze).
			via = (via + 1) % 4
		}
		return via
	})
	time.Sleep(1500 * time.Millisecond)
	pid := c.nodes[victim].cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen.Store(true)
	w.measure(true)
	thawed := false
	defer func() {
		if !thawed {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}()
	live := (victim + 1) % 4
	if _, err := c.client(live).PutBucketTagging(ctx(t), &s3.PutBucketTaggingInput{Bucket: aws.String("frozen"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("while"), Value: aws.String("frozen")}}}}); err != nil {
		t.Fatalf("bucket change with the leader frozen: %v", err)
	}
	time.Sleep(12 * time.Second) // past the 10 s lock lease
	w.measure(false)
	frozen.Store(false)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	thawed = true
	time.Sleep(3 * time.Second)
	w.stop()
	ackedFrozen, _, slowest, failedLive := w.summary()
	t.Logf("acknowledged %d PUTs, %d through live nodes while node %d was frozen (%d failed, slowest %v)",
		len(w.acked), ackedFrozen, victim+1, failedLive, slowest.Round(time.Millisecond))
	if ackedFrozen == 0 {
		t.Fatalf("no PUT through a live node was acknowledged while node %d was frozen", victim+1)
	}
	// The resumed node serves writes and has the change made meanwhile.
	waitFor(t, "a PUT through the resumed node", func() bool {
		return put(t, c.client(victim), "frozen", "after-thaw", []byte("back")) == nil
	})
	tags, err := c.client(victim).GetBucketTagging(ctx(t), &s3.GetBucketTaggingInput{Bucket: aws.String("frozen")})
	if err != nil || len(tags.TagSet) != 1 || aws.ToString(tags.TagSet[0].Value) != "frozen" {
		t.Fatalf("resumed node: tags %+v (%v)", tags, err)
	}
	w.checkAll(t, c, "frozen", fmt.Sprintf("after node %d resumed", victim+1))
}
