package dlock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shardstore/shardstore/internal/peerauth"
)

// PathPrefix is where a node serves its Table to the other nodes. The
// operations are POST PathPrefix + "lock", "rlock", "refresh" and
// "unlock", each with a small signed JSON body.
const PathPrefix = "/_shardstore/lock/v1/"

// The operations of the protocol, the last element of the path.
const (
	opLock    = "lock"
	opRLock   = "rlock"
	opRefresh = "refresh"
	opUnlock  = "unlock"
)

// maxBody bounds a request body: the largest valid one (a maxNameLen
// name, escaped by JSON up to 6 bytes a byte, and the rest) fits.
const maxBody = 6*maxNameLen + 1024

// request is the body of every operation.
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

// ServeHTTP answers 200 with a JSON response for every request it
// understood (granted or not), 401 for an unsigned or badly signed one,
// and 400, 404 or 405 for a malformed one.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, ok := strings.CutPrefix(r.URL.Path, PathPrefix)
	if !ok || (op != opLock && op != opRLock && op != opRefresh && op != opUnlock) {
		http.Error(w, "no such lock operation", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "lock operations are POST", http.StatusMethodNotAllowed)
		return
	}
	bodyHash, err := s.key.Verify(r, time.Now())
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
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	resp, err := s.apply(op, req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
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
type remoteNode struct {
	peer   Peer
	base   string // endpoint without a trailing slash
	key    peerauth.Key
	client *http.Client
	down   atomic.Bool // the last call got no answer
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
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encoding the %s request: %w", op, err)
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, n.base+PathPrefix+op, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s request: %w", op, err)
	}
	r.Header.Set("Content-Type", "application/json")
	n.key.Sign(r, peerauth.BodyHash(body))
	resp, err := n.client.Do(r)
	if err != nil {
		n.down.Store(true)
		return fmt.Errorf("%s: %w", op, err)
	}
	n.down.Store(false)
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", op, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", op, resp.Status, strings.TrimSpace(string(data)))
	}
	var out response
	if err := json.Unmarshal(data, &out); err != nil {
		return fmt.Errorf("%s: bad answer: %w", op, err)
	}
	if !out.OK {
		if op == opUnlock {
			return nil // nothing to release there: the outcome we wanted
		}
		return fmt.Errorf("%w: %s", ErrRefused, out.Reason)
	}
	return nil
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
