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

// raftState keeps bucket records and config documents in the cluster's
// consensus group. The drives keep a copy of each bucket record (the
// refill of a replaced drive looks for bucket records, and it is a way
// back should every node lose its group state); config documents are
// only in the group.
type raftState struct {
	e     *Engine
	group ClusterState
	// drives holds the copies of bucket records, and the state a new
	// group is seeded with.
	drives driveState
}

// loadBuckets fills the bucket cache from the group at start; a group's
// first start seeds it with the records the drives hold (a deployment
// that ran before the group existed keeps its buckets and identities).
func (s raftState) loadBuckets(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, stateStartWait)
	defer cancel()
	var seeded bool
	err := retryUnavailable(ctx, func() (err error) {
		seeded, err = s.group.Seeded(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("cluster state: %w", err)
	}
	if !seeded {
		seed, err := s.drives.seed(ctx)
		if err != nil {
			return fmt.Errorf("cluster state: seed from the drives: %w", err)
		}
		if err := retryUnavailable(ctx, func() error { return s.group.Seed(ctx, seed) }); err != nil {
			return fmt.Errorf("cluster state: %w", err)
		}
		s.e.log.Info("cluster state seeded from the drives", "buckets", len(seed[spaceBucket]), "configs", len(seed[spaceConfig]))
	}
	s.e.buckets = map[string]BucketInfo{}
	return retryUnavailable(ctx, func() error { return s.reloadBuckets(ctx) })
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

// record reads a bucket's record and version from the group.
func (s raftState) record(ctx context.Context, bucket string, fresh bool) (BucketInfo, uint64, error) {
	v, ver, err := s.group.Get(ctx, spaceBucket, bucket, fresh)
	if errors.Is(err, ErrStateNotFound) {
		return BucketInfo{}, 0, fmt.Errorf("bucket %s: %w", bucket, ErrBucketNotFound)
	}
	if err != nil {
		return BucketInfo{}, 0, err
	}
	info, err := decodeBucket(bucket, v)
	return info, ver, err
}

// cacheBucket sets the cache's entry for bucket to what this node has
// applied. Reading under bucketsMu keeps the cache from going back:
// whoever updates it later read a later state.
func (s raftState) cacheBucket(bucket string) {
	s.e.bucketsMu.Lock()
	defer s.e.bucketsMu.Unlock()
	info, _, err := s.record(context.Background(), bucket, false)
	switch {
	case err == nil:
		s.e.buckets[bucket] = info
	case errors.Is(err, ErrBucketNotFound):
		delete(s.e.buckets, bucket)
	default:
		s.e.log.Warn("cannot cache bucket record", "bucket", bucket, "err", err)
	}
}

// StateChanged is told by the consensus group that a key changed on
// this node (it runs on the group's apply path, so it reads only what
// is applied and never waits for the group).
func (e *Engine) StateChanged(space, key string) { e.shared.applied(space, key) }

func (s raftState) applied(space, key string) {
	if space == spaceBucket {
		s.cacheBucket(key)
	}
}

// bucketToChange is a fresh read: it sees every change committed before.
func (s raftState) bucketToChange(ctx context.Context, bucket string) (BucketInfo, uint64, error) {
	return s.record(ctx, bucket, true)
}

// createBucket needs no read of its own: the group's compare-and-set
// refuses a record where one exists.
func (s raftState) createBucket(ctx context.Context, info BucketInfo) error {
	return s.putBucket(ctx, info, 0)
}

// putBucket stores info in the group at version prev (0: create),
// caches it and writes the drives' copy of the record.
func (s raftState) putBucket(ctx context.Context, info BucketInfo, prev uint64) error {
	rec, _ := json.Marshal(recordOf(info))
	if _, err := s.group.Put(ctx, spaceBucket, info.Name, prev, rec); err != nil {
		if prev == 0 && errors.Is(err, ErrStateConflict) {
			return fmt.Errorf("bucket %s: %w", info.Name, ErrBucketExists)
		}
		return stateError(err)
	}
	s.cacheBucket(info.Name)
	if err := s.drives.writeRecord(ctx, info); err != nil {
		s.e.log.Warn("bucket record copy on the drives not written", "bucket", info.Name, "err", err)
	}
	s.e.changed("bucket", info.Name)
	return nil
}

// deleteBucket purges the bucket's uploads and leftovers from the drives
// first, and only when that reached a majority of them deletes it in the
// group, so a failure leaves the bucket in place for the client to
// retry; the drives' copies of its record go last.
func (s raftState) deleteBucket(ctx context.Context, bucket string) error {
	drives := s.e.allDrives()
	errs := forEachDrive(drives, func(_ int, d drive.Drive) error { return s.e.purgeBucket(ctx, d, bucket) })
	if countNil(errs) < s.e.bucketQuorum() {
		return fmt.Errorf("bucket %s: %w: %v", bucket, ErrWriteQuorum, firstErr(errs))
	}
	if err := s.deleteRecord(ctx, bucket); err != nil {
		return err
	}
	forEachDrive(drives, func(_ int, d drive.Drive) error {
		b := &drive.Batch{}
		b.Delete(drive.TableBuckets, bucket)
		return d.Apply(ctx, b)
	})
	s.e.changed("bucket", bucket)
	return nil
}

// deleteRecord removes a bucket's record from the group.
func (s raftState) deleteRecord(ctx context.Context, bucket string) error {
	_, ver, err := s.record(ctx, bucket, true)
	if err != nil {
		return err
	}
	if err := s.group.Delete(ctx, spaceBucket, bucket, ver); err != nil {
		if errors.Is(err, ErrStateNotFound) {
			return fmt.Errorf("bucket %s: %w", bucket, ErrBucketNotFound)
		}
		return stateError(err)
	}
	s.cacheBucket(bucket)
	return nil
}

// reloadBucket brings the cache's entry up to the group's latest.
func (s raftState) reloadBucket(ctx context.Context, bucket string) error {
	if err := s.group.Sync(ctx); err != nil {
		return err
	}
	s.cacheBucket(bucket)
	return nil
}

// reloadBuckets rebuilds the cache from the group's latest.
func (s raftState) reloadBuckets(ctx context.Context) error {
	if err := s.group.Sync(ctx); err != nil {
		return err
	}
	s.e.bucketsMu.Lock()
	defer s.e.bucketsMu.Unlock()
	all, err := s.group.List(ctx, spaceBucket, false)
	if err != nil {
		return err
	}
	fresh := make(map[string]BucketInfo, len(all))
	for name, v := range all {
		info, err := decodeBucket(name, v)
		if err != nil {
			s.e.log.Warn("skipping bucket record", "err", err)
			continue
		}
		fresh[name] = info
	}
	s.e.buckets = fresh
	return nil
}

// readConfig and writeConfig are ReadConfig and WriteConfig on the
// group: the version is the log index, the compare-and-set the group's,
// and every read is fresh.
func (s raftState) readConfig(ctx context.Context, name string) ([]byte, uint64, error) {
	v, ver, err := s.group.Get(ctx, spaceConfig, name, true)
	if errors.Is(err, ErrStateNotFound) {
		return nil, 0, ErrNoConfig
	}
	return v, ver, err
}

func (s raftState) writeConfig(ctx context.Context, name string, prev uint64, data []byte) (uint64, error) {
	ver, err := s.group.Put(ctx, spaceConfig, name, prev, data)
	if errors.Is(err, ErrStateConflict) {
		return 0, fmt.Errorf("config %s: %w: %v", name, ErrConfigConflict, err)
	}
	if err != nil {
		return 0, err
	}
	s.e.changed(spaceConfig, name)
	return ver, nil
}

// healConfigs has nothing to restore: the group keeps config documents,
// not the drives.
func (raftState) healConfigs(context.Context) {}
