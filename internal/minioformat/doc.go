// Package minioformat reads MinIO's on-disk format, for adopting stopped
// MinIO drives in place (issue 43): a drive's format.json (ParseFormat),
// an object's xl.meta with every version, delete marker, inline shard,
// part list and metadata (Decode), a bucket's .metadata.bin
// (DecodeBucketMetadata), a deployment's pool.bin with its server pools
// and their decommission (DecodePoolMeta), an unfinished upload's id and part.N.meta
// (ParseUploadID, DecodePartMeta), the HighwayHash-framed shard streams of
// part files and inline data (ShardReader), which DecodePart turns back
// into an object's bytes with Reed-Solomon when shards are missing, and
// MinIO's server-side encryption (sse.go): an encrypted version's sealed
// object key and KMS data key (Object.SSEKeys, SSE.UnsealObjectKey, the
// KMS context as MinIO binds it), its sealed ETag (ShownETag) and the
// DARE 2.0 streams of its data (DAREReader, OpenDARE; FuzzDARE,
// FuzzSSEKeys). Opening the KMS data key itself is the KMS's business
// (kms.Builtin.DecryptMinIO for MinIO's static key).
//
// The format is described in docs/minio-format.md, learnt from MinIO's
// public source (AGPL); nothing here is copied from it. The msgpack is
// decoded by a small reader of its own (msgpack.go) instead of
// tinylib/msgp, whose generated code this package cannot use and whose
// byte-level readers leave the checks against hostile lengths to the
// caller anyway: every length and element count is checked against the
// bytes that remain before anything is allocated, nesting is bounded,
// and nothing panics on any input (FuzzDecode). What a decode allocates
// is bounded by a small multiple of its input, whose size the caller
// bounds (MaxMetaSize).
//
// Decoding is strict: a CRC mismatch, a malformed field, an index entry
// that disagrees with its version, a distribution that is not a
// permutation or parts that do not add up to the size is an error
// wrapping ErrCorrupt; a format version, algorithm or layout this package
// does not know is an error wrapping ErrUnsupported. Fields it does not
// know are kept by name in Unknown, so a caller that must not lose
// information can refuse such a version rather than guess. Adoption is
// expected to list and leave untouched whatever this package refuses.
//
// Layer 0: it imports no other package of the module.
package minioformat
