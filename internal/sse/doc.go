// Package sse is the at-rest encryption format of object data: how a
// plaintext stream becomes the ciphertext the erasure coder and the
// drives see, how the per-object key is sealed, and how a customer's
// (SSE-C) key is recognised without being stored.
//
// # Data
//
// An object (each part of a multipart object) is one stream, split into
// packages of PackageSize plaintext bytes (the last may be shorter; an
// empty stream has none). Each package is sealed on its own with an AEAD
// (AES-256-GCM where the CPU has AES instructions, ChaCha20-Poly1305
// elsewhere; the cipher is recorded per object) and stored as
// ciphertext||tag, TagSize bytes longer. So:
//
//   - a range read decrypts only the packages it overlaps;
//   - a flipped bit anywhere fails the package's tag: a wrong byte is
//     never returned;
//   - packages cannot be reordered (the nonce is the package's sequence
//     number) nor the stream cut short at a package boundary (the last
//     package is sealed with a final flag in its nonce).
//
// The key of a stream is derived from the object key and the random data
// id of the stream's shard data (PartKey), so every write, including a
// re-upload of one part number, encrypts under a fresh key and nonces
// never repeat under a key.
//
// The engine codes erasure blocks of EncryptedBlockSize(b) bytes, each
// the ciphertext of b plaintext bytes: package boundaries never straddle
// an erasure block, and plaintext block i is ciphertext block i.
//
// # Keys
//
// The 32-byte object key is random per object (per multipart upload). It
// is stored only sealed (SealKey: AES-256-GCM, random nonce, bound to a
// context such as the bucket and key) under a key encryption key: a data
// key from the KMS (SSE-S3, SSE-KMS), or one derived from the customer's
// key (SSE-C). For SSE-C a salted HMAC of the customer key
// (KeyFingerprint) recognises the right key; the key itself is never
// stored.
package sse
