// Package release says what a shardstore release is to the other nodes of
// its cluster, so nodes of two adjacent releases serve together during a
// rolling upgrade (docs/upgrades.md):
//
//   - Stamp: every node-to-node call (/_shardstore/drive|lock|raft|peer/v1/)
//     carries the sender's release, internal protocol version and
//     supported features in three headers (Stamper on the calling side,
//     Guard on the answering side, which also stamps its answers). A call
//     without them comes from a release before this package (protocol 1).
//   - Protocol: a node answers calls of its own protocol and of the
//     adjacent older and newer ones (Protocol-1 .. Protocol+1) and refuses
//     the rest with 426 Upgrade Required and a message naming both
//     releases, logged once per sending release.
//   - Features: named on-disk and protocol features. A feature is active
//     once every node of the cluster has reported it (Plan); the active
//     set is a consensus config document (GatesSpace, GatesKey) that only
//     grows. Code that writes a newer format asks the gate first (the S3
//     layer refuses SSE writes with 503 until EncryptedRecords is active).
//     Once a feature is active, a node that lacks it is refused (Guard),
//     so an old node cannot rejoin a cluster that uses what it cannot read.
//
// The package knows no node, drive or consensus type: the server command
// (cmd/shardstore, upgrade.go) asks the nodes' hellos, writes the gate
// document and builds the upgrade status from the pieces here.
package release
