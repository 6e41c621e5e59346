package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
)

// Importing records written by another store (internal/migrate adopts
// MinIO's drives in place). The migration writes the drives' indexes
// itself, with no engine running, in the shapes the engine reads: these
// helpers keep those shapes here, beside the code that reads them.

// BucketRecord is the TableBuckets value of info, as MakeBucket and the
// bucket configuration calls store it on the drives.
func BucketRecord(info BucketInfo) []byte {
	rec, _ := json.Marshal(recordOf(info))
	return rec
}

// ImportBatch adds to b one drive's records of bucket/key: versions,
// newest first, each already carrying this drive's shard index
// (Erasure.Index) and, for inline versions, InlineData. The newest
// becomes the key's current version (TableObjects), the others its
// noncurrent versions (TableVersions); every data id gets its ref and
// every inline shard its TableInline entry. Every write is a Put, so
// applying the same batch again changes nothing: a resumed migration
// redoes a key whole.
func ImportBatch(b *drive.Batch, bucket, key string, versions []*meta.Object) {
	if len(versions) == 0 {
		return
	}
	owner := []byte(objectOwner(bucket, key))
	for i, v := range versions {
		for _, id := range v.DataIDs() {
			b.Put(drive.TableRefs, id, owner)
		}
		if v.Inline {
			b.Put(drive.TableInline, drive.DataKey(v.DataID, 1), v.InlineData)
		}
		if i > 0 {
			putNoncurrent(b, bucket, key, v)
		}
	}
	cur := *versions[0]
	cur.InlineData = nil
	cur.Flags &^= meta.FlagsPending
	b.Put(drive.TableObjects, drive.ObjectKey(bucket, key), (&meta.Record{Versions: []*meta.Object{&cur}}).Marshal())
}

// AdoptionStateKey is the TableSystem key where `migrate from-minio`
// records its state on each drive: AdoptionRunning while it writes,
// then "adopted" and "finished".
const AdoptionStateKey = "migrate/minio"

// AdoptionRunning is the state of an adoption under way, or interrupted.
const AdoptionRunning = "adopting"

// checkNoAdoption refuses to serve drives that an adoption from MinIO is
// still writing, or left interrupted: the data would be served half
// adopted, and writes made meanwhile could be overwritten when it is
// resumed.
func checkNoAdoption(ctx context.Context, drives []drive.Drive) error {
	for _, d := range drives {
		v, err := d.Get(ctx, drive.TableSystem, AdoptionStateKey)
		if err == nil && string(v) == AdoptionRunning {
			return fmt.Errorf("engine: drive %s: an adoption of MinIO's drives (shardstore migrate from-minio) is under way or was interrupted: run it again to completion first", d)
		}
	}
	return nil
}
