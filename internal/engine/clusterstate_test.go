package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// memState is a ClusterState in memory with the consensus group's
// semantics (versions, compare-and-set, one seed): the engine's side of
// the seam, tested without a group. internal/consensus tests the group.
type memState struct {
	mu     sync.Mutex
	next   uint64
	data   map[string]map[string]memEntry
	seeded bool
	// onChange is the engine's hook, as the group calls it on apply.
	onChange func(space, key string)
}

type memEntry struct {
	v   []byte
	ver uint64
}

func newMemState() *memState { return &memState{data: map[string]map[string]memEntry{}} }

func (m *memState) Get(_ context.Context, space, key string, _ bool) ([]byte, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.data[space][key]
	if !ok {
		return nil, 0, fmt.Errorf("%s/%s: %w", space, key, ErrStateNotFound)
	}
	return e.v, e.ver, nil
}

func (m *memState) List(_ context.Context, space string, _ bool) (map[string][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][]byte{}
	for k, e := range m.data[space] {
		out[k] = e.v
	}
	return out, nil
}

// Sync has nothing to wait for: one copy, always current.
func (m *memState) Sync(context.Context) error { return nil }

func (m *memState) change(space, key string, prev uint64, v []byte, del bool) (uint64, error) {
	m.mu.Lock()
	cur, ok := m.data[space][key]
	if del && !ok {
		m.mu.Unlock()
		return 0, ErrStateNotFound
	}
	if cur.ver != prev {
		m.mu.Unlock()
		return 0, fmt.Errorf("%w: at %d, expected %d", ErrStateConflict, cur.ver, prev)
	}
	m.next++
	if m.data[space] == nil {
		m.data[space] = map[string]memEntry{}
	}
	if del {
		delete(m.data[space], key)
	} else {
		m.data[space][key] = memEntry{v, m.next}
	}
	ver, hook := m.next, m.onChange
	m.mu.Unlock()
	if hook != nil {
		hook(space, key)
	}
	return ver, nil
}

func (m *memState) Put(_ context.Context, space, key string, prev uint64, v []byte) (uint64, error) {
	return m.change(space, key, prev, v, false)
}

func (m *memState) Delete(_ context.Context, space, key string, prev uint64) error {
	_, err := m.change(space, key, prev, nil, true)
	return err
}

func (m *memState) Seeded(context.Context) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seeded, nil
}

func (m *memState) Seed(_ context.Context, st map[string]map[string][]byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seeded {
		return nil
	}
	m.seeded = true
	for space, kv := range st {
		for k, v := range kv {
			m.next++
			if m.data[space] == nil {
				m.data[space] = map[string]memEntry{}
			}
			m.data[space][k] = memEntry{v, m.next}
		}
	}
	return nil
}

// TestClusterStateKeepsBucketsAndConfigs: with a ClusterState, bucket
// records and config documents are read from and changed through it; a
// deployment that ran without one is seeded from its drives at the first
// start with one; changes another node made reach the cache through the
// apply hook.
func TestClusterStateKeepsBucketsAndConfigs(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	paths := make([]string, 6)
	for i := range paths {
		paths[i] = filepath.Join(root, fmt.Sprintf("d%d", i+1))
	}
	// A deployment without the group: a bucket with a setting and an
	// identity document on the drives.
	plain, err := New(Config{Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.MakeBucket(ctx, "old", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	if err := plain.SetBucketConfig(ctx, "old", BucketConfigTagging, "<Tagging/>"); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.WriteConfig(ctx, "iam", 0, []byte(`{"users":1}`)); err != nil {
		t.Fatal(err)
	}
	plain.Close()

	st := newMemState()
	e, err := New(Config{Paths: paths, Cluster: &ClusterConfig{FormatNew: true, NodeID: "n1", State: st}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	st.mu.Lock()
	st.onChange = e.StateChanged
	st.mu.Unlock()
	// Seeded from the drives.
	info, err := e.BucketInfo(ctx, "old")
	if err != nil || info.Tagging != "<Tagging/>" {
		t.Fatalf("seeded bucket: %+v %v", info, err)
	}
	data, ver, err := e.ReadConfig(ctx, "iam")
	if err != nil || string(data) != `{"users":1}` {
		t.Fatalf("seeded config: %q %v", data, err)
	}

	// Changes go through the state, with its compare-and-set.
	if err := e.MakeBucket(ctx, "new", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Get(ctx, spaceBucket, "new", false); err != nil {
		t.Fatalf("bucket made but not in the state: %v", err)
	}
	if err := e.MakeBucket(ctx, "new", BucketOptions{Owner: "o"}); !errors.Is(err, ErrBucketExists) {
		t.Fatalf("second make: %v", err)
	}
	if err := e.SetBucketConfig(ctx, "new", BucketConfigVersioning, VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	raw, _, _ := st.Get(ctx, spaceBucket, "new", false)
	if got, _ := decodeBucket("new", raw); got.Versioning != VersioningEnabled {
		t.Fatalf("state holds %+v after the versioning change", got)
	}
	v2, err := e.WriteConfig(ctx, "iam", ver, []byte(`{"users":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.WriteConfig(ctx, "iam", ver, []byte(`{"users":"lost"}`)); !errors.Is(err, ErrConfigConflict) {
		t.Fatalf("write at an old version: %v", err)
	}
	if data, got, _ := e.ReadConfig(ctx, "iam"); string(data) != `{"users":2}` || got != v2 {
		t.Fatalf("config now %q at %d", data, got)
	}

	// Another node's change arrives through the apply hook alone.
	rec := []byte(`{"name":"remote","created":"2026-01-02T03:04:05Z","owner":"o","acl":"private"}`)
	if _, err := st.Put(ctx, spaceBucket, "remote", 0, rec); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	all, _ := e.ListBuckets(ctx)
	for _, b := range all {
		names[b.Name] = true
	}
	if !names["remote"] || !names["old"] || !names["new"] {
		t.Fatalf("buckets listed: %v", names)
	}
	_, rv, _ := st.Get(ctx, spaceBucket, "remote", false)
	if err := st.Delete(ctx, spaceBucket, "remote", rv); err != nil {
		t.Fatal(err)
	}
	if _, err := e.BucketInfo(ctx, "remote"); !errors.Is(err, ErrBucketNotFound) {
		t.Fatalf("bucket deleted on another node still cached: %v", err)
	}
	if err := e.DeleteBucket(ctx, "new"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Get(ctx, spaceBucket, "new", false); !errors.Is(err, ErrStateNotFound) {
		t.Fatalf("deleted bucket still in the state: %v", err)
	}

	// A second start does not seed again over what the state holds.
	e.Close()
	e2, err := New(Config{Paths: paths, Cluster: &ClusterConfig{FormatNew: true, NodeID: "n1", State: st}})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if _, err := e2.BucketInfo(ctx, "new"); !errors.Is(err, ErrBucketNotFound) {
		t.Fatalf("a bucket deleted in the state came back at restart: %v", err)
	}
	if data, _, _ := e2.ReadConfig(ctx, "iam"); string(data) != `{"users":2}` {
		t.Fatalf("config after restart: %q", data)
	}
}
