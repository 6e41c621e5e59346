package e2e

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// putMultipart uploads body as a multipart object of the given part
// sizes, with a checksum algorithm and type (empty: the SDK's default).
func putMultipart(t *testing.T, c *s3.Client, b, k string, sizes []int, alg types.ChecksumAlgorithm, typ types.ChecksumType, seed byte) {
	t.Helper()
	x := ctx(t)
	up, err := c.CreateMultipartUpload(x, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(k),
		ChecksumAlgorithm: alg, ChecksumType: typ})
	if err != nil {
		t.Fatalf("create upload %s: %v", k, err)
	}
	var parts []types.CompletedPart
	for i, n := range sizes {
		p, err := c.UploadPart(x, &s3.UploadPartInput{Bucket: aws.String(b), Key: aws.String(k), UploadId: up.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(pattern(n, seed+byte(i))), ChecksumAlgorithm: alg})
		if err != nil {
			t.Fatalf("upload part %d of %s: %v", i+1, k, err)
		}
		parts = append(parts, types.CompletedPart{ETag: p.ETag, PartNumber: aws.Int32(int32(i + 1)), ChecksumCRC32: p.ChecksumCRC32,
			ChecksumCRC32C: p.ChecksumCRC32C, ChecksumCRC64NVME: p.ChecksumCRC64NVME, ChecksumSHA1: p.ChecksumSHA1, ChecksumSHA256: p.ChecksumSHA256})
	}
	if _, err := c.CompleteMultipartUpload(x, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(k),
		UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatalf("complete %s: %v", k, err)
	}
}

// samePartLayout checks that a version answers HEAD and GET partNumber
// alike on both servers: the part count, each part's size and bytes, the
// ETag and the checksums with their type.
func samePartLayout(t *testing.T, src, dst *s3.Client, b, k, vid string) int32 {
	t.Helper()
	x := ctx(t)
	describe := func(c *s3.Client, n int32) (string, int32) {
		h, err := c.HeadObject(x, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(k), VersionId: aws.String(vid),
			PartNumber: aws.Int32(n), ChecksumMode: types.ChecksumModeEnabled})
		if err != nil {
			t.Fatalf("head %s part %d: %v", k, n, err)
		}
		g, err := c.GetObject(x, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(k), VersionId: aws.String(vid), PartNumber: aws.Int32(n)})
		if err != nil {
			t.Fatalf("get %s part %d: %v", k, n, err)
		}
		body := mustRead(t, g.Body)
		full, err := c.HeadObject(x, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(k), VersionId: aws.String(vid), ChecksumMode: types.ChecksumModeEnabled})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("parts %d len %d body %x etag %s | object %s %s crc32 %s crc32c %s crc64 %s sha1 %s sha256 %s",
			aws.ToInt32(h.PartsCount), aws.ToInt64(h.ContentLength), md5sum(body), aws.ToString(h.ETag), full.ChecksumType,
			aws.ToString(full.ETag), aws.ToString(full.ChecksumCRC32), aws.ToString(full.ChecksumCRC32C), aws.ToString(full.ChecksumCRC64NVME),
			aws.ToString(full.ChecksumSHA1), aws.ToString(full.ChecksumSHA256)), aws.ToInt32(h.PartsCount)
	}
	w, parts := describe(src, 1)
	for n := int32(1); n <= max(parts, 1); n++ {
		w, _ = describe(src, n)
		g, _ := describe(dst, n)
		if w != g {
			t.Fatalf("%s/%s %s part %d differs:\nsource %s\ntarget %s", b, k, vid, n, w, g)
		}
	}
	return parts
}

// TestMigrateFromS3Parts imports multipart objects as the same parts:
// part count, sizes and bytes by partNumber, ETag, and the checksums of
// each type (full-object CRCs, composite SHA-256 and CRC32C), then a
// re-run finds them there.
func TestMigrateFromS3Parts(t *testing.T) {
	src, dst := startServer(t), startServer(t)
	sc, dc := src.root(), dst.root()
	createBucket(t, sc, "mparts")
	if _, err := sc.PutBucketVersioning(ctx(t), &s3.PutBucketVersioningInput{Bucket: aws.String("mparts"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	objs := []struct {
		key   string
		sizes []int
		alg   types.ChecksumAlgorithm
		typ   types.ChecksumType
	}{
		{"default", []int{5 << 20, 1<<20 + 7}, "", ""},
		{"sha256-composite", []int{5 << 20, 5 << 20, 3}, types.ChecksumAlgorithmSha256, types.ChecksumTypeComposite},
		{"crc32c-composite", []int{5<<20 + 1, 10}, types.ChecksumAlgorithmCrc32c, types.ChecksumTypeComposite},
		{"crc64-full", []int{5 << 20, 2}, types.ChecksumAlgorithmCrc64nvme, types.ChecksumTypeFullObject},
		{"crc32-full", []int{5 << 20, 5 << 20}, types.ChecksumAlgorithmCrc32, types.ChecksumTypeFullObject},
	}
	for i, o := range objs {
		putMultipart(t, sc, "mparts", o.key, o.sizes, o.alg, o.typ, byte(10*i))
	}
	// A second version of one key, in other parts.
	putMultipart(t, sc, "mparts", "default", []int{5<<20 + 3, 5 << 20, 1}, "", "", 99)
	out := fromS3(t, src, dst)
	t.Logf("first run:\n%s", out)
	if !strings.Contains(out, "multipart ETags not recomputed 0") {
		t.Fatalf("multipart objects were not read by part:\n%s", out)
	}
	sameVersions(t, sc, dc, "mparts")
	l, err := sc.ListObjectVersions(ctx(t), &s3.ListObjectVersionsInput{Bucket: aws.String("mparts")})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range l.Versions {
		if n := samePartLayout(t, sc, dc, "mparts", aws.ToString(v.Key), aws.ToString(v.VersionId)); n < 2 {
			t.Fatalf("%s has %d parts on the source", aws.ToString(v.Key), n)
		}
	}
	if again := fromS3(t, src, dst); copiedCount(t, again) != "0" {
		t.Fatalf("a second run copied something:\n%s", again)
	}
}

// TestMigrateFromS3PartsKilled kills the import (SIGKILL) while it
// writes multipart objects: every version the target lists then is whole
// (no half object is visible), and the re-run completes the import with
// nothing lost and nothing twice.
func TestMigrateFromS3PartsKilled(t *testing.T) {
	src, dst := startServer(t), startServer(t)
	sc, dc := src.root(), dst.root()
	createBucket(t, sc, "mpkill")
	if _, err := sc.PutBucketVersioning(ctx(t), &s3.PutBucketVersioningInput{Bucket: aws.String("mpkill"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		putMultipart(t, sc, "mpkill", fmt.Sprintf("o%d", i%3), []int{5 << 20, 1000 + i}, types.ChecksumAlgorithmCrc32c, types.ChecksumTypeComposite, byte(i))
	}
	killWhen(t, fromS3Cmd(src, dst, "--workers", "2"), 60*time.Second, 5*time.Millisecond, func() bool {
		l, err := dc.ListObjectVersions(ctx(t), &s3.ListObjectVersionsInput{Bucket: aws.String("mpkill")})
		return err == nil && len(l.Versions) >= 1
	})
	l, err := dc.ListObjectVersions(ctx(t), &s3.ListObjectVersionsInput{Bucket: aws.String("mpkill")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed with %d of 6 versions on the target", len(l.Versions))
	for _, v := range l.Versions {
		samePartLayout(t, sc, dc, "mpkill", aws.ToString(v.Key), aws.ToString(v.VersionId))
	}
	out := fromS3(t, src, dst)
	t.Logf("re-run:\n%s", out)
	if n := sameVersions(t, sc, dc, "mpkill"); n != 6 {
		t.Fatalf("%d versions, want 6", n)
	}
	l, err = dc.ListObjectVersions(ctx(t), &s3.ListObjectVersionsInput{Bucket: aws.String("mpkill")})
	if err != nil || len(l.Versions) != 6 {
		t.Fatalf("the target lists %d versions, want 6: %v", len(l.Versions), err)
	}
	for _, v := range l.Versions {
		samePartLayout(t, sc, dc, "mpkill", aws.ToString(v.Key), aws.ToString(v.VersionId))
	}
}

func md5sum(b []byte) []byte {
	s := md5.Sum(b)
	return s[:]
}
