package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/test/internal/testfs"
)

// TestDeleteOnFullDrives: a server whose every drive is full must still
// take DELETEs, so a client can free space through S3 (before, a drive
// restarted full opened its index read-only and every DELETE answered
// 507 InsufficientStorage). Four drives, each a 64 MiB tmpfs of its own,
// hold objects in an unversioned and a versioned bucket, then are
// filled to the last byte by a file beside the drive; the server is
// killed and started again on the full drives. It must serve every
// object byte for byte, refuse a PUT with 507, and take: a DELETE of an
// unversioned object (204, then 404), a DELETE in the versioned bucket
// (a delete marker: 204, then 404, the version still readable by id)
// and a DELETE of a version by id. Once the files are removed, PUTs are
// taken again; every object not deleted still reads back.
func TestDeleteOnFullDrives(t *testing.T) {
	singleNodeOnly(t, "it starts its own single-node server with drives on tmpfs mounts")
	dir := t.TempDir()
	var fills []string
	for i := 1; i <= 4; i++ {
		fs := filepath.Join(dir, fmt.Sprintf("fs%d", i))
		testfs.Tmpfs(t, fs, "shardstore-e2e-full", 64<<20, "the drives must fill up on their own")
		fills = append(fills, filepath.Join(fs, "filler"))
	}
	drives := filepath.Join(dir, "fs{1...4}", "d")
	s := poolServer(t, dir, drives)
	c := s.root()
	createBucket(t, c, "full")
	createBucket(t, c, "fullv")
	if _, err := c.PutBucketVersioning(ctx(t), &s3.PutBucketVersioningInput{Bucket: aws.String("fullv"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	versionOf := map[string]string{}
	for i := 0; i < 6; i++ {
		for _, bucket := range []string{"full", "fullv"} {
			body := pattern(1<<20+i*131, byte(i))
			if i%3 == 0 {
				body = pattern(200+i, byte(i)) // inline
			}
			key := fmt.Sprintf("k%d", i)
			out, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
			if err != nil {
				t.Fatal(err)
			}
			want[bucket+"/"+key] = body
			versionOf[bucket+"/"+key] = aws.ToString(out.VersionId)
		}
	}
	for _, f := range fills {
		testfs.Fill(t, f)
	}
	// kill -9 and start again on the full drives.
	killServer(t, s)
	s = poolServer(t, dir, drives)
	c = s.root()
	get := func(bucket, key, version string) ([]byte, error) {
		in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
		if version != "" {
			in.VersionId = aws.String(version)
		}
		out, err := c.GetObject(ctx(t), in)
		if err != nil {
			return nil, err
		}
		defer out.Body.Close()
		return io.ReadAll(out.Body)
	}
	checkAll := func(when string, gone map[string]bool) {
		t.Helper()
		for bk, body := range want {
			if gone[bk] {
				continue
			}
			bucket, key, _ := strings.Cut(bk, "/")
			got, err := get(bucket, key, "")
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("%s: GET %s: %d bytes, %v; want the %d written", when, bk, len(got), err, len(body))
			}
		}
	}
	checkAll("on the full drives", nil)
	_, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("full"), Key: aws.String("new"), Body: bytes.NewReader(pattern(1<<20, 9))})
	if code := errorCode(err); code != "InsufficientStorage" {
		t.Fatalf("PUT on the full drives: %v, want 507 InsufficientStorage", err)
	}

	gone := map[string]bool{}
	if _, err := c.DeleteObject(ctx(t), &s3.DeleteObjectInput{Bucket: aws.String("full"), Key: aws.String("k1")}); err != nil {
		t.Fatalf("DELETE full/k1 on the full drives: %v (before the reserve: 507 InsufficientStorage)", err)
	}
	gone["full/k1"] = true
	if _, err := get("full", "k1", ""); errorCode(err) != "NoSuchKey" {
		t.Fatalf("GET full/k1 after its DELETE: %v, want NoSuchKey", err)
	}
	if _, err := c.DeleteObject(ctx(t), &s3.DeleteObjectInput{Bucket: aws.String("full"), Key: aws.String("k3")}); err != nil {
		t.Fatalf("DELETE full/k3 (inline) on the full drives: %v", err)
	}
	gone["full/k3"] = true
	dout, err := c.DeleteObject(ctx(t), &s3.DeleteObjectInput{Bucket: aws.String("fullv"), Key: aws.String("k2")})
	if err != nil || !aws.ToBool(dout.DeleteMarker) {
		t.Fatalf("DELETE fullv/k2 (a delete marker) on the full drives: %v, marker %v", err, dout != nil && aws.ToBool(dout.DeleteMarker))
	}
	gone["fullv/k2"] = true
	if _, err := get("fullv", "k2", ""); errorCode(err) != "NoSuchKey" {
		t.Fatalf("GET fullv/k2 after its delete marker: %v, want NoSuchKey", err)
	}
	if got, err := get("fullv", "k2", versionOf["fullv/k2"]); err != nil || !bytes.Equal(got, want["fullv/k2"]) {
		t.Fatalf("GET fullv/k2 by version id under the marker: %d bytes, %v", len(got), err)
	}
	if _, err := c.DeleteObject(ctx(t), &s3.DeleteObjectInput{Bucket: aws.String("fullv"), Key: aws.String("k4"), VersionId: aws.String(versionOf["fullv/k4"])}); err != nil {
		t.Fatalf("DELETE fullv/k4 by version id on the full drives: %v", err)
	}
	gone["fullv/k4"] = true
	if _, err := get("fullv", "k4", versionOf["fullv/k4"]); errorCode(err) != "NoSuchVersion" && errorCode(err) != "NoSuchKey" {
		t.Fatalf("GET fullv/k4's deleted version: %v, want NoSuchVersion", err)
	}
	checkAll("after the deletions on the full drives", gone)
	// admin status (JSON and text) and the metrics say why writes fail.
	var st admin.StatusReply
	s.adminJSON(t, &st, "status")
	for _, d := range st.Drives {
		if d.State != "online" || d.Index != drive.IndexDeletesOnly {
			t.Fatalf("admin status --json on the full drives (after the deletions): %s: state %q index %q, want online and %q", d.Path, d.State, d.Index, drive.IndexDeletesOnly)
		}
	}
	out, code := runBinary(t, dir, append(serverEnv(), "SHARDSTORE_ENDPOINT="+s.endpoint), "admin", "status")
	if code != 0 || strings.Count(out, "full: index deletes-only") != 4 {
		t.Fatalf("admin status on the full drives (after the deletions): want each drive's \"full: index deletes-only\" line:\n%s", out)
	}
	if m := s.metrics(t); strings.Count(m.body, "shardstore_drive_index_full{") != 4 ||
		regexp.MustCompile(`(?m)^shardstore_drive_index_full\{[^}]*\} 0$`).MatchString(m.body) {
		t.Fatalf("metrics on the full drives (after the deletions): want shardstore_drive_index_full 1 for each drive:\n%s", m.body)
	}

	for _, f := range fills {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("full"), Key: aws.String("after"), Body: bytes.NewReader(pattern(1<<20, 7))})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("PUT a minute after space was freed: %v\n%s", err, s.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	checkAll("once space was freed", gone)
	st = admin.StatusReply{}
	s.adminJSON(t, &st, "status")
	for _, d := range st.Drives {
		if d.State != "online" || d.Index != "" {
			t.Fatalf("admin status --json once space was freed: %s: state %q index %q, want online and none", d.Path, d.State, d.Index)
		}
	}
}

// errorCode is the S3 error code of err ("" for none).
func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}
