package engine

import (
	"encoding/base64"
	"fmt"

	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/meta"
)

// completeSums checks the checksums a CompleteMultipartUpload names and
// computes the object's, as S3 does:
//
//   - x-amz-checksum-type, when sent, must be the upload's type
//     (UploadChecksumError, ChecksumCompleteType).
//   - A part entry's checksum of the upload's algorithm must be the
//     stored part's (ErrInvalidPart); an entry naming only another
//     algorithm is a ChecksumError for that part; a COMPOSITE upload
//     needs every entry's checksum (ChecksumPartMissing).
//   - The object's checksum is combined from the stored part checksums,
//     never from the data: the CRC of the whole object for FULL_OBJECT
//     (hashing.CombineCRC), the checksum of the part checksums with the
//     "-N" part count for COMPOSITE (hashing.CompositeChecksum).
//   - A whole-object checksum sent with the completion must be of the
//     upload's algorithm and equal that value (for COMPOSITE with or
//     without its "-N"), else a ChecksumError with Complete set.
//
// An upload created without an algorithm gets no checksum: S3 ignores
// one sent with its completion and refuses a checksum type. shardstore
// keeps what a client that sent a checksum with every part of such an
// upload and completes it with the object's evidently wants: when every
// listed part was stored with a checksum of the algorithm the completion
// names, the object gets that checksum, of the type named (none:
// FULL_OBJECT, for a CRC), verified like any other (docs/conformance.md).
// Otherwise the value is ignored and a type refused, as S3 does.
type completeSums struct {
	up       *meta.Object
	sentAlg  string // algorithm of the whole-object checksum sent, "" for none
	sentType string // x-amz-checksum-type sent, canonical, "" for none
	expected func() (string, error)
	adopt    string // the type an upload without algorithm takes, "" for none
	sums     [][]byte
	crcs     []hashing.PartCRC
}

func newCompleteSums(up *meta.Object, opts PutOptions) (*completeSums, error) {
	c := &completeSums{up: up, expected: opts.ExpectedChecksum}
	if c.expected != nil {
		c.sentAlg = canonicalAlgo(opts.ChecksumAlgorithm)
	}
	if opts.ChecksumType != "" {
		t, err := hashing.CanonicalChecksumType(opts.ChecksumType)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidArgument, err)
		}
		c.sentType = t
	}
	if up.ChecksumAlgo == "" {
		switch {
		case c.sentAlg == "":
		case c.sentType == "" && hashing.IsCRC(c.sentAlg):
			c.adopt = hashing.FullObject
		case c.sentType != "" && hashing.SupportsChecksumType(c.sentAlg, c.sentType):
			c.adopt = c.sentType
		}
		if c.sentType != "" && c.adopt == "" {
			return nil, c.typeError()
		}
	} else if c.sentType != "" && c.sentType != up.ChecksumType {
		return nil, c.typeError()
	}
	return c, nil
}

func (c *completeSums) typeError() error {
	return &UploadChecksumError{Reason: ChecksumCompleteType, Algorithm: c.up.ChecksumAlgo, Type: c.up.ChecksumType, Sent: c.sentType}
}

// part checks entry cp against its stored part record m and keeps the
// part's checksum for the object's.
func (c *completeSums) part(cp CompletePart, m *meta.Object) error {
	pc := m.Parts[0].Checksum
	palg := partChecksumAlgo(m, c.up)
	if alg := c.up.ChecksumAlgo; alg != "" {
		if pc == "" {
			// A part stored before parts of another algorithm were refused.
			return fmt.Errorf("%w: part %d has no %s checksum", ErrInvalidPart, cp.Number, alg)
		}
		if v, ok := cp.Checksums[alg]; ok {
			if v != pc {
				return fmt.Errorf("%w: part %d has %s %s, not %s", ErrInvalidPart, cp.Number, alg, pc, v)
			}
		} else if other := firstChecksumAlgo(cp.Checksums); other != "" {
			return &ChecksumError{Algorithm: other, Part: cp.Number, Detail: "the upload's algorithm is " + alg}
		} else if c.up.ChecksumType == hashing.Composite {
			return &UploadChecksumError{Reason: ChecksumPartMissing, Algorithm: alg, Type: c.up.ChecksumType, Part: cp.Number}
		}
		return c.keep(cp.Number, pc, m.Size)
	}
	// Without an upload algorithm an entry may name only the checksum its
	// part was sent with (S3 refuses any).
	for alg, v := range cp.Checksums {
		if pc == "" || v != pc || (palg != "" && palg != alg) {
			return fmt.Errorf("%w: part %d has no %s checksum %s", ErrInvalidPart, cp.Number, alg, v)
		}
	}
	if c.adopt != "" && pc != "" && (palg == "" || palg == c.sentAlg) {
		return c.keep(cp.Number, pc, m.Size)
	}
	c.adopt = ""
	return nil
}

func (c *completeSums) keep(number int, pc string, size int64) error {
	raw, err := base64.StdEncoding.DecodeString(pc)
	if err != nil {
		return fmt.Errorf("part %d: stored checksum %q: %w", number, pc, err)
	}
	c.sums = append(c.sums, raw)
	c.crcs = append(c.crcs, hashing.PartCRC{Sum: raw, Size: size})
	return nil
}

// finish sets om's checksum and verifies the one the completion sent.
func (c *completeSums) finish(om *meta.Object) error {
	if c.up.ChecksumAlgo == "" {
		if c.adopt == "" {
			if c.sentType != "" {
				return c.typeError()
			}
			return nil // no checksum; one sent is ignored, as S3 does
		}
		om.ChecksumAlgo, om.ChecksumType = c.sentAlg, c.adopt
	}
	alg := om.ChecksumAlgo
	var bare string
	if om.ChecksumType == hashing.FullObject {
		sum, err := hashing.CombineCRC(alg, c.crcs)
		if err != nil {
			return c.adoptError(alg, err)
		}
		om.ChecksumVal = base64.StdEncoding.EncodeToString(sum)
		bare = om.ChecksumVal
	} else {
		v, err := hashing.CompositeChecksum(alg, c.sums)
		if err != nil {
			return c.adoptError(alg, err)
		}
		om.ChecksumVal, om.ChecksumType = v, hashing.Composite
		bare = v[:len(v)-len(fmt.Sprintf("-%d", len(c.sums)))]
	}
	if c.sentAlg == "" {
		return nil
	}
	if c.sentAlg != alg {
		return &ChecksumError{Algorithm: alg, Complete: true, Detail: "a " + c.sentAlg + " checksum was sent"}
	}
	want, err := c.expected()
	if err != nil {
		return err
	}
	if want != om.ChecksumVal && want != bare {
		return &ChecksumError{Algorithm: alg, Complete: true, Detail: fmt.Sprintf("sent %s, parts combine to %s", want, om.ChecksumVal)}
	}
	return nil
}

// adoptError is a failure to combine the part checksums: for an upload
// without algorithm, parts whose stored checksum (of unknown algorithm,
// from before part records named it) has another size than the
// completion's algorithm, so the value sent cannot be the object's.
func (c *completeSums) adoptError(alg string, err error) error {
	if c.up.ChecksumAlgo == "" {
		return &ChecksumError{Algorithm: alg, Complete: true, Detail: err.Error()}
	}
	return err
}

// firstChecksumAlgo is the first algorithm, in S3's order, of a part
// entry's checksums; "" when it names none.
func firstChecksumAlgo(sums map[string]string) string {
	for _, alg := range hashing.ChecksumAlgorithms {
		if _, ok := sums[alg]; ok {
			return alg
		}
	}
	return ""
}
