package engine

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestDeleteCommittedHook: DeleteOptions.Committed is called once for
// every delete that took effect, with its result (the object gone, a
// delete marker made, a current or noncurrent version removed), and
// never for one that did not (a key that is not there, a failed
// condition).
func TestDeleteCommittedHook(t *testing.T) {
	e, _ := testEngine(t, 4, Config{})
	ctx := context.Background()
	if err := e.MakeBucket(ctx, "ver", BucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.SetBucketConfig(ctx, "ver", BucketConfigVersioning, VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	put := func(bucket, key string) ObjectInfo {
		t.Helper()
		oi, err := e.PutObject(ctx, bucket, key, bytes.NewReader([]byte("x")), 1, PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return oi
	}
	del := func(bucket, key string, o DeleteOptions) (DeleteResult, []DeleteResult, error) {
		t.Helper()
		var got []DeleteResult
		o.Committed = func(r DeleteResult) { got = append(got, r) }
		res, err := e.DeleteObjectVersion(ctx, bucket, key, o)
		return res, got, err
	}
	check := func(what string, res DeleteResult, got []DeleteResult, err error, want int) {
		t.Helper()
		if len(got) != want {
			t.Fatalf("%s: hook called %d times (err %v), want %d", what, len(got), err, want)
		}
		if want == 1 && (err != nil || got[0] != res) {
			t.Fatalf("%s: hook got %+v, the call returned %+v, %v", what, got[0], res, err)
		}
	}

	put("bucket", "k")
	res, got, err := del("bucket", "k", DeleteOptions{})
	check("unversioned delete", res, got, err, 1)
	res, got, err = del("bucket", "k", DeleteOptions{})
	check("unversioned delete of a key not there", res, got, err, 0)
	put("bucket", "k")
	res, got, err = del("bucket", "k", DeleteOptions{Cond: &DeleteConditions{IfMatch: `"nope"`}})
	if !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("failed condition: %v", err)
	}
	check("unversioned delete whose condition failed", res, got, err, 0)

	v1 := put("ver", "k")
	v2 := put("ver", "k")
	res, got, err = del("ver", "k", DeleteOptions{})
	check("delete marker", res, got, err, 1)
	if !res.DeleteMarker || res.VersionID == "" {
		t.Fatalf("delete marker: %+v", res)
	}
	res, got, err = del("ver", "k", DeleteOptions{VersionID: res.VersionID})
	check("current version (the marker) removed", res, got, err, 1)
	res, got, err = del("ver", "k", DeleteOptions{VersionID: v1.VersionID})
	check("noncurrent version removed", res, got, err, 1)
	if res.VersionID != v1.VersionID {
		t.Fatalf("removed %s, want %s", res.VersionID, v1.VersionID)
	}
	res, got, err = del("ver", "k", DeleteOptions{VersionID: v1.VersionID})
	check("version no longer there", res, got, err, 0)
	res, got, err = del("ver", "k", DeleteOptions{VersionID: v2.VersionID, Cond: &DeleteConditions{IfMatch: `"nope"`}})
	check("version delete whose condition failed", res, got, err, 0)
	res, got, err = del("ver", "k", DeleteOptions{VersionID: v2.VersionID})
	check("last version removed", res, got, err, 1)
}

// TestDeleteCommittedHookUnderKeyLock: the hook runs under the key's
// lock, so a PUT of the key cannot commit (nor call its own hook)
// before the delete's hook returned: the hooks see a key's writes and
// deletes in commit order.
func TestDeleteCommittedHookUnderKeyLock(t *testing.T) {
	e, _ := testEngine(t, 4, Config{})
	ctx := context.Background()
	if _, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader([]byte("A")), 1, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	inDel := make(chan struct{})
	release := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := e.DeleteObjectVersion(ctx, "bucket", "k", DeleteOptions{Committed: func(DeleteResult) {
			mu.Lock()
			order = append(order, "delete")
			mu.Unlock()
			close(inDel)
			<-release
		}})
		if err != nil {
			t.Error(err)
		}
	}()
	<-inDel
	putDone := make(chan ObjectInfo, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		oi, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader([]byte("B")), 1, PutOptions{Committed: func(ObjectInfo) {
			mu.Lock()
			order = append(order, "put")
			mu.Unlock()
		}})
		if err != nil {
			t.Error(err)
		}
		putDone <- oi
	}()
	select {
	case <-putDone:
		t.Fatal("the PUT returned while the delete's Committed hook held the key")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	wg.Wait()
	b := <-putDone
	mu.Lock()
	defer mu.Unlock()
	if len(order) != 2 || order[0] != "delete" || order[1] != "put" {
		t.Fatalf("hooks in order %v", order)
	}
	st, err := e.HeadObject(ctx, "bucket", "k", GetOptions{})
	if err != nil || st.ETag != b.ETag {
		t.Fatalf("stored %v (%v), want the PUT's %s", st.ETag, err, b.ETag)
	}
}
