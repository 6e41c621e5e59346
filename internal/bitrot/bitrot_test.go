package bitrot

import (
	"math/rand"
	"testing"
)

var all = []Algorithm{XXH3, HighwayHash256, CRC32C}

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
