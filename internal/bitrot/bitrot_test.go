package bitrot

import (
	"bytes"
	"encoding/hex"
	"math/rand"
	"strings"
	"testing"
)

var all = []Algorithm{XXH3, HighwayHash256, CRC32C, HighwayHash256MinIO}

func TestDetectsEveryFlip(t *testing.T) {
	chunk := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(chunk)
	for _, a := range all {
		var buf [32]byte
		sum := append([]byte(nil), a.Sum(buf[:], chunk)...)
		if len(sum) != a.Size() || !a.Verify(sum, chunk) {
			t.Fatalf("%v: checksum does not verify its own chunk", a)
		}
		for i := 0; i < len(chunk); i += 97 {
			chunk[i] ^= 1
			if a.Verify(sum, chunk) {
				t.Fatalf("%v: flip at %d not detected", a, i)
			}
			chunk[i] ^= 1
		}
	}
}

func TestUnknownAlgorithm(t *testing.T) {
	if Algorithm(0).Valid() || Algorithm(99).Valid() {
		t.Fatal("unknown algorithms must not be valid")
	}
	for _, a := range all {
		if !a.Valid() {
			t.Fatalf("%v should be valid", a)
		}
	}
}

// BenchmarkAlgorithms measures each checksum on one 12+4 shard chunk of a
// 1 MiB block (87382 bytes), the size the engine hashes.
func BenchmarkAlgorithms(b *testing.B) {
	chunk := make([]byte, (1<<20+11)/12)
	rand.New(rand.NewSource(1)).Read(chunk)
	for _, a := range all {
		b.Run(a.String(), func(b *testing.B) {
			var buf [32]byte
			b.SetBytes(int64(len(chunk)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				a.Sum(buf[:], chunk)
			}
		})
	}
}

// TestMinIOKey checks the derived key against the constant MinIO
// documents (first and last bytes, docs/minio-format.md).
func TestMinIOKey(t *testing.T) {
	got := hex.EncodeToString(minioKey[:])
	if !strings.HasPrefix(got, "4be734fa") || !strings.HasSuffix(got, "de36a0") {
		t.Fatalf("MinIO bitrot key %s, want 4be734fa...de36a0", got)
	}
	if HighwayHash256MinIO.Size() != 32 || HighwayHash256MinIO.String() != "highwayhash-256-minio" {
		t.Fatalf("size %d, name %s", HighwayHash256MinIO.Size(), HighwayHash256MinIO)
	}
	var a, b [32]byte
	chunk := []byte("chunk")
	if bytes.Equal(HighwayHash256MinIO.Sum(a[:], chunk), HighwayHash256.Sum(b[:], chunk)) {
		t.Fatal("MinIO's key gives shardstore's HighwayHash-256 sum")
	}
}

// TestMinIOFramingCorruptChunk frames three chunks as MinIO's part files
// do ([32-byte sum][chunk], the last chunk short) and checks that a
// reader walking the frames accepts the clean stream and rejects exactly
// the corrupted chunk, whether its data or its sum is damaged.
func TestMinIOFramingCorruptChunk(t *testing.T) {
	const chunkSize = 1000
	data := make([]byte, 2*chunkSize+123)
	rand.New(rand.NewSource(2)).Read(data)
	var stream []byte
	for off := 0; off < len(data); off += chunkSize {
		c := data[off:min(off+chunkSize, len(data))]
		var buf [32]byte
		stream = append(stream, HighwayHash256MinIO.Sum(buf[:], c)...)
		stream = append(stream, c...)
	}
	bad := func(s []byte) []int {
		var out []int
		for i, off := 0, 0; off < len(s); i++ {
			n := min(chunkSize, len(s)-off-32)
			if !HighwayHash256MinIO.Verify(s[off:off+32], s[off+32:off+32+n]) {
				out = append(out, i)
			}
			off += 32 + n
		}
		return out
	}
	if b := bad(stream); len(b) != 0 {
		t.Fatalf("clean stream: chunks %v fail", b)
	}
	for _, at := range []int{32 + 5, 32 + chunkSize + 3, 2*(32+chunkSize) + 32 + 122} {
		s := append([]byte(nil), stream...)
		s[at] ^= 0x40
		want := at / (32 + chunkSize)
		if b := bad(s); len(b) != 1 || b[0] != want {
			t.Fatalf("byte %d flipped: failing chunks %v, want [%d]", at, b, want)
		}
	}
}
