package minioformat

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/minio/highwayhash"
)

// ChecksumSize is the length of one HighwayHash-256 chunk checksum.
const ChecksumSize = highwayhash.Size

// MaxBlockSize bounds the erasure block size this package accepts (MinIO
// uses 1 MiB, releases before 2020 10 MiB); it bounds every buffer.
const MaxBlockSize = 64 << 20

// ErrChecksum is returned for a chunk whose checksum does not match.
var ErrChecksum = errors.New("minioformat: shard chunk checksum mismatch")

// piDecimals are the first 100 decimals of pi. MinIO's bitrot key is
// documented as the HighwayHash-256 of this string under the all-zero
// key; deriving it keeps a 32-byte magic number out of the source.
const piDecimals = "1415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679"

// bitrotKey is the fixed key of MinIO's streaming HighwayHash-256.
var bitrotKey = func() [32]byte {
	return highwayhash.Sum([]byte(piDecimals), make([]byte, 32))
}()

// ChunkSum returns the checksum MinIO stores before a shard chunk.
func ChunkSum(chunk []byte) [ChecksumSize]byte {
	return highwayhash.Sum(chunk, bitrotKey[:])
}

// StreamSize is the length of a shard stream holding dataLen shard bytes
// in chunks of chunkSize: each chunk (the last may be short) preceded by
// its checksum.
func StreamSize(dataLen, chunkSize int64) int64 {
	if dataLen <= 0 || chunkSize <= 0 {
		return 0
	}
	return (dataLen+chunkSize-1)/chunkSize*ChecksumSize + dataLen
}

// ShardReader reads a shard stream ("HighwayHash256S"): a part file, or
// an inline shard from xl.meta, laid out as [32-byte HighwayHash-256 of
// chunk][chunk] repeated, every chunk chunkSize bytes (the erasure shard
// size, ceil(blockSize/M)) but the last. Each chunk is verified before it
// is returned.
type ShardReader struct {
	r         io.Reader
	chunkSize int64
	left      int64 // shard bytes still to read
	sum       [ChecksumSize]byte
	chunk     int64 // index of the next chunk
}

// NewShardReader reads dataLen shard bytes framed in chunks of chunkSize
// from r. It fails for a chunk size above MaxBlockSize.
func NewShardReader(r io.Reader, chunkSize, dataLen int64) (*ShardReader, error) {
	if chunkSize <= 0 || chunkSize > MaxBlockSize || dataLen < 0 {
		return nil, corruptf("shard chunk size %d, length %d", chunkSize, dataLen)
	}
	return &ShardReader{r: r, chunkSize: chunkSize, left: dataLen}, nil
}

// Next returns the next verified chunk, read into buf when it is large
// enough (else into a new buffer of at most chunkSize), or io.EOF after
// the last one. A short stream is io.ErrUnexpectedEOF, a mismatch
// ErrChecksum (wrapped, with the chunk's index).
func (s *ShardReader) Next(buf []byte) ([]byte, error) {
	if s.left == 0 {
		return nil, io.EOF
	}
	n := min(s.chunkSize, s.left)
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(s.r, s.sum[:]); err != nil {
		return nil, noEOF(err)
	}
	if _, err := io.ReadFull(s.r, buf); err != nil {
		return nil, noEOF(err)
	}
	if got := ChunkSum(buf); !bytes.Equal(got[:], s.sum[:]) {
		return nil, fmt.Errorf("%w (chunk %d)", ErrChecksum, s.chunk)
	}
	s.left -= n
	s.chunk++
	return buf, nil
}

// Skip passes over the next chunk without verifying it.
func (s *ShardReader) Skip() error {
	if s.left == 0 {
		return io.EOF
	}
	n := min(s.chunkSize, s.left)
	if _, err := io.CopyN(io.Discard, s.r, ChecksumSize+n); err != nil {
		return noEOF(err)
	}
	s.left -= n
	s.chunk++
	return nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// VerifyStream reads a whole shard stream and checks every chunk, and
// that nothing follows the last.
func VerifyStream(r io.Reader, chunkSize, dataLen int64) error {
	s, err := NewShardReader(r, chunkSize, dataLen)
	if err != nil {
		return err
	}
	buf := make([]byte, min(chunkSize, max(dataLen, 1)))
	for {
		if _, err := s.Next(buf); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
	}
	var one [1]byte
	if n, _ := io.ReadFull(r, one[:]); n != 0 {
		return corruptf("data after the last chunk")
	}
	return nil
}
