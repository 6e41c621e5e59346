package s3api

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
)

const testVersioningEnabled = `<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status></VersioningConfiguration>`

func versioningDoc(status string) []byte {
	return []byte(`<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>` + status + `</Status></VersioningConfiguration>`)
}

// versionedBucket creates bucket b, owned by alice, with versioning in
// state status ("" leaves it never configured).
func (h *harness) versionedBucket(b, status string) {
	h.t.Helper()
	h.expect(h.do("alice", "PUT", "/"+b, nil), 200, "")
	if status != "" {
		h.expect(h.do("alice", "PUT", "/"+b+"?versioning", versioningDoc(status)), 200, "")
	}
}

// putVersion PUTs body as alice and returns the x-amz-version-id answered.
func (h *harness) putVersion(target, body string) string {
	h.t.Helper()
	rec := h.do("alice", "PUT", target, []byte(body))
	h.expect(rec, 200, "")
	return rec.Header().Get("X-Amz-Version-Id")
}

func (h *harness) versioningStatus(b string) string {
	h.t.Helper()
	rec := h.do("alice", "GET", "/"+b+"?versioning", nil)
	h.expect(rec, 200, "")
	var cfg xmlVersioningConfiguration
	if err := xml.Unmarshal(rec.Body.Bytes(), &cfg); err != nil {
		h.t.Fatalf("versioning answer %q: %v", rec.Body.String(), err)
	}
	return cfg.Status
}

func (h *harness) listVersions(target string) xmlListVersions {
	h.t.Helper()
	rec := h.do("alice", "GET", target, nil)
	h.expect(rec, 200, "")
	var out xmlListVersions
	if err := xml.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		h.t.Fatalf("list versions %q: %v", rec.Body.String(), err)
	}
	return out
}

// entryString is a listing entry as "Kind key version latest", for
// comparing whole listings in order.
func entryString(e xmlVersion) string {
	return fmt.Sprintf("%s %s %s %v", e.XMLName.Local, e.Key, e.VersionID, e.IsLatest)
}

func TestBucketVersioningConfig(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/vbk", nil), 200, "")

	// Never configured: S3 answers the document with no Status at all.
	rec := h.do("alice", "GET", "/vbk?versioning", nil)
	h.expect(rec, 200, "")
	if body := rec.Body.String(); strings.Contains(body, "Status") || !strings.Contains(body, `<VersioningConfiguration xmlns="`+s3NS+`"`) {
		t.Fatalf("never configured: %s", body)
	}
	// A document without Status leaves the state as it is.
	h.expect(h.do("alice", "PUT", "/vbk?versioning", []byte(`<VersioningConfiguration/>`)), 200, "")
	if got := h.versioningStatus("vbk"); got != "" {
		t.Fatalf("empty document set %q", got)
	}

	h.expect(h.do("alice", "PUT", "/vbk?versioning", versioningDoc("Enabled")), 200, "")
	if got := h.versioningStatus("vbk"); got != "Enabled" {
		t.Fatalf("status %q", got)
	}
	h.expect(h.do("alice", "PUT", "/vbk?versioning", versioningDoc("Suspended"), "Content-MD5", md5b64(string(versioningDoc("Suspended")))), 200, "")
	if got := h.versioningStatus("vbk"); got != "Suspended" {
		t.Fatalf("status %q", got)
	}
	h.expect(h.do("alice", "PUT", "/vbk?versioning", []byte(`<VersioningConfiguration/>`)), 200, "")
	if got := h.versioningStatus("vbk"); got != "Suspended" {
		t.Fatalf("empty document changed the state to %q", got)
	}

	for _, c := range []struct {
		name, body   string
		status       int
		code, inBody string
	}{
		// S3 answers MalformedXML for a Status it does not know.
		{"lower-case status", string(versioningDoc("enabled")), 400, "MalformedXML", ""},
		{"unknown status", string(versioningDoc("Disabled")), 400, "MalformedXML", ""},
		{"not XML", `<VersioningConfiguration><Status>Enabled`, 400, "MalformedXML", ""},
		{"another document", `<Tagging><Status>Enabled</Status></Tagging>`, 400, "MalformedXML", ""},
		{"bad MfaDelete", `<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Yes</MfaDelete></VersioningConfiguration>`, 400, "MalformedXML", ""},
		{"MFA delete", `<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Enabled</MfaDelete></VersioningConfiguration>`, 501, "NotImplemented", "MFA delete"},
	} {
		rec := h.do("alice", "PUT", "/vbk?versioning", []byte(c.body))
		h.expect(rec, c.status, c.code)
		if !strings.Contains(rec.Body.String(), c.inBody) {
			t.Fatalf("%s: %s", c.name, rec.Body.String())
		}
		if got := h.versioningStatus("vbk"); got != "Suspended" {
			t.Fatalf("%s changed the state to %q", c.name, got)
		}
	}
	h.expect(h.do("alice", "PUT", "/vbk?versioning", []byte(`<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Disabled</MfaDelete></VersioningConfiguration>`)), 200, "")

	// The bucket owner's: others are refused, a missing bucket is NoSuchBucket.
	h.expect(h.do("bob", "PUT", "/vbk?versioning", versioningDoc("Suspended")), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/vbk?versioning", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "GET", "/nob?versioning", nil), 404, "NoSuchBucket")
	h.expect(h.do("alice", "PUT", "/nob?versioning", versioningDoc("Enabled")), 404, "NoSuchBucket")
	// DELETE ?versioning is no API, and must not delete the bucket.
	h.expect(h.do("alice", "DELETE", "/vbk?versioning", nil), 405, "MethodNotAllowed")
	h.expect(h.do("alice", "HEAD", "/vbk", nil), 200, "")
}

func TestVersionedReads(t *testing.T) {
	h := newHarness(t, nil)
	h.versionedBucket("vbk", "Enabled")
	v1 := h.putVersion("/vbk/k", "first")
	v2 := h.putVersion("/vbk/k", "second")
	if v1 == "" || v2 == "" || v1 == v2 || v1 == "null" {
		t.Fatalf("version ids %q %q", v1, v2)
	}
	for id, want := range map[string]string{v1: "first", v2: "second", "": "second"} {
		target := "/vbk/k"
		if id != "" {
			target += "?versionId=" + id
		}
		rec := h.do("alice", "GET", target, nil)
		h.expect(rec, 200, "")
		wantID := id
		if id == "" {
			wantID = v2
		}
		if rec.Body.String() != want || rec.Header().Get("X-Amz-Version-Id") != wantID {
			t.Fatalf("GET %s: %q version %q", target, rec.Body.String(), rec.Header().Get("X-Amz-Version-Id"))
		}
		rec = h.do("alice", "HEAD", target, nil)
		h.expect(rec, 200, "")
		if rec.Header().Get("X-Amz-Version-Id") != wantID || rec.Header().Get("Content-Length") != fmt.Sprint(len(want)) {
			t.Fatalf("HEAD %s: %v", target, rec.Header())
		}
	}
	// Conditions and ranges apply to the version asked for.
	rec := h.do("alice", "GET", "/vbk/k?versionId="+v1, nil, "Range", "bytes=1-2")
	h.expect(rec, 206, "")
	if rec.Body.String() != "ir" {
		t.Fatalf("range of v1: %q", rec.Body.String())
	}
	rec = h.do("alice", "GET", "/vbk/k?versionId="+v1, nil, "If-None-Match", `"`+md5hex("first")+`"`)
	if rec.Code != 304 || rec.Header().Get("ETag") != `"`+md5hex("first")+`"` {
		t.Fatalf("304 of v1: %d %v", rec.Code, rec.Header())
	}

	// Unknown and malformed version ids; S3 refuses an empty one.
	h.expect(h.do("alice", "GET", "/vbk/k?versionId=fv99999999", nil), 404, "NoSuchVersion")
	h.expectError(h.do("alice", "GET", "/vbk/k?versionId=not-a-version", nil), 400, "InvalidArgument", "Invalid version id specified")
	h.expectError(h.do("alice", "GET", "/vbk/k?versionId=", nil), 400, "InvalidArgument", "Version id cannot be the empty string")
	if rec := h.do("alice", "HEAD", "/vbk/k?versionId=fv99999999", nil); rec.Code != 404 || rec.Body.Len() != 0 {
		t.Fatalf("HEAD unknown version: %d %q", rec.Code, rec.Body.String())
	}
	// A caller who may not list learns nothing about versions.
	h.expect(h.do("bob", "GET", "/vbk/k?versionId=fv99999999", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/vbk/k?versionId="+v1, nil), 403, "AccessDenied")

	// GetObjectAttributes of a version answers its version id.
	rec = h.do("alice", "GET", "/vbk/k?attributes&versionId="+v1, nil, "X-Amz-Object-Attributes", "ObjectSize")
	h.expect(rec, 200, "")
	if rec.Header().Get("X-Amz-Version-Id") != v1 || !strings.Contains(rec.Body.String(), "<ObjectSize>5</ObjectSize>") {
		t.Fatalf("attributes of v1: %v %s", rec.Header(), rec.Body.String())
	}

	// A never-versioned bucket answers no version id (S3 has none to
	// show), though "null" still names its objects' only version.
	h.versionedBucket("plain", "")
	if v := h.putVersion("/plain/k", "x"); v != "" {
		t.Fatalf("unversioned PUT answered version %q", v)
	}
	for _, target := range []string{"/plain/k", "/plain/k?versionId=null"} {
		rec := h.do("alice", "GET", target, nil)
		h.expect(rec, 200, "")
		if _, ok := rec.Header()["X-Amz-Version-Id"]; ok {
			t.Fatalf("%s: version id header %v", target, rec.Header())
		}
	}
	h.expect(h.do("alice", "GET", "/plain/k?versionId=fv00000001", nil), 404, "NoSuchVersion")
}

func TestDeleteMarkers(t *testing.T) {
	h := newHarness(t, nil)
	h.versionedBucket("vbk", "Enabled")
	v1 := h.putVersion("/vbk/k", "first")
	v2 := h.putVersion("/vbk/k", "second")

	// A delete without a version id makes a delete marker.
	rec := h.do("alice", "DELETE", "/vbk/k", nil)
	h.expect(rec, 204, "")
	marker := rec.Header().Get("X-Amz-Version-Id")
	if rec.Header().Get("X-Amz-Delete-Marker") != "true" || marker == "" || marker == v2 {
		t.Fatalf("delete: %v", rec.Header())
	}
	// The key now reads as deleted, and says why: 404 NoSuchKey with the
	// marker's headers.
	rec = h.do("alice", "GET", "/vbk/k", nil)
	h.expect(rec, 404, "NoSuchKey")
	if rec.Header().Get("X-Amz-Delete-Marker") != "true" || rec.Header().Get("X-Amz-Version-Id") != marker {
		t.Fatalf("GET of a deleted key: %v", rec.Header())
	}
	rec = h.do("alice", "HEAD", "/vbk/k", nil)
	if rec.Code != 404 || rec.Body.Len() != 0 || rec.Header().Get("X-Amz-Delete-Marker") != "true" {
		t.Fatalf("HEAD of a deleted key: %d %v", rec.Code, rec.Header())
	}
	// A version id naming the marker: 405, with Allow (HTTP requires it)
	// and the marker's Last-Modified, as S3 documents.
	rec = h.do("alice", "GET", "/vbk/k?versionId="+marker, nil)
	h.expect(rec, 405, "MethodNotAllowed")
	if rec.Header().Get("X-Amz-Delete-Marker") != "true" || rec.Header().Get("X-Amz-Version-Id") != marker ||
		rec.Header().Get("Allow") != "DELETE" || rec.Header().Get("Last-Modified") == "" {
		t.Fatalf("GET of the marker: %v", rec.Header())
	}
	rec = h.do("alice", "HEAD", "/vbk/k?versionId="+marker, nil)
	if rec.Code != 405 || rec.Body.Len() != 0 || rec.Header().Get("X-Amz-Delete-Marker") != "true" {
		t.Fatalf("HEAD of the marker: %d %v", rec.Code, rec.Header())
	}
	// Other object calls on the deleted key.
	h.expect(h.do("alice", "GET", "/vbk/k?tagging", nil), 404, "NoSuchKey")
	h.expect(h.do("alice", "GET", "/vbk/k?tagging&versionId="+marker, nil), 405, "MethodNotAllowed")
	h.expect(h.do("alice", "GET", "/vbk/k?acl", nil), 404, "NoSuchKey")
	// Older versions are still there.
	if rec := h.do("alice", "GET", "/vbk/k?versionId="+v1, nil); rec.Code != 200 || rec.Body.String() != "first" {
		t.Fatalf("v1 after delete: %d %q", rec.Code, rec.Body.String())
	}
	// Listings: gone from ListObjects, a DeleteMarker in ListObjectVersions.
	if body := h.do("alice", "GET", "/vbk?list-type=2", nil).Body.String(); strings.Contains(body, "<Key>k</Key>") {
		t.Fatalf("deleted key listed: %s", body)
	}
	lv := h.listVersions("/vbk?versions")
	var got []string
	for _, e := range lv.Entries {
		got = append(got, entryString(e))
	}
	want := []string{"DeleteMarker k " + marker + " true", "Version k " + v2 + " false", "Version k " + v1 + " false"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("versions:\n got %v\nwant %v", got, want)
	}

	// Deleting the marker by id brings the key back at v2; S3 answers
	// x-amz-delete-marker for the removed marker.
	rec = h.do("alice", "DELETE", "/vbk/k?versionId="+marker, nil)
	h.expect(rec, 204, "")
	if rec.Header().Get("X-Amz-Delete-Marker") != "true" || rec.Header().Get("X-Amz-Version-Id") != marker {
		t.Fatalf("delete marker removal: %v", rec.Header())
	}
	if rec := h.do("alice", "GET", "/vbk/k", nil); rec.Code != 200 || rec.Body.String() != "second" {
		t.Fatalf("after marker removal: %d %q", rec.Code, rec.Body.String())
	}
	// Deleting a version removes it for good; no marker header.
	rec = h.do("alice", "DELETE", "/vbk/k?versionId="+v2, nil)
	h.expect(rec, 204, "")
	if rec.Header().Get("X-Amz-Delete-Marker") != "" || rec.Header().Get("X-Amz-Version-Id") != v2 {
		t.Fatalf("version delete: %v", rec.Header())
	}
	h.expect(h.do("alice", "GET", "/vbk/k?versionId="+v2, nil), 404, "NoSuchVersion")
	if rec := h.do("alice", "GET", "/vbk/k", nil); rec.Code != 200 || rec.Body.String() != "first" {
		t.Fatalf("after v2 removal: %d %q", rec.Code, rec.Body.String())
	}
	// Deleting what is not there is not an error in S3; a malformed id is.
	h.expect(h.do("alice", "DELETE", "/vbk/k?versionId="+v2, nil), 204, "")
	h.expectError(h.do("alice", "DELETE", "/vbk/k?versionId=bogus", nil), 400, "InvalidArgument", "Invalid version id specified")
	h.expect(h.do("alice", "DELETE", "/vbk/k?versionId=", nil), 400, "InvalidArgument")
	// In a versioned bucket S3 makes a marker even for a key that has no
	// version.
	rec = h.do("alice", "DELETE", "/vbk/never", nil)
	h.expect(rec, 204, "")
	if rec.Header().Get("X-Amz-Delete-Marker") != "true" {
		t.Fatalf("delete of a missing key: %v", rec.Header())
	}
	// Access: a versioned delete is a write to the bucket, as S3 decides it.
	h.expect(h.do("bob", "DELETE", "/vbk/k?versionId="+v1, nil), 403, "AccessDenied")

	// An unversioned bucket just loses the object; no version headers.
	h.versionedBucket("plain", "")
	h.putVersion("/plain/k", "x")
	rec = h.do("alice", "DELETE", "/plain/k", nil)
	h.expect(rec, 204, "")
	if len(rec.Header().Values("X-Amz-Version-Id"))+len(rec.Header().Values("X-Amz-Delete-Marker")) != 0 {
		t.Fatalf("unversioned delete: %v", rec.Header())
	}
	h.expect(h.do("alice", "GET", "/plain/k", nil), 404, "NoSuchKey")
	h.expect(h.do("alice", "DELETE", "/plain/k", nil), 204, "")
}

func TestSuspendedVersioning(t *testing.T) {
	h := newHarness(t, nil)
	h.versionedBucket("vbk", "Enabled")
	v1 := h.putVersion("/vbk/k", "kept")
	h.expect(h.do("alice", "PUT", "/vbk?versioning", versioningDoc("Suspended")), 200, "")
	// Writes to a suspended bucket make the null version, and a second
	// one replaces it: there is only ever one null version per key. As
	// in S3, the PUT's answer carries no x-amz-version-id.
	if v := h.putVersion("/vbk/k", "null one"); v != "" {
		t.Fatalf("suspended PUT: version header %q, want none", v)
	}
	if v := h.putVersion("/vbk/k", "null two"); v != "" {
		t.Fatalf("suspended PUT: version header %q, want none", v)
	}
	lv := h.listVersions("/vbk?versions")
	var got []string
	for _, e := range lv.Entries {
		got = append(got, entryString(e))
	}
	if want := []string{"Version k null true", "Version k " + v1 + " false"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("versions: %v, want %v", got, want)
	}
	rec := h.do("alice", "GET", "/vbk/k?versionId=null", nil)
	h.expect(rec, 200, "")
	if rec.Body.String() != "null two" || rec.Header().Get("X-Amz-Version-Id") != "null" {
		t.Fatalf("null version: %q %v", rec.Body.String(), rec.Header())
	}
	// A delete makes the null delete marker.
	rec = h.do("alice", "DELETE", "/vbk/k", nil)
	h.expect(rec, 204, "")
	if rec.Header().Get("X-Amz-Delete-Marker") != "true" || rec.Header().Get("X-Amz-Version-Id") != "null" {
		t.Fatalf("suspended delete: %v", rec.Header())
	}
	if rec := h.do("alice", "GET", "/vbk/k?versionId="+v1, nil); rec.Body.String() != "kept" {
		t.Fatalf("v1: %q", rec.Body.String())
	}
}

func TestListObjectVersionsAnswer(t *testing.T) {
	h := newHarness(t, nil)
	h.versionedBucket("vbk", "Enabled")
	a1 := h.putVersion("/vbk/a", "a1")
	rec := h.do("alice", "DELETE", "/vbk/a", nil)
	am := rec.Header().Get("X-Amz-Version-Id")
	a2 := h.putVersion("/vbk/a", "a2")
	b1 := h.putVersion("/vbk/b%20c", "b1")
	d1 := h.putVersion("/vbk/dir/x", "x")
	d2 := h.putVersion("/vbk/dir/y", "y")

	// Version and DeleteMarker elements keep the engine's order in the
	// document itself, not grouped by kind.
	rec = h.do("alice", "GET", "/vbk?versions", nil)
	h.expect(rec, 200, "")
	body := rec.Body.String()
	order := []string{"<Key>a</Key><VersionId>" + a2, "<DeleteMarker><Key>a</Key><VersionId>" + am, "<Key>a</Key><VersionId>" + a1,
		"<Key>b c</Key><VersionId>" + b1, "<Key>dir/x</Key><VersionId>" + d1, "<Key>dir/y</Key><VersionId>" + d2}
	at := 0
	for _, s := range order {
		i := strings.Index(body[at:], s)
		if i < 0 {
			t.Fatalf("%q not in order in %s", s, body)
		}
		at += i + len(s)
	}
	lv := h.listVersions("/vbk?versions")
	if len(lv.Entries) != 6 || lv.IsTruncated || lv.Name != "vbk" || lv.MaxKeys != 1000 {
		t.Fatalf("listing %+v", lv)
	}
	for _, e := range lv.Entries {
		switch e.XMLName.Local {
		case "Version":
			if e.ETag == "" || e.Size == nil || e.StorageClass != "STANDARD" || e.Owner == nil || e.LastModified == "" {
				t.Fatalf("version entry %+v", e)
			}
		case "DeleteMarker":
			if e.ETag != "" || e.Size != nil || e.StorageClass != "" || e.Owner == nil || !e.IsLatest && e.VersionID != am {
				t.Fatalf("marker entry %+v", e)
			}
		default:
			t.Fatalf("entry %q", e.XMLName.Local)
		}
	}
	if !strings.Contains(body, "<DeleteMarker><Key>a</Key><VersionId>"+am+"</VersionId><IsLatest>false</IsLatest><LastModified>") {
		t.Fatalf("marker element: %s", body)
	}

	// max-keys=1 walks every version with the Next markers.
	var walked []string
	keyMarker, versionMarker := "", ""
	for range 20 {
		target := "/vbk?versions&max-keys=1"
		if keyMarker != "" {
			target += "&key-marker=" + strings.ReplaceAll(keyMarker, " ", "%20") + "&version-id-marker=" + versionMarker
		}
		page := h.listVersions(target)
		for _, e := range page.Entries {
			walked = append(walked, string(e.Key)+" "+e.VersionID)
		}
		if !page.IsTruncated {
			break
		}
		if page.NextKeyMarker == "" || page.NextVersionIDMarker == "" || len(page.Entries) != 1 {
			t.Fatalf("page %+v", page)
		}
		keyMarker, versionMarker = string(page.NextKeyMarker), page.NextVersionIDMarker
	}
	if want := []string{"a " + a2, "a " + am, "a " + a1, "b c " + b1, "dir/x " + d1, "dir/y " + d2}; strings.Join(walked, "|") != strings.Join(want, "|") {
		t.Fatalf("walked %v, want %v", walked, want)
	}
	// key-marker alone starts after that key's versions.
	if page := h.listVersions("/vbk?versions&key-marker=a"); len(page.Entries) != 3 || page.Entries[0].Key != "b c" || page.KeyMarker != "a" {
		t.Fatalf("key-marker: %+v", page)
	}
	// A version-id-marker needs a key-marker, as in S3.
	h.expectError(h.do("alice", "GET", "/vbk?versions&version-id-marker="+a1, nil), 400, "InvalidArgument",
		"A version-id marker cannot be specified without a key marker.")
	h.expectError(h.do("alice", "GET", "/vbk?versions&key-marker=a&version-id-marker=bogus", nil), 400, "InvalidArgument",
		"Invalid version id specified")
	// Delimiter, prefix and URL encoding.
	page := h.listVersions("/vbk?versions&delimiter=/&encoding-type=url&key-marker=a%20b")
	if len(page.CommonPrefixes) != 1 || page.CommonPrefixes[0].Prefix != "dir/" || len(page.Entries) != 1 ||
		page.Entries[0].Key != "b%20c" || page.KeyMarker != "a%20b" || page.EncodingType != "url" || page.Delimiter != "/" {
		t.Fatalf("delimiter/url page: %+v", page)
	}
	page = h.listVersions("/vbk?versions&prefix=dir/&max-keys=1&encoding-type=url")
	if !page.IsTruncated || page.NextKeyMarker != "dir/x" || page.NextVersionIDMarker != d1 || page.Prefix != "dir/" {
		t.Fatalf("prefix page: %+v", page)
	}
	// A page that ends on a common prefix has no version to resume after.
	h.putVersion("/vbk/z", "z")
	page = h.listVersions("/vbk?versions&delimiter=/&max-keys=5")
	if !page.IsTruncated || page.NextKeyMarker != "dir/" || page.NextVersionIDMarker != "" {
		t.Fatalf("page ending on a prefix: %+v", page)
	}
	// max-keys=0 is an empty page.
	if page := h.listVersions("/vbk?versions&max-keys=0"); len(page.Entries) != 0 || page.IsTruncated {
		t.Fatalf("max-keys=0: %+v", page)
	}
	// Access: listing versions needs bucket READ.
	h.expect(h.do("bob", "GET", "/vbk?versions", nil), 403, "AccessDenied")

	// A never-versioned bucket lists each object as its null version.
	h.versionedBucket("plain", "")
	h.putVersion("/plain/one", "1")
	page = h.listVersions("/plain?versions&max-keys=1")
	if len(page.Entries) != 1 || page.Entries[0].VersionID != "null" || !page.Entries[0].IsLatest {
		t.Fatalf("unversioned listing: %+v", page)
	}
	h.putVersion("/plain/two", "2")
	page = h.listVersions("/plain?versions&max-keys=1")
	if !page.IsTruncated || page.NextKeyMarker != "one" || page.NextVersionIDMarker != "null" {
		t.Fatalf("unversioned page: %+v", page)
	}
	page = h.listVersions("/plain?versions&key-marker=one&version-id-marker=null")
	if len(page.Entries) != 1 || page.Entries[0].Key != "two" {
		t.Fatalf("resume after null: %+v", page)
	}
}

func TestNextVersionMarker(t *testing.T) {
	null := engine.ObjectInfo{Key: "k"}
	for _, c := range []struct {
		res  engine.ListVersionsResult
		want string
	}{
		{engine.ListVersionsResult{NextKeyMarker: "k", NextVersionIDMarker: "v1"}, "v1"},
		{engine.ListVersionsResult{Versions: []engine.ObjectInfo{null}, NextKeyMarker: "k"}, "null"},
		{engine.ListVersionsResult{Versions: []engine.ObjectInfo{null}, CommonPrefixes: []string{"p/"}, NextKeyMarker: "p/"}, ""},
		{engine.ListVersionsResult{CommonPrefixes: []string{"p/"}, NextKeyMarker: "p/"}, ""},
	} {
		if got := nextVersionMarker(c.res); got != c.want {
			t.Errorf("%+v: %q, want %q", c.res, got, c.want)
		}
	}
}

func TestDeleteObjectsVersions(t *testing.T) {
	h := newHarness(t, nil)
	h.versionedBucket("vbk", "Enabled")
	v1 := h.putVersion("/vbk/k", "first")
	v2 := h.putVersion("/vbk/k", "second")
	rec := h.do("alice", "DELETE", "/vbk/gone", nil)
	marker := rec.Header().Get("X-Amz-Version-Id")
	h.putVersion("/vbk/plain", "p")

	deleteBody := func(quiet bool, objs ...string) []byte {
		var b strings.Builder
		b.WriteString("<Delete>")
		if quiet {
			b.WriteString("<Quiet>true</Quiet>")
		}
		for i := 0; i+1 < len(objs); i += 2 {
			b.WriteString("<Object><Key>" + objs[i] + "</Key>")
			if objs[i+1] != "" {
				b.WriteString("<VersionId>" + objs[i+1] + "</VersionId>")
			}
			b.WriteString("</Object>")
		}
		b.WriteString("</Delete>")
		return []byte(b.String())
	}
	send := func(user string, body []byte) (string, xmlDeleteResult) {
		rec := h.do(user, "POST", "/vbk?delete", body, "Content-MD5", md5b64(string(body)))
		h.expect(rec, 200, "")
		var out xmlDeleteResult
		if err := xml.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		return rec.Body.String(), out
	}
	raw, out := send("alice", deleteBody(false, "k", v1, "gone", marker, "plain", "", "k", "fv99999999", "k", "bogus"))
	if len(out.Deleted) != 4 || len(out.Errors) != 1 {
		t.Fatalf("result %s", raw)
	}
	// A version removed: VersionId only.
	if d := out.Deleted[0]; d.Key != "k" || d.VersionID != v1 || d.DeleteMarker || d.DeleteMarkerVersionID != "" {
		t.Fatalf("version entry %+v", d)
	}
	// A delete marker removed by id: VersionId and DeleteMarker (with its
	// id as DeleteMarkerVersionId, as AWS documents for a version delete).
	if d := out.Deleted[1]; d.Key != "gone" || d.VersionID != marker || !d.DeleteMarker || d.DeleteMarkerVersionID != marker {
		t.Fatalf("marker entry %+v", d)
	}
	// No VersionId in a versioned bucket: a marker was made.
	d := out.Deleted[2]
	if d.Key != "plain" || d.VersionID != "" || !d.DeleteMarker || d.DeleteMarkerVersionID == "" {
		t.Fatalf("new marker entry %+v", d)
	}
	if !strings.Contains(raw, "<Deleted><Key>plain</Key><DeleteMarker>true</DeleteMarker><DeleteMarkerVersionId>"+d.DeleteMarkerVersionID+"</DeleteMarkerVersionId></Deleted>") {
		t.Fatalf("element order: %s", raw)
	}
	// An unknown version is not an error in S3; a malformed one is.
	if d := out.Deleted[3]; d.Key != "k" || d.VersionID != "fv99999999" || d.DeleteMarker {
		t.Fatalf("unknown version entry %+v", d)
	}
	if e := out.Errors[0]; e.Key != "k" || e.VersionID != "bogus" || e.Code != "InvalidArgument" {
		t.Fatalf("error entry %+v", e)
	}
	h.expect(h.do("alice", "GET", "/vbk/k?versionId="+v1, nil), 404, "NoSuchVersion")
	if rec := h.do("alice", "GET", "/vbk/k", nil); rec.Body.String() != "second" {
		t.Fatalf("current: %q", rec.Body.String())
	}
	h.expect(h.do("alice", "GET", "/vbk/gone", nil), 404, "NoSuchKey")
	h.expect(h.do("alice", "GET", "/vbk/plain", nil), 404, "NoSuchKey")

	// Quiet mode reports only errors.
	raw, out = send("alice", deleteBody(true, "k", v2, "k", "bogus"))
	if len(out.Deleted) != 0 || len(out.Errors) != 1 {
		t.Fatalf("quiet: %s", raw)
	}
	// Each entry's access is decided on its own.
	_, out = send("bob", deleteBody(false, "k", "null"))
	if len(out.Errors) != 1 || out.Errors[0].Code != "AccessDenied" || out.Errors[0].VersionID != "null" {
		t.Fatalf("bob: %+v", out)
	}
}

func TestCopyVersions(t *testing.T) {
	h := newHarness(t, nil)
	h.versionedBucket("vbk", "Enabled")
	v1 := h.putVersion("/vbk/src", "version one")
	v2 := h.putVersion("/vbk/src", "version two")

	// A named source version: its bytes, and S3's
	// x-amz-copy-source-version-id; the copy is a new version.
	rec := h.do("alice", "PUT", "/vbk/dst", nil, "X-Amz-Copy-Source", "/vbk/src?versionId="+v1)
	h.expect(rec, 200, "")
	dv := rec.Header().Get("X-Amz-Version-Id")
	if rec.Header().Get("X-Amz-Copy-Source-Version-Id") != v1 || dv == "" || dv == v1 || dv == v2 {
		t.Fatalf("copy of v1: %v", rec.Header())
	}
	if got := h.do("alice", "GET", "/vbk/dst", nil).Body.String(); got != "version one" {
		t.Fatalf("copied %q", got)
	}
	// Without one, the current version is copied and named.
	rec = h.do("alice", "PUT", "/vbk/dst2", nil, "X-Amz-Copy-Source", "vbk/src")
	h.expect(rec, 200, "")
	if rec.Header().Get("X-Amz-Copy-Source-Version-Id") != v2 {
		t.Fatalf("copy of current: %v", rec.Header())
	}
	// Copying an older version onto its own key restores it (S3's way).
	rec = h.do("alice", "PUT", "/vbk/src", nil, "X-Amz-Copy-Source", "/vbk/src?versionId="+v1)
	h.expect(rec, 200, "")
	if got := h.do("alice", "GET", "/vbk/src", nil).Body.String(); got != "version one" {
		t.Fatalf("restored %q", got)
	}
	h.expect(h.do("alice", "PUT", "/vbk/src", nil, "X-Amz-Copy-Source", "/vbk/src"), 400, "InvalidRequest")

	// Missing and refused sources.
	h.expect(h.do("alice", "PUT", "/vbk/dst", nil, "X-Amz-Copy-Source", "/vbk/src?versionId=fv99999999"), 404, "NoSuchVersion")
	h.expectError(h.do("alice", "PUT", "/vbk/dst", nil, "X-Amz-Copy-Source", "/vbk/src?versionId=bogus"), 400, "InvalidArgument", "Invalid version id specified")
	h.expect(h.do("alice", "PUT", "/vbk/dst", nil, "X-Amz-Copy-Source", "/vbk/src?versionId="), 400, "InvalidArgument")
	rec = h.do("alice", "DELETE", "/vbk/src", nil)
	marker := rec.Header().Get("X-Amz-Version-Id")
	rec = h.do("alice", "PUT", "/vbk/dst", nil, "X-Amz-Copy-Source", "/vbk/src")
	h.expect(rec, 404, "NoSuchKey")
	if rec.Header().Get("X-Amz-Delete-Marker") != "" {
		t.Fatalf("copy answer carries the source's marker headers: %v", rec.Header())
	}
	h.expectError(h.do("alice", "PUT", "/vbk/dst", nil, "X-Amz-Copy-Source", "/vbk/src?versionId="+marker), 400, "InvalidRequest",
		"The source of a copy request may not specifically refer to a delete marker by version id.")

	// A never-versioned source and destination: no version headers.
	h.versionedBucket("plain", "")
	h.putVersion("/plain/src", "p")
	rec = h.do("alice", "PUT", "/plain/dst", nil, "X-Amz-Copy-Source", "/plain/src")
	h.expect(rec, 200, "")
	if rec.Header().Get("X-Amz-Copy-Source-Version-Id") != "" || rec.Header().Get("X-Amz-Version-Id") != "" {
		t.Fatalf("unversioned copy: %v", rec.Header())
	}
	// From a versioned source into it: only the source's id.
	rec = h.do("alice", "PUT", "/plain/dst", nil, "X-Amz-Copy-Source", "/vbk/src?versionId="+v2)
	h.expect(rec, 200, "")
	if rec.Header().Get("X-Amz-Copy-Source-Version-Id") != v2 || rec.Header().Get("X-Amz-Version-Id") != "" {
		t.Fatalf("copy into unversioned: %v", rec.Header())
	}

	// UploadPartCopy reads the named version.
	rec = h.do("alice", "POST", "/plain/mp?uploads", nil)
	var init xmlInitiateMultipart
	if err := xml.Unmarshal(rec.Body.Bytes(), &init); err != nil {
		t.Fatal(err)
	}
	rec = h.do("alice", "PUT", "/plain/mp?partNumber=1&uploadId="+init.UploadID, nil,
		"X-Amz-Copy-Source", "/vbk/src?versionId="+v1, "X-Amz-Copy-Source-Range", "bytes=0-6")
	h.expect(rec, 200, "")
	if rec.Header().Get("X-Amz-Copy-Source-Version-Id") != v1 {
		t.Fatalf("part copy: %v", rec.Header())
	}
	if got := string(h.store.uploads[init.UploadID].parts[1]); got != "version" {
		t.Fatalf("part copied %q", got)
	}
	h.expect(h.do("alice", "PUT", "/plain/mp?partNumber=2&uploadId="+init.UploadID, nil,
		"X-Amz-Copy-Source", "/vbk/src?versionId="+marker), 400, "InvalidRequest")
	h.expect(h.do("alice", "PUT", "/plain/mp?partNumber=2&uploadId="+init.UploadID, nil,
		"X-Amz-Copy-Source", "/vbk/src?versionId=fv99999999"), 404, "NoSuchVersion")
}

func TestVersionTaggingAndACL(t *testing.T) {
	h := newHarness(t, nil)
	h.versionedBucket("vbk", "Enabled")
	v1 := h.putVersion("/vbk/k", "first")
	v2 := h.putVersion("/vbk/k", "second")

	// Tags belong to a version: tagging v1 leaves the current v2 alone.
	rec := h.putTagging("alice", "/vbk/k?tagging&versionId="+v1, taggingDoc("old", "yes"))
	h.expect(rec, 200, "")
	if rec.Header().Get("X-Amz-Version-Id") != v1 {
		t.Fatalf("put tagging: %v", rec.Header())
	}
	wantTags(t, "v1", h.tagsOf("alice", "/vbk/k?tagging&versionId="+v1), "old", "yes")
	wantTags(t, "current", h.tagsOf("alice", "/vbk/k?tagging"))
	rec = h.do("alice", "GET", "/vbk/k?tagging", nil)
	if rec.Header().Get("X-Amz-Version-Id") != v2 {
		t.Fatalf("get tagging: %v", rec.Header())
	}
	// GET of the version counts its tags.
	if rec := h.do("alice", "GET", "/vbk/k?versionId="+v1, nil); rec.Header().Get("X-Amz-Tagging-Count") != "1" {
		t.Fatalf("tagging count: %v", rec.Header())
	}
	rec = h.do("alice", "DELETE", "/vbk/k?tagging&versionId="+v1, nil)
	h.expect(rec, 204, "")
	if rec.Header().Get("X-Amz-Version-Id") != v1 {
		t.Fatalf("delete tagging: %v", rec.Header())
	}
	wantTags(t, "v1 after delete", h.tagsOf("alice", "/vbk/k?tagging&versionId="+v1))
	h.expect(h.do("alice", "GET", "/vbk/k?tagging&versionId=fv99999999", nil), 404, "NoSuchVersion")
	h.expect(h.putTagging("alice", "/vbk/k?tagging&versionId=", taggingDoc("a", "b")), 400, "InvalidArgument")

	// ACLs too: v1 made public-read, v2 stays private.
	h.expect(h.do("alice", "PUT", "/vbk/k?acl&versionId="+v1, nil, "X-Amz-Acl", "public-read"), 200, "")
	h.expect(h.do("", "GET", "/vbk/k?versionId="+v1, nil), 200, "")
	h.expect(h.do("", "GET", "/vbk/k", nil), 403, "AccessDenied")
	if body := h.do("alice", "GET", "/vbk/k?acl&versionId="+v1, nil).Body.String(); !strings.Contains(body, uriAllUsers) {
		t.Fatalf("v1 acl: %s", body)
	}
	if body := h.do("alice", "GET", "/vbk/k?acl", nil).Body.String(); strings.Contains(body, uriAllUsers) {
		t.Fatalf("current acl: %s", body)
	}
	h.expect(h.do("alice", "GET", "/vbk/k?acl&versionId=fv99999999", nil), 404, "NoSuchVersion")
}

// TestVersionPolicyActions: a request naming a version is decided with
// AWS's version actions.
func TestVersionPolicyActions(t *testing.T) {
	for _, c := range []struct {
		api, query string
		op         access.Operation
		r          resource
		want       string
	}{
		{"GetObject", "", access.ReadObject, resource{}, "s3:GetObject"},
		{"GetObject", "versionId=v1", access.ReadObject, resource{}, "s3:GetObjectVersion"},
		{"HeadObject", "versionId=null", access.ReadObject, resource{}, "s3:GetObjectVersion"},
		{"GetObjectAttributes", "attributes&versionId=v1", access.ReadObject, resource{}, "s3:GetObjectVersionAttributes"},
		{"DeleteObject", "versionId=v1", access.WriteObject, resource{}, "s3:DeleteObjectVersion"},
		{"DeleteObjects", "delete", access.WriteObject, resource{Resource: access.Resource{Key: "x"}, Version: "v1"}, "s3:DeleteObjectVersion"},
		{"DeleteObjects", "delete&versionId=v1", access.WriteObject, resource{Resource: access.Resource{Key: "x"}}, "s3:DeleteObject"},
		{"GetObjectTagging", "tagging&versionId=v1", access.ObjectTagging, resource{}, "s3:GetObjectVersionTagging"},
		{"PutObjectTagging", "tagging&versionId=v1", access.PutObjectTagging, resource{}, "s3:PutObjectVersionTagging"},
		{"DeleteObjectTagging", "tagging&versionId=v1", access.PutObjectTagging, resource{}, "s3:DeleteObjectVersionTagging"},
		{"GetObjectAcl", "acl&versionId=v1", access.ObjectACL, resource{}, "s3:GetObjectVersionAcl"},
		{"PutObjectAcl", "acl&versionId=v1", access.PutObjectACL, resource{}, "s3:PutObjectVersionAcl"},
		{"CopyObject", "", access.ReadObject, resource{Resource: access.Resource{Key: "src"}, Version: "v1"}, "s3:GetObjectVersion"},
		{"CopyObject", "", access.WriteObject, resource{}, "s3:PutObject"},
		{"ListObjectVersions", "versions", access.ListBucket, resource{}, "s3:ListBucketVersions"},
		{"PutBucketVersioning", "versioning", access.BucketAdmin, resource{}, "s3:PutBucketVersioning"},
		{"GetBucketVersioning", "versioning", access.BucketAdmin, resource{}, "s3:GetBucketVersioning"},
	} {
		r := httptest.NewRequest("GET", "/b/k?"+c.query, nil)
		q := &request{r: r, api: c.api, bucket: "b", key: "k", query: r.URL.Query()}
		c.r.Bucket = "b"
		ar := q.accessRequest(c.op, c.r)
		if ar.Action != c.want {
			t.Errorf("%s ?%s %+v: %s, want %s", c.api, c.query, c.r, ar.Action, c.want)
		}
		v := q.versionOf(c.op, c.r)
		if cond := q.policyConditions(c.op, c.r, v); (v != "") != (cond["s3:versionid"] != nil) {
			t.Errorf("%s ?%s: s3:versionid %v", c.api, c.query, cond["s3:versionid"])
		}
	}
}

// TestVersionPolicyEnforced: a bucket policy denying the version
// actions refuses requests that name a version and only those.
func TestVersionPolicyEnforced(t *testing.T) {
	h := newHarness(t, nil)
	h.versionedBucket("vbk", "Enabled")
	v1 := h.putVersion("/vbk/k", "first")
	h.putVersion("/vbk/k", "second")
	deny := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":["s3:GetObjectVersion","s3:DeleteObjectVersion","s3:ListBucketVersions"],"Resource":["arn:aws:s3:::vbk","arn:aws:s3:::vbk/*"]}]}`
	h.expect(h.do("alice", "PUT", "/vbk?policy", []byte(deny)), 204, "")
	h.expect(h.do("alice", "GET", "/vbk/k?versionId="+v1, nil), 403, "AccessDenied")
	h.expect(h.do("alice", "GET", "/vbk/k", nil), 200, "")
	h.expect(h.do("alice", "DELETE", "/vbk/k?versionId="+v1, nil), 403, "AccessDenied")
	h.expect(h.do("alice", "GET", "/vbk?versions", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "PUT", "/vbk/c", nil, "X-Amz-Copy-Source", "/vbk/k?versionId="+v1), 403, "AccessDenied")
	h.expect(h.do("alice", "PUT", "/vbk/c", nil, "X-Amz-Copy-Source", "/vbk/k"), 200, "")
	body := []byte("<Delete><Object><Key>k</Key><VersionId>" + v1 + "</VersionId></Object><Object><Key>c</Key></Object></Delete>")
	rec := h.do("alice", "POST", "/vbk?delete", body, "Content-MD5", md5b64(string(body)))
	h.expect(rec, 200, "")
	var out xmlDeleteResult
	if err := xml.Unmarshal(rec.Body.Bytes(), &out); err != nil || len(out.Errors) != 1 || out.Errors[0].Key != "k" ||
		len(out.Deleted) != 1 || out.Deleted[0].Key != "c" {
		t.Fatalf("DeleteObjects: %s", rec.Body.String())
	}
	// Root is never refused.
	h.expect(h.do("root", "GET", "/vbk/k?versionId="+v1, nil), 200, "")
}

func TestVersionedWriteAnswers(t *testing.T) {
	h := newHarness(t, nil)
	h.versionedBucket("vbk", "Enabled")
	// CompleteMultipartUpload answers the new version's id in a header.
	rec := h.do("alice", "POST", "/vbk/mp?uploads", nil)
	var init xmlInitiateMultipart
	if err := xml.Unmarshal(rec.Body.Bytes(), &init); err != nil {
		t.Fatal(err)
	}
	h.expect(h.do("alice", "PUT", "/vbk/mp?partNumber=1&uploadId="+init.UploadID, []byte("part")), 200, "")
	complete := "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"" + md5hex("part") + "\"</ETag></Part></CompleteMultipartUpload>"
	rec = h.do("alice", "POST", "/vbk/mp?uploadId="+init.UploadID, []byte(complete))
	h.expect(rec, 200, "")
	v := rec.Header().Get("X-Amz-Version-Id")
	if v == "" || bytes.Contains(rec.Body.Bytes(), []byte("VersionId")) {
		t.Fatalf("complete: %v %s", rec.Header(), rec.Body.String())
	}
	if got := h.do("alice", "HEAD", "/vbk/mp", nil).Header().Get("X-Amz-Version-Id"); got != v {
		t.Fatalf("HEAD after complete: %q, want %q", got, v)
	}
}

func TestDeleteMarkerErrorMapping(t *testing.T) {
	mod := time.Date(2025, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, c := range []struct {
		err          error
		code         string
		status       int
		version      string
		allow, lastM string
	}{
		{&engine.DeleteMarkerError{Marker: engine.ObjectInfo{VersionID: "m1", ModTime: mod}, Err: engine.ErrObjectNotFound}, "NoSuchKey", 404, "m1", "", ""},
		{&engine.DeleteMarkerError{Marker: engine.ObjectInfo{ModTime: mod}, Err: engine.ErrObjectNotFound}, "NoSuchKey", 404, "null", "", ""},
		{&engine.DeleteMarkerError{Marker: engine.ObjectInfo{VersionID: "m1", ModTime: mod}, Err: engine.ErrMethodNotAllowed}, "MethodNotAllowed", 405, "m1", "DELETE", "Tue, 06 May 2025 07:08:09 GMT"},
		{&engine.DeleteMarkerError{Marker: engine.ObjectInfo{VersionID: "m1"}}, "NoSuchKey", 404, "m1", "", ""},
	} {
		for _, err := range []error{c.err, fmt.Errorf("wrapped: %w", c.err)} {
			got := toAPIError(err)
			if got.Code != c.code || got.Status != c.status || got.Header.Get("X-Amz-Delete-Marker") != "true" ||
				got.Header.Get("X-Amz-Version-Id") != c.version || got.Header.Get("Allow") != c.allow ||
				got.Header.Get("Last-Modified") != c.lastM || !errors.Is(got, c.err) {
				t.Errorf("%v: %+v", err, got)
			}
		}
	}
	for _, c := range []struct {
		err    error
		code   string
		status int
	}{
		{engine.ErrNoSuchVersion, "NoSuchVersion", 404},
		{engine.ErrMethodNotAllowed, "MethodNotAllowed", 405},
	} {
		if got := toAPIError(fmt.Errorf("x: %w", c.err)); got.Code != c.code || got.Status != c.status || got.Header != nil {
			t.Errorf("%v: %+v", c.err, got)
		}
	}
	// versionError blames the version id only when one was named.
	if got := toAPIError(versionError(engine.ErrInvalidArgument, "v")); got.Message != "Invalid version id specified" {
		t.Errorf("versionError: %+v", got)
	}
	if got := toAPIError(versionError(engine.ErrInvalidArgument, "")); got.Message == "Invalid version id specified" {
		t.Errorf("versionError without a version: %+v", got)
	}
	if got := versionError(engine.ErrObjectNotFound, "v"); !errors.Is(got, engine.ErrObjectNotFound) {
		t.Errorf("versionError changed %v", got)
	}
}

// TestExpirationOfVersions: x-amz-expiration describes the current
// version, which Expiration rules act on; a noncurrent version read by
// versionId does not get it.
func TestExpirationOfVersions(t *testing.T) {
	h := newHarness(t, nil)
	h.versionedBucket("exv", "Enabled")
	h.expect(h.putLifecycle("alice", "exv", testLifecycle), 200, "")
	v1 := h.putVersion("/exv/logs/a", "1")
	v2 := h.putVersion("/exv/logs/a", "2")
	for target, want := range map[string]bool{"/exv/logs/a": true, "/exv/logs/a?versionId=" + v2: true, "/exv/logs/a?versionId=" + v1: false} {
		rec := h.do("alice", "HEAD", target, nil)
		h.expect(rec, 200, "")
		if got := rec.Header().Get("X-Amz-Expiration") != ""; got != want {
			t.Errorf("%s: x-amz-expiration %q", target, rec.Header().Get("X-Amz-Expiration"))
		}
	}
}
