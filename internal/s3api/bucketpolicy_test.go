package s3api

import (
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/access"
)

const publicPrefixPolicy = `{"Version": "2012-10-17", "Statement": [
  {"Sid": "PublicRead", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::pol/pub/*"}]}`

// TestBucketPolicyPublicPrefix: a policy opens one prefix to anonymous
// reads and nothing else; only the owner manages it.
func TestBucketPolicyPublicPrefix(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/pol", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/pol/pub/a", []byte("public")), 200, "")
	h.expect(h.do("alice", "PUT", "/pol/priv/b", []byte("private")), 200, "")
	h.expect(h.do("", "GET", "/pol/pub/a", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "GET", "/pol?policy", nil), 404, "NoSuchBucketPolicy")
	h.expect(h.do("alice", "GET", "/pol?policyStatus", nil), 404, "NoSuchBucketPolicy")

	h.expect(h.do("bob", "PUT", "/pol?policy", []byte(publicPrefixPolicy)), 403, "AccessDenied")
	h.expect(h.do("alice", "PUT", "/pol?policy", []byte(publicPrefixPolicy)), 204, "")
	if rec := h.do("", "GET", "/pol/pub/a", nil); rec.Code != 200 || rec.Body.String() != "public" {
		t.Fatalf("anonymous GET in the public prefix: %d %q", rec.Code, rec.Body.String())
	}
	h.expect(h.do("", "HEAD", "/pol/pub/a", nil), 200, "")
	h.expect(h.do("bob", "GET", "/pol/pub/a", nil), 200, "")
	h.expect(h.do("", "GET", "/pol/priv/b", nil), 403, "AccessDenied")
	h.expect(h.do("", "GET", "/pol?list-type=2", nil), 403, "AccessDenied")
	h.expect(h.do("", "PUT", "/pol/pub/new", []byte("x")), 403, "AccessDenied")
	h.expect(h.do("", "DELETE", "/pol/pub/a", nil), 403, "AccessDenied")
	// A missing key under the policy: the caller may not list, so it is
	// told AccessDenied, not NoSuchKey.
	h.expect(h.do("", "GET", "/pol/pub/missing", nil), 403, "AccessDenied")

	h.expect(h.do("bob", "GET", "/pol?policy", nil), 403, "AccessDenied")
	rec := h.do("alice", "GET", "/pol?policy", nil)
	h.expect(rec, 200, "")
	if rec.Body.String() != publicPrefixPolicy || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("stored policy: %q (%s)", rec.Body.String(), rec.Header().Get("Content-Type"))
	}
	rec = h.do("alice", "GET", "/pol?policyStatus", nil)
	h.expect(rec, 200, "")
	if !strings.Contains(rec.Body.String(), "<IsPublic>true</IsPublic>") {
		t.Fatalf("policy status: %s", rec.Body.String())
	}
	h.expect(h.do("alice", "DELETE", "/pol?policy", nil), 204, "")
	h.expect(h.do("", "GET", "/pol/pub/a", nil), 403, "AccessDenied")
}

// TestBucketPolicyDenyAndPrefixUser: an explicit Deny beats the owner's
// own rights and any Allow; a user limited to a prefix writes and lists
// there only; the owner can always replace a policy that locks it out.
func TestBucketPolicyDenyAndPrefixUser(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/pol", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/pol/keep", []byte("x")), 200, "")
	doc := `{"Version": "2012-10-17", "Statement": [
	  {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::000000000000:user/bob"}, "Action": ["s3:PutObject", "s3:GetObject"],
	   "Resource": "arn:aws:s3:::pol/home/${aws:username}/*"},
	  {"Effect": "Allow", "Principal": {"AWS": "bob"}, "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::pol",
	   "Condition": {"StringLike": {"s3:prefix": "home/bob/*"}}},
	  {"Effect": "Deny", "Principal": "*", "Action": ["s3:DeleteObject", "s3:PutBucketAcl"], "Resource": ["arn:aws:s3:::pol", "arn:aws:s3:::pol/*"]}
	]}`
	h.expect(h.do("alice", "PUT", "/pol?policy", []byte(doc)), 204, "")
	h.expect(h.do("bob", "PUT", "/pol/home/bob/f", []byte("bob's")), 200, "")
	h.expect(h.do("bob", "GET", "/pol/home/bob/f", nil), 200, "")
	h.expect(h.do("bob", "PUT", "/pol/home/carol/f", []byte("x")), 403, "AccessDenied")
	h.expect(h.do("bob", "PUT", "/pol/elsewhere", []byte("x")), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/pol?list-type=2&prefix=home/bob/", nil), 200, "")
	h.expect(h.do("bob", "GET", "/pol?list-type=2&prefix=home/", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/pol?list-type=2", nil), 403, "AccessDenied")
	h.expect(h.do("carol", "PUT", "/pol/home/carol/f", []byte("x")), 403, "AccessDenied")

	// Deny wins, over the owner's rights too; root is an administrator.
	h.expect(h.do("bob", "DELETE", "/pol/home/bob/f", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "DELETE", "/pol/keep", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "PUT", "/pol?acl", nil, "X-Amz-Acl", "public-read"), 403, "AccessDenied")
	h.expect(h.do("root", "DELETE", "/pol/home/bob/f", nil), 204, "")

	// Refused documents change nothing.
	for _, bad := range []string{`{"Version": "2012-10-17"`, `{"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
	  "Principal": "*", "Action": "s3:GetObjekt", "Resource": "arn:aws:s3:::pol/*"}]}`,
		`{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::other/*"}]}`,
		strings.Repeat(" ", 21<<10) + `{}`} {
		h.expect(h.do("alice", "PUT", "/pol?policy", []byte(bad)), 400, "MalformedPolicy")
	}
	if rec := h.do("alice", "GET", "/pol?policy", nil); rec.Body.String() != doc {
		t.Fatalf("a refused policy replaced the stored one: %q", rec.Body.String())
	}

	// A policy that denies its owner everything still lets the owner
	// manage the policy.
	lockout := `{"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": ["arn:aws:s3:::pol", "arn:aws:s3:::pol/*"]}]}`
	h.expect(h.do("alice", "PUT", "/pol?policy", []byte(lockout)), 204, "")
	h.expect(h.do("alice", "GET", "/pol/keep", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "GET", "/pol?policy", nil), 200, "")
	h.expect(h.do("alice", "DELETE", "/pol?policy", nil), 204, "")
	h.expect(h.do("alice", "GET", "/pol/keep", nil), 200, "")
}

func TestPolicyActions(t *testing.T) {
	q := &request{}
	for _, c := range []struct {
		api  string
		op   access.Operation
		want string
	}{
		{"GetObject", access.ReadObject, "s3:GetObject"}, {"HeadObject", access.ReadObject, "s3:GetObject"},
		{"CopyObject", access.ReadObject, "s3:GetObject"}, {"CopyObject", access.WriteObject, "s3:PutObject"},
		{"GetObjectAttributes", access.ReadObject, "s3:GetObjectAttributes"}, {"PostObject", access.WriteObject, "s3:PutObject"},
		{"DeleteObjects", access.WriteObject, "s3:DeleteObject"}, {"ListObjectsV2", access.ListBucket, "s3:ListBucket"},
		{"HeadBucket", access.ListBucket, "s3:ListBucket"}, {"ListObjectVersions", access.ListBucket, "s3:ListBucketVersions"},
		{"ListMultipartUploads", access.ListBucket, "s3:ListBucketMultipartUploads"},
		{"ListParts", access.ManageUpload, "s3:ListMultipartUploadParts"}, {"AbortMultipartUpload", access.ManageUpload, "s3:AbortMultipartUpload"},
		{"GetObjectAcl", access.ObjectACL, "s3:GetObjectAcl"}, {"PutObjectAcl", access.ObjectACL, "s3:PutObjectAcl"},
		{"DeleteBucketCors", access.BucketAdmin, "s3:PutBucketCORS"}, {"DeleteBucket", access.BucketAdmin, "s3:DeleteBucket"},
		{"GetBucketPolicyStatus", access.BucketAdmin, "s3:GetBucketPolicyStatus"},
		{"PutObjectAcl", access.PutObjectACL, "s3:PutObjectAcl"}, {"GetBucketAcl", access.BucketACL, "s3:GetBucketAcl"},
		{"PutBucketAcl", access.PutBucketACL, "s3:PutBucketAcl"},
		{"GetPublicAccessBlock", access.BucketAdmin, "s3:GetBucketPublicAccessBlock"},
		{"PutPublicAccessBlock", access.BucketAdmin, "s3:PutBucketPublicAccessBlock"},
		{"DeletePublicAccessBlock", access.BucketAdmin, "s3:PutBucketPublicAccessBlock"},
		{"GetObjectTagging", access.ObjectTagging, "s3:GetObjectTagging"}, {"GetObject", access.ObjectTagging, "s3:GetObjectTagging"},
		{"PutObjectTagging", access.PutObjectTagging, "s3:PutObjectTagging"}, {"PutObject", access.PutObjectTagging, "s3:PutObjectTagging"},
		{"DeleteObjectTagging", access.PutObjectTagging, "s3:DeleteObjectTagging"},
		{"GetBucketTagging", access.BucketAdmin, "s3:GetBucketTagging"}, {"PutBucketTagging", access.BucketAdmin, "s3:PutBucketTagging"},
		{"DeleteBucketTagging", access.BucketAdmin, "s3:PutBucketTagging"},
		{"GetBucketLogging", access.BucketAdmin, "s3:GetBucketLogging"}, {"PutBucketLogging", access.BucketAdmin, "s3:PutBucketLogging"},
		{"GetBucketNotificationConfiguration", access.BucketAdmin, "s3:GetBucketNotification"},
		{"PutBucketNotificationConfiguration", access.BucketAdmin, "s3:PutBucketNotification"},
	} {
		q.api = c.api
		if got := q.action(c.op); got != c.want {
			t.Errorf("%s (%s): %s, want %s", c.api, c.op, got, c.want)
		}
	}
}
