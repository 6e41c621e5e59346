package drive

import (
	"sync"
	"sync/atomic"

	"github.com/zeebo/xxh3"
)

// rowCache holds recently read index entries (object records and inline
// shard data) of every drive of a process, by drive index instance and
// key, bounded in bytes, evicted by CLOCK (about least recently used).
//
// Why it exists: a GET of a small object reads a record and an inline
// shard from each of 12 drives' indexes. A pebble point read walks the
// memtable skiplists and each level's cached blocks, a cache miss per
// step across 16 drives' memory: 2-5 us each, a third of the server's
// CPU per GET (docs/performance.md). A hit here is a hash and a map
// lookup.
//
// Consistency: entries are filled only by reads and removed by every
// Apply that touches their key, after its commit. A read that raced a
// commit could fetch the old value and insert it after the commit's
// removal; each shard therefore counts the removals it saw, and a read
// inserts only if no removal happened in its shard since it began.
type rowCache struct {
	shards   [rowShards]rowShard
	perShard int64
	owners   atomic.Uint32
	hits     atomic.Uint64
	misses   atomic.Uint64
}

const rowShards = 64

// rowOverhead is charged per entry on top of its key and value: the map
// slot, the entry and its clock slot.
const rowOverhead = 128

type rowShard struct {
	mu sync.Mutex
	// m is keyed by the key's 64-bit hash (cheaper to look up than the
	// string, a cache miss less); an entry whose key differs is a miss,
	// and a colliding key takes the slot.
	m map[uint64]*rowEntry
	// clock holds the entries in insertion order for CLOCK eviction: a
	// hit only sets the entry's used bit (no list to relink, which cost
	// three cache misses per hit as an LRU list); the hand clears used
	// bits and evicts the first entry without one. Removed entries stay
	// in clock, dead and empty, until a compaction drops them.
	clock []*rowEntry
	hand  int
	live  int
	bytes int64
	// removals counts invalidations; a miss inserts only if it is
	// unchanged since the miss began.
	removals uint64
}

type rowEntry struct {
	key   string
	hash  uint64
	value []byte
	used  bool
	dead  bool
}

func (e *rowEntry) size() int64 { return int64(len(e.key) + len(e.value) + rowOverhead) }

func newRowCache(bytes int64) *rowCache {
	c := &rowCache{perShard: bytes / rowShards}
	for i := range c.shards {
		c.shards[i].m = make(map[uint64]*rowEntry)
	}
	return c
}

// owner returns a new id for a drive's index instance: a reopened index
// gets a new one, so entries of the old instance are never served again
// (they age out).
func (c *rowCache) owner() uint32 { return c.owners.Add(1) }

// cachedTable reports whether point reads of t are cached: the tables a
// GET reads on every drive.
func cachedTable(t Table) bool { return t == TableObjects || t == TableInline }

// rowKey is the cache key of key in t of owner's index: the owner's id
// followed by the index key.
func rowKey(buf []byte, owner uint32, t Table, key string) []byte {
	buf = append(buf[:0], byte(owner>>24), byte(owner>>16), byte(owner>>8), byte(owner), byte(t))
	return append(buf, key...)
}

// lookup returns k's shard and hash.
func (c *rowCache) lookup(k []byte) (*rowShard, uint64) {
	h := xxh3.Hash(k)
	return &c.shards[h%rowShards], h
}

// find returns k's entry in s (mu held), or nil.
func (s *rowShard) find(h uint64, k []byte) *rowEntry {
	if e := s.m[h]; e != nil && e.key == string(k) {
		return e
	}
	return nil
}

// get returns a copy of k's value, or ok false and the shard's removal
// count for a later put.
func (c *rowCache) get(k []byte) (v []byte, ok bool, removals uint64) {
	v, ok, removals = c.read(k)
	if !ok {
		c.misses.Add(1)
	}
	return v, ok, removals
}

// peek returns a copy of k's value if it is cached; a miss is not
// counted (the caller goes on to Get, which counts it).
func (c *rowCache) peek(k []byte) ([]byte, bool) {
	v, ok, _ := c.read(k)
	return v, ok
}

// read is get without counting a miss.
func (c *rowCache) read(k []byte) (v []byte, ok bool, removals uint64) {
	s, h := c.lookup(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.find(h, k)
	if e == nil {
		return nil, false, s.removals
	}
	e.used = true
	c.hits.Add(1)
	v = make([]byte, len(e.value)) // not nil for an empty value, as Get
	copy(v, e.value)
	return v, true, 0
}

// put caches a copy of v as k's value, read after get reported removals,
// unless an entry was removed from the shard since.
func (c *rowCache) put(k []byte, v []byte, removals uint64) {
	size := int64(len(k) + len(v) + rowOverhead)
	if size > c.perShard/4 {
		return // a few huge values must not flush a shard
	}
	s, h := c.lookup(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removals != removals {
		return
	}
	if old := s.m[h]; old != nil {
		s.remove(old)
	}
	e := &rowEntry{key: string(k), hash: h, value: append([]byte(nil), v...)}
	s.m[h] = e
	s.live++
	s.bytes += size
	slot := -1
	for s.bytes > c.perShard {
		i := s.evictOne()
		if i < 0 {
			break
		}
		if slot < 0 {
			slot = i
		}
	}
	if slot >= 0 {
		s.clock[slot] = e // just behind the hand: a full turn before it is looked at
	} else {
		s.clock = append(s.clock, e)
	}
	if len(s.clock) > 2*s.live+16 {
		s.compact()
	}
}

// evictOne advances the clock hand to the first live entry not used
// since the hand last passed it, removes it and returns its slot; -1 if
// two turns found none (no live entry: the accounting would be wrong).
func (s *rowShard) evictOne() int {
	for range 2*len(s.clock) + 1 {
		if s.hand >= len(s.clock) {
			s.hand = 0
		}
		i := s.hand
		e := s.clock[i]
		s.hand++
		switch {
		case e.dead:
		case e.used:
			e.used = false
		default:
			s.remove(e)
			return i
		}
	}
	return -1
}

// compact drops the dead entries from the clock, keeping the order and
// the hand's place in it.
func (s *rowShard) compact() {
	live := s.clock[:0]
	hand := 0
	for i, e := range s.clock {
		if i == s.hand {
			hand = len(live)
		}
		if !e.dead {
			live = append(live, e)
		}
	}
	clear(s.clock[len(live):])
	s.clock, s.hand = live, hand
}

// invalidate removes k: its value changed (or may have, if the commit
// failed) on the drive.
func (c *rowCache) invalidate(k []byte) {
	s, h := c.lookup(k)
	s.mu.Lock()
	s.removals++
	if e := s.find(h, k); e != nil {
		s.remove(e)
		if len(s.clock) > 2*s.live+16 {
			s.compact()
		}
	}
	s.mu.Unlock()
}

// remove takes e out of the map and the accounting, and lets its key
// and value go: the clock drops the empty entry later (until then it
// costs its fixed size, not a value of up to a quarter of the shard).
func (s *rowShard) remove(e *rowEntry) {
	delete(s.m, e.hash)
	s.live--
	s.bytes -= e.size()
	e.dead, e.key, e.value = true, "", nil
}

// size is the bytes the entries hold now.
func (c *rowCache) size() int64 {
	var n int64
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += s.bytes
		s.mu.Unlock()
	}
	return n
}
