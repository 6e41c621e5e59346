package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestBucketNotificationsGoSDK: aws-sdk-go-v2 configures a bucket's
// notifications to a webhook target given by MinIO's variables (or by a
// --notify-config file in the format of `mc admin config export`, with
// a variable overriding one of its settings), and the receiver (a real
// HTTP server) gets the S3 event messages; an unknown ARN is refused
// with InvalidArgument.
func TestBucketNotificationsGoSDK(t *testing.T) {
	singleNodeOnly(t, "the server's environment is set per process here")
	t.Run("variables", func(t *testing.T) {
		bucketNotificationsGoSDK(t, func(dir, url string) ([]string, []string) {
			return []string{"MINIO_NOTIFY_WEBHOOK_ENABLE_GO=on", "MINIO_NOTIFY_WEBHOOK_ENDPOINT_GO=" + url,
				"SHARDSTORE_NOTIFY_WEBHOOK_AUTH_TOKEN_GO=go-token"}, nil
		})
	})
	t.Run("config file", func(t *testing.T) {
		bucketNotificationsGoSDK(t, func(dir, url string) ([]string, []string) {
			file := filepath.Join(dir, "notify.conf")
			conf := "# from mc admin config export\napi requests_max=0\n" +
				"notify_webhook enable=off endpoint= auth_token=\n" +
				"notify_webhook:GO endpoint=\"" + url + "\" auth_token=\"wrong token\" queue_limit=\"1000\"\n"
			if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
				t.Fatal(err)
			}
			// The variable names the same target: it replaces the file's.
			return []string{"MINIO_NOTIFY_WEBHOOK_ENABLE_GO=on", "MINIO_NOTIFY_WEBHOOK_ENDPOINT_GO=" + url,
				"MINIO_NOTIFY_WEBHOOK_AUTH_TOKEN_GO=go-token"}, []string{"--notify-config", file}
		})
	})
	t.Run("config file alone", func(t *testing.T) {
		bucketNotificationsGoSDK(t, func(dir, url string) ([]string, []string) {
			file := filepath.Join(dir, "notify.conf")
			conf := "notify_webhook:GO endpoint=\"" + url + "\" auth_token=\"go-token\"\n"
			if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{"SHARDSTORE_NOTIFY_CONFIG=" + file}, nil
		})
	})
}

func bucketNotificationsGoSDK(t *testing.T, configure func(dir, url string) (env, args []string)) {
	var mu sync.Mutex
	var got []map[string]any
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev map[string]any
		if json.Unmarshal(b, &ev) == nil && r.Header.Get("Authorization") == "Bearer go-token" {
			mu.Lock()
			got = append(got, ev)
			mu.Unlock()
		}
	}))
	defer recv.Close()
	dir := t.TempDir()
	extraEnv, extraArgs := configure(dir, recv.URL)
	env := append(serverEnv(), extraEnv...)
	s := launch(t, dir, env, append(append([]string{"server", "--console-address", "", "--address", "127.0.0.1:0"}, extraArgs...),
		filepath.Join(dir, "drive")+"{1...4}"))
	c := s.root()
	ctx := context.Background()
	bucket := "notify-go"
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	_, err := c.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{Bucket: aws.String(bucket),
		NotificationConfiguration: &types.NotificationConfiguration{QueueConfigurations: []types.QueueConfiguration{{
			QueueArn: aws.String("arn:minio:sqs::NOPE:webhook"), Events: []types.Event{"s3:ObjectCreated:*"}}}}})
	if code, status := errCode(err); code != "InvalidArgument" || status != 400 {
		t.Fatalf("unknown ARN: %v", err)
	}
	_, err = c.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{Bucket: aws.String(bucket),
		NotificationConfiguration: &types.NotificationConfiguration{QueueConfigurations: []types.QueueConfiguration{{
			Id: aws.String("go"), QueueArn: aws.String("arn:minio:sqs::GO:webhook"),
			Events: []types.Event{"s3:ObjectCreated:*", "s3:ObjectRemoved:*"},
			Filter: &types.NotificationConfigurationFilter{Key: &types.S3KeyFilter{FilterRules: []types.FilterRule{
				{Name: types.FilterRuleNamePrefix, Value: aws.String("in/")}}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.GetBucketNotificationConfiguration(ctx, &s3.GetBucketNotificationConfigurationInput{Bucket: aws.String(bucket)})
	if err != nil || len(out.QueueConfigurations) != 1 || aws.ToString(out.QueueConfigurations[0].Id) != "go" ||
		len(out.QueueConfigurations[0].Filter.Key.FilterRules) != 1 {
		t.Fatalf("read back: %+v %v", out, err)
	}
	for _, k := range []string{"in/a b.txt", "out/x"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k), Body: strings.NewReader("hello")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("in/a b.txt")}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // out/x must not come
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("%d events: %v", len(got), got)
	}
	for i, want := range []string{"s3:ObjectCreated:Put", "s3:ObjectRemoved:Delete"} {
		if got[i]["EventName"] != want || got[i]["Key"] != bucket+"/in/a b.txt" {
			t.Fatalf("event %d: %v", i, got[i])
		}
	}
	rec := got[0]["Records"].([]any)[0].(map[string]any)
	obj := rec["s3"].(map[string]any)["object"].(map[string]any)
	if k, _ := url.QueryUnescape(obj["key"].(string)); k != "in/a b.txt" || obj["size"].(float64) != 5 || rec["eventName"] != "ObjectCreated:Put" {
		t.Fatalf("record: %v", rec)
	}
}
