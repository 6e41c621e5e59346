package migrate

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"

	"github.com/shardstore/shardstore/internal/kms"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/minioformat"
	"github.com/shardstore/shardstore/internal/sealing"
	"github.com/shardstore/shardstore/internal/sse"
)

// Versions MinIO stored encrypted (SSE-S3, SSE-KMS) are adopted by copy
// when the operator gives the key MinIO ran with (MINIO_KMS_SECRET_KEY,
// name:base64, or a key file holding that line: Options.MinIOKeys and
// Options.Keys, loaded as the server loads its KMS): the object key is
// unsealed (MinIO's KMS data key opened with the static key and MinIO's
// context, then MinIO's seal of the object key: minioformat.SSE), each
// part's DARE stream is decrypted and authenticated package by package
// as the copy reads it (minioformat.DAREReader), and the plaintext is
// encrypted again in shardstore's own format (package sse: a new object
// key, derived from MinIO's and the copy's data id so that a resumed run
// writes the same bytes, sealed by sealing.Keys under the same KMS key
// name, which the server must then be given too) and erasure-coded afresh, as the
// copy of a compressed version is (minio_copy.go). The version keeps its
// id, time, ETag as MinIO showed it (an SSE-S3 single PUT's plaintext
// MD5; SSE-KMS's last 32 hex digits of MinIO's sealed ETag, hidden here
// as shardstore hides SSE-KMS ETags; a multipart ETag as stored), its
// scheme, KMS key id and SSE-KMS context.
//
// Re-encrypting rather than reading MinIO's format in the server: the
// server then has one encryption format (range reads by erasure block,
// healing without keys, key rotation by Rewrap, sealing.Keys for every
// version), and MinIO's format stays in the migration; the cost is that
// encrypted data is copied, not linked (like compressed data).
//
// Refused, listed with the reason and left untouched: SSE-C (the key is
// the client's and MinIO never stored it), an SSE-S3/SSE-KMS version
// whose KMS key was not given or does not open its data key (a KES or
// other external KMS, another secret), MinIO's pre-2018 seal, anything
// that does not authenticate; and, for now, encrypted versions in a
// multi-node adoption (the copy needs every node's shards) and
// unfinished encrypted uploads.

// MinIOKeyring opens data keys MinIO's KMS sealed (kms.Builtin with
// MinIO's static key).
type MinIOKeyring interface {
	DecryptMinIO(keyID string, ciphertext, associatedData []byte) ([]byte, error)
}

// sseSource is an encrypted MinIO version's object key and ETags.
type sseSource struct {
	s   *minioformat.SSE
	o   *minioformat.Object
	key [32]byte
	// shown is the ETag MinIO answered; plainMD5 the MD5 of a single
	// PUT's plaintext ("" for a multipart version).
	shown, plainMD5 string
}

// sseRefusal says why an encrypted version cannot be adopted whatever
// keys are given, or "".
func sseRefusal(o *minioformat.Object) string {
	s, err := o.SSEKeys()
	kind, id := o.Encryption()
	what := "encrypted (" + kind + ")"
	if id != "" {
		what = fmt.Sprintf("encrypted (%s, MinIO KMS key %q)", kind, id)
	}
	switch {
	case kind == "SSE-C":
		return "encrypted (SSE-C): its key is the client's, never stored by MinIO: the client copies it (reads it with its key, writes it again)"
	case err != nil:
		return what + ": " + err.Error()
	case s == nil || s.Kind != "SSE-S3" && s.Kind != "SSE-KMS":
		return what + ": its metadata names no scheme this adoption knows"
	case o.Compressed():
		return what + " and compressed: adopting that is not built"
	}
	return ""
}

// openSSE unseals the object key of encrypted version o of bucket/key
// with the keys the operator gave. An error wrapping errNotCopyable
// says why the key is refused.
func (a *adopter) openSSE(bucket, key string, o *minioformat.Object) (*sseSource, error) {
	if r := sseRefusal(o); r != "" {
		return nil, fmt.Errorf("%w: %s", errNotCopyable, r)
	}
	s, _ := o.SSEKeys()
	what := fmt.Sprintf("encrypted (%s, MinIO KMS key %q)", s.Kind, s.KeyID)
	if a.opts.MinIOKeys == nil || a.opts.Keys.KMS == nil {
		return nil, fmt.Errorf("%w: %s: no KMS key given (run with MINIO_KMS_SECRET_KEY as MinIO had it)", errNotCopyable, what)
	}
	kek, err := a.opts.MinIOKeys.DecryptMinIO(s.KeyID, s.DataKey, s.KMSAssociatedData(bucket, key))
	switch {
	case errors.Is(err, kms.ErrKeyNotFound):
		return nil, fmt.Errorf("%w: %s: that key was not given (MinIO's KMS may be KES or another secret: give MINIO_KMS_SECRET_KEY=%s:BASE64)", errNotCopyable, what, s.KeyID)
	case err != nil:
		return nil, fmt.Errorf("%w: %s: the key given does not open its data key: %v", errNotCopyable, what, err)
	}
	ok, err := s.UnsealObjectKey(kek, bucket, key)
	clear(kek)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errNotCopyable, what, err)
	}
	src := &sseSource{s: s, o: o, key: ok}
	if src.shown, src.plainMD5, err = minioformat.ShownETag(s, ok, o.ETag()); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errNotCopyable, what, err)
	}
	return src, nil
}

// partReader is the plaintext of part i's stored stream r.
func (src *sseSource) partReader(r io.Reader, o *minioformat.Object, i int) io.Reader {
	if src.s.Multipart {
		return minioformat.NewDAREReader(r, minioformat.PartKey(src.key, o.Parts[i].Number))
	}
	return minioformat.NewDAREReader(r, src.key[:])
}

// sseTarget is the shardstore encryption of a copied version.
type sseTarget struct {
	key []byte // the new object key
	c   sse.Cipher
}

// reseal makes the version's new object key (m.DataID set), sealed as
// shardstore seals a new version of the same scheme under the same KMS
// key, and records it on m (whose ETag it sets to the one MinIO showed).
func (a *adopter) reseal(bucket, key string, src *sseSource, m *meta.Object) (*sseTarget, error) {
	scheme := sealing.SchemeS3
	if src.s.Kind == "SSE-KMS" {
		scheme = sealing.SchemeKMS
	}
	// The new object key is derived from MinIO's and the copy's data id,
	// so every run of a resumed adoption encrypts the version alike: the
	// shard files a killed run left and the records of any run agree.
	mac := hmac.New(sha256.New, src.key[:])
	mac.Write([]byte("shardstore adopted MinIO object key v1\x00" + m.DataID))
	ok, sealed, hide, err := a.opts.Keys.SealGiven(context.Background(), bucket, key,
		sealing.Request{Scheme: scheme, KMSKey: src.s.KeyID, KMSContext: src.s.Context}, mac.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("%w: sealing its new key under %q: %v", errNotCopyable, src.s.KeyID, err)
	}
	t := &sseTarget{key: ok, c: sse.DefaultCipher()}
	m.Cipher, m.Sealed = string(t.c), sealed
	m.Flags &^= meta.FlagHiddenETag
	if hide {
		m.Flags |= meta.FlagHiddenETag
	}
	m.ETag = src.shown
	// The S3 checksums, which MinIO seals with the object key too.
	cs, err := src.o.OpenChecksums(src.key)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNotCopyable, err)
	}
	if len(cs) > 1 {
		return nil, fmt.Errorf("%w: %d checksums on one version", errNotCopyable, len(cs))
	}
	m.ChecksumAlgo, m.ChecksumVal, m.ChecksumType = "", "", ""
	if len(cs) == 1 {
		m.ChecksumAlgo, m.ChecksumVal, m.ChecksumType = cs[0].Algorithm, cs[0].String(), cs[0].Type()
	}
	return t, nil
}
