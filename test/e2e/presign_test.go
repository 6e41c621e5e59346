package e2e

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/shardstore/shardstore/internal/auth"
)

// Presigners (botocore in particular) move Content-MD5, Content-Type and
// x-amz-* headers into the signed query string. The server must apply
// them as if sent as headers: metadata stored, Content-MD5 verified.
func TestPresignedQueryHeaders(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "presigned")
	id := auth.Identity{AccessKey: rootUser, SecretKey: rootPass}
	body := []byte("presigned body")
	sum := md5.Sum(body)

	put := func(md5b64 string) *http.Response {
		u, _ := url.Parse(s.endpoint + "/presigned/obj")
		q := u.Query()
		q.Set("x-amz-meta-color", "blue")
		q.Set("Content-Type", "text/x-presigned")
		q.Set("Content-MD5", md5b64)
		u.RawQuery = q.Encode()
		req, _ := http.NewRequest(http.MethodPut, u.String(), nil)
		signed := auth.PresignURL(req, id, "us-east-1", time.Now(), 5*time.Minute)
		pr, _ := http.NewRequest(http.MethodPut, signed, bytes.NewReader(body))
		resp, err := http.DefaultClient.Do(pr)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := put(base64.StdEncoding.EncodeToString(make([]byte, 16))); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a wrong Content-MD5 in the signed query was not verified: status %d", resp.StatusCode)
	}
	if resp := put(base64.StdEncoding.EncodeToString(sum[:])); resp.StatusCode != http.StatusOK {
		t.Fatalf("presigned PUT: status %d", resp.StatusCode)
	}
	head, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String("presigned"), Key: aws.String("obj")})
	if err != nil {
		t.Fatal(err)
	}
	if head.Metadata["color"] != "blue" || aws.ToString(head.ContentType) != "text/x-presigned" {
		t.Fatalf("query headers not applied: metadata %v, content type %q", head.Metadata, aws.ToString(head.ContentType))
	}
}
