package minioformat

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/chacha20poly1305"
)

// Server-side encryption as MinIO stores it (docs/minio-format.md,
// "Encrypted objects"; learnt from MinIO's internal/crypto and the DARE
// format of github.com/minio/sio, nothing copied):
//
//   - a random 32-byte object key per version, sealed (SealedKey: a DARE
//     2.0 package of the 32 bytes) under a key HMAC-SHA256(kek, iv ||
//     domain || "DAREv2-HMAC-SHA256" || bucket/object), where iv is the
//     version's 32-byte random IV, domain "SSE-S3", "SSE-KMS" or "SSE-C",
//     and kek the KMS data key (SSE-S3, SSE-KMS) or the client's key
//     (SSE-C);
//   - the KMS data key stored sealed by the KMS (DataKey), under the KMS
//     key KeyID, bound to an associated-data context (KMSContext);
//   - the data, each part a DARE 2.0 stream (DAREReader) under the
//     object key (a single PUT) or HMAC-SHA256(object key, part number as
//     4 bytes little-endian) (each part of a multipart object);
//   - a single PUT's ETag sealed the same way under HMAC-SHA256(object
//     key, "SSE-etag") (UnsealETag); a multipart object's ETag is plain.

// The sealing algorithm of every object key MinIO writes since 2018.
const sealAlgorithm = "DAREv2-HMAC-SHA256"

// The metadata MinIO records beside an encrypted version (MetaSys).
const (
	metaSealIV        = "X-Minio-Internal-Server-Side-Encryption-Iv"
	metaSealAlgorithm = "X-Minio-Internal-Server-Side-Encryption-Seal-Algorithm"
	metaKMSDataKey    = "X-Minio-Internal-Server-Side-Encryption-S3-Kms-Sealed-Key"
	metaKMSContext    = "X-Minio-Internal-Server-Side-Encryption-Context"
)

// SSE is what MinIO recorded to recover an encrypted version's object
// key. Nothing in it is secret without the KMS key (or the client's).
type SSE struct {
	// Kind is "SSE-S3", "SSE-KMS" or "SSE-C".
	Kind string
	// KeyID is the KMS key the data key is sealed under (SSE-S3 and
	// SSE-KMS).
	KeyID string
	// DataKey is the KMS's ciphertext of the data key.
	DataKey []byte
	// IV and SealedKey are the object key's seal.
	IV        [32]byte
	SealedKey [64]byte
	// Context is the SSE-KMS encryption context the client gave (the
	// base64 JSON MinIO stored, "" for none) and ContextMap its pairs.
	Context    string
	ContextMap map[string]string
	// Multipart says each part is its own stream under a part key.
	Multipart bool
}

// maxKMSDataKey bounds the KMS ciphertext of a data key (MinIO's static
// key makes 76 bytes, KES a JSON of a few hundred).
const maxKMSDataKey = 4096

// SSEKeys parses the seal of an encrypted version's object key. It
// returns ErrUnsupported for a seal it does not know (MinIO's pre-2018
// "DARE-SHA256" seal, metadata naming no scheme) and ErrCorrupt for
// malformed values; nil, nil when the version is not encrypted.
func (o *Object) SSEKeys() (*SSE, error) {
	kind, keyID := o.Encryption()
	if kind == "" {
		return nil, nil
	}
	s := &SSE{Kind: kind, KeyID: keyID, Multipart: o.hasSys(MetaEncryptedMP)}
	var sealedName string
	switch kind {
	case "SSE-S3":
		sealedName = metaSealedKeyS3
	case "SSE-KMS":
		sealedName = metaSealedKeyKMS
	case "SSE-C":
		sealedName = metaSealedKeySSEC
	default:
		return nil, unsupportedf("encrypted version naming no known scheme")
	}
	alg, _ := o.sys(metaSealAlgorithm)
	if string(alg) != sealAlgorithm {
		return nil, unsupportedf("object key sealed with %q", truncate(alg))
	}
	iv, ok := o.sys(metaSealIV)
	if !ok {
		return nil, corruptf("encrypted version without its seal IV")
	}
	if err := decodeFixedB64(s.IV[:], iv); err != nil {
		return nil, corruptf("seal IV: %v", err)
	}
	sk, _ := o.sys(sealedName)
	if err := decodeFixedB64(s.SealedKey[:], sk); err != nil {
		return nil, corruptf("sealed object key: %v", err)
	}
	if kind == "SSE-C" {
		return s, nil
	}
	dk, hasDK := o.sys(metaKMSDataKey)
	_, hasID := o.sys(metaKMSKeyID)
	if !hasDK || !hasID || keyID == "" {
		return nil, corruptf("%s version without its KMS key id and data key", kind)
	}
	if len(keyID) > 255 {
		return nil, corruptf("KMS key id of %d bytes", len(keyID))
	}
	if len(dk) > base64.StdEncoding.EncodedLen(maxKMSDataKey) {
		return nil, corruptf("KMS data key of %d bytes", len(dk))
	}
	var err error
	if s.DataKey, err = base64.StdEncoding.DecodeString(string(dk)); err != nil || len(s.DataKey) == 0 {
		return nil, corruptf("KMS data key is not base64")
	}
	if c, ok := o.sys(metaKMSContext); ok {
		if len(c) > 64<<10 {
			return nil, corruptf("KMS context of %d bytes", len(c))
		}
		raw, err := base64.StdEncoding.DecodeString(string(c))
		if err != nil {
			return nil, corruptf("KMS context is not base64")
		}
		if err := json.Unmarshal(raw, &s.ContextMap); err != nil {
			return nil, corruptf("KMS context is not a JSON object of strings")
		}
		s.Context = string(c)
	}
	return s, nil
}

func truncate(b []byte) string {
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

func decodeFixedB64(dst []byte, v []byte) error {
	if len(v) != base64.StdEncoding.EncodedLen(len(dst)) {
		return fmt.Errorf("%d characters, want %d", len(v), base64.StdEncoding.EncodedLen(len(dst)))
	}
	b, err := base64.StdEncoding.DecodeString(string(v))
	if err != nil || len(b) != len(dst) {
		return fmt.Errorf("not base64 of %d bytes", len(dst))
	}
	copy(dst, b)
	return nil
}

// KMSAssociatedData is the associated data MinIO binds the data key of
// bucket/object to: the JSON of its context (the client's SSE-KMS pairs
// plus bucket: "bucket/object", unless the client named the bucket
// itself), keys sorted, escaped as MinIO escapes them (<, > and & as
// \u00XX, control characters as \n, \r, \t or \u00XX, invalid UTF-8 as
// \ufffd, U+2028 and U+2029 escaped).
func (s *SSE) KMSAssociatedData(bucket, object string) []byte {
	c := map[string]string{bucket: path.Join(bucket, object)}
	if s.Kind == "SSE-KMS" {
		for k, v := range s.ContextMap {
			c[k] = v // the client's pair for the bucket name wins
		}
	}
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		jsonEscape(&b, k)
		b.WriteString(`":"`)
		jsonEscape(&b, c[k])
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.Bytes()
}

func jsonEscape(b *bytes.Buffer, s string) {
	const hexd = "0123456789abcdef"
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\\' || c == '"':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b.WriteString(`\u00`)
				b.WriteByte(hexd[c>>4])
				b.WriteByte(hexd[c&0xf])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case r == '\u2028' || r == '\u2029':
			b.WriteString(`\u202`)
			b.WriteByte(hexd[r&0xf])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
}

// UnsealObjectKey recovers the object key from the seal with kek (the
// KMS data key, or the client's key for SSE-C), bound to bucket/object.
// An error wrapping ErrCorrupt says kek, the name or the seal is wrong.
func (s *SSE) UnsealObjectKey(kek []byte, bucket, object string) ([32]byte, error) {
	var key [32]byte
	mac := hmac.New(sha256.New, kek)
	mac.Write(s.IV[:])
	mac.Write([]byte(s.Kind))
	mac.Write([]byte(sealAlgorithm))
	mac.Write([]byte(path.Join(bucket, object)))
	out, err := OpenDARE(nil, s.SealedKey[:], mac.Sum(nil))
	if err != nil || len(out) != 32 {
		return key, corruptf("object key does not unseal (wrong KMS key, or moved from another name)")
	}
	copy(key[:], out)
	return key, nil
}

// OpenChecksums opens the MetaChecksums value of an encrypted version,
// which MinIO stores as a DARE stream under HMAC-SHA256(object key,
// "object-checksum"), and decodes it (nil when there is none).
func (o *Object) OpenChecksums(objectKey [32]byte) ([]Checksum, error) {
	b, ok := o.sys(MetaChecksums)
	if !ok || len(b) == 0 {
		return nil, nil
	}
	mac := hmac.New(sha256.New, objectKey[:])
	mac.Write([]byte("object-checksum"))
	plain, err := OpenDARE(nil, b, mac.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("encrypted checksums: %w", err)
	}
	return ParseChecksums(plain)
}

// PartKey is the key of part number n's stream of a multipart object.
func PartKey(objectKey [32]byte, n int) []byte {
	var id [4]byte
	binary.LittleEndian.PutUint32(id[:], uint32(n))
	mac := hmac.New(sha256.New, objectKey[:])
	mac.Write(id[:])
	return mac.Sum(nil)
}

// ShownETag is the ETag MinIO answers for an encrypted version whose
// stored ETag is etag: a multipart ETag ("hex-N") as stored; a single
// PUT's sealed ETag opened with the object key for SSE-S3 (the MD5 of
// the plaintext), and for SSE-KMS and SSE-C the last 32 hex digits of
// the sealed one. plainMD5 is what the sealed ETag holds: the MD5 of
// the plaintext for SSE-S3; for SSE-KMS and SSE-C a random UUID unless
// the client sent Content-MD5 ("" for a multipart ETag). An error
// wrapping ErrCorrupt when it does not open.
func ShownETag(s *SSE, objectKey [32]byte, etag string) (shown, plainMD5 string, err error) {
	if strings.Contains(etag, "-") {
		return etag, "", nil
	}
	raw, err := hex.DecodeString(etag)
	if err != nil {
		return "", "", corruptf("ETag %q is not hex", truncate([]byte(etag)))
	}
	if len(raw) <= 16 {
		// Not sealed (MinIO seals only a non-empty MD5).
		return etag, etag, nil
	}
	mac := hmac.New(sha256.New, objectKey[:])
	mac.Write([]byte("SSE-etag"))
	md, err := OpenDARE(nil, raw, mac.Sum(nil))
	if err != nil || len(md) != 16 {
		return "", "", corruptf("sealed ETag does not open")
	}
	plainMD5 = hex.EncodeToString(md)
	if s.Kind == "SSE-S3" {
		return plainMD5, plainMD5, nil
	}
	return etag[len(etag)-32:], plainMD5, nil
}

// DARE 2.0 (github.com/minio/sio's format): a stream of packages, each a
// 16-byte header (version 0x20, cipher 0 AES-256-GCM or 1
// ChaCha20-Poly1305, payload length - 1 as 2 bytes little-endian, a
// 12-byte nonce whose first bit flags the final package), the payload
// sealed with the AEAD (associated data: the header's first 4 bytes;
// nonce: the header's with the package's sequence number XORed into its
// last 4 bytes, little-endian), and the 16-byte tag. Every package but
// the final one carries 64 KiB; every package has the first one's nonce
// (and cipher); the stream ends right after the final package; an empty
// stream has no package.
const (
	dareHeader     = 16
	dareTag        = 16
	darePayload    = 64 << 10
	darePackageMax = dareHeader + darePayload + dareTag
)

// DAREEncryptedSize is the size of the DARE stream of n plaintext bytes.
func DAREEncryptedSize(n int64) int64 {
	full := n / darePayload
	size := full * darePackageMax
	if rest := n % darePayload; rest > 0 {
		size += rest + dareHeader + dareTag
	}
	return size
}

// DAREDecryptedSize inverts DAREEncryptedSize; an error for a size no
// stream has.
func DAREDecryptedSize(n int64) (int64, error) {
	if n < 0 {
		return 0, corruptf("negative size")
	}
	full := n / darePackageMax
	size := full * darePayload
	if rest := n % darePackageMax; rest > 0 {
		if rest <= dareHeader+dareTag {
			return 0, corruptf("DARE stream of %d bytes", n)
		}
		size += rest - dareHeader - dareTag
	}
	return size, nil
}

type dareOpener struct {
	key     []byte
	aeads   [2]cipher.AEAD
	ref     [dareHeader]byte
	seq     uint32
	final   bool
	started bool
}

func (d *dareOpener) aead(c byte) (cipher.AEAD, error) {
	if c > 1 {
		return nil, corruptf("DARE cipher %d", c)
	}
	if d.aeads[c] == nil {
		var a cipher.AEAD
		var err error
		if c == 0 {
			var b cipher.Block
			if b, err = aes.NewCipher(d.key); err == nil {
				a, err = cipher.NewGCM(b)
			}
		} else {
			a, err = chacha20poly1305.New(d.key)
		}
		if err != nil {
			return nil, corruptf("DARE key: %v", err)
		}
		d.aeads[c] = a
	}
	return d.aeads[c], nil
}

// open appends the plaintext of one whole package pkg to dst.
func (d *dareOpener) open(dst, pkg []byte) ([]byte, error) {
	if d.final {
		return dst, corruptf("DARE data after the final package")
	}
	if len(pkg) <= dareHeader+dareTag {
		return dst, corruptf("DARE package of %d bytes", len(pkg))
	}
	h := pkg[:dareHeader]
	if h[0] != 0x20 {
		return dst, unsupportedf("DARE version %#x", h[0])
	}
	n := int(binary.LittleEndian.Uint16(h[2:4])) + 1
	if len(pkg) != dareHeader+n+dareTag {
		return dst, corruptf("DARE package of %d bytes says %d", len(pkg), n)
	}
	final := h[4]&0x80 != 0
	if !final && n != darePayload {
		return dst, corruptf("DARE package of %d bytes that is not the final one", n)
	}
	if !d.started {
		copy(d.ref[:], h)
		d.ref[4] &^= 0x80
		d.started = true
	}
	ref := d.ref
	if final {
		ref[4] |= 0x80
	}
	if h[1] != d.ref[1] || subtle.ConstantTimeCompare(h[4:], ref[4:]) != 1 {
		return dst, corruptf("DARE package %d of another stream", d.seq)
	}
	a, err := d.aead(h[1])
	if err != nil {
		return dst, err
	}
	var nonce [12]byte
	copy(nonce[:], h[4:])
	binary.LittleEndian.PutUint32(nonce[8:], binary.LittleEndian.Uint32(nonce[8:])^d.seq)
	out, err := a.Open(dst, nonce[:], pkg[dareHeader:], h[:4])
	if err != nil {
		return dst, corruptf("DARE package %d does not authenticate (wrong key, damaged or reordered)", d.seq)
	}
	d.seq++
	d.final = final
	return out, nil
}

// OpenDARE decrypts a whole DARE 2.0 stream held in memory (a sealed key
// or ETag) with key, appending the plaintext to dst.
func OpenDARE(dst, stream, key []byte) ([]byte, error) {
	d := &dareOpener{key: key}
	for len(stream) > 0 {
		if len(stream) < dareHeader {
			return dst, corruptf("DARE stream cut in a header")
		}
		n := dareHeader + int(binary.LittleEndian.Uint16(stream[2:4])) + 1 + dareTag
		if n > len(stream) {
			return dst, corruptf("DARE stream cut in a package")
		}
		var err error
		if dst, err = d.open(dst, stream[:n]); err != nil {
			return dst, err
		}
		stream = stream[n:]
	}
	if !d.final && d.seq > 0 {
		return dst, corruptf("DARE stream without its final package")
	}
	return dst, nil
}

// DAREReader decrypts a DARE 2.0 stream read from r under key: Read
// returns plaintext that authenticated, and an error wrapping
// ErrCorrupt where a package does not (never unauthenticated bytes),
// where the stream is cut (no final package) or goes on after its final
// package.
type DAREReader struct {
	r    io.Reader
	d    *dareOpener
	buf  []byte // one package
	out  []byte // plaintext not yet returned
	done bool
}

// NewDAREReader reads the DARE stream of r under key.
func NewDAREReader(r io.Reader, key []byte) *DAREReader {
	return &DAREReader{r: r, d: &dareOpener{key: bytes.Clone(key)}, buf: make([]byte, dareHeader)}
}

func (x *DAREReader) Read(p []byte) (int, error) {
	for len(x.out) == 0 {
		if x.done {
			return 0, io.EOF
		}
		if err := x.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, x.out)
	x.out = x.out[n:]
	return n, nil
}

func (x *DAREReader) next() error {
	h := x.buf[:dareHeader]
	got, err := io.ReadFull(x.r, h)
	if got == 0 && errors.Is(err, io.EOF) {
		if x.d.seq > 0 && !x.d.final {
			return corruptf("DARE stream without its final package")
		}
		x.done = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: DARE header: %w", ErrCorrupt, err)
	}
	if x.d.final {
		return corruptf("DARE data after the final package")
	}
	n := int(binary.LittleEndian.Uint16(h[2:4])) + 1
	if cap(x.buf) < dareHeader+n+dareTag {
		// Grown to what the stream's packages need (at most 64 KiB + 32).
		x.buf = append(x.buf[:dareHeader], make([]byte, n+dareTag)...)
	}
	pkg := x.buf[:dareHeader+n+dareTag]
	if _, err := io.ReadFull(x.r, pkg[dareHeader:]); err != nil {
		return fmt.Errorf("%w: DARE package %d cut: %w", ErrCorrupt, x.d.seq, err)
	}
	x.out, err = x.d.open(x.out[:0], pkg)
	if err != nil {
		x.out = nil
		return err
	}
	return nil
}

// PlainSize is the size S3 clients see of an encrypted version: the sum
// of its parts' plaintext sizes, each checked against its stored (DARE)
// size.
func (o *Object) PlainSize() (int64, error) {
	var total int64
	for _, p := range o.Parts {
		n, err := DAREDecryptedSize(p.Size)
		if err != nil {
			return 0, fmt.Errorf("part %d: %w", p.Number, err)
		}
		if p.ActualSize != n {
			return 0, corruptf("part %d holds %d bytes of plaintext, its actual size says %d", p.Number, n, p.ActualSize)
		}
		total += n
	}
	if v, ok := o.sys(MetaActualSize); ok && string(v) != strconv.FormatInt(total, 10) {
		return 0, corruptf("actual size %q, the parts hold %d", truncate(v), total)
	}
	return total, nil
}
