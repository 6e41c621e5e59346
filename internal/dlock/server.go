package dlock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardstore/shardstore/internal/peerauth"
	"github.com/shardstore/shardstore/internal/wallclock"
)

// PathPrefix is where a node serves its Table to the other nodes: POST
// PathPrefix + "batch" with a signed JSON body that carries up to
// maxBatch operations ("lock", "rlock", "refresh", "unlock"), applied in
// their order and answered one by one.
const PathPrefix = "/_shardstore/lock/v1/"

// The operations of the protocol: opBatch is the only endpoint (the last
// element of the path), the others are what a batch carries.
const (
	opLock    = "lock"
	opRLock   = "rlock"
	opRefresh = "refresh"
	opUnlock  = "unlock"
	opBatch   = "batch"
)

// maxCallBody bounds one operation of a batch: the largest valid one (a
// maxNameLen name, escaped by JSON up to 6 bytes a byte, and the rest)
// fits.
const maxCallBody = 6*maxNameLen + 1024

// maxBatch is the most operations one batch carries; maxBody, the most
// bytes.
const (
	maxBatch = 64
	maxBody  = maxBatch * maxCallBody
)

// batchCall is one operation of a batch: the op and its request.
type batchCall struct {
	Op string `json:"op"`
	request
}

// batchAnswer answers one operation of a batch: its response, or Error
// for a request no table could grant (an unknown op, a TTL beyond the
// table's maximum, a name too long).
type batchAnswer struct {
	response
	Error string `json:"error,omitempty"`
}

// request is what every operation carries.
type request struct {
	Name  string `json:"name"`
	ID    string `json:"id"`
	Owner string `json:"owner,omitempty"`
	TTL   int64  `json:"ttl_ns,omitempty"` // nanoseconds
}

// response answers a request the node understood: OK is false when the
// lease was refused (lock, rlock) or is not held (refresh, unlock).
type response struct {
	OK     bool   `json:"ok"`
	Reason string `json:"reason,omitempty"`
}

// Server serves a Table to the other nodes. Every request must be signed
// with the cluster key, body included.
type Server struct {
	table *Table
	key   peerauth.Key
}

// NewServer returns the handler of PathPrefix for t, accepting requests
// signed with key.
func NewServer(t *Table, key peerauth.Key) *Server {
	return &Server{table: t, key: key}
}

// ServeHTTP answers a batch it understood 200 with an answer per
// operation (granted, refused or in error), an unsigned or badly signed
// request 401, and a malformed one 400, 404, 405 or 413.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, ok := strings.CutPrefix(r.URL.Path, PathPrefix)
	if !ok || op != opBatch {
		http.Error(w, "no such lock operation", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "lock operations are POST", http.StatusMethodNotAllowed)
		return
	}
	bodyHash, err := s.key.Verify(r, wallclock.Now())
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	if bodyHash == peerauth.Unsigned {
		// A lock request is small: there is no reason to leave it unsigned.
		http.Error(w, "lock requests must sign their body", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > maxBody {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	if peerauth.BodyHash(body) != bodyHash {
		http.Error(w, "body does not match its signed hash", http.StatusUnauthorized)
		return
	}
	s.serveBatch(w, body)
}

// serveBatch applies a batch's operations in their order (an unlock
// sent after its lock is never applied before it) and answers each.
func (s *Server) serveBatch(w http.ResponseWriter, body []byte) {
	var calls []batchCall
	if err := json.Unmarshal(body, &calls); err != nil {
		http.Error(w, "bad batch body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(calls) == 0 || len(calls) > maxBatch {
		http.Error(w, fmt.Sprintf("a batch carries 1 to %d operations, not %d", maxBatch, len(calls)), http.StatusBadRequest)
		return
	}
	answers := make([]batchAnswer, len(calls))
	for i, c := range calls {
		switch c.Op {
		case opLock, opRLock, opRefresh, opUnlock:
			resp, err := s.apply(c.Op, c.request)
			answers[i].response = resp
			if err != nil {
				answers[i].Error = err.Error()
			}
		default:
			answers[i].Error = fmt.Sprintf("no such lock operation %q", c.Op)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(answers)
}

// apply runs one operation on the table. An error is a request that no
// table could grant; a refusal is a response with OK false.
func (s *Server) apply(op string, req request) (response, error) {
	ttl := time.Duration(req.TTL)
	switch op {
	case opLock, opRLock:
		grant := s.table.Lock
		if op == opRLock {
			grant = s.table.RLock
		}
		err := grant(req.Name, req.ID, req.Owner, ttl)
		switch {
		case err == nil:
			return response{OK: true}, nil
		case errors.Is(err, ErrRefused):
			return response{Reason: strings.TrimPrefix(err.Error(), ErrRefused.Error()+": ")}, nil
		default:
			return response{}, err
		}
	case opRefresh:
		if ok := s.table.Refresh(req.Name, req.ID, ttl); !ok {
			return response{Reason: "lease not held (expired or released)"}, nil
		}
		return response{OK: true}, nil
	default: // opUnlock
		return response{OK: s.table.Unlock(req.Name, req.ID)}, nil
	}
}

// node is one member of the cluster as a Locker sees it. call returns nil
// when the node granted (lock, rlock) or confirmed (refresh, unlock), an
// error matching ErrRefused when it definitely did not, and any other
// error when the outcome is unknown (the node may have acted on it).
type node interface {
	call(ctx context.Context, op string, req request) error
	// suspect reports whether the node failed to answer its last call
	// (unreachable or hung), so a round need not wait for it.
	suspect() bool
	String() string
}

// localNode is this node's own table, called directly.
type localNode struct {
	id    string
	table *Table
	// solo: no other node exists, so no holder outlives this table and
	// its restart pause does not apply.
	solo bool
}

func (n *localNode) String() string { return n.id + " (local)" }

func (n *localNode) suspect() bool { return false }

func (n *localNode) call(_ context.Context, op string, req request) error {
	ttl := time.Duration(req.TTL)
	switch op {
	case opLock, opRLock:
		return n.table.grant(req.Name, req.ID, req.Owner, ttl, op == opLock, n.solo)
	case opRefresh:
		if !n.table.Refresh(req.Name, req.ID, ttl) {
			return fmt.Errorf("%w: lease not held (expired or released)", ErrRefused)
		}
	case opUnlock:
		n.table.Unlock(req.Name, req.ID)
	}
	return nil
}

// remoteNode is another node's table, reached through its Server.
//
// Calls to it are sent in batches, one batch in flight at a time: a call
// made while a batch is out waits for it and goes with every other call
// made meanwhile (up to maxBatch). Idle, a call goes at once; under load
// the lock and unlock calls of many requests share one HTTP request,
// which is most of a call's cost. One batch at a time also keeps the
// calls in order: an unlock made after its lock reaches the node after
// it. A call whose context ends before its batch is sent is never sent.
type remoteNode struct {
	peer        Peer
	base        string // endpoint without a trailing slash
	key         peerauth.Key
	client      *http.Client
	callTimeout time.Duration // bounds one batch
	down        atomic.Bool   // the last batch got no answer

	mu      sync.Mutex
	queue   []*queuedCall // waiting for the next batch
	sending bool          // a sender goroutine runs
}

// queuedCall is a call waiting for (or in) a batch.
type queuedCall struct {
	ctx  context.Context
	op   string
	req  request
	done chan error // buffered: the sender never blocks on it
}

func (n *remoteNode) suspect() bool { return n.down.Load() }

func (n *remoteNode) String() string {
	if n.peer.ID != "" {
		return n.peer.ID
	}
	return n.peer.Endpoint
}

func (n *remoteNode) call(ctx context.Context, op string, req request) error {
	if !n.key.Valid() {
		return errors.New("no cluster key to sign lock requests with")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	q := &queuedCall{ctx: ctx, op: op, req: req, done: make(chan error, 1)}
	n.mu.Lock()
	n.queue = append(n.queue, q)
	if !n.sending {
		n.sending = true
		go n.send()
	}
	n.mu.Unlock()
	select {
	case err := <-q.done:
		return err
	case <-ctx.Done():
		n.mu.Lock()
		if i := slices.Index(n.queue, q); i >= 0 {
			n.queue = slices.Delete(n.queue, i, i+1) // never sent
		}
		n.mu.Unlock()
		// Sent or not, the caller stops waiting; a call already sent
		// may still take effect, as a cut-off request may.
		return fmt.Errorf("%s: %w", op, ctx.Err())
	}
}

// send sends the queued calls in batches, one at a time, until none are
// left.
func (n *remoteNode) send() {
	for {
		n.mu.Lock()
		var batch []*queuedCall
		for len(n.queue) > 0 && len(batch) < maxBatch {
			q := n.queue[0]
			n.queue = n.queue[1:]
			if q.ctx.Err() == nil {
				batch = append(batch, q)
			}
		}
		if len(batch) == 0 {
			n.queue = nil
			n.sending = false
			n.mu.Unlock()
			return
		}
		n.mu.Unlock()
		errs := n.sendBatch(batch)
		for i, q := range batch {
			q.done <- errs[i]
		}
	}
}

// sendBatch makes one request for the calls of batch and returns each
// call's outcome.
func (n *remoteNode) sendBatch(batch []*queuedCall) []error {
	errs := make([]error, len(batch))
	failAll := func(format string, args ...any) []error {
		cause := fmt.Errorf(format, args...)
		for i, q := range batch {
			errs[i] = fmt.Errorf("%s: %w", q.op, cause)
		}
		return errs
	}
	calls := make([]batchCall, len(batch))
	for i, q := range batch {
		calls[i] = batchCall{Op: q.op, request: q.req}
	}
	body, err := json.Marshal(calls)
	if err != nil {
		return failAll("encoding the request: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.callTimeout)
	defer cancel()
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, n.base+PathPrefix+opBatch, bytes.NewReader(body))
	if err != nil {
		return failAll("request: %w", err)
	}
	r.Header.Set("Content-Type", "application/json")
	n.key.Sign(r, peerauth.BodyHash(body))
	resp, err := n.client.Do(r)
	if err != nil {
		n.down.Store(true)
		return failAll("%w", err)
	}
	n.down.Store(false)
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(len(batch))*(maxCallBody+64)+4096))
	if err != nil {
		return failAll("reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return failAll("%s: %s", resp.Status, strings.TrimSpace(string(data)))
	}
	var answers []batchAnswer
	if err := json.Unmarshal(data, &answers); err != nil {
		return failAll("bad answer: %w", err)
	}
	if len(answers) != len(batch) {
		return failAll("bad answer: %d answers to %d calls", len(answers), len(batch))
	}
	for i, a := range answers {
		op := batch[i].op
		switch {
		case a.Error != "":
			errs[i] = fmt.Errorf("%s: %s", op, a.Error)
		case !a.OK && op != opUnlock: // nothing to release there: the outcome an unlock wanted
			errs[i] = fmt.Errorf("%w: %s", ErrRefused, a.Reason)
		}
	}
	return errs
}

// defaultClient is used when Options.Client is nil: lock calls are many,
// small and parallel to a few hosts, so it keeps more idle connections
// per host than http.DefaultTransport, and it never follows a redirect.
func defaultClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
