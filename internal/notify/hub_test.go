package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// memTarget is a Target keeping what it was sent.
type memTarget struct {
	arn string
	rec *recorder
}

func (m *memTarget) ARN() string                                { return m.arn }
func (m *memTarget) Send(ctx context.Context, d Delivery) error { return m.rec.send(ctx, d) }
func (m *memTarget) Healthy(context.Context) error              { return nil }
func (m *memTarget) Close() error                               { return nil }

func memKind(recs map[string]*recorder, mu *sync.Mutex) Kind {
	return Kind{Name: "mem", Fields: []Field{{Name: "endpoint", Required: true}, {Name: "token", Secret: true}},
		New: func(id string, s map[string]string) (Target, error) {
			if strings.HasPrefix(s["endpoint"], "bad") {
				return nil, errors.New("endpoint refused")
			}
			mu.Lock()
			defer mu.Unlock()
			r := recs[id]
			if r == nil {
				r = newRecorder()
				recs[id] = r
			}
			return &memTarget{arn: ARN(id, "mem"), rec: r}, nil
		}}
}

func TestHubPublishAndAudit(t *testing.T) {
	recs := map[string]*recorder{}
	var mu sync.Mutex
	kind := memKind(recs, &mu)
	h, err := NewHub(HubConfig{Dirs: []string{t.TempDir()}, Queue: QueueConfig{RetryMin: time.Millisecond, RetryMax: 10 * time.Millisecond}})
	must(t, err)
	defer h.Close()
	must(t, h.Add("a", kind, map[string]string{"endpoint": "x", "token": "s3cret"}, false, "env"))
	must(t, h.Add("b", kind, map[string]string{"endpoint": "y"}, false, "admin"))
	must(t, h.Add("au", kind, map[string]string{"endpoint": "z"}, true, "env"))
	if err := h.Add("bad", kind, map[string]string{"endpoint": "bad"}, false, "env"); err == nil {
		t.Fatal("a refused target was added")
	}
	if !h.Has("a:mem") || h.Has("au:mem") || h.Has("audit:au:mem") || h.Has("c:mem") || !h.HasAudit() {
		t.Fatal("Has/HasAudit")
	}
	c, err := ParseConfig([]byte(`<NotificationConfiguration>`+
		rule("1", "", "", "arn:minio:sqs::a:mem", "s3:ObjectCreated:*")+
		rule("2", "x/", "", "arn:minio:sqs::b:mem", "s3:ObjectCreated:Put")+`</NotificationConfiguration>`), h.Has)
	must(t, err)
	ev := Event{Name: ObjectCreatedPut, Bucket: "bk", Key: "x/1", Time: time.Now()}
	must(t, h.Publish(ev, c))
	ev.Key = "y/2"
	must(t, h.Publish(ev, c))
	must(t, h.Audit([]byte(`{"api":{}}`), "bk/x/1", time.Now()))
	recs["a"].wait(t, 2)
	recs["b"].wait(t, 1)
	recs["au"].wait(t, 1)
	if got := recs["b"].keys(); len(got) != 1 || got[0] != "bk/x/1" {
		t.Fatalf("b got %v", got)
	}
	var secretShown bool
	for _, ti := range h.Targets() {
		b, _ := json.Marshal(ti)
		secretShown = secretShown || strings.Contains(string(b), "s3cret")
		if ti.Key == "a:mem" && (ti.Settings["token"] != "*****" || ti.Stats.Sent != 2 || ti.Source != "env") {
			t.Fatalf("a: %+v", ti)
		}
	}
	if secretShown {
		t.Fatal("Targets lists a secret")
	}
	// A target gone from this node: the publish reports it, others go on.
	ok, err := h.Remove("b:mem")
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	ev.Key = "x/3"
	if err := h.Publish(ev, c); err == nil || !strings.Contains(err.Error(), "b:mem") {
		t.Fatalf("publish to a removed target: %v", err)
	}
	recs["a"].wait(t, 3)
	if err := h.Test(context.Background(), "a:mem"); err != nil {
		t.Fatal(err)
	}
	if err := h.Test(context.Background(), "nope:mem"); err == nil {
		t.Fatal("test of a missing target")
	}
}

// memBackend is an in-memory config document store with versions.
type memBackend struct {
	mu   sync.Mutex
	docs map[string][]byte
	seq  map[string]uint64
}

var (
	errNoDoc    = errors.New("no document")
	errConflict = errors.New("conflict")
)

func (b *memBackend) ReadConfig(_ context.Context, name string) ([]byte, uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.docs[name]
	if !ok {
		return nil, 0, fmt.Errorf("read %s: %w", name, errNoDoc)
	}
	return d, b.seq[name], nil
}

func (b *memBackend) WriteConfig(_ context.Context, name string, prev uint64, data []byte) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seq[name] != prev {
		return 0, fmt.Errorf("write %s: %w", name, errConflict)
	}
	b.seq[name]++
	b.docs[name] = append([]byte(nil), data...)
	return b.seq[name], nil
}

// TestTargetStore: run-time targets are stored with secrets sealed,
// applied on every node sharing the document, replaced and removed;
// the environment's targets are never replaced; a different key
// material cannot open the secrets.
func TestTargetStore(t *testing.T) {
	recs := map[string]*recorder{}
	var mu sync.Mutex
	kind := memKind(recs, &mu)
	backend := &memBackend{docs: map[string][]byte{}, seq: map[string]uint64{}}
	node := func() (*Hub, *TargetStore) {
		h, err := NewHub(HubConfig{Dirs: []string{t.TempDir()}})
		must(t, err)
		s, err := NewTargetStore(backend, h, []Kind{kind}, []byte("root:k:s"), errNoDoc, errConflict, nil)
		must(t, err)
		must(t, s.Reload(context.Background()))
		return h, s
	}
	ctx := context.Background()
	h1, s1 := node()
	defer h1.Close()
	must(t, h1.Add("env1", kind, map[string]string{"endpoint": "e"}, false, "env"))
	must(t, s1.Put(ctx, Spec{Kind: "mem", ID: "rt", Settings: map[string]string{"endpoint": "u", "token": "tok-123", "parallel": "4"}}))
	for _, bad := range []Spec{
		{Kind: "nope", ID: "x", Settings: map[string]string{"endpoint": "u"}},
		{Kind: "mem", ID: "a/b", Settings: map[string]string{"endpoint": "u"}},
		{Kind: "mem", ID: "x", Settings: map[string]string{}},
		{Kind: "mem", ID: "x", Settings: map[string]string{"endpoint": "bad"}},
		{Kind: "mem", ID: "x", Settings: map[string]string{"endpoint": "u", "other": "v"}},
		{Kind: "mem", ID: "x", Settings: map[string]string{"endpoint": "u", "parallel": "0"}},
		{Kind: "mem", ID: "x", Settings: map[string]string{"endpoint": "u", "parallel": "1000"}},
	} {
		if err := s1.Put(ctx, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if err := s1.Put(ctx, Spec{Kind: "mem", ID: "env1", Settings: map[string]string{"endpoint": "u"}}); !errors.Is(err, ErrExists) {
		t.Errorf("replacing an env target: %v", err)
	}
	if strings.Contains(string(backend.docs[DocumentName]), "tok-123") {
		t.Fatal("the secret is stored in clear")
	}
	h1.mu.RLock()
	if rt := h1.targets["rt:mem"]; rt == nil || rt.queue.cfg.Parallel != 4 {
		t.Error("the parallel setting of a run-time target is not applied")
	}
	h1.mu.RUnlock()
	if !h1.Has("rt:mem") {
		t.Fatal("not applied on the node that added it")
	}
	h2, s2 := node()
	defer h2.Close()
	if !h2.Has("rt:mem") {
		t.Fatal("not applied on another node")
	}
	// Replaced: the new settings apply after a reload.
	must(t, s1.Put(ctx, Spec{Kind: "mem", ID: "rt", Settings: map[string]string{"endpoint": "v"}}))
	must(t, s2.Reload(ctx))
	for _, ti := range h2.Targets() {
		if ti.Key == "rt:mem" && ti.Settings["endpoint"] != "v" {
			t.Fatalf("not replaced: %+v", ti)
		}
	}
	must(t, s1.Put(ctx, Spec{Kind: "mem", ID: "rt", Settings: map[string]string{"endpoint": "v", "token": "t2"}}))
	// Another key material cannot open the secret: reported, not applied.
	h3, err := NewHub(HubConfig{Dirs: []string{t.TempDir()}})
	must(t, err)
	defer h3.Close()
	s3, err := NewTargetStore(backend, h3, []Kind{kind}, []byte("root:other:x"), errNoDoc, errConflict, nil)
	must(t, err)
	if err := s3.Reload(ctx); err == nil || strings.Contains(err.Error(), "t2") {
		t.Fatalf("foreign key: %v", err)
	}
	must(t, s1.Delete(ctx, "rt:mem"))
	must(t, s2.Reload(ctx))
	if h1.Has("rt:mem") || h2.Has("rt:mem") {
		t.Fatal("not removed")
	}
	if err := s1.Delete(ctx, "rt:mem"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if !h1.Has("env1:mem") {
		t.Fatal("env target touched")
	}
	// A damaged document is an error, not a crash.
	backend.docs[DocumentName] = []byte("{not json")
	if err := s1.Reload(ctx); err == nil {
		t.Fatal("damaged document accepted")
	}
}

// TestHubOrphans: a queue with unsent records whose target is gone is
// reported; configuring the target again sends them.
func TestHubOrphans(t *testing.T) {
	recs := map[string]*recorder{}
	var mu sync.Mutex
	kind := memKind(recs, &mu)
	dir := t.TempDir()
	h, err := NewHub(HubConfig{Dirs: []string{dir}})
	must(t, err)
	must(t, h.Add("gone", kind, map[string]string{"endpoint": "x"}, false, "env"))
	recs["gone"].setDown(true)
	must(t, h.Audit(nil, "", time.Now())) // no audit target: nothing
	c, err := ParseConfig([]byte(`<NotificationConfiguration>`+rule("1", "", "", "arn:minio:sqs::gone:mem", "s3:ObjectCreated:*")+`</NotificationConfiguration>`), h.Has)
	must(t, err)
	for i := range 3 {
		must(t, h.Publish(Event{Name: ObjectCreatedPut, Bucket: "b", Key: fmt.Sprint(i), Time: time.Now()}, c))
	}
	must(t, h.Close())
	h2, err := NewHub(HubConfig{Dirs: []string{dir}})
	must(t, err)
	defer h2.Close()
	if o := h2.Orphans(); len(o) != 1 || o[0].Name != "gone_mem" || o[0].Records != 3 {
		t.Fatalf("orphans %+v", o)
	}
	recs["gone"].setDown(false)
	must(t, h2.Add("gone", kind, map[string]string{"endpoint": "x"}, false, "env"))
	recs["gone"].wait(t, 3)
	if o := h2.Orphans(); len(o) != 0 {
		t.Fatalf("orphans after re-adding: %+v", o)
	}
}
