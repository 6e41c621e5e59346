package faults

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

const (
	loggedBucket = "logged"
	targetBucket = "logtarget"
)

// answers records the request id of every response whose headers a
// client received: those requests were answered, so their access log
// records must survive anything that happens to the server afterwards.
type answers struct {
	mu  sync.Mutex
	ids map[string]int
}

func (a *answers) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	// The workers' requests: objects of the logged bucket, and listings.
	worker := strings.HasPrefix(r.URL.Path, "/"+loggedBucket+"/") ||
		(r.URL.Path == "/"+loggedBucket && r.URL.Query().Has("list-type"))
	if err == nil && worker {
		if id := resp.Header.Get("X-Amz-Request-Id"); id != "" {
			a.mu.Lock()
			a.ids[id]++
			a.mu.Unlock()
		}
	}
	return resp, err
}

func (a *answers) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.ids)
}

// TestKillAccessLog kills the server with SIGKILL at random moments
// while clients make requests on a bucket whose server access logging
// is on, in rounds that batch records for an hour (so every record of a
// round is still spooled at the kill) alternating with rounds that
// deliver every few hundred milliseconds (so kills also land while log
// objects are being written and their batches removed). After a last
// start that delivers everything, every answered request is in the
// target bucket's log objects exactly once, and nothing else is.
func TestKillAccessLog(t *testing.T) {
	rounds := killRounds(t, 6, 2)
	seed := killSeed()
	t.Logf("seed %d (SHARDSTORE_KILL_SEED to replay), %d rounds", seed, rounds)
	rnd := rand.New(rand.NewSource(seed))
	drives := filepath.Join(t.TempDir(), "d{1...16}")
	seen := &answers{ids: map[string]int{}}
	bg := context.Background()

	for round := 0; round < rounds; round++ {
		interval := "1h"
		if round%2 == 1 {
			interval = "300ms"
		}
		p := start(t, drives, "--access-log-interval", interval)
		c := logClient(p.endpoint, seen)
		if round == 0 {
			for _, b := range []string{loggedBucket, targetBucket} {
				if _, err := c.CreateBucket(bg, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
					p.kill()
					t.Fatal(err)
				}
			}
			if _, err := c.PutBucketLogging(bg, &s3.PutBucketLoggingInput{Bucket: aws.String(loggedBucket),
				BucketLoggingStatus: &types.BucketLoggingStatus{LoggingEnabled: &types.LoggingEnabled{
					TargetBucket: aws.String(targetBucket), TargetPrefix: aws.String("log/")}}}); err != nil {
				p.kill()
				t.Fatal(err)
			}
		}
		before := seen.count()
		ctx, cancel := context.WithCancel(bg)
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			wr := rand.New(rand.NewSource(rnd.Int63()))
			go func() {
				defer wg.Done()
				logWorker(ctx, c, wr)
			}()
		}
		time.Sleep(time.Duration(300+rnd.Intn(1200)) * time.Millisecond)
		p.kill()
		cancel()
		wg.Wait()
		t.Logf("round %d (interval %s): %d requests answered before the kill", round, interval, seen.count()-before)
	}

	// The last start delivers what the rounds left spooled.
	p := start(t, drives, "--access-log-interval", "200ms")
	defer p.stop(t)
	c := logClient(p.endpoint, &answers{ids: map[string]int{}})
	want := seen.count()
	if want == 0 {
		t.Fatal("no request was answered")
	}
	deadline := time.Now().Add(2 * time.Minute)
	var logged map[string]int
	for {
		var err error
		if logged, err = loggedIDs(bg, c); err != nil {
			t.Fatal(err)
		}
		missing := 0
		for id := range seen.ids {
			if logged[id] == 0 {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d answered requests never appeared in the access log\n%s", missing, want, p.log())
		}
		time.Sleep(300 * time.Millisecond)
	}
	var twice []string
	for id, n := range logged {
		if n > 1 {
			twice = append(twice, id)
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		t.Fatalf("%d requests logged more than once (a replay must overwrite, not duplicate): %v", len(twice), twice[:min(len(twice), 10)])
	}
	// Records the clients never saw answered are those the kills cut after
	// the record was spooled; a handful per round at most.
	extra := len(logged) - want
	t.Logf("%d answered requests all logged once; %d more records of requests cut by the kills", want, extra)
	if extra > rounds*8*4 {
		t.Errorf("%d records of unanswered requests: more than the requests in flight at the kills", extra)
	}
}

func logClient(endpoint string, seen *answers) *s3.Client {
	return s3.New(s3.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(endpoint),
		Credentials:      credentials.NewStaticCredentialsProvider(user, pass, ""),
		UsePathStyle:     true,
		RetryMaxAttempts: 1,
		HTTPClient:       &http.Client{Transport: seen},
	})
}

// logWorker makes small requests of several kinds until ctx ends:
// writes, reads, misses (404) and listings.
func logWorker(ctx context.Context, c *s3.Client, rnd *rand.Rand) {
	for ctx.Err() == nil {
		key := fmt.Sprintf("k/%04d", rnd.Intn(200))
		var err error
		switch rnd.Intn(4) {
		case 0:
			_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(loggedBucket), Key: aws.String(key),
				Body: bytes.NewReader(make([]byte, rnd.Intn(2000)))})
		case 1:
			var out *s3.GetObjectOutput
			if out, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(loggedBucket), Key: aws.String(key)}); err == nil {
				_, _ = io.Copy(io.Discard, out.Body)
				out.Body.Close()
			}
		case 2:
			_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(loggedBucket), Key: aws.String("missing/" + key)})
		default:
			_, err = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(loggedBucket), Prefix: aws.String("k/00")})
		}
		_ = err // answered or not, the transport saw it
	}
}

// loggedIDs reads every log object in the target bucket and counts the
// request ids (the sixth field) of its records.
func loggedIDs(ctx context.Context, c *s3.Client) (map[string]int, error) {
	out := map[string]int{}
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(targetBucket), Prefix: aws.String("log/")})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			r, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(targetBucket), Key: o.Key})
			if err != nil {
				return nil, err
			}
			body, err := io.ReadAll(r.Body)
			r.Body.Close()
			if err != nil {
				return nil, err
			}
			for _, line := range strings.Split(strings.TrimSuffix(string(body), "\n"), "\n") {
				// owner bucket [time] ip requester id ...
				head, rest, ok := strings.Cut(line, "] ")
				h, f := strings.Fields(head), strings.Fields(rest)
				if !ok || len(h) < 2 || h[1] != loggedBucket || len(f) < 3 {
					return nil, fmt.Errorf("log object %s: bad line %q", aws.ToString(o.Key), line)
				}
				out[f[2]]++
			}
		}
	}
	return out, nil
}
