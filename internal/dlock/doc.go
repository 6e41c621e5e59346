// Package dlock provides per-name read/write locks that hold across the
// nodes of a cluster and survive the loss of a minority of them.
//
// Every node runs a Table, an in-memory lock table that grants leases
// (one writer, or any number of readers, per name) for a time to live,
// and serves it to the other nodes through a Server. A Locker takes a
// lock by asking every node (its own Table directly, the others over
// HTTP, each request signed with the cluster's peerauth key) and holds it
// when a majority granted; otherwise it gives back what it got and tries
// again with jittered backoff until Options.Timeout (ErrTimeout). A
// round does not wait for a node that failed to answer its previous call
// when the others already decide it, so a hung node costs one
// CallTimeout, not one per lock. A Lease refreshes itself on the nodes
// every RefreshInterval and is lost when it cannot confirm a majority in
// time.
//
// # Guarantees
//
// With n nodes (quorum n/2+1):
//
//   - Two writers, or a writer and a reader, never hold valid leases on
//     one name at the same time: any two majorities share a node, and a
//     node never grants a writer while another live lease exists, nor a
//     reader while a live writer exists. Readers share.
//   - A lease whose holder dies, or is cut off from a majority, expires
//     on the grantors one TTL after the last request they received from
//     it, so the lock is free again without anyone's help.
//   - A holder learns of the loss before any grantor could consider the
//     lease expired. The holder's deadline is the time it sent its last
//     acquire or refresh round that a majority confirmed, plus TTL, minus
//     Options.Margin; a grantor's is the time it received that request
//     plus TTL. Both are measured with the local monotonic clock, so the
//     nodes' clocks need not agree: only their rates must, within
//     Margin/TTL (10% by default). Lease.Valid turns false at the
//     deadline even if the refresh goroutine is stuck; Lease.Check is what
//     a writer calls right before committing.
//   - A node that restarted (and so forgot the leases it had granted)
//     grants nothing for TableOptions.Quiet, by default its MaxTTL, so
//     every lease its previous run granted has expired at its holder
//     first. A whole cluster started at once therefore grants no lock
//     for that long: lock calls wait (those made right at startup may
//     reach their Timeout). A single node (a Locker without peers) skips
//     the pause: every holder of its table's leases lived, and died, in
//     its own process.
//   - Memory is bounded: expired leases are dropped when their name is
//     next touched and by a periodic sweep, and a Table refuses new
//     leases beyond TableOptions.MaxLeases.
//
// # What it does not do
//
//   - Fencing. A holder that passes Check and then pauses (a long GC
//     pause, swapping, a stopped VM) for longer than Margin before its
//     writes reach the drives can still send them after another node took
//     the lock. This package issues no fencing tokens: the storage closes
//     the gap instead, each drive applying a record change only while the
//     record is still the one the writer read (drive.Batch.Expect), so a
//     late writer is refused wherever the next holder wrote.
//   - Liveness under a lost majority: with half the nodes or more
//     unreachable, no lock can be taken (ErrTimeout), by design.
//   - Replay protection beyond peerauth's: a signed request can be
//     replayed within peerauth.MaxSkew. A replayed grant only occupies a
//     node's vote for one TTL; clusters on untrusted networks use TLS.
//   - Reentrancy and upgrades: a holder that asks again for the same name
//     waits for itself until its Timeout.
//   - Fairness: waiters retry rather than queue. A writer refused because
//     of readers marks the name on that node for a moment
//     (TableOptions.WriterIntent) so new readers hold back and the writer
//     is not starved, but among writers the first to retry wins.
//   - A lock message that is delayed past its own unlock (a slow network)
//     leaves a stray grant that holds that node's vote for one TTL.
//
// # Calls between nodes
//
// A node's Table is served at PathPrefix+"batch", the protocol's only
// endpoint. Calls to one node go in batches (remoteNode, server.go): one
// HTTP request in flight per node, and every lock, unlock or refresh made
// meanwhile rides in the next one, in order, so an unlock never overtakes
// its lock; a call that gives up before its batch leaves is never sent.
//
// # A node cut off from the majority
//
// Once fewer than a majority of nodes answered its requests at all
// (granted or refused) for Options.UnreachableWait (5 s by default), a
// Locker gives up with ErrNoQuorum; the server turns it into
// engine.ErrClusterUnavailable, which S3 clients see as 503
// ServiceUnavailable ("cannot reach a majority"). A lock merely held by
// another writer is still waited for, up to Options.Timeout (30 s); the
// engine reports that as ErrBusy (503 SlowDown).
//
// # Nodes outside the lock nodes
//
// The lock nodes are fixed when a cluster is first started; nodes added
// later by an expansion (cmd/shardstore, docs/pools.md) lock with
// Options.Outside: their own table is not counted, and a lock needs a
// majority of the lock nodes whichever node takes it, so a lock taken
// by an old node and one taken by a new node always share a grantor.
// (A Locker's lock nodes are a view: one set, or two while they move;
// whether its own table is one of them follows from the sets.)
//
// # Moving the lock nodes
//
// A cluster that sheds the pool on its lock nodes moves the locks to
// other nodes first (cmd/shardstore, internal/cluster's locknodes.go,
// docs/pools.md). A plain switch is unsafe: nodes switch at different
// moments (each applies the recorded change when its log reaches it, or
// when it is restarted), so for a while some lock on the old set L and
// some on the new set L'; a lock granted by a majority of L and another
// by a majority of L' need share no grantor (none when L and L' are
// disjoint): two writers of one key at once
// (TestMoveSkippingJointLetsTwoHold).
//
// Built: joint majorities. The move goes through three phases recorded
// in the consensus group, each an epoch: old (L), joint (a lock needs a
// majority of L and a majority of L'), new (L'). Old and joint lockers
// always share a grantor in L, joint and new ones in L', so nodes may
// sit in adjacent phases in any mix; old and new never meet, because
// the consensus leader records new only once every node that can take a
// lock (the leaving nodes included, while they serve) reports in its
// hello that it runs the joint epoch and holds no lease taken under an
// earlier one (Locker.Phase counts leases held and attempts in flight
// per epoch: a lease is refreshed, so a long-held one outlives any
// TTL), as an expansion completes. Locker.SetNodes switches the sets
// while running (never back to an earlier epoch); a lease keeps the
// nodes it was taken on until it ends. A node in both sets is asked
// once and its grant counts in both (one owner per name: it never waits
// for itself).
//
// Why not the other safe design, a barrier (the old set stops granting
// at a recorded point, the new set grants only once every old lock node
// said it stopped and one TTL plus Margin passed): it stalls every write
// for about a TTL (503s at the SDK), it needs the old lock nodes to
// refuse refreshes at a point they must all agree on (a lagging one
// that has not applied the record must not count as stopped), and its
// safety rests on the wait being long enough on every clock. Joint
// majorities never stall a lock (each phase is a superset of quorums the
// nodes can reach), rest on quorum intersection alone, not on time,
// and reuse the expansion's way of advancing a record once every node
// reports it: the leader waits, the clients do not.
package dlock
