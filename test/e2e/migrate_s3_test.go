package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// fromS3 runs `shardstore migrate from-s3` from src into dst.
func fromS3(t *testing.T, src, dst *server, extra ...string) string {
	t.Helper()
	cmd := fromS3Cmd(src, dst, append([]string{"--workers", "4"}, extra...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("migrate from-s3: %v\n%s", err, out)
	}
	if strings.Contains(string(out), rootPass) {
		t.Fatalf("the output shows a secret:\n%s", out)
	}
	return string(out)
}

// fromS3Cmd is `shardstore migrate from-s3 --target DST FLAGS... SRC`,
// root on both sides.
func fromS3Cmd(src, dst *server, flags ...string) *exec.Cmd {
	cmd := exec.Command(binary, append(append([]string{"migrate", "from-s3", "--target", dst.endpoint}, flags...), src.endpoint)...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+rootUser, "AWS_SECRET_ACCESS_KEY="+rootPass,
		"SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass)
	return cmd
}

// killWhen starts cmd and kills it (SIGKILL) once ready says so, asking
// every poll, or after limit.
func killWhen(t *testing.T, cmd *exec.Cmd, limit, poll time.Duration, ready func() bool) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && !ready() {
		time.Sleep(poll)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

// copiedCount is the "versions copied N" of a from-s3 summary.
func copiedCount(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`versions copied (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no summary in:\n%s", out)
	}
	return m[1]
}

// fillS3Source writes versioned, unversioned and locked buckets with
// delete markers, tags, metadata, retention, legal hold and a multipart
// object.
func fillS3Source(t *testing.T, c *s3.Client) {
	x := ctx(t)
	createBucket(t, c, "plain")
	createBucket(t, c, "vers")
	if _, err := c.PutBucketVersioning(x, &s3.PutBucketVersioningInput{Bucket: aws.String("vers"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateBucket(x, &s3.CreateBucketInput{Bucket: aws.String("locked"), ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	put := func(b, k string, body []byte, in *s3.PutObjectInput) {
		t.Helper()
		if in == nil {
			in = &s3.PutObjectInput{}
		}
		in.Bucket, in.Key, in.Body = aws.String(b), aws.String(k), bytes.NewReader(body)
		if _, err := c.PutObject(x, in); err != nil {
			t.Fatalf("put %s/%s: %v", b, k, err)
		}
	}
	put("plain", "a.txt", []byte("hello"), &s3.PutObjectInput{ContentType: aws.String("text/plain"),
		Metadata: map[string]string{"owner": "ana", "note": "ünïcode"}, Tagging: aws.String("k1=v1&k2=v2"),
		CacheControl: aws.String("max-age=60"), ContentDisposition: aws.String("inline")})
	put("plain", "deep/er/key-ü", pattern(70000, 3), nil)
	put("plain", "empty", nil, nil)
	for i := range 3 {
		put("vers", "k", pattern(1000+i*40000, byte(i)), &s3.PutObjectInput{Metadata: map[string]string{"n": fmt.Sprint(i)}})
	}
	if _, err := c.DeleteObject(x, &s3.DeleteObjectInput{Bucket: aws.String("vers"), Key: aws.String("k")}); err != nil {
		t.Fatal(err)
	}
	put("vers", "k", []byte("after the marker"), &s3.PutObjectInput{Tagging: aws.String("t=1")})
	put("vers", "gone", []byte("x"), nil)
	if _, err := c.DeleteObject(x, &s3.DeleteObjectInput{Bucket: aws.String("vers"), Key: aws.String("gone")}); err != nil {
		t.Fatal(err)
	}
	// A multipart object of uneven parts.
	up, err := c.CreateMultipartUpload(x, &s3.CreateMultipartUploadInput{Bucket: aws.String("vers"), Key: aws.String("mp")})
	if err != nil {
		t.Fatal(err)
	}
	var parts []types.CompletedPart
	for i, n := range []int{5 << 20, 1<<20 + 7} {
		p, err := c.UploadPart(x, &s3.UploadPartInput{Bucket: aws.String("vers"), Key: aws.String("mp"), UploadId: up.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(pattern(n, byte(10+i)))})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, types.CompletedPart{ETag: p.ETag, PartNumber: aws.Int32(int32(i + 1)), ChecksumCRC32: p.ChecksumCRC32})
	}
	if _, err := c.CompleteMultipartUpload(x, &s3.CompleteMultipartUploadInput{Bucket: aws.String("vers"), Key: aws.String("mp"),
		UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	put("locked", "held", []byte("under retention"), &s3.PutObjectInput{ObjectLockMode: types.ObjectLockModeGovernance,
		ObjectLockRetainUntilDate: &until, ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn})
	put("locked", "held", []byte("second version"), nil)
	if _, err := c.PutObjectLockConfiguration(x, &s3.PutObjectLockConfigurationInput{Bucket: aws.String("locked"),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled,
			Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(3)}}}}); err != nil {
		t.Fatal(err)
	}
	// A suspended bucket: a null version below a versioned one.
	createBucket(t, c, "susp")
	put("susp", "n", []byte("null version"), nil)
	for _, st := range []types.BucketVersioningStatus{types.BucketVersioningStatusEnabled, types.BucketVersioningStatusSuspended} {
		if _, err := c.PutBucketVersioning(x, &s3.PutBucketVersioningInput{Bucket: aws.String("susp"),
			VersioningConfiguration: &types.VersioningConfiguration{Status: st}}); err != nil {
			t.Fatal(err)
		}
		if st == types.BucketVersioningStatusEnabled {
			put("susp", "n", []byte("a versioned one"), nil)
		}
	}
	// Bucket configuration.
	if _, err := c.PutBucketTagging(x, &s3.PutBucketTaggingInput{Bucket: aws.String("vers"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("team"), Value: aws.String("storage")}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutBucketCors(x, &s3.PutBucketCorsInput{Bucket: aws.String("vers"), CORSConfiguration: &types.CORSConfiguration{
		CORSRules: []types.CORSRule{{AllowedMethods: []string{"GET"}, AllowedOrigins: []string{"https://example.com"}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutBucketLifecycleConfiguration(x, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String("vers"),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{{ID: aws.String("old"),
			Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("tmp/")},
			NoncurrentVersionExpiration: &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(30)}}}}}); err != nil {
		t.Fatal(err)
	}
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::plain/*"]}]}`
	if _, err := c.PutBucketPolicy(x, &s3.PutBucketPolicyInput{Bucket: aws.String("plain"), Policy: aws.String(policy)}); err != nil {
		t.Fatal(err)
	}
}

// sameBucketConfig checks the buckets' configuration came over.
func sameBucketConfig(t *testing.T, src, dst *s3.Client) {
	t.Helper()
	x := ctx(t)
	for _, b := range []string{"plain", "vers", "locked", "susp"} {
		describe := func(c *s3.Client) string {
			var out []string
			v, err := c.GetBucketVersioning(x, &s3.GetBucketVersioningInput{Bucket: aws.String(b)})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, "versioning "+string(v.Status))
			if l, err := c.GetObjectLockConfiguration(x, &s3.GetObjectLockConfigurationInput{Bucket: aws.String(b)}); err == nil {
				out = append(out, fmt.Sprintf("lock %s", l.ObjectLockConfiguration.ObjectLockEnabled))
				if r := l.ObjectLockConfiguration.Rule; r != nil {
					out = append(out, fmt.Sprintf("default %s %d", r.DefaultRetention.Mode, aws.ToInt32(r.DefaultRetention.Days)))
				}
			}
			if p, err := c.GetBucketPolicy(x, &s3.GetBucketPolicyInput{Bucket: aws.String(b)}); err == nil {
				out = append(out, "policy "+aws.ToString(p.Policy))
			}
			if tg, err := c.GetBucketTagging(x, &s3.GetBucketTaggingInput{Bucket: aws.String(b)}); err == nil {
				for _, tag := range tg.TagSet {
					out = append(out, "tag "+aws.ToString(tag.Key)+"="+aws.ToString(tag.Value))
				}
			}
			if cr, err := c.GetBucketCors(x, &s3.GetBucketCorsInput{Bucket: aws.String(b)}); err == nil {
				for _, r := range cr.CORSRules {
					out = append(out, fmt.Sprintf("cors %v %v", r.AllowedMethods, r.AllowedOrigins))
				}
			}
			if lc, err := c.GetBucketLifecycleConfiguration(x, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(b)}); err == nil {
				for _, r := range lc.Rules {
					out = append(out, fmt.Sprintf("lifecycle %s %s", aws.ToString(r.ID), r.Status))
				}
			}
			return strings.Join(out, "\n")
		}
		if w, g := describe(src), describe(dst); w != g {
			t.Fatalf("bucket %s configuration differs:\nsource:\n%s\ntarget:\n%s", b, w, g)
		}
	}
}

// sameVersions checks that bucket b lists the same versions on both
// servers, in the same order, and that every version answers HEAD and
// GET alike.
func sameVersions(t *testing.T, src, dst *s3.Client, b string) int {
	t.Helper()
	x := ctx(t)
	list := func(c *s3.Client) []string {
		var out []string
		p := s3.NewListObjectVersionsPaginator(c, &s3.ListObjectVersionsInput{Bucket: aws.String(b)})
		for p.HasMorePages() {
			page, err := p.NextPage(x)
			if err != nil {
				t.Fatalf("list versions of %s: %v", b, err)
			}
			for _, v := range page.Versions {
				out = append(out, fmt.Sprintf("%s %s latest=%v %s %s %d", aws.ToString(v.Key), aws.ToString(v.VersionId),
					aws.ToBool(v.IsLatest), aws.ToString(v.ETag), aws.ToTime(v.LastModified).Format(time.RFC3339Nano), aws.ToInt64(v.Size)))
			}
			for _, d := range page.DeleteMarkers {
				out = append(out, fmt.Sprintf("%s %s latest=%v marker %s", aws.ToString(d.Key), aws.ToString(d.VersionId),
					aws.ToBool(d.IsLatest), aws.ToTime(d.LastModified).Format(time.RFC3339Nano)))
			}
		}
		return out
	}
	want, got := list(src), list(dst)
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Fatalf("bucket %s: versions differ\nsource:\n%s\ntarget:\n%s", b, strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	p := s3.NewListObjectVersionsPaginator(src, &s3.ListObjectVersionsInput{Bucket: aws.String(b)})
	n := 0
	for p.HasMorePages() {
		page, err := p.NextPage(x)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range page.Versions {
			n++
			in := &s3.GetObjectInput{Bucket: aws.String(b), Key: v.Key, VersionId: v.VersionId, ChecksumMode: types.ChecksumModeEnabled}
			describe := func(c *s3.Client) string {
				g, err := c.GetObject(x, in)
				if err != nil {
					t.Fatalf("get %s/%s %s: %v", b, aws.ToString(v.Key), aws.ToString(v.VersionId), err)
				}
				body := mustRead(t, g.Body)
				sum := sha256.Sum256(body)
				tags := ""
				if aws.ToInt32(g.TagCount) > 0 {
					tg, err := c.GetObjectTagging(x, &s3.GetObjectTaggingInput{Bucket: aws.String(b), Key: v.Key, VersionId: v.VersionId})
					if err != nil {
						t.Fatal(err)
					}
					for _, tag := range tg.TagSet {
						tags += aws.ToString(tag.Key) + "=" + aws.ToString(tag.Value) + ";"
					}
				}
				return fmt.Sprintf("etag %s vid %s mod %s len %d sha %s type %s meta %v cache %s disp %s lock %s %v %s tags %s crc32 %s",
					aws.ToString(g.ETag), aws.ToString(g.VersionId), aws.ToTime(g.LastModified), aws.ToInt64(g.ContentLength),
					hex.EncodeToString(sum[:]), aws.ToString(g.ContentType), g.Metadata, aws.ToString(g.CacheControl),
					aws.ToString(g.ContentDisposition), g.ObjectLockMode, aws.ToTime(g.ObjectLockRetainUntilDate),
					g.ObjectLockLegalHoldStatus, tags, aws.ToString(g.ChecksumCRC32))
			}
			if w, g := describe(src), describe(dst); w != g {
				t.Fatalf("%s/%s version %s differs:\nsource %s\ntarget %s", b, aws.ToString(v.Key), aws.ToString(v.VersionId), w, g)
			}
		}
	}
	return n
}

// TestMigrateFromS3 copies one shardstore into another with the binary
// and checks that every version, delete marker and bucket setting came
// over alike; then that a second run copies nothing and a change on the
// source is picked up.
func TestMigrateFromS3(t *testing.T) {
	src, dst := startServer(t), startServer(t)
	sc, dc := src.root(), dst.root()
	fillS3Source(t, sc)
	out := fromS3(t, src, dst)
	t.Logf("first run:\n%s", out)
	for _, b := range []string{"plain", "vers", "locked", "susp"} {
		sameVersions(t, sc, dc, b)
	}
	sameBucketConfig(t, sc, dc)
	x := ctx(t)
	if again := fromS3(t, src, dst); copiedCount(t, again) != "0" {
		t.Fatalf("a second run copied something:\n%s", again)
	}
	if _, err := sc.PutObject(x, &s3.PutObjectInput{Bucket: aws.String("vers"), Key: aws.String("k"), Body: strings.NewReader("newer")}); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.PutObject(x, &s3.PutObjectInput{Bucket: aws.String("plain"), Key: aws.String("a.txt"), Body: strings.NewReader("replaced")}); err != nil {
		t.Fatal(err)
	}
	if again := fromS3(t, src, dst); copiedCount(t, again) != "2" {
		t.Fatalf("the changes were not copied alone:\n%s", again)
	}
	for _, b := range []string{"plain", "vers", "locked", "susp"} {
		sameVersions(t, sc, dc, b)
	}

	// The import path is refused to a user without admin:ImportObject,
	// on its own bucket too.
	bob := dst.client(bobUser, bobPass)
	createBucket(t, bob, "bobs")
	_, err := bob.PutObject(x, &s3.PutObjectInput{Bucket: aws.String("bobs"), Key: aws.String("k"), Body: strings.NewReader("x")},
		func(o *s3.Options) {
			o.APIOptions = append(o.APIOptions,
				smithyhttp.AddHeaderValue("X-Shardstore-Import-Version-Id", "null"),
				smithyhttp.AddHeaderValue("X-Shardstore-Import-Mod-Time", "2020-01-01T00:00:00Z"))
		})
	wantCode(t, err, "AccessDenied", 403)
	if _, err := bob.HeadObject(x, &s3.HeadObjectInput{Bucket: aws.String("bobs"), Key: aws.String("k")}); err == nil {
		t.Fatal("a refused import wrote the object")
	}
}

// TestMigrateFromS3Killed kills the migration (SIGKILL) while it copies
// and checks that a re-run completes it with nothing lost.
func TestMigrateFromS3Killed(t *testing.T) {
	src, dst := startServer(t), startServer(t)
	sc, dc := src.root(), dst.root()
	createBucket(t, sc, "many")
	if _, err := sc.PutBucketVersioning(ctx(t), &s3.PutBucketVersioningInput{Bucket: aws.String("many"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	for i := range 120 {
		if _, err := sc.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("many"), Key: aws.String(fmt.Sprintf("o%03d", i%40)),
			Body: bytes.NewReader(pattern(100000+i, byte(i)))}); err != nil {
			t.Fatal(err)
		}
	}
	// Kill it once the target holds some of the versions.
	killWhen(t, fromS3Cmd(src, dst, "--workers", "2"), 30*time.Second, 20*time.Millisecond, func() bool {
		l, err := dc.ListObjectVersions(ctx(t), &s3.ListObjectVersionsInput{Bucket: aws.String("many")})
		return err == nil && len(l.Versions) >= 10
	})
	l, _ := dc.ListObjectVersions(ctx(t), &s3.ListObjectVersionsInput{Bucket: aws.String("many")})
	t.Logf("killed with %d of 120 versions on the target", len(l.Versions))
	out := fromS3(t, src, dst, "--progress", "10ms")
	t.Logf("re-run:\n%s", out)
	if !regexp.MustCompile(`copied \d+ versions \([0-9.]+/s\), \d+ bytes \([0-9.]+ MiB/s\)`).MatchString(out) {
		t.Errorf("no progress line in:\n%s", out)
	}
	if n := sameVersions(t, sc, dc, "many"); n != 120 {
		t.Fatalf("%d versions, want 120", n)
	}
}
