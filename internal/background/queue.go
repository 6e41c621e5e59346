package background

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// The heal queue is persisted on every drive's system table, one entry
// per queued object (key QueueRecords[@node]/bucket/key, no value), so
// writes that missed a drive are still repaired after a restart. Only
// what changed since the last flush is written, at most once per flush
// interval: the cost of persisting follows the rate of change, not the
// queue's length. A crash can lose the last second of changes, which
// the scanner finds on its next cycle; a drive that missed a flush may
// keep an entry already healed, which the next start heals again (a
// no-op) and removes.

// QueueRecords is the system-table prefix of the persisted heal queues:
// each node's entries are under Engine.NodeRecord(QueueRecords) + "/".
const QueueRecords = "heal/queue"

// legacyQueueFile is where earlier versions kept the whole queue as one
// JSON document, rewritten on every change; loadQueue converts it.
const legacyQueueFile = "heal/mrf.json"

// maxQueue bounds the heal queue's memory; past it new entries are
// dropped (and counted) and the scanner picks them up instead.
const maxQueue = 100_000

// queueFlushEvery is how often the queue's changes are written to the
// drives; queueTick how often the queue loop looks for due entries when
// nothing wakes it; queueBatch how many due entries it takes at a time.
const (
	queueFlushEvery = time.Second
	queueTick       = 250 * time.Millisecond
	queueBatch      = 64
)

// healQueue remembers objects that have a missing, stale or corrupt shard
// on some drive: reads that rebuilt data and writes that missed a drive
// add to it (the "most recently failed" queue). The queue loop drains it.
type healQueue struct {
	clock   Clock
	delay   time.Duration
	mu      sync.Mutex
	pending map[[2]string]*healEntry
	// changed holds the keys added (true) or removed (false) since the
	// last flush to the drives.
	changed map[[2]string]bool
	dropped int
	wake    chan struct{}
}

type healEntry struct {
	gen      uint64    // bumped by every add, so a heal racing an add keeps the entry
	due      time.Time // not before
	attempts int
}

func newHealQueue(clock Clock, delay time.Duration) *healQueue {
	return &healQueue{clock: clock, delay: delay, pending: make(map[[2]string]*healEntry),
		changed: make(map[[2]string]bool), wake: make(chan struct{}, 1)}
}

// QueueHeal queues bucket/key for healing. It waits Config.QueueDelay
// first: a drive that missed a write has often only blinked, and healing
// after it is back succeeds on the first try.
func (j *Jobs) QueueHeal(bucket, key string) { j.queue.add(bucket, key, j.queue.delay) }

// Queued reports how many objects wait in the heal queue.
func (j *Jobs) Queued() int { return j.queue.len() }

// add queues bucket/key, due wait from now.
func (q *healQueue) add(bucket, key string, wait time.Duration) {
	q.mu.Lock()
	k := [2]string{bucket, key}
	ent := q.pending[k]
	if ent == nil {
		if len(q.pending) >= maxQueue {
			q.dropped++
			q.mu.Unlock()
			return
		}
		ent = &healEntry{}
		q.pending[k] = ent
		q.changed[k] = true
	}
	ent.gen++
	ent.due = q.clock.Now().Add(wait)
	ent.attempts = 0
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

type dueItem struct {
	bucket, key string
	gen         uint64
}

// compareDue orders items by bucket, then key.
func compareDue(a, b dueItem) int {
	return cmp.Or(cmp.Compare(a.bucket, b.bucket), cmp.Compare(a.key, b.key))
}

// due returns up to max entries whose time has come, in key order (the
// first max keys of those due: one pass over the queue, not a sort of
// it, since the loop asks for a few at a time from a queue that can hold
// maxQueue).
func (q *healQueue) due(now time.Time, max int) []dueItem {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]dueItem, 0, max+1)
	for k, ent := range q.pending {
		if ent.due.After(now) {
			continue
		}
		it := dueItem{k[0], k[1], ent.gen}
		if len(out) == max && compareDue(it, out[max-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(out, it, compareDue)
		out = slices.Insert(out, i, it)
		if len(out) > max {
			out = out[:max]
		}
	}
	return out
}

// done removes an entry healed at generation gen, unless it was added
// again meanwhile.
func (q *healQueue) done(it dueItem) {
	q.mu.Lock()
	k := [2]string{it.bucket, it.key}
	if ent := q.pending[k]; ent != nil && ent.gen == it.gen {
		delete(q.pending, k)
		q.changed[k] = false
	}
	q.mu.Unlock()
}

// retry pushes an entry back with exponential backoff (drives still
// offline, or quorum missing).
func (q *healQueue) retry(it dueItem) {
	q.mu.Lock()
	if ent := q.pending[[2]string{it.bucket, it.key}]; ent != nil && ent.gen == it.gen {
		ent.attempts++
		backoff := q.delay << min(ent.attempts, 6)
		ent.due = q.clock.Now().Add(max(backoff, time.Second))
	}
	q.mu.Unlock()
}

func (q *healQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

func (q *healQueue) droppedCount() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.dropped
}

// takeChanges returns the changes since the last flush and starts a new
// set.
func (q *healQueue) takeChanges() map[[2]string]bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.changed) == 0 {
		return nil
	}
	ch := q.changed
	q.changed = make(map[[2]string]bool)
	return ch
}

// putBack returns changes a flush could not write, under those made
// since (which are newer).
func (q *healQueue) putBack(ch map[[2]string]bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for k, present := range ch {
		if _, newer := q.changed[k]; !newer {
			q.changed[k] = present
		}
	}
}

// queueLoop heals queued objects as they come due and persists the queue.
func (j *Jobs) queueLoop() {
	defer j.wg.Done()
	ctx := j.ctx
	tick := j.clock.NewTicker(queueTick)
	defer tick.Stop()
	lastPersist := time.Time{}
	for {
		select {
		case <-j.stop:
			return
		case <-tick.C():
		case <-j.queue.wake:
		}
		for _, it := range j.queue.due(j.clock.Now(), queueBatch) {
			if ctx.Err() != nil {
				return
			}
			res, err := j.eng.HealObject(ctx, it.bucket, it.key, HealOptions{})
			switch {
			case err == nil && res.Offline == 0, errors.Is(err, ErrNothingToHeal):
				j.queue.done(it)
				j.mu.Lock()
				j.queueHealed++
				j.mu.Unlock()
			default:
				j.queue.retry(it)
				j.mu.Lock()
				j.queueRetries++
				j.mu.Unlock()
			}
		}
		if j.since(lastPersist) >= queueFlushEvery {
			j.persistQueue(ctx)
			lastPersist = j.clock.Now()
		}
	}
}

// queueEntryPrefix is the system-table prefix of this node's queue.
func (j *Jobs) queueEntryPrefix() string { return j.eng.NodeRecord(QueueRecords) + "/" }

// queueEntry names the entry of bucket/key under prefix; bucket names
// hold no "/", so parseQueueEntry splits it back at the first one.
func queueEntry(prefix, bucket, key string) string { return prefix + bucket + "/" + key }

func parseQueueEntry(prefix, name string) (k [2]string, ok bool) {
	k[0], k[1], ok = strings.Cut(strings.TrimPrefix(name, prefix), "/")
	return k, ok
}

// persistQueue writes what changed in the queue to every drive. When no
// drive took it, the changes are kept for the next flush.
func (j *Jobs) persistQueue(ctx context.Context) {
	ch := j.queue.takeChanges()
	if ch == nil {
		return
	}
	prefix := j.queueEntryPrefix()
	b := &drive.Batch{}
	for k, present := range ch {
		name := queueEntry(prefix, k[0], k[1])
		if present {
			b.Put(drive.TableSystem, name, []byte{})
		} else {
			b.Delete(drive.TableSystem, name)
		}
	}
	errs := eachDrive(j.allDrives(), func(i int, d drive.Drive) error {
		return d.Apply(ctx, b)
	})
	if !slices.Contains(errs, nil) {
		j.queue.putBack(ch)
	}
}

// loadQueue reads the persisted queues of every drive into the queue;
// the union is taken since each drive may have missed some flushes. The
// entries are due at once. A queue in the earlier one-document form is
// converted on its drive.
func (j *Jobs) loadQueue(ctx context.Context) {
	var mu sync.Mutex
	prefix := j.queueEntryPrefix()
	legacy := j.eng.NodeRecord(legacyQueueFile)
	eachDrive(j.allDrives(), func(i int, d drive.Drive) error {
		var keys [][2]string
		entries, err := d.Scan(ctx, drive.TableSystem, drive.ScanQuery{Prefix: prefix, KeysOnly: true})
		if err != nil {
			j.log.Warn("cannot read heal queue", "drive", d.String(), "err", err)
		}
		for _, ent := range entries {
			if k, ok := parseQueueEntry(prefix, ent.Key); ok {
				keys = append(keys, k)
			}
		}
		if old, err := j.loadLegacyQueue(ctx, d, legacy, prefix); err != nil {
			j.log.Warn("cannot convert heal queue file", "drive", d.String(), "err", err)
		} else {
			keys = append(keys, old...)
		}
		mu.Lock()
		for _, k := range keys {
			j.queue.add(k[0], k[1], 0)
		}
		mu.Unlock()
		return nil
	})
}

// loadLegacyQueue converts a drive's queue document (legacyQueueFile,
// named as NodeRecord names it) into entries under prefix, in one batch
// that also removes the document, and returns its keys.
func (j *Jobs) loadLegacyQueue(ctx context.Context, d drive.Drive, name, prefix string) ([][2]string, error) {
	raw, err := getRecord(ctx, d, name)
	if errors.Is(err, drive.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var keys [][2]string
	b := &drive.Batch{}
	if err := json.Unmarshal(raw, &keys); err != nil {
		j.log.Warn("heal queue file unreadable; removed", "drive", d.String(), "err", err)
		keys = nil
	}
	for _, k := range keys {
		b.Put(drive.TableSystem, queueEntry(prefix, k[0], k[1]), []byte{})
	}
	b.Delete(drive.TableSystem, name)
	if err := d.Apply(ctx, b); err != nil {
		return nil, err
	}
	return keys, nil
}
