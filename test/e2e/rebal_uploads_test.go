package e2e

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/shardstore/shardstore/test/internal/testfs"
)

// TestPoolsRebalanceMovesUploads starts a multipart upload of 3 parts
// of 5 MiB on a single node's only pool (each drive a tmpfs of its own)
// beside a few small objects, expands the node with an empty pool of the
// same size, and rebalances: the small keys move first, and since their
// bytes do not bring pool 1 down to the mean, the upload moves with its
// parts (the status counts it). Then the last part is uploaded, the
// upload completes, and the object reads back byte-identical, with the
// part ETags listed as uploaded, and pool 1 keeps no shard file. (An
// upload whose key the source holds stays with it, and a copy a cut-short
// move left behind: internal/engine TestRebalanceMovesUpload.)
func TestPoolsRebalanceMovesUploads(t *testing.T) {
	singleNodeOnly(t, "it starts its own single-node server with two pools on tmpfs mounts")
	dir := t.TempDir()
	for _, p := range []string{"a", "b"} {
		for i := 1; i <= 4; i++ {
			testfs.Tmpfs(t, filepath.Join(dir, p, fmt.Sprintf("d%d", i)), "shardstore-e2e-pool", 64<<20, "a rebalance needs pools on filesystems of their own")
		}
	}
	a, b := filepath.Join(dir, "a", "d")+"{1...4}", filepath.Join(dir, "b", "d")+"{1...4}"
	s := poolServer(t, dir, a)
	c := s.root()
	createBucket(t, c, "uploads")
	small := map[string][]byte{}
	for i := range 5 {
		key := fmt.Sprintf("small/%d", i)
		small[key] = pattern(200+i, byte(i))
		if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("uploads"), Key: aws.String(key), Body: bytes.NewReader(small[key])}); err != nil {
			t.Fatal(err)
		}
	}
	const partSize = 5 << 20
	body := pattern(3*partSize+4321, 7)
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
	for n := 1; n <= 3; n++ {
		put(c, n)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = poolServer(t, dir, a, b)
	c = s.root()
	t.Logf("%s", poolsCLI(t, s, "rebalance", "start", "--threshold", "2%"))
	var st rebalStatus
	for deadline := time.Now().Add(120 * time.Second); ; {
		st = rebalState(t, s)
		if st.State == "complete" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rebalance not complete within 120s:\n%s", poolsCLI(t, s, "rebalance", "status"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("%s", poolsCLI(t, s, "rebalance", "status"))
	var uploads int64
	for _, p := range st.Pools {
		if p.Pool == 1 {
			uploads = p.Uploads
		}
	}
	if uploads != 1 {
		t.Fatalf("the rebalance moved %d uploads off pool 1, want 1: %+v", uploads, st)
	}
	for i := 1; i <= 4; i++ {
		if n := countShardFiles(t, filepath.Join(dir, "a", fmt.Sprintf("d%d", i))); n != 0 {
			t.Errorf("drive a/d%d keeps %d shard files after the upload moved", i, n)
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
	var done []types.CompletedPart
	for _, p := range parts.Parts {
		n := aws.ToInt32(p.PartNumber)
		if aws.ToString(p.ETag) != etags[n] {
			t.Fatalf("part %d: ETag %s listed, %s when uploaded", n, aws.ToString(p.ETag), etags[n])
		}
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
	for key, want := range map[string][]byte{"big": body} {
		g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("uploads"), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("GET %s: %v", key, err)
		}
		if got := mustRead(t, g.Body); !bytes.Equal(got, want) {
			t.Fatalf("GET %s: %d bytes, not the %d uploaded", key, len(got), len(want))
		}
	}
	for key, want := range small {
		g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("uploads"), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("GET %s: %v", key, err)
		}
		if got := mustRead(t, g.Body); !bytes.Equal(got, want) {
			t.Fatalf("GET %s: %d bytes, not the %d written", key, len(got), len(want))
		}
	}
}
