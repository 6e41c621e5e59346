package hashing

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"hash/crc64"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Published CRC catalogue check values: the CRC of the ASCII string
// "123456789".
func TestChecksumCheckValues(t *testing.T) {
	check := []byte("123456789")
	for _, tc := range []struct {
		alg  string
		want uint64
	}{
		{"CRC32", 0xcbf43926},
		{"crc32c", 0xe3069283},
		{"CRC64NVME", 0xae8b14860a799888},
	} {
		h, err := NewChecksum(tc.alg)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(check)
		sum := h.Sum(nil)
		var got uint64
		if len(sum) == 4 {
			got = uint64(binary.BigEndian.Uint32(sum))
		} else {
			got = binary.BigEndian.Uint64(sum)
		}
		if got != tc.want {
			t.Errorf("%s(123456789) = %#x, want %#x", tc.alg, got, tc.want)
		}
	}
	s1 := sha1.Sum(check)
	s256 := sha256.Sum256(check)
	for alg, want := range map[string][]byte{"SHA1": s1[:], "sha256": s256[:]} {
		h, err := NewChecksum(alg)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(check)
		if got := h.Sum(nil); !bytes.Equal(got, want) {
			t.Errorf("%s = %x, want %x", alg, got, want)
		}
	}
	// The table-driven reference built from the polynomial agrees.
	if got := crc64.Checksum(check, tableCRC64NVME); got != 0xae8b14860a799888 {
		t.Errorf("hash/crc64 with the NVMe table = %#x", got)
	}
	if _, err := NewChecksum("MD4"); err == nil {
		t.Error("NewChecksum(MD4) succeeded")
	}
}

// An S3 example value: the CRC32 of the empty object is AAAAAA==.
func TestEncodeDecodeChecksum(t *testing.T) {
	h, _ := NewChecksum(CRC32)
	if got := EncodeChecksum(h.Sum(nil)); got != "AAAAAA==" {
		t.Errorf("CRC32 of nothing = %s, want AAAAAA==", got)
	}
	raw, err := DecodeChecksum(CRC64NVME, base64.StdEncoding.EncodeToString(make([]byte, 8)))
	if err != nil || len(raw) != 8 {
		t.Errorf("DecodeChecksum: %v %x", err, raw)
	}
	if _, err := DecodeChecksum(CRC64NVME, "AAAAAA=="); err == nil {
		t.Error("DecodeChecksum accepted a 4-byte CRC64NVME")
	}
	if _, err := DecodeChecksum(CRC32, "!!"); err == nil {
		t.Error("DecodeChecksum accepted invalid base64")
	}
}

func rawSum(t *testing.T, alg string, p []byte) []byte {
	t.Helper()
	h, err := NewChecksum(alg)
	if err != nil {
		t.Fatal(err)
	}
	h.Write(p)
	return h.Sum(nil)
}

func TestCompositeChecksum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, alg := range []string{CRC32, CRC32C, CRC64NVME, SHA1, SHA256} {
		var parts [][]byte
		var concat []byte
		for range 3 {
			p := make([]byte, rng.IntN(5000))
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
			s := rawSum(t, alg, p)
			parts = append(parts, s)
			concat = append(concat, s...)
		}
		got, err := CompositeChecksum(alg, parts)
		if err != nil {
			t.Fatal(err)
		}
		want := EncodeChecksum(rawSum(t, alg, concat)) + "-3"
		if got != want {
			t.Errorf("%s composite = %s, want %s", alg, got, want)
		}
		if !strings.HasSuffix(got, "-3") {
			t.Errorf("%s composite %s lacks the part count", alg, got)
		}
	}
	if _, err := CompositeChecksum(CRC32, [][]byte{{1, 2}}); err == nil {
		t.Error("composite accepted a short part checksum")
	}
	if _, err := CompositeChecksum(CRC32, nil); err == nil {
		t.Error("composite accepted zero parts")
	}
}

func TestCombineCRC(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, alg := range []string{CRC32, CRC32C, CRC64NVME} {
		for trial := range 30 {
			// Random split points, including empty parts.
			n := 1 + rng.IntN(6)
			total := rng.IntN(len(data))
			if trial == 0 {
				total = 0
			}
			cuts := []int{0, total}
			for range n - 1 {
				cuts = append(cuts, rng.IntN(total+1))
			}
			slices.Sort(cuts)
			var parts []PartCRC
			for i := 0; i+1 < len(cuts); i++ {
				p := data[cuts[i]:cuts[i+1]]
				parts = append(parts, PartCRC{Sum: rawSum(t, alg, p), Size: int64(len(p))})
			}
			got, err := CombineCRC(alg, parts)
			if err != nil {
				t.Fatal(err)
			}
			if want := rawSum(t, alg, data[:total]); !bytes.Equal(got, want) {
				t.Fatalf("%s combine of %d parts over %d bytes = %x, want %x", alg, len(parts), total, got, want)
			}
		}
	}
	// A huge length must not overflow the power table.
	if _, err := CombineCRC(CRC64NVME, []PartCRC{{Sum: make([]byte, 8)}, {Sum: make([]byte, 8), Size: 1<<63 - 1}}); err != nil {
		t.Error(err)
	}
	if _, err := CombineCRC(SHA256, []PartCRC{{Sum: make([]byte, 32)}}); err == nil {
		t.Error("combined SHA256 parts")
	}
	if _, err := CombineCRC(CRC32, []PartCRC{{Sum: make([]byte, 8)}}); err == nil {
		t.Error("combined a CRC32 part of 8 bytes")
	}
}

func TestMultipartETag(t *testing.T) {
	p1 := strings.Repeat("0", 31) + "1"
	p2 := `"` + strings.Repeat("f", 32) + `"`
	raw := make([]byte, 0, 32)
	raw = append(raw, make([]byte, 15)...)
	raw = append(raw, 1)
	raw = append(raw, bytes.Repeat([]byte{0xff}, 16)...)
	got, err := MultipartETag([]string{p1, p2})
	if err != nil {
		t.Fatal(err)
	}
	want := md5Hex(raw) + "-2"
	if got != want {
		t.Errorf("MultipartETag = %s, want %s", got, want)
	}
	if _, err := MultipartETag([]string{"xyz"}); err == nil {
		t.Error("accepted a bad part ETag")
	}
}

// TestNewerChecksumAlgorithms pins the 2025 algorithms to their
// published check values of the empty input (big-endian digests, as S3
// carries them base64-encoded).
func TestNewerChecksumAlgorithms(t *testing.T) {
	for alg, want := range map[string]string{
		MD5:       "d41d8cd98f00b204e9800998ecf8427e",
		SHA512:    "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
		XXHASH64:  "ef46db3751d8e999",
		XXHASH3:   "2d06800538d394c2",
		XXHASH128: "99aa06d3014798d86001c324468d497f",
	} {
		h, err := NewChecksum(strings.ToLower(alg))
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			t.Errorf("%s(\"\") = %s, want %s", alg, got, want)
		}
		if IsCRC(alg) {
			t.Errorf("%s counted as a CRC: its part checksums cannot be combined", alg)
		}
		raw, _ := hex.DecodeString(want)
		if _, err := DecodeChecksum(alg, EncodeChecksum(raw)); err != nil {
			t.Errorf("%s: %v", alg, err)
		}
	}
	if _, err := CanonicalChecksum("CRC16"); err == nil {
		t.Fatal("an unknown algorithm was accepted")
	}
}

// TestCombineCRCEdgeSizes combines many parts of the sizes where a
// length's bits change (0, 1, powers of two and their neighbours), for
// all three CRCs, against the CRC of the concatenation.
func TestCombineCRCEdgeSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var sizes []int
	for p := 1; p <= 1<<16; p <<= 1 {
		sizes = append(sizes, p-1, p, p+1)
	}
	data := make([]byte, 0, 1<<18)
	var cuts []int
	for _, s := range sizes {
		cuts = append(cuts, len(data))
		for range s {
			data = append(data, byte(rng.Uint32()))
		}
	}
	cuts = append(cuts, len(data))
	for _, alg := range []string{CRC32, CRC32C, CRC64NVME} {
		var parts []PartCRC
		for i := 0; i+1 < len(cuts); i++ {
			p := data[cuts[i]:cuts[i+1]]
			parts = append(parts, PartCRC{Sum: rawSum(t, alg, p), Size: int64(len(p))})
			got, err := CombineCRC(alg, parts)
			if err != nil {
				t.Fatal(err)
			}
			if want := rawSum(t, alg, data[:cuts[i+1]]); !bytes.Equal(got, want) {
				t.Fatalf("%s: %d parts (last of %d bytes) combine to %x, want %x", alg, len(parts), len(p), got, want)
			}
		}
	}
}

func TestChecksumTypes(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"FULL_OBJECT", "FULL_OBJECT", true}, {"composite", "COMPOSITE", true}, {" Full_Object ", "FULL_OBJECT", true},
		{"", "", false}, {"FULL", "", false}, {"FULL_OBJECT,COMPOSITE", "", false}, {"COMPOSITE\x00", "", false},
	} {
		got, err := CanonicalChecksumType(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("CanonicalChecksumType(%q) = %q, %v", tc.in, got, err)
		}
	}
	// The combinations S3 documents for multipart uploads.
	allowed := map[string][2]bool{ // FULL_OBJECT, COMPOSITE
		CRC32: {true, true}, CRC32C: {true, true}, CRC64NVME: {true, false}, SHA1: {false, true}, SHA256: {false, true},
	}
	for alg, ok := range allowed {
		if SupportsChecksumType(alg, FullObject) != ok[0] || SupportsChecksumType(alg, Composite) != ok[1] {
			t.Errorf("%s: FULL_OBJECT %v COMPOSITE %v, want %v", alg, SupportsChecksumType(alg, FullObject), SupportsChecksumType(alg, Composite), ok)
		}
		if d := DefaultChecksumType(alg); !SupportsChecksumType(alg, d) || (alg == CRC64NVME) != (d == FullObject) {
			t.Errorf("%s: default type %s", alg, d)
		}
	}
	if SupportsChecksumType(CRC32, "PARTIAL") {
		t.Error("an unknown type is supported")
	}
}

func TestParseObjectChecksum(t *testing.T) {
	crc := EncodeChecksum([]byte{1, 2, 3, 4})
	for _, tc := range []struct {
		alg, value string
		parts      int
		ok         bool
	}{
		{CRC32, crc, 0, true},
		{CRC32, crc + "-1", 1, true},
		{CRC32, crc + "-10000", 10000, true},
		{CRC32, crc + "-10001", 0, false},
		{CRC32, crc + "-0", 0, false},
		{CRC32, crc + "-01", 0, false},
		{CRC32, crc + "-+1", 0, false},
		{CRC32, crc + "--1", 0, false},
		{CRC32, crc + "-", 0, false},
		{CRC32, crc + "-1-2", 0, false},
		{CRC32, crc + "- 1", 0, false},
		{CRC32, crc + "-99999999999999999999999", 0, false},
		{CRC32, crc + "-１", 0, false},
		{CRC32, "-3", 0, false},
		{CRC32, "", 0, false},
		{CRC32, "AQIDBA", 0, false},       // unpadded
		{CRC32, "AQIDBAU=", 0, false},     // five bytes
		{CRC64NVME, crc + "-2", 0, false}, // four bytes for an eight-byte CRC
		{"MD4", crc, 0, false},
		{SHA256, EncodeChecksum(make([]byte, 32)) + "-3", 3, true},
	} {
		raw, parts, err := ParseObjectChecksum(tc.alg, tc.value)
		if (err == nil) != tc.ok || parts != tc.parts {
			t.Errorf("ParseObjectChecksum(%s, %q) = %x, %d, %v", tc.alg, tc.value, raw, parts, err)
		}
		if err == nil {
			if n, _ := ChecksumSize(tc.alg); len(raw) != n {
				t.Errorf("ParseObjectChecksum(%s, %q): %d bytes", tc.alg, tc.value, len(raw))
			}
		}
	}
}

// FuzzParseObjectChecksum: whatever the value, a parse that succeeds
// gives the algorithm's size and a part count S3 allows, and the value
// is exactly the base64 of the checksum with that count.
func FuzzParseObjectChecksum(f *testing.F) {
	f.Add("CRC32", "AQIDBA==-3")
	f.Add("CRC64NVME", "AAAAAAAAAAA=")
	f.Add("SHA1", "-")
	f.Add("CRC32C", "AQIDBA==-00")
	f.Add("crc32", "AQ\nIDBA==")
	f.Fuzz(func(t *testing.T, alg, value string) {
		raw, parts, err := ParseObjectChecksum(alg, value)
		if err != nil {
			return
		}
		n, err := ChecksumSize(alg)
		if err != nil || len(raw) != n || parts < 0 || parts > 10000 {
			t.Fatalf("%s %q: %d bytes (want %d, %v), %d parts", alg, value, len(raw), n, err, parts)
		}
		canon := EncodeChecksum(raw)
		if parts > 0 {
			canon += "-" + strconv.Itoa(parts)
		}
		if canon != value && !strings.ContainsAny(value, "\r\n") {
			t.Fatalf("%s %q parsed as %q", alg, value, canon)
		}
	})
}
