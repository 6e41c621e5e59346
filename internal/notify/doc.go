// Package notify sends bucket event notifications and audit records to
// external systems (webhooks, message brokers, databases) without losing
// one: records are queued durably on the drives before the request that
// caused them is answered, and delivered at least once, in order per
// object key, with retries while a target is down.
//
// The seam is Target (target.go): one external system. The kinds of
// target live in package notifytarget, one file each; this package knows
// none of their protocols.
//
// # Pieces
//
//   - config.go, names.go: a bucket's NotificationConfiguration, parsed
//     and validated as S3 does (ParseConfig: Queue/Topic/CloudFunction
//     rules, event names with :* wildcards, prefix/suffix filters,
//     overlapping rules of one target, unknown ARNs); Config.Match says
//     which targets an event goes to and under which spelling of its
//     name (MinIO's, or AWS's alias a rule subscribed).
//   - event.go: Event.Delivery makes the S3 event record and MinIO's
//     envelope {"EventName","Key","Records"} (Delivery.Payload).
//   - audit.go: AuditEntry, one request's audit record (MinIO's shape).
//   - queue.go, frame.go, pipeline.go: Queue, one target's durable
//     queue, and its lanes of delivery.
//   - hub.go: Hub, the node's targets and their queues; Publish and
//     Audit append to them; Enqueue places an event without waiting and
//     returns the wait (the S3 layer enqueues under the key's lock at
//     commit, so a key's records are in commit order).
//   - eventjson.go: the S3 event message written by hand (the bytes
//     encoding/json gives the equivalent structs, checked by a test and
//     a fuzz target), about 7 times cheaper on the PUT's path.
//   - env.go: FromEnv, targets from MINIO_NOTIFY_<KIND>_<FIELD>[_<ID>]
//     (and SHARDSTORE_..., MINIO_AUDIT_...), generic over Kind.Fields.
//   - targetstore.go: TargetStore, the targets added at run time, kept in
//     the "notify" config document with secret settings sealed, applied
//     to the hub on every node (Reload).
//
// # The queue
//
// Append frames the record ([len][crc32c][payload]) into the buffer of
// one writer goroutine that writes every waiting record with one write(2)
// and one fdatasync(2) per directory (in parallel), and returns once
// the record is synced on every directory that works (at least one):
// concurrent requests share syncs. The records of one write are a round:
// the first record of a round wakes the writer, and the round's end (one
// channel closed) wakes all its waiters, not a channel per record. The sync is the file's fdatasync, or
// what QueueConfig.SyncWith gives the directory (syncwith.go: the
// server passes the drives' shared syncfs where they share the
// directory's filesystem). Enqueue is Append's first half: the
// record is placed in the writer's buffer, after every record placed
// before it, and the returned wait is the second half. The directories are on the node's
// own drives, one per filesystem, up to parity+1 (cmd/shardstore picks
// them, as for the access log spool). A directory whose write fails is
// dropped from the open segment with a warning. Segments are files of
// about 4 MiB (<seq>.seg, the same name in every directory); a new one
// is created, and its directory synced, when the open one is full.
//
// One sender goroutine reads the records in order from the files (never
// holding the backlog in memory; segreader.go reads them 64 KiB at a
// time, below the synced end) and hands each to one of Parallel
// lanes (pipeline.go; default 16, the target's parallel setting, capped
// by Kind.MaxParallel) chosen by a hash of its key. A lane calls
// Target.Send for its records one at a time, in queue order, and moves
// on only when Send returned nil; an error is retried after an
// exponential backoff with jitter (RetryMin doubling to RetryMax), per
// lane, while the other lanes go on. So up to Parallel records are in
// Send at once, never two of one key, and each key's records arrive in
// queue order; Parallel 1 sends every record in queue order. At most
// 4 records a lane are read and not yet acknowledged.
//
// Acknowledgements settle in read order: the position reached, written
// to a small CRC-checked cursor file every 256 records or second (also
// when the sender has caught up: at most once a second then, not at
// every catch-up) and at every segment change (written and renamed, not synced: a lost cursor
// resends records, which at least once allows), is the end of the
// longest run of acknowledged records, so it never passes a record not
// acknowledged; a crash resends that record and the ones after it. A
// segment is deleted once it was read to its end, the writer has left
// it and every record in it (and before it) was acknowledged. At open,
// every directory's cursor and segments are read; a segment's longest
// valid copy (frames up to the first one cut short or failing its CRC)
// is sent from the furthest cursor on.
//
// Bounds: MaxRecords and MaxBytes of records not yet settled; a full queue
// refuses with ErrFull at once. The S3 layer answers the request anyway
// (it has been done) and the hub logs the refusal at most once a minute
// per target; the counter is in Stats (shardstore_notify_refused_total).
//
// More: docs/notifications.md.
package notify
