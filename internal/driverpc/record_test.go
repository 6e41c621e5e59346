package driverpc

import (
	"context"
	"errors"
	"fmt"
	"testing"

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
		{"parity shard", obj("d2", true, 3), shard, nil},
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
