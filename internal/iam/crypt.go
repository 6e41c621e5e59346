package iam

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
)

// keyring holds the keys derived from the store's key material: one
// seals secrets at rest, one seals session tokens, and a check value
// recorded in the document tells, at start, whether the material is the
// one the document was written with.
type keyring struct {
	secrets cipher.AEAD
	tokens  cipher.AEAD
	check   string
}

const hkdfSalt = "shardstore identity store v1"

func newKeyring(material []byte) (*keyring, error) {
	derive := func(info string) ([]byte, error) {
		return hkdf.Key(sha256.New, material, []byte(hkdfSalt), info, 32)
	}
	aead := func(info string) (cipher.AEAD, error) {
		k, err := derive(info)
		if err != nil {
			return nil, err
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		return cipher.NewGCM(block)
	}
	var kr keyring
	var err error
	if kr.secrets, err = aead("secrets"); err != nil {
		return nil, fmt.Errorf("derive secret key: %w", err)
	}
	if kr.tokens, err = aead("session tokens"); err != nil {
		return nil, fmt.Errorf("derive token key: %w", err)
	}
	ck, err := derive("check")
	if err != nil {
		return nil, fmt.Errorf("derive check value: %w", err)
	}
	m := hmac.New(sha256.New, ck)
	m.Write([]byte("shardstore"))
	kr.check = hex.EncodeToString(m.Sum(nil)[:12])
	return &kr, nil
}

// seal encrypts plain with aead, binding it to context (an access key:
// a sealed secret moved to another key does not open).
func seal(aead cipher.AEAD, plain []byte, context string) string {
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("iam: no randomness: " + err.Error()) // crypto/rand never fails on Linux
	}
	out := aead.Seal(nonce, nonce, plain, []byte(context))
	return base64.RawURLEncoding.EncodeToString(out)
}

var errUnseal = errors.New("cannot decrypt: wrong key or damaged value")

func unseal(aead cipher.AEAD, sealed, context string) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, errUnseal
	}
	n := aead.NonceSize()
	plain, err := aead.Open(nil, raw[:n], raw[n:], []byte(context))
	if err != nil {
		return nil, errUnseal
	}
	return plain, nil
}

// randomString returns n characters from alphabet, uniformly.
func randomString(n int, alphabet string) string {
	out := make([]byte, n)
	buf := make([]byte, 1)
	for i := 0; i < n; {
		if _, err := rand.Read(buf); err != nil {
			panic("iam: no randomness: " + err.Error())
		}
		// Reject bytes past the largest multiple of len(alphabet): no bias.
		if int(buf[0]) >= 256-256%len(alphabet) {
			continue
		}
		out[i] = alphabet[int(buf[0])%len(alphabet)]
		i++
	}
	return string(out)
}

const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	secretChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)

// newAccessKey returns a fresh access key id: prefix and 16 characters,
// the shape of AWS's (AKIA... for long-term keys, ASIA... for sessions).
func newAccessKey(prefix string) string { return prefix + randomString(16, upperDigits) }

// newSecret returns a fresh 40-character secret key.
func newSecret() string { return randomString(40, secretChars) }
