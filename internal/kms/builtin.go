package kms

import (
	"bufio"
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Builtin ciphertext, format 1. Integers are big-endian.
//
//	offset  size  field
//	0       1     format, 0x01
//	1       1     n, the length of the key name (1..255)
//	2       n     key name
//	2+n     4     key version (1, 2, 3…)
//	6+n     24    random nonce: bytes 0..11 select the sealing key,
//	              bytes 12..23 are the AES-GCM nonce
//	30+n    48    AES-256-GCM sealing of the 32-byte data key (32 bytes
//	              of ciphertext, 16 of tag)
//
// 78+n bytes in all. The sealing key is
// HKDF-SHA256-Expand(PRK, builtinLabel ‖ nonce[0:12], 32) where
// PRK = HKDF-SHA256-Extract(salt = builtinLabel, secret): the secret itself
// never keys AES, and a fresh sealing key per ciphertext removes the 2^32
// seals a single GCM key allows with random nonces.
//
// The associated data is bytes 0..6+n (format, name, version) followed by
// the Context encoded canonically: a 4-byte count of pairs, then for each
// pair, sorted by key, a 4-byte length and the key, a 4-byte length and
// the value. A ciphertext therefore unseals only under the key, version
// and Context it was sealed with.
const (
	builtinFormat    = 0x01
	builtinLabel     = "shardstore kms builtin v1 sealing key"
	builtinNonceLen  = 24
	builtinSealedLen = 32 + 16
	dataKeyLen       = 32
)

// maxSecretKeyInput bounds what ParseSecretKey reads: a 255-byte name, a
// colon and 44 characters of base64 fit many times over; more is a
// mistake (a whole file in one variable), not a key.
const maxSecretKeyInput = 1024

// SecretKey is one named 32-byte secret key, as ParseSecretKey reads it.
// The secret is never printed: String, GoString and Format show the name
// only. The zero value is not a key.
type SecretKey struct {
	name   string
	secret secretBytes
}

// secretBytes holds key material where fmt cannot print it: fmt shows a
// func as an address under every verb, while a pointer or slice in an
// unexported field of an enclosing struct is dereferenced and printed by
// %v or a bad verb (%s, %q) of that struct, Format methods or not.
type secretBytes func() []byte

func newSecretBytes(b []byte) secretBytes {
	c := bytes.Clone(b)
	return func() []byte { return c }
}

// Name is the key's name.
func (k SecretKey) Name() string { return k.name }

// String names the key and hides the secret.
func (k SecretKey) String() string {
	return "kms.SecretKey{" + strconv.Quote(k.name) + ", secret: <redacted>}"
}

// GoString is String, so %#v does not print the secret either.
func (k SecretKey) GoString() string { return k.String() }

// Format prints String for every verb (%x and %d included).
func (k SecretKey) Format(f fmt.State, verb rune) { formatRedacted(f, verb, k.String()) }

func formatRedacted(f fmt.State, verb rune, s string) {
	if verb == 'q' {
		s = strconv.Quote(s)
	}
	_, _ = f.Write([]byte(s))
}

// ParseSecretKey reads a key in MinIO's form name:base64, the base64
// (standard alphabet, padded) of exactly 32 bytes, as
// `echo "my-key:$(head -c 32 /dev/urandom | base64)"` makes one. Errors
// say what is wrong and where, and never repeat any of s.
func ParseSecretKey(s string) (SecretKey, error) {
	if len(s) > maxSecretKeyInput {
		return SecretKey{}, fmt.Errorf("kms: secret key is %d bytes long; want name:base64 (at most %d bytes)", len(s), maxSecretKeyInput)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return SecretKey{}, errors.New("kms: secret key is empty; want name:base64")
	}
	// The last colon splits, since base64 has none: "a:b:secret" is then
	// refused for its name, not read as name "a" with a bad secret.
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return SecretKey{}, errors.New("kms: secret key has no ':'; want name:base64")
	}
	name, b64 := s[:i], s[i+1:]
	if p := keyNameProblem(name); p != "" {
		return SecretKey{}, fmt.Errorf("kms: secret key name (before the ':') is invalid: %s", p)
	}
	if b64 == "" {
		return SecretKey{}, errors.New("kms: secret key has nothing after the ':'; want the base64 of 32 bytes")
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		var ce base64.CorruptInputError
		if errors.As(err, &ce) {
			return SecretKey{}, fmt.Errorf("kms: secret key is not valid base64 (standard alphabet, padded): bad data at byte %d after the ':'", int64(ce))
		}
		return SecretKey{}, errors.New("kms: secret key is not valid base64 (standard alphabet, padded)")
	}
	defer clear(raw)
	if len(raw) != 32 {
		return SecretKey{}, fmt.Errorf("kms: secret key decodes to %d bytes; want exactly 32 (make one with: head -c 32 /dev/urandom | base64)", len(raw))
	}
	var zero [32]byte
	if subtle.ConstantTimeCompare(raw, zero[:]) == 1 {
		return SecretKey{}, errors.New("kms: secret key is all zero bytes; make a random one with: head -c 32 /dev/urandom | base64")
	}
	return SecretKey{name: name, secret: newSecretBytes(raw)}, nil
}

// Builtin is a KMS whose key encryption keys are secret keys held in
// memory. A name may have several versions: the newest seals, every
// version unseals, so appending a new secret under an existing name to the
// key file rotates that key (Rewrap moves old ciphertexts over). It is
// immutable after construction, so safe for concurrent use.
type Builtin struct {
	defaultKey string
	keys       map[string][]*builtinVersion // versions[i] is version i+1
}

// builtinVersion holds one version's HKDF pseudorandom key (never the
// secret itself).
type builtinVersion struct {
	prk secretBytes
	// secret is the key itself, for opening the data keys MinIO sealed
	// under it (DecryptMinIO, minio.go), which MinIO derives from the
	// secret directly.
	secret secretBytes
}

var _ KMS = (*Builtin)(nil)

// NewBuiltin makes a Builtin from keys in order: a name's first key is its
// version 1, the next one with the same name version 2, and so on. The
// default key is the first key's name.
func NewBuiltin(keys ...SecretKey) (*Builtin, error) {
	if len(keys) == 0 {
		return nil, errors.New("kms: builtin KMS needs at least one secret key")
	}
	b := &Builtin{defaultKey: keys[0].name, keys: make(map[string][]*builtinVersion)}
	seen := make(map[string][][]byte)
	for i, k := range keys {
		if k.secret == nil || keyNameProblem(k.name) != "" {
			return nil, fmt.Errorf("kms: secret key %d is not a key (make keys with ParseSecretKey)", i)
		}
		// The same secret twice under one name is refused: versions are
		// positions, and a duplicate someone later deletes would shift
		// every version after it.
		for v, s := range seen[k.name] {
			if subtle.ConstantTimeCompare(s, k.secret()) == 1 {
				return nil, fmt.Errorf("kms: secret key %d repeats version %d of key %s; list each version once", i, v+1, quoteName(k.name))
			}
		}
		seen[k.name] = append(seen[k.name], k.secret())
		prk, err := hkdf.Extract(sha256.New, k.secret(), []byte(builtinLabel))
		if err != nil {
			return nil, fmt.Errorf("kms: deriving builtin key %s: %w", quoteName(k.name), err)
		}
		b.keys[k.name] = append(b.keys[k.name], &builtinVersion{prk: newSecretBytes(prk), secret: newSecretBytes(k.secret())})
		clear(prk)
	}
	return b, nil
}

// LoadBuiltin reads secret keys from the environment, in this order:
//
//   - SHARDSTORE_KMS_SECRET_KEY, else MINIO_KMS_SECRET_KEY: one name:base64;
//   - SHARDSTORE_KMS_SECRET_KEY_FILE, else MINIO_KMS_SECRET_KEY_FILE: a file
//     (read with readFile) of one name:base64 per line; blank lines and
//     lines starting with '#' are skipped.
//
// Keys are versioned in that order (see NewBuiltin), so rotating means
// appending a line; removing or reordering lines renumbers versions and
// strands the ciphertexts sealed under them. The default key is the
// environment key's name, else the file's first. ok is false, with a nil
// error, when neither variable is set.
func LoadBuiltin(env func(string) string, readFile func(string) ([]byte, error)) (b *Builtin, ok bool, err error) {
	var keys []SecretKey
	envVar, value := firstSet(env, "SHARDSTORE_KMS_SECRET_KEY", "MINIO_KMS_SECRET_KEY")
	if value != "" {
		k, err := ParseSecretKey(value)
		if err != nil {
			return nil, true, fmt.Errorf("%s: %w", envVar, err)
		}
		keys = append(keys, k)
	}
	fileVar, path := firstSet(env, "SHARDSTORE_KMS_SECRET_KEY_FILE", "MINIO_KMS_SECRET_KEY_FILE")
	if path != "" {
		data, err := readFile(path)
		if err != nil {
			return nil, true, fmt.Errorf("kms: %s: %w", fileVar, err)
		}
		fileKeys, err := parseKeyFile(data)
		clear(data)
		if err != nil {
			return nil, true, fmt.Errorf("%s %s: %w", fileVar, path, err)
		}
		if len(fileKeys) == 0 {
			return nil, true, fmt.Errorf("kms: %s %s holds no keys", fileVar, path)
		}
		keys = append(keys, fileKeys...)
	}
	if len(keys) == 0 {
		return nil, false, nil
	}
	b, err = NewBuiltin(keys...)
	return b, true, err
}

// firstSet returns the first of names set to a non-blank value.
func firstSet(env func(string) string, names ...string) (name, value string) {
	for _, n := range names {
		if v := strings.TrimSpace(env(n)); v != "" {
			return n, v
		}
	}
	return "", ""
}

func parseKeyFile(data []byte) ([]SecretKey, error) {
	var keys []SecretKey
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<10)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := ParseSecretKey(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		keys = append(keys, k)
	}
	if err := sc.Err(); err != nil {
		// bufio's own error (a line past 64 KiB); it does not quote data.
		return nil, fmt.Errorf("kms: reading key file: %w", err)
	}
	return keys, nil
}

// Kind is "builtin".
func (b *Builtin) Kind() string { return "builtin" }

// DefaultKey is the environment key's name, else the key file's first.
func (b *Builtin) DefaultKey() string { return b.defaultKey }

// Versions reports how many versions key name has (0: no such key).
func (b *Builtin) Versions(name string) int { return len(b.keys[name]) }

// String lists key names and version counts, never key material.
func (b *Builtin) String() string {
	names := make([]string, 0, len(b.keys))
	for n := range b.keys {
		names = append(names, n)
	}
	slices.Sort(names)
	var s strings.Builder
	s.WriteString("kms.Builtin{default: ")
	s.WriteString(strconv.Quote(b.defaultKey))
	s.WriteString(", keys:")
	for _, n := range names {
		plural := "s"
		if len(b.keys[n]) == 1 {
			plural = ""
		}
		fmt.Fprintf(&s, " %s (%d version%s)", strconv.Quote(n), len(b.keys[n]), plural)
	}
	s.WriteString("}")
	return s.String()
}

// GoString is String.
func (b *Builtin) GoString() string { return b.String() }

// Format prints String for every verb.
func (b *Builtin) Format(f fmt.State, verb rune) { formatRedacted(f, verb, b.String()) }

func (b *Builtin) versions(keyID string) ([]*builtinVersion, error) {
	vs := b.keys[keyID]
	if len(vs) == 0 {
		return nil, fmt.Errorf("%w: no builtin key named %s", ErrKeyNotFound, quoteName(keyID))
	}
	return vs, nil
}

// GenerateKey returns a random data key sealed under keyID's newest
// version and bound to c.
func (b *Builtin) GenerateKey(_ context.Context, keyID string, c Context) (DataKey, error) {
	vs, err := b.versions(keyID)
	if err != nil {
		return DataKey{}, err
	}
	plain := make([]byte, dataKeyLen)
	_, _ = rand.Read(plain) // crypto/rand.Read never fails (it crashes the program instead)
	ct, err := seal(keyID, uint32(len(vs)), vs[len(vs)-1], plain, c)
	if err != nil {
		return DataKey{}, err
	}
	return DataKey{KeyID: keyID, Plaintext: plain, Ciphertext: ct}, nil
}

// Decrypt unseals a ciphertext sealed under any version of keyID with the
// same Context.
func (b *Builtin) Decrypt(_ context.Context, keyID string, ciphertext []byte, c Context) ([]byte, error) {
	vs, err := b.versions(keyID)
	if err != nil {
		return nil, err
	}
	return open(keyID, vs, ciphertext, c)
}

// Rewrap unseals ciphertext and seals its data key again under keyID's
// newest version; the data key never leaves this function.
func (b *Builtin) Rewrap(_ context.Context, keyID string, ciphertext []byte, c Context) ([]byte, error) {
	vs, err := b.versions(keyID)
	if err != nil {
		return nil, err
	}
	plain, err := open(keyID, vs, ciphertext, c)
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	if _, v, ok := BuiltinCiphertextVersion(ciphertext); ok && v == uint32(len(vs)) {
		return ciphertext, nil // already the newest version (and it opens)
	}
	return seal(keyID, uint32(len(vs)), vs[len(vs)-1], plain, c)
}

// CreateKey is refused: a builtin key exists because its secret is in the
// key file (or environment), and a key made at run time would be lost at
// the next restart together with every object sealed under it.
func (b *Builtin) CreateKey(_ context.Context, keyID string) error {
	line := "NAME:<base64 of 32 random bytes>"
	if keyNameProblem(keyID) == "" {
		line = keyID + ":<base64 of 32 random bytes>"
	}
	return fmt.Errorf("%w: builtin keys are not created at run time; add a line %s to the key file (SHARDSTORE_KMS_SECRET_KEY_FILE) and restart", ErrNotSupported, line)
}

// Status is always OK: the keys are in memory.
func (b *Builtin) Status(context.Context) Status {
	return Status{Kind: b.Kind(), DefaultKey: b.defaultKey, OK: true}
}

// BuiltinCiphertextVersion reads the key name and version a builtin
// ciphertext names, without unsealing it (for tools that report which
// objects still need a Rewrap). ok is false when ct is not one.
func BuiltinCiphertextVersion(ct []byte) (keyID string, version uint32, ok bool) {
	h, ok := parseBuiltin(ct)
	if !ok {
		return "", 0, false
	}
	return h.name, h.version, true
}

type builtinCiphertext struct {
	header  []byte // format, name, version: the start of the associated data
	name    string
	version uint32
	nonce   []byte
	sealed  []byte
}

func parseBuiltin(ct []byte) (builtinCiphertext, bool) {
	if len(ct) < 2 || ct[0] != builtinFormat {
		return builtinCiphertext{}, false
	}
	n := int(ct[1])
	if n == 0 || len(ct) != 2+n+4+builtinNonceLen+builtinSealedLen {
		return builtinCiphertext{}, false
	}
	name := string(ct[2 : 2+n])
	if keyNameProblem(name) != "" {
		return builtinCiphertext{}, false
	}
	v := binary.BigEndian.Uint32(ct[2+n:])
	if v == 0 {
		return builtinCiphertext{}, false
	}
	h := 2 + n + 4
	return builtinCiphertext{
		header:  ct[:h],
		name:    name,
		version: v,
		nonce:   ct[h : h+builtinNonceLen],
		sealed:  ct[h+builtinNonceLen:],
	}, true
}

func seal(name string, version uint32, kv *builtinVersion, plain []byte, c Context) ([]byte, error) {
	if len(plain) != dataKeyLen {
		return nil, fmt.Errorf("kms: data key is %d bytes, want %d", len(plain), dataKeyLen)
	}
	ct := make([]byte, 0, 2+len(name)+4+builtinNonceLen+builtinSealedLen)
	ct = append(ct, builtinFormat, byte(len(name)))
	ct = append(ct, name...)
	ct = binary.BigEndian.AppendUint32(ct, version)
	header := len(ct)
	nonce := make([]byte, builtinNonceLen)
	_, _ = rand.Read(nonce)
	ct = append(ct, nonce...)
	aead, err := kv.aead(nonce)
	if err != nil {
		return nil, err
	}
	return aead.Seal(ct, nonce[12:], plain, associatedData(ct[:header], c)), nil
}

func open(keyID string, vs []*builtinVersion, ct []byte, c Context) ([]byte, error) {
	p, ok := parseBuiltin(ct)
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: not a builtin ciphertext (malformed or truncated)", ErrDecrypt)
	case p.name != keyID:
		return nil, fmt.Errorf("%w: ciphertext was sealed under a key other than %s", ErrDecrypt, quoteName(keyID))
	case int64(p.version) > int64(len(vs)):
		return nil, fmt.Errorf("%w: builtin key %s has no version %d (it has %d)", ErrKeyNotFound, quoteName(keyID), p.version, len(vs))
	}
	aead, err := vs[p.version-1].aead(p.nonce)
	if err != nil {
		return nil, err
	}
	plain, err := aead.Open(nil, p.nonce[12:], p.sealed, associatedData(p.header, c))
	if err != nil {
		return nil, fmt.Errorf("%w: builtin key %s version %d: wrong key, context or tampered ciphertext", ErrDecrypt, quoteName(keyID), p.version)
	}
	return plain, nil
}

// aead is the AES-256-GCM sealing the ciphertext with this nonce.
func (kv *builtinVersion) aead(nonce []byte) (cipher.AEAD, error) {
	key, err := hkdf.Expand(sha256.New, kv.prk(), builtinLabel+string(nonce[:12]), 32)
	if err != nil {
		return nil, fmt.Errorf("kms: deriving sealing key: %w", err)
	}
	defer clear(key)
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("kms: sealing key: %w", err)
	}
	return cipher.NewGCM(block)
}

// associatedData is header followed by c's canonical encoding: sorted and
// length-prefixed, so {"a":"bc"} and {"ab":"c"} differ and map order does
// not matter.
func associatedData(header []byte, c Context) []byte {
	keys := make([]string, 0, len(c))
	size := len(header) + 4
	for k, v := range c {
		keys = append(keys, k)
		size += 8 + len(k) + len(v)
	}
	slices.Sort(keys)
	ad := make([]byte, 0, size)
	ad = append(ad, header...)
	ad = binary.BigEndian.AppendUint32(ad, uint32(len(keys)))
	for _, k := range keys {
		ad = binary.BigEndian.AppendUint32(ad, uint32(len(k)))
		ad = append(ad, k...)
		ad = binary.BigEndian.AppendUint32(ad, uint32(len(c[k])))
		ad = append(ad, c[k]...)
	}
	return ad
}
