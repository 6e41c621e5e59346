package engine

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"
)

// TestUpdateCommittedHook: a WithUpdateCommitted hook in the context of
// an in-place update is called once when the update took effect (the
// current version, one named by id, a noncurrent one), with the updated
// version, and not when it failed; an update without it, or a write,
// never calls it.
func TestUpdateCommittedHook(t *testing.T) {
	e, _ := testEngine(t, 4, Config{})
	ctx := context.Background()
	if err := e.MakeBucket(ctx, "ver", BucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.SetBucketConfig(ctx, "ver", BucketConfigVersioning, VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	var got []ObjectInfo
	hctx := WithUpdateCommitted(ctx, func(oi ObjectInfo) { got = append(got, oi) })
	put := func(bucket string) ObjectInfo {
		t.Helper()
		oi, err := e.PutObject(hctx, bucket, "k", bytes.NewReader([]byte("x")), 1, PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return oi
	}
	expect := func(what string, oi ObjectInfo, err error, want int, version string) {
		t.Helper()
		if len(got) != want {
			t.Fatalf("%s: hook called %d times (err %v), want %d", what, len(got), err, want)
		}
		if want == 1 && (err != nil || got[0].VersionID != oi.VersionID || got[0].VersionID != version || got[0].Tags["t"] != "1") {
			t.Fatalf("%s: hook got %+v, the call returned %+v, %v (want version %q tagged)", what, got[0], oi, err, version)
		}
		got = nil
	}
	put("bucket")
	if len(got) != 0 {
		t.Fatal("a PUT called the update hook")
	}
	oi, err := e.SetObjectTags(hctx, "bucket", "k", "", map[string]string{"t": "1"})
	expect("current version", oi, err, 1, "")
	oi, err = e.SetObjectTags(hctx, "bucket", "missing", "", map[string]string{"t": "1"})
	expect("missing key", oi, err, 0, "")
	if _, err := e.SetObjectTags(ctx, "bucket", "k", "", map[string]string{"t": "1"}); err != nil || len(got) != 0 {
		t.Fatalf("an update without the hook: %v, hook called %d times", err, len(got))
	}
	v1 := put("ver")
	v2 := put("ver")
	oi, err = e.SetObjectTags(hctx, "ver", "k", v2.VersionID, map[string]string{"t": "1"})
	expect("latest by id", oi, err, 1, v2.VersionID)
	oi, err = e.SetObjectTags(hctx, "ver", "k", v1.VersionID, map[string]string{"t": "1"})
	expect("noncurrent by id", oi, err, 1, v1.VersionID)
	oi, err = e.SetObjectTags(hctx, "ver", "k", "0000000000000000000000000000000A", map[string]string{"t": "1"})
	expect("no such version", oi, err, 0, "")
	if _, err := e.DeleteObjectVersion(ctx, "ver", "k", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	oi, err = e.SetObjectTags(hctx, "ver", "k", "", map[string]string{"t": "1"})
	expect("delete marker current", oi, err, 0, "")
}

// TestUpdateCommittedHookUnderKeyLock: the hook runs under the key's
// lock: a PUT of the key cannot commit before it returned.
func TestUpdateCommittedHookUnderKeyLock(t *testing.T) {
	e, _ := testEngine(t, 4, Config{})
	ctx := context.Background()
	if _, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader([]byte("A")), 1, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	in := make(chan struct{})
	release := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		hctx := WithUpdateCommitted(ctx, func(ObjectInfo) {
			mu.Lock()
			order = append(order, "tags")
			mu.Unlock()
			close(in)
			<-release
		})
		if _, err := e.SetObjectTags(hctx, "bucket", "k", "", map[string]string{"t": "1"}); err != nil {
			t.Error(err)
		}
	}()
	<-in
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		if _, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader([]byte("B")), 1, PutOptions{Committed: func(ObjectInfo) {
			mu.Lock()
			order = append(order, "put")
			mu.Unlock()
		}}); err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-done:
		t.Fatal("the PUT returned while the tagging's commit hook held the key")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(order) != 2 || order[0] != "tags" || order[1] != "put" {
		t.Fatalf("hooks in order %v", order)
	}
}
