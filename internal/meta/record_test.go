package meta

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"reflect"
	"testing"
)

func sampleRecord() *Record {
	cur := sample()
	cur.Flags = 0
	prev := sample()
	prev.DataID = "00000000-1111-4000-8000-000000000000"
	prev.Flags = FlagPrev
	return &Record{Versions: []*Object{cur, prev}}
}

func TestRecordRoundTrip(t *testing.T) {
	r := sampleRecord()
	got, err := UnmarshalRecord(r.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, got) {
		t.Fatalf("round trip mismatch:\n got %+v\nwant %+v", got, r)
	}
	if got.Current() != got.Versions[0] || got.Prev() != got.Versions[1] {
		t.Fatalf("Current/Prev picked the wrong versions")
	}
	empty := &Record{Versions: []*Object{}}
	if got, err := UnmarshalRecord(empty.Marshal()); err != nil || got.Current() != nil || got.Prev() != nil {
		t.Fatalf("empty record: %+v, %v", got, err)
	}
}

// Every single-byte corruption and every truncation of a record is detected.
func TestRecordCorruptionDetected(t *testing.T) {
	b := sampleRecord().Marshal()
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 0x21
		if _, err := UnmarshalRecord(c); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at %d not detected: %v", i, err)
		}
	}
	for n := 0; n < len(b); n++ {
		if _, err := UnmarshalRecord(b[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncation to %d not detected: %v", n, err)
		}
	}
}

func FuzzUnmarshalRecord(f *testing.F) {
	f.Add(sampleRecord().Marshal())
	f.Add((&Record{}).Marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := UnmarshalRecord(b)
		if err != nil {
			return
		}
		again, err := UnmarshalRecord(r.Marshal())
		if err != nil || !reflect.DeepEqual(r, again) {
			t.Fatalf("re-encode differs: %v", err)
		}
	})
}

// PeekCurrent agrees with a full decode on every shape of record a
// listing meets, and detects what UnmarshalRecord detects.
func TestPeekCurrentAgreesWithUnmarshal(t *testing.T) {
	one := sample()
	one.Flags = 0
	marker := sample()
	marker.Flags = FlagDeleteMarker
	marker.Size, marker.ETag = 0, ""
	onlyPrev := sample()
	onlyPrev.Flags = FlagPrev
	keep := sample()
	keep.Flags = FlagPrev | FlagKeep
	for name, r := range map[string]*Record{
		"one version":       {Versions: []*Object{one}},
		"delete marker":     {Versions: []*Object{marker}},
		"only a previous":   {Versions: []*Object{onlyPrev}},
		"a kept previous":   {Versions: []*Object{keep}},
		"current with prev": sampleRecord(),
		"empty":             {Versions: []*Object{}},
	} {
		b := r.Marshal()
		st, ok, simple, err := PeekCurrent(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		full, err := UnmarshalRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		wantSimple := len(r.Versions) == 1 && r.Versions[0].Flags&FlagKeep == 0
		if simple != wantSimple {
			t.Errorf("%s: simple %v, want %v", name, simple, wantSimple)
		}
		if !simple {
			continue // the caller decodes it in full
		}
		if cur := full.Current(); ok != (cur != nil) || (ok && (!st.Matches(cur) || st.Flags != cur.Flags)) {
			t.Errorf("%s: peek %+v ok %v, full current %+v", name, st, ok, cur)
		}
		other := *one
		other.DataID = "another-data-id"
		if ok && st.Matches(&other) {
			t.Errorf("%s: stamp matches a version with another data id", name)
		}
	}
	b := (&Record{Versions: []*Object{one}}).Marshal()
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 0x21
		if _, _, _, err := PeekCurrent(c); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at %d not detected: %v", i, err)
		}
	}
	for n := 0; n < len(b); n++ {
		if _, _, _, err := PeekCurrent(b[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncation to %d not detected: %v", n, err)
		}
	}
}

func FuzzPeekCurrent(f *testing.F) {
	f.Add(sampleRecord().Marshal())
	f.Add((&Record{Versions: []*Object{sample()}}).Marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		st, ok, simple, err := PeekCurrent(b)
		if err != nil || !simple {
			return
		}
		r, err := UnmarshalRecord(b)
		if err != nil {
			// The peek reads less than the full decode; a record it
			// accepts may still fail further on, never the other way.
			return
		}
		if cur := r.Current(); ok != (cur != nil) || (ok && !st.Matches(cur)) {
			t.Fatalf("peek %+v ok %v disagrees with %+v", st, ok, cur)
		}
	})
}

// marshalV1 frames r as record version 1 did (no stamp after the header),
// so that reading records written before version 2 stays tested.
func marshalV1(r *Record) []byte {
	var e encoder
	e.buf = append(e.buf, RecordMagic[:]...)
	e.u16(1)
	e.uvarint(uint64(len(r.Versions)))
	for _, v := range r.Versions {
		e.bytes(v.Marshal())
	}
	e.u32(crc32.Checksum(e.buf, castagnoli))
	return e.buf
}

func stampOf(t *testing.T, b []byte) (string, bool) {
	t.Helper()
	s, ok := AppendStamp(nil, b)
	if ok && len(s) != 16 {
		t.Fatalf("stamp of %d bytes", len(s))
	}
	return string(s), ok
}

// TestRecordVersion1StillRead: records written before the stamp existed
// decode as before and stamp the same as their version 2 encoding.
func TestRecordVersion1StillRead(t *testing.T) {
	one := sample()
	one.Flags = 0
	for name, r := range map[string]*Record{
		"one version":       {Versions: []*Object{one}},
		"current with prev": sampleRecord(),
		"empty":             {Versions: []*Object{}},
	} {
		v1, v2 := marshalV1(r), r.Marshal()
		got, err := UnmarshalRecord(v1)
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Fatalf("%s: v1 decodes to %+v, %v", name, got, err)
		}
		s1, ok1 := stampOf(t, v1)
		s2, ok2 := stampOf(t, v2)
		if s1 != s2 || ok1 != ok2 || ok1 != r.simple() {
			t.Fatalf("%s: v1 stamp %x %v, v2 stamp %x %v", name, s1, ok1, s2, ok2)
		}
	}
}

// TestAppendStamp: the records of one version on different drives stamp
// alike; any field that tells versions apart changes the stamp; records
// a listing must compare in full have none.
func TestAppendStamp(t *testing.T) {
	base := sample()
	base.Flags = 0
	rec := func(change func(o *Object)) []byte {
		o := *base
		o.Erasure.Distribution = append([]int(nil), base.Erasure.Distribution...)
		change(&o)
		return (&Record{Versions: []*Object{&o}}).Marshal()
	}
	want, ok := stampOf(t, rec(func(*Object) {}))
	if !ok {
		t.Fatal("a one-version record has no stamp")
	}
	for name, change := range map[string]func(o *Object){
		"another shard index": func(o *Object) { o.Erasure.Index = 7 },
	} {
		if got, ok := stampOf(t, rec(change)); !ok || got != want {
			t.Errorf("%s: stamp %x, want %x", name, got, want)
		}
	}
	for name, change := range map[string]func(o *Object){
		"size":    func(o *Object) { o.Size++ },
		"time":    func(o *Object) { o.ModTime++ },
		"etag":    func(o *Object) { o.ETag = "e" },
		"data id": func(o *Object) { o.DataID = "another" },
		"flags":   func(o *Object) { o.Flags = FlagDeleteMarker },
	} {
		if got, ok := stampOf(t, rec(change)); !ok || got == want {
			t.Errorf("another %s: stamp %x (ok %v), same as the version's", name, got, ok)
		}
	}
	keep := *base
	keep.Flags = FlagPrev | FlagKeep
	for name, r := range map[string]*Record{
		"two versions":   sampleRecord(),
		"a kept version": {Versions: []*Object{&keep}},
	} {
		if _, ok := stampOf(t, r.Marshal()); ok {
			t.Errorf("%s: has a stamp", name)
		}
	}
	if _, ok := stampOf(t, []byte("not a record")); ok {
		t.Error("garbage has a stamp")
	}
	// Damage anywhere in a record, not only in its stamp, leaves it
	// without one.
	sound := rec(func(*Object) {})
	for i := range sound {
		b := append([]byte(nil), sound...)
		b[i] ^= 0x21
		if got, ok := stampOf(t, b); ok && got == want {
			t.Fatalf("a flip at byte %d of %d keeps the stamp", i, len(b))
		}
	}

	// A stamp that does not describe the record (its checksum made to
	// match) is refused as corrupt.
	b := rec(func(*Object) {})
	b[6] ^= 1
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
	if _, err := UnmarshalRecord(b); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a record whose stamp lies decodes: %v", err)
	}
}
