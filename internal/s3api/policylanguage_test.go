package s3api

import (
	"context"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/policy"
)

// TestMissingKeyWithListPolicy: a missing key answers 404 to a caller a
// bucket policy lets list the bucket (on the bucket ARN, or on a prefix
// the key is under: s3:prefix is the key) and 403 to anyone else; a
// HEAD's own ?prefix= parameter stands for nothing (ceph s3-tests'
// test_head_object_404_with_policy_prefix).
func TestMissingKeyWithListPolicy(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/lpb", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/lpb/public/there", []byte("x")), 200, "")
	prefixDoc := `{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "s3:ListBucket",
	  "Resource": "arn:aws:s3:::lpb", "Condition": {"StringLike": {"s3:prefix": "public/*"}}}]}`
	h.expect(h.do("alice", "PUT", "/lpb?policy", []byte(prefixDoc)), 204, "")
	for _, m := range []string{"HEAD", "GET"} {
		h.expect(h.do("bob", m, "/lpb/public/object", nil), 404, map[string]string{"HEAD": "", "GET": "NoSuchKey"}[m])
		h.expect(h.do("", m, "/lpb/public/object", nil), 404, map[string]string{"HEAD": "", "GET": "NoSuchKey"}[m])
		h.expect(h.do("bob", m, "/lpb/private/object", nil), 403, map[string]string{"HEAD": "", "GET": "AccessDenied"}[m])
		h.expect(h.do("bob", m, "/lpb/private/object?prefix=public/", nil), 403, map[string]string{"HEAD": "", "GET": "AccessDenied"}[m])
		// Listing does not open an existing object.
		h.expect(h.do("bob", m, "/lpb/public/there", nil), 403, map[string]string{"HEAD": "", "GET": "AccessDenied"}[m])
	}
	// HeadBucket is s3:ListBucket without a prefix: its ?prefix= is not
	// s3:prefix.
	h.expect(h.do("bob", "HEAD", "/lpb?prefix=public/", nil), 403, "")
	// A listing's own prefix is still the condition's.
	h.expect(h.do("bob", "GET", "/lpb?list-type=2&prefix=public/", nil), 200, "")
	h.expect(h.do("bob", "GET", "/lpb?list-type=2&prefix=private/", nil), 403, "AccessDenied")
	// Object APIs that look the key up answer the same way.
	h.expect(h.do("bob", "GET", "/lpb/public/object?tagging", nil), 404, "NoSuchKey")
	h.expect(h.do("bob", "GET", "/lpb/private/object?tagging", nil), 403, "AccessDenied")

	// On the bucket ARN without a condition: every missing key is 404.
	h.expect(h.do("alice", "PUT", "/lpb?policy", []byte(`{"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
	  "Principal": {"AWS": "bob"}, "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::lpb"}]}`)), 204, "")
	h.expect(h.do("bob", "HEAD", "/lpb/private/object", nil), 404, "")
	h.expect(h.do("", "HEAD", "/lpb/private/object", nil), 403, "")
	// A Deny of listing under a prefix: 403 there.
	h.expect(h.do("alice", "PUT", "/lpb?policy", []byte(`{"Version": "2012-10-17", "Statement": [
	  {"Effect": "Allow", "Principal": {"AWS": "bob"}, "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::lpb"},
	  {"Effect": "Deny", "Principal": "*", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::lpb",
	   "Condition": {"StringLike": {"s3:prefix": "secret/*"}}}]}`)), 204, "")
	h.expect(h.do("bob", "HEAD", "/lpb/other/object", nil), 404, "")
	h.expect(h.do("bob", "HEAD", "/lpb/secret/object", nil), 403, "")
}

// TestPolicyLanguageOverHTTP: what PutBucketPolicy accepts and refuses of
// this policy language, and that a refused document changes
// nothing.
func TestPolicyLanguageOverHTTP(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/plb", nil), 200, "")
	stored := `{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "logging.s3.amazonaws.com"},
	  "Action": "s3:PutObject", "Resource": "arn:aws:s3:::plb/log/*",
	  "Condition": {"ArnLike": {"aws:SourceArn": "arn:aws:s3:::src"}, "StringEqualsIfExists": {"aws:SourceAccount": "alice"}}}]}`
	h.expect(h.do("alice", "PUT", "/plb?policy", []byte(stored)), 204, "")
	for _, c := range []struct{ doc, msg string }{
		{`{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "NotPrincipal": {"AWS": "arn:aws:iam::s3tenant1:root"},
		  "Action": "s3:ListBucket", "Resource": ["arn:aws:s3:::plb", "arn:aws:s3:::plb/*"]}]}`, "NotPrincipal is supported only with Effect Deny"},
		{`{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "logging.s3.amazonaws.comkaboom"},
		  "Action": "s3:PutObject", "Resource": "arn:aws:s3:::plb/*"}]}`, "Invalid principal in policy"},
		{`{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*",
		  "Action": "s3:AbortMultipartUpload", "Resource": "arn:aws:s3:::plb"}]}`, "Action does not apply to any resource(s) in statement"},
	} {
		h.expectError(h.do("alice", "PUT", "/plb?policy", []byte(c.doc)), 400, "MalformedPolicy", c.msg)
	}
	if rec := h.do("alice", "GET", "/plb?policy", nil); rec.Body.String() != stored {
		t.Fatalf("a refused policy replaced the stored one: %q", rec.Body.String())
	}
	// A service-only policy is not public.
	if rec := h.do("alice", "GET", "/plb?policyStatus", nil); !strings.Contains(rec.Body.String(), "<IsPublic>false</IsPublic>") {
		t.Fatalf("policy status: %d %s", rec.Code, rec.Body.String())
	}

	// The logging service's write into the bucket, decided as a request.
	bi, err := h.store.BucketInfo(context.Background(), "plb")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key, source, owner string
		want               bool
	}{
		{"log/2026-01-01-00-00-00-X", "src", "alice", true},
		{"other/x", "src", "alice", false},
		{"log/x", "elsewhere", "alice", false},
		{"log/x", "src", "bob", false},
	} {
		d := h.srv.serviceWriteDecision(bi, c.key, policy.LoggingService, c.source, c.owner)
		if d.Allowed != c.want {
			t.Errorf("logging service writes %s for %s of %s: %+v, want allowed %v", c.key, c.source, c.owner, d, c.want)
		}
	}
	if d := h.srv.serviceWriteDecision(bi, "log/x", "cloudtrail.amazonaws.com", "src", "alice"); d.Allowed {
		t.Errorf("another service: %+v", d)
	}
	// A stored document an earlier release accepted keeps its meaning.
	legacy := `{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "NotPrincipal": {"AWS": "carol"},
	  "Action": "s3:GetObject", "Resource": "arn:aws:s3:::plb/*"}]}`
	p := compileBucketPolicy("plb", legacy)
	if p == denyAll || p.Evaluate(&policy.Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::plb/k", Anonymous: true}) != policy.Allowed {
		t.Error("a stored NotPrincipal/Allow policy no longer reads as it did")
	}
}
