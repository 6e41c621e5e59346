package e2e

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"
	mcreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/shardstore/shardstore/internal/auth"
)

// formField is one field of a browser form, in order.
type formField struct{ name, value string }

// postForm sends a multipart/form-data POST to the bucket URL: fields in
// order, then the file part (named fileField), then trailing fields,
// which S3 ignores.
func postForm(t *testing.T, bucketURL string, fields []formField, fileField, filename string, file []byte, trailing ...formField) *http.Response {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := w.WriteField(f.name, f.value); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := w.CreateFormFile(fileField, filename)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(file)
	for _, f := range trailing {
		w.WriteField(f.name, f.value)
	}
	w.Close()
	req, err := http.NewRequest(http.MethodPost, bucketURL, &buf)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	return doNoRedirect(t, req)
}

func doNoRedirect(t *testing.T, req *http.Request) *http.Response {
	t.Helper()
	c := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// signedFields signs conditions for id and returns the form's fields:
// the given ones first (key ...), then the policy and signature.
func signedFields(t *testing.T, id auth.Identity, expires time.Time, conditions []any, fields ...formField) []formField {
	t.Helper()
	a, err := auth.SignPostPolicy(id, region, time.Now(), expires, conditions)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]formField{}, fields...)
	for _, k := range []string{"policy", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature"} {
		out = append(out, formField{k, a[k]})
	}
	return out
}

// wantPostError checks an S3 error answer.
func wantPostError(t *testing.T, res *http.Response, status int, code, msgPart string) {
	t.Helper()
	body, _ := io.ReadAll(res.Body)
	var e struct{ Code, Message string }
	xml.Unmarshal(body, &e)
	if res.StatusCode != status || e.Code != code || !strings.Contains(e.Message, msgPart) {
		t.Fatalf("got %d %s %q, want %d %s containing %q; body %s", res.StatusCode, e.Code, e.Message, status, code, msgPart, body)
	}
}

func wantNoObject(t *testing.T, c *s3.Client, bucket, key string) {
	t.Helper()
	_, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	var nf *types.NotFound
	if !errors.As(err, &nf) {
		t.Fatalf("%s/%s: want no object, got %v", bucket, key, err)
	}
}

// TestPostObjectMinioGo: minio-go's PresignedPostPolicy, the form a web
// page would post, with metadata, a content type, a size range and a
// CRC32C checksum; the object is private, as S3 makes it by default.
func TestPostObjectMinioGo(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "forms")
	mc, err := minio.New(strings.TrimPrefix(s.endpoint, "http://"), &minio.Options{
		Creds: mcreds.NewStaticV4(rootUser, rootPass, ""), Region: region})
	if err != nil {
		t.Fatal(err)
	}
	data := pattern(33<<10, 7)
	p := minio.NewPostPolicy()
	p.SetBucket("forms")
	p.SetKey("photos/cat.bin")
	p.SetExpires(time.Now().UTC().Add(time.Hour))
	p.SetContentType("binary/octet-stream")
	p.SetContentLengthRange(10, 1<<20)
	p.SetUserMetadata("origin", "browser")
	sum := minio.ChecksumCRC32C.ChecksumBytes(data)
	if err := p.SetChecksum(sum); err != nil {
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
	res := postForm(t, u.String(), fields, "file", "cat.bin", data)
	if res.StatusCode != http.StatusNoContent {
		body, _ := io.ReadAll(res.Body)
		t.Fatalf("POST: %d %s", res.StatusCode, body)
	}
	if got, want := res.Header.Get("Location"), s.endpoint+"/forms/photos/cat.bin"; got != want {
		t.Fatalf("Location %q, want %q", got, want)
	}
	if res.Header.Get("X-Amz-Checksum-Crc32c") != sum.Encoded() || res.Header.Get("ETag") == "" {
		t.Fatalf("response headers %v", res.Header)
	}
	got, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("forms"), Key: aws.String("photos/cat.bin"),
		ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	if b := mustRead(t, got.Body); !bytes.Equal(b, data) {
		t.Fatal("stored bytes differ")
	}
	if aws.ToString(got.ContentType) != "binary/octet-stream" || got.Metadata["origin"] != "browser" ||
		aws.ToString(got.ChecksumCRC32C) != sum.Encoded() {
		t.Fatalf("stored object: type %q meta %v crc32c %q", aws.ToString(got.ContentType), got.Metadata, aws.ToString(got.ChecksumCRC32C))
	}
	anon, err := http.Get(s.endpoint + "/forms/photos/cat.bin")
	if err != nil {
		t.Fatal(err)
	}
	anon.Body.Close()
	if anon.StatusCode != http.StatusForbidden {
		t.Fatalf("anonymous GET of a form upload: %d, want 403 (private by default)", anon.StatusCode)
	}
}

// TestPostObjectAnswers: success_action_status 201 and 200, a redirect,
// ${filename} in the key, fields after the file ignored.
func TestPostObjectAnswers(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "answers")
	root := auth.Identity{AccessKey: rootUser, SecretKey: rootPass}
	bucketURL := s.endpoint + "/answers"
	exp := time.Now().Add(time.Hour)

	fields := signedFields(t, root, exp, []any{
		map[string]string{"bucket": "answers"}, []any{"starts-with", "$key", "uploads/"},
		map[string]string{"success_action_status": "201"},
	}, formField{"key", "uploads/${filename}"}, formField{"success_action_status", "201"})
	res := postForm(t, bucketURL, fields, "file", "report final.pdf", []byte("pdf bytes"), formField{"submit", "Upload"})
	body, _ := io.ReadAll(res.Body)
	var pr struct {
		XMLName                     xml.Name `xml:"PostResponse"`
		Location, Bucket, Key, ETag string
	}
	if err := xml.Unmarshal(body, &pr); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("201 answer: %d %s (%v)", res.StatusCode, body, err)
	}
	if pr.Bucket != "answers" || pr.Key != "uploads/report final.pdf" || pr.ETag != res.Header.Get("ETag") ||
		pr.Location != bucketURL+"/uploads/report%20final.pdf" {
		t.Fatalf("PostResponse %+v", pr)
	}
	got, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("answers"), Key: aws.String("uploads/report final.pdf")})
	if err != nil {
		t.Fatal(err)
	}
	if b := mustRead(t, got.Body); string(b) != "pdf bytes" || aws.ToString(got.ETag) != pr.ETag {
		t.Fatalf("stored %q etag %s", b, aws.ToString(got.ETag))
	}

	fields = signedFields(t, root, exp, []any{
		[]any{"eq", "$key", "r"}, []any{"starts-with", "$success_action_redirect", "https://app.example/"},
	}, formField{"key", "r"}, formField{"success_action_redirect", "https://app.example/done?x=1"})
	res = postForm(t, bucketURL, fields, "file", "f", []byte("redirected"))
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || err != nil {
		t.Fatalf("redirect answer %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if q := loc.Query(); loc.Host != "app.example" || q.Get("x") != "1" || q.Get("bucket") != "answers" || q.Get("key") != "r" ||
		q.Get("etag") != res.Header.Get("ETag") {
		t.Fatalf("redirect to %s", loc)
	}

	fields = signedFields(t, root, exp, []any{[]any{"eq", "$key", "ok200"}, map[string]string{"success_action_status": "200"}},
		formField{"key", "ok200"}, formField{"success_action_status", "200"})
	res = postForm(t, bucketURL, fields, "file", "f", []byte("x"))
	if b, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusOK || len(b) != 0 {
		t.Fatalf("200 answer: %d %q", res.StatusCode, b)
	}
}

// TestPostObjectRefusals: each policy violation answers S3's error and
// stores nothing; an object already under the key keeps its bytes.
func TestPostObjectRefusals(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "guarded")
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("guarded"), Key: aws.String("in/keep"),
		Body: bytes.NewReader([]byte("original"))}); err != nil {
		t.Fatal(err)
	}
	root := auth.Identity{AccessKey: rootUser, SecretKey: rootPass}
	bucketURL := s.endpoint + "/guarded"
	exp := time.Now().Add(time.Hour)
	inPrefix := []any{map[string]string{"bucket": "guarded"}, []any{"starts-with", "$key", "in/"}, []any{"content-length-range", 4, 64}}

	check := func(name string, res *http.Response, status int, code, msg string) {
		t.Helper()
		t.Run(name, func(t *testing.T) { wantPostError(t, res, status, code, msg) })
	}
	check("too large", postForm(t, bucketURL, signedFields(t, root, exp, inPrefix, formField{"key", "in/keep"}), "file", "f", pattern(65, 1)),
		400, "EntityTooLarge", "exceeds the maximum allowed size")
	check("too small", postForm(t, bucketURL, signedFields(t, root, exp, inPrefix, formField{"key", "in/keep"}), "file", "f", []byte("abc")),
		400, "EntityTooSmall", "smaller than the minimum")
	check("key outside the policy", postForm(t, bucketURL, signedFields(t, root, exp, inPrefix, formField{"key", "out/x"}), "file", "f", []byte("abcd")),
		403, "AccessDenied", `Policy Condition failed: ["starts-with", "$key", "in/"]`)
	check("field the policy does not name", postForm(t, bucketURL,
		signedFields(t, root, exp, inPrefix, formField{"key", "in/keep"}, formField{"acl", "public-read-write"}), "file", "f", []byte("abcd")),
		403, "AccessDenied", "Extra input fields: acl")
	check("expired", postForm(t, bucketURL, signedFields(t, root, time.Now().Add(-time.Minute), inPrefix, formField{"key", "in/keep"}), "file", "f", []byte("abcd")),
		403, "AccessDenied", "Policy expired")
	check("wrong secret", postForm(t, bucketURL,
		signedFields(t, auth.Identity{AccessKey: rootUser, SecretKey: "not-the-password"}, exp, inPrefix, formField{"key", "in/keep"}), "file", "f", []byte("abcd")),
		403, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method.")
	check("other user's bucket", postForm(t, bucketURL,
		signedFields(t, auth.Identity{AccessKey: bobUser, SecretKey: bobPass}, exp, inPrefix, formField{"key", "in/keep"}), "file", "f", []byte("abcd")),
		403, "AccessDenied", "Access Denied")
	check("anonymous to a private bucket", postForm(t, bucketURL, []formField{{"key", "in/keep"}}, "file", "f", []byte("abcd")),
		403, "AccessDenied", "Access Denied")
	check("wrong checksum", postForm(t, bucketURL, signedFields(t, root, exp,
		append(inPrefix, []any{"starts-with", "$x-amz-checksum-crc32", ""}), formField{"key", "in/keep"}, formField{"x-amz-checksum-crc32", "AAAAAA=="}),
		"file", "f", []byte("abcd")), 400, "BadDigest", "")
	check("no key", postForm(t, bucketURL, signedFields(t, root, exp, inPrefix), "file", "f", []byte("abcd")),
		400, "InvalidArgument", "must contain a field named 'key'")
	check("file field unnamed", postForm(t, bucketURL, signedFields(t, root, exp, inPrefix, formField{"key", "in/keep"}), "", "f", []byte("abcd")),
		400, "MalformedPOSTRequest", "not well-formed")

	// A body cut inside the file part.
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, f := range signedFields(t, root, exp, inPrefix, formField{"key", "in/keep"}) {
		w.WriteField(f.name, f.value)
	}
	fw, _ := w.CreateFormFile("file", "f")
	fw.Write([]byte("0123456789"))
	req, _ := http.NewRequest(http.MethodPost, bucketURL, bytes.NewReader(buf.Bytes()))
	req.Header.Set("Content-Type", w.FormDataContentType())
	check("body cut short", doNoRedirect(t, req), 400, "IncompleteBody", "")

	req, _ = http.NewRequest(http.MethodPost, bucketURL, strings.NewReader("key=in/keep"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	check("not multipart", doNoRedirect(t, req), 412, "PreconditionFailed", "multipart/form-data")

	got, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("guarded"), Key: aws.String("in/keep")})
	if err != nil {
		t.Fatal(err)
	}
	if b := mustRead(t, got.Body); string(b) != "original" {
		t.Fatalf("refused uploads changed the object: %q", b)
	}
	wantNoObject(t, c, "guarded", "out/x")
}

// TestPostObjectAnonymousPublicBucket: a public-read-write bucket takes
// anonymous form uploads without a policy, as S3 does.
func TestPostObjectAnonymousPublicBucket(t *testing.T) {
	s := startServer(t)
	c := s.root()
	if _, err := c.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("dropbox"), ACL: types.BucketCannedACLPublicReadWrite}); err != nil {
		t.Fatal(err)
	}
	data := []byte("anonymous drop")
	res := postForm(t, s.endpoint+"/dropbox", []formField{{"key", "drop/${filename}"}, {"Content-Type", "text/plain"}, {"x-amz-meta-from", "web"}},
		"file", "note.txt", data)
	if res.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("anonymous POST: %d %s", res.StatusCode, b)
	}
	got, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("dropbox"), Key: aws.String("drop/note.txt")})
	if err != nil {
		t.Fatal(err)
	}
	if b := mustRead(t, got.Body); !bytes.Equal(b, data) || aws.ToString(got.ContentType) != "text/plain" || got.Metadata["from"] != "web" {
		t.Fatalf("stored %q type %q meta %v", b, aws.ToString(got.ContentType), got.Metadata)
	}
}
