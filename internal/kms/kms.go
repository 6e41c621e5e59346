// Package kms seals and unseals the data keys that encrypt objects at
// rest (envelope encryption): a key encryption key never leaves its key
// server; shardstore asks it for a fresh data key (plaintext and sealed
// ciphertext), keeps only the ciphertext beside the object, and asks it
// to unseal that ciphertext when the object is read.
//
// Two implementations: Builtin, from secret keys given by file or
// environment (MinIO's MINIO_KMS_SECRET_KEY form name:base64; LoadBuiltin),
// and Vault, a client of the HashiCorp Vault transit API (which OpenBao
// serves too; LoadVaultConfig, NewVault). Both satisfy KMS and pass the
// same conformance tests (kms_test.go). Counting wraps either and counts
// calls and failures per operation for the metrics.
//
// Builtin binds Context to its ciphertexts; Vault does not (transit binds
// context only for derived keys), so callers that need a ciphertext tied
// to one object must bind that themselves (associated data of their own).
//
// Nothing here prints a secret: errors, String and %v of every value name
// keys, endpoints and operations, never key material or tokens.
package kms

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// KMS is a key server. Implementations are safe for concurrent use.
type KMS interface {
	// Kind names the implementation ("builtin", "vault").
	Kind() string
	// DefaultKey is the key used when a request names none (SSE-S3, and
	// SSE-KMS without a key id).
	DefaultKey() string
	// GenerateKey returns a new random 32-byte data key and its
	// ciphertext sealed under the newest version of keyID; ErrKeyNotFound
	// when keyID does not exist. Context is bound to the ciphertext
	// where the server supports it (Decrypt must be given the same).
	GenerateKey(ctx context.Context, keyID string, context Context) (DataKey, error)
	// Decrypt unseals a ciphertext GenerateKey or Rewrap made under any
	// version of keyID. ErrDecrypt when the ciphertext or context is
	// wrong, ErrKeyNotFound when the key (version) is gone.
	Decrypt(ctx context.Context, keyID string, ciphertext []byte, context Context) ([]byte, error)
	// Rewrap re-seals ciphertext under the newest version of keyID
	// without revealing the data key to the caller. A ciphertext sealed
	// under the newest version already comes back unchanged (the same
	// bytes), so a caller can tell what a rewrap changed.
	Rewrap(ctx context.Context, keyID string, ciphertext []byte, context Context) ([]byte, error)
	// CreateKey makes a new key (SSE-KMS with a key id that does not
	// exist yet is refused; operators create keys with
	// `shardstore admin kms key create`). ErrKeyExists if present.
	CreateKey(ctx context.Context, keyID string) error
	// Status reports whether the server answers and about its default
	// key, without revealing secrets.
	Status(ctx context.Context) Status
}

// Context is associated data bound to a sealed data key (for example the
// bucket and object name), so a ciphertext moved to another object does
// not unseal.
type Context map[string]string

// DataKey is a fresh data key: Plaintext is used and forgotten, Ciphertext
// is stored.
type DataKey struct {
	KeyID      string
	Plaintext  []byte
	Ciphertext []byte
}

// Status is a KMS's health as `admin status` and the metrics show it.
type Status struct {
	Kind       string        `json:"kind"`
	Endpoint   string        `json:"endpoint,omitempty"`
	DefaultKey string        `json:"defaultKey"`
	OK         bool          `json:"ok"`
	Error      string        `json:"error,omitempty"`
	Latency    time.Duration `json:"latency"`
}

var (
	// ErrKeyNotFound: the named key (or key version) does not exist.
	ErrKeyNotFound = errors.New("kms: key not found")
	// ErrKeyExists: CreateKey of a key that exists.
	ErrKeyExists = errors.New("kms: key already exists")
	// ErrDecrypt: a ciphertext that does not unseal (tampered, wrong
	// key, wrong context).
	ErrDecrypt = errors.New("kms: ciphertext does not unseal")
	// ErrUnavailable: the key server cannot be reached or fails; the
	// request may succeed later. S3 answers 503.
	ErrUnavailable = errors.New("kms: key server unavailable")
	// ErrNotSupported: the implementation cannot do this (CreateKey on
	// Builtin, whose keys come from the key file).
	ErrNotSupported = errors.New("kms: operation not supported")
)

// maxKeyNameLen bounds key names; Builtin stores the name in each
// ciphertext behind a one-byte length.
const maxKeyNameLen = 255

// CheckKeyName reports whether name can name a key: 1 to 255 ASCII
// letters, digits, '-', '_' and '.', starting with a letter or digit.
// Names become URL path segments of the Vault API, so this is what stops
// a key id from a request reaching another path ("../sys/seal",
// "k?version=1"); Builtin keeps the same rule so names are portable.
func CheckKeyName(name string) error {
	if p := keyNameProblem(name); p != "" {
		return fmt.Errorf("kms: invalid key name %s: %s", quoteName(name), p)
	}
	return nil
}

// keyNameProblem says what is wrong with name without repeating it (the
// secret-key parser must not echo its input), or "" when it is fine.
func keyNameProblem(name string) string {
	switch {
	case name == "":
		return "it is empty"
	case len(name) > maxKeyNameLen:
		return fmt.Sprintf("it is %d bytes long, at most %d are allowed", len(name), maxKeyNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if i == 0 && !alnum {
			return "it must start with a letter or digit"
		}
		if !alnum && c != '-' && c != '_' && c != '.' {
			return fmt.Sprintf("byte %d is not a letter, digit, '-', '_' or '.'", i)
		}
	}
	return ""
}

// quoteName quotes a (possibly hostile) name for an error message: Go
// syntax, so control characters cannot forge log lines, and cut short so
// a megabyte of key id does not become a megabyte of log.
func quoteName(name string) string {
	const max = 64
	if len(name) > max {
		return strconv.Quote(name[:max]) + "…"
	}
	return strconv.Quote(name)
}
