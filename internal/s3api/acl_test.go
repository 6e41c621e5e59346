package s3api

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The canned ACLs whose grants differ (the others grant nothing to callers
// here and are covered by TestCannedACLCrossOwner).
var matrixACLs = []string{"private", "public-read", "public-read-write", "authenticated-read"}

// aclMatrix is S3's documented answer for every pair of bucket ACL and
// object ACL, for the three callers: "owner" (alice, who owns the bucket
// and wrote the object), "other" (bob, another authenticated user) and
// "anon" (an unsigned request). Each string lists what that caller may do,
// one position per operation, "-" where S3 answers AccessDenied:
//
//	L  ListObjectsV2 on the bucket           bucket READ
//	G  GetObject                             object READ
//	H  HeadObject                            object READ
//	P  PutObject of a new key                bucket WRITE
//	D  DeleteObject                          bucket WRITE
//	C  the object as CopyObject's source     object READ
//
// From S3's "Canned ACL" table: private grants nothing; public-read grants
// AllUsers READ; public-read-write grants AllUsers READ and WRITE;
// authenticated-read grants AuthenticatedUsers READ. A bucket's READ is
// listing only; WRITE on an object means nothing; the owner has
// FULL_CONTROL. Written out by hand on purpose: it is not computed by the
// code under test.
var aclMatrix = []struct {
	bucketACL, objectACL string
	owner, other, anon   string
}{
	{"private", "private", "LGHPDC", "------", "------"},
	{"private", "public-read", "LGHPDC", "-GH--C", "-GH--C"},
	{"private", "public-read-write", "LGHPDC", "-GH--C", "-GH--C"},
	{"private", "authenticated-read", "LGHPDC", "-GH--C", "------"},

	{"public-read", "private", "LGHPDC", "L-----", "L-----"},
	{"public-read", "public-read", "LGHPDC", "LGH--C", "LGH--C"},
	{"public-read", "public-read-write", "LGHPDC", "LGH--C", "LGH--C"},
	{"public-read", "authenticated-read", "LGHPDC", "LGH--C", "L-----"},

	{"public-read-write", "private", "LGHPDC", "L--PD-", "L--PD-"},
	{"public-read-write", "public-read", "LGHPDC", "LGHPDC", "LGHPDC"},
	{"public-read-write", "public-read-write", "LGHPDC", "LGHPDC", "LGHPDC"},
	{"public-read-write", "authenticated-read", "LGHPDC", "LGHPDC", "L--PD-"},

	{"authenticated-read", "private", "LGHPDC", "L-----", "------"},
	{"authenticated-read", "public-read", "LGHPDC", "LGH--C", "-GH--C"},
	{"authenticated-read", "public-read-write", "LGHPDC", "LGH--C", "-GH--C"},
	{"authenticated-read", "authenticated-read", "LGHPDC", "LGH--C", "------"},
}

const matrixOps = "LGHPDC"

// TestACLMatrix checks every bucket ACL x object ACL x caller x operation
// against aclMatrix, each in a fresh store, including that a denied write
// or delete changes nothing and that an allowed one does what it says.
func TestACLMatrix(t *testing.T) {
	if len(aclMatrix) != len(matrixACLs)*len(matrixACLs) {
		t.Fatalf("matrix has %d rows, want every pair", len(aclMatrix))
	}
	seen := map[[2]string]bool{}
	for _, row := range aclMatrix {
		seen[[2]string{row.bucketACL, row.objectACL}] = true
	}
	for _, b := range matrixACLs {
		for _, o := range matrixACLs {
			if !seen[[2]string{b, o}] {
				t.Fatalf("matrix lacks bucket %s x object %s", b, o)
			}
		}
	}
	callers := []struct{ name, user string }{{"owner", "alice"}, {"other", "bob"}, {"anon", ""}}
	for _, row := range aclMatrix {
		for _, c := range callers {
			want := map[string]string{"owner": row.owner, "other": row.other, "anon": row.anon}[c.name]
			if len(want) != len(matrixOps) {
				t.Fatalf("row %+v: %q is not %d long", row, want, len(matrixOps))
			}
			for i, op := range matrixOps {
				allowed := want[i] == byte(op)
				if !allowed && want[i] != '-' {
					t.Fatalf("row %+v: %q has %q where %q or - belongs", row, want, want[i], op)
				}
				name := fmt.Sprintf("bucket=%s/object=%s/%s/%c", row.bucketACL, row.objectACL, c.name, op)
				t.Run(name, func(t *testing.T) {
					h := newMatrixHarness(t, row.bucketACL, row.objectACL)
					h.checkOp(c.user, byte(op), allowed)
				})
			}
			// A missing key is NoSuchKey to whoever may list, else
			// AccessDenied (S3 hides existence from the others).
			canList := want[0] == 'L'
			t.Run(fmt.Sprintf("bucket=%s/object=%s/%s/missing-key", row.bucketACL, row.objectACL, c.name), func(t *testing.T) {
				h := newMatrixHarness(t, row.bucketACL, row.objectACL)
				for _, m := range []string{"GET", "HEAD"} {
					rec := h.do(c.user, m, "/bkt/missing", nil)
					switch {
					case canList && m == "GET":
						h.expect(rec, 404, "NoSuchKey")
					case canList:
						h.expect(rec, 404, "")
					case m == "GET":
						h.expect(rec, 403, "AccessDenied")
					default:
						h.expect(rec, 403, "")
					}
				}
			})
		}
	}
}

// TestACLMatrixRoot: root is shardstore's administrator and may do every
// operation whatever the ACLs say.
func TestACLMatrixRoot(t *testing.T) {
	for _, b := range matrixACLs {
		for _, o := range matrixACLs {
			for _, op := range matrixOps {
				t.Run(fmt.Sprintf("bucket=%s/object=%s/%c", b, o, op), func(t *testing.T) {
					newMatrixHarness(t, b, o).checkOp("root", byte(op), true)
				})
			}
		}
	}
}

type matrixHarness struct{ *harness }

// newMatrixHarness makes bucket "bkt" owned by alice with bucketACL, and
// in it object "obj" ("payload") written by alice with objectACL. Bucket
// "dst", owned by carol and public-read-write, is where copies go, so
// only the copy source's access is in question.
func newMatrixHarness(t *testing.T, bucketACL, objectACL string) matrixHarness {
	t.Helper()
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bkt", nil, "X-Amz-Acl", bucketACL), 200, "")
	h.expect(h.do("alice", "PUT", "/bkt/obj", []byte("payload"), "X-Amz-Acl", objectACL), 200, "")
	h.expect(h.do("carol", "PUT", "/dst", nil, "X-Amz-Acl", "public-read-write"), 200, "")
	return matrixHarness{h}
}

// exists reports whether bucket/key holds an object, asked as root.
func (h matrixHarness) exists(path string) bool {
	h.t.Helper()
	rec := h.do("root", "HEAD", path, nil)
	if rec.Code != 200 && rec.Code != 404 {
		h.t.Fatalf("HEAD %s as root: %d", path, rec.Code)
	}
	return rec.Code == 200
}

// denied checks an AccessDenied answer (no body on HEAD).
func (h matrixHarness) denied(rec *httptest.ResponseRecorder, head bool) {
	h.t.Helper()
	if head {
		h.expect(rec, http.StatusForbidden, "")
		if rec.Body.Len() != 0 || rec.Header().Get("ETag") != "" || rec.Header().Get("Content-Length") == "7" {
			h.t.Fatalf("denied HEAD leaks the object: %v %q", rec.Header(), rec.Body.String())
		}
		return
	}
	h.expect(rec, http.StatusForbidden, "AccessDenied")
	if strings.Contains(rec.Body.String(), "payload") || rec.Header().Get("ETag") != "" {
		h.t.Fatalf("denied answer leaks the object: %v %q", rec.Header(), rec.Body.String())
	}
}

// checkOp runs one matrix operation as user and checks the outcome.
func (h matrixHarness) checkOp(user string, op byte, allowed bool) {
	h.t.Helper()
	switch op {
	case 'L':
		rec := h.do(user, "GET", "/bkt?list-type=2", nil)
		if !allowed {
			h.denied(rec, false)
			return
		}
		h.expect(rec, 200, "")
		if !strings.Contains(rec.Body.String(), "<Key>obj</Key>") {
			h.t.Fatalf("listing lacks obj: %s", rec.Body.String())
		}
	case 'G':
		rec := h.do(user, "GET", "/bkt/obj", nil)
		if !allowed {
			h.denied(rec, false)
			return
		}
		h.expect(rec, 200, "")
		if rec.Body.String() != "payload" {
			h.t.Fatalf("body %q", rec.Body.String())
		}
		// A conditional GET is decided the same way.
		h.expect(h.do(user, "GET", "/bkt/obj", nil, "If-None-Match", rec.Header().Get("ETag")), 304, "")
	case 'H':
		rec := h.do(user, "HEAD", "/bkt/obj", nil)
		if !allowed {
			h.denied(rec, true)
			h.denied(h.do(user, "HEAD", "/bkt/obj", nil, "If-Match", `"nomatch"`), true)
			return
		}
		h.expect(rec, 200, "")
		if rec.Header().Get("Content-Length") != "7" {
			h.t.Fatalf("HEAD headers %v", rec.Header())
		}
	case 'P':
		rec := h.do(user, "PUT", "/bkt/new", []byte("new"))
		if !allowed {
			h.denied(rec, false)
			if h.exists("/bkt/new") {
				h.t.Fatal("denied PUT stored the object")
			}
			return
		}
		h.expect(rec, 200, "")
		if !h.exists("/bkt/new") {
			h.t.Fatal("PUT stored nothing")
		}
	case 'D':
		rec := h.do(user, "DELETE", "/bkt/obj", nil)
		if !allowed {
			h.denied(rec, false)
			if !h.exists("/bkt/obj") {
				h.t.Fatal("denied DELETE removed the object")
			}
			return
		}
		h.expect(rec, 204, "")
		if h.exists("/bkt/obj") {
			h.t.Fatal("DELETE left the object")
		}
	case 'C':
		rec := h.do(user, "PUT", "/dst/copy", nil, "X-Amz-Copy-Source", "/bkt/obj")
		if !allowed {
			h.denied(rec, false)
			if h.exists("/dst/copy") {
				h.t.Fatal("denied copy stored the object")
			}
			return
		}
		h.expect(rec, 200, "")
		if got := h.do("root", "GET", "/dst/copy", nil).Body.String(); got != "payload" {
			h.t.Fatalf("copy holds %q", got)
		}
	default:
		h.t.Fatalf("unknown op %c", op)
	}
}

// TestCannedACLCrossOwner covers objects written into alice's
// public-read-write bucket by bob: the writer owns them, so the bucket
// owner reads one, or reads and changes its ACL, only when its ACL grants
// that (bucket-owner-read, bucket-owner-full-control), while bucket WRITE
// lets anyone delete it. Operations: G get, H head, C copy source, D
// delete, A get and put the object's ACL.
func TestCannedACLCrossOwner(t *testing.T) {
	const ops = "GHCDA"
	rows := []struct {
		objectACL                        string
		bucketOwner, writer, other, anon string
	}{
		{"private", "---D-", "GHCDA", "---D-", "---D-"},
		{"aws-exec-read", "---D-", "GHCDA", "---D-", "---D-"},
		{"bucket-owner-read", "GHCD-", "GHCDA", "---D-", "---D-"},
		{"bucket-owner-full-control", "GHCDA", "GHCDA", "---D-", "---D-"},
		{"public-read", "GHCD-", "GHCDA", "GHCD-", "GHCD-"},
		{"authenticated-read", "GHCD-", "GHCDA", "GHCD-", "---D-"},
	}
	callers := []struct{ name, user string }{{"bucket-owner", "alice"}, {"writer", "bob"}, {"other", "carol"}, {"anon", ""}}
	for _, row := range rows {
		for _, c := range callers {
			want := map[string]string{"bucket-owner": row.bucketOwner, "writer": row.writer, "other": row.other, "anon": row.anon}[c.name]
			for i, op := range ops {
				allowed := want[i] == byte(op)
				t.Run(fmt.Sprintf("object=%s/%s/%c", row.objectACL, c.name, op), func(t *testing.T) {
					h := newHarness(t, nil)
					h.expect(h.do("alice", "PUT", "/bkt", nil, "X-Amz-Acl", "public-read-write"), 200, "")
					h.expect(h.do("bob", "PUT", "/bkt/obj", []byte("payload"), "X-Amz-Acl", row.objectACL), 200, "")
					h.expect(h.do("dave", "PUT", "/dst", nil, "X-Amz-Acl", "public-read-write"), 200, "")
					m := matrixHarness{h}
					if op != 'A' {
						m.checkOp(c.user, byte(op), allowed)
						return
					}
					get := h.do(c.user, "GET", "/bkt/obj?acl", nil)
					put := h.do(c.user, "PUT", "/bkt/obj?acl", nil, "X-Amz-Acl", "public-read")
					if !allowed {
						m.denied(get, false)
						m.denied(put, false)
						if !strings.Contains(h.do("root", "GET", "/bkt/obj?acl", nil).Body.String(), "<Owner><ID>"+canonicalID("bob")) {
							t.Fatal("object ACL owner changed")
						}
						if h.do("", "GET", "/bkt/obj", nil).Code == 200 && row.objectACL != "public-read" {
							t.Fatal("denied PutObjectAcl opened the object")
						}
						return
					}
					h.expect(get, 200, "")
					var acl xmlACL
					if err := xml.Unmarshal(get.Body.Bytes(), &acl); err != nil || acl.Owner.ID != canonicalID("bob") {
						t.Fatalf("object acl: %s", get.Body.String())
					}
					h.expect(put, 200, "")
					h.expect(h.do("", "GET", "/bkt/obj", nil), 200, "")
				})
			}
		}
	}
}

// TestObjectACLDocument: bucket-owner-* object ACLs name the bucket owner
// in GetObjectAcl.
func TestObjectACLDocument(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bkt", nil, "X-Amz-Acl", "public-read-write"), 200, "")
	h.expect(h.do("bob", "PUT", "/bkt/obj", []byte("x"), "X-Amz-Acl", "bucket-owner-full-control"), 200, "")
	var acl xmlACL
	if err := xml.Unmarshal(h.do("bob", "GET", "/bkt/obj?acl", nil).Body.Bytes(), &acl); err != nil {
		t.Fatal(err)
	}
	if len(acl.Grants) != 2 || acl.Grants[1].Grantee.ID != canonicalID("alice") || acl.Grants[1].Permission != "FULL_CONTROL" {
		t.Fatalf("grants: %+v", acl.Grants)
	}
	// On a bucket the bucket-owner-* ACLs grant nothing more.
	h.expect(h.do("alice", "PUT", "/bk2", nil, "X-Amz-Acl", "bucket-owner-read"), 200, "")
	var bacl xmlACL
	if err := xml.Unmarshal(h.do("alice", "GET", "/bk2?acl", nil).Body.Bytes(), &bacl); err != nil || len(bacl.Grants) != 1 {
		t.Fatalf("bucket grants: %+v %v", bacl.Grants, err)
	}
	h.expect(h.do("bob", "GET", "/bk2?list-type=2", nil), 403, "AccessDenied")
}

// TestDeleteObjectsPerKey: DeleteObjects decides access per key and
// reports a denied key as AccessDenied in the result, deleting nothing
// for it.
func TestDeleteObjectsPerKey(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/pub", nil, "X-Amz-Acl", "public-read"), 200, "")
	h.expect(h.do("alice", "PUT", "/pubrw", nil, "X-Amz-Acl", "public-read-write"), 200, "")
	for _, b := range []string{"pub", "pubrw"} {
		for _, k := range []string{"a", "b"} {
			h.expect(h.do("alice", "PUT", "/"+b+"/"+k, []byte(k)), 200, "")
		}
	}
	body := []byte(`<Delete><Object><Key>a</Key></Object><Object><Key>b</Key></Object></Delete>`)
	sum := md5.Sum(body)
	md5h := base64.StdEncoding.EncodeToString(sum[:])
	for _, u := range []string{"bob", ""} {
		rec := h.do(u, "POST", "/pub?delete", body, "Content-MD5", md5h)
		h.expect(rec, 200, "")
		var res xmlDeleteResult
		if err := xml.Unmarshal(rec.Body.Bytes(), &res); err != nil || len(res.Deleted) != 0 || len(res.Errors) != 2 ||
			res.Errors[0].Code != "AccessDenied" || res.Errors[1].Key != "b" {
			t.Fatalf("denied batch delete: %s", rec.Body.String())
		}
		for _, k := range []string{"a", "b"} {
			if h.do("alice", "GET", "/pub/"+k, nil).Code != 200 {
				t.Fatalf("denied batch delete removed %s", k)
			}
		}
	}
	rec := h.do("", "POST", "/pubrw?delete", body, "Content-MD5", md5h)
	h.expect(rec, 200, "")
	var res xmlDeleteResult
	if err := xml.Unmarshal(rec.Body.Bytes(), &res); err != nil || len(res.Deleted) != 2 || len(res.Errors) != 0 {
		t.Fatalf("allowed batch delete: %s", rec.Body.String())
	}
	h.expect(h.do("", "POST", "/nosuch?delete", body, "Content-MD5", md5h), 404, "NoSuchBucket")
}

// TestMultipartAccess: creating, uploading and completing need bucket
// WRITE; listing parts and aborting need the bucket owner or the upload's
// initiator; UploadPartCopy's source needs READ on the source object.
func TestMultipartAccess(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/rwb", nil, "X-Amz-Acl", "public-read-write"), 200, "")
	h.expect(h.do("alice", "PUT", "/pub", nil, "X-Amz-Acl", "public-read"), 200, "")
	h.expect(h.do("alice", "PUT", "/pub/secret", []byte("secret"), "X-Amz-Acl", "private"), 200, "")
	h.expect(h.do("alice", "PUT", "/pub/open", []byte("open"), "X-Amz-Acl", "public-read"), 200, "")
	initiate := func(user, bucket string) (*httptest.ResponseRecorder, string) {
		rec := h.do(user, "POST", "/"+bucket+"/k?uploads", nil)
		var init xmlInitiateMultipart
		_ = xml.Unmarshal(rec.Body.Bytes(), &init)
		return rec, init.UploadID
	}
	rec, _ := initiate("bob", "pub")
	h.expect(rec, 403, "AccessDenied")
	rec, id := initiate("bob", "rwb")
	h.expect(rec, 200, "")
	// carol may write the bucket but this upload is bob's.
	h.expect(h.do("carol", "GET", "/rwb/k?uploadId="+id, nil), 403, "AccessDenied")
	h.expect(h.do("carol", "DELETE", "/rwb/k?uploadId="+id, nil), 403, "AccessDenied")
	h.expect(h.do("", "DELETE", "/rwb/k?uploadId="+id, nil), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/rwb/k?uploadId="+id, nil), 200, "")
	h.expect(h.do("alice", "GET", "/rwb/k?uploadId="+id, nil), 200, "")
	h.expect(h.do("carol", "GET", "/rwb/k?uploadId=nope", nil), 404, "NoSuchUpload")
	h.expect(h.do("dave", "GET", "/pub/k?uploadId=nope", nil), 403, "AccessDenied")
	// Part copies read their source like GetObject.
	h.expect(h.do("bob", "PUT", "/rwb/k?partNumber=1&uploadId="+id, nil, "X-Amz-Copy-Source", "/pub/secret"), 403, "AccessDenied")
	h.expect(h.do("bob", "PUT", "/rwb/k?partNumber=1&uploadId="+id, nil, "X-Amz-Copy-Source", "/pub/open"), 200, "")
	h.expect(h.do("bob", "PUT", "/rwb/k?partNumber=2&uploadId="+id, nil, "X-Amz-Copy-Source", "/pub/missing"), 404, "NoSuchKey")
	h.expect(h.do("alice", "PUT", "/priv", nil), 200, "")
	h.expect(h.do("bob", "PUT", "/rwb/k?partNumber=2&uploadId="+id, nil, "X-Amz-Copy-Source", "/priv/missing"), 403, "AccessDenied")
	// The bucket owner may abort anyone's upload.
	h.expect(h.do("alice", "DELETE", "/rwb/k?uploadId="+id, nil), 204, "")
	_, id = initiate("bob", "rwb")
	h.expect(h.do("bob", "DELETE", "/rwb/k?uploadId="+id, nil), 204, "")
}

// TestExpectedBucketOwner: x-amz-expected-bucket-owner that does not name
// the bucket's owner answers 403 AccessDenied on every bucket and object
// operation, and the operation changes nothing; the owner's canonical id
// (as ListBuckets reports it) or access key lets it through.
func TestExpectedBucketOwner(t *testing.T) {
	setup := func(t *testing.T) (*harness, string) {
		h := newHarness(t, nil)
		h.expect(h.do("alice", "PUT", "/bkt", nil, "X-Amz-Acl", "public-read-write"), 200, "")
		h.expect(h.do("alice", "PUT", "/bkt/obj", []byte("payload"), "X-Amz-Tagging", "set=up"), 200, "")
		h.expect(h.do("alice", "PUT", "/other", nil), 200, "")
		h.expect(h.do("alice", "PUT", "/other/src", []byte("source")), 200, "")
		rec := h.do("alice", "POST", "/bkt/up?uploads", nil)
		var init xmlInitiateMultipart
		if err := xml.Unmarshal(rec.Body.Bytes(), &init); err != nil {
			t.Fatal(err)
		}
		h.expect(h.do("alice", "PUT", "/bkt/up?partNumber=1&uploadId="+init.UploadID, []byte("part")), 200, "")
		return h, init.UploadID
	}
	del := []byte(`<Delete><Object><Key>obj</Key></Object></Delete>`)
	sum := md5.Sum(del)
	delMD5 := base64.StdEncoding.EncodeToString(sum[:])
	complete := func(h *harness, id string) []byte {
		rec := h.do("root", "GET", "/bkt/up?uploadId="+id, nil)
		var lp xmlListParts
		_ = xml.Unmarshal(rec.Body.Bytes(), &lp)
		return []byte(fmt.Sprintf("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>", lp.Parts[0].ETag))
	}
	type call struct {
		name, method, target string
		body                 func(h *harness, id string) []byte
		hdr                  []string
		ok                   int
	}
	calls := []call{
		{"ListObjectsV2", "GET", "/bkt?list-type=2", nil, nil, 200},
		{"ListObjects", "GET", "/bkt", nil, nil, 200},
		{"ListObjectVersions", "GET", "/bkt?versions", nil, nil, 200},
		{"ListMultipartUploads", "GET", "/bkt?uploads", nil, nil, 200},
		{"HeadBucket", "HEAD", "/bkt", nil, nil, 200},
		{"GetBucketLocation", "GET", "/bkt?location", nil, nil, 200},
		{"GetBucketAcl", "GET", "/bkt?acl", nil, nil, 200},
		{"PutBucketAcl", "PUT", "/bkt?acl", nil, []string{"X-Amz-Acl", "private"}, 200},
		{"DeleteBucket", "DELETE", "/other", nil, nil, 409},
		{"GetObject", "GET", "/bkt/obj", nil, nil, 200},
		{"HeadObject", "HEAD", "/bkt/obj", nil, nil, 200},
		{"GetObjectAcl", "GET", "/bkt/obj?acl", nil, nil, 200},
		{"PutObjectAcl", "PUT", "/bkt/obj?acl", nil, []string{"X-Amz-Acl", "public-read"}, 200},
		{"PutObject", "PUT", "/bkt/obj", func(*harness, string) []byte { return []byte("changed") }, nil, 200},
		{"DeleteObject", "DELETE", "/bkt/obj", nil, nil, 204},
		{"DeleteObjects", "POST", "/bkt?delete", func(*harness, string) []byte { return del }, []string{"Content-MD5", delMD5}, 200},
		{"CopyObject", "PUT", "/bkt/obj", nil, []string{"X-Amz-Copy-Source", "/other/src"}, 200},
		{"CreateMultipartUpload", "POST", "/bkt/new?uploads", nil, nil, 200},
		{"UploadPart", "PUT", "/bkt/up?partNumber=2&uploadId=ID", func(*harness, string) []byte { return []byte("more") }, nil, 200},
		{"UploadPartCopy", "PUT", "/bkt/up?partNumber=2&uploadId=ID", nil, []string{"X-Amz-Copy-Source", "/other/src"}, 200},
		{"ListParts", "GET", "/bkt/up?uploadId=ID", nil, nil, 200},
		{"CompleteMultipartUpload", "POST", "/bkt/up?uploadId=ID", complete, nil, 200},
		{"AbortMultipartUpload", "DELETE", "/bkt/up?uploadId=ID", nil, nil, 204},
		{"PutBucketCors", "PUT", "/bkt?cors", func(*harness, string) []byte { return []byte(testCORS) }, []string{"Content-MD5", md5b64(testCORS)}, 200},
		{"GetBucketCors", "GET", "/bkt?cors", nil, nil, 404},
		{"DeleteBucketCors", "DELETE", "/bkt?cors", nil, nil, 204},
		{"PutBucketOwnershipControls", "PUT", "/bkt?ownershipControls", func(*harness, string) []byte { return []byte(testOwnershipPreferred) }, nil, 200},
		{"GetBucketOwnershipControls", "GET", "/bkt?ownershipControls", nil, nil, 404},
		{"DeleteBucketOwnershipControls", "DELETE", "/bkt?ownershipControls", nil, nil, 204},
		{"PutBucketWebsite", "PUT", "/bkt?website", func(*harness, string) []byte { return []byte(testWebsite) }, nil, 200},
		{"GetBucketWebsite", "GET", "/bkt?website", nil, nil, 404},
		{"DeleteBucketWebsite", "DELETE", "/bkt?website", nil, nil, 204},
		{"PutPublicAccessBlock", "PUT", "/bkt?publicAccessBlock", func(*harness, string) []byte { return []byte(testPAB) }, []string{"Content-MD5", md5b64(testPAB)}, 200},
		{"GetPublicAccessBlock", "GET", "/bkt?publicAccessBlock", nil, nil, 404},
		{"DeletePublicAccessBlock", "DELETE", "/bkt?publicAccessBlock", nil, nil, 204},
		{"PutObjectTagging", "PUT", "/bkt/obj?tagging", func(*harness, string) []byte { return []byte(taggingDoc("k", "v")) },
			[]string{"Content-MD5", md5b64(taggingDoc("k", "v"))}, 200},
		{"GetObjectTagging", "GET", "/bkt/obj?tagging", nil, nil, 200},
		{"DeleteObjectTagging", "DELETE", "/bkt/obj?tagging", nil, nil, 204},
		{"PutBucketTagging", "PUT", "/bkt?tagging", func(*harness, string) []byte { return []byte(taggingDoc("k", "v")) },
			[]string{"Content-MD5", md5b64(taggingDoc("k", "v"))}, 204},
		{"GetBucketTagging", "GET", "/bkt?tagging", nil, nil, 404},
		{"DeleteBucketTagging", "DELETE", "/bkt?tagging", nil, nil, 204},
		{"PutBucketLifecycleConfiguration", "PUT", "/bkt?lifecycle", func(*harness, string) []byte { return []byte(testLifecycle) },
			[]string{"Content-MD5", md5b64(testLifecycle)}, 200},
		{"GetBucketLifecycleConfiguration", "GET", "/bkt?lifecycle", nil, nil, 404},
		{"DeleteBucketLifecycle", "DELETE", "/bkt?lifecycle", nil, nil, 204},
		{"PutBucketVersioning", "PUT", "/bkt?versioning", func(*harness, string) []byte { return []byte(testVersioningEnabled) }, nil, 200},
		{"GetBucketVersioning", "GET", "/bkt?versioning", nil, nil, 200},
		{"GetObjectVersion", "GET", "/bkt/obj?versionId=null", nil, nil, 200},
		// bkt has no object lock, so the object lock calls are refused
		// after the owner check (409 without versioning, 404, 400).
		{"PutObjectLockConfiguration", "PUT", "/bkt?object-lock", func(*harness, string) []byte { return []byte(testLockConfig) },
			[]string{"Content-MD5", md5b64(testLockConfig)}, 409},
		{"GetObjectLockConfiguration", "GET", "/bkt?object-lock", nil, nil, 404},
		{"PutObjectRetention", "PUT", "/bkt/obj?retention", func(*harness, string) []byte { return []byte(retentionDoc("GOVERNANCE", futureDate())) },
			[]string{"X-Amz-Sdk-Checksum-Algorithm", "CRC32"}, 400},
		{"GetObjectRetention", "GET", "/bkt/obj?retention", nil, nil, 400},
		{"PutObjectLegalHold", "PUT", "/bkt/obj?legal-hold", func(*harness, string) []byte { return []byte(legalHoldDoc("ON")) },
			[]string{"X-Amz-Sdk-Checksum-Algorithm", "CRC32"}, 400},
		{"GetObjectLegalHold", "GET", "/bkt/obj?legal-hold", nil, nil, 400},
		{"DeleteObjectVersion", "DELETE", "/bkt/obj?versionId=null", nil, nil, 204},
		{"PutBucketLogging", "PUT", "/bkt?logging", func(*harness, string) []byte { return loggingBody("other", "p/", "") }, nil, 200},
		{"GetBucketLogging", "GET", "/bkt?logging", nil, nil, 200},
		{"PutBucketNotificationConfiguration", "PUT", "/bkt?notification", func(*harness, string) []byte { return []byte("<NotificationConfiguration/>") }, nil, 200},
		{"GetBucketNotificationConfiguration", "GET", "/bkt?notification", nil, nil, 200},
	}
	// state is everything a call could change, read as root.
	state := func(h *harness, id string) string {
		var b strings.Builder
		for _, p := range []string{"/bkt/obj", "/bkt/obj?acl", "/bkt?acl", "/bkt/up?uploadId=" + id, "/bkt?list-type=2", "/bkt?uploads", "/other?list-type=2",
			"/bkt?publicAccessBlock", "/bkt?ownershipControls", "/bkt/obj?tagging", "/bkt?tagging", "/bkt?lifecycle",
			"/bkt?versioning", "/bkt?versions", "/bkt?logging", "/bkt?notification"} {
			rec := h.do("root", "GET", p, nil)
			body := rec.Body.String()
			if i := strings.Index(body, "<RequestId>"); i >= 0 {
				body = body[:i]
			}
			fmt.Fprintf(&b, "%s %d %s\n", p, rec.Code, body)
		}
		return b.String()
	}
	for _, c := range calls {
		for _, user := range []string{"alice", "root", "bob"} {
			for _, expect := range []struct {
				name, value string
				match       bool
			}{
				{"wrong-id", canonicalID("bob"), false},
				{"wrong-key", "bob", false},
				{"account-number", "111122223333", false},
				{"canonical-id", canonicalID("alice"), true},
				{"access-key", "alice", true},
			} {
				if user == "bob" && expect.match {
					continue // bob is refused by the ACLs; only mismatches are checked for him
				}
				t.Run(c.name+"/"+user+"/"+expect.name, func(t *testing.T) {
					h, id := setup(t)
					var body []byte
					if c.body != nil {
						body = c.body(h, id)
					}
					hdr := append([]string{"X-Amz-Expected-Bucket-Owner", expect.value}, c.hdr...)
					before := state(h, id)
					rec := h.do(user, c.method, strings.ReplaceAll(c.target, "ID", id), body, hdr...)
					if expect.match {
						h.expect(rec, c.ok, "")
						return
					}
					if c.method == "HEAD" {
						h.expect(rec, 403, "")
					} else {
						h.expect(rec, 403, "AccessDenied")
					}
					if after := state(h, id); after != before {
						t.Fatalf("refused call changed state:\nbefore %s\nafter  %s", before, after)
					}
				})
			}
		}
	}
	// The copy source's owner is checked by x-amz-source-expected-bucket-owner.
	for _, target := range []string{"/bkt/copy", "/bkt/up?partNumber=3&uploadId=ID"} {
		h, id := setup(t)
		target = strings.ReplaceAll(target, "ID", id)
		before := state(h, id)
		for _, v := range []string{canonicalID("bob"), "bob"} {
			rec := h.do("alice", "PUT", target, nil, "X-Amz-Copy-Source", "/other/src", "X-Amz-Source-Expected-Bucket-Owner", v)
			h.expect(rec, 403, "AccessDenied")
		}
		if state(h, id) != before {
			t.Fatalf("%s: refused copy changed state", target)
		}
		h.expect(h.do("alice", "PUT", target, nil, "X-Amz-Copy-Source", "/other/src",
			"X-Amz-Source-Expected-Bucket-Owner", canonicalID("alice"), "X-Amz-Expected-Bucket-Owner", canonicalID("alice")), 200, "")
	}
	// A missing bucket is still NoSuchBucket; ListBuckets reports the id compared.
	h, _ := setup(t)
	h.expect(h.do("alice", "GET", "/nosuch", nil, "X-Amz-Expected-Bucket-Owner", "x"), 404, "NoSuchBucket")
	if !strings.Contains(h.do("alice", "GET", "/", nil).Body.String(), "<ID>"+canonicalID("alice")+"</ID>") {
		t.Fatal("ListBuckets owner id is not the canonical id compared")
	}
}
