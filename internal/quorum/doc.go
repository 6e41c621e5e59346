// Package quorum decides which version of an object a set of drives
// agrees on, from what each drive's index holds. It does no I/O and keeps
// no state: the engine reads the drives (in parallel, in waves, leaving
// slow drives behind) and hands the records here; what to do about the
// answer (return it, fail the request, queue a heal) stays with the
// engine.
//
// # The set and its records
//
// An object is erasure-coded over the N drives of one set into M data
// and K parity shards (N = M+K, per object; meta.Erasure). Each drive
// keeps, per key, one record (meta.Record) naming the versions it knows:
// normally just the current one. Records of one version on different
// drives differ only in the shard they describe; meta.Object.SameVersion
// tells whether two records are of one version.
//
// A drive can also have no record (it answered "not found": absent), or
// its answer can be missing: the drive is offline or failed, its record
// did not decode (meta.ErrCorrupt), or the engine did not wait for it (a
// drive known to lag) or did not ask it (a GET reads only as many drives
// as it needs first). All of those count alike here, as no vote; the
// engine's per-drive error tells them apart for the heal.
//
// # Quorums
//
// A write reaches WriteQuorum drives before it is acknowledged: M, or
// M+1 when M == K, so that two halves of a set cannot both take a write
// (any two write quorums overlap).
//
// A read needs M drives that hold the version (read quorum: M shards
// rebuild the data). Current picks the version most drives hold as
// current (the newest on a tie) and settles on it when at least its M
// drives hold it. When no version has that many, the key is either
// absent (so many drives hold nothing that no version could be on M of
// them: Result.NotFound) or unreadable (the engine's ErrReadQuorum),
// Result.Votes and Result.Need saying how far it is.
//
// # Commits cut short: previous records
//
// A commit writes, on each drive, the record [new version, replaced
// version marked meta.FlagPrev]. Until the commit has write quorum the
// replaced version is still what readers should see. If the process dies
// between, some drives hold the new version, some the old one, and maybe
// neither has M: then Current counts each drive's previous record as
// well (Result.FromPrev), so the last acknowledged version stays
// readable; the drives holding it as previous are HoldsPrev, and the heal
// makes it current there again and removes the version that never
// reached quorum.
//
// Only when the new version cannot have reached its write quorum,
// though: its holders heard plus the drives not heard must be fewer.
// Otherwise the commit may have been acknowledged with the drives the
// reader cannot hear (a partition, the new version's settling batch held
// back on the reader's side), and answering the replaced version would be
// a stale read, and the heal would roll back an acknowledged write: the
// key is unreadable until those drives answer (finding R1 in
// docs/consistency.md). Superseded is the same test for a version the
// heal recovers without read quorum of current records.
//
// # Pending copies
//
// In a versioned bucket the replaced version is kept (meta.FlagKeep on
// the previous record) and, once the commit has quorum, a second
// "settling" batch moves it to the versions table. Until that batch runs
// (or if a crash loses it) the record holds the replaced version as a
// pending copy: Result.Pending says so, and the heal settles it. Settle
// says, for one drive's record, which versions it moves and which it
// drops; PendingVersion reads a pending copy, for listings of versions.
// A noncurrent version is settled by Noncurrent from each drive's copy of
// it, a pending one included, by the same rule (no previous records).
//
// # Agreed settings
//
// An in-place update (an object's ACL or tags) rewrites the version's
// records without making a new version, so a drive that missed one still
// votes for the version, with old settings. The update reached a write
// quorum, more than half of the set, so the settings most holders have
// are the current ones (AgreedSettings). The heal rewrites a holder whose
// settings differ (SameSettings). Decided tells a reader when the drives
// heard so far already decide the version and its settings.
//
// # What a heal rewrites
//
// From a Result, per drive: Holds needs nothing unless its settings
// differ from Result.Version's or its shards turn out missing; HoldsPrev
// gets the version made current again; Stale gets its record replaced
// (and the shards of the settled version rebuilt); Absent gets the
// record and shards; Unknown is left to the drive's own error (offline
// drives are healed when they return, a corrupt record is rewritten).
//
// The decisions are tested from testdata/*.txt (see quorum_test.go for
// the notation), in the way etcd's raft tests its quorum package.
package quorum
