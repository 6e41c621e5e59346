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
//     be given (a node's share of a multi-node cluster: every node's run
//     gives the others' as staged copies, below). A single node's
//     deployment of several server pools is adopted pool by pool (below,
//     "Several server pools"); a pool left out is refused unless MinIO's
//     pool.bin says its decommission is complete.
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
//     at all: if any of its versions is SSE-C encrypted, tiered,
//     legacy, carries metadata this package does not understand, or
//     lacks quorum, or cannot be copied (below), the key is listed as
//     refused and left untouched.
//     A version MinIO compressed (S2) is adopted by copy instead
//     (minio_copy.go): its shards are read and Reed-Solomon decoded,
//     decompressed, checked against its sizes and part MD5s, and written
//     as new shard files with shardstore's bitrot algorithm, keeping its
//     id, time, ETag, parts and metadata; its records go into the key's
//     batch with the linked versions'. Both the shards read and the
//     shard files written are on the drives of the key's set. A version
//     MinIO encrypted (SSE-S3, SSE-KMS) is copied the same way when the
//     KMS key MinIO ran with is given (Options.MinIOKeys, Options.Keys;
//     minio_sse.go): decrypted from MinIO's DARE streams and encrypted
//     again in shardstore's format under a new object key sealed with
//     the same KMS key name; without that key it is refused, naming the
//     scheme and the key.
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
// Not done yet: IAM
// users and policies (from-minio-export below carries them), SSE-C
// versions (the key is the client's: refused and listed), SSE-S3/KMS
// versions sealed by an external KMS (KES) or in a multi-node
// adoption, encrypted unfinished uploads, tiered versions, compressed unfinished uploads (refused: plain parts cannot
// be appended to S2 parts), copying versions of a geometry shardstore
// cannot use (refused).
//
// # Several server pools
//
// `shardstore migrate from-minio /p1/d{1...4} /p2/d{1...8}` (one
// argument per pool, as MinIO had them; Options.Pools and PoolArgs,
// pools.go) adopts each MinIO pool onto a shardstore pool of the same
// geometry, one pool after the other, each by the steps above over its
// own drives: set and slot within the pool, and a pool id
// (drive.Format.PoolID) derived from the deployment id and the pool's
// first MinIO drive id, so a resumed run writes the same. What spans
// the pools is decided first, before anything is written:
//
//   - pool.bin (minioformat.DecodePoolMeta; MinIO writes it into every
//     pool: the copy last updated counts) lists the pools by argument
//     and each one's decommission. The pools given are matched to it by
//     argument, or, when the drives were mounted elsewhere, in order by
//     drive count if only one pairing fits (checkPoolMeta). Refused: a
//     pool MinIO was decommissioning (a key may be in two pools until
//     it ends), a pool whose decommission is complete given among the
//     arguments (MinIO asks for it to be removed; what is left on it
//     is not the deployment's), a pool left out that is not completely
//     decommissioned. A canceled or failed decommission: the pool is
//     adopted like the others, with a note.
//   - Every pool's drives are formatted and marked "adopting" before the
//     first pool's keys are adopted (markAdopting), so a server started
//     on them before the end refuses all of them.
//   - Bucket metadata is read from the pool holding its newest version
//     (MinIO writes a .minio.sys object into a pool it picks each time,
//     so a stale copy can be left in another: readSysObject), and every
//     pool's drives get the record of every bucket of any pool.
//   - A key found in several pools (MinIO, at least the release the
//     fixtures were made with, puts a new version of an existing key in
//     a pool picked by free space, and merges the pools' versions when
//     it lists or reads): every pool's adopter decides the key's
//     versions in every pool holding it by the rules above (a refusal in
//     one refuses it in all), merges them newest first, keeps one copy
//     of each version id (the newest, which MinIO serves), and the pool
//     holding the newest version adopts the key: its own versions linked
//     as usual, the other pools' copied into it (copyFromPool: read and
//     Reed-Solomon decoded from the other pool's drives, checked against
//     the ETag (a multipart ETag over the parts' MD5s), erasure-coded
//     with this pool's default parity); the other pools write only a
//     "moved" journal entry (migrate/minio/moved/), so that --finish
//     removes MinIO's names there too. Every pool decides this alike
//     from the same files, except what only the copy finds (an ETag
//     that does not match, shards beyond repair): then the owning pool
//     refuses the key after the others journaled it as moved.
//
// --finish runs only once every pool's adoption has completed (a pool's
// MinIO files may hold versions another pool copies), and removes what
// a moved entry names only where a drive of the deployment (of this
// node, in a cluster) journals the key as adopted (migrate/minio/
// adopted/, written only by the pool that adopted it, in the batch of
// its records): a key its owner refused keeps MinIO's files in every
// pool, and --finish lists it (finish_moved.go). Every moved entry of
// every pool is done before any adopted entry is removed, so a --finish
// killed anywhere and run again decides the same. The report gives
// each pool's section, then the totals (versions copied: compressed by
// MinIO, encrypted by MinIO, moved from another pool). A multi-node deployment of
// several pools: "A node's share of a MinIO cluster" below.
//
// # A node's share of a MinIO cluster
//
// `shardstore migrate from-minio http://node{1...4}:9000/data{1...4}`,
// the endpoints the MinIO servers had, runs on every node of the stopped
// deployment at once (cluster.go, clusterpeer.go); each run adopts its
// own node's drives, and `shardstore server` with the same endpoints on
// every node then serves the whole deployment. How the parts fit:
//
//   - Who decides. A key's xl.meta copies are on every node (a set of 16
//     over 4 nodes: 4 per node), so no node can judge a version's quorum
//     from its own drives. Each run therefore first copies the other
//     nodes' MinIO metadata into a staging directory on its first drive
//     (.shardstore.sys/migrate-minio-cluster/driveN.pack, one file per
//     staged drive (stagepack.go): every file of the drive with its
//     content and time, except the shard files, which the pack records
//     by their size only, and except shardstore's own files and all of
//     .minio.sys but format.json, buckets/, pool.bin and multipart/: not
//     MinIO's configuration and IAM, nor its tmp/), fetched as a tar
//     stream from the other runs over the
//     node's address (MinIO's port, free while MinIO is stopped) with
//     calls signed by the cluster key (internal/peerauth, derived from
//     the root credentials, so MINIO_ROOT_USER/PASSWORD must be the same
//     on every node, as MinIO needs anyway). Then it adopts as a single
//     node would, over all of the deployment's drives, the other nodes'
//     being the staged copies, read from the packs' indexes in memory
//     through the one seam by which the adopter reads any MinIO drive
//     (stagefs.go: a staged drive's path names its pack, any other path
//     the file system): the same files decided by the same rules
//     give every node the same outcome for every key (adopted with the
//     same versions, or refused), without another exchange, and each
//     writes the records, links and bucket records of its own drives
//     only, which are what the engine's quorum reads expect of each
//     drive (a version's record on each drive that holds its shard, the
//     same on all). Versions MinIO compressed are refused (the copy
//     would need every node's shards; every node refuses them alike).
//     The staging costs each node a copy of the other nodes' xl.meta
//     files (inline object data included) in a few files, removed at
//     the end.
//   - The pack. Append-only records (kind, name, modification time,
//     size, a CRC-32C of the header; a file's content and its CRC-32C),
//     then an end record with the count and a CRC-32C of every byte
//     before it; written to driveN.pack.partial, synced, renamed into
//     place and the directory synced, so a pack present is whole. It is
//     read once into an index (every record checked; a pack cut short,
//     with a bad checksum, a name twice, an entry before its directory
//     or under a file, or bytes after its end is refused, and fetched
//     again), its files' content read by offset and checked again.
//   - Drive order. Each run orders the drives by their format.json (set,
//     position), as the single-node path does, and requires each drive's
//     MinIO position to be the slot internal/cluster.Parse gives its
//     endpoint (drive k of every node in turn, which is MinIO's own
//     expansion of http://node{1...N}:PORT/d{1...M}); its own drives are
//     checked before anything is staged or written, the others' right
//     after staging, before the first write. Otherwise it refuses,
//     saying in which order to give the endpoints.
//   - Cluster-wide state, once or per node. Bucket records are written
//     by every node to its own drives (the same record everywhere, from
//     the same .metadata.bin): the consensus group of the first cluster
//     start seeds itself from the drives' bucket records
//     (engine raftState.loadBuckets), so nothing is applied through the
//     consensus group by hand. Identities are not on the drives in a
//     form adopted here: they come from MinIO's IAM export, applied once
//     to the running cluster with from-minio-export, through any node.
//   - A node that finishes first. A run does not exit (and so keeps the
//     node's port from `shardstore server`) until every other node has
//     told it that it staged this node's drives (POST staged; recorded
//     in heard/ so that a run again after a crash does not wait for
//     notices already given, and the notices this node gave in told/).
//     After that no node needs another's MinIO files: a node whose run
//     ended may start its server while others still adopt; those are
//     offline nodes to it (their drives say "adopting", which their own
//     server refuses), the cluster starts once a majority of nodes
//     answers, as after any outage, writes made meanwhile are healed
//     onto the late nodes' drives when they join, and every adopted
//     object is readable once enough nodes serve its set (a 16-drive set
//     of EC 12+4 over 4 nodes: 3 nodes). A cluster never starts on a
//     node whose drives have no shardstore format: its server refuses
//     MinIO's files (drive.Local's foreign entries).
//   - --dry-run stages into a temporary directory and needs every node's
//     run (dry or not) at the same time; its notices count only for
//     other dry runs. kill -9 at any point: run the same command again;
//     a staged drive (its pack renamed into place whole, after a sync)
//     is not fetched again, one cut short (driveN.pack.partial) is
//     fetched again (a staging directory of the file-tree form an
//     earlier version wrote, driveN/, is read as it is), and the adoption
//     resumes as on a single node. A run on a node whose share is
//     adopted and whose staging is gone does nothing (the staging is
//     renamed away before it is removed, so a run killed while removing
//     it does not find half of its notices). One case waits for ever: a
//     run killed in the instant between another node's answer to its
//     notice and recording it (told/), run again after that node's run
//     ended; once its drives say "adopted", removing its staging
//     directory ends it. --finish runs per
//     node on its own drives, without the others, once the cluster
//     serves everything.
//   - Refused before anything is written: a node's drive missing or not
//     a MinIO drive, endpoints in another order or of another drive
//     count than format.json's, https:// endpoints (the runs would talk
//     in clear: not done yet).
//   - Several server pools (http://n{1...4}:9000/p1/d{1...2}
//     http://n{1...4}:9000/p2/d{1...2}): the endpoints reach the run as
//     given, so cluster.Parse groups them into pools (cluster.PoolArgs
//     gives each pool's arguments, for pool.bin's command lines); each
//     of this node's drives is checked against its own pool's
//     format.json (drive count, position within the pool), the pools
//     sharing the deployment id. Staging is as above over the slots of
//     every pool; then fromPools adopts pool by pool, its adopters
//     sharing the cluster run and the staged packs, each checking its
//     drives' order at its pool's first slot (adopter.slotOff). A key
//     split over pools is copied into its newest version's pool only
//     when every version to move is inline in MinIO's xl.meta (the
//     staged copies hold its data) and fits inline in shardstore's
//     records (copyFromPool, copyData): every node computes the same
//     shards (Reed-Solomon, a data id derived from the version) and
//     keeps its own drives'; otherwise the key is refused on every node
//     alike. A refusal that comes after staging (pool.bin, which is
//     spread over the nodes, lists a pool not given) waits, as a
//     completed run does, until every other node has staged this
//     node's drives, so that every run reaches it instead of waiting
//     for a run that has exited.
//
// Placement, formats (deployment id, sets, slots) and the shard data
// (hard links on each node's own drives) carry over as they are.
//
// Measured (session 25, this 2-core machine under a load average of
// 11-34 from other sessions, all 4 nodes on one disk): a 4-node MinIO
// (/tmp/peers/minio-bin, 4 processes on 192.0.2.2, 16 drives, one set
// of 16) filled through boto3 with 10,000 objects of 1-9 KiB (inline)
// and 4 of 8 MiB, stopped; the 4 runs started together with the
// endpoints on 127.0.0.1. Each node: staged 241,761 entries (107,853,108
// bytes of the other 12 drives' metadata; the deployment's xl.meta are
// 143,791,168 bytes in 160,240 files) in 1m27-2m18; adopted 10,004
// versions, linked 11,188,992 bytes of part files (nothing copied) and
// wrote 34,457,440 bytes of index entries in about 40 s after the
// staging; removed the staging in 2m12-2m18; 300-317 s of wall time per
// run, 10 s user and 25-29 s system CPU. The staging as a file tree (a
// file and a directory per key and drive, created and removed on every
// node) was most of the time.
//
// Measured (session 26, the same machine, loaded by four other sessions'
// builds and tests: load average 7-39 during the runs), the staging as
// packs against the file tree, same binary otherwise, on the 4-node
// fixture (testdata/minio-4nodes) with 10,000 keys added on each drive
// (each drive's plain/small-0.txt/xl.meta copied to
// plain/syn/kNNNNN/xl.meta: 1 inline version each), the fixture copied
// with cp -a before each run, then on each node at once
// `/usr/bin/time shardstore migrate from-minio --address
// 127.0.0.1:1910N http://127.0.0.1:1910{1...4}/DIR/drive...` (the 16
// endpoints, drive i on node (i-1)%4+1), the root credentials and
// SHARDSTORE_ALLOW_ROOT_DRIVES=1 in the environment. Each
// node staged 241,077 entries (53,865,612 bytes) and adopted 10,031
// versions (16,338,404 bytes of index entries, the same on both):
//
//	                 file tree (before)   packs (after)
//	staging          67-69 s              41 s
//	adoption         about 20 s           about 21 s
//	removing it      125-128 s            22-72 ms
//	wall per node    215-218 s            63-64 s
//	CPU per node     9 s user, 29 s sys   6 s user, 4 s sys
//
// With 5,000 keys added: 57 s, 73-76 s of removal and 156-159 s per
// node before; 14 s, 16-23 ms and 23 s after. (Before: commit 03950be;
// after: the packs.) What remains is mostly waiting for CPU (10 s of
// CPU per node, four runs and other sessions' work sharing two cores;
// serving a drive walks and reads its MinIO files once per other node):
// the runs' own report says about 6,200 s per million objects here.
// Since then each node walks and reads each of its drives once and sends
// the same tree file to every other node (clustertree.go). Measured the
// same way (two runs each, alternated, load average 8-16; before:
// commit f391d82, after: with the compact pack index below too):
//
//	                 each peer walks (before)  walked once (after)
//	staging          24-25 s                   13-17 s
//	wall per node    34-38 s                   23-30 s
//	CPU user/sys     5.1-5.5 s / 3.4-3.8 s     3.3-3.5 s / 2.2-2.9 s
//	per million      3,235-3,713 s             2,159-2,833 s
//
// (the runs' own report), still far from the minutes on this
// loaded 2-core machine (not done: the staging overlapped with the
// adoption). A drive's tree file, about the size of one pack, stays in
// the staging directory until the end.
//
// The packs' indexes are held in memory, compactly (stagepack.go): per record a 40-byte entry without pointers, sorted
// by path, and its path in one name block, a key's xl.meta sharing the
// bytes of its directory's path (only "/xl.meta" added). Measured with
// `go test -run XXX -bench ReadPackMemory -benchtime=1x
// ./internal/migrate/` (500,000 keys of 20 bytes, 1,000,001 records; Go
// heap held after readPack): 60 bytes per record, against 172 with the
// index of Go strings, pointers and a map it replaced (the same
// benchmark on commit f391d82); readPack of that pack 0.7 s against
// 2.8 s. With two records per key and staged drive, about 1.4 GB per
// million keys on a node of a 4-node set of 16 drives (12 staged),
// against about 4.1 GB. The writer (packTree) keeps a 64-bit hash and a
// kind per record, no names. Still linear in the keys: an index sorted
// on disk, read by streaming in key order, would bound it (not done).
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
