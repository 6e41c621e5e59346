package engine

import (
	"context"
	"errors"
	"time"
)

// ClusterConfig makes an engine one node of a cluster: its drives are
// the whole deployment's (the other nodes' drives are remote drives),
// writers of a key are serialized across nodes, and state cached in
// memory (bucket records) is re-read when another node may have changed
// it. The zero value is a single node.
type ClusterConfig struct {
	// Locker takes each object and bucket lock on a majority of nodes.
	Locker ClusterLocker
	// FormatNew is true on the one node allowed to format a new
	// deployment; the others return ErrAwaitingFormat until it has.
	FormatNew bool
	// Local reports whether slot (0-based, in drive order) is attached to
	// this node. Only the node a drive is attached to adopts it as a
	// blank replacement and refills it, so two nodes never format one
	// drive twice.
	Local func(slot int) bool
	// Changed, when set, is called after this node changed shared state
	// (kind "bucket" with the bucket name, or "config" with the config
	// document name), so the server can tell the other nodes to re-read
	// it; it returns once they have (or gave no answer in time).
	Changed func(kind, name string)
	// FreeDelay is how long data replaced or deleted by this node is
	// kept for readers on other nodes; 0 means DefaultClusterFreeDelay.
	FreeDelay time.Duration
	// NodeID names this node in per-node records on the drives.
	NodeID string
	// State, when set, keeps bucket records and config documents (the
	// drives keep only copies of bucket records); see ClusterState.
	State ClusterState
	// ScansHere, when set, says whether this node runs the scanner cycle
	// (and the lifecycle pass after it) now: every node sees every drive,
	// so one node at a time walks the namespace (the consensus leader)
	// instead of all of them doing the same work. The others only pick
	// up the bucket usage it saves. Heal queues stay per node.
	ScansHere func() bool
	// NewKeyPools, when set, says how many pools, from the first, take
	// new keys now (0, or the pool count or more: all). During a
	// rolling expansion the appended pools take none until every node
	// runs with them (cmd/shardstore, docs/pools.md): a node still on
	// the old list would not find a key there.
	NewKeyPools func() int
	// Confirm, when set, tells every other node that shared state changed
	// (as Changed) and returns an error unless each running node answered
	// that it applied it; a decommission completes only after its nodes
	// confirmed that they place no new key in the pool (decom_gate.go).
	Confirm func(ctx context.Context, kind, name string) error
	// CancelExpansion, when set, cancels a rolling expansion under way
	// (Engine.CancelExpansion; cmd/shardstore records the list without
	// the appended pools). Its refusals wrap ErrInvalidArgument.
	CancelExpansion func(ctx context.Context) (ExpansionCancel, error)
}

// newKeyPools is how many of n pools take new keys now.
func (c *ClusterConfig) newKeyPools(n int) int {
	if c == nil || c.NewKeyPools == nil {
		return n
	}
	if k := c.NewKeyPools(); k > 0 && k < n {
		return k
	}
	return n
}

// scansHere reports whether this node runs scanner cycles now.
func (c *ClusterConfig) scansHere() bool {
	return c == nil || c.ScansHere == nil || c.ScansHere()
}

// DefaultClusterFreeDelay keeps replaced data long enough for a download
// that resolved it on another node to finish (pins are per process).
const DefaultClusterFreeDelay = 10 * time.Minute

// ErrAwaitingFormat is returned by New on a cluster node that found a
// new deployment: the first node formats it; start again shortly.
var ErrAwaitingFormat = errors.New("the drives are not formatted yet: waiting for the first node to format the deployment")

// locker is the cluster's lock service (nil on a single node).
func (c *ClusterConfig) locker() ClusterLocker {
	if c == nil {
		return nil
	}
	return c.Locker
}

// mayFormatNew reports whether this node may format a new deployment.
func (c *ClusterConfig) mayFormatNew() bool { return c == nil || c.FormatNew }

// owns reports whether this node looks after the drive in slot.
func (c *ClusterConfig) owns(slot int) bool { return c == nil || c.Local == nil || c.Local(slot) }

// clustered reports whether this engine is one node of several.
func (e *Engine) clustered() bool { return e.cfg.Cluster != nil }

// nodeFile names a system record that belongs to one node (its running
// marker, its heal queue): in a cluster every node keeps its own on the
// shared drives, named by its node id.
func (e *Engine) nodeFile(name string) string {
	if c := e.cfg.Cluster; c != nil && c.NodeID != "" {
		return name + "@" + c.NodeID
	}
	return name
}

// changed tells the other nodes that shared state changed.
func (e *Engine) changed(kind, name string) {
	if c := e.cfg.Cluster; c != nil && c.Changed != nil {
		c.Changed(kind, name)
	}
}

// ReloadBucket re-reads one bucket's record from the store into the
// cache (another node created, changed or deleted it).
func (e *Engine) ReloadBucket(ctx context.Context, bucket string) error {
	return e.shared.reloadBucket(ctx, bucket)
}

// ReloadBuckets re-reads every bucket record from the store.
func (e *Engine) ReloadBuckets(ctx context.Context) error {
	return e.shared.reloadBuckets(ctx)
}
