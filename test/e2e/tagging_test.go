package e2e

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"
	mcreds "github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/tags"
)

// tagSet is an SDK tag set of key/value pairs.
func tagSet(kv ...string) []types.Tag {
	var out []types.Tag
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
	}
	return out
}

func tagMap(ts []types.Tag) map[string]string {
	m := map[string]string{}
	for _, t := range ts {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

func pairs(kv ...string) map[string]string { return tagMap(tagSet(kv...)) }

// objectTags reads an object's tags with GetObjectTagging.
func objectTags(t *testing.T, c *s3.Client, bucket, key string) map[string]string {
	t.Helper()
	out, err := c.GetObjectTagging(ctx(t), &s3.GetObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("GetObjectTagging %s/%s: %v", bucket, key, err)
	}
	return tagMap(out.TagSet)
}

// TestTaggingSDK: object and bucket tagging through aws-sdk-go-v2 at
// default settings (its checksums on the tagging bodies included): the
// APIs, x-amz-tagging on PUT, multipart and copy, the tag count on GET and
// HEAD, S3's limits and errors, access, and tags surviving a restart.
func TestTaggingSDK(t *testing.T) {
	dir := t.TempDir()
	s := startIn(t, dir)
	c := s.root()
	const b = "tagging"
	createBucket(t, c, b)

	put, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("doc.txt"),
		Body: strings.NewReader("hello"), Tagging: aws.String("project=blue&team=storage%20ops")})
	if err != nil {
		t.Fatal("PutObject with Tagging:", err)
	}
	if got := objectTags(t, c, b, "doc.txt"); !maps.Equal(got, pairs("project", "blue", "team", "storage ops")) {
		t.Fatalf("tags from x-amz-tagging: %v", got)
	}
	head, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("doc.txt")})
	if err != nil || aws.ToInt32(head.TagCount) != 2 {
		t.Fatalf("HeadObject tag count: %v %v", head.TagCount, err)
	}

	// PutObjectTagging replaces the set and leaves the version alone.
	time.Sleep(1100 * time.Millisecond) // Last-Modified has one-second resolution
	if _, err := c.PutObjectTagging(ctx(t), &s3.PutObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("doc.txt"),
		Tagging: &types.Tagging{TagSet: tagSet("stage", "final", "empty", "", "ключ", "значение")}}); err != nil {
		t.Fatal("PutObjectTagging:", err)
	}
	if got := objectTags(t, c, b, "doc.txt"); !maps.Equal(got, pairs("stage", "final", "empty", "", "ключ", "значение")) {
		t.Fatalf("after PutObjectTagging: %v", got)
	}
	g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("doc.txt")})
	if err != nil {
		t.Fatal(err)
	}
	mustRead(t, g.Body)
	if aws.ToInt32(g.TagCount) != 3 || aws.ToString(g.ETag) != aws.ToString(put.ETag) || !g.LastModified.Equal(*head.LastModified) {
		t.Fatalf("GetObject after tagging: count %v etag %s (was %s) last-modified %v (was %v)",
			g.TagCount, aws.ToString(g.ETag), aws.ToString(put.ETag), g.LastModified, head.LastModified)
	}
	// S3's limits and errors; none changes the tags.
	eleven := make([]string, 0, 22)
	for i := range 11 {
		eleven = append(eleven, fmt.Sprintf("k%d", i), "v")
	}
	for _, c2 := range []struct {
		set  []types.Tag
		code string
	}{
		{tagSet(eleven...), "BadRequest"},
		{tagSet("aws:owner", "me"), "InvalidTag"},
		{tagSet("k", "1", "k", "2"), "InvalidTag"},
		{tagSet(strings.Repeat("k", 129), "v"), "InvalidTag"},
		{tagSet("k", strings.Repeat("v", 257)), "InvalidTag"},
		{tagSet("k", "semi;colon"), "InvalidTag"},
	} {
		_, err := c.PutObjectTagging(ctx(t), &s3.PutObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("doc.txt"),
			Tagging: &types.Tagging{TagSet: c2.set}})
		wantCode(t, err, c2.code, 400)
	}
	if got := objectTags(t, c, b, "doc.txt"); len(got) != 3 {
		t.Fatalf("refused tag sets changed the tags: %v", got)
	}
	_, err = c.PutObjectTagging(ctx(t), &s3.PutObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("missing"),
		Tagging: &types.Tagging{TagSet: tagSet("k", "v")}})
	wantCode(t, err, "NoSuchKey", 404)
	_, err = c.GetObjectTagging(ctx(t), &s3.GetObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("doc.txt"), VersionId: aws.String("null")})
	if err != nil {
		t.Fatal("GetObjectTagging of the null version:", err)
	}
	_, err = c.GetObjectTagging(ctx(t), &s3.GetObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("doc.txt"), VersionId: aws.String("3HL4kqtJlcpXroDTDmJ")})
	wantCode(t, err, "InvalidArgument", 400)
	_, err = c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("bad-tags"),
		Body: strings.NewReader("x"), Tagging: aws.String("a=1&a=2")})
	wantCode(t, err, "InvalidArgument", 400)

	// Multipart uploads and copies.
	up, err := c.CreateMultipartUpload(ctx(t), &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("big"),
		Tagging: aws.String("kind=multipart")})
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.UploadPart(ctx(t), &s3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("big"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader(pattern(1000, 1))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteMultipartUpload(ctx(t), &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("big"),
		UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
			{PartNumber: aws.Int32(1), ETag: part.ETag, ChecksumCRC32: part.ChecksumCRC32}}}}); err != nil {
		t.Fatal(err)
	}
	if got := objectTags(t, c, b, "big"); !maps.Equal(got, pairs("kind", "multipart")) {
		t.Fatalf("multipart object tags: %v", got)
	}
	if _, err := c.CopyObject(ctx(t), &s3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("copy"), CopySource: aws.String(b + "/big")}); err != nil {
		t.Fatal(err)
	}
	if got := objectTags(t, c, b, "copy"); !maps.Equal(got, pairs("kind", "multipart")) {
		t.Fatalf("copy (COPY directive) tags: %v", got)
	}
	if _, err := c.CopyObject(ctx(t), &s3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("copy"), CopySource: aws.String(b + "/big"),
		TaggingDirective: types.TaggingDirectiveReplace, Tagging: aws.String("kind=copy")}); err != nil {
		t.Fatal(err)
	}
	if got := objectTags(t, c, b, "copy"); !maps.Equal(got, pairs("kind", "copy")) {
		t.Fatalf("copy (REPLACE directive) tags: %v", got)
	}

	// DeleteObjectTagging.
	if _, err := c.DeleteObjectTagging(ctx(t), &s3.DeleteObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("big")}); err != nil {
		t.Fatal(err)
	}
	if got := objectTags(t, c, b, "big"); len(got) != 0 {
		t.Fatalf("after DeleteObjectTagging: %v", got)
	}
	if h, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("big")}); err != nil || h.TagCount != nil {
		t.Fatalf("tag count after DeleteObjectTagging: %v %v", h.TagCount, err)
	}

	// Bucket tagging.
	_, err = c.GetBucketTagging(ctx(t), &s3.GetBucketTaggingInput{Bucket: aws.String(b)})
	wantCode(t, err, "NoSuchTagSet", 404)
	if _, err := c.PutBucketTagging(ctx(t), &s3.PutBucketTaggingInput{Bucket: aws.String(b),
		Tagging: &types.Tagging{TagSet: tagSet("cost-center", "42", "owner", "storage")}}); err != nil {
		t.Fatal("PutBucketTagging:", err)
	}
	fiftyOne := make([]string, 0, 102)
	for i := range 51 {
		fiftyOne = append(fiftyOne, fmt.Sprintf("k%02d", i), "v")
	}
	_, err = c.PutBucketTagging(ctx(t), &s3.PutBucketTaggingInput{Bucket: aws.String(b), Tagging: &types.Tagging{TagSet: tagSet(fiftyOne...)}})
	wantCode(t, err, "BadRequest", 400)
	_, err = c.PutBucketTagging(ctx(t), &s3.PutBucketTaggingInput{Bucket: aws.String(b), Tagging: &types.Tagging{TagSet: tagSet("aws:x", "v")}})
	wantCode(t, err, "InvalidTag", 400)

	// Access: bob, another user, may neither read nor change the tags of
	// root's objects and bucket; a bucket policy can grant reads by tag.
	bob := s.client(bobUser, bobPass)
	_, err = bob.GetObjectTagging(ctx(t), &s3.GetObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("doc.txt")})
	wantCode(t, err, "AccessDenied", 403)
	_, err = bob.PutObjectTagging(ctx(t), &s3.PutObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("doc.txt"),
		Tagging: &types.Tagging{TagSet: tagSet("k", "v")}})
	wantCode(t, err, "AccessDenied", 403)
	_, err = bob.GetBucketTagging(ctx(t), &s3.GetBucketTaggingInput{Bucket: aws.String(b)})
	wantCode(t, err, "AccessDenied", 403)
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("shared"),
		Body: strings.NewReader("shared"), Tagging: aws.String("visibility=public")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutBucketPolicy(ctx(t), &s3.PutBucketPolicyInput{Bucket: aws.String(b), Policy: aws.String(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":{"AWS":"` + bobUser + `"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::` + b + `/*",
		 "Condition":{"StringEquals":{"s3:ExistingObjectTag/visibility":"public"}}}]}`)}); err != nil {
		t.Fatal("PutBucketPolicy:", err)
	}
	if got := getBody(t, bob, b, "shared"); string(got) != "shared" {
		t.Fatalf("bob reads the public-tagged object: %q", got)
	}
	_, err = bob.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("doc.txt")})
	wantCode(t, err, "AccessDenied", 403)
	// Untagging the object closes it again.
	if _, err := c.DeleteObjectTagging(ctx(t), &s3.DeleteObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("shared")}); err != nil {
		t.Fatal(err)
	}
	_, err = bob.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("shared")})
	wantCode(t, err, "AccessDenied", 403)

	// Everything survives a restart.
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = startIn(t, dir)
	c = s.root()
	if got := objectTags(t, c, b, "doc.txt"); !maps.Equal(got, pairs("stage", "final", "empty", "", "ключ", "значение")) {
		t.Fatalf("object tags after restart: %v", got)
	}
	bt, err := c.GetBucketTagging(ctx(t), &s3.GetBucketTaggingInput{Bucket: aws.String(b)})
	if err != nil || !maps.Equal(tagMap(bt.TagSet), pairs("cost-center", "42", "owner", "storage")) {
		t.Fatalf("bucket tags after restart: %v %v", bt, err)
	}
	if _, err := c.DeleteBucketTagging(ctx(t), &s3.DeleteBucketTaggingInput{Bucket: aws.String(b)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetBucketTagging(ctx(t), &s3.GetBucketTaggingInput{Bucket: aws.String(b)})
	wantCode(t, err, "NoSuchTagSet", 404)
}

// TestTaggingRaw: what the SDK hides. The tagging bodies need Content-MD5
// or a checksum; a bad x-amz-tagging header; x-amz-tagging-count on the
// wire; each S3 error's message.
func TestTaggingRaw(t *testing.T) {
	s := startServer(t)
	createBucket(t, s.root(), "raw-tags")
	if r := s.signed(t, "PUT", "/raw-tags/obj", []byte("x"), "X-Amz-Tagging", "a=1&b=2"); r.status != 200 {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	if r := s.signed(t, "HEAD", "/raw-tags/obj", nil); r.header.Get("X-Amz-Tagging-Count") != "2" {
		t.Fatalf("HEAD x-amz-tagging-count %q", r.header.Get("X-Amz-Tagging-Count"))
	}
	doc := []byte(`<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>`)
	for _, c := range []struct {
		method, path string
		body         []byte
		hdr          []string
		status       int
		code, msg    string
	}{
		{"PUT", "/raw-tags/obj?tagging", doc, nil, 400, "InvalidRequest", "Content-MD5"},
		{"PUT", "/raw-tags?tagging", doc, nil, 400, "InvalidRequest", "Content-MD5"},
		{"PUT", "/raw-tags/new", []byte("x"), []string{"X-Amz-Tagging", "a=%zz"}, 400, "InvalidArgument", "URLEncoded URL query parameters"},
		{"PUT", "/raw-tags/new", []byte("x"), []string{"X-Amz-Tagging", "aws:a=1"}, 400, "InvalidTag", "Your TagKey cannot be prefixed with aws:"},
		{"PUT", "/raw-tags/new", []byte("x"), []string{"X-Amz-Tagging", strings.Repeat("k=v&", 5) + "a=1&b=1&c=1&d=1&e=1&f=1&g=1&h=1&i=1&j=1&l=1"}, 400, "InvalidArgument", "without tag name duplicates"},
		{"PUT", "/raw-tags/new", []byte("x"), []string{"X-Amz-Tagging", "a=1&b=1&c=1&d=1&e=1&f=1&g=1&h=1&i=1&j=1&l=1"}, 400, "BadRequest", "Object tags cannot be greater than 10"},
		{"PUT", "/raw-tags/obj2", nil, []string{"X-Amz-Copy-Source", "/raw-tags/obj", "X-Amz-Tagging-Directive", "MERGE"}, 400, "InvalidArgument", "Unknown tagging directive."},
		{"GET", "/raw-tags?tagging", nil, nil, 404, "NoSuchTagSet", "The TagSet does not exist"},
	} {
		r := s.signed(t, c.method, c.path, c.body, c.hdr...)
		if r.status != c.status || r.code() != c.code || !strings.Contains(r.body, c.msg) {
			t.Fatalf("%s %s %v: %d %s, want %d %s (%q)", c.method, c.path, c.hdr, r.status, r.body, c.status, c.code, c.msg)
		}
	}
	if r := s.signed(t, "HEAD", "/raw-tags/new", nil); r.status != 404 {
		t.Fatalf("a refused PUT stored the object: %d", r.status)
	}
}

// TestTaggingMinioGo: minio-go's tagging calls and a browser form upload
// with a tagging field (minio-go's PostPolicy.SetTagging).
func TestTaggingMinioGo(t *testing.T) {
	s := startServer(t)
	mc, err := minio.New(strings.TrimPrefix(s.endpoint, "http://"), &minio.Options{
		Creds: mcreds.NewStaticV4(rootUser, rootPass, ""), Region: region})
	if err != nil {
		t.Fatal(err)
	}
	const b = "minio-tags"
	if err := mc.MakeBucket(ctx(t), b, minio.MakeBucketOptions{Region: region}); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.PutObject(ctx(t), b, "obj", strings.NewReader("data"), 4, minio.PutObjectOptions{
		UserTags: map[string]string{"from": "minio-go", "n": "1"}}); err != nil {
		t.Fatal(err)
	}
	got, err := mc.GetObjectTagging(ctx(t), b, "obj", minio.GetObjectTaggingOptions{})
	if err != nil || !maps.Equal(got.ToMap(), map[string]string{"from": "minio-go", "n": "1"}) {
		t.Fatalf("GetObjectTagging: %v %v", got, err)
	}
	ot, err := tags.NewTags(map[string]string{"replaced": "yes"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := mc.PutObjectTagging(ctx(t), b, "obj", ot, minio.PutObjectTaggingOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := mc.StatObject(ctx(t), b, "obj", minio.StatObjectOptions{})
	if err != nil || st.UserTagCount != 1 {
		t.Fatalf("StatObject tag count: %d %v", st.UserTagCount, err)
	}
	if err := mc.RemoveObjectTagging(ctx(t), b, "obj", minio.RemoveObjectTaggingOptions{}); err != nil {
		t.Fatal(err)
	}
	bt, err := tags.NewTags(map[string]string{"env": "test"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := mc.SetBucketTagging(ctx(t), b, bt); err != nil {
		t.Fatal(err)
	}
	if got, err := mc.GetBucketTagging(ctx(t), b); err != nil || got.ToMap()["env"] != "test" {
		t.Fatalf("GetBucketTagging: %v %v", got, err)
	}
	if err := mc.RemoveBucketTagging(ctx(t), b); err != nil {
		t.Fatal(err)
	}

	// A form upload whose policy names its tagging field.
	p := minio.NewPostPolicy()
	p.SetBucket(b)
	p.SetKey("form.txt")
	p.SetExpires(time.Now().UTC().Add(time.Hour))
	if err := p.SetTagging(`<Tagging><TagSet><Tag><Key>via</Key><Value>form</Value></Tag></TagSet></Tagging>`); err != nil {
		t.Fatal(err)
	}
	u, formData, err := mc.PresignedPostPolicy(ctx(t), p)
	if err != nil {
		t.Fatal(err)
	}
	var fields []formField
	for k, v := range formData {
		fields = append(fields, formField{k, v})
	}
	res := postForm(t, u.String(), fields, "file", "form.txt", []byte("form data"))
	if res.StatusCode != http.StatusNoContent {
		body, _ := io.ReadAll(res.Body)
		t.Fatalf("POST: %d %s", res.StatusCode, body)
	}
	if got, err := mc.GetObjectTagging(ctx(t), b, "form.txt", minio.GetObjectTaggingOptions{}); err != nil || got.ToMap()["via"] != "form" {
		t.Fatalf("form upload tags: %v %v", got, err)
	}
}
