package minioformat

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
)

// mp is a minimal msgpack writer for building test inputs.
type mp struct{ b []byte }

func (w *mp) raw(p ...byte) *mp { w.b = append(w.b, p...); return w }
func (w *mp) u32(c byte, n uint32) *mp {
	w.b = append(w.b, c)
	w.b = binary.BigEndian.AppendUint32(w.b, n)
	return w
}
func (w *mp) str(s string) *mp { w.u32(0xdb, uint32(len(s))); w.b = append(w.b, s...); return w }
func (w *mp) bin(p []byte) *mp { w.u32(0xc6, uint32(len(p))); w.b = append(w.b, p...); return w }
func (w *mp) int(v int64) *mp {
	w.b = append(w.b, 0xd3)
	w.b = binary.BigEndian.AppendUint64(w.b, uint64(v))
	return w
}
func (w *mp) arr(n int) *mp  { return w.u32(0xdd, uint32(n)) }
func (w *mp) mapN(n int) *mp { return w.u32(0xdf, uint32(n)) }

// xlFile wraps an indexed (v1.3) metadata payload into an xl.meta with a
// correct CRC and the given inline data section.
func xlFile(meta, inline []byte) []byte {
	b := append([]byte("XL2 "), 1, 0, 3, 0)
	b = append(b, 0xc6)
	b = binary.BigEndian.AppendUint32(b, uint32(len(meta)))
	b = append(b, meta...)
	b = append(b, 0xce)
	b = binary.BigEndian.AppendUint32(b, uint32(xxhash.Sum64(meta)))
	return append(b, inline...)
}

type testObject struct {
	id, dataDir [16]byte
	m, n        int
	dist        []int
	sizes       []int64
	mtime       int64
	extraKey    string
}

func (o testObject) encode() []byte {
	w := &mp{}
	fields := 14
	if o.extraKey != "" {
		fields++
	}
	w.mapN(3).str("Type").int(1).str("V2Obj").mapN(fields)
	w.str("ID").bin(o.id[:]).str("DDir").bin(o.dataDir[:])
	w.str("EcAlgo").int(1).str("EcM").int(int64(o.m)).str("EcN").int(int64(o.n))
	w.str("EcBSize").int(1 << 20).str("EcIndex").int(1)
	w.str("EcDist").arr(len(o.dist))
	for _, d := range o.dist {
		w.int(int64(d))
	}
	w.str("CSumAlgo").int(1)
	w.str("PartNums").arr(len(o.sizes))
	for i := range o.sizes {
		w.int(int64(i + 1))
	}
	w.str("PartSizes").arr(len(o.sizes))
	var total int64
	for _, s := range o.sizes {
		w.int(s)
		total += s
	}
	w.str("Size").int(total).str("MTime").int(o.mtime)
	w.str("MetaUsr").mapN(1).str("etag").str("0123")
	if o.extraKey != "" {
		w.str(o.extraKey).str("x")
	}
	w.str("v").int(0)
	return w.b
}

func header(id [16]byte, mtime int64, kind, flags, ecn, ecm byte) []byte {
	w := &mp{}
	w.arr(7).bin(id[:]).int(mtime).bin([]byte{1, 2, 3, 4}).int(int64(kind)).int(int64(flags)).int(int64(ecn)).int(int64(ecm))
	return w.b
}

func indexed(versions ...[2][]byte) []byte {
	w := &mp{}
	w.int(3).int(3).int(int64(len(versions)))
	for _, v := range versions {
		w.bin(v[0]).bin(v[1])
	}
	return w.b
}

func goodObject() testObject {
	return testObject{id: [16]byte{1}, dataDir: [16]byte{2}, m: 2, n: 2, dist: []int{2, 3, 4, 1}, sizes: []int64{10}, mtime: 1e18}
}

func goodFile() []byte {
	o := goodObject()
	return xlFile(indexed([2][]byte{header(o.id, o.mtime, 1, 2, 2, 2), o.encode()}), nil)
}

func TestDecodeCrafted(t *testing.T) {
	m, err := Decode(goodFile())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Versions) != 1 || m.Versions[0].Object.Size != 10 || m.Versions[0].Object.ETag() != "0123" {
		t.Fatalf("decoded %+v", m.Versions)
	}
	o := goodObject()
	mk := func(mut func(*testObject), hdr func(h []byte) []byte) []byte {
		x := o
		mut(&x)
		h := header(x.id, x.mtime, 1, 2, byte(x.n), byte(x.m))
		if hdr != nil {
			h = hdr(h)
		}
		return xlFile(indexed([2][]byte{h, x.encode()}), nil)
	}
	same := func(*testObject) {}
	crc := goodFile()
	crc[20] ^= 1
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrCorrupt},
		{"short", []byte("XL2 "), ErrCorrupt},
		{"wrong magic", append([]byte("XL3 "), goodFile()[4:]...), ErrCorrupt},
		{"json xl.json", []byte(`{"version":"1.0.1","format":"xl"}`), ErrUnsupported},
		{"major 2", append([]byte("XL2 \x02\x00\x03\x00"), goodFile()[8:]...), ErrUnsupported},
		{"minor 4", append([]byte("XL2 \x01\x00\x04\x00"), goodFile()[8:]...), ErrUnsupported},
		{"crc", crc, ErrCorrupt},
		{"meta length beyond file", append([]byte("XL2 \x01\x00\x03\x00\xc6\xff\xff\xff\xff"), make([]byte, 16)...), ErrCorrupt},
		{"version count huge", xlFile(new(mp).int(3).int(3).int(1<<40).b, nil), ErrCorrupt},
		{"header version 4", xlFile(new(mp).int(4).int(3).int(0).b, nil), ErrUnsupported},
		{"header mismatch", mk(same, func(h []byte) []byte { return header([16]byte{9}, o.mtime, 1, 2, 2, 2) }), ErrCorrupt},
		{"header kind mismatch", mk(same, func(h []byte) []byte { return header(o.id, o.mtime, 2, 0, 0, 0) }), ErrCorrupt},
		{"distribution not a permutation", mk(func(x *testObject) { x.dist = []int{1, 1, 2, 3} }, nil), ErrCorrupt},
		{"distribution too short", mk(func(x *testObject) { x.dist = []int{1, 2, 3} }, nil), ErrCorrupt},
		{"parity above data", mk(func(x *testObject) { x.m, x.n, x.dist = 1, 3, []int{1, 2, 3, 4} }, nil), ErrCorrupt},
		{"negative part size", mk(func(x *testObject) { x.sizes = []int64{-5} }, nil), ErrCorrupt},
		{"no parts", mk(func(x *testObject) { x.sizes = nil }, nil), nil}, // size 0 without parts: accepted
		{"inline version 2", xlFile(indexed(), []byte{2, 0x80}), ErrUnsupported},
		{"inline truncated", xlFile(indexed(), []byte{1, 0x81, 0xa1, 'k', 0xc4, 10, 1}), ErrCorrupt},
		{"inline empty key", xlFile(indexed(), []byte{1, 0x81, 0xa0, 0xc4, 0}), ErrCorrupt},
		{"inline map huge", xlFile(indexed(), []byte{1, 0xdf, 0xff, 0xff, 0xff, 0xff}), ErrCorrupt},
		{"trailing bytes in meta", xlFile(append(indexed(), 0xc0), nil), ErrCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(c.in)
			if c.want == nil {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("Decode: %v, want %v", err, c.want)
			}
		})
	}
	// An unknown field is kept by name, not an error.
	m, err = Decode(mk(func(x *testObject) { x.extraKey = "NewField" }, nil))
	if err != nil || len(m.Versions[0].Object.Unknown) != 1 || m.Versions[0].Object.Unknown[0] != "NewField" {
		t.Fatalf("unknown field: %v, %+v", err, m)
	}
}

// TestDecodeHugeCountsAllocateLittle: announced lengths far beyond the
// input are refused before anything of their size is allocated.
func TestDecodeHugeCountsAllocateLittle(t *testing.T) {
	o := goodObject()
	body := o.encode()
	// Replace the part-number array's count with 2^32-1.
	i := bytes.Index(body, []byte("PartNums"))
	huge := append([]byte{}, body[:i+8]...)
	huge = append(huge, 0xdd, 0xff, 0xff, 0xff, 0xff)
	huge = append(huge, body[i+8+5:]...)
	inputs := [][]byte{
		xlFile(indexed([2][]byte{header(o.id, o.mtime, 1, 2, 2, 2), huge}), nil),
		xlFile(indexed([2][]byte{header(o.id, o.mtime, 1, 2, 2, 2), append([]byte{0x83, 0xa4, 'T', 'y', 'p', 'e', 1, 0xa5, 'V', '2', 'O', 'b', 'j', 0xc6, 0x7f, 0xff, 0xff, 0xff}, make([]byte, 8)...)}), nil),
		xlFile(new(mp).int(3).int(3).int(1<<31).b, nil),
		xlFile(indexed(), append([]byte{1, 0x81, 0xa1, 'k', 0xc6, 0xff, 0xff, 0xff, 0xf0}, make([]byte, 64)...)),
	}
	for i, in := range inputs {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Decode(in)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("input %d: %v, want ErrCorrupt", i, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
			t.Errorf("input %d of %d bytes allocated %d bytes", i, len(in), got)
		}
	}
}

func TestSkipDepthBounded(t *testing.T) {
	// An unknown field holding arrays nested a million deep.
	nest := bytes.Repeat([]byte{0x91}, 1<<20)
	o := goodObject()
	body := o.encode()
	body[4] = 4 // one more version field (map32 count)
	body = append(body, 0xa3, 'z', 'z', 'z')
	body = append(body, nest...)
	body = append(body, 0xc0)
	_, err := Decode(xlFile(indexed([2][]byte{header(o.id, o.mtime, 1, 2, 2, 2), body}), nil))
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "nested") {
		t.Fatalf("deep nesting: %v", err)
	}
}

// TestDecodeTruncations decodes every prefix of every fixture xl.meta
// that drive1 holds: each is an error, none panics.
func TestDecodeTruncations(t *testing.T) {
	dir, _ := fixture(t)
	files := fixtureMetas(t, filepath.Join(dir, "drive1"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// The inline section is whatever follows the CRC: cut right
		// there, a file whose versions are not inline is still whole.
		// (MinIO writes the metadata as a bin32 and the CRC as a uint32.)
		afterCRC := 8 + 5 + int(binary.BigEndian.Uint32(b[9:13])) + 5
		for n := range len(b) {
			if _, err := Decode(b[:n]); err == nil && n != afterCRC {
				t.Fatalf("%s cut to %d of %d bytes decoded", p, n, len(b))
			}
		}
	}
}

func fixtureMetas(t testing.TB, root string) []string {
	var out []string
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Name() == "xl.meta" {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzDecode: no input panics or decodes to a version that fails
// validation; seeds are the fixture's xl.meta files and crafted ones.
func FuzzDecode(f *testing.F) {
	f.Add(goodFile())
	f.Add([]byte("XL2 1   \x81\xa8Versions\x90"))
	dir, _ := fixture(f)
	for _, p := range fixtureMetas(f, filepath.Join(dir, "drive1")) {
		if b, err := os.ReadFile(p); err == nil && len(b) < 8<<10 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := Decode(in)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v wraps neither ErrCorrupt nor ErrUnsupported", err)
			}
			return
		}
		for _, v := range m.Versions {
			if v.Object != nil {
				if err := v.Object.Validate(); err != nil {
					t.Fatalf("decoded an invalid object: %v", err)
				}
				_, _ = v.Object.Checksums()
				_ = v.Object.ShardFileSize(v.Object.Size)
			}
		}
	})
}

// FuzzBucketMetadata: no input panics.
func FuzzBucketMetadata(f *testing.F) {
	f.Add([]byte{1, 0, 1, 0, 0x81, 0xa4, 'N', 'a', 'm', 'e', 0xa1, 'b'})
	f.Add([]byte{1, 0, 1, 0, 0x81, 0xa7, 'C', 'r', 'e', 'a', 't', 'e', 'd', 0xc7, 12, 5, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, in []byte) {
		_, _ = DecodeBucketMetadata(in)
	})
}

func TestBucketMetadataTimes(t *testing.T) {
	in := []byte{1, 0, 1, 0, 0x82, 0xa4, 'N', 'a', 'm', 'e', 0xa1, 'b',
		0xa7, 'C', 'r', 'e', 'a', 't', 'e', 'd', 0xc7, 12, 5, 0, 0, 0, 0, 0x65, 0x53, 0xf1, 0x00, 0, 0, 0, 7}
	bm, err := DecodeBucketMetadata(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Unix(0x6553f100, 7).UTC(); bm.Name != "b" || !bm.Created.Equal(want) {
		t.Fatalf("%q %v, want b %v", bm.Name, bm.Created, want)
	}
	if _, err := DecodeBucketMetadata([]byte{2, 0, 1, 0, 0x80}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("format 2: %v", err)
	}
	if _, err := DecodeBucketMetadata(append(in, 0)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("trailing byte: %v", err)
	}
}

// TestBitrotKey: the key derived from pi's decimals is MinIO's constant
// (its source spells it out in hex).
func TestBitrotKey(t *testing.T) {
	const minioKey = "4be734fa8e238acd263e83e6bb968552040f935da39f441497e09d1322de36a0"
	if got := hex.EncodeToString(bitrotKey[:]); got != minioKey {
		t.Fatalf("bitrot key %s, want %s", got, minioKey)
	}
}

func TestShardReaderFraming(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 25) // 250 bytes in chunks of 100
	var stream []byte
	for off := 0; off < len(data); off += 100 {
		c := data[off:min(off+100, len(data))]
		s := ChunkSum(c)
		stream = append(append(stream, s[:]...), c...)
	}
	if int64(len(stream)) != StreamSize(250, 100) {
		t.Fatalf("stream of %d bytes, StreamSize %d", len(stream), StreamSize(250, 100))
	}
	if err := VerifyStream(bytes.NewReader(stream), 100, 250); err != nil {
		t.Fatal(err)
	}
	if err := VerifyStream(bytes.NewReader(append(stream, 0)), 100, 250); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("trailing byte: %v", err)
	}
	if err := VerifyStream(bytes.NewReader(stream[:len(stream)-1]), 100, 250); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated: %v", err)
	}
	bad := bytes.Clone(stream)
	bad[5] ^= 1 // inside the first checksum
	if err := VerifyStream(bytes.NewReader(bad), 100, 250); !errors.Is(err, ErrChecksum) {
		t.Fatalf("corrupt checksum: %v", err)
	}
	if _, err := NewShardReader(bytes.NewReader(nil), MaxBlockSize+1, 1); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("huge chunk size: %v", err)
	}
}

func TestChecksumsDecode(t *testing.T) {
	// CRC32C multipart of 2 parts with the parts' checksums, as MinIO
	// writes it: uvarint type, digest, uvarint count, part digests.
	v := []byte{0xd0, 0x01, 1, 2, 3, 4, 2, 5, 6, 7, 8, 9, 10, 11, 12}
	o := &Object{MetaSys: map[string][]byte{MetaChecksums: v}}
	cs, err := o.Checksums()
	if err != nil || len(cs) != 1 {
		t.Fatalf("%v %v", cs, err)
	}
	c := cs[0]
	if c.Algorithm != "CRC32C" || c.String() != "AQIDBA==-2" || c.Type() != "COMPOSITE" || len(c.Parts) != 2 || !bytes.Equal(c.Parts[1], []byte{9, 10, 11, 12}) {
		t.Fatalf("%+v", c)
	}
	for n := range len(v) {
		o.MetaSys[MetaChecksums] = v[:n]
		if cs, err := o.Checksums(); n > 0 && err == nil {
			t.Fatalf("cut to %d bytes: %v", n, cs)
		}
	}
	o.MetaSys[MetaChecksums] = []byte{0x80, 0x80, 0x04, 0}
	if _, err := o.Checksums(); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("unknown type: %v", err)
	}
}

// TestDecodeListedLayouts: the layouts before 1.3 (a map whose Versions
// array holds the versions; 1.1 adds the bin wrapper, 1.2 the CRC) decode
// to the same versions, sorted newest first.
func TestDecodeListedLayouts(t *testing.T) {
	older, newer := goodObject(), goodObject()
	newer.id, newer.mtime = [16]byte{7}, older.mtime+5
	dm := (&mp{}).raw(0x83).str("Type").int(2).str("DelObj").raw(0x82).str("ID").bin(make([]byte, 16)).str("MTime").int(older.mtime + 1).str("v").int(0).b
	meta := (&mp{}).raw(0x81).str("Versions").arr(3).b
	meta = append(append(append(meta, older.encode()...), newer.encode()...), dm...)
	withBin := (&mp{}).bin(meta).b
	crc := (&mp{}).raw(0xce).b
	crc = binary.BigEndian.AppendUint32(crc, uint32(xxhash.Sum64(meta)))
	inputs := map[string][]byte{
		"1.0": append([]byte("XL2 1   "), meta...),
		"1.1": append([]byte("XL2 \x01\x00\x01\x00"), withBin...),
		"1.2": append(append([]byte("XL2 \x01\x00\x02\x00"), withBin...), crc...),
	}
	for name, in := range inputs {
		m, err := Decode(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(m.Versions) != 3 || m.Versions[0].Header.VersionID != newer.id || m.Versions[1].Kind != KindDeleteMarker ||
			m.Versions[1].ID() != "null" || m.Versions[2].Header.ModTime != older.mtime || m.Versions[0].Header.EcM != 2 {
			t.Fatalf("%s: %+v", name, m.Versions)
		}
	}
	bad := bytes.Clone(inputs["1.2"])
	bad[len(bad)-1] ^= 1
	if _, err := Decode(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("1.2 with a bad CRC: %v", err)
	}
}
