package peerauth

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Errors of the replay check (wrapped in ErrUnauthorized by Verify).
var (
	ErrReplayed    = errors.New("request replayed: its nonce was accepted before")
	ErrTooOld      = errors.New("request too old: more than the replay window of later requests from its sender arrived before it")
	ErrBeforeStart = errors.New("request dated before this node started that does not name this run: a replay of a request to its previous run, or a sender's clock that is behind and a sender that has not heard from this node since it started")
)

// forgetAfter is how long a sender's window is kept after its last
// request: past it, any request of that sender is outside the time
// window (MaxSkew either way), so none can be replayed.
const forgetAfter = 2*MaxSkew + time.Minute

// guard is the receiver's record of accepted nonces.
type guard struct {
	start time.Time
	mu    sync.Mutex
	wins  map[windowKey]*window
	swept time.Time
}

type windowKey struct{ host, epoch string }

// window is one sender's sliding window of sequence numbers to one
// destination: top is the highest accepted, bit (n % Window) of seen
// says whether n in (top-Window, top] was.
type window struct {
	top  uint64
	seen [Window / 64]uint64
	last time.Time
}

func newGuard(start time.Time) *guard {
	return &guard{start: start, wins: map[windowKey]*window{}, swept: start}
}

// admit records (epoch, seq) for host, or says why it must be refused.
// fresh says the request names this run's epoch (signed, see
// HeaderToEpoch): it was made after this node started, whatever its
// date says, so the start check does not apply to it. Every other
// request dated before the start is refused, not only the first of its
// sender's epoch: a sender's window opened by a request made after the
// start does not vouch for its older numbers, which a request to the
// previous run may carry.
func (g *guard) admit(host, epoch string, seq uint64, sent, now time.Time, fresh bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Sub(g.swept) > time.Minute {
		for k, w := range g.wins {
			if now.Sub(w.last) > forgetAfter {
				delete(g.wins, k)
			}
		}
		g.swept = now
	}
	if !fresh && sent.Before(g.start.Add(-StartSlack)) {
		return fmt.Errorf("%w (sent %v before this node's start)", ErrBeforeStart, g.start.Sub(sent).Round(time.Millisecond))
	}
	k := windowKey{host, epoch}
	w := g.wins[k]
	if w == nil {
		w = &window{}
		g.wins[k] = w
	}
	switch {
	case seq > w.top:
		if seq-w.top >= Window {
			w.seen = [Window / 64]uint64{}
		} else {
			for n := w.top + 1; n < seq; n++ {
				w.seen[(n%Window)/64] &^= 1 << (n % 64)
			}
		}
		w.top = seq
	case w.top-seq >= Window:
		return ErrTooOld
	case w.seen[(seq%Window)/64]&(1<<(seq%64)) != 0:
		return ErrReplayed
	}
	w.seen[(seq%Window)/64] |= 1 << (seq % 64)
	w.last = now
	return nil
}
