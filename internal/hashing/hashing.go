// Package hashing computes the digests a PUT needs (the MD5 ETag, the S3
// flexible checksum the client asked for, a fast content hash) beside the
// data path rather than in front of it, through pluggable backends chosen
// by a policy.
package hashing

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"fmt"
	"hash"
	"hash/crc32"
	"strings"
)

// Request says which digests one object stream needs.
type Request struct {
	// Size is the expected stream length, or -1 when unknown.
	Size int64
	// MD5 asks for the MD5 digest (the S3 ETag, Content-MD5 checks).
	MD5 bool
	// Checksum names an S3 flexible checksum algorithm to compute:
	// "", CRC32, CRC32C, CRC64NVME, SHA1 or SHA256.
	Checksum string
}

// Digests are the results of a stream; fields not requested are nil.
type Digests struct {
	MD5      []byte
	Checksum []byte
}

// Stream hashes one object's bytes, in order, as blocks are handed to it.
type Stream interface {
	// Write queues p for hashing. The caller keeps p unmodified until
	// release is called; release is called exactly once, possibly before
	// Write returns.
	Write(p []byte, release func())
	// Sum waits until every queued block is hashed and returns the digests.
	Sum() (Digests, error)
	// Close ends the stream, releasing any blocks still queued. It is
	// safe to call after Sum and more than once.
	Close()
}

// Engine hands out streams; one engine is shared by all uploads.
type Engine struct{}

// New returns a hashing engine.
func New() *Engine { return &Engine{} }

// NewStream starts hashing one object.
func (e *Engine) NewStream(req Request) (Stream, error) {
	s := &inlineStream{}
	if req.MD5 {
		s.md5 = md5.New()
	}
	if req.Checksum != "" {
		h, err := NewChecksum(req.Checksum)
		if err != nil {
			return nil, err
		}
		s.sum = h
	}
	return s, nil
}

type inlineStream struct {
	md5, sum hash.Hash
}

func (s *inlineStream) Write(p []byte, release func()) {
	if s.md5 != nil {
		s.md5.Write(p)
	}
	if s.sum != nil {
		s.sum.Write(p)
	}
	release()
}

func (s *inlineStream) Sum() (Digests, error) {
	var d Digests
	if s.md5 != nil {
		d.MD5 = s.md5.Sum(nil)
	}
	if s.sum != nil {
		d.Checksum = s.sum.Sum(nil)
	}
	return d, nil
}

func (s *inlineStream) Close() {}

// NewChecksum returns a hash for an S3 flexible checksum algorithm name.
func NewChecksum(algorithm string) (hash.Hash, error) {
	switch strings.ToUpper(algorithm) {
	case "CRC32":
		return crc32.NewIEEE(), nil
	case "CRC32C":
		return crc32.New(crc32.MakeTable(crc32.Castagnoli)), nil
	case "SHA1":
		return sha1.New(), nil
	case "SHA256":
		return sha256.New(), nil
	}
	return nil, fmt.Errorf("hashing: unsupported checksum algorithm %q", algorithm)
}
