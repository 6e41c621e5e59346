package s3api

import (
	"net/http"
	"testing"
)

// TestGetObjectTorrent: ?torrent on an object resolves the object first:
// a missing bucket, key or version is S3's 404, a delete marker 404 with
// its header, a caller who may not read it 403; an object that exists
// is 501 (no torrent is ever made). ?torrent on a bucket, or with
// another method, stays NotImplemented.
func TestGetObjectTorrent(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	h.expect(h.do("alice", "GET", "/nobucket/k?torrent", nil), 404, "NoSuchBucket")
	h.expect(h.do("alice", "GET", "/bk1/missing?torrent", nil), 404, "NoSuchKey")
	h.expect(h.do("alice", "GET", "/bk1/missing?torrent&versionId=", nil), 400, "InvalidArgument")
	h.expect(h.do("alice", "PUT", "/bk1/k", []byte("data")), 200, "")
	h.expect(h.do("alice", "GET", "/bk1/k?torrent", nil), 501, "NotImplemented")
	h.expect(h.do("alice", "GET", "/bk1/k?torrent=", nil), 501, "NotImplemented")
	// Bob may not read alice's private object, and may not learn
	// whether a key exists in her bucket.
	h.expect(h.do("bob", "GET", "/bk1/k?torrent", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/bk1/missing?torrent", nil), 403, "AccessDenied")
	h.expect(h.do("", "GET", "/bk1/k?torrent", nil), 403, "AccessDenied")
	// Other methods and the bucket are no GetObjectTorrent.
	h.expect(h.do("alice", "PUT", "/bk1/k?torrent", []byte("x")), 501, "NotImplemented")
	h.expect(h.do("alice", "GET", "/bk1?torrent", nil), 501, "NotImplemented")
	// The object was not touched by any of it.
	if rec := h.do("alice", "GET", "/bk1/k", nil); rec.Code != http.StatusOK || rec.Body.String() != "data" {
		t.Fatalf("object after torrent requests: %d %q", rec.Code, rec.Body.String())
	}
	// A delete marker as the current version: 404 with the marker's header.
	h.expect(h.do("alice", "PUT", "/bk1?versioning", []byte(`<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`)), 200, "")
	h.expect(h.do("alice", "DELETE", "/bk1/k", nil), 204, "")
	rec := h.do("alice", "GET", "/bk1/k?torrent", nil)
	h.expect(rec, 404, "NoSuchKey")
	if rec.Header().Get("X-Amz-Delete-Marker") != "true" {
		t.Fatalf("delete marker header missing: %v", rec.Header())
	}
}
