package hashing

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/minio/crc64nvme"
	"github.com/zeebo/xxh3"
)

// S3 flexible checksum algorithm names, as they appear in
// x-amz-checksum-algorithm and x-amz-checksum-<name> headers.
const (
	CRC32     = "CRC32"
	CRC32C    = "CRC32C"
	CRC64NVME = "CRC64NVME"
	SHA1      = "SHA1"
	SHA256    = "SHA256"
	// The algorithms S3 added in 2025; current SDKs can send them.
	MD5       = "MD5"
	SHA512    = "SHA512"
	XXHASH64  = "XXHASH64"  // XXH64, seed 0
	XXHASH3   = "XXHASH3"   // XXH3-64, seed 0
	XXHASH128 = "XXHASH128" // XXH3-128, seed 0
)

// ChecksumAlgorithms lists every algorithm S3 accepts, in the order its
// error messages name them.
var ChecksumAlgorithms = []string{CRC32, CRC32C, CRC64NVME, SHA1, SHA256, MD5, SHA512, XXHASH64, XXHASH3, XXHASH128}

// Reflected CRC polynomials. All three CRCs S3 uses are reflected with an
// all-ones initial value and final XOR, which is what hash/crc32 and
// hash/crc64 implement and what CombineCRC relies on.
const (
	polyCRC32     = crc32.IEEE
	polyCRC32C    = crc32.Castagnoli
	polyCRC64NVME = 0x9a6c9329ac4bc9b5 // CRC-64/NVME 0xad93d23594c93659, bit-reversed
)

// Tables are immutable once built; building them at init keeps NewChecksum
// allocation-free and avoids any lazily mutated package state.
var (
	tableCRC32C    = crc32.MakeTable(polyCRC32C)
	tableCRC64NVME = crc64.MakeTable(polyCRC64NVME)
)

// CanonicalChecksum returns the canonical upper-case name of an S3 checksum
// algorithm, or an error naming the unsupported input.
func CanonicalChecksum(algorithm string) (string, error) {
	a := strings.ToUpper(strings.TrimSpace(algorithm))
	for _, known := range ChecksumAlgorithms {
		if a == known {
			return a, nil
		}
	}
	return "", fmt.Errorf("hashing: unsupported checksum algorithm %q", algorithm)
}

// NewChecksum returns a hash for an S3 flexible checksum algorithm name
// (case-insensitive). Sum returns the raw big-endian checksum bytes; S3
// transmits them base64-encoded (see EncodeChecksum).
func NewChecksum(algorithm string) (hash.Hash, error) {
	a, err := CanonicalChecksum(algorithm)
	if err != nil {
		return nil, err
	}
	switch a {
	case CRC32:
		return crc32.NewIEEE(), nil
	case CRC32C:
		return crc32.New(tableCRC32C), nil
	case CRC64NVME:
		// minio/crc64nvme folds with carry-less multiplication (PCLMULQDQ,
		// VPCLMULQDQ with AVX-512) where hash/crc64 uses tables: several
		// times faster, and CRC64NVME is the default checksum of current
		// AWS SDKs. Same polynomial, init and final XOR; the check value
		// test pins both implementations to the catalogue value.
		return crc64nvme.New(), nil
	case SHA1:
		return sha1.New(), nil
	case SHA256:
		return sha256.New(), nil
	case MD5:
		return md5.New(), nil
	case SHA512:
		return sha512.New(), nil
	case XXHASH64:
		return xxhash.New(), nil
	case XXHASH3:
		return xxh3.New(), nil
	default:
		return xxh3.New128(), nil
	}
}

// ChecksumSize returns the raw size in bytes of an algorithm's checksum.
func ChecksumSize(algorithm string) (int, error) {
	h, err := NewChecksum(algorithm)
	if err != nil {
		return 0, err
	}
	return h.Size(), nil
}

// IsCRC reports whether the algorithm is one of the CRCs, the only
// algorithms whose part checksums can be combined into a full-object
// checksum (S3's FULL_OBJECT checksum type).
func IsCRC(algorithm string) bool {
	a, err := CanonicalChecksum(algorithm)
	return err == nil && (a == CRC32 || a == CRC32C || a == CRC64NVME)
}

// EncodeChecksum renders a raw checksum the way S3 headers carry it.
func EncodeChecksum(raw []byte) string {
	return base64.StdEncoding.EncodeToString(raw)
}

// DecodeChecksum parses a base64 checksum header value for algorithm and
// checks its length, so a truncated or foreign value is refused early.
func DecodeChecksum(algorithm, value string) ([]byte, error) {
	n, err := ChecksumSize(algorithm)
	if err != nil {
		return nil, err
	}
	raw, err := base64.StdEncoding.DecodeString(value)
	if err != nil {
		return nil, fmt.Errorf("hashing: decode %s checksum %q: %w", algorithm, value, err)
	}
	if len(raw) != n {
		return nil, fmt.Errorf("hashing: %s checksum %q has %d bytes, want %d", algorithm, value, len(raw), n)
	}
	return raw, nil
}

// CompositeChecksum computes an S3 COMPOSITE multipart checksum: the
// algorithm applied to the concatenation of the raw part checksums, in part
// order, reported as base64 followed by "-<number of parts>".
func CompositeChecksum(algorithm string, partChecksums [][]byte) (string, error) {
	if len(partChecksums) == 0 {
		return "", fmt.Errorf("hashing: composite %s checksum of zero parts", algorithm)
	}
	h, err := NewChecksum(algorithm)
	if err != nil {
		return "", err
	}
	for i, p := range partChecksums {
		if len(p) != h.Size() {
			return "", fmt.Errorf("hashing: composite %s checksum: part %d has %d bytes, want %d", algorithm, i+1, len(p), h.Size())
		}
		h.Write(p)
	}
	return EncodeChecksum(h.Sum(nil)) + "-" + strconv.Itoa(len(partChecksums)), nil
}

// S3 checksum types (x-amz-checksum-type): how a multipart object's
// checksum is made from its parts. A single PUT is always FULL_OBJECT.
const (
	// FullObject is a checksum of the whole object's bytes; for a
	// multipart upload only the CRCs can give one (CombineCRC).
	FullObject = "FULL_OBJECT"
	// Composite is the checksum of the part checksums, reported with a
	// "-N" part count (CompositeChecksum).
	Composite = "COMPOSITE"
)

// CanonicalChecksumType returns the upper-case checksum type, or an error
// for anything but FULL_OBJECT and COMPOSITE.
func CanonicalChecksumType(t string) (string, error) {
	switch u := strings.ToUpper(strings.TrimSpace(t)); u {
	case FullObject, Composite:
		return u, nil
	}
	return "", fmt.Errorf("hashing: unknown checksum type %q", t)
}

// SupportsChecksumType reports whether a multipart upload of algorithm
// may have checksum type typ, the combinations S3 documents: FULL_OBJECT
// only for the CRCs (their part checksums combine), COMPOSITE for every
// algorithm but CRC64NVME (always FULL_OBJECT). Both arguments must be
// canonical.
func SupportsChecksumType(algorithm, typ string) bool {
	switch typ {
	case FullObject:
		return IsCRC(algorithm)
	case Composite:
		return algorithm != CRC64NVME
	}
	return false
}

// DefaultChecksumType is the type S3 gives a multipart upload of a
// (canonical) algorithm created without x-amz-checksum-type: FULL_OBJECT
// for CRC64NVME, COMPOSITE for the others.
func DefaultChecksumType(algorithm string) string {
	if algorithm == CRC64NVME {
		return FullObject
	}
	return Composite
}

// maxCompositeParts is the most parts an S3 multipart object has.
const maxCompositeParts = 10000

// ParseObjectChecksum parses a whole-object checksum value as a
// CompleteMultipartUpload may carry it: base64 of the algorithm's size,
// optionally followed by "-N", the part count of a COMPOSITE checksum
// (1 to 10000, plain decimal digits without sign or leading zero). parts
// is 0 when the value has no suffix.
func ParseObjectChecksum(algorithm, value string) (raw []byte, parts int, err error) {
	b64, count, found := strings.Cut(value, "-")
	if found {
		n, err := strconv.Atoi(count)
		if err != nil || n < 1 || n > maxCompositeParts || count[0] < '1' || count[0] > '9' {
			return nil, 0, fmt.Errorf("hashing: %s checksum %q: part count %q is not 1 to %d", algorithm, value, count, maxCompositeParts)
		}
		parts = n
	}
	raw, err = DecodeChecksum(algorithm, b64)
	if err != nil {
		return nil, 0, err
	}
	return raw, parts, nil
}
