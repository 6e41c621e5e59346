package kms

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
)

// Data keys MinIO sealed under its static key (MINIO_KMS_SECRET_KEY,
// name:base64: the same form as a builtin key here), for adopting MinIO's
// encrypted objects (internal/migrate). Learnt from MinIO's public
// source (internal/kms/secret-key.go), nothing copied. A ciphertext is
// either
//
//   - binary: the AES-256-GCM sealed data key and tag, then a 16-byte IV
//     and a 12-byte nonce; the sealing key is HMAC-SHA256(secret, IV);
//   - or a JSON object {"aead": "AES-256-GCM-HMAC-SHA-256" or
//     "ChaCha20Poly1305", "iv", "nonce", "bytes"} (base64 values; the
//     form KES wrote, which MinIO's static key also opens): for ChaCha20
//     the sealing key is HChaCha20(secret, IV).
//
// The associated data is the JSON text of MinIO's context (the caller
// makes it: minioformat.SSE.KMSAssociatedData).

const (
	minioIVLen    = 16
	minioNonceLen = 12
	// A data key of 32 bytes: 48 sealed, at most a few hundred in JSON.
	maxMinIOCiphertext = 4096
)

// DecryptMinIO opens a data key MinIO sealed under the static key keyID
// (any of its versions here). ErrKeyNotFound when no key has that name,
// ErrDecrypt when no version opens it (another secret, another context,
// damaged). The key material never appears in an error.
func (b *Builtin) DecryptMinIO(keyID string, ciphertext, associatedData []byte) ([]byte, error) {
	vs, err := b.versions(keyID)
	if err != nil {
		return nil, err
	}
	if len(ciphertext) > maxMinIOCiphertext {
		return nil, fmt.Errorf("%w: MinIO data key ciphertext of %d bytes", ErrDecrypt, len(ciphertext))
	}
	chacha := false
	sealed, iv, nonce := ciphertext, []byte(nil), []byte(nil)
	if n := len(ciphertext); n > 1 && ciphertext[0] == '{' && ciphertext[n-1] == '}' {
		var j struct {
			AEAD  string `json:"aead"`
			IV    []byte `json:"iv"`
			Nonce []byte `json:"nonce"`
			Bytes []byte `json:"bytes"`
		}
		if json.Unmarshal(ciphertext, &j) == nil {
			switch j.AEAD {
			case "AES-256-GCM-HMAC-SHA-256":
			case "ChaCha20Poly1305":
				chacha = true
			default:
				return nil, fmt.Errorf("%w: MinIO data key sealed with an unknown algorithm", ErrDecrypt)
			}
			sealed, iv, nonce = j.Bytes, j.IV, j.Nonce
		}
		// A binary ciphertext may happen to start with '{' and end with
		// '}': MinIO reads it as binary when it is not this JSON.
	}
	if iv == nil {
		if len(sealed) < minioIVLen+minioNonceLen {
			return nil, fmt.Errorf("%w: MinIO data key ciphertext of %d bytes", ErrDecrypt, len(sealed))
		}
		rest := sealed[len(sealed)-minioIVLen-minioNonceLen:]
		sealed = sealed[:len(sealed)-minioIVLen-minioNonceLen]
		iv, nonce = rest[:minioIVLen], rest[minioIVLen:]
	}
	if len(iv) != minioIVLen || len(nonce) != minioNonceLen {
		return nil, fmt.Errorf("%w: MinIO data key with an IV of %d bytes and a nonce of %d", ErrDecrypt, len(iv), len(nonce))
	}
	for i := len(vs) - 1; i >= 0; i-- {
		secret := vs[i].secret()
		var aead cipher.AEAD
		if chacha {
			k, err := chacha20.HChaCha20(secret, iv)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrDecrypt, err)
			}
			if aead, err = chacha20poly1305.New(k); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrDecrypt, err)
			}
		} else {
			m := hmac.New(sha256.New, secret)
			m.Write(iv)
			blk, err := aes.NewCipher(m.Sum(nil))
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrDecrypt, err)
			}
			if aead, err = cipher.NewGCM(blk); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrDecrypt, err)
			}
		}
		if plain, err := aead.Open(nil, nonce, sealed, associatedData); err == nil {
			return plain, nil
		}
	}
	return nil, fmt.Errorf("%w: MinIO data key under %s", ErrDecrypt, quoteName(keyID))
}
