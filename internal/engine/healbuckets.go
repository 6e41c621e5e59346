package engine

import (
	"context"
	"encoding/json"

	"github.com/shardstore/shardstore/internal/drive"
)

// healBucketRecords gives every drive in drives every bucket's record (a
// drive that was offline when a bucket was made, or replaced), after
// healing the config documents.
func (e *Engine) healBucketRecords(ctx context.Context, drives []drive.Drive) {
	e.healConfigs(ctx)
	all, _ := e.ListBuckets(ctx)
	forEachDrive(drives, func(i int, d drive.Drive) error {
		have, err := bucketNames(ctx, d)
		if err != nil {
			return err
		}
		b := &drive.Batch{}
		for _, bi := range all {
			if !have[bi.Name] {
				rec, _ := json.Marshal(recordOf(bi))
				b.Put(drive.TableBuckets, bi.Name, rec)
			}
		}
		if b.Len() == 0 {
			return nil
		}
		return d.Apply(ctx, b)
	})
}

// bucketNames lists the bucket records a drive holds.
func bucketNames(ctx context.Context, d drive.Drive) (map[string]bool, error) {
	ents, err := d.Scan(ctx, drive.TableBuckets, drive.ScanQuery{KeysOnly: true})
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, ent := range ents {
		have[ent.Key] = true
	}
	return have, nil
}
