package meta

import (
	"errors"
	"math/rand"
	"reflect"
	"testing"
)

func sample() *Object {
	return &Object{
		Size: 123456789, ModTime: 1763800000123456789, ETag: "d41d8cd98f00b204e9800998ecf8427e",
		ContentType: "text/plain", StorageClass: "STANDARD", Owner: "admin", ACL: "private",
		Headers:      map[string]string{"Cache-Control": "no-cache", "Content-Encoding": "gzip"},
		UserMeta:     map[string]string{"color": "blue", "ünïcode": "välue"},
		ChecksumAlgo: "CRC32", ChecksumVal: "AAAAAA==", ChecksumType: "FULL_OBJECT",
		DataID: "8d0e1f6a-0000-4000-8000-000000000000", Inline: true, VersionID: "v1", Flags: FlagPrev,
		Erasure: Erasure{DataShards: 12, ParityShards: 4, BlockSize: 1 << 20, Index: 3,
			Distribution: []int{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 1, 2}, Bitrot: 2},
		Parts:  []Part{{Number: 1, Size: 5 << 20, ETag: "a"}, {Number: 7, Size: 3, ETag: "b", Checksum: "x", DataID: "p7"}},
		Bucket: "b", Key: "k/ey", UploadID: "u",
	}
}

func TestRoundTrip(t *testing.T) {
	o := sample()
	got, err := Unmarshal(o.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o, got) {
		t.Fatalf("round trip mismatch:\n got %+v\nwant %+v", got, o)
	}
	empty := &Object{}
	got, err = Unmarshal(empty.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(empty, got) {
		t.Fatalf("empty round trip mismatch: %+v", got)
	}
}

// Every single-byte corruption and every truncation must be detected.
func TestCorruptionDetected(t *testing.T) {
	b := sample().Marshal()
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 0x5a
		if _, err := Unmarshal(c); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at %d not detected: %v", i, err)
		}
	}
	for n := 0; n < len(b); n++ {
		if _, err := Unmarshal(b[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncation to %d not detected: %v", n, err)
		}
	}
}

// Random garbage must never panic the decoder.
func TestGarbageNeverPanics(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	b := sample().Marshal()
	for i := 0; i < 2000; i++ {
		c := append([]byte(nil), b...)
		for j := 0; j < 1+r.Intn(8); j++ {
			c[r.Intn(len(c))] = byte(r.Intn(256))
		}
		Unmarshal(c)
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add(sample().Marshal())
	f.Add((&Object{}).Marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := Unmarshal(b)
		if err != nil {
			return
		}
		if _, err := Unmarshal(o.Marshal()); err != nil {
			t.Fatalf("re-encoding a decoded record failed: %v", err)
		}
	})
}
