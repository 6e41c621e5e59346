// Package engine stores objects erasure-coded across sets of drives: it
// owns buckets, objects, multipart uploads and listing, and enforces
// quorum and per-object locking. It knows nothing of HTTP.
//
// Layout: the drives are grouped into erasure sets; an object lives in the
// set chosen by a keyed hash of bucket/key, coded into M data and K parity
// shards (one per drive of the set, order rotated per object). Shard data
// is written under a random data id and synced; then one synced index
// batch per drive makes the version visible. A write is acknowledged only
// when write quorum drives committed it.
//
// What is not the object API or its data path lives elsewhere: which
// version the drives' records make current is decided by internal/quorum,
// the background jobs (heal queue, scanner, drive refill) run in
// internal/background over the engine's side of them (background.go),
// and bucket lifecycle rules are applied by internal/lifecycle through
// the engine's public calls.
//
// What one drive holds on disk (the index tables, shard files, syncs) is
// described in docs/ondisk.md; package drive owns that format.
//
// # Where to start reading
//
//	api.go          the types of the public API (options, results, Err* errors)
//	engine.go       Config, New, the Engine struct
//	put.go          PutObject: stream, encode, write shards, commit (commitMeta)
//	get.go          HeadObject, GetObject: resolve the version, pin it, open a reader
//	readobject.go   read the drives' records in waves and ask package quorum which version is current
//	getstream.go    the object reader: read data shards, verify, rebuild from parity, write out
//	encrypt.go      encryption at rest between hashing and erasure coding (format: package sse)
//	fanout.go       run one call on every drive of a set; leave lagging drives behind
//	list.go         ListObjects: merge the sets' index scans; listahead.go reads the next page ahead;
//	                list_quorum.go: how many drives a listing needs, when it answers 503
//	versions.go     versioned buckets; versionlist.go lists versions
//	multipart.go    multipart uploads; completechecksum.go their checksums
//	import.go       versions another store made (migrate); import_parts.go such a version in its parts
//	object.go       delete, copy, in-place metadata updates (ACL, tags)
//	pools.go        server pools: which pool holds a key, new keys by free space, expansion
//	decommission.go draining a pool: the state document, the moving loop, moveKey;
//	                decom_uploads.go moves its multipart uploads in progress;
//	                decom_gate.go closes the pool to new keys on every node first
//	rebalance.go    evening the pools' use: moves keys off the fullest pools with moveKey;
//	                rebal_uploads.go then their multipart uploads in progress
//	expansion.go    an expansion under way; expansion_cancel.go canceling it (ClusterConfig)
//	throttle.go     the limits decommission and rebalance move at (pools/throttle);
//	                adaptive.go backs them off when client requests slow down
//	lock.go         per-key locks (in process, then cluster-wide through ClusterLocker)
//	healobject.go   heal one object (the background jobs decide when)
//	bucket.go, config.go, sharedstate.go   bucket records and config documents
//
// # Server pools (pools.go)
//
// The drives may be grouped into server pools (Config.Pools: one per
// drive argument with ellipses), each with its own set size and parity;
// the formats record a pool id beside the shared deployment id, and
// SetCount/SetSize/SetIndex are the pool's. An object lives in exactly
// one pool: with several pools, reads and writes of a key ask every
// pool's set for it (keyHolders) and go to the pool holding it; a new
// key goes to a pool picked by free space (pickPool; on a cluster
// node, among the pools ClusterConfig.NewKeyPools opens: a rolling
// expansion opens the appended pools once every node has them); every commit
// checks again under the key's lock that no other pool took the key
// meanwhile (checkSole: refused as ErrBusy, retried by the client).
// Multipart uploads stay in the pool they started in (uploadSet) until
// a decommission moves them.
// Listings merge all sets of all pools. A pool appended to an existing
// deployment is formatted at start (formatPool) and, on a single node,
// given the bucket records and config documents (seedPools). With one
// pool none of this costs a drive call. docs/pools.md has the operator's
// side and what is not built (rolling cluster expansion).
//
// A decommission (decommission.go) drains a pool: the config document
// pools/decommission keeps new keys off it on every node, and the node
// that scans moves each of its keys under the key's write lock, every
// version raw (an encrypted one's ciphertext as stored) with its
// record unchanged but for the coding, then purges the key from the
// pool; then the multipart uploads in progress move, each under its
// upload lock (decom_uploads.go). Progress is saved every 2 s; a pass
// that finds nothing left completes it, if it started after every node
// confirmed that it places no new key in the pool (decom_gate.go: a
// commit refuses a new key in a draining pool under the key's lock, and
// a node answers the change notice after its commits in progress). A rebalance (rebalance.go, the
// document pools/rebalance) moves keys the same way (moveKeyTo) off the
// pools whose used fraction is above the mean by more than a threshold
// until each frees its goal; its source pools, like draining ones, are a
// key's pool while a move of it is cut short (heldBy); after a source's
// keys it moves its multipart uploads with the decommission's upload move
// (rebal_uploads.go), and it spreads only over the pools that take new
// keys (not those an expansion under way appends). Both movers pace
// themselves to the limits of pools/throttle (throttle.go) and, unless its
// adaptive switch is off, to the clients' latency: the S3 server reports
// small object requests' times (ObserveClientLatency), and once a second
// adaptDecide halves the share of time the movers work when those take
// over 1.5 times (and 1 ms more than) a baseline taken while the movers were idle, and raises it
// by 1/16 when not (adaptive.go). Starting without a pool the deployment had (pools/known)
// is refused unless its decommission completed.
//
// # Drives and sets
//
// New first peeks at every drive's format record read-only (open.go,
// drive.PeekFormat) and checks the asked-for set size and parity against
// what the drives record, so a refused start writes nothing. A drive
// directory that does not exist is created only for a new deployment; on
// an existing one it is an offline drive (LocalOptions.NoCreate: a disk
// that did not mount must not be refilled on the parent filesystem). Then
// it opens the drives and checks or writes each format record (format.go:
// deployment id, set index, drive index; a foreign, swapped or recounted
// drive is refused with a message naming it; a blank drive in a known
// slot is adopted). Drives are grouped into erasure sets (the largest
// size in 2..16 that divides the count); an object lives in the set
// picked by xxh3(bucket/key, seed=deployment) (setFor), or, on the drives
// of a MinIO deployment adopted in place, by MinIO's SipHash of the key
// (the placement the drive formats record: internal/placement).
//
// Parity defaults by set size (2-3 -> 1, 4-5 -> 2, 6-7 -> 3, 8+ -> 4);
// REDUCED_REDUNDANCY uses at most 2. Geometry, block size and bitrot
// algorithm are recorded per object, so they can change without
// rewriting old data. Shard order rotates per object (distribution),
// spreading parity over all drives.
//
// # Bucket records and config documents
//
// Where bucket records and config documents (the identity store, "config/NAME")
// are kept is chosen once when the engine opens (sharedState,
// sharedstate.go): quorum-written on every drive (driveState,
// drivestate.go, config.go) or, on a cluster, in the consensus group
// (raftState, clusterstate.go). Bucket records are cached in memory.
// A config document is written with a sequence number and a CRC,
// acknowledged on a majority of all drives, read as the newest version at
// least half the drives hold, and repaired on the drives that missed it;
// writes are compare-and-swap on the sequence number.
//
// # PUT (put.go)
//
// PutObject reads the body into pooled 1 MiB block buffers (at most 4 in
// flight per stream), hands each block to the hashing stream (MD5/ETag
// and the requested S3 checksum, package hashing) and encodes it in place
// (package erasure; data shards alias the read buffer). One goroutine per
// drive (shardWriter) writes [bitrot sum][shard] records to the shard
// file <dataid>.1 under a fresh random data id; a small object's shards
// (at most InlineLimit, 32 KiB, per drive) go into the index instead. All
// of this runs without the object's lock, so concurrent PUTs of one key
// overlap their transfers.
//
// After every writer has synced, the lock is taken (lockName), the
// drives' current records are read (readObjectNeed), preconditions are
// checked, and commitMeta has each drive apply one synced index batch:
// the record becomes [new version, previous version (meta.FlagPrev)],
// plus the new data's ref and any inline data. Fewer than write quorum
// (M, or M+1 when M == K; quorum.WriteQuorum) commits roll back to each
// drive's old record. Then a settling batch drops the previous version
// and the refs of the replaced data, whose files are unlinked once no
// reader pins them (pins.go). Phase timing of every PUT goes to
// Config.PhaseObserver.
//
// # Encryption at rest (encrypt.go)
//
// A version written with PutOptions.Encryption is sealed between hashing
// and erasure coding: the hashes (ETag, checksums) are of the plaintext
// the client sent, the coder and the drives see only ciphertext. Its
// erasure blocks are sse.EncryptedBlockSize of a plaintext block, so
// ciphertext block i is plaintext block i sealed: a range read opens only
// the blocks it returns, and healing rebuilds ciphertext shards without a
// key. Records keep the cipher and what the S3 layer needs to recover the
// object key (meta.Object.Sealed), never the key; a read gets the key
// back through GetOptions.Unseal, outside the key's lock. Package sse has
// the format; package kms the key servers.
//
// # Stragglers (fanout.go)
//
// The record reads, shard file opens and closes, the commit batch and
// the settling batch fan out to every drive (fanOut, fanOutStaged) and,
// once they have what they need, go on waiting for the rest only while
// those are not known to lag. A drive still running lagAfter (1 s, or
// four times what the quorum took, at most 10 s) after the quorum is
// marked lagging for 10 s and left behind; a drive marked lagging is
// waited for only a grace of twice the quorum's time (50 ms .. 1 s). A
// drive left behind (errSlowDrive) is out of the commit, its late calls
// finish in the background, the object is queued for heal, and a late
// shard file is an orphan the scanner removes. Ordinary jitter and a
// loaded CPU never leave a drive behind, so acknowledged objects keep all
// their shards; a frozen node costs about 1 s once, then the grace,
// instead of the drive timeout on every write (TestFrozenNode,
// TestSlowNode). An index batch left behind is counted (indexWrites)
// until it ends, and meanwhile every read of that key reports the drive
// as slow, so no commit, delete or heal builds on the record from before
// it. Bucket record copies wait for every drive: a late copy could
// overtake a later change.
//
// # GET (get.go, readobject.go, getstream.go)
//
// openObject takes the key's read lock (this process's only) just long
// enough to resolve the version and pin its data ids, then streams
// without any lock: an overwrite or delete proceeds, and the replaced
// data is freed when the last reader unpins it (in a cluster, not before
// ClusterConfig.FreeDelay, 10 minutes, for readers on other nodes). In a
// cluster the batch that drops a version from a drive also queues its
// free on that drive (TableSystem "freeq/<due>/<id>", freequeue.go), and
// the node the drive is attached to frees what is still queued FreeDelay
// after it came due: frees pending when a node is killed or restarted
// are no longer left to the scanner's orphan sweep (an hour). On a single
// node frees run at once and nothing is queued. A free that finds its drive offline is tried
// again every minute for half an hour (deleteFreed): a drive offline
// because it is full comes back only when such frees run.
//
// Resolving reads the records of a write quorum of drives first, those
// holding the data shards (firstReads, fanOutStaged; a committed version
// is on at least a write quorum, so if these agree no other version is
// current), and the rest only when one fails, they disagree, or 50 ms
// pass. On a cluster node the first wave is this node's drives and then
// whole other nodes, those holding more data shards first (nodeOrder). A
// record read brings the drive's inline shard (HoldsInlineShard), so a
// small object is decoded from what came; a record and inline shard in
// the drive's row cache cost no drive call at all (recordInMemory).
// quorum.Current decides which version is current (see package quorum):
// the version at least M drives hold, previous records counted after a
// commit cut short, pending copies, agreed settings.
//
// The reader (objectReader, getstream.go) reads only data shards and
// verifies each chunk's checksum; on a missing, corrupt or unreadable
// shard it reads parity instead, rebuilds, and queues a heal. Range reads
// touch only the covering blocks. A chunk and its checksum are read
// straight into the pooled block buffer in one drive call
// (drive.DirectReader, preadv on a local file), and the decoded block is
// written to the response from that buffer (WriteTo). A read given up at
// its deadline still owns its buffer (drive.ErrBufferAbandoned), so that
// block is decoded again in a fresh buffer and the old one is never
// pooled.
//
// In-place updates (an object's ACL, tags, retention or legal hold:
// updateVersionMeta) keep the version, so a drive that missed one still
// votes for it; the read takes the settings most copies hold
// (quorum.AgreedSettings) and the heal rewrites the stale copies
// (healSettings). A caller's WithUpdateCommitted hook
// (updatecommitted.go) is called once such an update is committed,
// under the key's lock.
//
// # Listing (list.go, listahead.go)
//
// Each set scans the bucket's range of the index on parity+1 drives in
// pages (drive.Scan with prefix, start-after and delimiter: the drive
// collapses a common prefix and seeks past it), merges them, and falls
// back to a quorum read only where scanned drives disagree. Only the
// first walked drive's records are read and decoded; the others answer
// with a digest of the same query (ScanQuery.Digest, drive/scandigest.go:
// one xxh3-128 over each key and its record's version stamp,
// meta.AppendStamp), so an agreeing drive moves 40 bytes per page. A
// drive whose digest differs is read record by record for the rest of
// the request and compared by stamp (meta.PeekCurrent); disagreeing keys
// get a quorum read. The S3 layer writes ListObjectsV2 by hand
// (s3api/xmllist.go).
//
// List-after-write (list_quorum.go): a set's listing needs whole scans
// of N-W+1 drives (listQuorum; W the write quorum), which every
// acknowledged PUT or DELETE reached. A walked drive whose first scan
// fails is replaced by the next online one, one failing mid-walk is
// dropped while enough remain; below listQuorum the listing fails with
// ErrReadQuorum (503). A key whose quorum read fails is left out (and
// healed) only when every drive that could complete a quorum answered
// and a second read found the same records (a damaged key is stable; a
// read that straddled another write's commit and settling is not, and
// is read again, up to 4 times, then 503: list_reread.go, finding L3);
// otherwise the listing fails, as a GET of the key would.
//
// List read-ahead: once a ListObjects page (ListOptions.ReadAhead) is
// answered truncated, the engine makes the next page in the background.
// Freshness comes from the drives: each Local counts, per bucket, the
// index commits that touched the bucket (drive.ChangeCounter,
// drive/changes.go). A page made ahead answers its request only if every
// drive's marks are unchanged when the request arrives; otherwise it is
// dropped and the request lists again. Remote or offline drives give no
// mark, which turns read-ahead off. Bounded: 16 pages kept, 4 being made,
// 10 s unclaimed; metrics shardstore_list_readahead_*_total.
//
// # Versioning (versions.go, versionlist.go)
//
// A bucket's state (BucketInfo.Versioning: "", Enabled, Suspended)
// decides what a commit does with the version it replaces. A commit of a
// new version takes its time and version id under the key's lock (the id
// is the time in hex plus 64 random bits, so it locates its versions
// table entry; time is strictly increasing per key; versions adopted
// from MinIO keep MinIO's UUIDs, found by scanning the key's versions
// range, ImportBatch in import.go), and the replaced
// version stays in the record as FlagPrev|FlagKeep; once the commit has
// write quorum the settling batch moves it into the versions table (in a
// Suspended bucket unless it is the null version, which the new null
// version replaces). A lost settling batch leaves it pending in the
// record: reads, listings and the next commit see it there, and a heal
// finishes the move. A delete without a version id makes a delete marker
// (FlagDeleteMarker) current. Deleting the current version by id promotes
// the newest noncurrent version with quorum. ListObjectVersions walks the
// merged key scan and, per key, that key's versions range on parity+1
// drives, more where scans fail, and refuses (ErrReadQuorum, 503) when
// fewer than N - write quorum + 1 drives answer or a version the drives
// disagree on has no read quorum: it never answers without versions it
// could not read (finding V1 of docs/consistency.md). The head comes from
// the key scan, earlier than the versions range: when the range holds
// the head or newer versions, a write replaced the head meanwhile, so it
// is read again by quorum and the versions newer than the new head left
// out, and one answer never lists a version twice or a replaced one as
// latest (finding V2). Healing a key in a versioned bucket also heals each of its
// versions (healVersions).
//
// # Multipart (multipart.go)
//
// The upload and each part are index records; every part upload writes
// its shard files under its own fresh data id, so a re-upload never
// overwrites bytes another attempt or the completion may use. Complete
// validates order, ETags and sizes and commits an object whose parts
// point at their data ids, like a PUT, then drops the upload's records
// and the unlisted parts' data. ETag: MD5 of the part MD5s, then "-N".
// An upload's checksum algorithm and type (FULL_OBJECT or COMPOSITE) are
// fixed at its creation; each part is hashed with that algorithm (a part
// sent with another is refused before its body is read), and the part
// record keeps its checksum and algorithm. The object's checksum is made
// from the part checksums alone, never by reading the data again: the
// CRCs combined into the whole object's CRC, or the checksum of the part
// checksums with "-N" (completeSums, package hashing).
// Upload ids are the engine's UUIDs, or MinIO's (IsMinIOUploadID): an
// upload adopted from MinIO's drives keeps its id (importupload.go,
// ImportUploadBatch) and its bitrot algorithm, with which its later parts
// are written too (writePlan.algo), so every part of the completed
// object is read with the one algorithm the object records.
//
// # Locks and fencing (lock.go)
//
// One RWMutex per key, created on demand; on a cluster the lock is then
// taken on a majority of nodes (ClusterLocker, package dlock), and the
// commit runs under a context that ends when the lease is lost
// (nsLock.LockCtx). Only the commit's index batches are exclusive. Every
// wait is bounded (LockTimeout, 30 s) and ends in ErrBusy (503 SlowDown).
//
// A writer that stalls past its lease (GC, swap, a stopped VM) is fenced
// by the drives: every batch that changes an object's record carries the
// condition that the drive still holds the record this writer read
// (drive.Batch.Expect: the xxh3-128 of the value, or its absence),
// checked atomically with the batch (drive.ErrConflict otherwise). A
// later writer reached at least a write quorum, so the stale commit falls
// short of quorum and fails with 503. This is compare-and-swap rather
// than fencing tokens: no counter has to survive restarts or be ordered
// across lock grantors, and the same check refuses a left-behind drive's
// late batch, a rollback over someone else's record, and a stale settle
// or heal (TestStaleWriterIsFenced).
//
// # Crash safety
//
// Shard data is durable before the index batch that references it, and
// nothing is visible before that batch; shard files left with no ref are
// removed by the scanner once older than OrphanGrace (1 h). While a commit
// replaces an object each drive keeps the version readers see now as
// FlagPrev in the same record, so an interrupted overwrite leaves the
// last acknowledged version readable (quorum.Current counts previous
// records; the heal promotes them back), unless the drives not heard
// could hold the rest of the new version's write quorum: then the read,
// the heal's recovery (recoverVersion) and a versioned commit fail with
// read quorum until they answer (finding R1 in docs/consistency.md).
// Replaced data is freed only
// after the new version has quorum. After an unclean start (the running
// marker, running.go) listings confirm every key by quorum until the
// recovery sweep has finished.
//
// # Drive health
//
// Every drive opened from paths is wrapped in drive.Health: per-operation
// deadlines (a hung syscall returns ErrDriveFaulty instead of hanging a
// request), errors take a drive offline, a probe brings it back. Full
// drives (ErrDriveFull) stay online for reads; a write that loses quorum
// to them fails with ErrStorageFull (507).
//
// # Healing and the background jobs
//
// The engine heals one object (HealObject, healobject.go: under the key's
// lock, rebuild what is missing, stale or corrupt from the intact
// shards, remove remnants too few drives hold). When to heal is decided
// by internal/background: the data path queues keys it found degraded
// (backgroundJobs.QueueHeal), and the scanner, drive monitor and recovery
// sweep walk the drives. The jobs call back through background.Engine,
// implemented here by jobsSide (background.go). Engine.Heal serves
// `shardstore admin heal`. Config.AfterScanCycle runs after every scanner
// cycle (shardstore sets lifecycle.AfterScanCycle); DeleteObjectIf lets
// the lifecycle runner judge a rule again under the object's lock.
//
// # Object lock (objectlock.go)
//
// Rules are in internal/objectlock. A lock-enabled bucket keeps its
// configuration in BucketInfo.ObjectLock and stays versioned. Each
// version's retention and legal hold are trailing fields of its
// meta.Object, set from PutOptions.Lock or the bucket's default retention
// at commit (commitMeta, on the engine clock Config.Now), and changed by
// SetObjectRetention / SetObjectLegalHold (objectlock.CheckChange).
// checkRemovable guards every path that destroys a version:
// DeleteObjectVersion, the unversioned delete, a commit that drops the
// version it replaces, and the healer's removal of versions below read
// quorum (lockedRemnants). DeleteBucket refuses while any version exists.
//
// # On a cluster (cluster.go, clusterstate.go, nodecall.go)
//
// Each node runs this engine over the whole deployment's drive list: its
// own drives are drive.Local, the others' driverpc.Client, all behind
// drive.Health, so a node that is down is a set of offline drives. Calls
// that save round trips: a GET's record read asks for the inline shard
// too (drive.RecordReader); the record reads of one GET or PUT on the
// drives of one node go as one call (drive.NodeRecordReader, recordBatch);
// a commit's batches, the clean-up after it, deletes and multipart
// records go as one call per node (drive.NodeApplier, applyGroups,
// grouped, forEachDriveGrouped). Each drive's part of a grouped call is
// still its own Health operation, so timeouts and lag stay per drive.
// The heal, rollbacks and shard streams are one call per drive.
// ClusterConfig says which node this is, how to take cluster locks,
// where shared state lives (raftState) and whether the scanner runs here
// (ScansHere: the consensus leader).
package engine
