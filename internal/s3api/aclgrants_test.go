package s3api

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/engine"
)

// idOf is the x-amz-grant-* form naming users by canonical id.
func idOf(users ...string) string {
	parts := make([]string, len(users))
	for i, u := range users {
		parts[i] = fmt.Sprintf("id=%q", canonicalID(u))
	}
	return strings.Join(parts, ", ")
}

// grantsOf reads an AccessControlPolicy answer into "who:PERMISSION"
// strings (who: a user's access key, AllUsers or AuthenticatedUsers) and
// its owner's access key.
func grantsOf(t *testing.T, rec *httptest.ResponseRecorder) (owner string, grants []string) {
	t.Helper()
	var doc xmlACLInput
	if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil || doc.Owner == nil {
		t.Fatalf("ACL answer: %v %s", err, rec.Body.String())
	}
	name := func(id string) string {
		if ak, ok := testUsers.LookupCanonicalID(id); ok {
			return ak
		}
		return "unknown:" + id
	}
	for _, g := range doc.Grants {
		who := name(g.Grantee.ID)
		if g.Grantee.URI != "" {
			who = g.Grantee.URI[strings.LastIndex(g.Grantee.URI, "/")+1:]
		}
		if g.Grantee.ID != "" && g.Grantee.DisplayName != who {
			t.Errorf("grantee %s shown as %q", who, g.Grantee.DisplayName)
		}
		grants = append(grants, who+":"+g.Permission)
	}
	return name(doc.Owner.ID), grants
}

// aclBody is an AccessControlPolicy document owned by owner with grants
// written "user:PERM" or "uri:PERM".
func aclBody(owner string, grants ...string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>%s</ID></Owner><AccessControlList>`, canonicalID(owner))
	for _, g := range grants {
		i := strings.LastIndex(g, ":")
		who, perm := g[:i], g[i+1:]
		if strings.HasPrefix(who, "http://") {
			fmt.Fprintf(&b, `<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group"><URI>%s</URI></Grantee><Permission>%s</Permission></Grant>`, who, perm)
			continue
		}
		fmt.Fprintf(&b, `<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>%s</ID></Grantee><Permission>%s</Permission></Grant>`, canonicalID(who), perm)
	}
	b.WriteString(`</AccessControlList></AccessControlPolicy>`)
	return []byte(b.String())
}

// TestGrantHeaders: x-amz-grant-* headers on object writes grant exactly
// the named users and groups each permission; the owner keeps control;
// Get*Acl shows the grants as set.
func TestGrantHeaders(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/grt", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/grt/obj", []byte("data"), "X-Amz-Grant-Read", idOf("bob")), 200, "")
	h.expect(h.do("bob", "GET", "/grt/obj", nil), 200, "")
	h.expect(h.do("bob", "HEAD", "/grt/obj", nil), 200, "")
	h.expect(h.do("carol", "GET", "/grt/obj", nil), 403, "AccessDenied")
	h.expect(h.do("", "GET", "/grt/obj", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "GET", "/grt/obj", nil), 200, "") // the owner keeps every permission
	h.expect(h.do("bob", "GET", "/grt/obj?acl", nil), 403, "AccessDenied")
	owner, grants := grantsOf(t, h.do("alice", "GET", "/grt/obj?acl", nil))
	if owner != "alice" || !reflect.DeepEqual(grants, []string{"bob:READ"}) {
		t.Fatalf("object ACL: owner %s grants %v", owner, grants)
	}

	// Lists, several headers, quoted or not, and groups.
	h.expect(h.do("alice", "PUT", "/grt/two", []byte("x"), "X-Amz-Grant-Read", `id=`+canonicalID("bob")+` , id="`+canonicalID("carol")+`"`), 200, "")
	h.expect(h.do("carol", "GET", "/grt/two", nil), 200, "")
	h.expect(h.do("bob", "GET", "/grt/two", nil), 200, "")
	h.expect(h.do("dave", "GET", "/grt/two", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "PUT", "/grt/pub", []byte("x"), "X-Amz-Grant-Read", `uri="`+uriAllUsers+`"`), 200, "")
	h.expect(h.do("", "GET", "/grt/pub", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/grt/auth", []byte("x"), "X-Amz-Grant-Read", "uri="+uriAuthenticatedUsers), 200, "")
	h.expect(h.do("dave", "GET", "/grt/auth", nil), 200, "")
	h.expect(h.do("", "GET", "/grt/auth", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "PUT", "/grt/logs", []byte("x"), "X-Amz-Grant-Read", "uri="+uriLogDelivery), 200, "")
	h.expect(h.do("", "GET", "/grt/logs", nil), 403, "AccessDenied")

	// READ_ACP, WRITE_ACP and FULL_CONTROL.
	h.expect(h.do("alice", "PUT", "/grt/acp", []byte("x"), "X-Amz-Grant-Read-Acp", idOf("bob"),
		"X-Amz-Grant-Write-Acp", idOf("carol"), "X-Amz-Grant-Full-Control", idOf("dave")), 200, "")
	h.expect(h.do("bob", "GET", "/grt/acp?acl", nil), 200, "")
	h.expect(h.do("bob", "GET", "/grt/acp", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "PUT", "/grt/acp?acl", nil, "X-Amz-Acl", "public-read"), 403, "AccessDenied")
	h.expect(h.do("carol", "GET", "/grt/acp?acl", nil), 403, "AccessDenied")
	h.expect(h.do("dave", "GET", "/grt/acp", nil), 200, "")
	h.expect(h.do("dave", "GET", "/grt/acp?acl", nil), 200, "")
	_, grants = grantsOf(t, h.do("alice", "GET", "/grt/acp?acl", nil))
	if !reflect.DeepEqual(grants, []string{"bob:READ_ACP", "carol:WRITE_ACP", "dave:FULL_CONTROL"}) {
		t.Fatalf("grants %v", grants)
	}
	// carol, with WRITE_ACP only, replaces the ACL (and so gives herself READ).
	h.expect(h.do("carol", "PUT", "/grt/acp?acl", nil, "X-Amz-Grant-Read", idOf("carol")), 200, "")
	h.expect(h.do("carol", "GET", "/grt/acp", nil), 200, "")
	h.expect(h.do("dave", "GET", "/grt/acp", nil), 403, "AccessDenied")

	// Copies and multipart uploads take grant headers too.
	h.expect(h.do("alice", "PUT", "/grt/copy", nil, "X-Amz-Copy-Source", "/grt/obj", "X-Amz-Grant-Read", idOf("carol")), 200, "")
	h.expect(h.do("carol", "GET", "/grt/copy", nil), 200, "")
	h.expect(h.do("bob", "GET", "/grt/copy", nil), 403, "AccessDenied")
	rec := h.do("alice", "POST", "/grt/mp?uploads", nil, "X-Amz-Grant-Read", idOf("dave"))
	h.expect(rec, 200, "")
	var init xmlInitiateMultipart
	if err := xml.Unmarshal(rec.Body.Bytes(), &init); err != nil {
		t.Fatal(err)
	}
	part := h.do("alice", "PUT", "/grt/mp?partNumber=1&uploadId="+init.UploadID, []byte("part"))
	h.expect(part, 200, "")
	h.expect(h.do("alice", "POST", "/grt/mp?uploadId="+init.UploadID, []byte(
		"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"+part.Header().Get("ETag")+"</ETag></Part></CompleteMultipartUpload>")), 200, "")
	h.expect(h.do("dave", "GET", "/grt/mp", nil), 200, "")
	h.expect(h.do("bob", "GET", "/grt/mp", nil), 403, "AccessDenied")

	// Refusals, each leaving nothing behind.
	for _, c := range []struct {
		hdr    []string
		status int
		code   string
	}{
		{[]string{"X-Amz-Acl", "private", "X-Amz-Grant-Read", idOf("bob")}, 400, "InvalidRequest"},
		{[]string{"X-Amz-Grant-Read", `id="` + canonicalID("nobody") + `"`}, 400, "InvalidArgument"},
		{[]string{"X-Amz-Grant-Read", `emailAddress="bob@example.com"`}, 400, "UnresolvableGrantByEmailAddress"},
		{[]string{"X-Amz-Grant-Read", `uri="http://acs.amazonaws.com/groups/global/Everyone"`}, 400, "InvalidArgument"},
		{[]string{"X-Amz-Grant-Read", `bob`}, 400, "InvalidArgument"},
		{[]string{"X-Amz-Grant-Read", `name="bob"`}, 400, "InvalidArgument"},
		{[]string{"X-Amz-Grant-Read", `id=""`}, 400, "InvalidArgument"},
		{[]string{"X-Amz-Grant-Write", " , "}, 400, "InvalidArgument"},
	} {
		h.expect(h.do("alice", "PUT", "/grt/refused", []byte("x"), c.hdr...), c.status, c.code)
		h.expect(h.do("alice", "POST", "/grt/refused?uploads", nil, c.hdr...), c.status, c.code)
		h.expect(h.do("alice", "PUT", "/grt/obj?acl", nil, c.hdr...), c.status, c.code)
		h.expect(h.do("alice", "PUT", "/grt2", nil, c.hdr...), c.status, c.code)
	}
	h.expect(h.do("alice", "HEAD", "/grt/refused", nil), 404, "")
	h.expect(h.do("alice", "HEAD", "/grt2", nil), 404, "")
	if _, grants := grantsOf(t, h.do("alice", "GET", "/grt/obj?acl", nil)); !reflect.DeepEqual(grants, []string{"bob:READ"}) {
		t.Fatalf("refused PutObjectAcl changed the ACL: %v", grants)
	}
}

// TestBucketGrants: grants on buckets open listing (READ), writing
// (WRITE) and the bucket ACL (READ_ACP / WRITE_ACP), and never the objects.
func TestBucketGrants(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bgr", nil, "X-Amz-Grant-Read", idOf("bob"), "X-Amz-Grant-Write", idOf("carol")), 200, "")
	h.expect(h.do("alice", "PUT", "/bgr/secret", []byte("s")), 200, "")
	h.expect(h.do("bob", "GET", "/bgr?list-type=2", nil), 200, "")
	h.expect(h.do("bob", "GET", "/bgr/secret", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "PUT", "/bgr/k", []byte("x")), 403, "AccessDenied")
	h.expect(h.do("carol", "PUT", "/bgr/k", []byte("x")), 200, "")
	h.expect(h.do("carol", "GET", "/bgr?list-type=2", nil), 403, "AccessDenied")
	h.expect(h.do("dave", "GET", "/bgr?list-type=2", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/bgr?acl", nil), 403, "AccessDenied")
	owner, grants := grantsOf(t, h.do("alice", "GET", "/bgr?acl", nil))
	if owner != "alice" || !reflect.DeepEqual(grants, []string{"bob:READ", "carol:WRITE"}) {
		t.Fatalf("bucket ACL: %s %v", owner, grants)
	}
	// PutBucketAcl by header: READ_ACP to dave, WRITE_ACP to eve.
	h.expect(h.do("alice", "PUT", "/bgr?acl", nil, "X-Amz-Grant-Read-Acp", idOf("dave"), "X-Amz-Grant-Write-Acp", idOf("eve")), 200, "")
	h.expect(h.do("bob", "GET", "/bgr?list-type=2", nil), 403, "AccessDenied") // replaced
	h.expect(h.do("dave", "GET", "/bgr?acl", nil), 200, "")
	h.expect(h.do("dave", "PUT", "/bgr?acl", nil, "X-Amz-Acl", "private"), 403, "AccessDenied")
	h.expect(h.do("eve", "GET", "/bgr?acl", nil), 403, "AccessDenied")
	h.expect(h.do("eve", "PUT", "/bgr?acl", nil, "X-Amz-Grant-Full-Control", idOf("eve")), 200, "")
	h.expect(h.do("eve", "GET", "/bgr?list-type=2", nil), 200, "")
	h.expect(h.do("eve", "DELETE", "/bgr", nil), 403, "AccessDenied") // deleting the bucket is the owner's
	h.expect(h.do("eve", "GET", "/bgr?cors", nil), 403, "AccessDenied")
	// A canned ACL replaces the grants again.
	h.expect(h.do("alice", "PUT", "/bgr?acl", nil, "X-Amz-Acl", "private"), 200, "")
	h.expect(h.do("eve", "GET", "/bgr?list-type=2", nil), 403, "AccessDenied")
}

// TestACLBody: PutBucketAcl and PutObjectAcl take an AccessControlPolicy
// body; what Get*Acl returns can be sent back; malformed documents, a
// foreign owner and unknown grantees are refused as S3 refuses them.
func TestACLBody(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/abd", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/abd/obj", []byte("data")), 200, "")
	h.expect(h.do("alice", "PUT", "/abd/obj?acl", aclBody("alice", "alice:FULL_CONTROL", "bob:READ")), 200, "")
	h.expect(h.do("bob", "GET", "/abd/obj", nil), 200, "")
	h.expect(h.do("carol", "GET", "/abd/obj", nil), 403, "AccessDenied")
	rec := h.do("alice", "GET", "/abd/obj?acl", nil)
	owner, grants := grantsOf(t, rec)
	if owner != "alice" || !reflect.DeepEqual(grants, []string{"alice:FULL_CONTROL", "bob:READ"}) {
		t.Fatalf("object ACL: %s %v", owner, grants)
	}
	// Round trip: the answer is a valid request body.
	h.expect(h.do("alice", "PUT", "/abd/obj?acl", rec.Body.Bytes()), 200, "")
	if _, again := grantsOf(t, h.do("alice", "GET", "/abd/obj?acl", nil)); !reflect.DeepEqual(again, grants) {
		t.Fatalf("round trip changed the ACL: %v", again)
	}
	h.expect(h.do("alice", "PUT", "/abd/obj?acl", aclBody("alice", uriAllUsers+":READ")), 200, "")
	h.expect(h.do("", "GET", "/abd/obj", nil), 200, "")
	h.expect(h.do("bob", "GET", "/abd/obj", nil), 200, "")

	// The bucket's ACL by body: bob may list.
	h.expect(h.do("alice", "PUT", "/abd?acl", aclBody("alice", "alice:FULL_CONTROL", "bob:READ")), 200, "")
	h.expect(h.do("bob", "GET", "/abd?list-type=2", nil), 200, "")
	h.expect(h.do("carol", "GET", "/abd?list-type=2", nil), 403, "AccessDenied")

	before := h.do("alice", "GET", "/abd/obj?acl", nil).Body.String()
	const xsi = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`
	owned := `<AccessControlPolicy><Owner><ID>` + canonicalID("alice") + `</ID></Owner><AccessControlList>`
	for _, c := range []struct {
		name   string
		body   string
		hdr    []string
		status int
		code   string
	}{
		{"not xml", "<AccessControlPolicy", nil, 400, "MalformedACLError"},
		{"other root", "<Foo/>", nil, 400, "MalformedACLError"},
		{"no owner", `<AccessControlPolicy><AccessControlList></AccessControlList></AccessControlPolicy>`, nil, 400, "MalformedACLError"},
		{"bad permission", owned + `<Grant><Grantee ` + xsi + ` xsi:type="CanonicalUser"><ID>` + canonicalID("bob") + `</ID></Grantee><Permission>READ_ALL</Permission></Grant></AccessControlList></AccessControlPolicy>`, nil, 400, "MalformedACLError"},
		{"no grantee", owned + `<Grant><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`, nil, 400, "MalformedACLError"},
		{"user without id", owned + `<Grant><Grantee ` + xsi + ` xsi:type="CanonicalUser"></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`, nil, 400, "MalformedACLError"},
		{"unknown type", owned + `<Grant><Grantee ` + xsi + ` xsi:type="Robot"><ID>x</ID></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`, nil, 400, "MalformedACLError"},
		{"foreign owner", string(aclBody("bob", "bob:FULL_CONTROL")), nil, 403, "AccessDenied"},
		{"unknown id", string(aclBody("alice", "nobody:READ")), nil, 400, "InvalidArgument"},
		{"unknown group", string(aclBody("alice", "http://acs.amazonaws.com/groups/global/Everyone:READ")), nil, 400, "InvalidArgument"},
		{"email", owned + `<Grant><Grantee ` + xsi + ` xsi:type="AmazonCustomerByEmail"><EmailAddress>bob@example.com</EmailAddress></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`, nil, 400, "UnresolvableGrantByEmailAddress"},
		{"body and header", string(aclBody("alice", "bob:READ")), []string{"X-Amz-Acl", "private"}, 400, "UnexpectedContent"},
		{"nothing", "", nil, 400, "MissingSecurityHeader"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var body []byte
			if c.body != "" {
				body = []byte(c.body)
			}
			h.expect(h.do("alice", "PUT", "/abd/obj?acl", body, c.hdr...), c.status, c.code)
			h.expect(h.do("alice", "PUT", "/abd?acl", body, c.hdr...), c.status, c.code)
		})
	}
	if after := h.do("alice", "GET", "/abd/obj?acl", nil).Body.String(); after != before {
		t.Fatalf("refused bodies changed the ACL:\n%s\n%s", before, after)
	}
	// Another user's object: its owner is who the body must name, also
	// for the bucket owner holding FULL_CONTROL through its ACL.
	h.expect(h.do("alice", "PUT", "/abd?acl", nil, "X-Amz-Acl", "public-read-write"), 200, "")
	h.expect(h.do("bob", "PUT", "/abd/bobs", []byte("b"), "X-Amz-Acl", "bucket-owner-full-control"), 200, "")
	h.expect(h.do("alice", "PUT", "/abd/bobs?acl", aclBody("alice", "alice:FULL_CONTROL")), 403, "AccessDenied")
	h.expect(h.do("alice", "PUT", "/abd/bobs?acl", aclBody("bob", "bob:FULL_CONTROL", "alice:READ")), 200, "")
	h.expect(h.do("alice", "GET", "/abd/bobs", nil), 200, "")
	h.expect(h.do("alice", "GET", "/abd/bobs?acl", nil), 403, "AccessDenied") // READ only now
}

// TestStoredACLEncoding: explicit grant lists survive the string field
// they are stored in; canned names are left as they are; a damaged list
// grants nothing.
func TestStoredACLEncoding(t *testing.T) {
	gs := []access.Grant{{To: access.CanonicalUser, ID: canonicalID("bob"), Perm: access.PermRead}, {To: access.AllUsers, Perm: access.PermWrite},
		{To: access.AuthenticatedUsers, Perm: access.PermReadACP}, {To: access.LogDelivery, Perm: access.PermWriteACP}, {To: access.CanonicalUser, ID: "x", Perm: access.PermFullControl}}
	s := encodeGrants(gs)
	if !strings.HasPrefix(s, aclGrantsPrefix) {
		t.Fatalf("encoded %q", s)
	}
	got, ok := (&Server{}).decodeGrants(s)
	if !ok || !reflect.DeepEqual(got, gs) {
		t.Fatalf("decoded %+v %v, want %+v", got, ok, gs)
	}
	for acl := range cannedACLs {
		if strings.Contains(acl, ":") {
			t.Fatalf("canned %q collides with the grant list form", acl)
		}
		if _, ok := (&Server{}).decodeGrants(acl); ok {
			t.Fatalf("canned %q decoded as a grant list", acl)
		}
	}
	if got := (&Server{}).aclGrants("public-read", true); !reflect.DeepEqual(got, []access.Grant{{To: access.AllUsers, Perm: access.PermRead}}) {
		t.Fatalf("canned public-read: %+v", got)
	}
	for _, bad := range []string{"grants:", "grants:{", `grants:[{"id":"a","perm":"ALL"}]`, `grants:[{"uri":"http://x","perm":"READ"}]`, "unknown-acl"} {
		if got := (&Server{}).aclGrants(bad, true); len(got) != 0 {
			t.Fatalf("%q grants %+v", bad, got)
		}
	}
	if encodeGrants(nil) != "grants:[]" {
		t.Fatalf("empty list: %q", encodeGrants(nil))
	}
}

// TestUserDirectory: without Config.Users the SigV4 authenticator's users
// are the ones grants may name; with no directory at all every id is
// unknown.
func TestUserDirectory(t *testing.T) {
	users := auth.NewUsers(auth.Identity{AccessKey: "rootkey", SecretKey: "rootsecret"})
	if err := users.Add(auth.Identity{AccessKey: "alicekey", SecretKey: "alicesecret"}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: newFakeStore(), Auth: SigV4{Verifier: &auth.Verifier{Users: users}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ak := range []string{"rootkey", "alicekey"} {
		if got, ok := s.lookupCanonicalID(canonicalID(ak)); !ok || got != ak {
			t.Fatalf("%s: %q %v", ak, got, ok)
		}
	}
	if _, ok := s.lookupCanonicalID(canonicalID("bobkey")); ok {
		t.Fatal("unknown user found")
	}
	h := newHarness(t, func(c *Config) { c.Users = nil })
	h.expect(h.do("alice", "PUT", "/nodir", nil, "X-Amz-Grant-Read", idOf("bob")), 400, "InvalidArgument")
	h.expect(h.do("alice", "PUT", "/nodir", nil, "X-Amz-Grant-Read", "uri="+uriAllUsers), 200, "")
}

// TestObjectOwnershipEnforced: BucketOwnerEnforced turns ACLs off: only
// bucket-owner-full-control (or its explicit form) or no ACL is accepted,
// every object is the bucket owner's, grants count for nothing, Get*Acl
// show the owner's FULL_CONTROL, and bucket policies still decide.
func TestObjectOwnershipEnforced(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/enf", nil, "X-Amz-Acl", "public-read-write"), 200, "")
	h.expect(h.do("bob", "PUT", "/enf/old", []byte("bob's"), "X-Amz-Acl", "public-read"), 200, "")
	h.expect(h.do("alice", "GET", "/enf/old", nil), 200, "") // public-read
	h.expect(h.do("bob", "PUT", "/enf/old-private", []byte("bob's")), 200, "")
	h.expect(h.do("alice", "GET", "/enf/old-private", nil), 403, "AccessDenied")
	// A bucket ACL granting others must go first.
	h.expect(h.do("alice", "PUT", "/enf?ownershipControls", []byte(testOwnership)), 400, "InvalidBucketAclWithObjectOwnership")
	h.expect(h.do("alice", "PUT", "/enf?acl", nil, "X-Amz-Grant-Read", idOf("bob")), 200, "")
	h.expect(h.do("alice", "PUT", "/enf?ownershipControls", []byte(testOwnership)), 400, "InvalidBucketAclWithObjectOwnership")
	h.expect(h.do("alice", "PUT", "/enf?acl", nil, "X-Amz-Grant-Full-Control", idOf("alice")), 200, "")
	h.expect(h.do("alice", "PUT", "/enf?ownershipControls", []byte(testOwnership)), 200, "")

	// Old objects are now the bucket owner's, and their ACLs count for nothing.
	h.expect(h.do("alice", "GET", "/enf/old-private", nil), 200, "")
	h.expect(h.do("", "GET", "/enf/old", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/enf/old", nil), 403, "AccessDenied")
	owner, grants := grantsOf(t, h.do("alice", "GET", "/enf/old?acl", nil))
	if owner != "alice" || !reflect.DeepEqual(grants, []string{"alice:FULL_CONTROL"}) {
		t.Fatalf("object ACL under BucketOwnerEnforced: %s %v", owner, grants)
	}
	owner, grants = grantsOf(t, h.do("alice", "GET", "/enf?acl", nil))
	if owner != "alice" || !reflect.DeepEqual(grants, []string{"alice:FULL_CONTROL"}) {
		t.Fatalf("bucket ACL under BucketOwnerEnforced: %s %v", owner, grants)
	}
	h.expect(h.do("bob", "GET", "/enf/old?acl", nil), 403, "AccessDenied")

	// Writes: no ACL, bucket-owner-full-control and its explicit form pass.
	h.expect(h.do("alice", "PUT", "/enf/a", []byte("x")), 200, "")
	h.expect(h.do("alice", "PUT", "/enf/b", []byte("x"), "X-Amz-Acl", "bucket-owner-full-control"), 200, "")
	h.expect(h.do("alice", "PUT", "/enf/c", []byte("x"), "X-Amz-Grant-Full-Control", idOf("alice")), 200, "")
	for _, hdr := range [][]string{
		{"X-Amz-Acl", "public-read"}, {"X-Amz-Acl", "private"}, {"X-Amz-Acl", "bucket-owner-read"},
		{"X-Amz-Grant-Read", idOf("bob")}, {"X-Amz-Grant-Full-Control", idOf("alice", "bob")},
	} {
		h.expect(h.do("alice", "PUT", "/enf/refused", []byte("x"), hdr...), 400, "AccessControlListNotSupported")
		h.expect(h.do("alice", "PUT", "/enf/refused", nil, append([]string{"X-Amz-Copy-Source", "/enf/a"}, hdr...)...), 400, "AccessControlListNotSupported")
		h.expect(h.do("alice", "POST", "/enf/refused?uploads", nil, hdr...), 400, "AccessControlListNotSupported")
		h.expect(h.do("alice", "PUT", "/enf/a?acl", nil, hdr...), 400, "AccessControlListNotSupported")
		h.expect(h.do("alice", "PUT", "/enf?acl", nil, hdr...), 400, "AccessControlListNotSupported")
	}
	h.expect(h.do("alice", "HEAD", "/enf/refused", nil), 404, "")
	h.expect(h.do("alice", "PUT", "/enf/a?acl", aclBody("alice", "alice:FULL_CONTROL")), 200, "")
	h.expect(h.do("alice", "PUT", "/enf/a?acl", aclBody("alice", "alice:FULL_CONTROL", uriAllUsers+":READ")), 400, "AccessControlListNotSupported")
	h.expect(h.do("alice", "PUT", "/enf/a?acl", nil, "X-Amz-Acl", "bucket-owner-full-control"), 200, "")
	h.expect(h.do("alice", "PUT", "/enf?acl", nil, "X-Amz-Acl", "bucket-owner-full-control"), 200, "")

	// Another user writes through a bucket policy; the object is alice's.
	pol := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"bob"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::enf/*"}]}`
	h.expect(h.do("alice", "PUT", "/enf?policy", []byte(pol)), 204, "")
	h.expect(h.do("bob", "PUT", "/enf/from-bob", []byte("b")), 200, "")
	h.expect(h.do("bob", "PUT", "/enf/from-bob2", []byte("b"), "X-Amz-Acl", "bucket-owner-full-control"), 200, "")
	h.expect(h.do("bob", "GET", "/enf/from-bob", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "GET", "/enf/from-bob", nil), 200, "")
	oi, err := h.store.HeadObject(t.Context(), "enf", "from-bob", engine.GetOptions{})
	if err != nil || oi.Owner != "alice" || oi.ACL != "private" {
		t.Fatalf("stored %+v %v", oi, err)
	}
	// Turning ACLs back on: objects written meanwhile stay alice's, old
	// ones are their writers' again.
	h.expect(h.do("alice", "DELETE", "/enf?ownershipControls", nil), 204, "")
	h.expect(h.do("alice", "GET", "/enf/from-bob", nil), 200, "")
	h.expect(h.do("alice", "GET", "/enf/old-private", nil), 403, "AccessDenied")
	h.expect(h.do("", "GET", "/enf/old", nil), 200, "")
}

// TestCreateBucketObjectOwnership: CreateBucket's x-amz-object-ownership
// stores the ownership controls with the bucket; BucketOwnerEnforced
// with an ACL granting others is refused as S3 refuses it.
func TestCreateBucketObjectOwnership(t *testing.T) {
	h := newHarness(t, nil)
	for _, v := range []string{ownershipEnforced, ownershipPreferred, ownershipWriter} {
		name := "/own-" + strings.ToLower(v)
		h.expect(h.do("alice", "PUT", name, nil, "X-Amz-Object-Ownership", v), 200, "")
		rec := h.do("alice", "GET", name+"?ownershipControls", nil)
		h.expect(rec, 200, "")
		if !strings.Contains(rec.Body.String(), "<ObjectOwnership>"+v+"</ObjectOwnership>") {
			t.Fatalf("%s: %s", v, rec.Body.String())
		}
	}
	h.expect(h.do("alice", "PUT", "/own-default", nil), 200, "")
	h.expect(h.do("alice", "GET", "/own-default?ownershipControls", nil), 404, "OwnershipControlsNotFoundError")
	h.expect(h.do("alice", "PUT", "/own-bad", nil, "X-Amz-Object-Ownership", "Whoever"), 400, "InvalidArgument")
	for _, hdr := range [][]string{{"X-Amz-Acl", "public-read"}, {"X-Amz-Acl", "authenticated-read"}, {"X-Amz-Grant-Read", idOf("bob")}} {
		h.expect(h.do("alice", "PUT", "/own-refused", nil, append([]string{"X-Amz-Object-Ownership", ownershipEnforced}, hdr...)...),
			400, "InvalidBucketAclWithObjectOwnership")
	}
	h.expect(h.do("alice", "HEAD", "/own-refused", nil), 404, "")
	h.expect(h.do("alice", "PUT", "/own-private", nil, "X-Amz-Object-Ownership", ownershipEnforced, "X-Amz-Acl", "private"), 200, "")
	h.expect(h.do("alice", "PUT", "/own-private/k", []byte("x"), "X-Amz-Acl", "public-read"), 400, "AccessControlListNotSupported")
	h.expect(h.do("alice", "PUT", "/own-public", nil, "X-Amz-Object-Ownership", ownershipWriter, "X-Amz-Acl", "public-read"), 200, "")
	h.expect(h.do("", "GET", "/own-public?list-type=2", nil), 200, "")
}

// TestObjectOwnershipPreferred: with BucketOwnerPreferred an object
// written with bucket-owner-full-control belongs to the bucket's owner;
// without it, to its writer.
func TestObjectOwnershipPreferred(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/pref", nil, "X-Amz-Acl", "public-read-write", "X-Amz-Object-Ownership", ownershipPreferred), 200, "")
	h.expect(h.do("bob", "PUT", "/pref/given", []byte("b"), "X-Amz-Acl", "bucket-owner-full-control"), 200, "")
	h.expect(h.do("bob", "PUT", "/pref/kept", []byte("b")), 200, "")
	owner, _ := grantsOf(t, h.do("alice", "GET", "/pref/given?acl", nil))
	if owner != "alice" {
		t.Fatalf("given: owner %s", owner)
	}
	h.expect(h.do("bob", "GET", "/pref/given", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "GET", "/pref/kept", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/pref/kept", nil), 200, "")
	// Multipart uploads and copies too.
	rec := h.do("bob", "POST", "/pref/mp?uploads", nil, "X-Amz-Acl", "bucket-owner-full-control")
	var init xmlInitiateMultipart
	if err := xml.Unmarshal(rec.Body.Bytes(), &init); err != nil {
		t.Fatal(err)
	}
	part := h.do("bob", "PUT", "/pref/mp?partNumber=1&uploadId="+init.UploadID, []byte("part"))
	h.expect(part, 200, "")
	h.expect(h.do("alice", "POST", "/pref/mp?uploadId="+init.UploadID, []byte(
		"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"+part.Header().Get("ETag")+"</ETag></Part></CompleteMultipartUpload>")), 200, "")
	h.expect(h.do("alice", "GET", "/pref/mp?acl", nil), 200, "")
	h.expect(h.do("bob", "PUT", "/pref/copy", nil, "X-Amz-Copy-Source", "/pref/kept", "X-Amz-Acl", "bucket-owner-full-control"), 200, "")
	if owner, _ := grantsOf(t, h.do("alice", "GET", "/pref/copy?acl", nil)); owner != "alice" {
		t.Fatalf("copy: owner %s", owner)
	}
}

// TestGrantHeaderHostile: x-amz-acl and x-amz-grant-* values a client
// should not send, each read as S3 reads it or refused with S3's error,
// never resolved to a user it does not name.
func TestGrantHeaderHostile(t *testing.T) {
	s, err := New(Config{Store: newFakeStore(), Auth: testAuth, Users: testUsers})
	if err != nil {
		t.Fatal(err)
	}
	alice, bob := canonicalID("alice"), canonicalID("bob")
	many := func(n int) string { return strings.TrimSuffix(strings.Repeat("id="+alice+",", n), ",") }
	for _, c := range []struct {
		name, header, value string
		want                string // "who:PERM ..." of the grants, or the error code
	}{
		{"quoted", "X-Amz-Grant-Read", `id="` + alice + `"`, "alice:READ"},
		{"unquoted", "X-Amz-Grant-Read", `id=` + alice, "alice:READ"},
		{"key in capitals", "X-Amz-Grant-Read", `ID=` + alice, "alice:READ"},
		{"spaces around", "X-Amz-Grant-Write", `  id = "` + alice + `"  `, "alice:WRITE"},
		{"trailing comma", "X-Amz-Grant-Read-Acp", `id=` + alice + `,`, "alice:READ_ACP"},
		{"two users", "X-Amz-Grant-Full-Control", `id=` + alice + `, id="` + bob + `"`, "alice:FULL_CONTROL bob:FULL_CONTROL"},
		{"the same user twice", "X-Amz-Grant-Read", `id=` + alice + `,id=` + alice, "alice:READ alice:READ"},
		{"a group", "X-Amz-Grant-Write-Acp", `uri="` + uriAuthenticatedUsers + `"`, "AuthenticatedUsers:WRITE_ACP"},
		{"a hundred grants", "X-Amz-Grant-Read", many(100), strings.TrimSpace(strings.Repeat("alice:READ ", 100))},
		{"a hundred and one", "X-Amz-Grant-Read", many(101), "MalformedACLError"},
		{"a hundred thousand", "X-Amz-Grant-Read", many(100000), "MalformedACLError"},
		{"a comma inside quotes", "X-Amz-Grant-Read", `id="` + alice + `,` + bob + `"`, "InvalidArgument"},
		{"an open quote", "X-Amz-Grant-Read", `id="` + alice, "InvalidArgument"},
		{"a closing quote only", "X-Amz-Grant-Read", `id=` + alice + `"`, "InvalidArgument"},
		{"an empty id", "X-Amz-Grant-Read", `id=""`, "InvalidArgument"},
		{"no value", "X-Amz-Grant-Read", `id=`, "InvalidArgument"},
		{"no key", "X-Amz-Grant-Read", `=` + alice, "InvalidArgument"},
		{"no equals sign", "X-Amz-Grant-Read", alice, "InvalidArgument"},
		{"commas only", "X-Amz-Grant-Read", strings.Repeat(",", 10000), "InvalidArgument"},
		{"an empty header", "X-Amz-Grant-Read", "", "InvalidArgument"},
		{"a prefix of an id", "X-Amz-Grant-Read", `id=` + alice[:63], "InvalidArgument"},
		{"an id in capitals", "X-Amz-Grant-Read", `id=` + strings.ToUpper(alice), "InvalidArgument"},
		{"an access key for an id", "X-Amz-Grant-Read", `id=alice`, "InvalidArgument"},
		{"a NUL", "X-Amz-Grant-Read", "id=\x00" + alice, "InvalidArgument"},
		{"a megabyte id", "X-Amz-Grant-Read", "id=" + strings.Repeat("a", 1<<20), "InvalidArgument"},
		{"a group in capitals", "X-Amz-Grant-Read", `uri=` + strings.ToUpper(uriAllUsers), "InvalidArgument"},
		{"a group with a slash", "X-Amz-Grant-Read", `uri=` + uriAllUsers + `/`, "InvalidArgument"},
		{"an unknown key", "X-Amz-Grant-Read", `user=` + alice, "InvalidArgument"},
		{"an e-mail", "X-Amz-Grant-Read", `emailAddress="alice@example.com"`, "UnresolvableGrantByEmailAddress"},
		{"an e-mail key in capitals", "X-Amz-Grant-Read", `EMAILADDRESS=alice@example.com`, "UnresolvableGrantByEmailAddress"},
		{"a good grant then an unknown id", "X-Amz-Grant-Read", `id=` + alice + `, id=` + strings.Repeat("0", 64), "InvalidArgument"},
		{"a canned ACL", "X-Amz-Acl", "public-read", "canned:public-read"},
		{"a canned ACL with spaces", "X-Amz-Acl", " private ", "canned:private"},
		{"a canned ACL in capitals", "X-Amz-Acl", "Private", "InvalidArgument"},
		{"two canned ACLs", "X-Amz-Acl", "private,public-read", "InvalidArgument"},
		{"an unknown canned ACL", "X-Amz-Acl", "public-write", "InvalidArgument"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			h.Set(c.header, c.value)
			a, err := s.aclFromHeaders(h)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Status != http.StatusBadRequest {
					t.Fatalf("error %v, want a 400", err)
				}
				if e.Code != c.want {
					t.Fatalf("%s, want %s", e.Code, c.want)
				}
				return
			}
			var got []string
			if a.canned != "" {
				got = append(got, "canned:"+a.canned)
			}
			for _, g := range a.grants {
				who := "?"
				switch g.To {
				case access.CanonicalUser:
					who, _ = testUsers.LookupCanonicalID(g.ID)
				case access.AllUsers:
					who = "AllUsers"
				case access.AuthenticatedUsers:
					who = "AuthenticatedUsers"
				}
				got = append(got, who+":"+g.Perm.String())
			}
			if strings.Join(got, " ") != c.want {
				t.Fatalf("%q, want %q", strings.Join(got, " "), c.want)
			}
		})
	}
	// Canned and grant headers at once.
	h := http.Header{}
	h.Set("X-Amz-Acl", "private")
	h.Set("X-Amz-Grant-Read", "id="+alice)
	if _, err := s.aclFromHeaders(h); err == nil || err.(*Error).Code != "InvalidRequest" {
		t.Fatalf("canned and grants: %v", err)
	}
}

// FuzzGrantHeaders: whatever an x-amz-grant-* value holds, it is either
// refused with a 400 or read as grants to known users and S3's groups,
// at most S3's hundred, that survive the stored form unchanged.
func FuzzGrantHeaders(f *testing.F) {
	f.Add("id=" + canonicalID("alice"))
	f.Add(`id="` + canonicalID("bob") + `", uri="` + uriAllUsers + `"`)
	f.Add(`emailAddress="x@y"`)
	f.Add(`uri=` + uriLogDelivery + `,,, id="`)
	f.Add(`"id=a,b"=`)
	s, err := New(Config{Store: newFakeStore(), Auth: testAuth, Users: testUsers})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, gh := range grantHeaders {
			h := http.Header{}
			h.Set(gh.name, v)
			a, err := s.aclFromHeaders(h)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Status != http.StatusBadRequest {
					t.Fatalf("%q: error %v, want a 400", v, err)
				}
				continue
			}
			if !a.explicit || len(a.grants) == 0 || len(a.grants) > maxGrants {
				t.Fatalf("%q: %+v", v, a)
			}
			for _, g := range a.grants {
				if g.Perm != gh.perm {
					t.Fatalf("%q: %v from %s", v, g.Perm, gh.name)
				}
				switch g.To {
				case access.CanonicalUser:
					if _, ok := testUsers.LookupCanonicalID(g.ID); !ok {
						t.Fatalf("%q: granted to unknown id %q", v, g.ID)
					}
				case access.AllUsers, access.AuthenticatedUsers, access.LogDelivery:
				default:
					t.Fatalf("%q: grantee %v", v, g.To)
				}
			}
			back, ok := s.decodeGrants(a.stored())
			if !ok || !reflect.DeepEqual(back, a.grants) {
				t.Fatalf("%q: stored %q read back as %+v", v, a.stored(), back)
			}
		}
	})
}
