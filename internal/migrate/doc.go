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
//     their place in the deployment, set by set and each set by position
//     (not by the arguments; sets.go). Every drive of the deployment must
//     be given. A deployment of several pools, or a node's share of a
//     multi-node cluster, is refused, before anything is written.
//  2. Formats each drive for shardstore beside MinIO's files
//     (.shardstore.sys/, drive.LocalOptions.Beside): set and slot =
//     MinIO's set and position, deployment id = MinIO's, so an object's
//     MinIO distribution is its shardstore Distribution unchanged, and
//     placement = MinIO's (drive.Format.Placement: SipHash-2-4 of the
//     object name keyed by the deployment id, internal/placement), so
//     the engine looks for every adopted object in the set MinIO put it
//     in, and places new objects by the same rule: one rule per
//     deployment, never two copies of a key in two sets.
//     `shardstore server` takes its arguments in order as slots, as
//     MinIO does; the report prints MinIO's order when the arguments
//     were in another (several {...} in one argument expand leftmost-
//     fastest in MinIO, rightmost-fastest in shardstore).
//  3. For each bucket (a top-level directory on a majority of drives):
//     its configuration from .minio.sys/buckets/<bucket>/.metadata.bin
//     (versioning, object lock, policy, lifecycle, tags) becomes its
//     bucket record.
//  4. For each key (a directory holding xl.meta): the key's set is the
//     one MinIO's placement picks (a key whose files are on another
//     set's drives is refused); every xl.meta of that set's drives
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
//     batch with the linked versions'. Both the shards read and the
//     shard files written are on the drives of the key's set.
//  5. Adopts the unfinished multipart uploads whose key it can name (a
//     key of the bucket, or one given with --upload-keys: MinIO stores
//     only the SHA-256 of bucket/key) with MinIO's upload id, which the
//     engine accepts beside its own (minio_uploads.go): the part files
//     are hard-linked, the records keep MinIO's bitrot algorithm, and
//     clients can list them, list their parts, upload more parts and
//     complete or abort them. MinIO keeps an upload in the set of its
//     object (it hashes the object name for the multipart calls as for
//     PutObject), where the engine looks for it too: its files are read
//     from, and its records written to, the drives of the key's set (an
//     upload found on another set's drives is refused). Uploads of
//     unknown keys are listed and left; compressed or encrypted ones are
//     refused.
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
// Progress: a counting pass first counts the keys on one drive of each
// erasure set (a key is on every drive of its set only; 1/setSize of
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
// Not done yet: several pools (shardstore has none yet, issue 47), a
// node's share of a multi-node cluster (below), IAM users and policies,
// SSE (its keys are MinIO's KMS's or the client's: refused and listed),
// tiered versions, compressed unfinished uploads (refused: plain parts
// cannot be appended to S2 parts), copying versions of a geometry
// shardstore cannot use (refused).
//
// # A node's share of a MinIO cluster (refused; what it would take)
//
// `migrate from-minio http://n{1...4}:9000/d{1...4}` run on each node
// would have to adopt that node's drives only, the other nodes doing
// theirs. It is refused (the drive count differs from format.json's;
// the message names migrate from-s3) because doing it properly takes:
//
//   - Cross-node version decisions. A key's xl.meta copies are spread
//     over every node (a set of 16 over 4 nodes: 4 per node); one node
//     cannot tell a version on quorum from a dangling one, and nodes
//     deciding alone would adopt a key on some nodes and refuse it on
//     others. The nodes must exchange their per-key version summaries
//     (id, kind, time, ETag, layout per drive) and apply one decision:
//     a coordinated run (one node leading, the others serving their
//     drives' xl.meta over the peer protocol, internal/driverpc or a
//     migrate endpoint behind peerauth), resumable on every node.
//   - Slots: shardstore's cluster interleaves slots across nodes
//     (internal/cluster Parse: drive k of every node in turn); MinIO's
//     order comes from its own ellipses expansion. Each node must check
//     that its drives' MinIO positions are the slots the cluster
//     topology gives them, and refuse otherwise.
//   - Bucket records live in the cluster's Raft group
//     (internal/consensus), which seeds itself from the drives' bucket
//     records on its first start (engine raftState.loadBuckets): writing
//     the records to every node's drives, as the single-node adoption
//     does, would seed it, but only if every node finished first; the
//     adoption state must gate the cluster's start on all nodes.
//   - --finish on every node, after all nodes adopted.
//
// Placement, formats (deployment id, sets, slots) and the shard data
// (hard links on each node's own drives) carry over as they are.
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
// Multipart objects keep their parts: when the source answers HEAD
// partNumber=N for every part with the ETag's part count (MinIO, AWS,
// shardstore do), the part sizes go with the PUT (X-Shardstore-Import-
// Parts, "SIZE*COUNT,..." runs) and so does a composite or full-object
// checksum (X-Shardstore-Import-Checksum); the target cuts the body at
// those sizes, writes each part as its own shard files, computes the
// multipart ETag and the checksum from the parts, refuses a mismatch,
// and commits the version once, after its last part
// (engine.importParts): an interrupted import leaves no version. GET
// partNumber, the part count and the checksums then answer as on the
// source. A source that does not answer by part (gofakes3, an object
// once imported whole) gets today's one-part import, its ETag kept and
// counted as not recomputed.
//
// Version ids the target cannot keep (ids.go): anything but "null", a
// lower-case UUID and shardstore's own form (AWS S3's opaque ids, Ceph
// RGW's). Each such version is imported under a new id of shardstore's
// form: its time (the listing's, moved on by nanoseconds past the
// version before it where the source lists several with one time, so
// that the order stays) and, as its second half, 8 bytes of SHA-256 over
// bucket, key and source id. That half is how a re-run recognises a
// version imported before with no state of its own; the ids are also
// recorded in the id map file (S3Options.IDMap, JSON lines), rewritten
// whole after each bucket, so the source's ids stay translatable; the
// objects' metadata is not touched. The summary names the buckets whose
// ids were not all kept. Versions listed with the same time (a listing
// gives milliseconds, some stores seconds) are put in the order of the
// listing's answer, where versions and delete markers stand side by side
// newest first (listorder.go reads it back from the body, which the SDK
// splits into two lists); where a store's answer is not in that order
// (moto lists delete markers after versions, gofakes3 oldest first) the
// latest goes last and a version before a delete marker of its time.
//
// Progress: a first pass lists the source's buckets for the totals
// (versions and bytes); the progress line then shows the rates, the
// share done and an ETA, the longer of what the version rate and the
// byte rate give for what is left (progressLine).
//
// Deletions on the source reach the target only with S3Options.Delete
// (`--delete`, s3delete.go): after a bucket's copy, the target's
// versions that no source version accounts for are deleted by version
// id, each printed.
//
// Measured (README, "Copying from a running S3 endpoint"): beside rclone
// sync and mc mirror from a MinIO source on loopback, 2,000 x 64 KiB in
// 21.7 s (rclone 22.1 s, mc 22.7 s) and 20 x 64 MiB in 6.7 s (4.2 s,
// 7.6 s), medians of 3 on a shared 2-core machine.
//
// Not done yet: times come from listings
// (milliseconds) except for shardstore's ids, which carry nanoseconds; an
// object over 5 GiB is imported only in parts (a source that does not
// answer HEAD by part cannot give one), and imports in parts into a
// bucket that encrypts every write are refused; SSE-C/KMS objects, ACLs, owners and IAM are
// not copied.
//
// # MinIO's IAM and bucket exports
//
// FromMinIOExport (`shardstore migrate from-minio-export --target URL
// ZIP...`, fromexport.go) applies the zips of `mc admin cluster iam
// export` and `mc admin cluster bucket export` (decoded by
// internal/minioexport) to a running shardstore through its admin API
// (/shardstore/admin/: policies, users, groups, attachments, access
// keys) and S3 API (bucket creation and configuration), so every change
// passes the target's access decision and works on a cluster as on one
// node. It reads what the target has first and changes only what
// differs, so a re-run applies nothing and --dry-run (reads only) says
// what would change. Policies go through translatePolicy
// (exportpolicy.go), which never grants more than MinIO did: actions the
// target does not have are left out, an Allow statement it cannot read
// is dropped, a Deny it cannot read refuses the policy (and the access
// key whose session policy it is). A MinIO policy named like a built-in
// one here but granting something else keeps MinIO's meaning as
// "minio-NAME". What has no equivalent (the root user's service
// accounts, LDAP/OpenID users' mappings, notification, replication,
// remote targets, quotas, unknown files) is reported on "!" lines. A
// user already on the target keeps its secret. Order: policies, users,
// access keys (created disabled where MinIO had them disabled), groups,
// then attachments. Secrets go only into
// request bodies, never into the output.
package migrate
