package e2e

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// countVersions is how many versions and delete markers bucket b lists.
func countVersions(t *testing.T, c *s3.Client, b string) int {
	t.Helper()
	n := 0
	p := s3.NewListObjectVersionsPaginator(c, &s3.ListObjectVersionsInput{Bucket: aws.String(b)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Versions) + len(page.DeleteMarkers)
	}
	return n
}

// TestMigrateFromS3Delete: versions and keys deleted on the source stay
// on the target unless the run is given --delete, which removes them
// (and what only the target has), printing each; a run killed while it
// deletes is completed by running it again.
func TestMigrateFromS3Delete(t *testing.T) {
	src, dst := startServer(t), startServer(t)
	sc, dc := src.root(), dst.root()
	x := ctx(t)
	createBucket(t, sc, "sync")
	if _, err := sc.PutBucketVersioning(x, &s3.PutBucketVersioningInput{Bucket: aws.String("sync"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	ids := map[string][]string{}
	for i := range 40 {
		k := fmt.Sprintf("k%02d", i)
		for v := range 2 {
			out, err := sc.PutObject(x, &s3.PutObjectInput{Bucket: aws.String("sync"), Key: aws.String(k), Body: bytes.NewReader(pattern(100+v, byte(i)))})
			if err != nil {
				t.Fatal(err)
			}
			ids[k] = append(ids[k], aws.ToString(out.VersionId))
		}
	}
	if _, err := sc.DeleteObject(x, &s3.DeleteObjectInput{Bucket: aws.String("sync"), Key: aws.String("k39")}); err != nil {
		t.Fatal(err) // a delete marker, copied and then kept
	}
	fromS3(t, src, dst)
	// On the source: 30 keys deleted whole, one older version of k35,
	// a new key; on the target: a key only it has.
	for i := range 30 {
		k := fmt.Sprintf("k%02d", i)
		for _, id := range ids[k] {
			if _, err := sc.DeleteObject(x, &s3.DeleteObjectInput{Bucket: aws.String("sync"), Key: aws.String(k), VersionId: aws.String(id)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := sc.DeleteObject(x, &s3.DeleteObjectInput{Bucket: aws.String("sync"), Key: aws.String("k35"), VersionId: aws.String(ids["k35"][0])}); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.PutObject(x, &s3.PutObjectInput{Bucket: aws.String("sync"), Key: aws.String("new"), Body: strings.NewReader("new")}); err != nil {
		t.Fatal(err)
	}
	if _, err := dc.PutObject(x, &s3.PutObjectInput{Bucket: aws.String("sync"), Key: aws.String("target-only"), Body: strings.NewReader("t")}); err != nil {
		t.Fatal(err)
	}
	before := countVersions(t, dc, "sync")
	out := fromS3(t, src, dst)
	if strings.Contains(out, "deleted") || copiedCount(t, out) != "1" || countVersions(t, dc, "sync") != before+1 {
		t.Fatalf("a run without --delete deleted or missed something (%d versions before):\n%s", before, out)
	}

	// --delete, killed while it deletes, then run again.
	killWhen(t, fromS3Cmd(src, dst, "--workers", "1", "--delete"), 30*time.Second, 2*time.Millisecond, func() bool {
		return countVersions(t, dc, "sync") <= before-5
	})
	t.Logf("killed with %d versions on the target (%d before, %d after)", countVersions(t, dc, "sync"), before+1, countVersions(t, sc, "sync"))
	out = fromS3(t, src, dst, "--delete")
	t.Logf("re-run with --delete:\n%s", out)
	if !regexp.MustCompile(`deleted: sync/target-only version \S+ \(not on the source\)`).MatchString(out) {
		t.Errorf("the removal of the target's own key is not printed")
	}
	sameVersions(t, sc, dc, "sync")
	if n, m := countVersions(t, sc, "sync"), countVersions(t, dc, "sync"); n != m || n != 10*2-1+1+1 { // k30-k39, less k35's older one, k39's marker, new
		t.Fatalf("%d versions on the source, %d on the target", n, m)
	}
	if again := fromS3(t, src, dst, "--delete"); !strings.Contains(again, "deleted as gone from the source 0") || copiedCount(t, again) != "0" {
		t.Fatalf("a third run did something:\n%s", again)
	}
}
