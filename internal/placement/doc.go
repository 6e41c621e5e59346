// Package placement decides which erasure set of a deployment an object
// lives in: a pure function of the deployment, the object's name and
// the set count, recorded per deployment in every drive's format
// (drive.Format.Placement) so that it never changes under stored data.
//
// Three algorithms exist:
//
//   - Shardstore ("", every deployment shardstore formats): xxh3-64 of
//     "bucket/key", seeded with xxh3-64 of the deployment id, modulo the
//     set count.
//   - MinIOSipMod ("minio-sipmod"), for MinIO deployments adopted in
//     place by `shardstore migrate from-minio` whose format.json says
//     distributionAlgo "SIPMOD" or "SIPMOD+PARITY" (every MinIO release
//     since 2019): SipHash-2-4 of MinIO's object name, keyed by the 16
//     bytes of the deployment id (a UUID; its first 8 bytes are k0 and
//     its last 8 k1, both little-endian), modulo the set count. The
//     bucket is not hashed. MinIO's object name of a key ending in "/"
//     is the key without the "/" plus "__XLDIR__" (how it stores a
//     directory object), so "a/" is hashed as "a__XLDIR__".
//   - MinIOCRCMod ("minio-crcmod"), MinIO's format.json distributionAlgo
//     "CRCMOD" (releases before 2019): CRC-32 (IEEE) of the same object
//     name modulo the set count.
//
// An adopted deployment keeps MinIO's algorithm for the objects written
// through shardstore afterwards too: one algorithm per deployment means
// a key has one set, so a GET or an overwrite never sees two copies.
// The algorithms were learnt from MinIO's public source (cmd/erasure-
// sets.go: sipHashMod, crcHashMod, hashKey); nothing is copied from it.
// SipHash-2-4 comes from github.com/dchest/siphash (CC0), the
// implementation MinIO uses, so the sums agree bit for bit.
package placement
