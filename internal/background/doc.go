// Package background runs the engine's background jobs: the work nobody
// asked for that keeps every object on all the drives of its set, and the
// scanner cycle that other periodic work hangs from.
//
// # The two sides
//
// The jobs decide when and how fast; the engine does the work on the
// data. Two interfaces join them, one each way (as pebble pairs its
// CompactionScheduler with DBForCompaction):
//
//   - Engine (jobs.go) is what the jobs call: the drives and sets, the
//     bucket names, the keys of a bucket straight from the drives,
//     healing one object, repairing bucket records, sweeping a drive's
//     orphan shard files, checking (and adopting) a drive in its slot.
//     engine/background.go implements it; healing one object stays in
//     the engine (engine/healobject.go) because it needs the erasure
//     sets, the key locks and the quorum rules.
//   - *Jobs is what the engine calls (its backgroundJobs interface):
//     QueueHeal from the data path when a read rebuilt around a bad
//     shard or a write missed a drive; Status, Queued, RefillsDone and
//     BucketUsage for the admin API, metrics and console; Walk for an
//     operator's heal; Stop on Close.
//
// The jobs keep their own records in the drives' system table: the heal
// queue (queue.go), the bucket usage of the last cycle (usage.go) and a
// replaced drive's refill progress (refill.go).
//
// # The loops
//
// Start launches them; Config tunes them (engine.Config.Heal).
//
//   - The heal queue's loop (queue.go): every 250 ms, or at once when
//     something is queued, take up to 64 entries that are due (an entry
//     waits QueueDelay after it is queued: a drive that blinked is often
//     back by then) and heal each. An entry whose heal failed or could
//     not reach every drive goes back with exponential backoff; one whose
//     bucket is gone is dropped. Every second the changes to the queue are written to
//     every drive, so a restart heals what the last run had queued.
//   - The scanner (scan.go): every ScanInterval, walk the namespace
//     bucket by bucket, key by key as the drives hold them (not as a
//     listing resolves them: the walk must reach the remnants a listing
//     cannot see), and heal each object: missing or stale shards and
//     records are rewritten. Every DeepScanEvery-th cycle also reads and
//     verifies every chunk (bitrot). After a full cycle, shard files no
//     record names (older than OrphanGrace) and uploads without quorum
//     are removed; each bucket's object count and bytes are published
//     and saved on the drives; then the engine's after-cycle work runs
//     (Engine.AfterScanCycle: shardstore's lifecycle pass,
//     internal/lifecycle).
//   - The drive monitor (refill.go): every MonitorInterval, read every
//     drive's format. A blank drive in a known slot is adopted (the
//     engine formats it and marks it for refill), and a drive marked for
//     refill, or blank while buckets exist, is refilled: every object of
//     its set is healed onto it, its place saved on the drive every
//     second so a restart resumes there.
//   - The recovery sweep (scan.go): after an unclean stop (the engine
//     found its running marker), heal every key at once; until it has
//     healed every key without failure the engine's listings confirm
//     each key by quorum (Engine.RecoveryDone).
//
// # The throttle
//
// The scanner, the refills and the lifecycle pass rest after each object
// as long as it took, times ScanThrottle (clock.go, throttle): "rest as
// long as the work took" keeps a drive busy at most half the time
// however fast or slow the drives are, with no rate to tune per
// deployment. Refills and the recovery sweep rest a quarter as long: a
// drive short of its shards is worth more of the drives' time. An
// operator's heal (Walk) never rests.
//
// # The clock
//
// Every wait and every time the jobs report comes from Config.Clock
// (the system clock unless a test injects one), so a test drives a whole
// cycle by moving a fake clock (fake_test.go). The engine's own clock,
// engine.Config.Now, which lifecycle rules and retention are judged by,
// is a separate one.
//
// # Who runs where in a cluster
//
// Every node runs its own heal queue (persisted under its node's name,
// Engine.NodeRecord) for what its own requests found degraded, and
// adopts and refills only the drives attached to it (Engine.Owns). The
// scanner cycle, and the lifecycle pass after it, run only where
// Engine.ScansHere says so, the consensus leader: every node sees every
// drive, so one walk at a time is enough. The other nodes publish the
// usage the scanning node saved and report ScanElsewhere. A leader
// deposed mid-cycle finishes it (healing is safe to repeat under the
// engine's locks).
//
// # Adding a job
//
// A job that runs on its own schedule is a loop here, started in Start,
// counted in Jobs.wg, waiting with Jobs.sleep so Stop ends it, pacing
// itself with throttle, and asking the engine for what it needs through
// a new method of Engine. A job that should run once per scanner cycle
// on the scanning node is after-cycle work (engine.Config.AfterScanCycle)
// if it works through the engine's public API, as the lifecycle pass
// does.
package background
