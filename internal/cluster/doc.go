// Package cluster describes a deployment of several shardstore nodes:
// it parses the drive endpoints every node is started with
// (http://host:port/path, with ellipses), finds which node this process
// is, orders the drives so that every erasure set spreads over as many
// nodes as possible, and checks at start that all nodes agree on that
// layout (peer.go). It knows nothing of objects: the engine gets the
// drive list, the remote drives (package driverpc) and the lock service
// (package dlock) from the server command.
//
// # The shape of a cluster
//
// Every node is started with the same drive arguments
// (shardstore server http://node{1...4}:9000/data/d{1...4}); a node finds
// itself among them by its listen address (--address, or the endpoint
// host that resolves to this machine). Parse orders the drives so that
// consecutive slots cycle through the nodes (slot 0 is node 1's first
// drive, slot 1 node 2's first, ...): an erasure set, being consecutive
// slots, takes drives from as many nodes as possible, and the start-up
// output says for each set whether it survives the loss of a whole node.
//
// Each node runs the ordinary engine over the whole deployment's drive
// list: its own drives are drive.Local, every other node's drive is a
// driverpc.Client, both behind drive.Health. A node that is down is
// therefore its drives gone offline to everyone else: reads rebuild
// around them, writes succeed with write quorum and queue the heal, as
// with local drive failures. Which package does what between nodes:
//
//	driverpc    the drive.Drive interface over HTTP     /_shardstore/drive/v1/
//	dlock       per-key locks held on a majority        /_shardstore/lock/v1/
//	consensus   bucket records and config documents     /_shardstore/raft/v1/
//	cluster     hello at start, change notices          /_shardstore/peer/v1/
//	peerauth    the HMAC every one of those carries
//	certs       TLS for all of them with https:// endpoints
//
// All of them ride the S3 port. cmd/shardstore (cluster.go) mounts the
// handlers; its router sends a request under /_shardstore/ to them only
// when it carries the peer signature header and was signed for this
// node's host (else 421). Every connection to another node is dialled
// through the routed dialer (Routes, SHARDSTORE_PEER_ROUTES, which the
// cluster tests use to put a fault-injecting proxy on every link) and,
// with https:// endpoints, certs.Store.DialTLS. Node ids do not carry the
// scheme (Topology.ID is http://HOST:PORT either way), so moving a
// deployment to TLS keeps its consensus membership and records.
//
// # Server pools
//
// A drive argument whose host has ellipses (http://n{1...4}:9000/d{1...4})
// is a server pool of its own; arguments naming one node each
// (http://a:9000/d{1...4} http://b:9000/d{1...4}) are one pool together,
// until an argument with ellipses names a node the run already has,
// which starts the next pool (poolArgs; PoolArgs gives the groups, for the MinIO adoption's
// pool.bin check). Topology.Pools has their drive counts, and the
// drives of each pool are interleaved across its nodes as above, pool
// after pool. The engine gets the pools with the drives (docs/pools.md).
//
// # Rolling expansion
//
// The deployment's pool list is recorded in the consensus group
// (PoolList, config document pools/layout; expand.go). Nodes of an
// existing deployment whose lists are the same, or one the other with
// pools appended, agree in their hellos (an expansion under way); a new
// deployment needs the same list on every node. At start a node plans
// its list against the record (PlanStart): the same list goes on; the
// record plus appended pools proposes an expansion (a compare-and-set,
// so it is committed once, and only once the pools feature gate of
// package release is active); the record's prefix (an old command line)
// or any other list is refused, saying how it differs. The list records
// the lock nodes (those of the first list: nodes added later lock on
// them) and how many pools take new keys: the appended ones only once
// every node of the list runs with it and has its engine open
// (Completes, checked by a round on the consensus leader). New nodes
// join the consensus group by raft membership changes (package
// consensus, Join), which the leader allows for nodes of the recorded
// list. cmd/shardstore (expand.go) does the steps; docs/pools.md says
// what an operator does.
//
// # Removing a pool
//
// A node started with the recorded list minus whole pools (shrink.go,
// PlanShrink) records the shortened list when every pool left out is
// fully decommissioned (the caller says which are) and no expansion is
// under way; otherwise it is refused, naming the pool and why. Leaving
// names the consensus members that hold no drive of the list, which the
// leader removes from the group (cmd/shardstore shrink.go). Shortening the
// list waits for the pool-removal feature gate (MayRemove). When the
// pools left out hold lock nodes, the shortened list also starts moving
// them to the nodes that stay (locknodes.go: LockMove and LockEpoch
// record the phases old, joint, new; AdvanceLocks decides when the
// leader records new, once every node's hello reports it runs joint with
// no lock of the old set; LocksSettled when the leaving nodes may leave).
//
// # Removed pools and canceling an expansion
//
// The list keeps the drives of every pool taken out of it (Removed,
// removed.go): by a shrink, or by canceling an expansion still under way
// (PlanCancel: the list without the appended pools, only while they take
// no new keys; the leader then removes their nodes from the group as
// after a shrink). PlanStart refuses an append naming a removed drive (a
// command line from before the removal would otherwise be taken for an
// expansion); the operator adds such drives again on purpose with the
// server's --readd-removed-pools (ForgetRemoved).
//
// # Start
//
// A node listens first, answering only hello to the other nodes (S3
// answers 503 "starting"). A node none of whose drives is formatted
// cannot tell a first start from a restart on disks that did not mount,
// so it asks the others (Peers.DeploymentExists): the deployment exists
// as soon as one reports a deployment id, and is new once every other
// node answered blank. Only a new deployment creates missing drive
// directories and grants locks at once; in an existing one, a node whose
// every drive directory is missing refuses to start, and one with empty
// directories (new disks) has them adopted and refilled. The node then
// opens its drives, lock table and consensus member, serves them, and
// asks every other node for its Hello (drive list, --set-size, --parity,
// release, internal protocol and features, deployment id). A node that
// disagrees stops the start with a message naming it and the difference
// (Hello.Differences); a different release is no difference as long as
// its protocol is adjacent (version.go). A new
// deployment waits for every node; an existing one goes on once a
// majority answered (and 15 s passed), the rest being offline drives.
// Only node 1 formats a new deployment, writing slot 0 last; the other
// nodes wait while slot 0 is blank next to formatted drives
// (engine.ErrAwaitingFormat). A blank drive in an existing deployment is
// adopted and refilled only by the node it is attached to.
//
// # Releases and rolling upgrades
//
// Nodes of adjacent releases serve together (docs/upgrades.md). The
// release, protocol and features a node reports in its Hello are those
// of package release, which also stamps every call between nodes and
// guards the internal handlers (cmd/shardstore mounts the guard in
// front of all of them and wraps the nodes' HTTP client in the
// stamper). Peers.Reports asks every node's Hello for the upgrade
// status and the feature gates; a hello without a protocol is from a
// release before release stamps (protocol 1, no features).
//
// # Change notices
//
// A node that changed shared state (a bucket record, a config document)
// sends a notice to every other node (Peers.Notify, POST notify), on which
// each catches up with the consensus leader before the client gets its
// answer, so a request to any node right after sees the change.
//
// # Per-node records
//
// Each node keeps its own running marker (crash detection, then the
// recovery sweep) and heal queue on the shared drives, named by its node
// id. Heal queues run on every node. The scanner cycle and the lifecycle
// pass after it run only on the consensus leader (engine
// ClusterConfig.ScansHere): every node sees every drive, so one walk at a
// time is enough; the other nodes publish the bucket usage it saves on
// the drives.
//
// What a partition does to locks and shared state is described in
// packages dlock and consensus; the cluster tests are in test/cluster
// (docs/testing.md).
package cluster
