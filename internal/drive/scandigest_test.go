package drive

import (
	"context"
	"testing"

	"github.com/shardstore/shardstore/internal/meta"
)

// digestRecord is the record of one version of an object as drive shard
// holds it: the same version on every drive, with the drive's own shard
// index (so the records' bytes differ between drives).
func digestRecord(modTime int64, shard int, extra ...*meta.Object) []byte {
	o := &meta.Object{Size: 10, ModTime: modTime, ETag: "etag", DataID: "id", Inline: true,
		Erasure: meta.Erasure{DataShards: 2, ParityShards: 1, Index: shard, Distribution: []int{1, 2, 3}}}
	return (&meta.Record{Versions: append([]*meta.Object{o}, extra...)}).Marshal()
}

func putDigestRecords(t *testing.T, d *Local, shard int, keys map[string]int64) {
	t.Helper()
	b := &Batch{}
	for k, mt := range keys {
		b.Put(TableObjects, ObjectKey("b", k), digestRecord(mt, shard))
	}
	if err := d.Apply(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

func scanDigestOf(t *testing.T, d *Local, q ScanQuery) ScanDigest {
	t.Helper()
	q.Digest = true
	ents, err := d.Scan(context.Background(), TableObjects, q)
	if err != nil {
		t.Fatal(err)
	}
	dg, err := ParseScanDigest(ents)
	if err != nil {
		t.Fatal(err)
	}
	return dg
}

// TestScanDigest checks that a digest scan summarises exactly the entries
// the same scan returns (DigestEntries of them), that two drives holding
// the same versions under different shard indexes digest alike, and that
// a different version, a missing or extra key, a record that is not
// simple or a damaged stamp shows.
func TestScanDigest(t *testing.T) {
	ctx := context.Background()
	a, b := newLocal(t), newLocal(t)
	keys := map[string]int64{"a": 1, "b/1": 2, "b/2": 3, "c": 4, "d/e/f": 5, "e": 6, "ü": 7, "": 8}
	putDigestRecords(t, a, 1, keys)
	putDigestRecords(t, b, 2, keys)
	bp := BucketPrefix("b")
	var queries []ScanQuery
	for _, prefix := range []string{"", "b/", "d"} {
		for _, delim := range []string{"", "/"} {
			for _, after := range []string{"", "a", "b/", "b/1", "zz"} {
				for _, limit := range []int{0, 1, 2, 3, 100} {
					q := ScanQuery{Prefix: bp + prefix, Delimiter: delim, Limit: limit}
					if after != "" {
						q.After = bp + after
					}
					queries = append(queries, q)
				}
			}
		}
	}
	for _, q := range queries {
		ents, err := a.Scan(ctx, TableObjects, q)
		if err != nil {
			t.Fatal(err)
		}
		want := DigestEntries(ents)
		da, db := scanDigestOf(t, a, q), scanDigestOf(t, b, q)
		if da != want || db != want {
			t.Fatalf("%+v: digest scans %+v / %+v, of the entries %+v", q, da, db, want)
		}
		if want.Count != len(ents) || want.Mixed || (len(ents) > 0 && want.Last != ents[len(ents)-1].Key) {
			t.Fatalf("%+v: digest %+v of %d entries", q, want, len(ents))
		}
	}

	all := ScanQuery{Prefix: bp}
	base := scanDigestOf(t, a, all)
	for _, change := range []struct {
		name string
		do   func(b *Batch)
	}{
		{"another version", func(x *Batch) { x.Put(TableObjects, ObjectKey("b", "c"), digestRecord(40, 2)) }},
		{"a missing key", func(x *Batch) { x.Delete(TableObjects, ObjectKey("b", "c")) }},
		{"an extra key", func(x *Batch) { x.Put(TableObjects, ObjectKey("b", "c0"), digestRecord(9, 2)) }},
	} {
		t.Run(change.name, func(t *testing.T) {
			x := &Batch{}
			change.do(x)
			if err := b.Apply(ctx, x); err != nil {
				t.Fatal(err)
			}
			if got := scanDigestOf(t, b, all); got == base {
				t.Fatalf("digest unchanged: %+v", got)
			}
			// A query that ends before the changed key still agrees.
			q := ScanQuery{Prefix: bp, Limit: 2}
			if scanDigestOf(t, b, q) != scanDigestOf(t, a, q) {
				t.Fatal("a change after the scanned range changed its digest")
			}
			putDigestRecords(t, b, 2, keys)
			restore := &Batch{}
			restore.Delete(TableObjects, ObjectKey("b", "c0"))
			if err := b.Apply(ctx, restore); err != nil {
				t.Fatal(err)
			}
			if got := scanDigestOf(t, b, all); got != base {
				t.Fatalf("restored drive digests %+v, want %+v", got, base)
			}
		})
	}

	for name, raw := range map[string][]byte{
		"a kept version": digestRecord(4, 2, &meta.Object{ModTime: 1, Flags: meta.FlagPrev | meta.FlagKeep}),
		"not a record":   []byte("garbage"),
		"a record damaged outside its stamp": func() []byte {
			r := digestRecord(4, 2)
			r[len(r)-10] ^= 0xff
			return r
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			x := &Batch{}
			x.Put(TableObjects, ObjectKey("b", "c"), raw)
			if err := b.Apply(ctx, x); err != nil {
				t.Fatal(err)
			}
			if got := scanDigestOf(t, b, all); !got.Mixed {
				t.Fatalf("digest %+v is not marked mixed", got)
			}
			putDigestRecords(t, b, 2, keys)
		})
	}

	// A record whose stamp was damaged digests unlike the sound drive's.
	r := digestRecord(4, 2)
	r[6] ^= 0xff
	x := &Batch{}
	x.Put(TableObjects, ObjectKey("b", "c"), r)
	if err := b.Apply(ctx, x); err != nil {
		t.Fatal(err)
	}
	if got := scanDigestOf(t, b, all); got == base {
		t.Fatal("a damaged stamp digests like the sound one")
	}
}

func TestParseScanDigestRefusesOtherAnswers(t *testing.T) {
	good := ScanDigest{Count: 3, Last: "k", Sum: [16]byte{1, 2}, Mixed: true}
	if got, err := ParseScanDigest([]Entry{good.entry()}); err != nil || got != good {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for i, es := range [][]Entry{
		nil,
		{good.entry(), good.entry()},
		{{Key: "k", Value: []byte("short")}},
		{{Key: "k", Value: append(good.entry().Value, 0)}},
	} {
		if _, err := ParseScanDigest(es); err == nil {
			t.Errorf("case %d: parsed", i)
		}
	}
}
