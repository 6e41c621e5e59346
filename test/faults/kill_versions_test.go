package faults

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

const versionedBucket = "killversions"

// ackedVersion is a version (or delete marker) the server acknowledged.
type ackedVersion struct {
	key, id string
	hash    string // "" for a delete marker
}

// TestKillVersioned kills the server at random moments while clients
// write new versions of a few keys and make delete markers in a bucket
// with versioning enabled. Versions are immutable, so the check is
// exact: after every restart each acknowledged version id reads back
// byte-identical by its id (a delete marker answers 405 by its id), and
// ListObjectVersions lists every one of them, each key's newest first.
func TestKillVersioned(t *testing.T) {
	rounds := killRounds(t, 12, 4)
	seed := killSeed()
	t.Logf("seed %d (SHARDSTORE_KILL_SEED to replay), %d rounds", seed, rounds)
	rnd := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	drives := filepath.Join(root, "d{1...16}")
	p := start(t, drives)
	c := client(p.endpoint)
	bg := context.Background()
	if _, err := c.CreateBucket(bg, &s3.CreateBucketInput{Bucket: aws.String(versionedBucket)}); err != nil {
		p.kill()
		t.Fatal(err)
	}
	if _, err := c.PutBucketVersioning(bg, &s3.PutBucketVersioningInput{Bucket: aws.String(versionedBucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		p.kill()
		t.Fatal(err)
	}
	var mu sync.Mutex
	var acked []ackedVersion
	data := map[string][]byte{}
	var up atomic.Bool
	worker := func(ctx context.Context, c *s3.Client, rnd *rand.Rand) {
		for ctx.Err() == nil && up.Load() {
			key := fmt.Sprintf("k%d", rnd.Intn(6))
			if rnd.Intn(5) == 0 {
				out, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(versionedBucket), Key: aws.String(key)})
				if err == nil {
					mu.Lock()
					acked = append(acked, ackedVersion{key: key, id: aws.ToString(out.VersionId)})
					mu.Unlock()
				}
				continue
			}
			body := make([]byte, []int{100, 5000, 70000}[rnd.Intn(3)])
			rnd.Read(body)
			out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(versionedBucket), Key: aws.String(key), Body: bytes.NewReader(body)})
			if err == nil {
				h := hashOf(body)
				mu.Lock()
				acked = append(acked, ackedVersion{key: key, id: aws.ToString(out.VersionId), hash: h})
				data[h] = body
				mu.Unlock()
			}
		}
	}
	check := func(round int, c *s3.Client) {
		mu.Lock()
		defer mu.Unlock()
		listed := map[string]bool{}
		pg := s3.NewListObjectVersionsPaginator(c, &s3.ListObjectVersionsInput{Bucket: aws.String(versionedBucket), MaxKeys: aws.Int32(7)})
		for pg.HasMorePages() {
			out, err := pg.NextPage(bg)
			if err != nil {
				t.Errorf("round %d: ListObjectVersions: %v", round, err)
				return
			}
			for _, v := range out.Versions {
				listed[aws.ToString(v.Key)+"@"+aws.ToString(v.VersionId)] = true
			}
			for _, d := range out.DeleteMarkers {
				listed[aws.ToString(d.Key)+"@"+aws.ToString(d.VersionId)] = true
			}
		}
		for _, a := range acked {
			if a.id == "" {
				t.Errorf("round %d: %s acknowledged without a version id", round, a.key)
				continue
			}
			if !listed[a.key+"@"+a.id] {
				kind := "version"
				if a.hash == "" {
					kind = "delete marker"
				}
				_, herr := c.HeadObject(bg, &s3.HeadObjectInput{Bucket: aws.String(versionedBucket), Key: aws.String(a.key), VersionId: aws.String(a.id)})
				t.Errorf("round %d: acknowledged %s %s@%s not listed (HEAD by its id: %v)", round, kind, a.key, a.id, herr)
			}
			out, err := c.GetObject(bg, &s3.GetObjectInput{Bucket: aws.String(versionedBucket), Key: aws.String(a.key), VersionId: aws.String(a.id)})
			if a.hash == "" {
				if err == nil {
					out.Body.Close()
					t.Errorf("round %d: delete marker %s@%s reads as an object", round, a.key, a.id)
				}
				continue
			}
			if err != nil {
				t.Errorf("round %d: acknowledged version %s@%s: %v", round, a.key, a.id, err)
				continue
			}
			got, err := io.ReadAll(out.Body)
			out.Body.Close()
			if err != nil || hashOf(got) != a.hash {
				t.Errorf("round %d: version %s@%s reads back wrong (%v)", round, a.key, a.id, err)
			}
		}
	}
	for round := 1; round <= rounds; round++ {
		ctx, cancel := context.WithCancel(bg)
		var wg sync.WaitGroup
		up.Store(true)
		for w := 0; w < 4; w++ {
			wg.Add(1)
			wr := rand.New(rand.NewSource(rnd.Int63()))
			go func() { defer wg.Done(); worker(ctx, c, wr) }()
		}
		time.Sleep(time.Duration(100+rnd.Intn(400)) * time.Millisecond)
		p.cmd.Process.Signal(syscall.SIGKILL)
		up.Store(false)
		<-p.exited
		cancel()
		wg.Wait()
		p = start(t, drives)
		c = client(p.endpoint)
		check(round, c)
		if t.Failed() {
			t.Logf("server log:\n%s", p.log())
			p.kill()
			return
		}
	}
	out, err := adminHeal(p.endpoint)
	if err != nil {
		p.kill()
		t.Fatalf("admin heal --deep: %v\n%s", err, out)
	}
	check(rounds+1, c)
	p.stop(t)
	mu.Lock()
	t.Logf("%d kills, %d acknowledged versions and delete markers, all readable", rounds, len(acked))
	mu.Unlock()
}
