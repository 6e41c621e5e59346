package engine

import "context"

// Bucket records and config documents are the state every node of a
// deployment shares. Where they are kept is chosen once, when the engine
// opens (newSharedState): on the drives (driveState, drivestate.go and
// config.go: a single node, or a cluster run without a consensus group)
// or in the cluster's consensus group (raftState, clusterstate.go:
// ClusterConfig.State). The bucket and config code call the seam without
// asking which.
//
// The bucket cache (Engine.buckets under bucketsMu) stays the engine's:
// each store keeps it up to date as it reads and writes. What is about
// clustering rather than about the store stays in the engine: the
// bucket's cluster lock around every bucket change, and the reload on a
// cache miss in a cluster (BucketInfo).

// sharedState is where bucket records and config documents are kept.
//
// Its writes send the change notices (Engine.changed) that make the
// other nodes re-read what changed, since when one is due depends on what
// the store may have changed: the group changes a key whole or not at
// all, so it notifies on success; the drives may hold part of a write
// that failed, so a deletion or a config write on them notifies even
// when it fails.
type sharedState interface {
	// loadBuckets fills the bucket cache when the engine opens.
	loadBuckets(ctx context.Context) error
	// reloadBucket and reloadBuckets bring the cache's entry for
	// bucket, or the whole cache, up to the latest the store holds.
	reloadBucket(ctx context.Context, bucket string) error
	reloadBuckets(ctx context.Context) error
	// bucketToChange reads bucket's latest record for a change made
	// under the bucket's lock, with the version putBucket must name.
	bucketToChange(ctx context.Context, bucket string) (BucketInfo, uint64, error)
	// createBucket stores a new bucket's record (ErrBucketExists when
	// the store has one); putBucket stores a changed record read at
	// version ver. Both cache it.
	createBucket(ctx context.Context, info BucketInfo) error
	putBucket(ctx context.Context, info BucketInfo, ver uint64) error
	// deleteBucket removes an empty bucket, under its lock: its record,
	// its leftovers on the drives (uploads, failed writes) and its
	// cache entry.
	deleteBucket(ctx context.Context, bucket string) error
	// readConfig and writeConfig are ReadConfig and WriteConfig.
	readConfig(ctx context.Context, name string) ([]byte, uint64, error)
	writeConfig(ctx context.Context, name string, prev uint64, data []byte) (uint64, error)
	// healConfigs restores the config documents' copies on the drives
	// that lack them (heal runs, drive refills).
	healConfigs(ctx context.Context)
	// applied is told that the store changed key of space on this node
	// (Engine.StateChanged).
	applied(space, key string)
}

// newSharedState picks e's store: the cluster's consensus group when it
// has one, else the drives.
func newSharedState(e *Engine) sharedState {
	drives := driveState{e}
	if c := e.cfg.Cluster; c != nil && c.State != nil {
		return raftState{e: e, group: c.State, drives: drives}
	}
	return drives
}
