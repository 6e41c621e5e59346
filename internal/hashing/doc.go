// Package hashing computes the digests a PUT needs — the MD5 ETag, the S3
// flexible checksum the client sent (CRC32, CRC32C, CRC64NVME, SHA1,
// SHA256), a fast content hash for ETagFast mode — beside the data path
// rather than in front of it, through pluggable backends chosen per stream
// by a policy. It also holds the S3 checksum arithmetic (composite
// multipart checksums, full-object CRC combination, multipart ETags) and
// the rules of S3's checksum types (which algorithm allows FULL_OBJECT
// or COMPOSITE, and a whole-object value's "-N" part count).
//
// # Backends
//
// Every backend implements Stream: the caller hands over pooled blocks
// and gets them back through a release callback, so hashing shares the
// engine's bounded buffer pool instead of copying.
//
//   - inline: hashes inside Write on the request goroutine. Cheapest in
//     CPU (no hand-off), but MD5 (about 0.7 GB/s per core here) then runs
//     in series with erasure coding and drive writes.
//   - pipelined: one goroutine per stream hashes the same blocks while the
//     request goroutine erasure-codes and writes; Sum (before the commit)
//     waits for it. The queue holds at most QueueDepth blocks, so a slow
//     hasher applies back-pressure instead of draining the pool.
//   - multibuffer: the per-stream goroutine feeds a shared multi-lane MD5
//     service (internal/md5lanes: 16 streams per service goroutine, an
//     AVX2 kernel over 8 or 2x8 lanes that reads the pooled blocks in
//     place). A kernel call costs the same however many lanes carry data,
//     so the service waits (boundedly) for every open stream's next block
//     and the count of streams decides the price: measured on the 2-core
//     AVX2 machine this was written on, one stream costs 1.5x crypto/md5's
//     CPU per byte, two 0.78x, four 0.4x, sixteen about 0.15x. Paying for
//     lanes it could not fill is why MinIO's multi-buffer experiment lost,
//     and why the policy gates this backend on stream count.
//   - device: an accelerator with a bounded queue (Device; SimDevice
//     simulates one). Because MD5 is sequential, a stream takes a whole
//     device lane at its start; a full queue mid-stream, or more than
//     DeviceInflight of its blocks still on the device (it is falling
//     behind and would starve the upload's block pool), makes it detach,
//     take the MD5 state back and finish on the CPU (see Device).
//
// Only MD5 goes to the multibuffer and device backends. The other hashes
// of a stream run wherever its CPU work runs: on the stream's goroutine
// for pipelined and multibuffer, inline for inline and device. CRCs and
// XXH3 run at many GB/s per core and never justify a hand-off on their
// own; SHA1 and SHA256 do, like MD5.
//
// # Policy
//
// PolicyAuto (the default) applies the lessons of the offload study
// (11 % gained for 128 MB objects on a CPU-starved server, nothing for
// 4 MB objects, nothing or worse with spare cores):
//
//  1. Streams with only cheap hashes stay inline.
//  2. Offload only when the CPU is the bottleneck: Load.Busy() at or above
//     BusyThreshold, or as many heavy streams as CPUs. Then, for objects of
//     at least MinOffloadSize (2 MiB), a device lane if one is free (never
//     waiting for one); else the multi-lane service if at least
//     MultibufferMinStreams (2) heavy streams of at least
//     MultibufferMinSize (1 MiB) are active: it saves CPU per byte, so
//     unlike a device it pays for 4 MiB objects too.
//  3. Large objects with fewer heavy streams than CPUs: pipelined, so a
//     lone upload overlaps MD5 with erasure coding instead of paying for
//     it in series. The hand-off costs microseconds per MiB, so if other
//     work takes the spare core it is no slower than inline; this rule
//     ignores the load signal, which after an upload still shows that
//     upload's own hashing.
//  4. Everything else inline: small objects have too little to overlap,
//     and with as many hashing streams as CPUs no core is free to take a
//     hand-off.
//
// Streams cannot change backend mid-stream (the MD5 state lives in the
// backend), so the policy counts concurrency as the recent peak
// (ConcurrencyWindow) whenever more than one stream is active: the first
// streams of a burst of uploads are placed as the burst will be, while a
// lone upload is always treated as lone.
//
// A full device queue never blocks an upload: Open refuses when no lane
// is free, and a stream whose Submit is refused moves to the CPU; after
// such a fallback auto keeps new streams off the device for
// DeviceBackoff. The CPU-load signal comes from a LoadSource
// (internal/cpustat's sampler implements it); without one the engine
// reads the machine as idle and decides from stream counts alone.
//
// Digests report the backend, the time spent hashing (HashTime) and the
// time the commit waited for it (SumWait), for the engine's phase
// accounting; Engine.Stats aggregates them for metrics.
package hashing
