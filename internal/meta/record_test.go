package meta

import (
	"errors"
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
