package s3api

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/notify"
)

// lockingStore calls DeleteOptions.Committed as the engine does, once
// the delete took effect and before it returns (the engine holds the
// key's lock then), and marks that span.
type lockingStore struct {
	*fakeStore
	mu     sync.Mutex
	inLock bool
}

func (s *lockingStore) DeleteObjectVersion(ctx context.Context, b, k string, o engine.DeleteOptions) (engine.DeleteResult, error) {
	hook := o.Committed
	o.Committed = nil
	res, err := s.fakeStore.DeleteObjectVersion(ctx, b, k, o)
	if err == nil && hook != nil {
		s.mu.Lock()
		s.inLock = true
		s.mu.Unlock()
		hook(res)
		s.mu.Lock()
		s.inLock = false
		s.mu.Unlock()
	}
	return res, err
}

func (s *lockingStore) locked() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inLock
}

// lockNotifier records each event and whether it was enqueued inside
// the store's Committed call.
type lockNotifier struct {
	fakeNotifier
	store *lockingStore
	at    []string // "key locked|answer"
}

func (n *lockNotifier) Enqueue(ev notify.Event, c *notify.Config) func() error {
	where := "answer"
	if n.store.locked() {
		where = "locked"
	}
	n.mu.Lock()
	n.at = append(n.at, ev.Key+" "+where)
	n.mu.Unlock()
	return n.fakeNotifier.Enqueue(ev, c)
}

func (n *lockNotifier) Publish(ev notify.Event, c *notify.Config) error {
	n.mu.Lock()
	n.at = append(n.at, ev.Key+" answer")
	n.mu.Unlock()
	return n.fakeNotifier.Publish(ev, c)
}

// TestDeleteEventsQueuedAtCommit: the event of a DeleteObject and of
// each key of a DeleteObjects is enqueued inside the store's Committed
// call (under the key's lock in the engine), once, with the same
// records as before; a delete that did nothing has no event; a store
// that does not call Committed still gets the event before the answer.
func TestDeleteEventsQueuedAtCommit(t *testing.T) {
	st := &lockingStore{fakeStore: newFakeStore()}
	n := &lockNotifier{store: st}
	h := newHarness(t, func(c *Config) { c.Store = st; c.Notify = n })
	h.expect(h.do("root", "PUT", "/bkt", nil), 200, "")
	h.expect(h.do("root", "PUT", "/bkt?notification", []byte(testNotification)), 200, "")
	for _, k := range []string{"a", "b", "c"} {
		h.expect(h.do("root", "PUT", "/bkt/"+k, []byte("x")), 200, "")
	}
	n.take()
	n.at = nil
	h.expect(h.do("root", "DELETE", "/bkt/a", nil), 204, "")
	body := []byte(`<Delete><Object><Key>b</Key></Object><Object><Key>missing</Key></Object><Object><Key>c</Key></Object></Delete>`)
	h.expect(h.do("root", "POST", "/bkt?delete", body, "Content-MD5", contentMD5(body)), 200, "")
	h.expect(h.do("root", "DELETE", "/bkt/missing", nil), 204, "")
	if got, want := strings.Join(n.at, "|"), "a locked|b locked|c locked"; got != want {
		t.Fatalf("deletes' events enqueued %q, want %q", got, want)
	}
	if got := strings.Join(n.take(), "|"); got != "1:webhook s3:ObjectRemoved:Delete a|1:webhook s3:ObjectRemoved:Delete b|1:webhook s3:ObjectRemoved:Delete c" {
		t.Fatalf("events %q", got)
	}
	// A versioned bucket: the marker's event, at its commit.
	h.expect(h.do("root", "PUT", "/bkt?versioning", []byte(testVersioningEnabled)), 200, "")
	h.expect(h.do("root", "PUT", "/bkt/v", []byte("x")), 200, "")
	n.take()
	n.at = nil
	rec := h.do("root", "DELETE", "/bkt/v", nil)
	h.expect(rec, 204, "")
	h.expect(h.do("root", "DELETE", "/bkt/v?versionId="+rec.Header().Get("X-Amz-Version-Id"), nil), 204, "")
	if got := strings.Join(n.at, "|"); got != "v locked|v locked" {
		t.Fatalf("versioned deletes' events enqueued %q", got)
	}
	if got := strings.Join(n.take(), "|"); got != "1:webhook s3:ObjectRemoved:Delete v|1:webhook s3:ObjectRemoved:DeleteMarkerCreated v" {
		t.Fatalf("versioned events %q", got)
	}
	// A store that never calls Committed (the plain fake): the event
	// is still noted and queued before the answer.
	plain := &fakeNotifier{}
	h2 := newHarness(t, func(c *Config) { c.Notify = plain })
	h2.expect(h2.do("root", "PUT", "/bkt", nil), 200, "")
	h2.expect(h2.do("root", "PUT", "/bkt?notification", []byte(testNotification)), 200, "")
	h2.expect(h2.do("root", "PUT", "/bkt/a", []byte("x")), 200, "")
	plain.take()
	h2.expect(h2.do("root", "DELETE", "/bkt/a", nil), 204, "")
	if got := strings.Join(plain.take(), "|"); got != "1:webhook s3:ObjectRemoved:Delete a" {
		t.Fatalf("without Committed: events %q", got)
	}
}

// SetObjectTags calls the context's WithUpdateCommitted hook as the
// engine does, once the tags are set and before it returns.
func (s *lockingStore) SetObjectTags(ctx context.Context, b, k, versionID string, tags map[string]string) (engine.ObjectInfo, error) {
	oi, err := s.fakeStore.SetObjectTags(ctx, b, k, versionID, tags)
	if err == nil {
		s.mu.Lock()
		s.inLock = true
		s.mu.Unlock()
		engine.UpdateCommitted(ctx, oi)
		s.mu.Lock()
		s.inLock = false
		s.mu.Unlock()
	}
	return oi, err
}

// TestTaggingEventsQueuedAtCommit: PutObjectTagging's and
// DeleteObjectTagging's events are enqueued inside the store's commit
// hook (under the key's lock in the engine), with the same records as
// before; a DeleteObjectTagging of an untagged version (nothing
// written) still has its event, before the answer.
func TestTaggingEventsQueuedAtCommit(t *testing.T) {
	st := &lockingStore{fakeStore: newFakeStore()}
	n := &lockNotifier{store: st}
	h := newHarness(t, func(c *Config) { c.Store = st; c.Notify = n })
	h.expect(h.do("root", "PUT", "/bkt", nil), 200, "")
	h.expect(h.do("root", "PUT", "/bkt?notification", []byte(testNotification)), 200, "")
	h.expect(h.do("root", "PUT", "/bkt/a.jpg", []byte("x")), 200, "")
	n.take()
	n.at = nil
	body := []byte(taggingDoc("k", "v"))
	h.expect(h.do("root", "PUT", "/bkt/a.jpg?tagging", body, "Content-MD5", contentMD5(body)), 200, "")
	h.expect(h.do("root", "DELETE", "/bkt/a.jpg?tagging", nil), 204, "")
	h.expect(h.do("root", "DELETE", "/bkt/a.jpg?tagging", nil), 204, "") // untagged: nothing written
	if got, want := strings.Join(n.at, "|"), "a.jpg locked|a.jpg locked|a.jpg answer"; got != want {
		t.Fatalf("tagging events enqueued %q, want %q", got, want)
	}
	want := "1:webhook s3:ObjectCreated:DeleteTagging a.jpg|1:webhook s3:ObjectCreated:DeleteTagging a.jpg|" +
		"1:webhook s3:ObjectCreated:PutTagging a.jpg|2:webhook s3:ObjectTagging:Delete a.jpg|" +
		"2:webhook s3:ObjectTagging:Delete a.jpg|2:webhook s3:ObjectTagging:Put a.jpg"
	if got := strings.Join(n.take(), "|"); got != want {
		t.Fatalf("tagging events %q\nwant %q", got, want)
	}
}
