package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/shardstore/shardstore/internal/drive"
)

// driveState keeps bucket records and config documents on the drives
// (config documents: config.go). A bucket record lives in every drive's
// index (TableBuckets), and a bucket exists when a majority of all
// drives hold its record. The drives have no compare-and-set across
// nodes: in a cluster without a consensus group, a change is made from
// the drives' latest under the bucket's (or the document's) cluster lock.
// raftState keeps its copies of bucket records with the same methods.
type driveState struct{ e *Engine }

func (s driveState) loadBuckets(ctx context.Context) error {
	buckets, err := s.scanRecords(ctx)
	if err != nil {
		return err
	}
	s.e.buckets = buckets
	return nil
}

func (s driveState) reloadBucket(ctx context.Context, bucket string) error {
	info, err := s.readRecord(ctx, bucket)
	switch {
	case err == nil:
		s.e.bucketsMu.Lock()
		s.e.buckets[bucket] = info
		s.e.bucketsMu.Unlock()
	case errors.Is(err, ErrBucketNotFound):
		s.e.bucketsMu.Lock()
		delete(s.e.buckets, bucket)
		s.e.bucketsMu.Unlock()
	default:
		return err
	}
	return nil
}

func (s driveState) reloadBuckets(ctx context.Context) error {
	fresh, err := s.scanRecords(ctx)
	if err != nil {
		return err
	}
	s.e.bucketsMu.Lock()
	s.e.buckets = fresh
	s.e.bucketsMu.Unlock()
	return nil
}

// bucketToChange has no version to give: the drives' records have none.
func (s driveState) bucketToChange(ctx context.Context, bucket string) (BucketInfo, uint64, error) {
	info, err := s.e.BucketInfo(ctx, bucket)
	if err == nil && s.e.clustered() {
		// Under the cluster lock the drives hold the latest record;
		// the cache may predate another node's change.
		info, err = s.readRecord(ctx, bucket)
	}
	return info, 0, err
}

func (s driveState) createBucket(ctx context.Context, info BucketInfo) error {
	if s.e.clustered() {
		// Another node may have created it since this one cached.
		_, err := s.readRecord(ctx, info.Name)
		if err == nil {
			return fmt.Errorf("bucket %s: %w", info.Name, ErrBucketExists)
		}
		if !errors.Is(err, ErrBucketNotFound) {
			return err
		}
	}
	return s.putBucket(ctx, info, 0)
}

func (s driveState) putBucket(ctx context.Context, info BucketInfo, _ uint64) error {
	if err := s.writeRecord(ctx, info); err != nil {
		return err
	}
	s.e.bucketsMu.Lock()
	s.e.buckets[info.Name] = info
	s.e.bucketsMu.Unlock()
	s.e.changed("bucket", info.Name)
	return nil
}

// deleteBucket drops the bucket from the cache and tells the other nodes
// even when it fell short of quorum: some drives no longer hold the
// record.
func (s driveState) deleteBucket(ctx context.Context, bucket string) error {
	errs := forEachDrive(s.e.allDrives(), func(i int, d drive.Drive) error {
		b := &drive.Batch{}
		b.Delete(drive.TableBuckets, bucket)
		if err := d.Apply(ctx, b); err != nil {
			return err
		}
		// Leftovers of failed writes (records on fewer than quorum
		// drives) and in-progress uploads must not outlive the bucket.
		return s.e.purgeBucket(ctx, d, bucket)
	})
	s.e.bucketsMu.Lock()
	delete(s.e.buckets, bucket)
	s.e.bucketsMu.Unlock()
	s.e.changed("bucket", bucket)
	if countNil(errs) < s.e.bucketQuorum() {
		return fmt.Errorf("bucket %s: %w: %v", bucket, ErrWriteQuorum, firstErr(errs))
	}
	return nil
}

// applied has nothing to do: only a consensus group calls it.
func (driveState) applied(string, string) {}

// scanRecords reads the bucket records of every drive: a bucket exists
// when a majority of all drives hold its record; the newest copy wins.
func (s driveState) scanRecords(ctx context.Context) (map[string]BucketInfo, error) {
	drives := s.e.allDrives()
	var mu sync.Mutex
	counts := map[string]int{}
	records := map[string]bucketRecord{}
	errs := forEachDrive(drives, func(i int, d drive.Drive) error {
		ents, err := d.Scan(ctx, drive.TableBuckets, drive.ScanQuery{})
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for _, ent := range ents {
			var r bucketRecord
			if json.Unmarshal(ent.Value, &r) != nil || r.Name != ent.Key {
				continue
			}
			n := ent.Key
			counts[n]++
			if old, ok := records[n]; !ok || r.Created.After(old.Created) {
				records[n] = r
			}
		}
		return nil
	})
	if ok := countNil(errs); ok < s.e.bucketQuorum() && s.e.clustered() {
		// A node cut off from most drives keeps what it knows rather
		// than forgetting every bucket.
		return nil, quorumError("bucket records", errs, ok, s.e.bucketQuorum())
	}
	out := map[string]BucketInfo{}
	for n, c := range counts {
		if c >= s.e.bucketQuorum() {
			out[n] = records[n].info()
		}
	}
	return out, nil
}

// readRecord reads bucket's record from every drive and returns the
// newest one when a majority of all drives hold it (ErrBucketNotFound
// otherwise).
func (s driveState) readRecord(ctx context.Context, bucket string) (BucketInfo, error) {
	drives := s.e.allDrives()
	raws := make([][]byte, len(drives))
	errs := forEachDrive(drives, func(i int, d drive.Drive) error {
		v, err := d.Get(ctx, drive.TableBuckets, bucket)
		raws[i] = v
		return err
	})
	// Copies of one write are byte-identical; the copy most drives hold
	// wins (a drive that missed an update holds an older one), and of
	// equally held copies the later-created bucket.
	votes := map[string]int{}
	var newest *bucketRecord
	best, found := "", 0
	for i, v := range raws {
		if errs[i] != nil {
			continue
		}
		var r bucketRecord
		if json.Unmarshal(v, &r) != nil || r.Name != bucket {
			continue
		}
		found++
		votes[string(v)]++
		n := votes[string(v)]
		if newest == nil || n > votes[best] || (n == votes[best] && r.Created.After(newest.Created)) {
			best, newest = string(v), &r
		}
	}
	if found >= s.e.bucketQuorum() {
		return newest.info(), nil
	}
	notFound := 0
	for _, err := range errs {
		if errors.Is(err, drive.ErrNotFound) {
			notFound++
		}
	}
	if notFound >= s.e.bucketQuorum() || found+notFound == len(drives) {
		return BucketInfo{}, fmt.Errorf("bucket %s: %w", bucket, ErrBucketNotFound)
	}
	return BucketInfo{}, quorumError("bucket "+bucket, errs, found, s.e.bucketQuorum())
}

// writeRecord writes info's record to every drive (quorum of all
// drives).
func (s driveState) writeRecord(ctx context.Context, info BucketInfo) error {
	rec, _ := json.Marshal(recordOf(info))
	drives := s.e.allDrives()
	// Every drive is waited for (not fanOut): a copy landing late could
	// overtake a later change or a deletion, and the heal only adds
	// missing bucket records, it does not refresh stale ones.
	errs := forEachDrive(drives, func(i int, d drive.Drive) error {
		b := &drive.Batch{}
		b.Put(drive.TableBuckets, info.Name, rec)
		return d.Apply(ctx, b)
	})
	if countNil(errs) < s.e.bucketQuorum() {
		return fmt.Errorf("bucket %s: %w: %v", info.Name, ErrWriteQuorum, firstErr(errs))
	}
	return nil
}

// seed is the state the drives hold, bucket records and config documents
// (read by their quorum rules): what a consensus group starts from.
func (s driveState) seed(ctx context.Context) (map[string]map[string][]byte, error) {
	buckets, err := s.scanRecords(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string][]byte{spaceBucket: {}, spaceConfig: {}}
	for name, info := range buckets {
		out[spaceBucket][name], _ = json.Marshal(recordOf(info))
	}
	for name := range s.configNames(ctx) {
		s.e.configMu.Lock()
		data, _, _, err := s.readConfigLocked(ctx, name)
		s.e.configMu.Unlock()
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
