package engine

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// List read-ahead: a client lists a bucket one page at a time, each
// request naming where the last page ended, and spends about as long
// parsing a 1000-key page as the server spends making it. While it
// parses, the server makes the next page on another core, so a listing
// costs max(server, client) per page rather than their sum. The work is
// the same the next request would do; only a listing that stops early
// wastes one page of it.
//
// Freshness: a page made ahead is used only if no drive of the engine
// committed a change to the bucket since the page began
// (drive.ChangeCounter marks taken before it was made and again when it
// is asked for). A write acknowledged before the request arrived
// changed some drive's mark before its acknowledgement, so the request
// never sees a page older than what it must show. Drives that do not
// count changes (a cluster's remote drives) turn read-ahead off: their
// writes come from other nodes, which this one does not see.

const (
	// aheadPages bounds the pages kept or being made ahead (one per
	// listing client that is between two pages): at most 1000 entries
	// each.
	aheadPages = 16
	// aheadRunning bounds the pages being made at once.
	aheadRunning = 4
	// aheadKeep is how long a page made ahead waits for its request.
	aheadKeep = 10 * time.Second
	// aheadTimeout bounds the making of one page.
	aheadTimeout = 30 * time.Second
)

// listAhead holds the pages made ahead, by the request they answer.
type listAhead struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	pages   map[aheadKey]*aheadPage
	running int

	started, used, stale, unused atomic.Uint64
}

// aheadKey is the request a page answers: the bucket's versioning state
// is part of it (it decides how prefixes of delete markers list).
type aheadKey struct {
	bucket, versioning string
	opts               ListOptions
}

type aheadPage struct {
	made  time.Time
	done  chan struct{}
	marks []drive.ChangeMark
	res   ListResult
	err   error
}

// ListAheadStats counts what became of the pages made ahead.
type ListAheadStats struct {
	Started uint64 // pages begun ahead of their request
	Used    uint64 // pages that answered their request
	Stale   uint64 // pages dropped because the bucket changed meanwhile
	Unused  uint64 // pages no request asked for in time (or that failed)
}

// ListAheadStats reports what became of the listing pages made ahead.
func (e *Engine) ListAheadStats() ListAheadStats { return e.ahead.stats() }

func newListAhead() *listAhead {
	ctx, cancel := context.WithCancel(context.Background())
	return &listAhead{ctx: ctx, cancel: cancel, pages: map[aheadKey]*aheadPage{}}
}

// stop cancels the pages being made and waits for them. The cancel is
// under mu, so a start either sees it or has counted its page in wg.
func (a *listAhead) stop() {
	a.mu.Lock()
	a.cancel()
	a.mu.Unlock()
	a.wg.Wait()
}

func (a *listAhead) stats() ListAheadStats {
	return ListAheadStats{Started: a.started.Load(), Used: a.used.Load(), Stale: a.stale.Load(), Unused: a.unused.Load()}
}

// take removes and returns the page made for k, or nil.
func (a *listAhead) take(k aheadKey) *aheadPage {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.pages[k]
	if p != nil {
		delete(a.pages, k)
	}
	return p
}

// start makes the page for k in the background with list, unless one is
// kept for k already or the bounds are reached (after dropping pages
// kept too long).
func (a *listAhead) start(k aheadKey, marks func() ([]drive.ChangeMark, bool), list func(context.Context) (ListResult, error)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ctx.Err() != nil || a.pages[k] != nil || a.running >= aheadRunning {
		return
	}
	if len(a.pages) >= aheadPages {
		now := time.Now()
		for key, p := range a.pages {
			if now.Sub(p.made) > aheadKeep && isDone(p.done) {
				delete(a.pages, key)
				a.unused.Add(1)
			}
		}
		if len(a.pages) >= aheadPages {
			return
		}
	}
	p := &aheadPage{made: time.Now(), done: make(chan struct{})}
	a.pages[k] = p
	a.running++
	a.started.Add(1)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer func() {
			a.mu.Lock()
			a.running--
			a.mu.Unlock()
			close(p.done)
		}()
		ms, ok := marks()
		if !ok {
			p.err = errNoMarks
			return
		}
		ctx, cancel := context.WithTimeout(a.ctx, aheadTimeout)
		defer cancel()
		p.marks = ms
		p.res, p.err = list(ctx)
	}()
}

// use returns the result of a page taken for a request whose drives
// show marks now (fresh false: some drive gave none), waiting for it
// while it is being made; ok is false when it cannot answer (failed, or
// the bucket changed since it began).
func (a *listAhead) use(ctx context.Context, p *aheadPage, marks []drive.ChangeMark, fresh bool) (ListResult, bool, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return ListResult{}, false, ctx.Err()
	}
	switch {
	case p.err != nil:
		a.unused.Add(1)
		return ListResult{}, false, nil
	case !fresh || !slices.Equal(p.marks, marks):
		a.stale.Add(1)
		return ListResult{}, false, nil
	}
	a.used.Add(1)
	return p.res, true, nil
}

func isDone(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// errNoMarks is why a page could not be made ahead: some drive could not
// say whether it changed.
var errNoMarks = errors.New("drive change counts unavailable")

// changeMarks is every drive's change mark for bucket, or false when a
// drive cannot give one (offline, remote, busy).
func (e *Engine) changeMarks(bucket string) ([]drive.ChangeMark, bool) {
	drives := e.allDrives()
	out := make([]drive.ChangeMark, 0, len(drives))
	for _, d := range drives {
		cc, ok := d.(drive.ChangeCounter)
		if !ok {
			return nil, false
		}
		m, ok := cc.Changes(bucket)
		if !ok {
			return nil, false
		}
		out = append(out, m)
	}
	return out, true
}
