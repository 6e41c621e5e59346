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
