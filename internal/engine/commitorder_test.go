package engine

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"
)

// TestPutTimeFollowsCommitOrder: of two PUTs of one key in an
// unversioned bucket, the one that commits last is the stored object
// and must be the newest (Last-Modified, and the event sequencer the
// S3 layer derives from it), even when its data was written, and its
// version made, before the other's. Writer A is held between its data
// write and its commit (putObject's beforeCommit) while B writes and
// commits.
func TestPutTimeFollowsCommitOrder(t *testing.T) {
	e, _ := testEngine(t, 4, Config{})
	ctx := context.Background()
	release := make(chan struct{})
	held := make(chan struct{})
	var a ObjectInfo
	var aErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		a, aErr = e.putObject(ctx, "bucket", "k", bytes.NewReader([]byte("writer A")), 8, PutOptions{}, func() {
			close(held)
			<-release
		})
	}()
	<-held
	b, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader([]byte("writer B")), 8, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	wg.Wait()
	if aErr != nil {
		t.Fatal(aErr)
	}
	if !a.ModTime.After(b.ModTime) {
		t.Fatalf("A committed after B but its time %v is not after B's %v", a.ModTime, b.ModTime)
	}
	st, err := e.HeadObject(ctx, "bucket", "k", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.ETag != a.ETag || !st.ModTime.Equal(a.ModTime) {
		t.Fatalf("stored %s at %v, want A's %s at %v", st.ETag, st.ModTime, a.ETag, a.ModTime)
	}
}

// TestPutCommittedHookUnderKeyLock: PutOptions.Committed runs under
// the key's lock, so a second writer of the key cannot commit (nor
// call its own hook) before the first one's hook returned: the hooks
// see the writes in commit order.
func TestPutCommittedHookUnderKeyLock(t *testing.T) {
	e, _ := testEngine(t, 4, Config{})
	ctx := context.Background()
	var mu sync.Mutex
	var order []string
	inA := make(chan struct{})
	releaseA := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader([]byte("A")), 1, PutOptions{Committed: func(oi ObjectInfo) {
			mu.Lock()
			order = append(order, "A:"+oi.ETag)
			mu.Unlock()
			close(inA)
			<-releaseA
		}})
		if err != nil {
			t.Error(err)
		}
	}()
	<-inA
	bDone := make(chan ObjectInfo, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		oi, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader([]byte("B")), 1, PutOptions{Committed: func(oi ObjectInfo) {
			mu.Lock()
			order = append(order, "B:"+oi.ETag)
			mu.Unlock()
		}})
		if err != nil {
			t.Error(err)
		}
		bDone <- oi
	}()
	select {
	case <-bDone:
		t.Fatal("B's PUT returned while A's Committed hook held the key")
	case <-time.After(200 * time.Millisecond):
	}
	close(releaseA)
	wg.Wait()
	b := <-bDone
	mu.Lock()
	defer mu.Unlock()
	if len(order) != 2 || order[0][:2] != "A:" || order[1] != "B:"+b.ETag {
		t.Fatalf("hooks in order %v", order)
	}
	st, err := e.HeadObject(ctx, "bucket", "k", GetOptions{})
	if err != nil || st.ETag != b.ETag {
		t.Fatalf("stored %v (%v), want B's %s", st.ETag, err, b.ETag)
	}
}
