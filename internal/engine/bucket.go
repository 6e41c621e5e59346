package engine

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/objectlock"
	"github.com/shardstore/shardstore/internal/wallclock"
)

// Bucket records are kept by the engine's shared state (sharedstate.go):
// on the drives, or in a cluster's consensus group. Records are cached
// in memory; in a cluster, a node that changes a record tells the
// others (ClusterConfig.Changed), a cache miss reads the store, and
// changes are made from a fresh read under the bucket's cluster lock.

type bucketRecord struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	Owner   string    `json:"owner"`
	ACL     string    `json:"acl"`
	// Location is absent from records written before regions were
	// recorded; those decode to "" (the server's region).
	Location string `json:"location,omitempty"`
	// Configuration documents (BucketInfo.CORS and the rest); absent
	// from records written before they existed, and when unset.
	CORS              string `json:"cors,omitempty"`
	OwnershipControls string `json:"ownershipControls,omitempty"`
	Website           string `json:"website,omitempty"`
	Policy            string `json:"policy,omitempty"`
	PublicAccessBlock string `json:"publicAccessBlock,omitempty"`
	Tagging           string `json:"tagging,omitempty"`
	Lifecycle         string `json:"lifecycle,omitempty"`
	Versioning        string `json:"versioning,omitempty"`
	ObjectLock        string `json:"objectLock,omitempty"`
	Encryption        string `json:"encryption,omitempty"`
	Logging           string `json:"logging,omitempty"`
	Notification      string `json:"notification,omitempty"`
}

// recordOf is the stored form of info.
func recordOf(info BucketInfo) bucketRecord {
	return bucketRecord{Name: info.Name, Created: info.Created, Owner: info.Owner, ACL: info.ACL,
		Location: info.Location, CORS: info.CORS, OwnershipControls: info.OwnershipControls, Website: info.Website,
		Policy: info.Policy, PublicAccessBlock: info.PublicAccessBlock, Tagging: info.Tagging, Lifecycle: info.Lifecycle,
		Versioning: info.Versioning, ObjectLock: info.ObjectLock, Encryption: info.Encryption, Logging: info.Logging,
		Notification: info.Notification}
}

// info is the BucketInfo a stored record describes.
func (r bucketRecord) info() BucketInfo {
	return BucketInfo{Name: r.Name, Created: r.Created, Owner: r.Owner, ACL: r.ACL, Location: r.Location,
		CORS: r.CORS, OwnershipControls: r.OwnershipControls, Website: r.Website, Policy: r.Policy,
		PublicAccessBlock: r.PublicAccessBlock, Tagging: r.Tagging, Lifecycle: r.Lifecycle,
		Versioning: r.Versioning, ObjectLock: r.ObjectLock, Encryption: r.Encryption, Logging: r.Logging,
		Notification: r.Notification}
}

func (e *Engine) allDrives() []drive.Drive {
	var out []drive.Drive
	for _, s := range e.sets {
		out = append(out, s.drives...)
	}
	return out
}

func (e *Engine) bucketQuorum() int { return len(e.allDrives())/2 + 1 }

// MakeBucket creates a bucket.
func (e *Engine) MakeBucket(ctx context.Context, bucket string, opts BucketOptions) error {
	if err := checkBucketName(bucket); err != nil {
		return err
	}
	unlock, err := e.locks.LockWait(ctx, lockName(bucket, ""))
	if err != nil {
		return err
	}
	defer unlock()
	e.bucketsMu.RLock()
	_, exists := e.buckets[bucket]
	e.bucketsMu.RUnlock()
	if exists {
		return fmt.Errorf("bucket %s: %w", bucket, ErrBucketExists)
	}
	acl := opts.ACL
	if acl == "" {
		acl = "private"
	}
	info := BucketInfo{Name: bucket, Created: wallclock.Now().UTC().Truncate(time.Millisecond), Owner: opts.Owner, ACL: acl, Location: opts.Location,
		OwnershipControls: opts.OwnershipControls}
	if opts.ObjectLock {
		// S3: a bucket created with object lock has versioning Enabled,
		// and both stay for its life.
		info.ObjectLock, info.Versioning = objectlock.Config{}.Marshal(""), VersioningEnabled
	}
	return e.shared.createBucket(ctx, info)
}

// BucketInfo returns a bucket's settings, or ErrBucketNotFound.
func (e *Engine) BucketInfo(ctx context.Context, bucket string) (BucketInfo, error) {
	e.bucketsMu.RLock()
	info, ok := e.buckets[bucket]
	e.bucketsMu.RUnlock()
	if !ok {
		if err := checkBucketName(bucket); err != nil && bucket != reservedBucket {
			return BucketInfo{}, err
		}
		if e.clustered() && bucket != reservedBucket {
			// Created on another node whose notice has not arrived (or
			// was lost): the drives decide.
			if err := e.ReloadBucket(ctx, bucket); err != nil {
				return BucketInfo{}, err
			}
			e.bucketsMu.RLock()
			info, ok = e.buckets[bucket]
			e.bucketsMu.RUnlock()
			if ok {
				return info, nil
			}
		}
		return BucketInfo{}, fmt.Errorf("bucket %s: %w", bucket, ErrBucketNotFound)
	}
	return info, nil
}

// ListBuckets lists all buckets sorted by name.
func (e *Engine) ListBuckets(ctx context.Context) ([]BucketInfo, error) {
	e.bucketsMu.RLock()
	out := make([]BucketInfo, 0, len(e.buckets))
	for _, b := range e.buckets {
		out = append(out, b)
	}
	e.bucketsMu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// DeleteBucket removes an empty bucket (ErrBucketNotEmpty otherwise).
// In-progress multipart uploads of the bucket are aborted with it.
func (e *Engine) DeleteBucket(ctx context.Context, bucket string) error {
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return err
	}
	unlock, err := e.locks.LockWait(ctx, lockName(bucket, ""))
	if err != nil {
		return err
	}
	defer unlock()
	// Any version, delete markers included, keeps a bucket from going.
	res, err := e.ListObjectVersions(ctx, bucket, ListVersionsOptions{MaxKeys: 1})
	if err != nil {
		return err
	}
	if len(res.Versions) > 0 || len(res.CommonPrefixes) > 0 {
		return fmt.Errorf("bucket %s: %w", bucket, ErrBucketNotEmpty)
	}
	return e.shared.deleteBucket(ctx, bucket)
}

// SetBucketACL replaces a bucket's canned ACL.
func (e *Engine) SetBucketACL(ctx context.Context, bucket, acl string) error {
	return e.updateBucket(ctx, bucket, func(info *BucketInfo) error {
		info.ACL = acl
		return nil
	})
}

// SetBucketConfig replaces (or, with doc "", removes) one of a bucket's
// configuration documents, storing the bucket record as SetBucketACL.
func (e *Engine) SetBucketConfig(ctx context.Context, bucket string, which BucketConfig, doc string) error {
	return e.updateBucket(ctx, bucket, func(info *BucketInfo) error {
		switch which {
		case BucketConfigCORS:
			info.CORS = doc
		case BucketConfigOwnershipControls:
			info.OwnershipControls = doc
		case BucketConfigWebsite:
			info.Website = doc
		case BucketConfigPolicy:
			info.Policy = doc
		case BucketConfigPublicAccessBlock:
			info.PublicAccessBlock = doc
		case BucketConfigTagging:
			info.Tagging = doc
		case BucketConfigLifecycle:
			info.Lifecycle = doc
		case BucketConfigEncryption:
			info.Encryption = doc
		case BucketConfigLogging:
			info.Logging = doc
		case BucketConfigNotification:
			info.Notification = doc
		case BucketConfigVersioning:
			// S3 knows two states to set; a bucket never returns to
			// "unversioned" once it had one.
			if doc != VersioningEnabled && doc != VersioningSuspended {
				return fmt.Errorf("%w: versioning state %q", ErrInvalidArgument, doc)
			}
			if info.ObjectLock != "" && doc != VersioningEnabled {
				return fmt.Errorf("bucket %s: %w: object lock is enabled, so versioning stays Enabled", bucket, ErrInvalidBucketState)
			}
			info.Versioning = doc
		case BucketConfigObjectLock:
			if doc == "" {
				return fmt.Errorf("bucket %s: %w: object lock cannot be turned off", bucket, ErrInvalidBucketState)
			}
			if info.Versioning != VersioningEnabled {
				return fmt.Errorf("bucket %s: %w: object lock needs versioning Enabled", bucket, ErrInvalidBucketState)
			}
			cfg, err := objectlock.Parse([]byte(doc))
			if err != nil {
				return fmt.Errorf("%w: object lock configuration: %v", ErrInvalidArgument, err)
			}
			info.ObjectLock = cfg.Marshal("")
		default:
			return fmt.Errorf("bucket config %q: %w", which, ErrInvalidArgument)
		}
		return nil
	})
}

// updateBucket changes a bucket's record under the bucket's lock: it
// reads the latest record, lets change edit it, stores it and caches it.
func (e *Engine) updateBucket(ctx context.Context, bucket string, change func(*BucketInfo) error) error {
	unlock, err := e.locks.LockWait(ctx, lockName(bucket, ""))
	if err != nil {
		return err
	}
	defer unlock()
	info, ver, err := e.shared.bucketToChange(ctx, bucket)
	if err != nil {
		return err
	}
	if err := change(&info); err != nil {
		return err
	}
	return e.shared.putBucket(ctx, info, ver)
}

// purgeBucket removes every object record, upload and part of bucket from
// one drive, with their data.
func (e *Engine) purgeBucket(ctx context.Context, d drive.Drive, bucket string) error {
	for _, t := range []drive.Table{drive.TableObjects, drive.TableVersions, drive.TableUploads, drive.TableParts} {
		for {
			ents, err := d.Scan(ctx, t, drive.ScanQuery{Prefix: drive.BucketPrefix(bucket), Limit: 1000})
			if err != nil {
				return err
			}
			if len(ents) == 0 {
				break
			}
			b := &drive.Batch{}
			var versions []*meta.Object
			for _, ent := range ents {
				b.Delete(t, ent.Key)
				switch t {
				case drive.TableObjects:
					if r, err := meta.UnmarshalRecord(ent.Value); err == nil {
						versions = append(versions, r.Versions...)
					}
				case drive.TableParts, drive.TableVersions:
					if m, err := meta.Unmarshal(ent.Value); err == nil {
						versions = append(versions, m)
					}
				}
			}
			if err := e.applyDropping(ctx, d, b, versions, nil); err != nil {
				return err
			}
		}
	}
	return nil
}
