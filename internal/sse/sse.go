package sse

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/sys/cpu"
)

const (
	// PackageSize is the plaintext bytes sealed together.
	PackageSize = 64 << 10
	// TagSize is what sealing adds to a package.
	TagSize = 16
	// KeySize is the size of object, stream and key-encryption keys.
	KeySize = 32
)

// Cipher names an AEAD a stream is sealed with; it is recorded per object.
type Cipher string

const (
	AES256GCM        Cipher = "AES-256-GCM"
	ChaCha20Poly1305 Cipher = "CHACHA20-POLY1305"
)

// ErrAuth reports data that does not authenticate: a tampered or
// corrupted package, or the wrong key.
var ErrAuth = errors.New("sse: data does not authenticate (tampered, corrupted or wrong key)")

// DefaultCipher is AES-256-GCM where the CPU has instructions for AES and
// carry-less multiplication (fast and constant time), else
// ChaCha20-Poly1305, which is both in plain software.
func DefaultCipher() Cipher {
	switch runtime.GOARCH {
	case "amd64":
		if cpu.X86.HasAES && cpu.X86.HasPCLMULQDQ {
			return AES256GCM
		}
	case "arm64":
		if cpu.ARM64.HasAES && cpu.ARM64.HasPMULL {
			return AES256GCM
		}
	case "s390x":
		if cpu.S390X.HasAES && cpu.S390X.HasGHASH {
			return AES256GCM
		}
	case "ppc64le":
		return AES256GCM
	}
	return ChaCha20Poly1305
}

// ParseCipher checks a recorded cipher name.
func ParseCipher(s string) (Cipher, error) {
	switch c := Cipher(s); c {
	case AES256GCM, ChaCha20Poly1305:
		return c, nil
	}
	return "", fmt.Errorf("sse: unknown cipher %q", s)
}

func newAEAD(c Cipher, key []byte) (cipher.AEAD, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("sse: key of %d bytes, want %d", len(key), KeySize)
	}
	switch c {
	case AES256GCM:
		b, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		return cipher.NewGCM(b)
	case ChaCha20Poly1305:
		return chacha20poly1305.New(key)
	}
	return nil, fmt.Errorf("sse: unknown cipher %q", c)
}

// EncryptedSize is the ciphertext size of n plaintext bytes.
func EncryptedSize(n int64) int64 {
	return n + (n+PackageSize-1)/PackageSize*TagSize
}

// PlainBlockSize is the plaintext bytes of a block of blockSize
// plaintext bytes rounded down to whole packages (at least one), the
// unit the engine encrypts and codes at once.
func PlainBlockSize(blockSize int) int {
	return max(blockSize/PackageSize, 1) * PackageSize
}

// EncryptedBlockSize is the erasure block size that holds plainBlock
// (a PlainBlockSize) plaintext bytes as ciphertext.
func EncryptedBlockSize(plainBlock int) int {
	return int(EncryptedSize(int64(plainBlock)))
}

// PlainOfBlock inverts EncryptedBlockSize: the plaintext bytes an
// erasure block of encBlock ciphertext bytes holds.
func PlainOfBlock(encBlock int) int {
	return encBlock / (PackageSize + TagSize) * PackageSize
}

// Stream seals and opens the packages of one stream.
type Stream struct{ aead cipher.AEAD }

// NewStream returns the stream sealed with c under key (a PartKey).
func NewStream(c Cipher, key []byte) (*Stream, error) {
	a, err := newAEAD(c, key)
	if err != nil {
		return nil, err
	}
	return &Stream{aead: a}, nil
}

// nonce is the package's sequence number, and a flag on the last
// package: neither reordering nor truncation authenticates.
func nonce(seq uint64, final bool) [12]byte {
	var n [12]byte
	binary.BigEndian.PutUint64(n[:8], seq)
	if final {
		n[8] = 0x80
	}
	return n
}

// SealBlock appends to dst the packages of plain (whole packages but for
// the stream's last), numbered from seq; last says plain ends the
// stream. dst must not overlap plain.
func (s *Stream) SealBlock(dst, plain []byte, seq uint64, last bool) []byte {
	for len(plain) > 0 {
		n := min(len(plain), PackageSize)
		final := last && n == len(plain)
		nc := nonce(seq, final)
		dst = s.aead.Seal(dst, nc[:], plain[:n], nil)
		plain = plain[n:]
		seq++
	}
	return dst
}

// OpenPackage appends to dst the plaintext of one sealed package (its
// ciphertext and tag), whose sequence number is seq; final says it is
// the stream's last. ErrAuth when it does not authenticate.
func (s *Stream) OpenPackage(dst, sealed []byte, seq uint64, final bool) ([]byte, error) {
	nc := nonce(seq, final)
	out, err := s.aead.Open(dst, nc[:], sealed, nil)
	if err != nil {
		return dst, fmt.Errorf("%w: package %d", ErrAuth, seq)
	}
	return out, nil
}

// Packages is how many packages a stream of n plaintext bytes has.
func Packages(n int64) int64 { return (n + PackageSize - 1) / PackageSize }

// NewKey returns a random key.
func NewKey() []byte {
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		panic("sse: no randomness: " + err.Error()) // crypto/rand never fails on supported systems
	}
	return k
}

func mac(key []byte, parts ...[]byte) []byte {
	h := hmac.New(sha256.New, key)
	for _, p := range parts {
		var l [4]byte
		binary.BigEndian.PutUint32(l[:], uint32(len(p)))
		h.Write(l[:]) // length-prefixed: no two part lists collide
		h.Write(p)
	}
	return h.Sum(nil)
}

// PartKey derives the key of one stream (an object's data, or one part
// of it) from the object key and the stream's random data id.
func PartKey(objectKey []byte, dataID string) []byte {
	return mac(objectKey, []byte("shardstore sse stream key v1"), []byte(dataID))
}

// HiddenETag is the ETag of an object whose ETag must not be the MD5 of
// its plaintext (SSE-KMS and SSE-C, as S3 does it): a keyed digest of
// that MD5, stable for the object, meaningless without its key.
func HiddenETag(objectKey []byte, md5hex string) string {
	return hex.EncodeToString(mac(objectKey, []byte("shardstore sse etag v1"), []byte(md5hex))[:16])
}

// SealKey seals a 32-byte object key under kek (a KMS data key, or
// CustomerKEK), bound to context: it unseals only with the same kek and
// context. The result is nonce||ciphertext||tag.
func SealKey(kek, objectKey []byte, context string) ([]byte, error) {
	if len(objectKey) != KeySize {
		return nil, fmt.Errorf("sse: object key of %d bytes, want %d", len(objectKey), KeySize)
	}
	a, err := newAEAD(AES256GCM, mac(kek, []byte("shardstore sse seal v1")))
	if err != nil {
		return nil, err
	}
	nc := make([]byte, a.NonceSize(), a.NonceSize()+KeySize+a.Overhead())
	if _, err := rand.Read(nc); err != nil {
		return nil, err
	}
	return a.Seal(nc, nc, objectKey, []byte(context)), nil
}

// UnsealKey reverses SealKey; ErrAuth for a wrong kek or context, or a
// damaged sealed key.
func UnsealKey(kek, sealed []byte, context string) ([]byte, error) {
	a, err := newAEAD(AES256GCM, mac(kek, []byte("shardstore sse seal v1")))
	if err != nil {
		return nil, err
	}
	if len(sealed) != a.NonceSize()+KeySize+a.Overhead() {
		return nil, fmt.Errorf("%w: sealed key of %d bytes", ErrAuth, len(sealed))
	}
	k, err := a.Open(nil, sealed[:a.NonceSize()], sealed[a.NonceSize():], []byte(context))
	if err != nil {
		return nil, fmt.Errorf("%w: sealed object key", ErrAuth)
	}
	return k, nil
}

// CustomerKEK derives the key that seals an SSE-C object's key from the
// customer's key.
func CustomerKEK(customerKey []byte) []byte {
	return mac(customerKey, []byte("shardstore sse-c kek v1"))
}

// KeyFingerprint is a salted HMAC of a customer key: stored to recognise
// the right key later, it reveals nothing about the key.
func KeyFingerprint(customerKey, salt []byte) []byte {
	return mac(customerKey, []byte("shardstore sse-c fingerprint v1"), salt)
}

// FingerprintMatches compares in constant time.
func FingerprintMatches(customerKey, salt, fingerprint []byte) bool {
	return subtle.ConstantTimeCompare(KeyFingerprint(customerKey, salt), fingerprint) == 1
}
