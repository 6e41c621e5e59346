package s3api

import (
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
)

// pabDoc is a PublicAccessBlockConfiguration with the four settings.
func pabDoc(blockACLs, ignoreACLs, blockPolicy, restrict bool) string {
	return fmt.Sprintf(`<PublicAccessBlockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`+
		`<BlockPublicAcls>%t</BlockPublicAcls><IgnorePublicAcls>%t</IgnorePublicAcls>`+
		`<BlockPublicPolicy>%t</BlockPublicPolicy><RestrictPublicBuckets>%t</RestrictPublicBuckets>`+
		`</PublicAccessBlockConfiguration>`, blockACLs, ignoreACLs, blockPolicy, restrict)
}

// putPAB sets bucket's public access block as its owner alice.
func (h *harness) putPAB(bucket, doc string) {
	h.t.Helper()
	h.expect(h.do("alice", "PUT", "/"+bucket+"?publicAccessBlock", []byte(doc), "Content-MD5", md5b64(doc)), 200, "")
}

const publicGetPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::%s/*"}]}`

// TestPublicAccessBlockConfig: Put/Get/DeletePublicAccessBlock store,
// show and remove the document; only the owner (or root) may; a missing
// one answers 404 NoSuchPublicAccessBlockConfiguration.
func TestPublicAccessBlockConfig(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/pab", nil), 200, "")
	h.expect(h.do("alice", "GET", "/pab?publicAccessBlock", nil), 404, "NoSuchPublicAccessBlockConfiguration")
	doc := pabDoc(true, false, true, false)
	h.expect(h.do("alice", "PUT", "/pab?publicAccessBlock", []byte(doc)), 400, "InvalidRequest") // Content-MD5 or a checksum is required
	h.expect(h.do("alice", "PUT", "/pab?publicAccessBlock", []byte(doc), "Content-MD5", md5b64("other")), 400, "BadDigest")
	for _, bad := range []string{"", "<PublicAccessBlockConfiguration>", "<Other/>",
		"<PublicAccessBlockConfiguration><BlockPublicAcls>maybe</BlockPublicAcls></PublicAccessBlockConfiguration>"} {
		h.expect(h.do("alice", "PUT", "/pab?publicAccessBlock", []byte(bad), "Content-MD5", md5b64(bad)), 400, "MalformedXML")
	}
	h.expect(h.do("bob", "PUT", "/pab?publicAccessBlock", []byte(doc), "Content-MD5", md5b64(doc)), 403, "AccessDenied")
	h.expect(h.do("alice", "GET", "/pab?publicAccessBlock", nil), 404, "NoSuchPublicAccessBlockConfiguration")
	h.putPAB("pab", doc)
	for _, user := range []string{"alice", "root"} {
		rec := h.do(user, "GET", "/pab?publicAccessBlock", nil)
		h.expect(rec, 200, "")
		var got xmlPublicAccessBlock
		if err := xml.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.NS != s3NS ||
			got.PublicAccessBlock != (access.PublicAccessBlock{BlockPublicAcls: true, BlockPublicPolicy: true}) {
			t.Fatalf("%s: %+v %v %s", user, got, err, rec.Body.String())
		}
		for _, el := range []string{"BlockPublicAcls", "IgnorePublicAcls", "BlockPublicPolicy", "RestrictPublicBuckets"} {
			if !strings.Contains(rec.Body.String(), "<"+el+">") {
				t.Fatalf("answer lacks %s: %s", el, rec.Body.String())
			}
		}
	}
	h.expect(h.do("bob", "GET", "/pab?publicAccessBlock", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "DELETE", "/pab?publicAccessBlock", nil), 403, "AccessDenied")
	// Elements left out are false, in any order.
	partial := `<PublicAccessBlockConfiguration><RestrictPublicBuckets>true</RestrictPublicBuckets></PublicAccessBlockConfiguration>`
	h.putPAB("pab", partial)
	bi, err := h.store.BucketInfo(t.Context(), "pab")
	if err != nil || publicAccessBlockOf(bi) != (access.PublicAccessBlock{RestrictPublicBuckets: true}) {
		t.Fatalf("stored %q: %+v %v", bi.PublicAccessBlock, publicAccessBlockOf(bi), err)
	}
	if _, canonical := storedPublicAccessBlocks[bi.PublicAccessBlock]; !canonical {
		t.Fatalf("stored form %q is not canonical", bi.PublicAccessBlock)
	}
	h.expect(h.do("alice", "DELETE", "/pab?publicAccessBlock", nil), 204, "")
	h.expect(h.do("alice", "GET", "/pab?publicAccessBlock", nil), 404, "NoSuchPublicAccessBlockConfiguration")
	h.expect(h.do("alice", "GET", "/nobucket?publicAccessBlock", nil), 404, "NoSuchBucket")
	// A stored document that cannot be read blocks everything.
	if got := publicAccessBlockOf(engine.BucketInfo{PublicAccessBlock: "<PublicAccessBlockConfiguration>"}); got != blockEverything {
		t.Fatalf("unreadable document: %+v", got)
	}
}

// TestBlockPublicAcls: every request setting a public ACL on the bucket
// or an object in it is refused with 403 AccessDenied and changes
// nothing; private ACLs and grants to users pass.
func TestBlockPublicAcls(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bpa", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/bpa/obj", []byte("x")), 200, "")
	h.putPAB("bpa", pabDoc(true, false, false, false))
	public := [][]string{
		{"X-Amz-Acl", "public-read"}, {"X-Amz-Acl", "public-read-write"}, {"X-Amz-Acl", "authenticated-read"},
		{"X-Amz-Grant-Read", "uri=" + uriAllUsers}, {"X-Amz-Grant-Write-Acp", "uri=" + uriAuthenticatedUsers},
		{"X-Amz-Grant-Full-Control", idOf("bob") + ", uri=" + uriAllUsers},
	}
	for _, hdr := range public {
		h.expect(h.do("alice", "PUT", "/bpa/new", []byte("x"), hdr...), 403, "AccessDenied")
		h.expect(h.do("alice", "PUT", "/bpa/new", nil, append([]string{"X-Amz-Copy-Source", "/bpa/obj"}, hdr...)...), 403, "AccessDenied")
		h.expect(h.do("alice", "POST", "/bpa/new?uploads", nil, hdr...), 403, "AccessDenied")
		h.expect(h.do("alice", "PUT", "/bpa/obj?acl", nil, hdr...), 403, "AccessDenied")
		h.expect(h.do("alice", "PUT", "/bpa?acl", nil, hdr...), 403, "AccessDenied")
	}
	h.expect(h.do("alice", "PUT", "/bpa/obj?acl", aclBody("alice", "alice:FULL_CONTROL", uriAllUsers+":READ")), 403, "AccessDenied")
	h.expect(h.do("alice", "PUT", "/bpa?acl", aclBody("alice", uriAuthenticatedUsers+":READ")), 403, "AccessDenied")
	h.expect(h.do("root", "PUT", "/bpa/obj?acl", nil, "X-Amz-Acl", "public-read"), 403, "AccessDenied") // root too
	h.expect(h.do("alice", "HEAD", "/bpa/new", nil), 404, "")
	h.expect(h.do("alice", "GET", "/bpa?uploads", nil), 200, "")
	if rec := h.do("alice", "GET", "/bpa?uploads", nil); strings.Contains(rec.Body.String(), "<Upload>") {
		t.Fatalf("refused upload was created: %s", rec.Body.String())
	}
	h.expect(h.do("", "GET", "/bpa/obj", nil), 403, "AccessDenied")
	// What is not public passes.
	for _, hdr := range [][]string{{"X-Amz-Acl", "private"}, {"X-Amz-Acl", "bucket-owner-full-control"}, {"X-Amz-Grant-Read", idOf("bob")}} {
		h.expect(h.do("alice", "PUT", "/bpa/ok", []byte("x"), hdr...), 200, "")
		h.expect(h.do("alice", "PUT", "/bpa/obj?acl", nil, hdr...), 200, "")
	}
	h.expect(h.do("bob", "GET", "/bpa/ok", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/bpa?acl", nil, "X-Amz-Grant-Read", idOf("bob")), 200, "")
	// Another bucket is not affected; removing the block lifts it.
	h.expect(h.do("alice", "PUT", "/open", nil, "X-Amz-Acl", "public-read"), 200, "")
	h.expect(h.do("alice", "DELETE", "/bpa?publicAccessBlock", nil), 204, "")
	h.expect(h.do("alice", "PUT", "/bpa/obj?acl", nil, "X-Amz-Acl", "public-read"), 200, "")
	h.expect(h.do("", "GET", "/bpa/obj", nil), 200, "")
}

// TestIgnorePublicAcls: public grants count for nothing while set, grants
// to users still count, and the ACLs are kept and shown.
func TestIgnorePublicAcls(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/ipa", nil, "X-Amz-Acl", "public-read-write"), 200, "")
	h.expect(h.do("alice", "PUT", "/ipa/pub", []byte("x"), "X-Amz-Acl", "public-read"), 200, "")
	h.expect(h.do("alice", "PUT", "/ipa/auth", []byte("x"), "X-Amz-Acl", "authenticated-read"), 200, "")
	h.expect(h.do("alice", "PUT", "/ipa/bobs", []byte("x"), "X-Amz-Grant-Read", idOf("bob")+", uri="+uriAllUsers), 200, "")
	h.expect(h.do("", "GET", "/ipa/pub", nil), 200, "")
	h.expect(h.do("", "GET", "/ipa?list-type=2", nil), 200, "")
	h.expect(h.do("", "PUT", "/ipa/anon", []byte("x")), 200, "")
	h.putPAB("ipa", pabDoc(false, true, false, false))
	h.expect(h.do("", "GET", "/ipa/pub", nil), 403, "AccessDenied")
	h.expect(h.do("carol", "GET", "/ipa/pub", nil), 403, "AccessDenied")
	h.expect(h.do("carol", "GET", "/ipa/auth", nil), 403, "AccessDenied")
	h.expect(h.do("", "GET", "/ipa?list-type=2", nil), 403, "AccessDenied")
	h.expect(h.do("carol", "PUT", "/ipa/k", []byte("x")), 403, "AccessDenied")
	h.expect(h.do("", "GET", "/ipa/bobs", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/ipa/bobs", nil), 200, "")
	h.expect(h.do("alice", "GET", "/ipa/pub", nil), 200, "")
	h.expect(h.do("alice", "GET", "/ipa/anon", nil), 200, "") // written anonymously: the bucket owner's
	_, grants := grantsOf(t, h.do("alice", "GET", "/ipa/pub?acl", nil))
	if strings.Join(grants, " ") != "alice:FULL_CONTROL AllUsers:READ" {
		t.Fatalf("ignored grants are still shown: %v", grants)
	}
	// Public ACLs may still be set (BlockPublicAcls is off), to no effect.
	h.expect(h.do("alice", "PUT", "/ipa/new", []byte("x"), "X-Amz-Acl", "public-read"), 200, "")
	h.expect(h.do("", "GET", "/ipa/new", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "DELETE", "/ipa?publicAccessBlock", nil), 204, "")
	h.expect(h.do("", "GET", "/ipa/new", nil), 200, "")
	h.expect(h.do("carol", "GET", "/ipa/auth", nil), 200, "")
}

// TestBlockPublicPolicy: a public bucket policy is refused with 403
// AccessDenied while the block is set; one naming users passes.
func TestBlockPublicPolicy(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bpp", nil), 200, "")
	h.putPAB("bpp", pabDoc(false, false, true, false))
	pub := fmt.Sprintf(publicGetPolicy, "bpp")
	h.expect(h.do("alice", "PUT", "/bpp?policy", []byte(pub)), 403, "AccessDenied")
	h.expect(h.do("root", "PUT", "/bpp?policy", []byte(pub)), 403, "AccessDenied")
	h.expect(h.do("alice", "GET", "/bpp?policy", nil), 404, "NoSuchBucketPolicy")
	confined := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bpp/*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}]}`
	h.expect(h.do("alice", "PUT", "/bpp?policy", []byte(confined)), 204, "")
	rec := h.do("alice", "GET", "/bpp?policyStatus", nil)
	h.expect(rec, 200, "")
	if !strings.Contains(rec.Body.String(), "<IsPublic>false</IsPublic>") {
		t.Fatalf("policy status: %s", rec.Body.String())
	}
	h.expect(h.do("alice", "PUT", "/bpp?policy", []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"bob"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bpp/*"}]}`)), 204, "")
	h.expect(h.do("alice", "PUT", "/bpp?policy", []byte("{")), 400, "MalformedPolicy") // validated first
	h.expect(h.do("alice", "DELETE", "/bpp?publicAccessBlock", nil), 204, "")
	h.expect(h.do("alice", "PUT", "/bpp?policy", []byte(pub)), 204, "")
	// A public policy set before the block stays, and keeps working.
	h.putPAB("bpp", pabDoc(false, false, true, false))
	h.expect(h.do("alice", "PUT", "/bpp/k", []byte("x")), 200, "")
	h.expect(h.do("", "GET", "/bpp/k", nil), 200, "")
	rec = h.do("alice", "GET", "/bpp?policyStatus", nil)
	if !strings.Contains(rec.Body.String(), "<IsPublic>true</IsPublic>") {
		t.Fatalf("policy status: %s", rec.Body.String())
	}
}

// TestRestrictPublicBuckets: while the bucket's policy is public, its
// grants reach only the bucket's owner (and root); a policy that names
// users is not affected; Deny statements still apply.
func TestRestrictPublicBuckets(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/rpb", nil), 200, "")
	h.expect(h.do("bob", "PUT", "/rpb-b", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/rpb/k", []byte("x")), 200, "")
	h.expect(h.do("alice", "PUT", "/rpb/pub", []byte("x"), "X-Amz-Acl", "public-read"), 200, "")
	h.expect(h.do("alice", "PUT", "/rpb?policy", []byte(fmt.Sprintf(publicGetPolicy, "rpb"))), 204, "")
	h.expect(h.do("", "GET", "/rpb/k", nil), 200, "")
	h.expect(h.do("bob", "GET", "/rpb/k", nil), 200, "")
	h.putPAB("rpb", pabDoc(false, false, false, true))
	h.expect(h.do("", "GET", "/rpb/k", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/rpb/k", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "GET", "/rpb/k", nil), 200, "")
	h.expect(h.do("root", "GET", "/rpb/k", nil), 200, "")
	h.expect(h.do("", "GET", "/rpb/pub", nil), 200, "") // ACLs are IgnorePublicAcls' business
	// A policy naming bob alone is not public: it still grants him.
	h.expect(h.do("alice", "PUT", "/rpb?policy", []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"bob"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::rpb/*"}]}`)), 204, "")
	h.expect(h.do("bob", "GET", "/rpb/k", nil), 200, "")
	h.expect(h.do("", "GET", "/rpb/k", nil), 403, "AccessDenied")
	// A public policy with a Deny: the Deny still refuses (the owner too).
	mixed := `{"Version":"2012-10-17","Statement":[` +
		`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::rpb/*"},` +
		`{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::rpb/k"}]}`
	h.expect(h.do("alice", "PUT", "/rpb?policy", []byte(mixed)), 204, "")
	h.expect(h.do("alice", "GET", "/rpb/k", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "GET", "/rpb/pub", nil), 200, "")
	h.expect(h.do("bob", "GET", "/rpb/pub", nil), 200, "") // public-read ACL, not the policy
	h.expect(h.do("alice", "DELETE", "/rpb?publicAccessBlock", nil), 204, "")
	h.expect(h.do("bob", "GET", "/rpb/k", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "PUT", "/rpb/k2", []byte("x")), 200, "")
	h.expect(h.do("bob", "GET", "/rpb/k2", nil), 200, "")
}
