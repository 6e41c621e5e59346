package e2e

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestConditionalDeleteSDK: aws-sdk-go-v2 at default settings sends
// DeleteObject's IfMatch / IfMatchSize and DeleteObjects' per-key ETag;
// a mismatch is 412 PreconditionFailed (a per-key error in the batch)
// and leaves the object, a match deletes it, and a conditional delete of
// a missing key is 404 NoSuchKey (S3 User Guide, conditional deletes).
func TestConditionalDeleteSDK(t *testing.T) {
	s := startServer(t)
	c := s.root()
	const b = "conddelete"
	createBucket(t, c, b)
	put := func(key, body string) string {
		out, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(key), Body: strings.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.ETag)
	}
	etag := put("k", "data")
	_, err := c.DeleteObject(ctx(t), &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k"), IfMatch: aws.String(`"0123"`)})
	wantCode(t, err, "PreconditionFailed", 412)
	_, err = c.DeleteObject(ctx(t), &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k"), IfMatchSize: aws.Int64(5)})
	wantCode(t, err, "PreconditionFailed", 412)
	if _, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k")}); err != nil {
		t.Fatalf("object after refused deletes: %v", err)
	}
	if _, err := c.DeleteObject(ctx(t), &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k"), IfMatch: aws.String(etag), IfMatchSize: aws.Int64(4)}); err != nil {
		t.Fatalf("matching conditional delete: %v", err)
	}
	_, err = c.DeleteObject(ctx(t), &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k"), IfMatch: aws.String("*")})
	wantCode(t, err, "NoSuchKey", 404)

	etag = put("a", "aaa")
	put("b", "bb")
	out, err := c.DeleteObjects(ctx(t), &s3.DeleteObjectsInput{Bucket: aws.String(b), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("a"), ETag: aws.String(`"bad"`)}, {Key: aws.String("b")}}}})
	if err != nil || len(out.Errors) != 1 || aws.ToString(out.Errors[0].Code) != "PreconditionFailed" || len(out.Deleted) != 1 || aws.ToString(out.Deleted[0].Key) != "b" {
		t.Fatalf("DeleteObjects with a wrong ETag: %+v %v", out, err)
	}
	out, err = c.DeleteObjects(ctx(t), &s3.DeleteObjectsInput{Bucket: aws.String(b), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("a"), ETag: aws.String(etag)}}}})
	if err != nil || len(out.Errors) != 0 || len(out.Deleted) != 1 {
		t.Fatalf("DeleteObjects with the ETag: %+v %v", out, err)
	}
	if lo, err := c.ListObjectsV2(ctx(t), &s3.ListObjectsV2Input{Bucket: aws.String(b)}); err != nil || len(lo.Contents) != 0 {
		t.Fatalf("bucket after the deletes: %+v %v", lo, err)
	}
}
