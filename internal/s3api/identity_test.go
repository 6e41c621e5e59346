package s3api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/policy"
)

// testPermissions are an identity's policies for the handler tests: a
// policy and an optional narrowing one, as iam.Store builds them.
type testPermissions struct{ own, bound *policy.Policy }

func (p testPermissions) Evaluate(r *policy.Request) policy.Decision {
	d := p.own.Evaluate(r)
	if p.bound != nil && d != policy.Denied {
		switch p.bound.Evaluate(r) {
		case policy.Denied:
			return policy.Denied
		case policy.NotApplicable:
			if d == policy.Allowed {
				d = policy.NotApplicable
			}
		}
	}
	return d
}

func (p testPermissions) Bounded(r *policy.Request) bool {
	return p.bound == nil || p.bound.Evaluate(r) == policy.Allowed
}

func mustIdentityPolicy(t *testing.T, doc string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(doc), policy.ParseOptions{Identity: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// identityHarness is a harness where "iam:NAME" callers are identities
// of the identity store with the permissions perms[NAME], owned by root.
func identityHarness(t *testing.T, perms map[string]testPermissions) *harness {
	return newHarness(t, func(c *Config) {
		c.Auth = AuthenticatorFunc(func(r *http.Request) (*AuthResult, error) {
			if name, ok := strings.CutPrefix(r.Header.Get("X-Test-User"), "iam:"); ok {
				return &AuthResult{Caller: Caller{AccessKey: name, User: name, Owner: "root", Permissions: perms[name]},
					ContentLength: r.ContentLength}, nil
			}
			return testAuth(r)
		})
	})
}

func TestIdentityAccess(t *testing.T) {
	perms := map[string]testPermissions{
		"reader": {own: mustIdentityPolicy(t, `{"Version":"2012-10-17","Statement":[
			{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/pub/*"},
			{"Effect":"Allow","Action":"s3:ListBucket","Resource":"arn:aws:s3:::bkt"}]}`)},
		"nobody": {own: mustIdentityPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::other/*"}]}`)},
		"maker": {own: mustIdentityPolicy(t, `{"Version":"2012-10-17","Statement":[
			{"Effect":"Allow","Action":["s3:CreateBucket","s3:PutObject"],"Resource":"arn:aws:s3:::made*"}]}`)},
		"narrowed": {own: mustIdentityPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}`),
			bound: mustIdentityPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/pub/*"}]}`)},
		"writer": {own: mustIdentityPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:PutObject","s3:CreateBucket","s3:GetObject","s3:ListBucket"],"Resource":"*"}]}`)},
		"lister": {own: mustIdentityPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:ListAllMyBuckets","Resource":"*"}]}`)},
	}
	h := identityHarness(t, perms)
	h.expect(h.do("root", "PUT", "/bkt", nil), 200, "")
	h.expect(h.do("root", "PUT", "/bkt/pub/x", []byte("x")), 200, "")
	h.expect(h.do("root", "PUT", "/bkt/priv/y", []byte("y"), "x-amz-acl", "public-read"), 200, "")

	// The identity's policies decide, and grants to everyone
	// (public-read) as in AWS; its account owning the bucket gives it
	// nothing its policies do not.
	h.expect(h.do("iam:reader", "GET", "/bkt/pub/x", nil), 200, "")
	h.expect(h.do("iam:reader", "GET", "/bkt/priv/y", nil), 200, "")
	h.expect(h.do("iam:nobody", "GET", "/bkt/pub/x", nil), 403, "AccessDenied")
	h.expect(h.do("iam:reader", "PUT", "/bkt/pub/z", []byte("z")), 403, "AccessDenied")
	h.expect(h.do("iam:reader", "GET", "/bkt/pub/missing", nil), 404, "NoSuchKey")
	h.expect(h.do("iam:nobody", "GET", "/bkt/pub/missing", nil), 403, "AccessDenied")
	h.expect(h.do("", "GET", "/bkt/priv/y", nil), 200, "")

	// A bucket policy naming the user grants without an identity policy,
	// within an access key's or session's bounds; its Deny beats the
	// identity's Allow.
	h.expect(h.do("root", "PUT", "/bkt?policy", []byte(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":{"AWS":["nobody","narrowed"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/priv/*"},
		{"Effect":"Deny","Principal":{"AWS":"reader"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/pub/*"}]}`)), 204, "")
	h.expect(h.do("iam:nobody", "GET", "/bkt/priv/y", nil), 200, "")
	h.expect(h.do("iam:narrowed", "GET", "/bkt/priv/y", nil), 403, "AccessDenied")
	h.expect(h.do("iam:narrowed", "GET", "/bkt/pub/x", nil), 200, "")
	h.expect(h.do("iam:narrowed", "DELETE", "/bkt/pub/x", nil), 403, "AccessDenied")
	h.expect(h.do("iam:reader", "GET", "/bkt/pub/x", nil), 403, "AccessDenied")

	// Setting an ACL while writing needs s3:PutObjectAcl; creating a
	// bucket with an ACL needs s3:PutBucketAcl.
	h.expect(h.do("iam:writer", "PUT", "/bkt/pub/w", []byte("w")), 200, "")
	h.expect(h.do("iam:writer", "PUT", "/bkt/pub/w", []byte("w"), "x-amz-acl", "public-read"), 403, "AccessDenied")
	h.expect(h.do("iam:writer", "PUT", "/writers", nil, "x-amz-acl", "public-read-write"), 403, "AccessDenied")
	h.expect(h.do("iam:writer", "PUT", "/writers", nil), 200, "")

	// Another owner's bucket (a users-file user's) is another account:
	// the identity's policies alone open nothing there; its bucket policy
	// must allow too.
	h.expect(h.do("alice", "PUT", "/alices", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/alices/doc", []byte("d")), 200, "")
	h.expect(h.do("iam:writer", "GET", "/alices/doc", nil), 403, "AccessDenied")
	h.expect(h.do("iam:writer", "PUT", "/alices/doc", []byte("x")), 403, "AccessDenied")
	h.expect(h.do("alice", "PUT", "/alices?policy", []byte(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":{"AWS":["writer","nobody"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::alices/*"}]}`)), 204, "")
	h.expect(h.do("iam:writer", "GET", "/alices/doc", nil), 200, "")
	h.expect(h.do("iam:nobody", "GET", "/alices/doc", nil), 403, "AccessDenied")

	// Account-level actions: CreateBucket and ListBuckets.
	h.expect(h.do("iam:reader", "PUT", "/newbucket", nil), 403, "AccessDenied")
	h.expect(h.do("iam:maker", "PUT", "/made1", nil), 200, "")
	bi, err := h.store.BucketInfo(context.Background(), "made1")
	if err != nil || bi.Owner != "root" {
		t.Fatalf("a bucket an identity creates belongs to the account (root): %+v %v", bi, err)
	}
	h.expect(h.do("iam:maker", "PUT", "/made1/k", []byte("k")), 200, "")
	if oi, err := h.store.HeadObject(context.Background(), "made1", "k", engine.GetOptions{}); err != nil || oi.Owner != "root" {
		t.Fatalf("an object an identity writes belongs to the account: %+v %v", oi, err)
	}
	rec := h.do("iam:lister", "GET", "/", nil)
	h.expect(rec, 200, "")
	if body := rec.Body.String(); !strings.Contains(body, "<Name>bkt</Name>") || !strings.Contains(body, "<Name>made1</Name>") {
		t.Fatalf("ListAllMyBuckets shows every bucket: %s", body)
	}
	rec = h.do("iam:reader", "GET", "/", nil)
	if body := rec.Body.String(); !strings.Contains(body, "<Name>bkt</Name>") || strings.Contains(body, "made1") {
		t.Fatalf("without ListAllMyBuckets, only the buckets it may list: %s", body)
	}
}
