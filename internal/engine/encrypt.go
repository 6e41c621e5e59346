package engine

import (
	"bufio"
	"fmt"
	"io"
	"sync"

	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/sse"
)

// Encryption at rest happens here, between hashing and erasure coding:
// the hashes (ETag, checksums) are of the plaintext the client sent, the
// coder and the drives see only ciphertext. An encrypted version codes
// erasure blocks of sse.EncryptedBlockSize(plain block) bytes, so block
// i of a part's ciphertext is exactly plaintext block i sealed: a range
// read decodes and opens only the blocks and packages it needs, and
// healing rebuilds ciphertext shards without any key.

// plainBlockSize is how much plaintext one encrypted erasure block holds.
func (e *Engine) plainBlockSize() int { return sse.PlainBlockSize(e.blockSize) }

// blockSizeFor is the erasure block size of new data.
func (e *Engine) blockSizeFor(enc *Encryption) int {
	if enc == nil {
		return e.blockSize
	}
	return sse.EncryptedBlockSize(e.plainBlockSize())
}

func checkEncryption(enc *Encryption) error {
	if enc == nil {
		return nil
	}
	if _, err := sse.ParseCipher(string(enc.Cipher)); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	if len(enc.Key) != sse.KeySize {
		return fmt.Errorf("%w: object key of %d bytes", ErrInvalidArgument, len(enc.Key))
	}
	return nil
}

// setEncryption records enc on a new version or upload.
func setEncryption(m *meta.Object, enc *Encryption) {
	if enc == nil {
		return
	}
	m.Cipher, m.Sealed = string(enc.Cipher), enc.Sealed
	if enc.HideETag {
		m.Flags |= meta.FlagHiddenETag
	}
}

// shownETag is the ETag of data whose plaintext MD5 is md5hex.
func shownETag(m *meta.Object, objectKey []byte, md5hex string) string {
	if m.Flags&meta.FlagHiddenETag != 0 {
		return sse.HiddenETag(objectKey, md5hex)
	}
	return md5hex
}

// storedSize is how many bytes a part of plain bytes of m takes in its
// erasure-coded stream.
func storedSize(m *meta.Object, plain int64) int64 {
	if m.Cipher == "" {
		return plain
	}
	return sse.EncryptedSize(plain)
}

// storedParts lists m's parts with the sizes of their coded streams
// (what healing walks).
func storedParts(m *meta.Object) []meta.Part {
	parts := m.Parts
	if len(parts) == 0 {
		parts = []meta.Part{{Number: 1, Size: m.Size}}
	}
	if m.Cipher == "" {
		return parts
	}
	out := make([]meta.Part, len(parts))
	for i, p := range parts {
		out[i] = p
		out[i].Size = sse.EncryptedSize(p.Size)
	}
	return out
}

// unsealKey asks unseal for the key of m.
func unsealKey(unseal UnsealFunc, bucket, key string, m *meta.Object) ([]byte, error) {
	if unseal == nil {
		return nil, fmt.Errorf("%s/%s: %w", bucket, key, ErrEncrypted)
	}
	k, err := unseal(objectInfo(bucket, key, m))
	if err != nil {
		return nil, err
	}
	if len(k) != sse.KeySize {
		return nil, fmt.Errorf("%s/%s: unsealed key of %d bytes: %w", bucket, key, len(k), ErrDataAuth)
	}
	return k, nil
}

// partStream is the sse stream of part pi of m.
func partStream(m *meta.Object, objectKey []byte, pi int) (*sse.Stream, error) {
	c, err := sse.ParseCipher(m.Cipher)
	if err != nil {
		return nil, err
	}
	return sse.NewStream(c, sse.PartKey(objectKey, m.PartDataID(pi)))
}

// plainBuffers pools the plaintext buffers of encrypted writes (the
// erasure block then holds the ciphertext), so a small encrypted PUT
// does not allocate a block-sized buffer.
type plainBuffers struct {
	size int
	pool sync.Pool
}

func (b *plainBuffers) get() *[]byte {
	if p, ok := b.pool.Get().(*[]byte); ok {
		return p
	}
	buf := make([]byte, b.size)
	return &buf
}

func (b *plainBuffers) put(p *[]byte) { b.pool.Put(p) }

// encryptor seals one stream's plaintext blocks as writeShards reads them.
type encryptor struct {
	stream *sse.Stream
	seq    uint64 // next package number
	bufs   *plainBuffers
}

func (e *Engine) newEncryptor(enc *Encryption, dataID string) (*encryptor, error) {
	s, err := sse.NewStream(enc.Cipher, sse.PartKey(enc.Key, dataID))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	return &encryptor{stream: s, bufs: e.plainBufs}, nil
}

// seal appends plain's packages to dst; last says plain ends the stream.
func (x *encryptor) seal(dst, plain []byte, last bool) []byte {
	dst = x.stream.SealBlock(dst, plain, x.seq, last)
	x.seq += uint64(sse.Packages(int64(len(plain))))
	return dst
}

// peekingBody lets an encrypted write of unknown size learn that a full
// block was the last one (the last package is sealed as such).
type peekingBody struct{ *bufio.Reader }

func (p peekingBody) atEOF() bool {
	_, err := p.Peek(1)
	return err == io.EOF
}

// nextEncryptedBlock is nextBlock for an encrypted version: it finds
// the plaintext block holding r.offset, decodes that block's ciphertext
// and opens only the packages the read still needs.
func (r *objectReader) nextEncryptedBlock() error {
	m := r.st.fi
	parts, pi, partStart, err := r.seekPart()
	if err != nil {
		return err
	}
	if r.streamPart != pi {
		s, err := partStream(m, r.objectKey, pi)
		if err != nil {
			return fmt.Errorf("%s/%s: %w: %w", r.bucket, r.key, ErrDataAuth, err)
		}
		r.stream, r.streamPart = s, pi
	}
	partSize := parts[pi].Size
	pb := int64(sse.PlainOfBlock(m.Erasure.BlockSize))
	if pb <= 0 {
		return fmt.Errorf("%s/%s: %w: block size %d holds no package", r.bucket, r.key, ErrDataAuth, m.Erasure.BlockSize)
	}
	inPart := r.offset - partStart
	blockIdx := inPart / pb
	plainLen := min(pb, partSize-blockIdx*pb)
	if r.blk == nil {
		r.blk = r.coder.GetBlock()
	}
	if err := r.decodeBlock(pi, blockIdx, int(sse.EncryptedSize(plainLen))); err != nil {
		return err
	}
	if r.plain == nil {
		r.plain = (*r.e.plainBufs.get())[:0]
	}
	skip := inPart - blockIdx*pb
	end := min(plainLen, skip+r.remaining)
	// Open the packages [first, last] that hold [skip, end).
	first, last := skip/sse.PackageSize, (end-1)/sse.PackageSize
	lastOfPart := sse.Packages(partSize) - 1
	seq0 := blockIdx * (pb / sse.PackageSize)
	plain := r.plain[:0]
	for k := first; k <= last; k++ {
		n := min(int64(sse.PackageSize), plainLen-k*sse.PackageSize)
		off := k * (sse.PackageSize + sse.TagSize)
		var err error
		plain, err = r.stream.OpenPackage(plain, r.blk.Buf[off:off+n+sse.TagSize], uint64(seq0+k), seq0+k == lastOfPart)
		if err != nil {
			return fmt.Errorf("%s/%s part %d: %w: %w", r.bucket, r.key, parts[pi].Number, ErrDataAuth, err)
		}
	}
	from := skip - first*sse.PackageSize
	r.avail = plain[from : from+end-skip]
	r.offset += end - skip
	r.remaining -= end - skip
	return nil
}
