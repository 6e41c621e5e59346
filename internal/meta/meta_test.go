package meta

import (
	"encoding/hex"
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
		Tags:     map[string]string{"project": "blue", "empty": "", "ключ": "значение"},
		LockMode: "COMPLIANCE", RetainUntil: 1893456000000000000, LegalHold: "ON",
		Cipher: "AES-256-GCM", Sealed: map[string]string{"scheme": "SSE-S3", "key": "c2VhbGVk"},
	}
}

// preSSERecord is sample() without the encryption fields as the release
// before encryption at rest encoded it (the record ended after LegalHold).
const preSSERecord = "53534d5402005a010000aab4de75aab48ae3a9b0a3fa30206434316438636439386630306232303465393830303939386563" +
	"6638343237650a746578742f706c61696e085354414e444152440561646d696e0770726976617465020d43616368652d436f" +
	"6e74726f6c086e6f2d636163686510436f6e74656e742d456e636f64696e6704677a69700205636f6c6f7204626c756509c3" +
	"bc6ec3af636f64650676c3a46c7565054352433332084141414141413d3d0b46554c4c5f4f424a4543542438643065316636" +
	"612d303030302d343030302d383030302d30303030303030303030303001027631010c048080400310030405060708090a0b" +
	"0c0d0e0f10010202020180808005016100000706016201780270370162046b2f657901750305656d707479000770726f6a65" +
	"637404626c756508d0bad0bbd18ed18710d0b7d0bdd0b0d187d0b5d0bdd0b8d0b50a434f4d504c49414e43458080a8dde68c" +
	"f4c634024f4e35094215"

// A record written before encryption existed decodes as not encrypted.
func TestPreSSERecordDecodes(t *testing.T) {
	raw, err := hex.DecodeString(preSSERecord)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(raw)
	if err != nil {
		t.Fatalf("pre-SSE record: %v", err)
	}
	want := sample()
	want.Cipher, want.Sealed = "", nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pre-SSE record decoded as\n %+v\nwant %+v", got, want)
	}
}

// preLockRecord is sample() without the object lock fields as the
// release before object lock encoded it (the record ended after Tags).
const preLockRecord = "53534d54020043010000aab4de75aab48ae3a9b0a3fa30206434316438636439386630306232303465393830303939386563" +
	"6638343237650a746578742f706c61696e085354414e444152440561646d696e0770726976617465020d43616368652d436f" +
	"6e74726f6c086e6f2d636163686510436f6e74656e742d456e636f64696e6704677a69700205636f6c6f7204626c756509c3" +
	"bc6ec3af636f64650676c3a46c7565054352433332084141414141413d3d0b46554c4c5f4f424a4543542438643065316636" +
	"612d303030302d343030302d383030302d30303030303030303030303001027631010c048080400310030405060708090a0b" +
	"0c0d0e0f10010202020180808005016100000706016201780270370162046b2f657901750305656d707479000770726f6a65" +
	"637404626c756508d0bad0bbd18ed18710d0b7d0bdd0b0d187d0b5d0bdd0b8d0b560b96bba"

// oldLayoutRecord is sample() without Tags as the release before tags
// encoded it (the record ended after UploadID), kept as bytes so the
// test does not depend on today's encoder.
const oldLayoutRecord = "53534d54020014010000aab4de75aab48ae3a9b0a3fa30206434316438636439386630306232303465393830303939386563" +
	"6638343237650a746578742f706c61696e085354414e444152440561646d696e0770726976617465020d43616368652d436f" +
	"6e74726f6c086e6f2d636163686510436f6e74656e742d456e636f64696e6704677a69700205636f6c6f7204626c756509c3" +
	"bc6ec3af636f64650676c3a46c7565054352433332084141414141413d3d0b46554c4c5f4f424a4543542438643065316636" +
	"612d303030302d343030302d383030302d30303030303030303030303001027631010c048080400310030405060708090a0b" +
	"0c0d0e0f10010202020180808005016100000706016201780270370162046b2f65790175639d6ae7"

// A record written before tags existed still decodes (no tags), and
// re-encoding it gives a record with the new trailing field that
// round-trips.
func TestOldLayoutRecordDecodes(t *testing.T) {
	raw, err := hex.DecodeString(oldLayoutRecord)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(raw)
	if err != nil {
		t.Fatalf("old record: %v", err)
	}
	want := sample()
	want.Tags = nil
	want.LockMode, want.RetainUntil, want.LegalHold = "", 0, ""
	want.Cipher, want.Sealed = "", nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("old record decoded as\n %+v\nwant %+v", got, want)
	}
	again := got.Marshal()
	if len(again) != len(raw)+6 {
		t.Fatalf("re-encoded old record is %d bytes, want %d (six more: the empty tag set, lock and encryption fields)", len(again), len(raw)+6)
	}
	got.Tags = map[string]string{"k": "v"}
	back, err := Unmarshal(got.Marshal())
	if err != nil || !reflect.DeepEqual(back, got) {
		t.Fatalf("tagged round trip: %+v %v", back, err)
	}
	// A record inside a Record (the index's per-key value) too.
	rec := &Record{Versions: []*Object{got}}
	rb, err := UnmarshalRecord(rec.Marshal())
	if err != nil || !reflect.DeepEqual(rb.Versions[0].Tags, got.Tags) {
		t.Fatalf("record round trip: %+v %v", rb, err)
	}
}

// A record written before object lock existed decodes with no
// retention and no legal hold, its tags intact.
func TestPreLockRecordDecodes(t *testing.T) {
	raw, err := hex.DecodeString(preLockRecord)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(raw)
	if err != nil {
		t.Fatalf("pre-lock record: %v", err)
	}
	want := sample()
	want.LockMode, want.RetainUntil, want.LegalHold = "", 0, ""
	want.Cipher, want.Sealed = "", nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pre-lock record decoded as\n %+v\nwant %+v", got, want)
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
