package notify

import (
	"time"
)

// The pipeline: the sender reads records in queue order and hands each
// to one of cfg.Parallel lanes, chosen by a hash of its key; a lane
// sends its records one at a time, in the order it got them, retrying
// each until the target accepts it. So records of one key are never in
// Send together and arrive in queue order, while other keys go on
// beside a slow or refused one. The window (windowPerLane records a
// lane) bounds what is read and not yet acknowledged: the memory of
// the queue is that many records plus the reader's.
//
// The acknowledgements settle in read order: pend holds every record
// read and not yet settled; the first ones that are acknowledged move
// ackSeq/ackOff, the position the cursor file records, so the cursor
// never passes a record that was not acknowledged (a crash sends it,
// and maybe some after it, again). A segment read to its end leaves a
// marker in pend: when the marker settles, every record of the segment
// was acknowledged and the segment is deleted.

// windowPerLane records a lane may hold read and not acknowledged.
const windowPerLane = 4

// pending is one record read and not yet settled, or a segment's end.
type pending struct {
	seq    uint64
	off, n int64    // the frame's place and length
	d      Delivery // dropped once acknowledged
	done   bool     // acknowledged (a marker always is)
	marker bool     // the reader left segment seq for next
	next   uint64
}

// startPipeline makes the lanes (started by the sender) and sets the
// acknowledged position to where the sender starts.
func (q *Queue) startPipeline(seq uint64, off int64) {
	p := q.cfg.Parallel
	q.window = make(chan struct{}, p*windowPerLane)
	q.lanes = make([]chan *pending, p)
	for i := range q.lanes {
		// Never full: a lane holds at most the window.
		q.lanes[i] = make(chan *pending, p*windowPerLane)
	}
	q.ackSeq, q.ackOff, q.lastCursor = seq, off, time.Now()
}

// laneOf is key's lane among n (FNV-1a).
func laneOf(key string, n int) int {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	return int(h % uint64(n))
}

// dispatch waits for room in the window and hands p to its lane; false
// when the queue is closing.
func (q *Queue) dispatch(p *pending) bool {
	select {
	case q.window <- struct{}{}:
	case <-q.stopSender:
		return false
	}
	q.ackMu.Lock()
	q.pend = append(q.pend, p)
	q.ackMu.Unlock()
	q.lanes[laneOf(p.d.Key, len(q.lanes))] <- p
	return true
}

// lane sends its records in order until the queue closes.
func (q *Queue) lane(ch chan *pending) {
	defer q.laneWG.Done()
	for {
		select {
		case p := <-ch:
			if !q.deliver(p.d) {
				return
			}
			q.ack(p)
		case <-q.stopSender:
			return
		}
	}
}

// ack records that the target accepted p.
func (q *Queue) ack(p *pending) {
	q.ackMu.Lock()
	p.done, p.d = true, Delivery{}
	q.settleLocked()
	q.ackMu.Unlock()
	<-q.window
}

// settleLocked moves the acknowledged position over the acknowledged
// records at the head of pend, deletes the segments whose marker it
// passes, and writes the cursor every cursorEvery records or
// cursorInterval, and at every segment change. Holds ackMu.
func (q *Queue) settleLocked() {
	for q.pendHead < len(q.pend) && q.pend[q.pendHead].done {
		p := q.pend[q.pendHead]
		q.pend[q.pendHead] = nil
		q.pendHead++
		if p.marker {
			q.dropSegment(p.seq)
			q.ackSeq, q.ackOff = p.next, 0
			q.writeCursor(q.ackSeq, q.ackOff)
			q.lastCursor, q.sinceCursor = time.Now(), 0
			continue
		}
		q.ackSeq, q.ackOff = p.seq, p.off+p.n
		q.queued.Add(-1)
		q.queuedBytes.Add(-p.n)
		q.sinceCursor++
	}
	switch {
	case q.pendHead == len(q.pend):
		q.pend, q.pendHead = q.pend[:0], 0
	case q.pendHead >= 1024 && 2*q.pendHead >= len(q.pend):
		n := copy(q.pend, q.pend[q.pendHead:])
		clear(q.pend[n:])
		q.pend, q.pendHead = q.pend[:n], 0
	}
	if q.sinceCursor >= cursorEvery || (q.sinceCursor > 0 && time.Since(q.lastCursor) >= cursorInterval) {
		q.writeCursor(q.ackSeq, q.ackOff)
		q.lastCursor, q.sinceCursor = time.Now(), 0
	}
}

// flushCursor writes the acknowledged position if it moved since the
// cursor was last written (the sender calls it when idle).
func (q *Queue) flushCursor() {
	q.ackMu.Lock()
	defer q.ackMu.Unlock()
	if q.sinceCursor > 0 {
		q.writeCursor(q.ackSeq, q.ackOff)
		q.lastCursor, q.sinceCursor = time.Now(), 0
	}
}

// cursorDue is how long until the acknowledged position must be
// written (0 or less: now); a long time when it has not moved.
func (q *Queue) cursorDue() time.Duration {
	q.ackMu.Lock()
	defer q.ackMu.Unlock()
	if q.sinceCursor == 0 {
		return time.Hour
	}
	return cursorInterval - time.Since(q.lastCursor)
}

// dropSegment deletes segment seq, every record of it acknowledged.
func (q *Queue) dropSegment(seq uint64) {
	q.removeSegment(seq)
	q.segMu.Lock()
	defer q.segMu.Unlock()
	delete(q.ends, seq)
	delete(q.from, seq)
	for i, s := range q.segs {
		if s == seq {
			q.segs = append(q.segs[:i], q.segs[i+1:]...)
			break
		}
	}
}
