package engine

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// TestObjectTags: tags are stored by PUT, a multipart upload and a copy
// (the source's, or the request's with ReplaceTags), replaced in place by
// SetObjectTags without changing the version (ETag, Last-Modified), and
// survive a restart.
func TestObjectTags(t *testing.T) {
	ctx := context.Background()
	e, paths := testEngine(t, 4, Config{BlockSize: 64 << 10, Heal: HealConfig{Disabled: true}})
	tags := map[string]string{"project": "blue", "empty": ""}
	put, err := e.PutObject(ctx, "bucket", "obj", strings.NewReader("data"), 4, PutOptions{Tags: tags})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(put.Tags, tags) {
		t.Fatalf("put answered tags %v", put.Tags)
	}
	tags["project"] = "changed by the caller"
	head, err := e.HeadObject(ctx, "bucket", "obj", GetOptions{})
	if err != nil || head.Tags["project"] != "blue" || len(head.Tags) != 2 {
		t.Fatalf("head: %+v %v (the engine must keep its own copy of the tags)", head.Tags, err)
	}

	// Replacing tags keeps the version.
	time.Sleep(2 * time.Millisecond)
	if _, err := e.SetObjectTags(ctx, "bucket", "obj", "", map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	rd, err := e.GetObject(ctx, "bucket", "obj", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rd.Close()
	if !maps.Equal(rd.Info.Tags, map[string]string{"k": "v"}) || rd.Info.ETag != put.ETag || !rd.Info.ModTime.Equal(put.ModTime) {
		t.Fatalf("after SetObjectTags: tags %v etag %s (was %s) modtime %v (was %v)", rd.Info.Tags, rd.Info.ETag, put.ETag, rd.Info.ModTime, put.ModTime)
	}
	if _, err := e.SetObjectTags(ctx, "bucket", "obj", "", map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if head, _ := e.HeadObject(ctx, "bucket", "obj", GetOptions{}); head.Tags != nil {
		t.Fatalf("removed tags read back as %v", head.Tags)
	}
	many := map[string]string{}
	for i := range MaxObjectTags + 1 {
		many[string(rune('a'+i))] = "v"
	}
	if _, err := e.SetObjectTags(ctx, "bucket", "obj", "", many); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("11 tags: %v", err)
	}
	if _, err := e.PutObject(ctx, "bucket", "many", strings.NewReader("x"), 1, PutOptions{Tags: many}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("put with 11 tags: %v", err)
	}
	if _, err := e.SetObjectTags(ctx, "bucket", "missing", "", map[string]string{"k": "v"}); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("missing object: %v", err)
	}
	if _, err := e.SetObjectTags(ctx, "nobucket", "obj", "", nil); !errors.Is(err, ErrBucketNotFound) {
		t.Fatalf("missing bucket: %v", err)
	}

	// A multipart upload keeps the tags of its creation for the object.
	id, err := e.NewMultipartUpload(ctx, "bucket", "mp", PutOptions{Tags: map[string]string{"mp": "yes"}})
	if err != nil {
		t.Fatal(err)
	}
	pi, err := e.PutObjectPart(ctx, "bucket", "mp", id, 1, strings.NewReader("part"), 4, PartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if oi, err := e.CompleteMultipartUpload(ctx, "bucket", "mp", id, []CompletePart{{Number: 1, ETag: pi.ETag}}, PutOptions{}); err != nil || oi.Tags["mp"] != "yes" {
		t.Fatalf("completed upload: %v %v", oi.Tags, err)
	}

	// Copies take the source's tags unless told to replace them.
	if _, err := e.SetObjectTags(ctx, "bucket", "obj", "", map[string]string{"src": "1"}); err != nil {
		t.Fatal(err)
	}
	if oi, err := e.CopyObject(ctx, "bucket", "obj", "bucket", "copy", CopyOptions{Put: PutOptions{Tags: map[string]string{"ignored": "x"}}}); err != nil ||
		!maps.Equal(oi.Tags, map[string]string{"src": "1"}) {
		t.Fatalf("copy: %v %v", oi.Tags, err)
	}
	if oi, err := e.CopyObject(ctx, "bucket", "obj", "bucket", "copy2", CopyOptions{ReplaceTags: true, Put: PutOptions{Tags: map[string]string{"new": "2"}}}); err != nil ||
		!maps.Equal(oi.Tags, map[string]string{"new": "2"}) {
		t.Fatalf("copy with replaced tags: %v %v", oi.Tags, err)
	}
	if oi, err := e.CopyObject(ctx, "bucket", "obj", "bucket", "copy3", CopyOptions{ReplaceTags: true}); err != nil || oi.Tags != nil {
		t.Fatalf("copy with tags replaced by none: %v %v", oi.Tags, err)
	}
	// In place (metadata only, the object has a checksum from its copy).
	if oi, err := e.CopyObject(ctx, "bucket", "copy", "bucket", "copy", CopyOptions{ReplaceMetadata: true}); err != nil || oi.Tags["src"] != "1" {
		t.Fatalf("in-place copy keeping tags: %v %v", oi.Tags, err)
	}
	if oi, err := e.CopyObject(ctx, "bucket", "copy", "bucket", "copy", CopyOptions{ReplaceMetadata: true, ReplaceTags: true,
		Put: PutOptions{Tags: map[string]string{"in": "place"}}}); err != nil || !maps.Equal(oi.Tags, map[string]string{"in": "place"}) {
		t.Fatalf("in-place copy replacing tags: %v %v", oi.Tags, err)
	}
	// The bucket's tag set is a configuration document of its record.
	if err := e.SetBucketConfig(ctx, "bucket", BucketConfigTagging, "<Tagging/>"); err != nil {
		t.Fatal(err)
	}
	e.Close()

	e2, err := New(Config{Paths: paths, Heal: HealConfig{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	for key, want := range map[string]map[string]string{
		"obj": {"src": "1"}, "mp": {"mp": "yes"}, "copy": {"in": "place"}, "copy2": {"new": "2"}, "copy3": nil,
	} {
		oi, err := e2.HeadObject(ctx, "bucket", key, GetOptions{})
		if err != nil || !maps.Equal(oi.Tags, want) {
			t.Fatalf("%s after restart: %v %v, want %v", key, oi.Tags, err, want)
		}
	}
	if bi, err := e2.BucketInfo(ctx, "bucket"); err != nil || bi.Tagging != "<Tagging/>" {
		t.Fatalf("bucket tagging after restart: %+v %v", bi, err)
	}
}

// TestObjectTagsQuorum: replacing tags needs write quorum and leaves the
// old ones when it does not get it; a drive that missed a replacement
// never makes a read answer the old tags, and the healer rewrites its
// record.
func TestObjectTagsQuorum(t *testing.T) {
	r := newRig(t, Config{Heal: HealConfig{Disabled: true}})
	ctx := context.Background()
	if _, err := r.e.PutObject(ctx, "bucket", "obj", strings.NewReader("data"), 4, PutOptions{Tags: map[string]string{"v": "1"}}); err != nil {
		t.Fatal(err)
	}
	tagsOf := func() map[string]string {
		t.Helper()
		oi, err := r.e.HeadObject(ctx, "bucket", "obj", GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return oi.Tags
	}
	allOnline := func() {
		waitUntil(t, "all drives online", 90*time.Second, func() bool {
			for _, h := range r.healths {
				if !h.Online() {
					return false
				}
			}
			return true
		})
	}

	// 5 of 16 drives failing: below write quorum (12), nothing changes.
	var removes []func()
	for _, p := range []int{1, 4, 7, 10, 13} {
		removes = append(removes, r.faulty[p].Inject(drive.Fault{Err: drive.ErrInjectedEIO}))
	}
	if _, err := r.e.SetObjectTags(ctx, "bucket", "obj", "", map[string]string{"v": "2"}); !errors.Is(err, ErrWriteQuorum) && !errors.Is(err, ErrReadQuorum) {
		t.Fatalf("below quorum: %v", err)
	}
	for _, rm := range removes {
		rm()
	}
	allOnline()
	if got := tagsOf(); got["v"] != "1" {
		t.Fatalf("a failed replacement changed the tags to %v", got)
	}

	// The first two drives miss a replacement that reaches quorum. Every
	// drive then holds the same version; only the tags differ.
	removes = removes[:0]
	for _, p := range []int{0, 1} {
		removes = append(removes, r.faulty[p].Inject(drive.Fault{Err: drive.ErrInjectedEIO}))
	}
	if _, err := r.e.SetObjectTags(ctx, "bucket", "obj", "", map[string]string{"v": "3"}); err != nil {
		t.Fatal(err)
	}
	for _, rm := range removes {
		rm()
	}
	allOnline()
	stale := func(p int) bool {
		rec, _, err := readRecord(ctx, r.e.sets[0].drives[p], "bucket", "obj")
		if err != nil {
			t.Fatal(err)
		}
		return rec.Current().Tags["v"] != "3"
	}
	if !stale(0) || !stale(1) {
		t.Fatal("the test needs the first drives to have missed the replacement")
	}
	if got := tagsOf(); got["v"] != "3" {
		t.Fatalf("read after a partial replacement answered %v, want the replacement", got)
	}
	res, err := r.e.HealObject(ctx, "bucket", "obj", HealOptions{})
	if err != nil || res.Stale != 2 || res.Healed != 2 {
		t.Fatalf("heal: %+v %v, want 2 stale records rewritten", res, err)
	}
	if stale(0) || stale(1) {
		t.Fatal("heal left a stale tag set")
	}
	if res, err := r.e.HealObject(ctx, "bucket", "obj", HealOptions{Deep: true}); err != nil || res.Damaged() {
		t.Fatalf("second heal: %+v %v", res, err)
	}
	if got, _ := getAll(t, r.e, "obj", GetOptions{}); string(got) != "data" {
		t.Fatalf("data after heal: %q", got)
	}
}
