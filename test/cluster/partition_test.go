package cluster

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// probe is an S3 client of node i that makes one attempt per request:
// for requests the test expects to fail, whose answer the SDK's retries
// would only delay.
func (c *testCluster) probe(i int) *s3.Client {
	return c.client(i, func(o *s3.Options) { o.RetryMaxAttempts = 1 })
}

// TestPartition splits the network between the nodes (a proxy on every
// link drops the traffic, so calls hang rather than fail): first the
// consensus leader alone against the other three, then two against two.
// The majority side keeps serving writes and bucket changes; the
// minority, and both halves of an even split, refuse writes with an
// error rather than hanging; after the split heals every node agrees on
// the state and every acknowledged object reads back through every node.
func TestPartition(t *testing.T) {
	nightlyOnly(t, "test/jepsen TestSlice (the leader isolated and two-against-two halves, with a kill, every history checked for linearizability and lost writes)")
	c := startFaultCluster(t, 4, 4, "--drive-timeout", "3s")
	const bucket = "split"
	if _, err := c.client(0).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	before := randBytes(300 << 10)
	if err := put(t, c.client(0), bucket, "before", before); err != nil {
		t.Fatal(err)
	}

	// The leader alone on one side.
	victim := c.leader(0, 1, 2, 3)
	var majority []int
	for i := range c.nodes {
		if i != victim {
			majority = append(majority, i)
		}
	}
	w := startWrites(t, c, bucket, "", func(w, k int) int { return majority[(w+k)%3] })
	time.Sleep(time.Second)
	c.net.partition(victim)
	w.measure(true)
	cut := time.Now()
	t.Logf("%s: node %d cut off from the others", cut.Format(time.TimeOnly), victim+1)

	// A bucket change through the majority: it elects a new leader.
	if _, err := c.client(majority[0]).PutBucketTagging(ctx(t), &s3.PutBucketTaggingInput{Bucket: aws.String(bucket),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("during"), Value: aws.String("split")}}}}); err != nil {
		t.Fatalf("bucket change through the majority side: %v", err)
	}
	t.Logf("bucket change through the majority done %v after the split", time.Since(cut).Round(time.Millisecond))
	// The minority refuses a write with an error (after its lock wait),
	// and cannot serve a read: it reaches 4 of the 16 drives.
	start := time.Now()
	err := put(t, c.probe(victim), bucket, "minority", []byte("must not be acknowledged"))
	t.Logf("PUT through the cut-off node: %v after %v", errCode(err), time.Since(start).Round(time.Millisecond))
	if err == nil {
		t.Fatalf("the cut-off node %d acknowledged a write", victim+1)
	}
	if _, err := get(t, c.probe(victim), bucket, "before"); err == nil {
		t.Fatalf("the cut-off node %d served a read from 4 of 16 drives", victim+1)
	}
	if time.Since(cut) < 12*time.Second {
		time.Sleep(12*time.Second - time.Since(cut)) // past the lock lease
	}
	w.measure(false)
	c.net.heal()
	t.Logf("%s: split healed", time.Now().Format(time.TimeOnly))
	n, median, slowest, fails := w.summary()
	t.Logf("minority split of node %d: %d PUTs acknowledged through the majority (median %v, slowest %v), %d failed",
		victim+1, n, median.Round(time.Millisecond), slowest.Round(time.Millisecond), fails)
	if n == 0 {
		t.Fatal("no PUT through the majority side was acknowledged during the split")
	}
	// The healed node catches up: it has the change and serves writes.
	waitFor(t, "a PUT through the healed node", func() bool {
		return put(t, c.client(victim), bucket, "after-heal", []byte("back")) == nil
	})
	tags, err := c.client(victim).GetBucketTagging(ctx(t), &s3.GetBucketTaggingInput{Bucket: aws.String(bucket)})
	if err != nil || len(tags.TagSet) != 1 || aws.ToString(tags.TagSet[0].Value) != "split" {
		t.Fatalf("healed node: tags %+v (%v)", tags, err)
	}
	w.stop()
	if _, err := get(t, c.client(0), bucket, "minority"); errCode(err) != "NoSuchKey" {
		t.Fatalf("the write refused by the cut-off node: %v, want NoSuchKey", err)
	}

	// Two against two: neither side has a majority of nodes or a write
	// quorum of drives.
	c.waitAllOnline()
	c.net.partition(0, 1)
	for _, i := range []int{0, 2} {
		start := time.Now()
		err := put(t, c.probe(i), bucket, fmt.Sprintf("even-%d", i), []byte("must not be acknowledged"))
		t.Logf("PUT through node %d in an even split: %v after %v", i+1, errCode(err), time.Since(start).Round(time.Millisecond))
		if err == nil {
			t.Fatalf("node %d acknowledged a write in a 2/2 split", i+1)
		}
	}
	c.net.heal()
	c.waitAllOnline()
	waitFor(t, "a PUT after the even split healed", func() bool {
		return put(t, c.client(2), bucket, "after-even", []byte("whole again")) == nil
	})
	c.heal(0)
	c.waitHealQueuesEmpty()
	mustGet(t, c.client(3), bucket, "before", before, "node 4 after both splits")
	w.checkAll(t, c, bucket, "after both splits")
	for i := range c.nodes {
		for _, key := range []string{"even-0", "even-2"} {
			if _, err := get(t, c.client(i), bucket, key); errCode(err) != "NoSuchKey" {
				t.Fatalf("%s via node %d: %v, want NoSuchKey", key, i+1, err)
			}
		}
	}
}

// TestSlowNode adds latency to every link of one node (each way, so a
// round trip to it costs twice that): writes through the other nodes go
// on at their pace instead of the slow node's, every acknowledged object
// reads back through every node, and healing brings the slow node's
// drives up to date.
func TestSlowNode(t *testing.T) {
	c := startFaultCluster(t, 4, 4)
	const bucket = "slow"
	if _, err := c.client(0).CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	// Past lagAfter (1 s) for a round trip, so the engine learns that the
	// node lags; a node slower by less is waited for, which keeps every
	// object on all its drives.
	const slow, delay = 3, 700 * time.Millisecond
	big := randBytes(3<<20 + 12345) // not inline: streamed from the drives in 1 MiB blocks
	if err := put(t, c.client(0), bucket, "big", big); err != nil {
		t.Fatal(err)
	}
	w := startWrites(t, c, bucket, "fast/", func(w, k int) int { return (w + k) % 3 })
	w.measure(true)
	time.Sleep(4 * time.Second)
	w.measure(false)
	w.stop()
	n, median, slowest, fails := w.summary()
	t.Logf("all nodes fast: %d PUTs, median %v, slowest %v, %d failed", n, median.Round(time.Millisecond), slowest.Round(time.Millisecond), fails)

	w2 := startWrites(t, c, bucket, "slow/", func(w, k int) int { return (w + k) % 3 })
	c.net.slow(slow, delay)
	w2.measure(true)
	time.Sleep(10 * time.Second)
	w2.measure(false)
	fastMedian := median
	n, median, slowest, fails = w2.summary()
	t.Logf("node %d slowed by %v each way: %d PUTs through the others, median %v, slowest %v, %d failed",
		slow+1, delay, n, median.Round(time.Millisecond), slowest.Round(time.Millisecond), fails)
	w2.stop()
	if fails > 0 {
		t.Errorf("%d PUTs through the other nodes failed while node %d was slow", fails, slow+1)
	}
	// Waiting for the slow node's drives would cost several round trips
	// to it per PUT (record read, open, close, commit, settle); less than
	// one is the bound.
	if median > fastMedian+2*delay {
		t.Errorf("PUTs through the other nodes took %v (median) with node %d slow, %v without: they wait for it", median, slow+1, fastMedian)
	}
	// Reads through the others while it is still slow.
	var reads []time.Duration
	w2.mu.Lock()
	for key, body := range w2.acked {
		if len(reads) == 20 {
			break
		}
		start := time.Now()
		mustGet(t, c.client(len(reads)%3), bucket, key, body, "a fast node while one is slow")
		reads = append(reads, time.Since(start))
	}
	w2.mu.Unlock()
	slices.Sort(reads)
	t.Logf("GETs through the others while node %d is slow: median %v, slowest %v", slow+1, reads[len(reads)/2].Round(time.Millisecond), reads[len(reads)-1].Round(time.Millisecond))
	// A streamed object: the record read leaves the slow node's drives
	// behind (known to lag after the writes), so their shards count as
	// missing and are rebuilt from parity rather than waited for.
	start := time.Now()
	mustGet(t, c.client(0), bucket, "big", big, "a fast node while one is slow")
	took := time.Since(start)
	t.Logf("GET of a %d-byte object through node 1 while node %d is slow: %v", len(big), slow+1, took.Round(time.Millisecond))
	if took > 2*delay {
		t.Errorf("GET of a streamed object took %v with node %d slow: it waits for the slow node's shards", took, slow+1)
	}
	c.net.heal()
	c.heal(0)
	c.waitHealQueuesEmpty()
	w.checkAll(t, c, bucket, "after the slow node")
	w2.checkAll(t, c, bucket, "after the slow node")
}
