package e2e

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func getVersion(t *testing.T, c *s3.Client, bucket, key, id string) (string, error) {
	t.Helper()
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if id != "" {
		in.VersionId = aws.String(id)
	}
	out, err := c.GetObject(ctx(t), in)
	if err != nil {
		return "", err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	return string(b), err
}

func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// TestVersioningSDK drives versioning through aws-sdk-go-v2 at default
// settings against the real binary: configuration, version ids on PUT,
// reads by version, delete markers (404 for the key, 405 for the
// marker's own id, as S3 documents), ListObjectVersions with its
// paginator, DeleteObjects with version ids, copies from a version, and
// versions surviving a restart.
func TestVersioningSDK(t *testing.T) {
	dir := t.TempDir()
	s := startIn(t, dir)
	c := s.root()
	const b = "versioned"
	createBucket(t, c, b)

	gv, err := c.GetBucketVersioning(ctx(t), &s3.GetBucketVersioningInput{Bucket: aws.String(b)})
	if err != nil || gv.Status != "" {
		t.Fatalf("versioning of a new bucket: %q %v", gv.Status, err)
	}
	unversioned, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: strings.NewReader("v0")})
	if err != nil || unversioned.VersionId != nil {
		t.Fatalf("PUT before versioning: version %v, %v", aws.ToString(unversioned.VersionId), err)
	}
	if _, err := c.PutBucketVersioning(ctx(t), &s3.PutBucketVersioningInput{Bucket: aws.String(b),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal("PutBucketVersioning:", err)
	}
	gv, err = c.GetBucketVersioning(ctx(t), &s3.GetBucketVersioningInput{Bucket: aws.String(b)})
	if err != nil || gv.Status != types.BucketVersioningStatusEnabled {
		t.Fatalf("GetBucketVersioning: %q %v", gv.Status, err)
	}
	var ids []string
	for _, body := range []string{"v1", "v2", "v3"} {
		out, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: strings.NewReader(body)})
		if err != nil || aws.ToString(out.VersionId) == "" {
			t.Fatalf("PUT %s: version %q, %v", body, aws.ToString(out.VersionId), err)
		}
		ids = append(ids, aws.ToString(out.VersionId))
	}
	for i, id := range ids {
		if got, err := getVersion(t, c, b, "k", id); err != nil || got != []string{"v1", "v2", "v3"}[i] {
			t.Fatalf("GET version %d: %q %v", i+1, got, err)
		}
	}
	if got, err := getVersion(t, c, b, "k", "null"); err != nil || got != "v0" {
		t.Fatalf("GET null version: %q %v", got, err)
	}

	// A delete marker.
	del, err := c.DeleteObject(ctx(t), &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
	if err != nil || !aws.ToBool(del.DeleteMarker) || aws.ToString(del.VersionId) == "" {
		t.Fatalf("DeleteObject: marker %v version %q %v", del.DeleteMarker, aws.ToString(del.VersionId), err)
	}
	if _, err := getVersion(t, c, b, "k", ""); httpStatus(err) != http.StatusNotFound {
		t.Fatalf("GET of a deleted key: %v", err)
	}
	if _, err := getVersion(t, c, b, "k", aws.ToString(del.VersionId)); httpStatus(err) != http.StatusMethodNotAllowed {
		t.Fatalf("GET of the marker's version: %v", err)
	}
	lo, err := c.ListObjectsV2(ctx(t), &s3.ListObjectsV2Input{Bucket: aws.String(b)})
	if err != nil || len(lo.Contents) != 0 {
		t.Fatalf("ListObjectsV2 after delete: %d objects, %v", len(lo.Contents), err)
	}

	// More keys, then the whole listing two entries at a time.
	for _, k := range []string{"a", "z"} {
		for i := 0; i < 2; i++ {
			if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(k), Body: strings.NewReader(k)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	listAll := func() (versions, markers []string) {
		pg := s3.NewListObjectVersionsPaginator(c, &s3.ListObjectVersionsInput{Bucket: aws.String(b), MaxKeys: aws.Int32(2)})
		for pg.HasMorePages() {
			out, err := pg.NextPage(ctx(t))
			if err != nil {
				t.Fatal("ListObjectVersions:", err)
			}
			for _, v := range out.Versions {
				versions = append(versions, aws.ToString(v.Key)+"@"+aws.ToString(v.VersionId))
			}
			for _, m := range out.DeleteMarkers {
				markers = append(markers, aws.ToString(m.Key)+"@"+aws.ToString(m.VersionId))
			}
		}
		return versions, markers
	}
	versions, markers := listAll()
	if len(versions) != 8 || len(markers) != 1 || markers[0] != "k@"+aws.ToString(del.VersionId) {
		t.Fatalf("ListObjectVersions: versions %v markers %v", versions, markers)
	}
	wantK := []string{"k@" + ids[2], "k@" + ids[1], "k@" + ids[0], "k@null"}
	if strings.Join(versions[2:6], " ") != strings.Join(wantK, " ") {
		t.Fatalf("versions of k: %v, want %v", versions[2:6], wantK)
	}

	// Copy from an old version, then remove versions with DeleteObjects.
	cp, err := c.CopyObject(ctx(t), &s3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("copy"),
		CopySource: aws.String(b + "/k?versionId=" + ids[0])})
	if err != nil || aws.ToString(cp.CopySourceVersionId) != ids[0] || aws.ToString(cp.VersionId) == "" {
		t.Fatalf("CopyObject from a version: %+v %v", cp, err)
	}
	if got, err := getVersion(t, c, b, "copy", ""); err != nil || got != "v1" {
		t.Fatalf("copy of v1: %q %v", got, err)
	}
	dd, err := c.DeleteObjects(ctx(t), &s3.DeleteObjectsInput{Bucket: aws.String(b), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("k"), VersionId: del.VersionId},
		{Key: aws.String("k"), VersionId: aws.String(ids[2])},
	}}})
	if err != nil || len(dd.Deleted) != 2 || len(dd.Errors) != 0 {
		t.Fatalf("DeleteObjects with versions: %+v %v", dd, err)
	}
	if got, err := getVersion(t, c, b, "k", ""); err != nil || got != "v2" {
		t.Fatalf("current after removing the marker and v3: %q %v", got, err)
	}
	if _, err := getVersion(t, c, b, "k", ids[2]); httpStatus(err) != http.StatusNotFound {
		t.Fatalf("GET of a removed version: %v", err)
	}

	// Everything survives a restart.
	s.stop()
	s = startIn(t, dir)
	c = s.root()
	versions2, markers2 := listAll()
	if len(versions2) != 8 || len(markers2) != 0 {
		t.Fatalf("after restart: versions %v markers %v", versions2, markers2)
	}
	if got, err := getVersion(t, c, b, "k", ids[0]); err != nil || got != "v1" {
		t.Fatalf("v1 after restart: %q %v", got, err)
	}
	if _, err := c.DeleteBucket(ctx(t), &s3.DeleteBucketInput{Bucket: aws.String(b)}); httpStatus(err) != http.StatusConflict {
		t.Fatalf("DeleteBucket with versions: %v", err)
	}
}
