package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/driverpc"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/peerauth"
	"github.com/shardstore/shardstore/internal/quorum"
)

// recordCounter is a remote drive (a driverpc client) that counts its
// record reads: alone (GetRecord) and for several drives of its node in
// one call (GetRecords, counted by the drive that makes the call).
type recordCounter struct {
	*driverpc.Client
	calls, batches, batched atomic.Int64
	applyCalls, applied     atomic.Int64 // ApplyBatches calls, and the drives they carried
	gets                    atomic.Int64 // Get calls (an inline shard fetched apart from its record)
}

func (r *recordCounter) Get(ctx context.Context, t drive.Table, key string) ([]byte, error) {
	r.gets.Add(1)
	return r.Client.Get(ctx, t, key)
}

func (r *recordCounter) ApplyBatches(ctx context.Context, drives []drive.NodeApplier, batches []*drive.Batch, deliver func(i int, err error)) {
	r.applyCalls.Add(1)
	r.applied.Add(int64(len(drives)))
	r.Client.ApplyBatches(ctx, drives, batches, deliver)
}

func (r *recordCounter) GetRecord(ctx context.Context, bucket, key string) ([]byte, []byte, error) {
	r.calls.Add(1)
	return r.Client.GetRecord(ctx, bucket, key)
}

func (r *recordCounter) GetRecords(ctx context.Context, drives []drive.NodeRecordReader, bucket, key string, withData bool,
	deliver func(i int, record, inline []byte, err error)) {
	r.batches.Add(1)
	r.batched.Add(int64(len(drives)))
	r.Client.GetRecords(ctx, drives, bucket, key, withData, deliver)
}

// openLocals opens n fresh local drives under dir (closed when the test
// ends), by slot.
func openLocals(t *testing.T, dir string, n int) map[int]drive.Drive {
	t.Helper()
	locals := map[int]drive.Drive{}
	for i := range n {
		l, err := drive.OpenLocal(filepath.Join(dir, fmt.Sprintf("d%02d", i+1)), drive.LocalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		locals[i] = l
	}
	return locals
}

// serveDrives serves locals over driverpc, as one node serves its drives
// to the others, and returns counting clients of them (by slot) and the
// clients under Health, as a cluster node wraps its remote drives.
func serveDrives(t *testing.T, locals map[int]drive.Drive, key peerauth.Key, hc *http.Client) ([]*recordCounter, []drive.Drive) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(driverpc.PathPrefix, driverpc.NewServer(locals, key, nil))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	var counters []*recordCounter
	var drives []drive.Drive
	for i := range len(locals) {
		c := &recordCounter{Client: driverpc.NewClient(srv.URL, i, "", key, hc)}
		h := drive.NewHealth(c, drive.HealthConfig{})
		t.Cleanup(func() { h.Close() })
		counters, drives = append(counters, c), append(drives, h)
	}
	return counters, drives
}

// TestGetThroughRemoteRecordReads: an engine whose 16 drives are remote
// (driverpc clients of one node serving 16 local drives) commits a PUT
// with one call for the 16 drives (drive.NodeApplier), reads a small
// object's records and inline shards with one call for all the drives
// it reads (drive.NodeRecordReader), and reads it right when drives hold
// a damaged record, lost their inline shard, or hold a stale version.
func TestGetThroughRemoteRecordReads(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	key := peerauth.Derive("root", "secret")
	locals := openLocals(t, filepath.Join(root, "n"), 16)
	hc := driverpc.NewHTTPClient(nil, nil)
	t.Cleanup(hc.CloseIdleConnections)
	counters, drives := serveDrives(t, locals, key, hc)
	e := engineOn(t, drives)
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(3))
	// put PUTs k; overwrite: k holds a version the commit replaces, whose
	// clean-up (the settling batches) is one more call for the node.
	put := func(k string, body []byte, overwrite bool) {
		t.Helper()
		for _, c := range counters {
			c.applyCalls.Store(0)
			c.applied.Store(0)
		}
		if _, err := e.PutObject(ctx, "bucket", k, bytes.NewReader(body), int64(len(body)), PutOptions{}); err != nil {
			t.Fatal(err)
		}
		// Every drive is on one node: the commit is one call for all 16,
		// and so is the clean-up of the replaced version on the drives
		// that held it (at least a write quorum; the call goes before the
		// PUT is answered, once every drive joined it).
		var calls, applied int64
		for _, c := range counters {
			calls, applied = calls+c.applyCalls.Load(), applied+c.applied.Load()
		}
		switch {
		case !overwrite && (calls != 1 || applied != 16):
			t.Fatalf("PUT %s: %d calls applied %d drives' batches, want 1 call for 16", k, calls, applied)
		case overwrite && (calls != 2 || applied < 16+int64(quorum.WriteQuorum(12, 4)) || applied > 32):
			t.Fatalf("PUT %s over a version: %d calls applied %d drives' batches, want 2 calls (commit, clean-up) for 16 and 13-16",
				k, calls, applied)
		}
	}
	get := func(k string, want []byte, when string) {
		t.Helper()
		for _, c := range counters {
			c.calls.Store(0)
			c.batches.Store(0)
			c.batched.Store(0)
		}
		got, err := getAll(t, e, k, GetOptions{})
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: GET %s: %d bytes (%v), want %d", when, k, len(got), err, len(want))
		}
		var calls, batches, batched int64
		for _, c := range counters {
			calls, batches, batched = calls+c.calls.Load(), batches+c.batches.Load(), batched+c.batched.Load()
		}
		// The first wave (the 12 drives of the data shards) is one call;
		// drives read after it, when those disagree, one call each or
		// together.
		if batches < 1 || batched < 12 || calls+batched < int64(quorum.WriteQuorum(12, 4)) {
			t.Fatalf("%s: %d calls reading %d drives' records together, %d reading one, want the first 12 in one call",
				when, batches, batched, calls)
		}
	}
	// record reads what the local drive i holds as k's current version.
	record := func(i int, k string) *meta.Object {
		t.Helper()
		raw, err := locals[i].Get(ctx, drive.TableObjects, drive.ObjectKey("bucket", k))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := meta.UnmarshalRecord(raw)
		if err != nil {
			t.Fatal(err)
		}
		return rec.Current()
	}
	apply := func(i int, b *drive.Batch) {
		t.Helper()
		if err := locals[i].Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	var holders []int // drives holding a data shard of an inline object
	body := make([]byte, 3000)
	r.Read(body)
	put("small", body, false)
	for i := range 16 {
		if m := record(i, "small"); !m.Inline {
			t.Fatalf("a %d-byte object is not inline on drive %d", len(body), i)
		} else if m.Erasure.Index <= m.Erasure.DataShards {
			holders = append(holders, i)
		}
	}
	if len(holders) != 12 {
		t.Fatalf("%d drives hold a data shard, want 12", len(holders))
	}
	get("small", body, "all drives sound")

	// Two holders lose their inline shard, a third holds a damaged
	// record: the GET rebuilds from the others.
	dataID := record(holders[0], "small").DataID
	for _, i := range holders[:2] {
		var b drive.Batch
		b.Delete(drive.TableInline, drive.DataKey(dataID, 1))
		apply(i, &b)
	}
	var b drive.Batch
	b.Put(drive.TableObjects, drive.ObjectKey("bucket", "small"), []byte("not a record"))
	apply(holders[2], &b)
	get("small", body, "two inline shards gone, one record damaged")

	// An overwrite that two drives missed: they hold the old version
	// (and its inline shard), which must not be served.
	old := map[int][]byte{}
	for _, i := range holders[3:5] {
		raw, err := locals[i].Get(ctx, drive.TableObjects, drive.ObjectKey("bucket", "small"))
		if err != nil {
			t.Fatal(err)
		}
		old[i] = raw
	}
	body2 := []byte(strings.Repeat("new version ", 100))
	put("small", body2, true)
	record2ID := record(holders[5], "small").DataID
	for i, raw := range old {
		var b drive.Batch
		b.Put(drive.TableObjects, drive.ObjectKey("bucket", "small"), raw)
		apply(i, &b)
	}
	get("small", body2, "two drives hold the version before")

	// countApplies runs f and returns the calls that applied batches and
	// the drives' batches they carried.
	countApplies := func(f func()) (calls, applied int64) {
		t.Helper()
		for _, c := range counters {
			c.applyCalls.Store(0)
			c.applied.Store(0)
		}
		f()
		for _, c := range counters {
			calls, applied = calls+c.applyCalls.Load(), applied+c.applied.Load()
		}
		return calls, applied
	}
	// A multipart upload's record and each part's commit: one call each.
	var uploadID string
	if calls, applied := countApplies(func() {
		var err error
		if uploadID, err = e.NewMultipartUpload(ctx, "bucket", "multi", PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}); calls != 1 || applied != 16 {
		t.Fatalf("new multipart upload: %d calls applied %d drives' batches, want 1 call for 16", calls, applied)
	}
	part := randBytes(r, 5<<20)
	if calls, applied := countApplies(func() {
		if _, err := e.PutObjectPart(ctx, "bucket", "multi", uploadID, 1, bytes.NewReader(part), int64(len(part)), PartOptions{}); err != nil {
			t.Fatal(err)
		}
	}); calls != 1 || applied != 16 {
		t.Fatalf("upload part: %d calls applied %d drives' batches, want 1 call for 16", calls, applied)
	}

	// A DELETE (unversioned bucket) removes the record and the version's
	// index entries (its refs and inline shards) in one call for the node.
	for _, c := range counters {
		c.applyCalls.Store(0)
		c.applied.Store(0)
	}
	if err := e.DeleteObject(ctx, "bucket", "small"); err != nil {
		t.Fatal(err)
	}
	var calls, applied int64
	for _, c := range counters {
		calls, applied = calls+c.applyCalls.Load(), applied+c.applied.Load()
	}
	if calls != 1 || applied < int64(quorum.WriteQuorum(12, 4)) {
		t.Fatalf("DELETE: %d calls applied %d drives' batches, want 1 call for 13-16 drives", calls, applied)
	}
	if _, err := e.HeadObject(ctx, "bucket", "small", GetOptions{}); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("HEAD after DELETE: %v", err)
	}
	for i := range 16 {
		if _, rolledBack := old[i]; rolledBack {
			continue // its record was set back to the version before: that one's entries went
		}
		if _, err := locals[i].Get(ctx, drive.TableInline, drive.DataKey(record2ID, 1)); !errors.Is(err, drive.ErrNotFound) {
			t.Fatalf("drive %d still holds the deleted version's inline shard: %v", i, err)
		}
	}
}

// TestClusterGetReadsWholeNodes: on a node whose set spans four nodes of
// four drives (this node's drives local, the others through driverpc), a
// GET reads its first wave from this node and two whole other nodes: a
// small object's records and shards (data and parity) come in two calls,
// not one per node holding a data shard; a large object's data shards
// on the node not asked come by data id, without decoding. Neither is a
// degraded read (no heal queued).
func TestClusterGetReadsWholeNodes(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	key := peerauth.Derive("root", "secret")
	hc := driverpc.NewHTTPClient(nil, nil)
	t.Cleanup(hc.CloseIdleConnections)
	var drives []drive.Drive
	counters := map[string][]*recordCounter{} // by node
	for node := range 4 {
		locals := openLocals(t, filepath.Join(root, fmt.Sprint("n", node)), 4)
		if node == 0 {
			for i := range 4 {
				h := drive.NewHealth(locals[i], drive.HealthConfig{})
				t.Cleanup(func() { h.Close() })
				drives = append(drives, h)
			}
			continue
		}
		cs, ds := serveDrives(t, locals, key, hc)
		counters[cs[0].Node()] = cs
		drives = append(drives, ds...)
	}
	// Drives interleaved by node, as a cluster's sets take them.
	var set []drive.Drive
	for i := range 4 {
		for n := range 4 {
			set = append(set, drives[n*4+i])
		}
	}
	e := engineOn(t, set)
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(5))
	for _, size := range []int{3000, 3 << 20} {
		for k := range 8 {
			name := fmt.Sprintf("obj-%d-%d", size, k)
			body := make([]byte, size)
			r.Read(body)
			if _, err := e.PutObject(ctx, "bucket", name, bytes.NewReader(body), int64(size), PutOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, cs := range counters {
				for _, c := range cs {
					c.calls.Store(0)
					c.batches.Store(0)
					c.gets.Store(0)
				}
			}
			got, err := getAll(t, e, name, GetOptions{})
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("GET %s: %d bytes (%v), want %d", name, len(got), err, size)
			}
			nodes := 0
			for _, cs := range counters {
				var calls int64
				for _, c := range cs {
					calls += c.calls.Load() + c.batches.Load() + c.gets.Load()
				}
				if calls > 1 {
					t.Fatalf("GET %s: %d record calls to one node", name, calls)
				}
				nodes += int(calls)
			}
			if nodes != 2 {
				t.Fatalf("GET %s: records read from %d other nodes, want 2 (this node's 4 drives and two whole nodes)", name, nodes)
			}
			if n := e.PendingHeals(); n != 0 {
				t.Fatalf("GET %s: %d heals queued by a healthy read", name, n)
			}
		}
	}
}
