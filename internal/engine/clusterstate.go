package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// ClusterState is the state every node of a cluster agrees on, kept by a
// consensus group (internal/consensus, Raft): bucket records and config
// documents. With it, they are read from and changed through the group
// instead of the drives. Keys live in spaces ("bucket", "config"); a
// key's version is the log index of its last change.
type ClusterState interface {
	// Get returns key's value and version (ErrStateNotFound when
	// absent). A fresh read sees every change committed before it.
	Get(ctx context.Context, space, key string, fresh bool) ([]byte, uint64, error)
	// List returns every key of space (fresh as Get).
	List(ctx context.Context, space string, fresh bool) (map[string][]byte, error)
	// Sync returns once this node applied every change committed
	// before the call (what a fresh read waits for).
	Sync(ctx context.Context) error
	// Put writes key if its version is prev (0: absent) and returns the
	// new version; ErrStateConflict otherwise. It returns once this
	// node has applied the change.
	Put(ctx context.Context, space, key string, prev uint64, value []byte) (uint64, error)
	// Delete removes key if its version is prev (ErrStateConflict or
	// ErrStateNotFound otherwise).
	Delete(ctx context.Context, space, key string, prev uint64) error
	// Seeded reports whether the group has its first state; Seed gives
	// it one (only the first seed of a group counts).
	Seeded(ctx context.Context) (bool, error)
	Seed(ctx context.Context, state map[string]map[string][]byte) error
}

// Errors a ClusterState returns (wrapped).
var (
	ErrStateNotFound = errors.New("not in the cluster state")
	ErrStateConflict = errors.New("cluster state changed concurrently")
	// ErrClusterUnavailable: no majority of nodes is reachable (S3 503).
	ErrClusterUnavailable = errors.New("the cluster has no majority of its nodes reachable")
)

// Spaces of the cluster state.
const (
	spaceBucket = "bucket"
	spaceConfig = "config"
)

// stateStartWait bounds how long a starting node waits for the group.
const stateStartWait = 10 * time.Minute

// state is the cluster's agreed state, or nil (single node, or a
// cluster run without one: bucket records then live on the drives).
func (e *Engine) state() ClusterState {
	if c := e.cfg.Cluster; c != nil {
		return c.State
	}
	return nil
}

// loadStateBuckets fills the bucket cache from the cluster state at
// start; a group's first start seeds it with the records the drives
// hold (a deployment that ran before the group existed keeps its
// buckets and identities).
func (e *Engine) loadStateBuckets() error {
	ctx, cancel := context.WithTimeout(context.Background(), stateStartWait)
	defer cancel()
	st := e.state()
	var seeded bool
	err := retryUnavailable(ctx, func() (err error) {
		seeded, err = st.Seeded(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("cluster state: %w", err)
	}
	if !seeded {
		seed, err := e.driveSeed(ctx)
		if err != nil {
			return fmt.Errorf("cluster state: seed from the drives: %w", err)
		}
		if err := retryUnavailable(ctx, func() error { return st.Seed(ctx, seed) }); err != nil {
			return fmt.Errorf("cluster state: %w", err)
		}
		e.log.Info("cluster state seeded from the drives", "buckets", len(seed[spaceBucket]), "configs", len(seed[spaceConfig]))
	}
	e.buckets = map[string]BucketInfo{}
	return retryUnavailable(ctx, func() error { return e.ReloadBuckets(ctx) })
}

// retryUnavailable calls fn until it succeeds, fails otherwise than for
// want of a majority, or ctx ends: a node starting with most of the
// others wants to wait for them, not to exit.
func retryUnavailable(ctx context.Context, fn func() error) error {
	for {
		err := fn()
		if !errors.Is(err, ErrClusterUnavailable) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}

// driveSeed is the state the drives hold: bucket records and config
// documents (read by their quorum rules).
func (e *Engine) driveSeed(ctx context.Context) (map[string]map[string][]byte, error) {
	buckets, err := e.scanBuckets(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string][]byte{spaceBucket: {}, spaceConfig: {}}
	for name, info := range buckets {
		out[spaceBucket][name], _ = json.Marshal(recordOf(info))
	}
	for name := range e.configNames(ctx) {
		e.configMu.Lock()
		data, _, _, err := e.readConfigLocked(ctx, name)
		e.configMu.Unlock()
		if errors.Is(err, ErrNoConfig) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[spaceConfig][name] = data
	}
	return out, nil
}

// decodeBucket is the BucketInfo of a stored record.
func decodeBucket(name string, v []byte) (BucketInfo, error) {
	var r bucketRecord
	if err := json.Unmarshal(v, &r); err != nil || r.Name != name {
		return BucketInfo{}, fmt.Errorf("bucket %s: damaged record in the cluster state", name)
	}
	return r.info(), nil
}

// stateError maps a cluster state error to the engine's errors.
func stateError(err error) error {
	if errors.Is(err, ErrStateConflict) {
		// Under the bucket's cluster lock only a lost lease lets another
		// change in between: the client retries.
		return fmt.Errorf("%w: %v", ErrBusy, err)
	}
	return err
}

// bucketFromState reads a bucket's record and version from the group.
func (e *Engine) bucketFromState(ctx context.Context, bucket string, fresh bool) (BucketInfo, uint64, error) {
	v, ver, err := e.state().Get(ctx, spaceBucket, bucket, fresh)
	if errors.Is(err, ErrStateNotFound) {
		return BucketInfo{}, 0, fmt.Errorf("bucket %s: %w", bucket, ErrBucketNotFound)
	}
	if err != nil {
		return BucketInfo{}, 0, err
	}
	info, err := decodeBucket(bucket, v)
	return info, ver, err
}

// cacheBucketFromState sets the cache's entry for bucket to what this
// node has applied. Reading under bucketsMu keeps the cache from going
// back: whoever updates it later read a later state.
func (e *Engine) cacheBucketFromState(bucket string) {
	e.bucketsMu.Lock()
	defer e.bucketsMu.Unlock()
	info, _, err := e.bucketFromState(context.Background(), bucket, false)
	switch {
	case err == nil:
		e.buckets[bucket] = info
	case errors.Is(err, ErrBucketNotFound):
		delete(e.buckets, bucket)
	default:
		e.log.Warn("cannot cache bucket record", "bucket", bucket, "err", err)
	}
}

// StateChanged is told by the consensus group that a key changed on
// this node (it runs on the group's apply path, so it reads only what
// is applied and never waits for the group).
func (e *Engine) StateChanged(space, key string) {
	if space == spaceBucket && e.state() != nil {
		e.cacheBucketFromState(key)
	}
}

// putBucketState stores info in the group at version prev (0: create)
// and caches it; the drives keep a copy of the record (the refill of a
// replaced drive looks for bucket records, and it is a way back should
// every node lose its group state).
func (e *Engine) putBucketState(ctx context.Context, info BucketInfo, prev uint64) error {
	rec, _ := json.Marshal(recordOf(info))
	if _, err := e.state().Put(ctx, spaceBucket, info.Name, prev, rec); err != nil {
		if prev == 0 && errors.Is(err, ErrStateConflict) {
			return fmt.Errorf("bucket %s: %w", info.Name, ErrBucketExists)
		}
		return stateError(err)
	}
	e.cacheBucketFromState(info.Name)
	if err := e.writeBucketRecord(ctx, info); err != nil {
		e.log.Warn("bucket record copy on the drives not written", "bucket", info.Name, "err", err)
	}
	return nil
}

// deleteBucketWithState deletes an empty bucket (under its lock): its
// uploads and leftovers are purged from the drives first, and only when
// that reached a majority of them is it deleted in the group, so a
// failure leaves the bucket in place for the client to retry; the
// drives' copies of its record go last.
func (e *Engine) deleteBucketWithState(ctx context.Context, bucket string) error {
	drives := e.allDrives()
	errs := forEachDrive(drives, func(_ int, d drive.Drive) error { return e.purgeBucket(ctx, d, bucket) })
	if countNil(errs) < e.bucketQuorum() {
		return fmt.Errorf("bucket %s: %w: %v", bucket, ErrWriteQuorum, firstErr(errs))
	}
	if err := e.deleteBucketState(ctx, bucket); err != nil {
		return err
	}
	forEachDrive(drives, func(_ int, d drive.Drive) error {
		b := &drive.Batch{}
		b.Delete(drive.TableBuckets, bucket)
		return d.Apply(ctx, b)
	})
	e.changed("bucket", bucket)
	return nil
}

// deleteBucketState removes a bucket from the group.
func (e *Engine) deleteBucketState(ctx context.Context, bucket string) error {
	_, ver, err := e.bucketFromState(ctx, bucket, true)
	if err != nil {
		return err
	}
	if err := e.state().Delete(ctx, spaceBucket, bucket, ver); err != nil {
		if errors.Is(err, ErrStateNotFound) {
			return fmt.Errorf("bucket %s: %w", bucket, ErrBucketNotFound)
		}
		return stateError(err)
	}
	e.cacheBucketFromState(bucket)
	return nil
}

// reloadBucketState brings the cache's entry up to the group's latest.
func (e *Engine) reloadBucketState(ctx context.Context, bucket string) error {
	if err := e.state().Sync(ctx); err != nil {
		return err
	}
	e.cacheBucketFromState(bucket)
	return nil
}

// reloadBucketsState rebuilds the cache from the group's latest.
func (e *Engine) reloadBucketsState(ctx context.Context) error {
	if err := e.state().Sync(ctx); err != nil {
		return err
	}
	e.bucketsMu.Lock()
	defer e.bucketsMu.Unlock()
	all, err := e.state().List(ctx, spaceBucket, false)
	if err != nil {
		return err
	}
	fresh := make(map[string]BucketInfo, len(all))
	for name, v := range all {
		info, err := decodeBucket(name, v)
		if err != nil {
			e.log.Warn("skipping bucket record", "err", err)
			continue
		}
		fresh[name] = info
	}
	e.buckets = fresh
	return nil
}

// readConfigState and writeConfigState are ReadConfig and WriteConfig on
// the group: the version is the log index, the compare-and-set the
// group's.
func (e *Engine) readConfigState(ctx context.Context, name string) ([]byte, uint64, error) {
	v, ver, err := e.state().Get(ctx, spaceConfig, name, true)
	if errors.Is(err, ErrStateNotFound) {
		return nil, 0, ErrNoConfig
	}
	return v, ver, err
}

func (e *Engine) writeConfigState(ctx context.Context, name string, prev uint64, data []byte) (uint64, error) {
	ver, err := e.state().Put(ctx, spaceConfig, name, prev, data)
	if errors.Is(err, ErrStateConflict) {
		return 0, fmt.Errorf("config %s: %w: %v", name, ErrConfigConflict, err)
	}
	if err != nil {
		return 0, err
	}
	e.changed(spaceConfig, name)
	return ver, nil
}
