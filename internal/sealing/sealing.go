// Package sealing keeps an encrypted object's key: it makes the random
// object key of a new version and seals it for the scheme the client
// chose (SSE-S3 and SSE-KMS under a data key from the KMS, SSE-C under a
// key derived from the customer's), records what unsealing needs in the
// version's sealed map (the engine stores it as it is), and recovers the
// key from that map for a read. Rewrap re-seals a map's KMS data key
// under the newest KMS key version without touching object data.
//
// The sealed map is the on-disk contract; its keys are the constants
// below. Nothing in it is secret on its own: the object key is sealed,
// the data key is the KMS's ciphertext, and an SSE-C key is represented
// only by a salted HMAC.
package sealing

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shardstore/shardstore/internal/kms"
	"github.com/shardstore/shardstore/internal/sse"
)

// The schemes, as recorded under Scheme.
const (
	SchemeS3  = "SSE-S3"
	SchemeKMS = "SSE-KMS"
	SchemeC   = "SSE-C"
)

// The keys of a sealed map.
const (
	Scheme         = "scheme"           // SchemeS3, SchemeKMS or SchemeC
	SealedKey      = "sealed-key"       // base64 of sse.SealKey's output
	KMSKey         = "kms-key-id"       // the KMS key the data key is sealed under
	KMSDataKey     = "kms-data-key"     // base64 of the KMS ciphertext of the data key
	KMSContext     = "kms-context"      // the client's encryption context (base64 JSON, as sent)
	BucketKey      = "bucket-key"       // "true" when the client asked for an S3 bucket key
	SSECSalt       = "ssec-salt"        // base64 salt of the customer key's fingerprint
	SSECFinger     = "ssec-fingerprint" // base64 sse.KeyFingerprint of the customer key
	contextARNName = "aws:s3:arn"
)

// Errors of Unseal and CheckCustomerKey; KMS failures come wrapped as
// the kms package's errors.
var (
	// ErrCustomerKeyRequired: an SSE-C version read without a key.
	ErrCustomerKeyRequired = errors.New("sealing: the object is encrypted with a customer key, which the request must provide")
	// ErrCustomerKeyWrong: a customer key that is not the version's.
	ErrCustomerKeyWrong = errors.New("sealing: the customer key does not match the object's")
	// ErrNotApplicable: a customer key given for a version without one.
	ErrNotApplicable = errors.New("sealing: the object is not encrypted with a customer key")
	// ErrNoKMS: an SSE-S3/SSE-KMS version or request without a KMS.
	ErrNoKMS = errors.New("sealing: no KMS is configured")
	// ErrDamaged: a sealed map that cannot be what this package wrote.
	ErrDamaged = errors.New("sealing: damaged sealed map")
)

// Request is what a client asked for a new version.
type Request struct {
	Scheme string // SchemeS3, SchemeKMS or SchemeC
	// KMSKey is the SSE-KMS key ("" = the KMS's default key).
	KMSKey string
	// KMSContext is the client's encryption context (base64 JSON).
	KMSContext string
	BucketKey  bool
	// CustomerKey is the SSE-C key (32 bytes).
	CustomerKey []byte
}

// Keys seals and unseals object keys with a KMS (nil: SSE-C only).
type Keys struct{ KMS kms.KMS }

// NewKey makes the object key of a new version of bucket/key, sealed as
// req asks. hideETag says the scheme's ETags are not plaintext MD5s.
func (k Keys) NewKey(ctx context.Context, bucket, key string, req Request) (objectKey []byte, sealed map[string]string, hideETag bool, err error) {
	return k.SealGiven(ctx, bucket, key, req, sse.NewKey())
}

// SealGiven is NewKey for an object key the caller made (32 bytes, as
// secret and as unique per version as NewKey's): an adoption that derives
// it from the source's key, so that a resumed copy encrypts alike.
func (k Keys) SealGiven(ctx context.Context, bucket, key string, req Request, objectKey []byte) (_ []byte, sealed map[string]string, hideETag bool, err error) {
	if len(objectKey) != sse.KeySize {
		return nil, nil, false, fmt.Errorf("sealing: object key of %d bytes", len(objectKey))
	}
	sealed = map[string]string{Scheme: req.Scheme}
	var kek []byte
	switch req.Scheme {
	case SchemeC:
		if len(req.CustomerKey) != sse.KeySize {
			return nil, nil, false, fmt.Errorf("sealing: customer key of %d bytes", len(req.CustomerKey))
		}
		salt := make([]byte, 32)
		if _, err := rand.Read(salt); err != nil {
			return nil, nil, false, err
		}
		kek = sse.CustomerKEK(req.CustomerKey)
		sealed[SSECSalt] = base64.StdEncoding.EncodeToString(salt)
		sealed[SSECFinger] = base64.StdEncoding.EncodeToString(sse.KeyFingerprint(req.CustomerKey, salt))
		hideETag = true
	case SchemeS3, SchemeKMS:
		if k.KMS == nil {
			return nil, nil, false, ErrNoKMS
		}
		keyID := req.KMSKey
		if keyID == "" {
			keyID = k.KMS.DefaultKey()
		}
		dk, err := k.KMS.GenerateKey(ctx, keyID, Context(bucket, key, req.KMSContext))
		if err != nil {
			return nil, nil, false, fmt.Errorf("new data key under %q: %w", keyID, err)
		}
		kek = dk.Plaintext
		sealed[KMSKey] = keyID
		sealed[KMSDataKey] = base64.StdEncoding.EncodeToString(dk.Ciphertext)
		if req.KMSContext != "" {
			sealed[KMSContext] = req.KMSContext
		}
		if req.BucketKey {
			sealed[BucketKey] = "true"
		}
		hideETag = req.Scheme == SchemeKMS
	default:
		return nil, nil, false, fmt.Errorf("sealing: unknown scheme %q", req.Scheme)
	}
	s, err := sse.SealKey(kek, objectKey, sealContext(req.Scheme, bucket, key))
	if err != nil {
		return nil, nil, false, err
	}
	sealed[SealedKey] = base64.StdEncoding.EncodeToString(s)
	return objectKey, sealed, hideETag, nil
}

// CheckCustomerKey checks a request's customer key (nil: none given)
// against a version's sealed map without unsealing anything.
func CheckCustomerKey(sealed map[string]string, customerKey []byte) error {
	if sealed[Scheme] != SchemeC {
		if customerKey != nil {
			return ErrNotApplicable
		}
		return nil
	}
	if customerKey == nil {
		return ErrCustomerKeyRequired
	}
	salt, err1 := base64.StdEncoding.DecodeString(sealed[SSECSalt])
	finger, err2 := base64.StdEncoding.DecodeString(sealed[SSECFinger])
	if err1 != nil || err2 != nil || len(finger) == 0 {
		return fmt.Errorf("%w: SSE-C without a key fingerprint", ErrDamaged)
	}
	if !sse.FingerprintMatches(customerKey, salt, finger) {
		return ErrCustomerKeyWrong
	}
	return nil
}

// Unseal recovers the object key of bucket/key from its sealed map,
// with the customer key for SSE-C (nil otherwise).
func (k Keys) Unseal(ctx context.Context, bucket, key string, sealed map[string]string, customerKey []byte) ([]byte, error) {
	if err := CheckCustomerKey(sealed, customerKey); err != nil {
		return nil, err
	}
	scheme := sealed[Scheme]
	sk, err := base64.StdEncoding.DecodeString(sealed[SealedKey])
	if err != nil {
		return nil, fmt.Errorf("%w: sealed key: %w", ErrDamaged, err)
	}
	var kek []byte
	switch scheme {
	case SchemeC:
		kek = sse.CustomerKEK(customerKey)
	case SchemeS3, SchemeKMS:
		if kek, err = k.dataKey(ctx, bucket, key, sealed); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: unknown scheme %q", ErrDamaged, scheme)
	}
	ok, err := sse.UnsealKey(kek, sk, sealContext(scheme, bucket, key))
	if err != nil {
		if scheme == SchemeC {
			return nil, ErrCustomerKeyWrong
		}
		return nil, fmt.Errorf("%w: %w", ErrDamaged, err)
	}
	return ok, nil
}

func (k Keys) dataKey(ctx context.Context, bucket, key string, sealed map[string]string) ([]byte, error) {
	if k.KMS == nil {
		return nil, ErrNoKMS
	}
	dk, err := base64.StdEncoding.DecodeString(sealed[KMSDataKey])
	if err != nil {
		return nil, fmt.Errorf("%w: sealed data key: %w", ErrDamaged, err)
	}
	keyID := sealed[KMSKey]
	plain, err := k.KMS.Decrypt(ctx, keyID, dk, Context(bucket, key, sealed[KMSContext]))
	if err != nil {
		return nil, fmt.Errorf("unseal data key under %q: %w", keyID, err)
	}
	return plain, nil
}

// Rewrap re-seals the KMS data key of a sealed map under the newest
// version of its KMS key: the object key and data stay as they are. It
// returns the new map, or the same one (changed false) for SSE-C.
func (k Keys) Rewrap(ctx context.Context, bucket, key string, sealed map[string]string) (map[string]string, bool, error) {
	switch sealed[Scheme] {
	case SchemeS3, SchemeKMS:
	default:
		return sealed, false, nil
	}
	if k.KMS == nil {
		return nil, false, ErrNoKMS
	}
	dk, err := base64.StdEncoding.DecodeString(sealed[KMSDataKey])
	if err != nil {
		return nil, false, fmt.Errorf("%w: sealed data key: %w", ErrDamaged, err)
	}
	keyID := sealed[KMSKey]
	nk, err := k.KMS.Rewrap(ctx, keyID, dk, Context(bucket, key, sealed[KMSContext]))
	if err != nil {
		return nil, false, fmt.Errorf("rewrap data key under %q: %w", keyID, err)
	}
	out := make(map[string]string, len(sealed))
	for n, v := range sealed {
		out[n] = v
	}
	out[KMSDataKey] = base64.StdEncoding.EncodeToString(nk)
	return out, out[KMSDataKey] != sealed[KMSDataKey], nil
}

// UserContext decodes an x-amz-server-side-encryption-context value:
// base64 of a JSON object of strings.
func UserContext(v string) (map[string]string, error) {
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, errors.New("the encryption context is not valid base64")
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, errors.New("the encryption context must be a JSON object of strings")
	}
	return m, nil
}

// Context is what a data key is bound to: the object (as S3 binds it,
// by its ARN), and any context the client gave.
func Context(bucket, key, userContext string) kms.Context {
	c := kms.Context{contextARNName: "arn:aws:s3:::" + bucket + "/" + key}
	if userContext != "" {
		if m, err := UserContext(userContext); err == nil {
			for n, v := range m {
				if n != contextARNName {
					c[n] = v
				}
			}
		}
	}
	return c
}

// sealContext binds a sealed object key to its object and scheme.
func sealContext(scheme, bucket, key string) string {
	return "shardstore-sse\x00" + scheme + "\x00" + bucket + "\x00" + key
}
