package e2e

import (
	"bytes"
	"context"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestReadersNeverBlockWriters keeps a download of a 16 MiB object open,
// mostly unread, while the same key is overwritten, deleted, batch-deleted
// and written again: each of those must finish (within 20 s, far below the
// engine's 30 s lock timeout), and the open download must then deliver the
// version it started with, byte for byte.
func TestReadersNeverBlockWriters(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "pinned")
	const key = "big/object"
	orig := pattern(16<<20, 11)
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("pinned"), Key: aws.String(key), Body: bytes.NewReader(orig)}); err != nil {
		t.Fatal(err)
	}
	g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("pinned"), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Body.Close()
	head := make([]byte, 64<<10)
	if _, err := io.ReadFull(g.Body, head); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(head, orig[:len(head)]) {
		t.Fatal("first 64 KiB of the download differ from the object")
	}

	// The download is open and stalled (the server is blocked writing
	// into a full socket). Every writer must get through regardless.
	wctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	step := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s while a download of the key is open: %v", what, err)
		}
	}
	second := pattern(5<<20, 12)
	_, err = c.PutObject(wctx, &s3.PutObjectInput{Bucket: aws.String("pinned"), Key: aws.String(key), Body: bytes.NewReader(second)})
	step("PutObject (overwrite)", err)
	g2, err := c.GetObject(wctx, &s3.GetObjectInput{Bucket: aws.String("pinned"), Key: aws.String(key)})
	step("GetObject of the new version", err)
	if b := mustRead(t, g2.Body); !bytes.Equal(b, second) {
		t.Fatalf("a new GET reads %d bytes, not the %d just written", len(b), len(second))
	}
	_, err = c.DeleteObject(wctx, &s3.DeleteObjectInput{Bucket: aws.String("pinned"), Key: aws.String(key)})
	step("DeleteObject", err)
	_, err = c.HeadObject(wctx, &s3.HeadObjectInput{Bucket: aws.String("pinned"), Key: aws.String(key)})
	wantCode(t, err, "", 404)
	// Put it back so DeleteObjects has something to remove.
	_, err = c.PutObject(wctx, &s3.PutObjectInput{Bucket: aws.String("pinned"), Key: aws.String(key), Body: bytes.NewReader(second)})
	step("PutObject (after delete)", err)
	del, err := c.DeleteObjects(wctx, &s3.DeleteObjectsInput{Bucket: aws.String("pinned"),
		Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String(key)}}}})
	step("DeleteObjects", err)
	if len(del.Errors) != 0 || len(del.Deleted) != 1 || aws.ToString(del.Deleted[0].Key) != key {
		t.Fatalf("DeleteObjects: deleted %d, errors %+v", len(del.Deleted), del.Errors)
	}
	_, err = c.HeadObject(wctx, &s3.HeadObjectInput{Bucket: aws.String("pinned"), Key: aws.String(key)})
	wantCode(t, err, "", 404)
	third := pattern(3<<20, 13)
	_, err = c.PutObject(wctx, &s3.PutObjectInput{Bucket: aws.String("pinned"), Key: aws.String(key), Body: bytes.NewReader(third)})
	step("PutObject (final)", err)

	// The first download still delivers the version it resolved.
	rest, err := io.ReadAll(g.Body)
	if err != nil {
		t.Fatalf("reading the rest of the pinned download: %v", err)
	}
	if got := append(head, rest...); !bytes.Equal(got, orig) {
		t.Fatalf("the open download returned %d bytes that are not the original 16 MiB object (%d bytes)", len(got), len(orig))
	}
	if err := g.Body.Close(); err != nil {
		t.Fatal(err)
	}
	if b := getBody(t, c, "pinned", key); !bytes.Equal(b, third) {
		t.Fatalf("after the download closed the key reads %d bytes, want the final %d", len(b), len(third))
	}
}

// TestPathLikeKeysSDK stores keys a file system could not (empty, "." and
// ".." segments, a leading slash, 1000- and 1024-byte segments) through
// aws-sdk-go-v2 at default settings, which sends each path unchanged
// ("/bucket/..", "/bucket//x"; it cleans none), and checks each is its own
// object, listed as itself, and deletable.
func TestPathLikeKeysSDK(t *testing.T) {
	s := startServer(t)
	c := s.root()
	cx := ctx(t)
	createBucket(t, c, "pathy")
	keys := []string{
		"a//b", "/x", "../x", ".", "..", "./a", "a/./b", "a/../b", "a/..", "x/", "//", "/",
		strings.Repeat("L", 1000) + "/" + strings.Repeat("t", 23), // 1024 bytes, a 1000-byte segment
		strings.Repeat("s", 1024),                                 // 1024 bytes, one segment
		"ключ/日本語/🙂", "é", "e\u0301",
		// What a path normalisation would fold the keys above onto.
		"x", "b", "a/b", "a", "a/",
	}
	for _, k := range keys {
		if len(k) > 1024 {
			t.Fatalf("test key of %d bytes", len(k))
		}
	}
	body := func(i int, k string) []byte { return []byte(strings.Repeat(k, 1+i%3) + "#" + string(rune('A'+i))) }
	for i, k := range keys {
		if _, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String("pathy"), Key: aws.String(k), Body: bytes.NewReader(body(i, k))}); err != nil {
			t.Fatalf("put %q: %v", k, err)
		}
	}
	for i, k := range keys {
		if got := getBody(t, c, "pathy", k); !bytes.Equal(got, body(i, k)) {
			t.Fatalf("key %q reads back %q, want %q", k, got, body(i, k))
		}
	}
	list := func(prefix string) []string {
		t.Helper()
		var out []string
		p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String("pathy"), Prefix: aws.String(prefix), MaxKeys: aws.Int32(7)})
		for p.HasMorePages() {
			page, err := p.NextPage(cx)
			if err != nil {
				t.Fatalf("list prefix %q: %v", prefix, err)
			}
			for _, o := range page.Contents {
				out = append(out, aws.ToString(o.Key))
			}
		}
		return out
	}
	want := append([]string(nil), keys...)
	sort.Strings(want) // byte order, as S3 lists
	if got := list(""); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("listed %q\nwant   %q", got, want)
	}
	for _, k := range keys {
		var w []string
		for _, x := range want {
			if strings.HasPrefix(x, k) {
				w = append(w, x)
			}
		}
		if got := list(k); strings.Join(got, "\x00") != strings.Join(w, "\x00") {
			t.Fatalf("prefix %q listed %q, want %q", k, got, w)
		}
	}
	// Deleting each path-like key leaves every other key alone.
	for i, k := range keys {
		if _, err := c.DeleteObject(cx, &s3.DeleteObjectInput{Bucket: aws.String("pathy"), Key: aws.String(k)}); err != nil {
			t.Fatalf("delete %q: %v", k, err)
		}
		_, err := c.HeadObject(cx, &s3.HeadObjectInput{Bucket: aws.String("pathy"), Key: aws.String(k)})
		wantCode(t, err, "", 404)
		if i+1 < len(keys) {
			next := keys[i+1]
			if got := getBody(t, c, "pathy", next); !bytes.Equal(got, body(i+1, next)) {
				t.Fatalf("deleting %q changed %q", k, next)
			}
		}
	}
	if got := list(""); len(got) != 0 {
		t.Fatalf("bucket not empty after deleting every key: %q", got)
	}
}
