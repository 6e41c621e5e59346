package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestLifecycle: Put/Get/DeleteBucketLifecycleConfiguration through
// aws-sdk-go-v2 at default settings (it sends the checksum S3 requires),
// S3's validation errors, and x-amz-expiration (the SDK's Expiration
// field) on PUT, HEAD and GET. Expiry itself is proven by the engine
// tests, which move the engine's clock (internal/lifecycle/runner_test.go).
func TestLifecycle(t *testing.T) {
	s := startServer(t)
	c := s.root()
	cx := ctx(t)
	createBucket(t, c, "lcbucket")
	_, err := c.GetBucketLifecycleConfiguration(cx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String("lcbucket")})
	wantCode(t, err, "NoSuchLifecycleConfiguration", 404)
	cfg := &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{
		{ID: aws.String("logs"), Status: types.ExpirationStatusEnabled,
			Filter:     &types.LifecycleRuleFilter{Prefix: aws.String("logs/")},
			Expiration: &types.LifecycleExpiration{Days: aws.Int32(3)}},
		{ID: aws.String("mpu"), Status: types.ExpirationStatusEnabled,
			Filter:                         &types.LifecycleRuleFilter{Prefix: aws.String("")},
			AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(2)}},
		{ID: aws.String("off"), Status: types.ExpirationStatusDisabled,
			Filter: &types.LifecycleRuleFilter{And: &types.LifecycleRuleAndOperator{Prefix: aws.String("keep/"),
				Tags: []types.Tag{{Key: aws.String("a"), Value: aws.String("b")}}, ObjectSizeGreaterThan: aws.Int64(10)}},
			Expiration: &types.LifecycleExpiration{Days: aws.Int32(1)}},
	}}
	if _, err := c.PutBucketLifecycleConfiguration(cx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String("lcbucket"), LifecycleConfiguration: cfg}); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetBucketLifecycleConfiguration(cx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String("lcbucket")})
	if err != nil || len(got.Rules) != 3 || aws.ToString(got.Rules[0].ID) != "logs" || aws.ToInt32(got.Rules[0].Expiration.Days) != 3 ||
		aws.ToString(got.Rules[2].Filter.And.Prefix) != "keep/" || got.Rules[2].Status != types.ExpirationStatusDisabled {
		t.Fatalf("get: %+v %v", got, err)
	}
	_, err = c.PutBucketLifecycleConfiguration(cx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String("lcbucket"),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{{ID: aws.String("x"), Status: types.ExpirationStatusEnabled,
			Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")}, Expiration: &types.LifecycleExpiration{Days: aws.Int32(0)}}}}})
	wantCode(t, err, "InvalidArgument", 400)

	put, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String("lcbucket"), Key: aws.String("logs/a"), Body: strings.NewReader("x")})
	if err != nil {
		t.Fatal(err)
	}
	head, err := c.HeadObject(cx, &s3.HeadObjectInput{Bucket: aws.String("lcbucket"), Key: aws.String("logs/a")})
	if err != nil {
		t.Fatal(err)
	}
	y, m, d := head.LastModified.UTC().AddDate(0, 0, 4).Date()
	want := `expiry-date="` + time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Format(http.TimeFormat) + `", rule-id="logs"`
	if aws.ToString(put.Expiration) != want || aws.ToString(head.Expiration) != want {
		t.Fatalf("x-amz-expiration: put %q head %q, want %q", aws.ToString(put.Expiration), aws.ToString(head.Expiration), want)
	}
	gr, err := c.GetObject(cx, &s3.GetObjectInput{Bucket: aws.String("lcbucket"), Key: aws.String("logs/a")})
	if err != nil {
		t.Fatal(err)
	}
	gr.Body.Close()
	if aws.ToString(gr.Expiration) != want {
		t.Fatalf("GET x-amz-expiration %q", aws.ToString(gr.Expiration))
	}
	other, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String("lcbucket"), Key: aws.String("keep/a"), Body: strings.NewReader("x")})
	if err != nil || other.Expiration != nil {
		t.Fatalf("object no rule expires: %v %v", aws.ToString(other.Expiration), err)
	}
	mp, err := c.CreateMultipartUpload(cx, &s3.CreateMultipartUploadInput{Bucket: aws.String("lcbucket"), Key: aws.String("big")})
	if err != nil || aws.ToString(mp.AbortRuleId) != "mpu" || mp.AbortDate == nil {
		t.Fatalf("create upload: %+v %v", mp, err)
	}
	if _, err := c.DeleteBucketLifecycle(cx, &s3.DeleteBucketLifecycleInput{Bucket: aws.String("lcbucket")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetBucketLifecycleConfiguration(cx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String("lcbucket")})
	wantCode(t, err, "NoSuchLifecycleConfiguration", 404)
}
