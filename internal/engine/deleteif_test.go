package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDeleteObjectIf: the conditional delete judges the current version
// as it is under the key's lock, not as the caller last saw it (an object
// re-tagged since is judged by its new tags); in a versioned bucket it
// makes a delete marker current and leaves a current marker alone.
func TestDeleteObjectIf(t *testing.T) {
	e, _ := testEngine(t, 4, Config{Heal: HealConfig{Disabled: true}})
	ctx := context.Background()
	tmp := func(cur ObjectInfo) bool { return cur.Tags["class"] == "tmp" }
	if _, err := e.PutObject(ctx, "bucket", "k", strings.NewReader("data"), 4, PutOptions{Tags: map[string]string{"class": "tmp"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SetObjectTags(ctx, "bucket", "k", "", map[string]string{"class": "keep"}); err != nil {
		t.Fatal(err)
	}
	if deleted, err := e.DeleteObjectIf(ctx, "bucket", "k", tmp); err != nil || deleted {
		t.Fatalf("re-tagged object deleted: %v %v", deleted, err)
	}
	if _, err := e.SetObjectTags(ctx, "bucket", "k", "", map[string]string{"class": "tmp"}); err != nil {
		t.Fatal(err)
	}
	if deleted, err := e.DeleteObjectIf(ctx, "bucket", "k", tmp); err != nil || !deleted {
		t.Fatalf("object still selected kept: %v %v", deleted, err)
	}
	if _, err := e.HeadObject(ctx, "bucket", "k", GetOptions{}); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("deleted object: %v", err)
	}
	if _, err := e.DeleteObjectIf(ctx, "bucket", "k", tmp); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("delete of a missing object: %v, want ErrObjectNotFound", err)
	}

	setVersioning(t, e, VersioningEnabled)
	vput(t, e, "v", "body")
	never := func(ObjectInfo) bool { return false }
	if deleted, err := e.DeleteObjectIf(ctx, "bucket", "v", never); err != nil || deleted {
		t.Fatalf("versioned delete without the condition: %v %v", deleted, err)
	}
	if deleted, err := e.DeleteObjectIf(ctx, "bucket", "v", func(cur ObjectInfo) bool { return cur.Size == 4 }); err != nil || !deleted {
		t.Fatalf("versioned delete: %v %v", deleted, err)
	}
	if got := versionsOf(t, e, "v"); len(got) != 2 || !strings.HasSuffix(got[0], ":DM") || !strings.HasSuffix(got[1], ":body") {
		t.Fatalf("versions after the delete: %v, want a marker over the data", got)
	}
	asked := false
	if deleted, err := e.DeleteObjectIf(ctx, "bucket", "v", func(ObjectInfo) bool { asked = true; return true }); err != nil || deleted || asked {
		t.Fatalf("delete over a current marker: deleted %v, err %v, condition asked %v", deleted, err, asked)
	}
	if got := versionsOf(t, e, "v"); len(got) != 2 {
		t.Fatalf("versions after deleting over a marker: %v", got)
	}
}

// TestDeleteObjectConditions: DeleteObjectVersion with DeleteConditions
// (If-Match and its companions) deletes only an object that matches
// them, and refuses a key without a current object with
// ErrObjectNotFound, in unversioned and versioned buckets and for a
// version named by id.
func TestDeleteObjectConditions(t *testing.T) {
	e, _ := testEngine(t, 4, Config{Heal: HealConfig{Disabled: true}})
	ctx := context.Background()
	del := func(key, vid string, c DeleteConditions) (DeleteResult, error) {
		return e.DeleteObjectVersion(ctx, "bucket", key, DeleteOptions{VersionID: vid, Cond: &c})
	}
	oi := vput(t, e, "k", "data")
	bad := []struct {
		name string
		c    DeleteConditions
	}{
		{"other etag", DeleteConditions{IfMatch: "badetag"}},
		{"empty quoted etag", DeleteConditions{IfMatch: `""`}},
		{"etag list without it", DeleteConditions{IfMatch: `"a", "b"`}},
		{"other mtime", DeleteConditions{ModTime: oi.ModTime.Add(-2 * time.Second)}},
		{"other size", DeleteConditions{Size: 5, HasSize: true}},
		{"zero size", DeleteConditions{Size: 0, HasSize: true}},
		{"negative size", DeleteConditions{Size: -1, HasSize: true}},
		{"etag right, size wrong", DeleteConditions{IfMatch: oi.ETag, Size: 3, HasSize: true}},
	}
	for _, tc := range bad {
		if _, err := del("k", "", tc.c); !errors.Is(err, ErrPreconditionFailed) {
			t.Fatalf("%s: %v, want ErrPreconditionFailed", tc.name, err)
		}
		if got, err := vget(t, e, "k", ""); err != nil || got != "data" {
			t.Fatalf("%s: object after a failed delete: %q %v", tc.name, got, err)
		}
	}
	good := DeleteConditions{IfMatch: `"x", "` + oi.ETag + `"`, ModTime: oi.ModTime, Size: 4, HasSize: true}
	if _, err := del("k", "", good); err != nil {
		t.Fatalf("matching delete: %v", err)
	}
	if _, err := e.HeadObject(ctx, "bucket", "k", GetOptions{}); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("after a matching delete: %v", err)
	}
	if _, err := del("k", "", DeleteConditions{IfMatch: "*"}); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("If-Match * on a missing key: %v, want ErrObjectNotFound", err)
	}
	vput(t, e, "k", "again")
	if _, err := del("k", "", DeleteConditions{IfMatch: "*"}); err != nil {
		t.Fatalf("If-Match * on an object: %v", err)
	}

	setVersioning(t, e, VersioningEnabled)
	v1 := vput(t, e, "v", "one")
	if _, err := del("v", "", DeleteConditions{IfMatch: "badetag"}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("versioned, wrong etag: %v", err)
	}
	res, err := del("v", "", DeleteConditions{IfMatch: v1.ETag})
	if err != nil || !res.DeleteMarker {
		t.Fatalf("versioned, matching etag: %+v %v", res, err)
	}
	if _, err := del("v", "", DeleteConditions{IfMatch: "*"}); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("If-Match * over a current delete marker: %v, want ErrObjectNotFound", err)
	}
	if got := versionsOf(t, e, "v"); len(got) != 2 {
		t.Fatalf("versions after the refused delete: %v, want the marker over the data", got)
	}
	// A version named by id is judged itself.
	if _, err := del("v", v1.VersionID, DeleteConditions{IfMatch: "badetag"}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("version by id, wrong etag: %v", err)
	}
	if _, err := del("v", v1.VersionID, DeleteConditions{Size: 3, HasSize: true}); err != nil {
		t.Fatalf("version by id, matching size: %v", err)
	}
	if got := versionsOf(t, e, "v"); len(got) != 1 || !strings.HasSuffix(got[0], ":DM") {
		t.Fatalf("versions after deleting v1: %v", got)
	}
	v2 := vput(t, e, "v", "two")
	if _, err := del("v", v2.VersionID, DeleteConditions{IfMatch: v1.ETag}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("current version by id, wrong etag: %v", err)
	}
	if _, err := del("v", v2.VersionID, DeleteConditions{IfMatch: v2.ETag}); err != nil {
		t.Fatalf("current version by id, matching etag: %v", err)
	}
}

// TestDeleteObjectConditionRace: a conditional delete racing an
// overwrite is judged on the version it would remove: either the delete
// of the old ETag wins (then the overwrite comes after it and stays) or
// the overwrite wins and the delete fails with ErrPreconditionFailed;
// never is the new object deleted. Two conditional deletes of the same
// version: exactly one succeeds.
func TestDeleteObjectConditionRace(t *testing.T) {
	e, _ := testEngine(t, 4, Config{Heal: HealConfig{Disabled: true}})
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		old := vput(t, e, "r", "old")
		var wg sync.WaitGroup
		var derr, perr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, derr = e.DeleteObjectVersion(ctx, "bucket", "r", DeleteOptions{Cond: &DeleteConditions{IfMatch: old.ETag}})
		}()
		go func() {
			defer wg.Done()
			_, perr = e.PutObject(ctx, "bucket", "r", strings.NewReader("newer"), 5, PutOptions{})
		}()
		wg.Wait()
		if perr != nil {
			t.Fatal(perr)
		}
		got, gerr := vget(t, e, "r", "")
		switch {
		case derr == nil && (gerr != nil || got != "newer"):
			t.Fatalf("round %d: delete won but the overwrite is gone: %q %v", i, got, gerr)
		case derr != nil && !errors.Is(derr, ErrPreconditionFailed):
			t.Fatalf("round %d: delete: %v", i, derr)
		case derr != nil && got != "newer":
			t.Fatalf("round %d: delete lost but object is %q %v", i, got, gerr)
		}

		cur := vput(t, e, "r", "both")
		errs := make([]error, 2)
		wg.Add(2)
		for j := range errs {
			go func() {
				defer wg.Done()
				_, errs[j] = e.DeleteObjectVersion(ctx, "bucket", "r", DeleteOptions{Cond: &DeleteConditions{IfMatch: cur.ETag}})
			}()
		}
		wg.Wait()
		if won := countNil(errs); won != 1 {
			t.Fatalf("round %d: %d of 2 conditional deletes succeeded: %v", i, won, errs)
		}
		for _, err := range errs {
			if err != nil && !errors.Is(err, ErrObjectNotFound) {
				t.Fatalf("round %d: the losing delete: %v, want ErrObjectNotFound", i, err)
			}
		}
	}
}
