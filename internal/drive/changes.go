package drive

import (
	"strings"
	"sync"
	"sync/atomic"
)

// ChangeCounter is a drive that counts, per bucket, the index batches it
// committed that touched the bucket's objects, versions or bucket entry
// (Local; Health while it is online over one). A caller that took equal
// marks before and after some work knows that no such change became
// visible on the drive in between: work done ahead of a request (the
// next page of a listing) can be checked for freshness without reading
// the drive again.
//
// A mark is taken after the commit it counts is visible and before its
// Apply returns, so a change acknowledged to a client before a mark was
// taken is either counted in it or was already visible to reads started
// before it.
type ChangeCounter interface {
	Changes(bucket string) (ChangeMark, bool)
}

// ChangeMark is a drive's change count for one bucket at some moment.
// Marks compare with ==: equal marks, no change. The count lives in a
// cell per drive and bucket; a new Local (a drive reopened or replaced)
// or a deleted and recreated bucket has new cells, so its marks never
// equal an old one's.
type ChangeMark struct {
	cell *changeCell
	n    uint64
}

type changeCell struct{ n atomic.Uint64 }

// bucketChanges holds a drive's change cells by bucket. A cell is made
// when first marked or changed and dropped when the bucket's entry is
// deleted, so deleted buckets leave nothing behind.
type bucketChanges struct {
	mu    sync.RWMutex
	cells map[string]*changeCell
}

func (c *bucketChanges) cell(bucket string) *changeCell {
	c.mu.RLock()
	cell := c.cells[bucket]
	c.mu.RUnlock()
	if cell != nil {
		return cell
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cells == nil {
		c.cells = map[string]*changeCell{}
	}
	if cell = c.cells[bucket]; cell == nil {
		cell = new(changeCell)
		c.cells[bucket] = cell
	}
	return cell
}

func (c *bucketChanges) mark(bucket string) ChangeMark {
	cell := c.cell(bucket)
	return ChangeMark{cell: cell, n: cell.n.Load()}
}

// committed counts b's changes. It runs after b's commit (whether or not
// the commit reported success: a failed commit may still have changed
// what reads see) and before Apply returns.
func (c *bucketChanges) committed(b *Batch) {
	last := ""
	for _, ch := range b.Changes {
		var bucket string
		switch ch.Table {
		case TableObjects, TableVersions:
			i := strings.IndexByte(ch.Key, '/')
			if i < 0 {
				continue
			}
			bucket = ch.Key[:i]
		case TableBuckets:
			bucket = ch.Key
			if ch.Delete {
				c.mu.Lock()
				if cell := c.cells[bucket]; cell != nil {
					cell.n.Add(1)
					delete(c.cells, bucket)
				}
				c.mu.Unlock()
				last = ""
				continue
			}
		default:
			continue
		}
		if bucket == last {
			continue
		}
		last = bucket
		c.cell(bucket).n.Add(1)
	}
}
