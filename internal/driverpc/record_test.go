package driverpc

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
)

// inlineFaultDrive fails every read of an inline shard as a drive fault.
type inlineFaultDrive struct{ drive.Drive }

func (d inlineFaultDrive) Get(ctx context.Context, t drive.Table, key string) ([]byte, error) {
	if t == drive.TableInline {
		return nil, fmt.Errorf("inline read: %w", drive.ErrDriveFaulty)
	}
	return d.Drive.Get(ctx, t, key)
}

// TestGetRecord: one call answers a record and, only when the record's
// current version keeps a data shard inline on this drive, that shard;
// the record's errors are Get's, a missing shard is left to the reader,
// and only a drive fault on the shard fails the call.
func TestGetRecord(t *testing.T) {
	local, _ := openLocal(t, true)
	n := newNode(t, map[int]drive.Drive{1: local, 2: inlineFaultDrive{local}})
	c := n.client(1)
	var _ drive.RecordReader = c

	put := func(key string, o *meta.Object, shard []byte) []byte {
		rec := (&meta.Record{Versions: []*meta.Object{o}}).Marshal()
		b := &drive.Batch{}
		b.Put(drive.TableObjects, drive.ObjectKey("b", key), rec)
		if shard != nil {
			b.Put(drive.TableInline, drive.DataKey(o.DataID, 1), shard)
		}
		if err := local.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	obj := func(id string, inline bool, index int) *meta.Object {
		return &meta.Object{Size: 5, ModTime: 1, ETag: "e", DataID: id, Inline: inline,
			Erasure: meta.Erasure{DataShards: 2, ParityShards: 1, Index: index, Distribution: []int{1, 2, 3}}}
	}
	shard := []byte("shard bytes")
	cases := []struct {
		key        string
		o          *meta.Object
		stored     []byte
		wantInline []byte
	}{
		{"data shard", obj("d1", true, 1), shard, shard},
		{"parity shard", obj("d2", true, 3), shard, shard},
		{"not inline", obj("d3", false, 1), nil, nil},
		{"shard missing", obj("d4", true, 2), nil, nil},
	}
	for _, tc := range cases {
		rec := put(tc.key, tc.o, tc.stored)
		gotRec, gotInline, err := c.GetRecord(ctx, "b", tc.key)
		if err != nil || string(gotRec) != string(rec) || string(gotInline) != string(tc.wantInline) || (tc.wantInline == nil) != (gotInline == nil) {
			t.Errorf("%s: record equal %v, inline %q, %v", tc.key, string(gotRec) == string(rec), gotInline, err)
		}
	}
	if _, _, err := c.GetRecord(ctx, "b", "absent"); !errors.Is(err, drive.ErrNotFound) {
		t.Errorf("absent key: %v", err)
	}
	b := &drive.Batch{}
	b.Put(drive.TableObjects, drive.ObjectKey("b", "corrupt"), []byte("not a record"))
	if err := local.Apply(ctx, b); err != nil {
		t.Fatal(err)
	}
	if rec, inline, err := c.GetRecord(ctx, "b", "corrupt"); err != nil || string(rec) != "not a record" || inline != nil {
		t.Errorf("corrupt record: %q %q %v (the reader judges the record)", rec, inline, err)
	}
	if _, _, err := n.client(2).GetRecord(ctx, "b", "data shard"); !errors.Is(err, drive.ErrDriveFaulty) {
		t.Errorf("a drive fault on the inline shard: %v", err)
	}
	if _, _, err := n.client(2).GetRecord(ctx, "b", "not inline"); err != nil {
		t.Errorf("no shard read, no fault: %v", err)
	}
}

// TestScanDigestOverRPC: a digest scan through a node answers the
// drive's digest (the flag reaches the drive), not its entries.
func TestScanDigestOverRPC(t *testing.T) {
	local, _ := openLocal(t, true)
	n := newNode(t, map[int]drive.Drive{1: local})
	b := &drive.Batch{}
	for i := range 5 {
		o := &meta.Object{Size: 1, ModTime: int64(i), ETag: "e", DataID: fmt.Sprint("d", i)}
		b.Put(drive.TableObjects, drive.ObjectKey("b", fmt.Sprint("k", i)), (&meta.Record{Versions: []*meta.Object{o}}).Marshal())
	}
	if err := local.Apply(ctx, b); err != nil {
		t.Fatal(err)
	}
	q := drive.ScanQuery{Prefix: drive.BucketPrefix("b"), Limit: 3, Digest: true}
	remote, err := n.client(1).Scan(ctx, drive.TableObjects, q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := drive.ParseScanDigest(remote)
	if err != nil {
		t.Fatalf("remote digest scan answered %d entries: %v", len(remote), err)
	}
	q.Digest = false
	ents, err := local.Scan(ctx, drive.TableObjects, q)
	if err != nil {
		t.Fatal(err)
	}
	if want := drive.DigestEntries(ents); got != want || got.Count != 3 {
		t.Fatalf("remote digest %+v, want %+v", got, want)
	}
}

// slowDrive answers Get after a delay.
type slowDrive struct {
	drive.Drive
	delay time.Duration
}

func (d slowDrive) Get(ctx context.Context, t drive.Table, key string) ([]byte, error) {
	time.Sleep(d.delay)
	return d.Drive.Get(ctx, t, key)
}

// TestGetRecords: one call reads a key's record on several drives of a
// node; each drive's answer is what GetRecord gives for it, errors
// included, and arrives as soon as that drive is read (a slow drive
// holds back only its own). A drive of another node, or one the node
// does not serve, fails alone; a node that is down fails them all.
func TestGetRecords(t *testing.T) {
	a, _ := openLocal(t, true)
	b, _ := openLocal(t, true)
	const slow = time.Second // far above a sound read, even on a loaded CI machine
	n := newNode(t, map[int]drive.Drive{1: a, 2: b, 3: inlineFaultDrive{a}, 4: slowDrive{a, slow}})
	other := newNode(t, map[int]drive.Drive{1: a})
	o := &meta.Object{Size: 5, ModTime: 1, ETag: "e", DataID: "d1", Inline: true,
		Erasure: meta.Erasure{DataShards: 2, ParityShards: 1, Index: 1, Distribution: []int{1, 2, 3}}}
	rec := (&meta.Record{Versions: []*meta.Object{o}}).Marshal()
	batch := &drive.Batch{}
	batch.Put(drive.TableObjects, drive.ObjectKey("b", "k"), rec)
	batch.Put(drive.TableInline, drive.DataKey("d1", 1), []byte("shard"))
	if err := a.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
	c1 := n.client(1)
	var _ drive.NodeRecordReader = c1
	members := []drive.NodeRecordReader{c1, n.client(2), n.client(3), n.client(4), n.client(9), other.client(1)}
	type answer struct {
		record, inline []byte
		err            error
		at             time.Duration
	}
	for _, withData := range []bool{true, false} {
		got := make([]*answer, len(members))
		start := time.Now()
		c1.GetRecords(ctx, members, "b", "k", withData, func(i int, record, inline []byte, err error) {
			if got[i] != nil {
				t.Errorf("drive %d answered twice", i)
			}
			got[i] = &answer{record, inline, err, time.Since(start)}
		})
		for i, g := range got {
			if g == nil {
				t.Fatalf("withData %v: drive %d never answered", withData, i)
			}
		}
		wantInline := "shard"
		if !withData {
			wantInline = ""
		}
		if g := got[0]; g.err != nil || string(g.record) != string(rec) || string(g.inline) != wantInline {
			t.Errorf("withData %v: sound drive: %q %q %v", withData, g.record, g.inline, g.err)
		}
		if g := got[1]; !errors.Is(g.err, drive.ErrNotFound) {
			t.Errorf("withData %v: drive without the key: %v", withData, g.err)
		}
		if g := got[2]; withData != errors.Is(g.err, drive.ErrDriveFaulty) {
			t.Errorf("withData %v: drive faulty on inline reads: %v", withData, g.err)
		}
		if g := got[3]; g.err != nil || string(g.record) != string(rec) || g.at < slow {
			t.Errorf("withData %v: slow drive answered %v after %v", withData, g.err, g.at)
		}
		if g := got[4]; !errors.Is(g.err, drive.ErrDriveFaulty) {
			t.Errorf("withData %v: a slot the node does not serve: %v", withData, g.err)
		}
		if g := got[5]; !errors.Is(g.err, drive.ErrInvalidArgument) {
			t.Errorf("withData %v: a drive of another node: %v", withData, g.err)
		}
		for _, i := range []int{0, 1, 2, 4} {
			if got[i].at >= slow {
				t.Errorf("withData %v: drive %d answered after %v, behind the slow drive", withData, i, got[i].at)
			}
		}
	}
	// The node goes down: every drive of the call fails, as faulty.
	n.srv.Close()
	failed := 0
	c1.GetRecords(ctx, members[:3], "b", "k", true, func(i int, _, _ []byte, err error) {
		if !errors.Is(err, drive.ErrDriveFaulty) {
			t.Errorf("node down, drive %d: %v", i, err)
		}
		failed++
	})
	if failed != 3 {
		t.Fatalf("node down: %d of 3 drives answered", failed)
	}
}

// slowApply applies batches after a delay.
type slowApply struct {
	drive.Drive
	delay time.Duration
}

func (d slowApply) Apply(ctx context.Context, b *drive.Batch) error {
	time.Sleep(d.delay)
	return d.Drive.Apply(ctx, b)
}

// TestApplyBatches: one call applies a batch on each of several drives
// of a node; each drive's outcome is what Apply gives for it (a failed
// condition is that drive's ErrConflict and changes nothing there), a
// slow drive holds back only its own answer, and a node that is down
// fails every drive of the call.
func TestApplyBatches(t *testing.T) {
	a, _ := openLocal(t, true)
	b, _ := openLocal(t, true)
	c, _ := openLocal(t, true)
	const slow = 2 * time.Second // far above a synced commit, even on a loaded CI machine
	n := newNode(t, map[int]drive.Drive{1: a, 2: b, 3: slowApply{c, slow}})
	var _ drive.NodeApplier = n.client(1)
	put := func(k, v string) *drive.Batch {
		bt := &drive.Batch{}
		bt.Put(drive.TableObjects, k, []byte(v))
		return bt
	}
	conflict := put("k", "never")
	conflict.Expect(drive.TableObjects, "k", []byte("not what is there"))
	members := []drive.NodeApplier{n.client(1), n.client(2), n.client(3), n.client(7)}
	batches := []*drive.Batch{put("k", "on a"), conflict, put("k", "on c"), put("k", "nowhere")}
	type answer struct {
		err error
		at  time.Duration
	}
	got := make([]*answer, len(members))
	start := time.Now()
	n.client(1).ApplyBatches(ctx, members, batches, func(i int, err error) {
		if got[i] != nil {
			t.Errorf("drive %d answered twice", i)
		}
		got[i] = &answer{err, time.Since(start)}
	})
	for i, g := range got {
		if g == nil {
			t.Fatalf("drive %d never answered", i)
		}
	}
	if got[0].err != nil || got[2].err != nil {
		t.Fatalf("sound drives: %v, %v", got[0].err, got[2].err)
	}
	if !errors.Is(got[1].err, drive.ErrConflict) {
		t.Fatalf("failed condition: %v", got[1].err)
	}
	if !errors.Is(got[3].err, drive.ErrDriveFaulty) {
		t.Fatalf("a slot the node does not serve: %v", got[3].err)
	}
	if got[0].at >= slow || got[1].at >= slow || got[2].at < slow {
		t.Fatalf("answers at %v, %v, %v: the slow drive held the others back", got[0].at, got[1].at, got[2].at)
	}
	for _, tc := range []struct {
		d    drive.Drive
		want string
	}{{a, "on a"}, {c, "on c"}} {
		if v, err := tc.d.Get(ctx, drive.TableObjects, "k"); err != nil || string(v) != tc.want {
			t.Fatalf("applied value %q, %v; want %q", v, err, tc.want)
		}
	}
	if _, err := b.Get(ctx, drive.TableObjects, "k"); !errors.Is(err, drive.ErrNotFound) {
		t.Fatalf("the batch whose condition failed changed its drive: %v", err)
	}
	n.srv.Close()
	failed := 0
	n.client(1).ApplyBatches(ctx, members[:2], batches[:2], func(i int, err error) {
		if !errors.Is(err, drive.ErrDriveFaulty) {
			t.Errorf("node down, drive %d: %v", i, err)
		}
		failed++
	})
	if failed != 2 {
		t.Fatalf("node down: %d of 2 drives answered", failed)
	}
}
