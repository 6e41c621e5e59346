package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// orderEvent is what TestBucketNotificationsOrderOfConcurrentWrites
// reads of an event.
type orderEvent struct{ key, name, version, sequencer, etag string }

// TestBucketNotificationsOrderOfConcurrentWrites: concurrent overwrites
// of one key each send an event to a webhook (a real HTTP receiver);
// a key's events arrive in the order the writes took effect, with
// increasing sequencers. In a versioned bucket (PUTs and copies onto
// the key) their versionIds come in the order ListObjectVersions gives
// the versions (newest first, so reversed); in an unversioned one the
// last event after each round of PUTs is the stored object's (its
// ETag), and has the highest sequencer, as consumers that keep the
// highest sequencer of a key expect. Concurrent deletes (delete
// markers) beside PUTs: the last event is of the current version.
func TestBucketNotificationsOrderOfConcurrentWrites(t *testing.T) {
	singleNodeOnly(t, "the server's environment is set per process here")
	var mu sync.Mutex
	var events []orderEvent
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev struct {
			EventName, Key string
			Records        []struct {
				S3 struct {
					Object struct {
						VersionID string `json:"versionId"`
						Sequencer string `json:"sequencer"`
						ETag      string `json:"eTag"`
					} `json:"object"`
				} `json:"s3"`
			}
		}
		if err := json.Unmarshal(b, &ev); err != nil || len(ev.Records) != 1 {
			http.Error(w, "bad record", http.StatusBadRequest)
			return
		}
		o := ev.Records[0].S3.Object
		mu.Lock()
		events = append(events, orderEvent{ev.Key, ev.EventName, o.VersionID, o.Sequencer, o.ETag})
		mu.Unlock()
	}))
	defer recv.Close()
	// of returns the events of bucket/key so far, once at least n came.
	of := func(t *testing.T, bk string, n int) []orderEvent {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			mu.Lock()
			var out []orderEvent
			for _, e := range events {
				if e.key == bk {
					out = append(out, e)
				}
			}
			mu.Unlock()
			if len(out) >= n || time.Now().After(deadline) {
				if len(out) != n {
					t.Fatalf("%d events of %s arrived, want %d", len(out), bk, n)
				}
				return out
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	checkSequencers := func(t *testing.T, evs []orderEvent) {
		t.Helper()
		for i := 1; i < len(evs); i++ {
			if evs[i].sequencer <= evs[i-1].sequencer {
				t.Errorf("event %d (%s %s): sequencer %s not after the previous event's %s", i, evs[i].name,
					evs[i].version+evs[i].etag, evs[i].sequencer, evs[i-1].sequencer)
			}
		}
	}
	dir := t.TempDir()
	env := append(serverEnv(), "MINIO_NOTIFY_WEBHOOK_ENABLE_ORD=on", "MINIO_NOTIFY_WEBHOOK_ENDPOINT_ORD="+recv.URL)
	s := launch(t, dir, env, []string{"server", "--console-address", "", "--address", "127.0.0.1:0", filepath.Join(dir, "drive") + "{1...4}"})
	c := s.root()
	ctx := context.Background()
	const key, rounds, writers = "hot/key", 12, 8
	setup := func(t *testing.T, bucket string, versioned bool) {
		t.Helper()
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
			t.Fatal(err)
		}
		if versioned {
			if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
				VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("src"), Body: strings.NewReader("source")}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{Bucket: aws.String(bucket),
			NotificationConfiguration: &types.NotificationConfiguration{QueueConfigurations: []types.QueueConfiguration{{
				QueueArn: aws.String("arn:minio:sqs::ORD:webhook"),
				Events:   []types.Event{"s3:ObjectCreated:*"},
				Filter: &types.NotificationConfigurationFilter{Key: &types.S3KeyFilter{FilterRules: []types.FilterRule{
					{Name: types.FilterRuleNamePrefix, Value: aws.String("hot/")}}}}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	// round makes writers concurrent writes of key (writer 1 a copy
	// when copies is set, the others PUTs of distinct bodies).
	round := func(t *testing.T, bucket string, r int, copies bool) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				if copies && w == 1 {
					_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
						CopySource: aws.String(bucket + "/src")})
				} else {
					_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
						Body: strings.NewReader(fmt.Sprintf("round %d writer %d", r, w))})
				}
				errs[w] = err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}

	t.Run("versioned", func(t *testing.T) {
		bucket := "notify-order-v"
		setup(t, bucket, true)
		for r := range rounds {
			round(t, bucket, r, true)
		}
		out, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToBool(out.IsTruncated) {
			t.Fatal("listing truncated: more versions than the test makes")
		}
		var want []string
		for _, v := range slices.Backward(out.Versions) {
			want = append(want, aws.ToString(v.VersionId))
		}
		if len(want) != rounds*writers {
			t.Fatalf("%d versions stored, want %d", len(want), rounds*writers)
		}
		evs := of(t, bucket+"/"+key, len(want))
		checkSequencers(t, evs)
		for i := range want {
			if evs[i].version != want[i] {
				var got []string
				for _, e := range evs[i:min(i+6, len(evs))] {
					got = append(got, e.version)
				}
				t.Fatalf("events' versionIds differ from the stored order from position %d on:\n got %v\nwant %v", i, got, want[i:min(i+6, len(want))])
			}
		}
	})

	t.Run("unversioned", func(t *testing.T) {
		bucket := "notify-order-u"
		setup(t, bucket, false)
		for r := range rounds {
			round(t, bucket, r, false)
			evs := of(t, bucket+"/"+key, (r+1)*writers)
			head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
			if err != nil {
				t.Fatal(err)
			}
			stored := strings.Trim(aws.ToString(head.ETag), `"`)
			if last := evs[len(evs)-1]; last.etag != stored {
				t.Fatalf("round %d: the last event is of ETag %s, the stored object's is %s", r, last.etag, stored)
			}
			top := slices.MaxFunc(evs, func(a, b orderEvent) int { return strings.Compare(a.sequencer, b.sequencer) })
			if top.etag != stored {
				t.Fatalf("round %d: the highest sequencer's event is of ETag %s, the stored object's is %s", r, top.etag, stored)
			}
			checkSequencers(t, evs)
		}
	})

	// Deletes beside the writes: a delete's event is queued under the
	// key's lock as the delete commits too (DeleteOptions.Committed), so
	// after each round of concurrent PUTs and DELETEs (delete markers, in
	// a versioned bucket: each takes effect, so the count is exact) the
	// last event is of the key's current version, marker or object, and
	// the sequencers grow in the order the requests took effect.
	t.Run("puts and deletes", func(t *testing.T) {
		bucket := "notify-order-d"
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
			VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{Bucket: aws.String(bucket),
			NotificationConfiguration: &types.NotificationConfiguration{QueueConfigurations: []types.QueueConfiguration{{
				QueueArn: aws.String("arn:minio:sqs::ORD:webhook"),
				Events:   []types.Event{"s3:ObjectCreated:*", "s3:ObjectRemoved:*"}}}}}); err != nil {
			t.Fatal(err)
		}
		for r := range rounds {
			var wg sync.WaitGroup
			errs := make([]error, writers)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if w%3 == 0 {
						_, errs[w] = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
						return
					}
					_, errs[w] = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
						Body: strings.NewReader(fmt.Sprintf("round %d writer %d", r, w))})
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			evs := of(t, bucket+"/"+key, (r+1)*writers)
			out, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String(key)})
			if err != nil {
				t.Fatal(err)
			}
			cur, marker := "", false
			for _, v := range out.Versions {
				if aws.ToBool(v.IsLatest) {
					cur = aws.ToString(v.VersionId)
				}
			}
			for _, m := range out.DeleteMarkers {
				if aws.ToBool(m.IsLatest) {
					cur, marker = aws.ToString(m.VersionId), true
				}
			}
			last := evs[len(evs)-1]
			wantName := "s3:ObjectCreated:Put"
			if marker {
				wantName = "s3:ObjectRemoved:DeleteMarkerCreated"
			}
			if last.version != cur || last.name != wantName {
				t.Fatalf("round %d: the last event is %s of version %s; the key's current version is %s (delete marker: %v)",
					r, last.name, last.version, cur, marker)
			}
			checkSequencers(t, evs)
		}
	})
}
