// Package jepsen is a Jepsen-style fault harness for a shardstore
// cluster on one machine: it starts N node processes of the real
// binary, drives them with concurrent S3 clients through different
// nodes while nemeses break the network and the processes, records
// every operation with its invocation and completion time and outcome,
// and checks the history against the consistency model that
// docs/consistency.md writes down.
//
// # A run, step by step (Run in run.go)
//
//  1. The network (netns.go, proxynet.go). As root with the ip tool,
//     every node gets its own network namespace: its peer address
//     10.S.0.(i+1) on its loopback, its client address 10.S.1.(i+1) on
//     a veth bridged to the test's namespace, and one veth "cable" per
//     other node through a two-port bridge in the test's namespace.
//     A partition takes the bridge ports of the cut pairs down: the
//     nodes' ends lose carrier, routes stay, packets vanish, so calls
//     hang and connections time out as on a real split (no iptables or
//     tc needed; the kernels of these machines have no packet
//     filters). Elsewhere (not root, no ip) every ordered pair of nodes
//     talks through a TCP proxy named in SHARDSTORE_PEER_ROUTES, which
//     holds the bytes of a cut link. SHARDSTORE_JEPSEN_NET=netns|proxy
//     picks one. A network records its owner (/run/shardstore-jepsen/ID:
//     the test's pid); making one first removes the namespaces and
//     devices of networks whose owner died (a test killed before its
//     cleanup), netns_clean.go. The clients are never partitioned from a node: a node
//     on the minority side keeps receiving requests, which is the
//     interesting case.
//  2. The cluster (cluster.go): StartCluster runs `shardstore server`
//     per node (default 5 nodes x 2 drives, --drive-timeout 3s, plain
//     HTTP), waits for readiness, then setup makes the buckets and
//     waits until a write succeeds through every node (a cluster that
//     just started grants no lock for a lease's length).
//  3. The workloads (workload.go): 2 clients per node on the register
//     workload, 2 on the versioned one, each bound to one node, using
//     aws-sdk-go-v2 at its default settings except a single attempt
//     per request (a retried write is several writes: the history would
//     lie). Register: GET, PUT, PUT If-None-Match: *, PUT If-Match
//     (the ETag of the last value the client saw), DELETE and
//     ListObjectsV2 on 8 keys that change every 30 s (so each key's
//     history stays short). Every written value is unique ("c3.17":
//     client 3's 17th), so a read names the write it saw, and a
//     listing's ETag names it too (MD5 of the value). Versioned: PUTs of
//     new versions to 3 keys, recording the version id, and
//     ListObjectVersions. Multipart (workload_multipart.go, one client):
//     create an upload, send a 5 MiB part and a part holding the value,
//     complete; and GETs of the 3 multipart keys of the epoch, whose
//     bodies must be the two parts of one upload byte for byte.
//  4. Outcomes (Op, history.go): ok; fail when the operation certainly
//     had no effect (a 412, a 404 for If-Match on a missing key, a read
//     that failed, a refused connection, a node still starting); unknown
//     for a write that timed out (10 s) or failed after it was sent.
//     Clients back off after errors (100 ms, 1 s after an unknown).
//  5. The nemeses (nemesis.go): partition-halves (5 nodes: 2 | 3),
//     partition-isolate (one node alone), partition-bridge (two sides
//     and one node seeing both), kill (kill -9 of one or two nodes,
//     restarted at the end of the round), pause (SIGSTOP for 35 s, past
//     the 30 s lock lease, then SIGCONT), rolling-restart (SIGTERM and
//     start, node by node), disk-full (as root: every drive is a 256 MiB
//     tmpfs; one node's drives are filled to ENOSPC, emptied when the
//     round ends; a node that died of it is restarted and the event
//     recorded; the run records its owner in /run/shardstore-jepsen/
//     drives-HASH, pid and directory, and a later run unmounts the
//     tmpfs drives of owners that died, drivemounts.go),
//     partition-oneway (one node's packets to two or all others
//     dropped while theirs reach it: a blackhole route in its
//     namespace, or its proxied connections held). With the test build
//     (below): clock-skew (one node restarted with its clock 5 s to 8 min
//     either way, SHARDSTORE_TEST_CLOCK_OFFSET, internal/wallclock; then
//     restarted right), slow-disk (one node's drives answer 50 ms to 4 s
//     late) and failing-disk (1 call in 2, 5 or 20 fails with EIO), both
//     switched at run time through the file SHARDSTORE_TEST_DRIVE_FAULTS
//     names (internal/drivefault). A round holds one network fault, one
//     process or disk fault, or both at once for 12 s, with 5 s of health
//     between rounds; the first rounds go through the chosen kinds in
//     order. Go reads the clock through the vDSO, not libc, so
//     libfaketime cannot shift it: hence the hook.
//  6. The end: faults healed, dead nodes restarted, paused ones
//     continued, and once writes go through every node again, every key
//     (the multipart ones too) is read and every prefix listed through
//     every node. Those final
//     reads are part of the history: an acknowledged write that was lost
//     cannot be linearized.
//  7. The checkers (checker.go): per key, linearizability against a
//     register model (state: the current value or absent) with
//     anishathalye/porcupine, where GETs and each listing's view of the
//     key are reads, conditional PUTs succeed only if their condition
//     holds and a refused one proves it did not, and an unknown write
//     stays open until the end of the history (porcupine may place it
//     anywhere after its call, the end included, where it changes
//     nothing anyone saw: Jepsen's treatment of indeterminate
//     operations). On the versioned bucket, every listing: no version
//     id twice and no write under two ids within one response page (a
//     listing of several pages is no snapshot), no phantom (a version
//     whose ETag no write to that key had), ids as the PUT's answer
//     named them, every version acknowledged before the listing began
//     present, newest-first order respecting real time within a page,
//     and only a key's first version on a page flagged latest.
//
// # The binaries
//
// TestMain builds shardstore with -tags testhooks: the release code,
// plus two hooks read only when their variables are set (a clock
// offset read at start, drive faults from a file). Without them the
// build behaves as the release; TestReleaseIgnoresClockOffset checks that
// the release binary ignores the offset and the test build honours it.
// TestBrokenBuildCaught (nightly) builds with -tags
// jepsen_broken_readquorum, where quorum.Current takes one drive's record
// for the current version, runs the CI slice on it and fails unless the
// checker reports anomalies.
//
// # Running it
//
//	go test -run TestSlice -v ./test/jepsen          # CI's slice, ~2.5 min
//	SHARDSTORE_JEPSEN_MINUTES=30 go test -run TestNightly -timeout 60m -v ./test/jepsen
//	SHARDSTORE_JEPSEN_BROKEN=1 go test -run TestBrokenBuildCaught -v ./test/jepsen
//
// SHARDSTORE_JEPSEN_SEED replays a nemesis schedule (the timing of a
// real cluster is not replayable; the schedule and the clients' choices
// are), SHARDSTORE_JEPSEN_OUT=DIR writes each run's history (JSON) and
// report there, and every node's log (logs-seedN/nodeI.log),
// SHARDSTORE_BIN runs a prebuilt binary (without -tags testhooks the
// clock and disk nemeses are left out, saying so).
//
// After the final listings, every acknowledged version that none of them
// listed is asked for by its version id (HEAD and GET) through every
// node, and the answers are logged ("probe: ..."; with an OUT dir, one
// line a version in unlisted.txt): a version that is unlisted but
// readable is a listing bug, one that every node answers 404 for is
// lost. SHARDSTORE_JEPSEN_KEEP_DRIVES=1 (with OUT) also copies the
// stopped cluster's drives to OUT/drives, to inspect their records.
// SHARDSTORE_JEPSEN_TMPFS=SIZE (e.g. 256m) sizes the drives' tmpfs in a
// run with disk-full (1g by default: H1), and SHARDSTORE_JEPSEN_REREAD=1
// then reads back every acknowledged version by id as the run left the
// cluster, after the drives were grown (space freed, nodes untouched)
// and after every node restarted, also when the heal failed (reread.go:
// unavailable or lost, finding V4); a version the last round does not
// read back is an anomaly, reread/lost (404) or reread/unavailable.
//
// # Reading a failure
//
// The report counts operations by kind and outcome, faults by kind, and
// anomalies by checker and type, and prints the first few of each type
// with an excerpt of the key's history: [call return] client node
// operation key value → outcome. Times are seconds since the workload
// began; the fault events with their times are in the history file.
// The report ends with the nemesis x workload table (table.go), the one
// docs/consistency.md shows: per set of faults active at invocation
// ("none" between rounds), the successful operations by workload (reg:
// GET/PUT/DELETE/conditional PUT; list; ver: versioned PUTs and
// listings; mpu: multipart) and the anomalies by checker/type, each
// counted at the invocation of its anomalous operation.
// SHARDSTORE_JEPSEN_REPORT=DIR go test -run TestReportKept -v prints
// the report of the histories a run kept in DIR (without the checkers'
// counts, which the files do not hold).
package jepsen
