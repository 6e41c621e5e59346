package minioformat

import (
	"encoding/base64"
	"encoding/binary"
	"strconv"
)

// MinIO's checksum type bits, as stored (a uvarint) in x-minio-internal-crc.
const (
	csTrailing          = 1 << 0
	csSHA256            = 1 << 1
	csSHA1              = 1 << 2
	csCRC32             = 1 << 3
	csCRC32C            = 1 << 4
	csMultipart         = 1 << 6
	csIncludesMultipart = 1 << 7
	csCRC64NVME         = 1 << 8
	csFullObject        = 1 << 9
	csKnown             = csTrailing | csSHA256 | csSHA1 | csCRC32 | csCRC32C | csMultipart | csIncludesMultipart | csCRC64NVME | csFullObject
)

// Checksum is an S3 additional checksum of an object version.
type Checksum struct {
	Algorithm string // CRC32, CRC32C, CRC64NVME, SHA1 or SHA256
	Value     []byte // the raw digest (of the object, or of the parts' digests)
	// Multipart: the checksum was computed by a multipart upload of
	// PartCount parts; unless FullObject, Value is the checksum of the
	// parts' checksums (S3's COMPOSITE type).
	Multipart  bool
	FullObject bool
	PartCount  int
	Parts      [][]byte // the parts' checksums, when MinIO kept them
}

// String formats the checksum as S3 returns it: base64, with "-N" for a
// composite multipart checksum.
func (c Checksum) String() string {
	s := base64.StdEncoding.EncodeToString(c.Value)
	if c.Multipart && !c.FullObject {
		s += "-" + strconv.Itoa(c.PartCount)
	}
	return s
}

// Type is S3's checksum type: FULL_OBJECT or COMPOSITE.
func (c Checksum) Type() string {
	if c.Multipart && !c.FullObject {
		return "COMPOSITE"
	}
	return "FULL_OBJECT"
}

func checksumAlg(t uint64) (string, int) {
	switch t &^ (csTrailing | csMultipart | csIncludesMultipart | csFullObject) {
	case csSHA256:
		return "SHA256", 32
	case csSHA1:
		return "SHA1", 20
	case csCRC32:
		return "CRC32", 4
	case csCRC32C:
		return "CRC32C", 4
	case csCRC64NVME:
		return "CRC64NVME", 8
	}
	return "", 0
}

// Checksums decodes the version's S3 checksums (x-minio-internal-crc):
// a sequence of entries, each a uvarint type, the raw digest and, for a
// multipart upload, a uvarint part count followed (when the type says so)
// by every part's digest. No checksum is an empty result.
func (o *Object) Checksums() ([]Checksum, error) {
	b, ok := o.sys(MetaChecksums)
	if !ok {
		return nil, nil
	}
	return ParseChecksums(b)
}

// ParseChecksums decodes the value of MetaChecksums: of an encrypted
// version, once opened (SSE.OpenChecksums).
func ParseChecksums(b []byte) ([]Checksum, error) {
	var out []Checksum
	for len(b) > 0 {
		t, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, corruptf("checksum type")
		}
		b = b[n:]
		if t&^csKnown != 0 {
			return nil, unsupportedf("checksum type 0x%x", t)
		}
		alg, size := checksumAlg(t)
		if size == 0 {
			return nil, unsupportedf("checksum type 0x%x", t)
		}
		if len(b) < size {
			return nil, corruptf("checksum of %d bytes, want %d", len(b), size)
		}
		c := Checksum{Algorithm: alg, Value: append([]byte(nil), b[:size]...),
			Multipart: t&csMultipart != 0, FullObject: t&csFullObject != 0 || t&csCRC64NVME != 0}
		b = b[size:]
		if c.Multipart {
			parts, n := binary.Uvarint(b)
			if n <= 0 || parts > 10000 {
				return nil, corruptf("checksum part count")
			}
			b = b[n:]
			c.PartCount = int(parts)
			if t&csIncludesMultipart != 0 {
				if uint64(len(b)) < parts*uint64(size) {
					return nil, corruptf("%d part checksums in %d bytes", parts, len(b))
				}
				for range parts {
					c.Parts = append(c.Parts, append([]byte(nil), b[:size]...))
					b = b[size:]
				}
			}
		}
		out = append(out, c)
	}
	return out, nil
}
