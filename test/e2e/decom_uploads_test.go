package e2e

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestPoolsDecommissionMovesUploads starts a multipart upload on a
// single node's only pool with the Go SDK, expands the node with a
// second pool, uploads a part, starts decommissioning pool 1, uploads
// parts while it drains and after it is complete (the upload moved with
// its parts to pool 2), completes the upload, and reads the object back
// byte-identical: after the decommission, and again once the server
// runs without pool 1.
func TestPoolsDecommissionMovesUploads(t *testing.T) {
	singleNodeOnly(t, "it starts its own single-node server with two pools")
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a")+"{1...4}", filepath.Join(dir, "b")+"{1...4}"
	s := poolServer(t, dir, a)
	c := s.root()
	createBucket(t, c, "uploads")
	const partSize = 5 << 20
	body := pattern(4*partSize+12345, 9)
	partOf := func(n int) []byte { // part 4, the last, has the rest
		if n == 4 {
			return body[3*partSize:]
		}
		return body[(n-1)*partSize : n*partSize]
	}
	cu, err := c.CreateMultipartUpload(ctx(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("uploads"), Key: aws.String("big")})
	if err != nil {
		t.Fatal(err)
	}
	id := cu.UploadId
	// A second upload that is aborted after the move.
	cu2, err := c.CreateMultipartUpload(ctx(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("uploads"), Key: aws.String("aborted")})
	if err != nil {
		t.Fatal(err)
	}
	etags := map[int32]string{}
	put := func(c *s3.Client, n int) {
		t.Helper()
		out, err := c.UploadPart(ctx(t), &s3.UploadPartInput{Bucket: aws.String("uploads"), Key: aws.String("big"), UploadId: id,
			PartNumber: aws.Int32(int32(n)), Body: bytes.NewReader(partOf(n))})
		if err != nil {
			t.Fatalf("upload part %d: %v", n, err)
		}
		etags[int32(n)] = aws.ToString(out.ETag)
	}
	put(c, 1)
	if _, err := c.UploadPart(ctx(t), &s3.UploadPartInput{Bucket: aws.String("uploads"), Key: aws.String("aborted"), UploadId: cu2.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader(partOf(1))}); err != nil {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		if err := os.MkdirAll(filepath.Join(dir, fmt.Sprintf("b%d", i)), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	s = poolServer(t, dir, a, b)
	c = s.root()
	put(c, 2)
	poolsCLI(t, s, "decommission", "start", "1")
	put(c, 3) // while pool 1 drains: before or after the upload's move
	for deadline := time.Now().Add(90 * time.Second); ; {
		state, _ := decomState(t, s)
		if state == "complete" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("decommission not complete within 90s:\n%s", poolsCLI(t, s, "decommission", "status"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%s", poolsCLI(t, s, "decommission", "status"))
	// Nothing is left in pool 1: the upload's parts moved.
	for i := 1; i <= 4; i++ {
		if n := countShardFiles(t, filepath.Join(dir, fmt.Sprintf("a%d", i))); n != 0 {
			t.Errorf("drive a%d keeps %d shard files after the decommission", i, n)
		}
	}
	put(c, 4)
	parts, err := c.ListParts(ctx(t), &s3.ListPartsInput{Bucket: aws.String("uploads"), Key: aws.String("big"), UploadId: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(parts.Parts) != 4 {
		t.Fatalf("ListParts after the move: %d parts, want 4", len(parts.Parts))
	}
	for _, p := range parts.Parts {
		if aws.ToString(p.ETag) != etags[aws.ToInt32(p.PartNumber)] {
			t.Fatalf("part %d: ETag %s listed, %s when uploaded", aws.ToInt32(p.PartNumber), aws.ToString(p.ETag), etags[aws.ToInt32(p.PartNumber)])
		}
	}
	if _, err := c.AbortMultipartUpload(ctx(t), &s3.AbortMultipartUploadInput{Bucket: aws.String("uploads"), Key: aws.String("aborted"), UploadId: cu2.UploadId}); err != nil {
		t.Fatalf("abort the moved upload: %v", err)
	}
	var done []types.CompletedPart
	for n := int32(1); n <= 4; n++ {
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(n), ETag: aws.String(etags[n])})
	}
	out, err := c.CompleteMultipartUpload(ctx(t), &s3.CompleteMultipartUploadInput{Bucket: aws.String("uploads"), Key: aws.String("big"), UploadId: id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		t.Fatalf("complete the moved upload: %v", err)
	}
	var md5s []byte
	for n := 1; n <= 4; n++ {
		sum := md5.Sum(partOf(n))
		md5s = append(md5s, sum[:]...)
	}
	if want := fmt.Sprintf("\"%x-4\"", md5.Sum(md5s)); aws.ToString(out.ETag) != want {
		t.Fatalf("completed ETag %s, want %s", aws.ToString(out.ETag), want)
	}
	check := func(c *s3.Client, when string) {
		g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("uploads"), Key: aws.String("big")})
		if err != nil {
			t.Fatalf("GET %s: %v", when, err)
		}
		if got := mustRead(t, g.Body); !bytes.Equal(got, body) {
			t.Fatalf("GET %s: %d bytes, not the %d uploaded", when, len(got), len(body))
		}
	}
	check(c, "after the completion")
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = poolServer(t, dir, b)
	check(s.root(), "without pool 1")
	ups, err := s.root().ListMultipartUploads(ctx(t), &s3.ListMultipartUploadsInput{Bucket: aws.String("uploads")})
	if err != nil {
		t.Fatal(err)
	}
	if len(ups.Uploads) != 0 {
		t.Fatalf("%d uploads listed after the completion and the abort", len(ups.Uploads))
	}
}
