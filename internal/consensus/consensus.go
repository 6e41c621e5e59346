package consensus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/shardstore/shardstore/internal/peerauth"
	"github.com/shardstore/shardstore/internal/wallclock"
)

// PathPrefix is where a node serves the group's calls.
const PathPrefix = "/_shardstore/raft/v1/"

var (
	// ErrNotFound: the key is absent.
	ErrNotFound = errors.New("not found in the cluster state")
	// ErrConflict: the key's version is not the one a change expected.
	ErrConflict = errors.New("cluster state changed concurrently")
	// ErrUnavailable: no leader could be reached (a majority of nodes is
	// down or cut off), or the outcome of a change is unknown.
	ErrUnavailable = errors.New("cluster state unavailable: no majority of nodes reachable")
)

// errRetry marks a failure before a change was taken: try again.
var errRetry = errors.New("retry")

// errLeaderChanged: a call to the leader was abandoned because this node
// learnt that it is no longer the leader (it may be cut off and would
// never answer).
var errLeaderChanged = errors.New("the leader changed during the call")

// Member is one node of the group.
type Member struct {
	ID      string // stable name (the node's URL)
	Address string // host:port the other nodes dial
}

// Options configure a Node.
type Options struct {
	// Dir holds the log, the stable store and the snapshots; it is
	// created if missing.
	Dir string
	// Self is this node; Members are all nodes, this one included. A
	// node without state bootstraps the group with Members (every node
	// does, with the same list, so whichever starts first is fine).
	Self    Member
	Members []Member
	Key     peerauth.Key
	// Client makes the forwarded calls (nil: a default client).
	Client *http.Client
	// Scheme is the members' URL scheme for forwarded calls: "http"
	// (when empty) or "https". Raft's own connections take whatever
	// Dial returns (a TLS connection when the nodes speak TLS).
	Scheme string
	// Dial opens raft's connections to other members (nil: a plain
	// TCP dial); the cluster's routes (cluster.Routes) and TLS plug in
	// here.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Stamp, when set, adds the node's release stamp (package release)
	// to the upgrade request that opens a raft connection; the forwarded
	// calls get theirs from Client.
	Stamp  func(http.Header)
	Logger *slog.Logger
	// OnChange is called after a key was written or deleted on this
	// node (also for every key a snapshot restore touched). It runs on
	// the apply path: it must not wait for the group.
	OnChange func(space, key string)
	// HeartbeatTimeout is raft's heartbeat and election timeout (1 s
	// when 0): a leader that died is replaced after about twice this.
	HeartbeatTimeout time.Duration
	// WaitLimit bounds how long a change or a fresh read waits for a
	// leader (15 s when 0): longer than an election, short enough that
	// a node cut off from the majority answers ErrUnavailable.
	WaitLimit time.Duration
	// Join: a node without state does not bootstrap the group; it waits
	// to be added by the leader (Node.Join, membership.go). Set for a
	// node of a group that exists: a new node, or one whose log was
	// wiped.
	Join bool
	// MayJoin, on the leader, decides whether the node id at address may
	// be added to the group (nil: none may). Its error is the refusal
	// the joining node reports.
	MayJoin func(id, address string) error
}

// Node is this process's member of the group.
type Node struct {
	opts      Options
	raft      *raft.Raft
	fsm       *fsm
	store     *raftboltdb.BoltStore
	logs      raft.LogStore
	transport *raft.NetworkTransport
	stream    *streamLayer
	hc        *http.Client
	log       *slog.Logger

	// readyMu guards leaderReady: a new leader serves fresh reads only
	// after a barrier, which commits (and applies) everything earlier
	// leaders committed.
	readyMu     sync.Mutex
	leaderGen   uint64
	leaderReady bool

	done chan struct{}
	wg   sync.WaitGroup
}

// Open starts this node's member of the group. The caller serves
// Handler on the node's HTTP port before or right after.
func Open(o Options) (*Node, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.HeartbeatTimeout <= 0 {
		o.HeartbeatTimeout = time.Second
	}
	if o.WaitLimit <= 0 {
		o.WaitLimit = 15 * time.Second
	}
	if o.Scheme == "" {
		o.Scheme = "http"
	}
	if err := os.MkdirAll(o.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("cluster state directory: %w", err)
	}
	n := &Node{opts: o, hc: o.Client, log: o.Logger, done: make(chan struct{})}
	if n.hc == nil {
		n.hc = &http.Client{Timeout: 30 * time.Second}
	}
	hlog := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: slogWriter{o.Logger}, DisableTime: true})

	store, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(o.Dir, "raft.db")})
	if err != nil {
		return nil, fmt.Errorf("open cluster state log in %s: %w", o.Dir, err)
	}
	n.store = store
	n.logs, err = raft.NewLogCache(256, store)
	if err != nil {
		store.Close()
		return nil, err
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(o.Dir, 2, hlog)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("cluster state snapshots in %s: %w", o.Dir, err)
	}
	n.stream = newStreamLayer(o.Self.Address, o.Key, o.Dial)
	n.stream.stamp = o.Stamp
	n.transport = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: n.stream, MaxPool: 3, Timeout: 10 * time.Second, Logger: hlog,
	})

	cfg := raft.DefaultConfig()
	cfg.LocalID = raft.ServerID(o.Self.ID)
	cfg.Logger = hlog
	cfg.HeartbeatTimeout = o.HeartbeatTimeout
	cfg.ElectionTimeout = o.HeartbeatTimeout
	cfg.LeaderLeaseTimeout = o.HeartbeatTimeout / 2
	cfg.CommitTimeout = 20 * time.Millisecond
	// The state is small: snapshot often, keep a short tail of log.
	cfg.SnapshotThreshold = 1024
	cfg.TrailingLogs = 1024
	notify := make(chan bool, 8)
	cfg.NotifyCh = notify

	n.fsm = newFSM(o.OnChange)
	has, err := raft.HasExistingState(n.logs, store, snaps)
	if err != nil {
		n.closeStores()
		return nil, fmt.Errorf("read cluster state in %s: %w", o.Dir, err)
	}
	if !has && !o.Join {
		var servers []raft.Server
		for _, m := range o.Members {
			servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(m.ID), Address: raft.ServerAddress(m.Address)})
		}
		if err := raft.BootstrapCluster(cfg, n.logs, store, snaps, n.transport, raft.Configuration{Servers: servers}); err != nil {
			n.closeStores()
			return nil, fmt.Errorf("bootstrap cluster state: %w", err)
		}
	}
	n.raft, err = raft.NewRaft(cfg, n.fsm, n.logs, store, snaps, n.transport)
	if err != nil {
		n.closeStores()
		return nil, fmt.Errorf("start cluster state group: %w", err)
	}
	n.wg.Add(1)
	go n.watchLeadership(notify)
	return n, nil
}

func (n *Node) closeStores() {
	if n.transport != nil {
		_ = n.transport.Close()
		n.transport.CloseStreams()
	}
	_ = n.store.Close()
}

// Close leaves the group (the others elect a leader without this node if
// it led) and closes the log.
func (n *Node) Close() error {
	close(n.done)
	err := n.raft.Shutdown().Error()
	n.wg.Wait()
	_ = n.stream.Close()
	n.closeStores()
	return err
}

// watchLeadership marks this node ready to answer read-index requests
// once, as the new leader, it has applied everything before its term.
func (n *Node) watchLeadership(notify <-chan bool) {
	defer n.wg.Done()
	for {
		select {
		case <-n.done:
			return
		case leader := <-notify:
			n.readyMu.Lock()
			n.leaderGen++
			gen := n.leaderGen
			n.leaderReady = false
			n.readyMu.Unlock()
			if !leader {
				continue
			}
			n.wg.Add(1)
			go func() {
				defer n.wg.Done()
				// A future raft drops at shutdown never answers: wait
				// for it only while the node is open.
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				go func() {
					select {
					case <-n.done:
						cancel()
					case <-ctx.Done():
					}
				}()
				if err := waitFuture(ctx, n.raft.Barrier(time.Minute)); err != nil {
					return
				}
				n.readyMu.Lock()
				if n.leaderGen == gen {
					n.leaderReady = true
				}
				n.readyMu.Unlock()
			}()
		}
	}
}

// IsLeader reports whether this node is the group's leader now (as far
// as it knows: a deposed leader learns it within a heartbeat timeout).
// Work one node at a time should do, such as the scanner, runs there.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

func (n *Node) isReadyLeader() bool {
	n.readyMu.Lock()
	defer n.readyMu.Unlock()
	return n.leaderReady
}

// Get returns key's entry in space; fresh reads see every change
// committed before the call (see the package comment).
func (n *Node) Get(ctx context.Context, space, key string, fresh bool) (Entry, error) {
	if fresh {
		if err := n.Sync(ctx); err != nil {
			return Entry{}, err
		}
	}
	e, ok := n.fsm.get(space, key)
	if !ok {
		return Entry{}, fmt.Errorf("%s %q: %w", space, key, ErrNotFound)
	}
	return e, nil
}

// List returns every key of space (fresh as Get).
func (n *Node) List(ctx context.Context, space string, fresh bool) (map[string]Entry, error) {
	if fresh {
		if err := n.Sync(ctx); err != nil {
			return nil, err
		}
	}
	return n.fsm.list(space), nil
}

// Put writes key if its version is prev (0: absent) and returns the new
// version; ErrConflict otherwise.
func (n *Node) Put(ctx context.Context, space, key string, prev uint64, value []byte) (uint64, error) {
	res, err := n.propose(ctx, command{Op: opPut, Space: space, Key: key, Prev: prev, Value: value})
	if err != nil {
		return 0, fmt.Errorf("%s %q: %w", space, key, err)
	}
	return res.Index, nil
}

// Delete removes key if its version is prev; ErrConflict or ErrNotFound
// otherwise.
func (n *Node) Delete(ctx context.Context, space, key string, prev uint64) error {
	if _, err := n.propose(ctx, command{Op: opDelete, Space: space, Key: key, Prev: prev}); err != nil {
		return fmt.Errorf("%s %q: %w", space, key, err)
	}
	return nil
}

// Seeded reports whether the group has its first state (after a fresh
// read).
func (n *Node) Seeded(ctx context.Context) (bool, error) {
	if err := n.Sync(ctx); err != nil {
		return false, err
	}
	return n.fsm.isSeeded(), nil
}

// Seed gives a new group its first state (what the drives held before
// the group existed). Only the first seed applied counts; later ones,
// from other nodes, change nothing.
func (n *Node) Seed(ctx context.Context, state map[string]map[string][]byte) error {
	if _, err := n.propose(ctx, command{Op: opSeed, Seed: state}); err != nil {
		return fmt.Errorf("seed cluster state: %w", err)
	}
	return nil
}

// Sync waits until this node has applied every change committed before
// the call.
func (n *Node) Sync(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, n.opts.WaitLimit)
	defer cancel()
	var last error
	for {
		idx, err := n.readIndex(ctx)
		if err == nil {
			if err := n.fsm.waitFor(ctx, idx); err != nil {
				return fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
			return nil
		}
		if !errors.Is(err, errRetry) {
			return err
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%v)", ErrUnavailable, last)
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// readIndex asks the leader (itself, or by a call) for the index of the
// last command committed now.
func (n *Node) readIndex(ctx context.Context) (uint64, error) {
	if n.raft.State() == raft.Leader {
		return n.localReadIndex(ctx)
	}
	addr, _ := n.raft.LeaderWithID()
	if addr == "" {
		return 0, fmt.Errorf("%w: no leader known", errRetry)
	}
	body, err := n.call(ctx, string(addr), "readindex", nil)
	if errors.Is(err, errLeaderChanged) {
		return 0, fmt.Errorf("%w: %v", errRetry, err) // a read: ask the new one
	}
	if err != nil {
		return 0, err
	}
	var r struct{ Index uint64 }
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, fmt.Errorf("%w: read index from %s: %v", ErrUnavailable, addr, err)
	}
	return r.Index, nil
}

// localReadIndex is readIndex on the leader: it notes the commit index,
// confirms with a majority that it still leads, and returns the last
// command at or below that index.
func (n *Node) localReadIndex(ctx context.Context) (uint64, error) {
	if !n.isReadyLeader() {
		return 0, fmt.Errorf("%w: the leader is catching up", errRetry)
	}
	commit := n.raft.CommitIndex()
	if err := waitFuture(ctx, n.raft.VerifyLeader()); err != nil {
		return 0, fmt.Errorf("%w: %v", errRetry, err)
	}
	for i := commit; i > 0; i-- {
		var l raft.Log
		if err := n.logs.GetLog(i, &l); errors.Is(err, raft.ErrLogNotFound) {
			// Compacted into a snapshot, which this node's state
			// already holds.
			return n.fsm.lastIndex(), nil
		} else if err != nil {
			return 0, fmt.Errorf("%w: read log entry %d: %v", errRetry, i, err)
		}
		if l.Type == raft.LogCommand {
			return i, nil
		}
	}
	return 0, nil
}

// waitFuture waits for f or ctx.
func waitFuture(ctx context.Context, f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// propose commits c through the leader, waits until this node applied
// it, and turns the result's code into an error.
func (n *Node) propose(ctx context.Context, c command) (result, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, n.opts.WaitLimit)
	defer cancel()
	var last error
	for {
		res, err := n.proposeOnce(ctx, b)
		if err == nil {
			switch res.Code {
			case "":
				if err := n.fsm.waitFor(ctx, res.Index); err != nil {
					return res, fmt.Errorf("%w: committed, but %v", ErrUnavailable, err)
				}
				return res, nil
			case codeConflict:
				return res, fmt.Errorf("%w (now at version %d, expected %d)", ErrConflict, res.Current, c.Prev)
			case codeNotFound:
				return res, ErrNotFound
			default:
				return res, fmt.Errorf("cluster state refused a change: %s", res.Msg)
			}
		}
		if !errors.Is(err, errRetry) {
			return result{}, err
		}
		last = err
		select {
		case <-ctx.Done():
			return result{}, fmt.Errorf("%w (%v)", ErrUnavailable, last)
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// proposeOnce applies b on the leader: here, or by forwarding it.
func (n *Node) proposeOnce(ctx context.Context, b []byte) (result, error) {
	if n.raft.State() == raft.Leader {
		return n.applyLocal(ctx, b)
	}
	addr, _ := n.raft.LeaderWithID()
	if addr == "" {
		return result{}, fmt.Errorf("%w: no leader known", errRetry)
	}
	body, err := n.call(ctx, string(addr), "apply", b)
	if err != nil {
		return result{}, err
	}
	var res result
	if err := json.Unmarshal(body, &res); err != nil {
		return result{}, fmt.Errorf("%w: answer of %s: %v", ErrUnavailable, addr, err)
	}
	return res, nil
}

func (n *Node) applyLocal(ctx context.Context, b []byte) (result, error) {
	timeout := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	f := n.raft.Apply(b, timeout)
	if err := waitFuture(ctx, f); err != nil {
		if ctx.Err() != nil {
			return result{}, fmt.Errorf("%w: the change was taken but not confirmed in time: %v", ErrUnavailable, err)
		}
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrEnqueueTimeout) {
			// Not in the log: safe to try again.
			return result{}, fmt.Errorf("%w: %v", errRetry, err)
		}
		// Leadership lost after the entry was appended: it may or may
		// not commit. The caller reports the outcome as unknown.
		return result{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	res, _ := f.Response().(result)
	return res, nil
}

// call makes a signed call to the leader at addr. Answers that say the
// call was not taken (not the leader, a connection that was never made)
// are errRetry. The call is abandoned (errLeaderChanged, also
// ErrUnavailable: a forwarded change may or may not have been taken)
// once this node no longer knows addr as the leader: a leader cut off by
// a partition would otherwise hold the caller for the whole WaitLimit.
func (n *Node) call(ctx context.Context, addr, name string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if a, _ := n.raft.LeaderWithID(); string(a) != addr {
					cancel(errLeaderChanged)
					return
				}
			}
		}
	}()
	out, err := n.callOnce(ctx, addr, name, body)
	if err != nil && errors.Is(context.Cause(ctx), errLeaderChanged) {
		return nil, fmt.Errorf("%w: %w: %s to %s", ErrUnavailable, errLeaderChanged, name, addr)
	}
	return out, err
}

func (n *Node) callOnce(ctx context.Context, addr, name string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.opts.Scheme+"://"+addr+PathPrefix+name, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	n.opts.Key.Sign(req, peerauth.BodyHash(body))
	resp, err := n.hc.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return nil, fmt.Errorf("%w: %v", errRetry, err)
		}
		return nil, fmt.Errorf("%w: %s to %s: %v", ErrUnavailable, name, addr, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: %s to %s: %v", ErrUnavailable, name, addr, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return out, nil
	case http.StatusInternalServerError:
		// The leader took the change and cannot tell its outcome.
		return nil, fmt.Errorf("%w: %s to %s: %s", ErrUnavailable, name, addr, bytes.TrimSpace(out))
	default:
		// Not the leader (any more), not started, stopping: the call
		// was not taken.
		return nil, fmt.Errorf("%w: %s to %s: %s: %s", errRetry, name, addr, resp.Status, bytes.TrimSpace(out))
	}
}

// Handler serves the group's calls (raft streams, forwarded changes and
// read-index requests) under PathPrefix; every call must carry the
// cluster key's signature.
func (n *Node) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bodyHash, err := n.opts.Key.Verify(r, wallclock.Now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, PathPrefix)
		if name == "stream" {
			n.stream.serveStream(w, r)
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if bodyHash != peerauth.BodyHash(body) {
			http.Error(w, "body does not match its signed hash", http.StatusForbidden)
			return
		}
		switch name {
		case "apply":
			if n.raft.State() != raft.Leader {
				http.Error(w, "not the leader", http.StatusMisdirectedRequest)
				return
			}
			res, err := n.applyLocal(r.Context(), body)
			n.answer(w, res, err)
		case "join", "promote":
			n.serveMembership(w, name, body)
		case "readindex":
			if n.raft.State() != raft.Leader {
				http.Error(w, "not the leader", http.StatusMisdirectedRequest)
				return
			}
			idx, err := n.localReadIndex(r.Context())
			n.answer(w, struct{ Index uint64 }{idx}, err)
		default:
			http.NotFound(w, r)
		}
	})
}

func (n *Node) answer(w http.ResponseWriter, v any, err error) {
	switch {
	case errors.Is(err, errRetry):
		http.Error(w, err.Error(), http.StatusMisdirectedRequest)
	case err != nil:
		// Taken, outcome unknown (see call).
		http.Error(w, err.Error(), http.StatusInternalServerError)
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
}

// Status is what admin status shows of the group on one node.
type Status struct {
	State   string `json:"state"`  // Leader, Follower, Candidate, Shutdown
	Leader  string `json:"leader"` // the leader's id, "" when none is known
	Term    uint64 `json:"term"`
	Applied uint64 `json:"applied"` // last index applied on this node
}

// Status reports this node's view of the group.
func (n *Node) Status() Status {
	_, id := n.raft.LeaderWithID()
	term, _ := strconv.ParseUint(n.raft.Stats()["term"], 10, 64)
	return Status{State: n.raft.State().String(), Leader: string(id), Term: term, Applied: n.raft.AppliedIndex()}
}

// slogWriter sends raft's log lines to the server's log.
type slogWriter struct{ log *slog.Logger }

func (s slogWriter) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	level := slog.LevelWarn
	switch {
	case strings.Contains(line, "failed to heartbeat to") || strings.Contains(line, "failed to appendEntries to") ||
		strings.Contains(line, "failed to contact"):
		// Repeated every few hundred ms for each node that is down;
		// the drives' health log and admin status report it once.
		level = slog.LevelDebug
	case strings.Contains(line, "[ERROR]"):
		level = slog.LevelError
	}
	s.log.Log(context.Background(), level, line, "component", "raft")
	return len(p), nil
}
