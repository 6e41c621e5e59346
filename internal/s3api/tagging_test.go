package s3api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"hash/crc32"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/engine"
)

// taggingDoc is a Tagging document of key/value pairs, in order.
func taggingDoc(kv ...string) string {
	var b strings.Builder
	b.WriteString(`<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet>`)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, "<Tag><Key>%s</Key><Value>%s</Value></Tag>", xmlEscape(kv[i]), xmlEscape(kv[i+1]))
	}
	b.WriteString("</TagSet></Tagging>")
	return b.String()
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// numberedTags is n distinct key/value pairs.
func numberedTags(n int) []string {
	var kv []string
	for i := range n {
		kv = append(kv, fmt.Sprintf("key%02d", i), fmt.Sprintf("value%d", i))
	}
	return kv
}

// putTagging sends a Tagging document to target with its Content-MD5.
func (h *harness) putTagging(user, target, doc string, hdr ...string) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.do(user, "PUT", target, []byte(doc), append([]string{"Content-MD5", md5b64(doc)}, hdr...)...)
}

// expectError checks an error answer's status, code and message.
func (h *harness) expectError(rec *httptest.ResponseRecorder, status int, code, message string) {
	h.t.Helper()
	h.expect(rec, status, code)
	var e xmlError
	if err := xml.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Message != message {
		h.t.Fatalf("message %q, want %q (%v)", e.Message, message, err)
	}
}

// tagsOf reads target's tag set (GetObjectTagging or GetBucketTagging)
// as user.
func (h *harness) tagsOf(user, target string) map[string]string {
	h.t.Helper()
	rec := h.do(user, "GET", target, nil)
	h.expect(rec, 200, "")
	var doc struct {
		XMLName xml.Name `xml:"Tagging"`
		TagSet  *struct {
			Tags []xmlTag `xml:"Tag"`
		} `xml:"TagSet"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil || doc.TagSet == nil {
		h.t.Fatalf("tagging answer %q: %v (TagSet must be present, empty or not)", rec.Body.String(), err)
	}
	if !strings.Contains(rec.Body.String(), `xmlns="`+s3NS+`"`) {
		h.t.Fatalf("tagging answer without S3's namespace: %s", rec.Body.String())
	}
	out := map[string]string{}
	for i, t := range doc.TagSet.Tags {
		if i > 0 && doc.TagSet.Tags[i-1].Key >= t.Key {
			h.t.Fatalf("tags not in key order: %s", rec.Body.String())
		}
		out[t.Key] = t.Value
	}
	return out
}

func wantTags(t *testing.T, what string, got map[string]string, kv ...string) {
	t.Helper()
	want := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		want[kv[i]] = kv[i+1]
	}
	if !maps.Equal(got, want) {
		t.Fatalf("%s: tags %v, want %v", what, got, want)
	}
}

// TestObjectTagging: Put/Get/DeleteObjectTagging store, show and remove
// an object's tags without changing its version; every S3 limit and
// error; x-amz-tagging-count on GET and HEAD.
func TestObjectTagging(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/tgb", nil), 200, "")
	put := h.do("alice", "PUT", "/tgb/obj", []byte("payload"))
	h.expect(put, 200, "")
	head := h.do("alice", "HEAD", "/tgb/obj", nil)
	wantTags(t, "new object", h.tagsOf("alice", "/tgb/obj?tagging"))
	if v := head.Header().Get("X-Amz-Tagging-Count"); v != "" {
		t.Fatalf("untagged object answers x-amz-tagging-count %q", v)
	}

	h.expect(h.putTagging("alice", "/tgb/obj?tagging", taggingDoc("b", "2", "a", "1", "empty", "")), 200, "")
	wantTags(t, "after PutObjectTagging", h.tagsOf("alice", "/tgb/obj?tagging"), "a", "1", "b", "2", "empty", "")
	for _, method := range []string{"HEAD", "GET"} {
		rec := h.do("alice", method, "/tgb/obj", nil)
		h.expect(rec, 200, "")
		if got := rec.Header().Get("X-Amz-Tagging-Count"); got != "3" {
			t.Fatalf("%s x-amz-tagging-count %q, want 3", method, got)
		}
		// Tagging is not a new version: same ETag and Last-Modified.
		for _, name := range []string{"ETag", "Last-Modified"} {
			if rec.Header().Get(name) != head.Header().Get(name) {
				t.Fatalf("%s %s changed by PutObjectTagging: %q, was %q", method, name, rec.Header().Get(name), head.Header().Get(name))
			}
		}
	}
	// GetObjectAttributes is not about tags.
	rec := h.do("alice", "GET", "/tgb/obj?attributes", nil, "X-Amz-Object-Attributes", "ETag")
	h.expect(rec, 200, "")
	if rec.Header().Get("X-Amz-Tagging-Count") != "" {
		t.Fatal("GetObjectAttributes answered x-amz-tagging-count")
	}

	// A body needs Content-MD5 or a checksum, and must match it.
	doc := taggingDoc("k", "v")
	h.expect(h.do("alice", "PUT", "/tgb/obj?tagging", []byte(doc)), 400, "InvalidRequest")
	h.expect(h.do("alice", "PUT", "/tgb/obj?tagging", []byte(doc), "Content-MD5", md5b64("other")), 400, "BadDigest")
	sum := make([]byte, 4)
	binary.BigEndian.PutUint32(sum, crc32.ChecksumIEEE([]byte(doc)))
	h.expect(h.do("alice", "PUT", "/tgb/obj?tagging", []byte(doc), "X-Amz-Checksum-Crc32", base64.StdEncoding.EncodeToString(sum)), 200, "")
	wantTags(t, "tags put with a checksum", h.tagsOf("alice", "/tgb/obj?tagging"), "k", "v")

	// Every refusal leaves the tags as they were.
	astral := "\U00010400" // two UTF-16 units, as S3 counts
	for _, c := range []struct {
		name          string
		body          string
		status        int
		code, message string
	}{
		{"not XML", "<Tagging><TagSet>", 400, "MalformedXML", errMalformedXML().Message},
		{"another document", "<Other/>", 400, "MalformedXML", errMalformedXML().Message},
		{"no TagSet", "<Tagging></Tagging>", 400, "MalformedXML", errMalformedXML().Message},
		{"a Tag without Value", "<Tagging><TagSet><Tag><Key>k</Key></Tag></TagSet></Tagging>", 400, "MalformedXML", errMalformedXML().Message},
		{"a Tag without Key", "<Tagging><TagSet><Tag><Value>v</Value></Tag></TagSet></Tagging>", 400, "MalformedXML", errMalformedXML().Message},
		{"11 tags", taggingDoc(numberedTags(11)...), 400, "BadRequest", "Object tags cannot be greater than 10"},
		{"an empty key", taggingDoc("", "v"), 400, "InvalidTag", "The TagKey you have provided is invalid"},
		{"a 129-character key", taggingDoc(strings.Repeat("k", 129), "v"), 400, "InvalidTag", "The TagKey you have provided is invalid"},
		{"a key of 65 astral characters", taggingDoc(strings.Repeat(astral, 65), "v"), 400, "InvalidTag", "The TagKey you have provided is invalid"},
		{"a 257-character value", taggingDoc("k", strings.Repeat("v", 257)), 400, "InvalidTag", "The TagValue you have provided is invalid"},
		{"a key with !", taggingDoc("k!", "v"), 400, "InvalidTag", "The TagKey you have provided is invalid"},
		{"a value with a tab", taggingDoc("k", "a\tb"), 400, "InvalidTag", "The TagValue you have provided is invalid"},
		{"a duplicate key", taggingDoc("k", "1", "k", "2"), 400, "InvalidTag", "Cannot provide multiple Tags with the same key"},
		{"a system key", taggingDoc("aws:createdBy", "me"), 400, "InvalidTag", "Your TagKey cannot be prefixed with aws:"},
	} {
		h.expectError(h.putTagging("alice", "/tgb/obj?tagging", c.body), c.status, c.code, c.message)
		wantTags(t, "after refused "+c.name, h.tagsOf("alice", "/tgb/obj?tagging"), "k", "v")
	}
	// The limits themselves are allowed.
	tenTags := numberedTags(10)
	h.expect(h.putTagging("alice", "/tgb/obj?tagging", taggingDoc(tenTags...)), 200, "")
	wantTags(t, "10 tags", h.tagsOf("alice", "/tgb/obj?tagging"), tenTags...)
	long := []string{strings.Repeat("k", 128), strings.Repeat("v", 256), strings.Repeat(astral, 64), strings.Repeat(astral, 128),
		"ключ значение", "Ⅷ+-=._:/@", "aws-ok", "x:aws:y"}
	h.expect(h.putTagging("alice", "/tgb/obj?tagging", taggingDoc(long...)), 200, "")
	wantTags(t, "tags at the limits", h.tagsOf("alice", "/tgb/obj?tagging"), long...)

	// Versions: in an unversioned bucket "null" names the only one; a
	// version id the store cannot read is InvalidArgument.
	h.expect(h.putTagging("alice", "/tgb/obj?tagging&versionId=null", taggingDoc("v", "null")), 200, "")
	wantTags(t, "versionId=null", h.tagsOf("alice", "/tgb/obj?tagging&versionId=null"), "v", "null")
	h.expectError(h.do("alice", "GET", "/tgb/obj?tagging&versionId=3HL4kqtJlcpXroDTDmJ", nil), 400, "InvalidArgument", "Invalid version id specified")
	h.expect(h.putTagging("alice", "/tgb/obj?tagging&versionId=3HL4kqtJlcpXroDTDmJ", taggingDoc("x", "y")), 400, "InvalidArgument")
	h.expect(h.do("alice", "DELETE", "/tgb/obj?tagging&versionId=3HL4kqtJlcpXroDTDmJ", nil), 400, "InvalidArgument")

	// Missing objects and buckets.
	h.expect(h.do("alice", "GET", "/tgb/missing?tagging", nil), 404, "NoSuchKey")
	h.expect(h.putTagging("alice", "/tgb/missing?tagging", doc), 404, "NoSuchKey")
	h.expect(h.do("alice", "DELETE", "/tgb/missing?tagging", nil), 404, "NoSuchKey")
	h.expect(h.do("alice", "GET", "/nobucket/obj?tagging", nil), 404, "NoSuchBucket")

	// An empty tag set removes the tags; so does DeleteObjectTagging.
	h.expect(h.putTagging("alice", "/tgb/obj?tagging", taggingDoc()), 200, "")
	wantTags(t, "empty TagSet", h.tagsOf("alice", "/tgb/obj?tagging"))
	h.expect(h.putTagging("alice", "/tgb/obj?tagging", doc), 200, "")
	h.expect(h.do("alice", "DELETE", "/tgb/obj?tagging", nil), 204, "")
	wantTags(t, "after DeleteObjectTagging", h.tagsOf("alice", "/tgb/obj?tagging"))
	if rec := h.do("alice", "HEAD", "/tgb/obj", nil); rec.Header().Get("X-Amz-Tagging-Count") != "" {
		t.Fatal("x-amz-tagging-count after DeleteObjectTagging")
	}
	h.expect(h.do("alice", "DELETE", "/tgb/obj?tagging", nil), 204, "")
	// The object itself is untouched by all of it.
	if rec := h.do("alice", "GET", "/tgb/obj", nil); rec.Body.String() != "payload" {
		t.Fatalf("object after tagging: %q", rec.Body.String())
	}
}

// TestTaggingOnWrite: x-amz-tagging on PutObject and
// CreateMultipartUpload, the copy directive, and a form's tagging field.
func TestTaggingOnWrite(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/wrb", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/wrb/a", []byte("a"), "X-Amz-Tagging", "project=blue&empty=&bare&sp%20ace=a+b&%D0%BA=%E2%85%A7"), 200, "")
	wantTags(t, "PutObject", h.tagsOf("alice", "/wrb/a?tagging"), "project", "blue", "empty", "", "bare", "", "sp ace", "a b", "к", "Ⅷ")
	if rec := h.do("alice", "HEAD", "/wrb/a", nil); rec.Header().Get("X-Amz-Tagging-Count") != "5" {
		t.Fatalf("x-amz-tagging-count %q", rec.Header().Get("X-Amz-Tagging-Count"))
	}
	h.expect(h.do("alice", "PUT", "/wrb/empty", []byte("e"), "X-Amz-Tagging", ""), 200, "")
	wantTags(t, "empty header", h.tagsOf("alice", "/wrb/empty?tagging"))

	badHeader := errBadTaggingHeader().Message
	for _, c := range []struct {
		header        string
		status        int
		code, message string
	}{
		{"a=%zz", 400, "InvalidArgument", badHeader},
		{"a=1&a=2", 400, "InvalidArgument", badHeader},
		{"a=%ff", 400, "InvalidArgument", badHeader},
		{"a=1;b=2", 400, "InvalidArgument", badHeader},
		{strings.Join(func() []string {
			var kv []string
			for i := range 11 {
				kv = append(kv, fmt.Sprintf("k%d=v", i))
			}
			return kv
		}(), "&"), 400, "BadRequest", "Object tags cannot be greater than 10"},
		{"aws:owner=me", 400, "InvalidTag", "Your TagKey cannot be prefixed with aws:"},
		{"k%21=v", 400, "InvalidTag", "The TagKey you have provided is invalid"},
		{"=v", 400, "InvalidTag", "The TagKey you have provided is invalid"},
		{"k=" + strings.Repeat("v", 257), 400, "InvalidTag", "The TagValue you have provided is invalid"},
	} {
		for _, target := range []string{"/wrb/refused", "/wrb/refused?uploads"} {
			method := "PUT"
			var body []byte = []byte("x")
			if strings.HasSuffix(target, "?uploads") {
				method, body = "POST", nil
			}
			h.expectError(h.do("alice", method, target, body, "X-Amz-Tagging", c.header), c.status, c.code, c.message)
		}
		h.expect(h.do("alice", "HEAD", "/wrb/refused", nil), 404, "")
	}

	// A multipart upload keeps its creation's tags for the object.
	rec := h.do("alice", "POST", "/wrb/mp?uploads", nil, "X-Amz-Tagging", "stage=upload")
	h.expect(rec, 200, "")
	var init xmlInitiateMultipart
	if err := xml.Unmarshal(rec.Body.Bytes(), &init); err != nil {
		t.Fatal(err)
	}
	part := h.do("alice", "PUT", "/wrb/mp?partNumber=1&uploadId="+init.UploadID, []byte("part"))
	h.expect(part, 200, "")
	complete := fmt.Sprintf("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>", part.Header().Get("ETag"))
	h.expect(h.do("alice", "POST", "/wrb/mp?uploadId="+init.UploadID, []byte(complete)), 200, "")
	wantTags(t, "completed upload", h.tagsOf("alice", "/wrb/mp?tagging"), "stage", "upload")

	// Copies keep the source's tags unless the directive is REPLACE.
	for _, c := range []struct {
		dst       string
		hdr       []string
		wantPairs []string
	}{
		{"/wrb/c1", nil, []string{"stage", "upload"}},
		{"/wrb/c2", []string{"X-Amz-Tagging-Directive", "COPY", "X-Amz-Tagging", "ignored=yes"}, []string{"stage", "upload"}},
		{"/wrb/c3", []string{"X-Amz-Tagging-Directive", "REPLACE", "X-Amz-Tagging", "new=1&other=2"}, []string{"new", "1", "other", "2"}},
		{"/wrb/c4", []string{"X-Amz-Tagging-Directive", "REPLACE"}, nil},
	} {
		h.expect(h.do("alice", "PUT", c.dst, nil, append([]string{"X-Amz-Copy-Source", "/wrb/mp"}, c.hdr...)...), 200, "")
		wantTags(t, "copy to "+c.dst, h.tagsOf("alice", c.dst+"?tagging"), c.wantPairs...)
	}
	h.expectError(h.do("alice", "PUT", "/wrb/c5", nil, "X-Amz-Copy-Source", "/wrb/mp", "X-Amz-Tagging-Directive", "replace"),
		400, "InvalidArgument", "Unknown tagging directive.")
	h.expect(h.do("alice", "PUT", "/wrb/c5", nil, "X-Amz-Copy-Source", "/wrb/mp", "X-Amz-Tagging-Directive", "REPLACE",
		"X-Amz-Tagging", "aws:x=1"), 400, "InvalidTag")
	h.expect(h.do("alice", "HEAD", "/wrb/c5", nil), 404, "")
	// In place, with new metadata and new tags.
	h.expect(h.do("alice", "PUT", "/wrb/c3", nil, "X-Amz-Copy-Source", "/wrb/c3", "X-Amz-Metadata-Directive", "REPLACE",
		"X-Amz-Tagging-Directive", "REPLACE", "X-Amz-Tagging", "in=place"), 200, "")
	wantTags(t, "in-place copy", h.tagsOf("alice", "/wrb/c3?tagging"), "in", "place")
}

// formAuth is testAuth for requests, and for form uploads the caller the
// form's x-test-user field names.
type formAuth struct{}

func (formAuth) Authenticate(r *http.Request) (*AuthResult, error) { return testAuth(r) }

func (formAuth) AuthenticatePost(form auth.PostForm) (*PostAuthResult, error) {
	return &PostAuthResult{Caller: Caller{AccessKey: form["x-test-user"]}, MaxLength: -1}, nil
}

// postForm sends a form upload of fields (in order) and a file to bucket.
func (h *harness) postForm(bucket string, fields ...string) *httptest.ResponseRecorder {
	h.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for i := 0; i+1 < len(fields); i += 2 {
		_ = mw.WriteField(fields[i], fields[i+1])
	}
	fw, _ := mw.CreateFormFile("file", "f.txt")
	_, _ = fw.Write([]byte("form data"))
	_ = mw.Close()
	return h.do("", "POST", "/"+bucket, body.Bytes(), "Content-Type", mw.FormDataContentType())
}

// TestTaggingFormUpload: a form's tagging field is a Tagging document.
func TestTaggingFormUpload(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Auth = formAuth{} })
	h.expect(h.do("alice", "PUT", "/fmb", nil), 200, "")
	h.expect(h.postForm("fmb", "key", "tagged", "x-test-user", "alice", "tagging", taggingDoc("from", "form")), 204, "")
	wantTags(t, "form upload", h.tagsOf("alice", "/fmb/tagged?tagging"), "from", "form")
	h.expect(h.postForm("fmb", "key", "bad", "x-test-user", "alice", "tagging", "from=form"), 400, "MalformedXML")
	h.expect(h.postForm("fmb", "key", "bad", "x-test-user", "alice", "tagging", taggingDoc(numberedTags(11)...)), 400, "BadRequest")
	h.expect(h.postForm("fmb", "key", "bad", "x-test-user", "alice", "tagging", taggingDoc("aws:k", "v")), 400, "InvalidTag")
	h.expect(h.do("alice", "HEAD", "/fmb/bad", nil), 404, "")
	// A refused caller learns nothing about the tagging field.
	h.expect(h.postForm("fmb", "key", "bad", "x-test-user", "bob", "tagging", "not xml"), 403, "AccessDenied")
}

// TestBucketTagging: Put/Get/DeleteBucketTagging, S3's bucket limits and
// errors; only the bucket's owner (or a policy) may.
func TestBucketTagging(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/btb", nil, "X-Amz-Acl", "public-read-write"), 200, "")
	h.expectError(h.do("alice", "GET", "/btb?tagging", nil), 404, "NoSuchTagSet", "The TagSet does not exist")
	doc := taggingDoc("team", "storage", "cost-center", "42")
	h.expect(h.do("alice", "PUT", "/btb?tagging", []byte(doc)), 400, "InvalidRequest")
	h.expect(h.putTagging("alice", "/btb?tagging", doc), 204, "")
	wantTags(t, "bucket", h.tagsOf("alice", "/btb?tagging"), "team", "storage", "cost-center", "42")
	fifty := numberedTags(50)
	h.expect(h.putTagging("alice", "/btb?tagging", taggingDoc(fifty...)), 204, "")
	wantTags(t, "50 bucket tags", h.tagsOf("alice", "/btb?tagging"), fifty...)
	for _, c := range []struct {
		body          string
		code, message string
	}{
		{taggingDoc(numberedTags(51)...), "BadRequest", "Bucket tag count cannot be greater than 50"},
		{taggingDoc("aws:cloudformation:stack", "x"), "InvalidTag", "System tags cannot be added/updated by requester"},
		{taggingDoc("k", "1", "k", "1"), "InvalidTag", "Cannot provide multiple Tags with the same key"},
		{taggingDoc(strings.Repeat("k", 129), "v"), "InvalidTag", "The TagKey you have provided is invalid"},
		{taggingDoc("k", strings.Repeat("v", 257)), "InvalidTag", "The TagValue you have provided is invalid"},
		{"<Tagging/>", "MalformedXML", errMalformedXML().Message},
	} {
		h.expectError(h.putTagging("alice", "/btb?tagging", c.body), 400, c.code, c.message)
	}
	wantTags(t, "after refusals", h.tagsOf("alice", "/btb?tagging"), fifty...)
	// Bucket tags are the bucket owner's: bucket WRITE (public-read-write)
	// gives nothing; root may.
	h.expect(h.putTagging("bob", "/btb?tagging", doc), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/btb?tagging", nil), 403, "AccessDenied")
	h.expect(h.do("", "DELETE", "/btb?tagging", nil), 403, "AccessDenied")
	h.expect(h.putTagging("root", "/btb?tagging", doc), 204, "")
	h.expect(h.do("alice", "DELETE", "/btb?tagging", nil), 204, "")
	h.expect(h.do("alice", "GET", "/btb?tagging", nil), 404, "NoSuchTagSet")
	h.expect(h.do("alice", "DELETE", "/btb?tagging", nil), 204, "")
	h.expect(h.putTagging("alice", "/btb?tagging", taggingDoc()), 204, "")
	h.expect(h.do("alice", "GET", "/btb?tagging", nil), 404, "NoSuchTagSet")
	h.expect(h.do("alice", "GET", "/nobucket?tagging", nil), 404, "NoSuchBucket")
	// Bucket tags are not object tags.
	h.expect(h.do("alice", "PUT", "/btb/obj", []byte("x")), 200, "")
	h.expect(h.putTagging("alice", "/btb?tagging", doc), 204, "")
	wantTags(t, "object in a tagged bucket", h.tagsOf("alice", "/btb/obj?tagging"))
}

// TestTaggingACLAccess: without a policy only an object's owner reads and
// changes its tags; ACL grants (FULL_CONTROL included) give no tagging
// permission, and x-amz-tagging-count is shown only to who may read them.
func TestTaggingACLAccess(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/acl", nil, "X-Amz-Acl", "public-read-write"), 200, "")
	h.expect(h.do("alice", "PUT", "/acl/obj", []byte("x"), "X-Amz-Tagging", "a=1",
		"X-Amz-Grant-Full-Control", idOf("bob"), "X-Amz-Grant-Read", `uri="http://acs.amazonaws.com/groups/global/AllUsers"`), 200, "")
	h.expect(h.do("bob", "GET", "/acl/obj?acl", nil), 200, "") // bob's grant works for the ACL...
	h.expect(h.do("bob", "GET", "/acl/obj?tagging", nil), 403, "AccessDenied")
	h.expect(h.putTagging("bob", "/acl/obj?tagging", taggingDoc("b", "2")), 403, "AccessDenied")
	h.expect(h.do("bob", "DELETE", "/acl/obj?tagging", nil), 403, "AccessDenied")
	h.expect(h.do("", "GET", "/acl/obj?tagging", nil), 403, "AccessDenied")
	for _, user := range []string{"bob", ""} {
		rec := h.do(user, "GET", "/acl/obj", nil)
		h.expect(rec, 200, "")
		if rec.Header().Get("X-Amz-Tagging-Count") != "" {
			t.Fatalf("%q, who may not read the tags, got x-amz-tagging-count", user)
		}
	}
	for _, user := range []string{"alice", "root"} {
		if rec := h.do(user, "HEAD", "/acl/obj", nil); rec.Header().Get("X-Amz-Tagging-Count") != "1" {
			t.Fatalf("%s: x-amz-tagging-count %q", user, rec.Header().Get("X-Amz-Tagging-Count"))
		}
	}
	wantTags(t, "refused callers changed nothing", h.tagsOf("root", "/acl/obj?tagging"), "a", "1")
	// bob writes into alice's bucket (bucket WRITE) with tags: the object
	// and its tags are his, not the bucket owner's.
	h.expect(h.do("bob", "PUT", "/acl/bobs", []byte("b"), "X-Amz-Tagging", "by=bob"), 200, "")
	wantTags(t, "bob's object", h.tagsOf("bob", "/acl/bobs?tagging"), "by", "bob")
	h.expect(h.do("alice", "GET", "/acl/bobs?tagging", nil), 403, "AccessDenied")
	// A missing key: NoSuchKey only to who may list the bucket.
	h.expect(h.do("carol", "GET", "/acl/missing?tagging", nil), 404, "NoSuchKey")
	h.expect(h.do("alice", "PUT", "/private", nil), 200, "")
	h.expect(h.do("carol", "GET", "/private/missing?tagging", nil), 403, "AccessDenied")
	// With BucketOwnerEnforced the bucket owner owns, and tags, everything.
	h.expect(h.do("alice", "PUT", "/acl?acl", nil, "X-Amz-Acl", "private"), 200, "")
	h.expect(h.do("alice", "PUT", "/acl?ownershipControls",
		[]byte(`<OwnershipControls><Rule><ObjectOwnership>BucketOwnerEnforced</ObjectOwnership></Rule></OwnershipControls>`)), 200, "")
	h.expect(h.do("alice", "GET", "/acl/bobs?tagging", nil), 200, "")
}

// TestTaggingPolicies: the tagging actions and the tag condition keys in
// bucket policies, and s3:PutObjectTagging for writes that set tags.
func TestTaggingPolicies(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/pol", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/pol/public", []byte("p"), "X-Amz-Tagging", "Class=public"), 200, "")
	h.expect(h.do("alice", "PUT", "/pol/secret", []byte("s"), "X-Amz-Tagging", "Class=secret"), 200, "")
	h.expect(h.do("alice", "PUT", "/pol/plain", []byte("n")), 200, "")
	policyDoc := `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":{"AWS":"bob"},"Action":["s3:GetObject","s3:GetObjectTagging"],"Resource":"arn:aws:s3:::pol/*",
		 "Condition":{"StringEquals":{"s3:ExistingObjectTag/class":"public"}}},
		{"Effect":"Allow","Principal":{"AWS":"carol"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::pol/*",
		 "Condition":{"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["project","Class"]}}},
		{"Effect":"Allow","Principal":{"AWS":"carol"},"Action":"s3:PutObjectTagging","Resource":"arn:aws:s3:::pol/carol*",
		 "Condition":{"StringLike":{"s3:RequestObjectTag/project":"x-*"}}},
		{"Effect":"Deny","Principal":"*","Action":["s3:PutObjectTagging","s3:DeleteObjectTagging"],"Resource":"arn:aws:s3:::pol/*",
		 "Condition":{"StringEquals":{"s3:ExistingObjectTag/Class":"secret"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObjectTagging","Resource":"arn:aws:s3:::pol/*",
		 "Condition":{"StringEquals":{"s3:RequestObjectTag/Class":"top-secret"}}}]}`
	h.expect(h.do("alice", "PUT", "/pol?policy", []byte(policyDoc)), 204, "")

	// s3:ExistingObjectTag on reads: bob reads what is tagged public, and
	// sees its tag count; nothing else.
	rec := h.do("bob", "GET", "/pol/public", nil)
	h.expect(rec, 200, "")
	if rec.Header().Get("X-Amz-Tagging-Count") != "1" {
		t.Fatalf("bob may read the tags: x-amz-tagging-count %q", rec.Header().Get("X-Amz-Tagging-Count"))
	}
	wantTags(t, "bob reads public's tags", h.tagsOf("bob", "/pol/public?tagging"), "Class", "public")
	h.expect(h.do("bob", "GET", "/pol/secret", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/pol/plain", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/pol/secret?tagging", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "HEAD", "/pol/public", nil), 200, "")

	// s3:ExistingObjectTag on tag changes: a secret object's tags are
	// frozen, even for its owner.
	h.expect(h.putTagging("alice", "/pol/secret?tagging", taggingDoc("Class", "public")), 403, "AccessDenied")
	h.expect(h.do("alice", "DELETE", "/pol/secret?tagging", nil), 403, "AccessDenied")
	h.expect(h.putTagging("alice", "/pol/plain?tagging", taggingDoc("Class", "open")), 200, "")
	// s3:RequestObjectTag on PutObjectTagging (the body's tags) and on
	// PutObject (x-amz-tagging needs s3:PutObjectTagging too).
	h.expect(h.putTagging("alice", "/pol/plain?tagging", taggingDoc("Class", "top-secret")), 403, "AccessDenied")
	h.expect(h.do("alice", "PUT", "/pol/new", []byte("n"), "X-Amz-Tagging", "Class=top-secret"), 403, "AccessDenied")
	h.expect(h.do("alice", "HEAD", "/pol/new", nil), 404, "")
	h.expect(h.do("alice", "POST", "/pol/new?uploads", nil, "X-Amz-Tagging", "Class=top-secret"), 403, "AccessDenied")
	h.expect(h.do("alice", "PUT", "/pol/new", nil, "X-Amz-Copy-Source", "/pol/plain",
		"X-Amz-Tagging-Directive", "REPLACE", "X-Amz-Tagging", "Class=top-secret"), 403, "AccessDenied")
	h.expect(h.do("alice", "PUT", "/pol/new", []byte("n"), "X-Amz-Tagging", "Class=ok"), 200, "")
	wantTags(t, "plain", h.tagsOf("alice", "/pol/plain?tagging"), "Class", "open")

	// s3:RequestObjectTagKeys on PutObject: carol may write objects whose
	// tag keys are all listed (or that have none).
	h.expect(h.do("carol", "PUT", "/pol/c1", []byte("c"), "X-Amz-Tagging", "project=x-1&Class=public"), 200, "")
	h.expect(h.do("carol", "PUT", "/pol/c2", []byte("c")), 200, "")
	h.expect(h.do("carol", "PUT", "/pol/c3", []byte("c"), "X-Amz-Tagging", "project=x-1&owner=carol"), 403, "AccessDenied")
	h.expect(h.do("alice", "HEAD", "/pol/c3", nil), 404, "")
	// carol's PutObjectTagging grant: on keys carol*, with the project
	// tag the body sets matching x-*; she may not learn of missing keys.
	h.expect(h.putTagging("carol", "/pol/carol-doc?tagging", taggingDoc("project", "x-2")), 403, "AccessDenied")
	h.expect(h.do("alice", "PUT", "/pol/carol-doc", []byte("c")), 200, "")
	h.expect(h.putTagging("carol", "/pol/carol-doc?tagging", taggingDoc("project", "x-2")), 200, "")
	h.expect(h.putTagging("carol", "/pol/carol-doc?tagging", taggingDoc("project", "y-2")), 403, "AccessDenied")
	h.expect(h.putTagging("carol", "/pol/carol-doc?tagging", taggingDoc("other", "x-2")), 403, "AccessDenied")
	h.expect(h.putTagging("carol", "/pol/c2?tagging", taggingDoc("project", "y-2")), 200, "") // her own object: the owner may
	wantTags(t, "carol-doc", h.tagsOf("alice", "/pol/carol-doc?tagging"), "project", "x-2")
	// A refused caller is refused before its body is judged.
	h.expect(h.putTagging("bob", "/pol/plain?tagging", "not xml"), 403, "AccessDenied")
}

// TestTaggingIdentities: identities need the tagging actions in their
// policies, and s3:PutObjectTagging to write objects with tags.
func TestTaggingIdentities(t *testing.T) {
	perms := map[string]testPermissions{
		"writer": {own: mustIdentityPolicy(t, `{"Version":"2012-10-17","Statement":[
			{"Effect":"Allow","Action":["s3:PutObject","s3:GetObject"],"Resource":"arn:aws:s3:::idb/*"}]}`)},
		"tagger": {own: mustIdentityPolicy(t, `{"Version":"2012-10-17","Statement":[
			{"Effect":"Allow","Action":["s3:PutObject","s3:GetObject","s3:PutObjectTagging","s3:GetObjectTagging"],"Resource":"arn:aws:s3:::idb/*"},
			{"Effect":"Allow","Action":["s3:GetBucketTagging","s3:PutBucketTagging"],"Resource":"arn:aws:s3:::idb"}]}`)},
		"deleter": {own: mustIdentityPolicy(t, `{"Version":"2012-10-17","Statement":[
			{"Effect":"Allow","Action":"s3:DeleteObjectTagging","Resource":"arn:aws:s3:::idb/*"}]}`)},
	}
	h := identityHarness(t, perms)
	h.expect(h.do("root", "PUT", "/idb", nil), 200, "")
	h.expect(h.do("iam:writer", "PUT", "/idb/w", []byte("w")), 200, "")
	h.expect(h.do("iam:writer", "PUT", "/idb/w2", []byte("w"), "X-Amz-Tagging", "a=1"), 403, "AccessDenied")
	h.expect(h.do("iam:tagger", "PUT", "/idb/t", []byte("t"), "X-Amz-Tagging", "a=1"), 200, "")
	rec := h.do("iam:writer", "GET", "/idb/t", nil)
	h.expect(rec, 200, "")
	if rec.Header().Get("X-Amz-Tagging-Count") != "" {
		t.Fatal("an identity without s3:GetObjectTagging got x-amz-tagging-count")
	}
	if rec := h.do("iam:tagger", "GET", "/idb/t", nil); rec.Header().Get("X-Amz-Tagging-Count") != "1" {
		t.Fatalf("tagger: x-amz-tagging-count %q", rec.Header().Get("X-Amz-Tagging-Count"))
	}
	h.expect(h.do("iam:writer", "GET", "/idb/t?tagging", nil), 403, "AccessDenied")
	wantTags(t, "tagger", h.tagsOf("iam:tagger", "/idb/t?tagging"), "a", "1")
	h.expect(h.putTagging("iam:tagger", "/idb/w?tagging", taggingDoc("b", "2")), 200, "")
	h.expect(h.do("iam:tagger", "DELETE", "/idb/w?tagging", nil), 403, "AccessDenied") // s3:DeleteObjectTagging is its own action
	h.expect(h.do("iam:deleter", "DELETE", "/idb/w?tagging", nil), 204, "")
	h.expect(h.putTagging("iam:tagger", "/idb?tagging", taggingDoc("b", "2")), 204, "")
	wantTags(t, "bucket", h.tagsOf("iam:tagger", "/idb?tagging"), "b", "2")
	h.expect(h.do("iam:tagger", "DELETE", "/idb?tagging", nil), 204, "") // DeleteBucketTagging is s3:PutBucketTagging
	h.expect(h.do("iam:writer", "GET", "/idb?tagging", nil), 403, "AccessDenied")
	if oi, err := h.store.HeadObject(context.Background(), "idb", "w", engine.GetOptions{}); err != nil || oi.Tags != nil {
		t.Fatalf("w: %v %v", oi.Tags, err)
	}
}

// TestTaggingHeaderParse: x-amz-tagging is read as URL query parameters.
func TestTaggingHeaderParse(t *testing.T) {
	v := url.Values{"a b": {"c+d=e"}, "ключ": {"значение"}, "k": {""}}
	got, err := parseTaggingHeader(v.Encode())
	if err != nil || !maps.Equal(got, map[string]string{"a b": "c+d=e", "ключ": "значение", "k": ""}) {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := parseTaggingHeader(""); got != nil || err != nil {
		t.Fatalf("empty: %v %v", got, err)
	}
	if utf16Len("a\U00010400ä") != 4 {
		t.Fatal("utf16Len")
	}
}
