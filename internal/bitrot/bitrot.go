// Package bitrot provides the per-chunk checksums that shard files carry
// so silent corruption is found at read time. The algorithm is recorded
// per object (meta.Erasure.Bitrot) so it can change without rewriting
// old data; Default is chosen by BenchmarkAlgorithms.
package bitrot

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/minio/highwayhash"
	"github.com/zeebo/xxh3"
)

// Algorithm identifies a chunk checksum. Values are stored on disk: never
// renumber them.
type Algorithm uint8

const (
	// XXH3 is the 64-bit XXH3 hash: fastest here (AVX2), non-cryptographic,
	// which is fine for detecting media errors.
	XXH3 Algorithm = 1
	// HighwayHash256 is keyed and stronger, at a few times the cost.
	HighwayHash256 Algorithm = 2
	// CRC32C uses the SSE4.2 instruction; 4 bytes per chunk.
	CRC32C Algorithm = 3
	// HighwayHash256MinIO is HighwayHash-256 under MinIO's fixed key: the
	// chunk checksum of shard files adopted in place from MinIO drives
	// (internal/migrate), whose framing, [32-byte sum][chunk] per erasure
	// block, is shardstore's own. shardstore never picks it for new
	// objects; a heal rewrites an adopted object's shards with it so the
	// object stays readable with one algorithm.
	HighwayHash256MinIO Algorithm = 4
)

// Default is the algorithm new objects use (see BenchmarkAlgorithms and
// docs/performance.md for the measurement behind it).
const Default = XXH3

// highwayKey is a fixed, public key: bitrot detection needs determinism,
// not secrecy.
var highwayKey = [32]byte{
	0x73, 0x68, 0x61, 0x72, 0x64, 0x73, 0x74, 0x6f, 0x72, 0x65, 0x2d, 0x62, 0x69, 0x74, 0x72, 0x6f,
	0x74, 0x2d, 0x6b, 0x65, 0x79, 0x2d, 0x76, 0x31, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
}

// minioKeyInput is the text MinIO documents its bitrot key as the
// HighwayHash-256 of, under the all-zero key: the first 100 decimals of
// pi (docs/minio-format.md). Deriving the key keeps a magic constant out
// of the source.
const minioKeyInput = "1415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679"

// minioKey is MinIO's bitrot key (4be734fa...de36a0).
var minioKey = highwayhash.Sum([]byte(minioKeyInput), make([]byte, 32))

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Size is the checksum length in bytes.
func (a Algorithm) Size() int {
	switch a {
	case XXH3:
		return 8
	case HighwayHash256, HighwayHash256MinIO:
		return 32
	case CRC32C:
		return 4
	}
	return 0
}

// Valid reports whether a is known.
func (a Algorithm) Valid() bool { return a.Size() > 0 }

func (a Algorithm) String() string {
	switch a {
	case XXH3:
		return "xxh3-64"
	case HighwayHash256:
		return "highwayhash-256"
	case CRC32C:
		return "crc32c"
	case HighwayHash256MinIO:
		return "highwayhash-256-minio"
	}
	return fmt.Sprintf("bitrot(%d)", uint8(a))
}

// Sum writes the checksum of chunk into dst (len dst >= Size) and returns
// dst[:Size]. It allocates nothing.
func (a Algorithm) Sum(dst, chunk []byte) []byte {
	switch a {
	case XXH3:
		binary.LittleEndian.PutUint64(dst, xxh3.Hash(chunk))
		return dst[:8]
	case HighwayHash256:
		s := highwayhash.Sum(chunk, highwayKey[:])
		return dst[:copy(dst, s[:])]
	case CRC32C:
		binary.LittleEndian.PutUint32(dst, crc32.Checksum(chunk, castagnoli))
		return dst[:4]
	case HighwayHash256MinIO:
		s := highwayhash.Sum(chunk, minioKey[:])
		return dst[:copy(dst, s[:])]
	}
	panic(fmt.Sprintf("bitrot: unknown algorithm %d", a))
}

// Verify reports whether sum is chunk's checksum.
func (a Algorithm) Verify(sum, chunk []byte) bool {
	var buf [32]byte
	got := a.Sum(buf[:], chunk)
	if len(sum) != len(got) {
		return false
	}
	for i := range got {
		if got[i] != sum[i] {
			return false
		}
	}
	return true
}
