// Package migrate adopts the drives of a stopped MinIO deployment in
// place (issue 43): `shardstore migrate from-minio [--dry-run] [--finish]
// DRIVES...`. Nothing of the shard data is copied: MinIO's part files
// are already Reed-Solomon shards framed [32-byte sum][chunk] per erasure
// block, which is shardstore's shard file layout, so they are taken over
// by hard link into shardstore's data area and recorded with the bitrot
// algorithm bitrot.HighwayHash256MinIO (HighwayHash-256 under MinIO's
// key). MinIO's format is described in docs/minio-format.md and decoded
// by internal/minioformat.
//
// What an adoption does, in order:
//
//  1. Reads every drive's .minio.sys/format.json and orders the drives by
//     their position in the set (not by the arguments). A deployment of
//     several erasure sets or pools, or a node's share of a cluster, is
//     refused for now, before anything is written.
//  2. Formats each drive for shardstore beside MinIO's files
//     (.shardstore.sys/, drive.LocalOptions.Beside): one set, slot =
//     MinIO's position, deployment id = MinIO's, so an object's MinIO
//     distribution is its shardstore Distribution unchanged.
//  3. For each bucket (a top-level directory on a majority of drives):
//     its configuration from .minio.sys/buckets/<bucket>/.metadata.bin
//     (versioning, object lock, policy, lifecycle, tags) becomes its
//     bucket record.
//  4. For each key (a directory holding xl.meta): every drive's xl.meta
//     is decoded, the versions are decided by quorum (a version counts
//     on the drives whose copy agrees on id, kind, time, ETag and
//     erasure layout, and whose distribution says it holds the shard
//     it claims; an object version needs M such drives, a delete marker
//     a majority), and each drive gets shardstore's records of the
//     versions it holds: the key's current version, its noncurrent
//     versions, refs, and inline shards (into the index up to
//     shardstore's inline limit, else written out as a shard file).
//     Part files are hard-linked to .shardstore.sys/data/ before the
//     index batch that references them. A key is adopted whole or not
//     at all: if any of its versions is encrypted, compressed, tiered,
//     legacy, carries metadata this package does not understand, or
//     lacks quorum, the key is listed as refused and left untouched.
//     A version MinIO compressed (S2) is adopted by copy instead
//     (minio_copy.go): its shards are read and Reed-Solomon decoded,
//     decompressed, checked against its sizes and part MD5s, and written
//     as new shard files with shardstore's bitrot algorithm, keeping its
//     id, time, ETag, parts and metadata; its records go into the key's
//     batch with the linked versions'.
//  5. Adopts the unfinished multipart uploads whose key it can name (a
//     key of the bucket, or one given with --upload-keys: MinIO stores
//     only the SHA-256 of bucket/key) with MinIO's upload id, which the
//     engine accepts beside its own (minio_uploads.go): the part files
//     are hard-linked, the records keep MinIO's bitrot algorithm, and
//     clients can list them, list their parts, upload more parts and
//     complete or abort them. Uploads of unknown keys are listed and
//     left; compressed or encrypted ones are refused.
//  6. Records the outcome in each drive's index (system table,
//     "migrate/minio"): "adopting" while it runs, "adopted" at the end.
//     `shardstore server` refuses drives that say "adopting" (an
//     interrupted adoption is resumed first), and a run on drives that
//     say "adopted" does nothing: shardstore may have changed the data
//     since, which a second adoption would overwrite.
//
// Keys are decoded and linked 8 at a time, and their records go to each
// drive as one synced batch per 256 keys (a batch per key and drive made
// the syncs the bottleneck: 335 against 3,500 objects/s on 10,000 small
// keys over 16 drives).
//
// Progress: a counting pass first counts the keys on one drive (1/N of
// the listing), so the progress lines (once a second) give keys done of
// the total, objects per second and an ETA; the report ends with the
// totals: objects (versions) adopted, refused, bytes linked, bytes
// copied, bytes of index entries written, elapsed time and seconds per
// million objects.
//
// Measured (session 24, this 2-core machine, 16 drive directories on one
// disk): a MinIO (/tmp/peers/minio-bin, MINIO_CI_CD=on) filled through
// boto3 with 20,000 objects of 1-9 KiB (random, 100 prefixes, all inline
// in xl.meta) and 10 of 20 MiB, then stopped; `/usr/bin/time shardstore
// migrate from-minio /d/d{1...16}` on a fresh copy of the drives each
// time. Adopted 20,010 versions in 11.7 s when the machine was quiet
// (1,713 objects/s, 584 s per million), 32.6-51.3 s while other
// sessions' tests held the load average at 20-29 (396-614 objects/s);
// 14.1-14.6 s of CPU (user+sys) per run whatever the load (14.1 and
// 14.5 s before this session's changes, 14.6 s with the uploads, copies
// and counting pass): about 0.7 ms of CPU per object. Data linked, not copied: 160 part files,
// 279,724,800 bytes; copied: 0 (no compression). Index entries written:
// 278,302,208 bytes (keys and values, all drives), 146,648,512 of them
// the small objects' inline shards (kept inline, as MinIO had them in
// xl.meta: its xl.meta files total 287,581,888 bytes); `du -sb` of the
// drives grew from 1,888,457,940 to 2,367,870,594 bytes (+479 MB: each
// drive's index directory is 28.9 MB after the run, not yet compacted;
// the hard links use no space). The loader and commands are in the
// session's report; warp was not used.
//
// Safe by construction: --dry-run decodes everything and prints what
// would be adopted and refused, with counts and bytes, and opens nothing
// for writing. Every step is idempotent (index writes are puts, links
// are checked by inode, a chunk's files are made before its batches), so
// an interrupted run (kill -9) is resumed by running it again; the test
// suite kills it at random writes, the seed logged
// (SHARDSTORE_TEST_MIGRATE_CRASH_AT, tests only). MinIO's files are left where they were (the part
// files have a second name) until --finish, which, once an adoption has
// completed, removes MinIO's names of every adopted key, as the journal
// in each drive's system table lists them ("migrate/minio/adopted/",
// written in the same batch as the key's records), and the directories
// of the adopted uploads ("migrate/minio/uploads/"); refused keys, even
// ones written through shardstore since, and the rest of .minio.sys
// (IAM, configuration) stay.
//
// Not done yet: several sets or pools, a node's share of a cluster,
// IAM users and policies, SSE (its keys are MinIO's KMS's or the
// client's: refused and listed), tiered versions, compressed unfinished
// uploads (refused: plain parts cannot be appended to S2 parts), copying
// versions of a geometry shardstore cannot use (refused).
//
// # Copying from a running S3 endpoint
//
// FromS3 (`shardstore migrate from-s3 --target URL SOURCE_URL`, froms3.go)
// copies buckets from any S3 endpoint into a running shardstore through
// its import path: PutObject with the X-Shardstore-Import-* headers
// (s3api.ParseImport), which only callers allowed the admin action
// admin:ImportObject may send (access.Decide, as for every admin action)
// and which make the engine keep the version's id and modification time
// (engine.ImportVersion): a version newer than the key's current one
// becomes current, an older one is put among the noncurrent versions at
// its place by time (drive.VersionKey), the current one untouched, and
// one already there writes nothing. Per bucket: made on the target (with
// object lock when the source has it), versioning enabled while versions
// are imported, then the versions of each key, oldest first, keys in
// parallel (S3Options.Workers), then the bucket's final versioning, its
// object lock rule, policy, lifecycle, tags and CORS. What the target
// already lists with the same version id, ETag and time is skipped, so a
// re-run copies only what changed and an interrupted run (kill -9) is
// resumed by running it again: each version is one PUT, committed whole
// or not at all. Each copy is verified: the target checks a plain ETag
// (the body's MD5) and a full-object checksum against the body; a
// multipart ETag is recomputed from the parts, read one by one, before
// the body's last byte goes out (partsReader), so a mismatch fails the
// PUT; and the target's answer must carry the source's version id and
// ETag. A key stops at its
// first failed version so that versions never land out of order.
//
// Not done yet: version ids other than shardstore's and MinIO's UUIDs
// (AWS S3's, Ceph's) are refused by the target; times come from listings
// (milliseconds) except for shardstore's ids, which carry nanoseconds;
// deletions of versions on the source are not propagated; multipart
// objects arrive as one part, their ETag kept;
// SSE-C/KMS objects, ACLs, owners and IAM are not copied.
package migrate
