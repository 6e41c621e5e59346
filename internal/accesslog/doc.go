// Package accesslog keeps S3 server access log records durably until
// they are delivered as log objects, and writes them in S3's log format.
// It knows nothing of HTTP or of the engine: package s3api makes the
// records (Record, one per request on a bucket with ?logging) and
// delivers the objects (Config.Deliver, s3api's DeliverAccessLog); this
// package is the spool between the two.
//
// # Durable before the answer
//
// shardstore acknowledges nothing that is not durable, and a request's
// log record is part of what its answer acknowledges: a record must
// survive a kill -9 the moment the client has seen the answer. So
// s3api calls Spool.Append just before the answer's first byte, and
// Append returns once the record is synced:
//
//   - Appends are group-committed. Records wait in a buffer; one writer
//     goroutine writes the buffer with one write(2) per spool directory
//     and one fdatasync(2) per directory (in parallel), then releases
//     every waiter at once. While it syncs, new records gather for the
//     next round, so concurrent requests share syncs.
//   - The spool directories are on the node's own drives
//     (.shardstore.sys/accesslog, chosen by cmd/shardstore: one drive per
//     filesystem, up to parity+1 of them), so spooled records survive as
//     many lost drives as the objects do where the node has that many
//     filesystems, and survive any crash of the process. A directory
//     whose write fails is dropped from the batch with a warning; the
//     record is durable if any directory took it.
//   - Spool.Amend adds the record's final form (bytes sent, total time)
//     once the answer is complete, without waiting: the page cache keeps
//     it across a kill, the batch's close syncs it, and on replay it
//     replaces the first form. If the batch closed in between, the
//     amendment is dropped and the first form stands (Append's
//     generation number says), so a request is never in two batches.
//
// A record that cannot be kept (ErrBacklog: more than MaxBacklog bytes
// wait for delivery, or no directory could be written) is refused and
// counted; s3api answers the request anyway, since the request itself
// has been done, and logs a warning at most once a minute.
//
// # Batches and delivery
//
// A batch is one segment file (<seq>-<random>.seg in each directory),
// closed after Config.Interval (default 5 minutes), MaxRecords (10000)
// records or MaxBytes, as S3 collects records "periodically". A closed
// segment is never written again; the deliverer reads every copy of it,
// merges them (a record any copy holds is kept, its final form if any
// copy has one; a frame cut short or failing its CRC-32C ends a copy:
// that is the tail a crash left, whose requests were never answered),
// and groups the records into log objects: one per source bucket and
// destination (and per day, for keys partitioned by event time), sorted
// by time. Keys are S3's:
//
//	TargetPrefix + YYYY-mm-DD-HH-MM-SS-UniqueString
//	TargetPrefix + SourceAccountId/SourceRegion/SourceBucket/YYYY/MM/DD/YYYY-mm-DD-HH-MM-SS-UniqueString
//
// where the time is the group's last record's and UniqueString is a
// hash of the segment's name and the group. Everything about a
// segment's objects follows from the segment alone, so delivering it
// again after a crash writes the same objects under the same keys: an
// overwrite, never a duplicate.
//
// After its objects are delivered, a segment is renamed to .done in
// every directory (directories synced) and then removed; a .done mark
// found at start means delivered, so a copy that missed records is
// never delivered over a complete object. A delivery that fails is
// retried with backoff (1 s doubling to 5 min), the objects already
// delivered not again; one that can never succeed (ErrUndeliverable:
// the target bucket is gone, has another owner, has object lock, or
// its policy denies the delivery) drops its records with a warning
// naming the source, the target and the count. At start, Open queues
// every segment an earlier run left; Close delivers what it can within
// its context and leaves the rest for the next start.
//
// # Cost
//
// A logged request waits for one group-committed write and fdatasync
// of a few hundred bytes per spool directory before its answer starts;
// an unlogged one pays nothing here (s3api decides with a lookup of the
// cached bucket record). Measurements: docs/performance.md, "Server
// access logging".
//
// # Format
//
// Record.Line writes S3's space-separated fields. Unquoted fields never
// contain a space, quote, bracket or control character (keys are
// URL-encoded, other values escape such bytes as \xHH), and quoted
// fields escape '"', '\', control characters and bytes that are not
// UTF-8 the same way, so that a hostile key, user agent or request line
// can neither add a field nor a line to the log.
package accesslog
