package engine

import "sync"

// healQueue remembers objects that have a missing, stale or corrupt shard
// on some drive: reads that rebuilt data and writes that missed a drive
// add to it. It is the hand-off point to the healer.
type healQueue struct {
	mu      sync.Mutex
	pending map[[2]string]struct{}
}

func newHealQueue() *healQueue { return &healQueue{pending: make(map[[2]string]struct{})} }

func (q *healQueue) add(bucket, key string) {
	q.mu.Lock()
	q.pending[[2]string{bucket, key}] = struct{}{}
	q.mu.Unlock()
}

// PendingHeals reports how many objects wait for repair.
func (e *Engine) PendingHeals() int {
	e.heal.mu.Lock()
	defer e.heal.mu.Unlock()
	return len(e.heal.pending)
}
