package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
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
