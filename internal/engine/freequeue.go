package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
)

// The durable free queue (a cluster's delayed frees).
//
// In a cluster a node keeps the data it replaced or deleted for
// ClusterConfig.FreeDelay before it removes the shard files (pins are
// per process: a GET streaming through another node must keep its
// bytes). That wait is a timer in the writing process; when the process
// stops (kill -9, a crash, a restart) the timers are gone, and before
// this queue the files were left to the scanner's orphan sweep, an hour
// later (finding H1 in docs/consistency.md: drives that filled up with
// replaced data stayed full across restarts).
//
// Now the batch that drops a version's refs from a drive also records,
// on the same drive and in the same batch, one entry per freed data id
// under TableSystem "freeq/<due>/<id>" (due: the writer's clock +
// FreeDelay, 16 hex digits of Unix nanoseconds, so the entries sort by
// due time), whose value names the id's part numbers (encodeFree). The
// writer still frees at due from its timer, as before. The node the
// drive is attached to (ClusterConfig.Local) sweeps its drives' queues
// (sweepFreeQueue, every freeSweepEvery): an entry due more than
// FreeDelay ago (so twice FreeDelay after the change, by then the
// writer's timer has run if its process lived) has its shard files
// removed, unless the id has a ref again on that drive (a heal or a
// rolled-back commit wrote it back: the data is live, only the entry
// goes) or this process pins it, and the entry is deleted. Removing a
// shard file twice is harmless (DeleteShards ignores missing files),
// and the sweep works on a drive whose index is read-only because its
// disk is full (unlinks need no index write; the entries go once the
// index takes writes again).

// freeQueuePrefix is the TableSystem prefix of the queue's entries.
const freeQueuePrefix = "freeq/"

// freeSweepBatch bounds the entries one sweep of a drive handles.
const freeSweepBatch = 1000

// maxFreeParts bounds the part numbers of one entry (S3 allows 10,000
// parts; a data id holds one part or a whole object's).
const maxFreeParts = 10000

// maxFreePart bounds one part number.
const maxFreePart = 1 << 20

// freeEntry is one pending free: the shard files of data id ID (parts
// Parts) on the drive holding the entry, due at Due.
type freeEntry struct {
	Due   time.Time
	ID    string
	Parts []int
}

// freeKey is the TableSystem key of the free of id due at due.
func freeKey(due time.Time, id string) string {
	return fmt.Sprintf("%s%016x/%s", freeQueuePrefix, uint64(due.UnixNano()), id)
}

// freeFormat is the first byte of an entry's value.
const freeFormat = 1

// encodeFree is an entry's value: freeFormat, the count of part numbers
// and each as an unsigned varint.
func encodeFree(parts []int) []byte {
	b := make([]byte, 0, 2+2*len(parts))
	b = append(b, freeFormat)
	b = binary.AppendUvarint(b, uint64(len(parts)))
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(p))
	}
	return b
}

// decodeFree parses one queue entry (its key and value). Anything not
// written by freeKey and encodeFree is an error: the sweep deletes such
// an entry and frees nothing by it.
func decodeFree(key string, v []byte) (freeEntry, error) {
	rest, ok := strings.CutPrefix(key, freeQueuePrefix)
	if !ok || len(rest) < 18 || rest[16] != '/' {
		return freeEntry{}, fmt.Errorf("free queue key %q: not %s<due>/<id>", key, freeQueuePrefix)
	}
	for _, c := range rest[:16] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return freeEntry{}, fmt.Errorf("free queue key %q: bad due time", key)
		}
	}
	due, err := strconv.ParseUint(rest[:16], 16, 64)
	if err != nil || due > 1<<63-1 {
		return freeEntry{}, fmt.Errorf("free queue key %q: bad due time", key)
	}
	id := rest[17:]
	if err := checkFreeID(id); err != nil {
		return freeEntry{}, fmt.Errorf("free queue key %q: %w", key, err)
	}
	if len(v) == 0 || v[0] != freeFormat {
		return freeEntry{}, fmt.Errorf("free queue entry %q: unknown format", key)
	}
	v = v[1:]
	n, k := binary.Uvarint(v)
	if k <= 0 || n == 0 || n > maxFreeParts {
		return freeEntry{}, fmt.Errorf("free queue entry %q: bad part count", key)
	}
	v = v[k:]
	parts := make([]int, 0, min(int(n), len(v)))
	for i := uint64(0); i < n; i++ {
		p, k := binary.Uvarint(v)
		if k <= 0 || p > maxFreePart {
			return freeEntry{}, fmt.Errorf("free queue entry %q: bad part number", key)
		}
		parts = append(parts, int(p))
		v = v[k:]
	}
	if len(v) != 0 {
		return freeEntry{}, fmt.Errorf("free queue entry %q: %d bytes after the parts", key, len(v))
	}
	return freeEntry{Due: time.Unix(0, int64(due)), ID: id, Parts: parts}, nil
}

// checkFreeID refuses a data id that could not be one: empty, too long,
// or holding a byte a shard file's name could not (a path separator).
func checkFreeID(id string) error {
	if id == "" || len(id) > 128 {
		return errors.New("bad data id")
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c <= ' ' || c >= 0x7f || c == '/' || c == '\\' {
			return errors.New("bad data id")
		}
	}
	if id == "." || id == ".." {
		return errors.New("bad data id")
	}
	return nil
}

// refs are the shard files of the entry.
func (f freeEntry) refs() []drive.ShardRef {
	out := make([]drive.ShardRef, len(f.Parts))
	for i, p := range f.Parts {
		out[i] = drive.ShardRef{ID: f.ID, Part: p}
	}
	return out
}

// freedRefs groups the shard files of versions by data id, except ids
// in keep: what a drive frees once versions are dropped from it.
func freedRefs(versions []*meta.Object, keep map[string]bool) map[string][]drive.ShardRef {
	byID := map[string][]drive.ShardRef{}
	for _, v := range versions {
		for _, r := range shardRefs(v) {
			if !keep[r.ID] {
				byID[r.ID] = append(byID[r.ID], r)
			}
		}
	}
	return byID
}

// queueFrees adds to b, on a cluster node, the queue entries of the
// shard files of versions (except ids in keep) that b's drive frees
// after FreeDelay. b drops the versions' refs (dropVersions), so the
// entries are durable exactly when the drop is. On a single node frees
// run at once and nothing is queued.
func (e *Engine) queueFrees(b *drive.Batch, versions []*meta.Object, keep map[string]bool) {
	if e.pins.delay <= 0 {
		return
	}
	due := time.Now().Add(e.pins.delay)
	for id, refs := range freedRefs(versions, keep) {
		if checkFreeID(id) != nil {
			continue // not a name DeleteShards could take either
		}
		parts := make([]int, len(refs))
		for i, r := range refs {
			parts[i] = r.Part
		}
		b.Put(drive.TableSystem, freeKey(due, id), encodeFree(parts))
	}
}

// freeSweepEvery is how often a cluster node sweeps its drives' free
// queues: a quarter of the delay, at least 100 ms, at most a minute.
func freeSweepEvery(delay time.Duration) time.Duration {
	return min(max(delay/4, 100*time.Millisecond), time.Minute)
}

// startFreeSweep starts the periodic sweep of the free queues of this
// node's drives (cluster nodes only; Close stops it with the delayed
// frees).
func (e *Engine) startFreeSweep() {
	if !e.clustered() || e.pins.delay <= 0 {
		return
	}
	every := freeSweepEvery(e.pins.delay)
	var tick func()
	tick = func() {
		e.sweepFreeQueues(context.Background(), time.Now())
		e.pins.later(every, tick)
	}
	e.pins.later(every, tick)
}

// sweepFreeQueues sweeps the queue of every drive attached to this node.
func (e *Engine) sweepFreeQueues(ctx context.Context, now time.Time) {
	for slot, d := range e.allDrives() {
		if d == nil || !e.cfg.Cluster.owns(slot) {
			continue
		}
		if _, err := e.sweepFreeQueue(ctx, d, now.Add(-e.pins.delay)); err != nil && !errors.Is(err, drive.ErrDriveFaulty) && !errors.Is(err, drive.ErrDriveFull) {
			e.log.Warn("free queue sweep", "drive", d.String(), "err", err)
		}
	}
}

// sweepFreeQueue frees the entries of d's queue due at or before upTo
// (at most freeSweepBatch of them) and deletes them; it returns how many
// entries went. An entry whose id has a ref on d again, or that this
// process pins, frees nothing (the first goes, the second waits); an
// entry that does not decode goes without freeing anything.
func (e *Engine) sweepFreeQueue(ctx context.Context, d drive.Drive, upTo time.Time) (int, error) {
	ents, err := d.Scan(ctx, drive.TableSystem, drive.ScanQuery{Prefix: freeQueuePrefix, Limit: freeSweepBatch})
	if err != nil {
		return 0, fmt.Errorf("scan free queue: %w", err)
	}
	b := &drive.Batch{}
	for _, ent := range ents {
		f, err := decodeFree(ent.Key, ent.Value)
		if err != nil {
			e.log.Warn("free queue: dropping an entry that does not decode", "drive", d.String(), "err", err)
			b.Delete(drive.TableSystem, ent.Key)
			continue
		}
		if f.Due.After(upTo) {
			break // the entries sort by due time
		}
		if e.pins.pinned(f.ID) {
			continue
		}
		_, err = d.Get(ctx, drive.TableRefs, f.ID)
		switch {
		case err == nil:
			// Live again on this drive (healed or restored): keep it.
		case errors.Is(err, drive.ErrNotFound):
			if err := d.DeleteShards(ctx, f.refs()); err != nil {
				return 0, fmt.Errorf("free %s: %w", f.ID, err)
			}
		default:
			return 0, fmt.Errorf("free %s: %w", f.ID, err)
		}
		b.Delete(drive.TableSystem, ent.Key)
	}
	if b.Len() == 0 {
		return 0, nil
	}
	if err := d.Apply(ctx, b); err != nil {
		return 0, fmt.Errorf("delete free queue entries: %w", err)
	}
	return b.Len(), nil
}
