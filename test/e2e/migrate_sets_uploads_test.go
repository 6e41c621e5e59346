package e2e

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/shardstore/shardstore/internal/minioformat/miniofixture"
	"github.com/shardstore/shardstore/internal/placement"
)

// The multi-set fixture's unfinished uploads (one in each erasure set)
// and S2-compressed objects (one in each set): MinIO keeps an upload in
// the set of its object, so the adoption must read and write that set's
// drives, and copy a compressed version on its set's drives.

// fixturePlacer is MinIO's placement of the deployment whose drive is d
// (its format.json's deployment id).
func fixturePlacer(t *testing.T, d string) *placement.Placer {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(d, ".minio.sys", "format.json"))
	if err != nil {
		t.Fatal(err)
	}
	dep := regexp.MustCompile(`"id":"([^"]+)"`).FindSubmatch(raw)
	if dep == nil {
		t.Fatalf("format.json: %s", raw)
	}
	p, err := placement.New(placement.MinIOSipMod, string(dep[1]))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// setsUpload is one of the fixture's unfinished uploads and its set.
type setsUpload struct {
	bucket string
	up     miniofixture.Upload
	set    int
}

// setsUploads lists the fixture's uploads with the set MinIO's placement
// gives their key, and checks that MinIO's directory of each
// (.minio.sys/multipart/<sha256 of bucket/key>) is on that set's drives
// and on no other: the fixture tests what it should.
func setsUploads(t *testing.T, drives []string, exp *miniofixture.Expected, placer *placement.Placer) []setsUpload {
	t.Helper()
	var out []setsUpload
	bySet := map[int]bool{}
	for _, b := range exp.Buckets {
		for _, u := range b.Uploads {
			set := placer.Set(b.Name, u.Key, 2)
			sum := sha256.Sum256([]byte(b.Name + "/" + u.Key))
			for i, d := range drives {
				_, err := os.Stat(filepath.Join(d, ".minio.sys", "multipart", hex.EncodeToString(sum[:])))
				if (err == nil) != (i/setsSetSize == set) {
					t.Fatalf("upload %s/%s: its directory on %s: %v; its key is in set %d", b.Name, u.Key, d, err, set+1)
				}
			}
			bySet[set] = true
			out = append(out, setsUpload{bucket: b.Name, up: u, set: set})
		}
	}
	if len(bySet) != 2 {
		t.Fatalf("fixture: unfinished uploads in sets %v, want both", bySet)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].set < out[j].set })
	return out
}

// checkSetsUploadsListed: every adopted upload is listed with MinIO's
// upload id, and its parts with MinIO's ETags and sizes.
func checkSetsUploadsListed(t *testing.T, s *server, ups []setsUpload) {
	t.Helper()
	c := s.root()
	cx := ctx(t)
	var got, want []string
	seen := map[string]bool{}
	for _, u := range ups {
		want = append(want, u.bucket+"/"+u.up.Key+" "+u.up.UploadID)
		if seen[u.bucket] {
			continue
		}
		seen[u.bucket] = true
		lu, err := c.ListMultipartUploads(cx, &s3.ListMultipartUploadsInput{Bucket: aws.String(u.bucket)})
		if err != nil {
			t.Fatalf("ListMultipartUploads %s: %v", u.bucket, err)
		}
		for _, l := range lu.Uploads {
			got = append(got, u.bucket+"/"+aws.ToString(l.Key)+" "+aws.ToString(l.UploadId))
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("uploads listed\n got %v\nwant %v", got, want)
	}
	for _, u := range ups {
		lp, err := c.ListParts(cx, &s3.ListPartsInput{Bucket: aws.String(u.bucket), Key: aws.String(u.up.Key), UploadId: aws.String(u.up.UploadID)})
		if err != nil {
			t.Fatalf("ListParts %s/%s (set %d): %v", u.bucket, u.up.Key, u.set+1, err)
		}
		var gp, wp []string
		for _, p := range lp.Parts {
			gp = append(gp, fmt.Sprintf("%d %s %d", aws.ToInt32(p.PartNumber), aws.ToString(p.ETag), aws.ToInt64(p.Size)))
		}
		for i, n := range u.up.Parts {
			wp = append(wp, fmt.Sprintf("%d %s %d", n, u.up.PartETags[i], u.up.PartSizes[i]))
		}
		if fmt.Sprint(gp) != fmt.Sprint(wp) {
			t.Fatalf("ListParts %s/%s (set %d)\n got %v\nwant %v", u.bucket, u.up.Key, u.set+1, gp, wp)
		}
	}
}

// completeSetsUpload adds a part to the adopted upload u (listed beside
// MinIO's), completes it with MinIO's part 1 (the only part under 5 MiB
// may only be the last one) and reads it back: its bytes are the part
// whose MD5 MinIO gave as its ETag. It returns the object's body.
func completeSetsUpload(t *testing.T, s *server, u setsUpload) []byte {
	t.Helper()
	c := s.root()
	cx := ctx(t)
	extra := bytes.Repeat([]byte("a part uploaded to shardstore\n"), 300)
	if _, err := c.UploadPart(cx, &s3.UploadPartInput{Bucket: aws.String(u.bucket), Key: aws.String(u.up.Key), UploadId: aws.String(u.up.UploadID),
		PartNumber: aws.Int32(2), Body: bytes.NewReader(extra)}); err != nil {
		t.Fatalf("UploadPart 2 of the adopted upload %s/%s (set %d): %v", u.bucket, u.up.Key, u.set+1, err)
	}
	lp, err := c.ListParts(cx, &s3.ListPartsInput{Bucket: aws.String(u.bucket), Key: aws.String(u.up.Key), UploadId: aws.String(u.up.UploadID)})
	if err != nil || len(lp.Parts) != len(u.up.Parts)+1 {
		t.Fatalf("ListParts after a part was added to %s/%s: %v, %d parts", u.bucket, u.up.Key, err, len(lp.Parts))
	}
	_, err = c.CompleteMultipartUpload(cx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(u.bucket), Key: aws.String(u.up.Key),
		UploadId: aws.String(u.up.UploadID), MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
			{PartNumber: aws.Int32(int32(u.up.Parts[0])), ETag: aws.String(u.up.PartETags[0])}}}})
	if err != nil {
		t.Fatalf("CompleteMultipartUpload of the adopted upload %s/%s (set %d): %v", u.bucket, u.up.Key, u.set+1, err)
	}
	body := mustRead(t, mustGet(t, c, u.bucket, u.up.Key))
	sum := md5.Sum(body)
	if int64(len(body)) != u.up.PartSizes[0] || `"`+hex.EncodeToString(sum[:])+`"` != u.up.PartETags[0] {
		t.Fatalf("the completed upload %s/%s (set %d): %d bytes with MD5 %x, MinIO's part was %d bytes with ETag %s",
			u.bucket, u.up.Key, u.set+1, len(body), sum, u.up.PartSizes[0], u.up.PartETags[0])
	}
	return body
}

// noMultipartDirs: --finish removed MinIO's directories of the adopted
// uploads from every drive of every set.
func noMultipartDirs(t *testing.T, drives []string, ups []setsUpload) {
	t.Helper()
	for _, u := range ups {
		sum := sha256.Sum256([]byte(u.bucket + "/" + u.up.Key))
		for _, d := range drives {
			p := filepath.Join(d, ".minio.sys", "multipart", hex.EncodeToString(sum[:]))
			if _, err := os.Stat(p); err == nil {
				t.Fatalf("--finish left %s (upload %s/%s of set %d)", p, u.bucket, u.up.Key, u.set+1)
			}
		}
	}
}
