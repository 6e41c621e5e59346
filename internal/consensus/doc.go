// Package consensus keeps the state every node of a cluster must agree
// on (bucket records, config documents such as the identity store) in a
// Raft group: hashicorp/raft, its log and stable store in a bbolt file
// (raft-boltdb) and its snapshots beside it, in a directory on one of the
// node's drives. Raft traffic and the calls below ride the node's HTTP
// port under PathPrefix, signed with the cluster key.
//
// The state is a small replicated map: keys in spaces ("bucket",
// "config"), each with the log index of the change that last wrote it as
// its version. Every change is a compare-and-set on that version, applied
// by every node in log order; a node that is not the leader forwards its
// changes to the leader and returns once it has applied them itself.
// Reads are local (what this node has applied: fast, possibly behind) or
// fresh (linearizable: the node first learns from the leader the last
// change committed when the read began, the Raft "read index", and waits
// until it has applied it).
//
// During a partition only the side with a majority of nodes has a
// leader: changes and fresh reads on the other side fail with
// ErrUnavailable (an S3 503) until it heals; local reads go on serving
// what that side knew.
//
// # Why hashicorp/raft
//
// It was chosen over etcd-io/raft because it brings the transport,
// snapshot and storage interfaces a small group needs, and is what Consul
// and Nomad run. Its directory is .shardstore.sys/cluster/ on the first
// of the node's drives that holds one, else the first formatted one.
// Raft's connections ride the S3 port: a signed Upgrade request to
// PathPrefix+"stream" is taken over and handed to raft's network
// transport (stream.go); Options.Stamp adds the node's release stamp to
// that request (package release), as the node's HTTP client does to the
// forwarded calls. A node that stops gracefully first hands leadership
// over (HandOff: raft's leadership transfer), so the group does not wait
// an election timeout. Changes that a follower forwards go to
// PathPrefix+"apply"; the leader's read index is asked the same way.
//
// # How the engine uses it
//
// The engine reads and changes the group through its raftState
// (internal/engine/clusterstate.go) and, after a change, sends the change
// notice (package cluster) on which every other node catches up before
// the client gets its answer. Each node caches bucket records in memory,
// updated by the state machine on every applied change (also while
// catching up after a restart). A cache miss (a bucket this node never
// heard of) and every change read the state fresh. The read index is
// taken only once a new leader has committed a barrier of its own term.
//
// The first start of a group seeds it from the bucket records and config
// documents on the drives (Seed: a deployment that ran before the group
// existed keeps its buckets and identities; later seeds are no-ops).
// Drives still get a copy of each bucket record (the refill of a replaced
// drive looks for them, and they are a way back should every node lose
// its group state); config documents are only in the group.
//
// # Membership and wiped nodes
//
// A new deployment's members are the command line's node list: every
// node bootstraps the group with it when it has no state, which is safe
// because all bootstrap the same configuration. Later changes go through
// raft's single-server membership changes (membership.go), never an
// edited configuration: a node opened with Options.Join does not
// bootstrap, and Join asks the leader (any member answers with the
// leader it knows) to add it as a non-voter (AddNonvoter); once it has
// applied the log up to that change it asks to be made a voter
// (AddVoter). The leader adds only nodes its Options.MayJoin accepts
// (cmd/shardstore: nodes of the pool list recorded in the group, so a
// cluster grows by an expansion that was committed) and refuses a
// member's id at another address. A refused node gets ErrJoinRefused
// with the leader's reason. Members leave through raft's RemoveServer
// (RemoveMembers, remove.go), on the leader, one at a time; a leader that
// is leaving hands leadership to a member that stays first (cmd/shardstore:
// the nodes holding no drive of the pool list left after a pool removal).
//
// A node whose state drive was wiped, in a group that exists, opens with
// Join as well: a bootstrap entry of its own could differ from the
// group's first entry once the membership changed. It is still a voter
// in the group's configuration, so the leader brings it up to date
// (snapshot and log) and Join returns once it knows itself a voter. Such
// a node has also forgotten its votes, and voting twice in one term
// could elect two leaders, so it joins the votes only 10 s after it
// starts (newLogVoteDelay in cmd/shardstore), by when any election it
// voted in has ended.
//
// # Partitions
//
// Only a side with a majority of nodes has a leader (and can take locks,
// package dlock). On the other side, changes and fresh reads (bucket and
// identity changes, requests naming a bucket the node has not cached)
// answer 503 after Options.WaitLimit (15 s); the node keeps serving what
// it has cached and reads while it reaches read quorum of drives. The
// majority side elects a leader if it lost it (about two heartbeat
// timeouts, 2 s). A change whose leader was cut off after taking it is
// indeterminate (the client got 503; it commits later or never, the same
// on every node), like a timed-out write to any store. With an even split
// (2 of 4 nodes each side) neither side has a majority and changes stop
// everywhere until it heals. A follower forwarding to a leader that got
// cut off abandons the call as soon as it learns of another leader (or of
// none): a read asks the new leader, a change is reported indeterminate at
// once. test/cluster's TestPartition, TestFrozenNode and TestSlowNode
// exercise these cases through a proxy on every link.
package consensus
