package engine

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// mrfFile is where the heal queue is persisted, on every drive's system
// volume, so writes that missed a drive are still repaired after a
// restart. It is a snapshot written at most once per flush interval: a
// crash can lose the last second of entries, which the scanner finds on
// its next cycle.
const mrfFile = "heal/mrf.json"

// maxQueue bounds the heal queue's memory; past it new entries are
// dropped (and counted) and the scanner picks them up instead.
const maxQueue = 100_000

// healQueue remembers objects that have a missing, stale or corrupt shard
// on some drive: reads that rebuilt data and writes that missed a drive
// add to it (the "most recently failed" queue). The healer drains it.
type healQueue struct {
	mu      sync.Mutex
	pending map[[2]string]*healEntry
	dirty   bool
	dropped int
	delay   time.Duration
	wake    chan struct{}
}

type healEntry struct {
	gen      uint64    // bumped by every add, so a heal racing an add keeps the entry
	due      time.Time // not before
	attempts int
}

func newHealQueue() *healQueue {
	return &healQueue{pending: make(map[[2]string]*healEntry), wake: make(chan struct{}, 1)}
}

// add queues bucket/key. The entry waits q.delay first: a drive that
// missed a write has often only blinked, and healing after it is back
// succeeds on the first try.
func (q *healQueue) add(bucket, key string) {
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
	}
	ent.gen++
	ent.due = time.Now().Add(q.delay)
	ent.attempts = 0
	q.dirty = true
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

// due returns up to max entries whose time has come, oldest-key first.
func (q *healQueue) due(now time.Time, max int) []dueItem {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []dueItem
	for k, ent := range q.pending {
		if !ent.due.After(now) {
			out = append(out, dueItem{k[0], k[1], ent.gen})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].bucket != out[j].bucket {
			return out[i].bucket < out[j].bucket
		}
		return out[i].key < out[j].key
	})
	if len(out) > max {
		out = out[:max]
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
		q.dirty = true
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
		ent.due = time.Now().Add(max(backoff, time.Second))
	}
	q.mu.Unlock()
}

func (q *healQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

// snapshot returns the queue's keys if it changed since the last one.
func (q *healQueue) snapshot() ([][2]string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.dirty {
		return nil, false
	}
	q.dirty = false
	out := make([][2]string, 0, len(q.pending))
	for k := range q.pending {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0]+"\x00"+out[i][1] < out[j][0]+"\x00"+out[j][1] })
	return out, true
}

func (q *healQueue) markDirty() {
	q.mu.Lock()
	q.dirty = true
	q.mu.Unlock()
}

// persistQueue writes the queue snapshot to every drive if it changed.
func (e *Engine) persistQueue(ctx context.Context) {
	keys, changed := e.heal.snapshot()
	if !changed {
		return
	}
	b, err := json.Marshal(keys)
	if err != nil {
		return
	}
	errs := forEachDrive(e.allDrives(), func(i int, d drive.Drive) error {
		return sysPut(ctx, d, e.nodeFile(mrfFile), b)
	})
	if countNil(errs) == 0 {
		e.heal.markDirty() // try again next time
	}
}

// loadQueue reads the persisted queues of every drive into e.heal; the
// union is taken since each drive may have missed some snapshots.
func (e *Engine) loadQueue(ctx context.Context) {
	var mu sync.Mutex
	forEachDrive(e.allDrives(), func(i int, d drive.Drive) error {
		b, err := sysGet(ctx, d, e.nodeFile(mrfFile))
		if err != nil {
			if !errors.Is(err, drive.ErrNotFound) {
				e.log.Warn("cannot read heal queue", "drive", d.String(), "err", err)
			}
			return nil
		}
		var keys [][2]string
		if err := json.Unmarshal(b, &keys); err != nil {
			e.log.Warn("heal queue file unreadable", "drive", d.String(), "err", err)
			return nil
		}
		mu.Lock()
		for _, k := range keys {
			e.heal.add(k[0], k[1])
		}
		mu.Unlock()
		return nil
	})
}

// PendingHeals reports how many objects wait for repair.
func (e *Engine) PendingHeals() int { return e.heal.len() }
