package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shardstore/shardstore/internal/peerauth"
	"github.com/shardstore/shardstore/internal/release"
	"github.com/shardstore/shardstore/internal/wallclock"
)

// PathPrefix is where a node serves the peer calls of this file.
const PathPrefix = "/_shardstore/peer/v1/"

// Hello is what a node tells its peers about itself at start: nodes that
// disagree on any of it refuse to form a cluster.
type Hello struct {
	// Node is the answering node's URL.
	Node string `json:"node"`
	// Drives are the drive endpoints in slot order.
	Drives []string `json:"drives"`
	// Pools are the pools' drive counts (absent: one pool; a release
	// before rolling expansion). Nodes of an existing deployment whose
	// lists are the same or one an append of the other (an expansion
	// under way) agree (expand.go).
	Pools []int `json:"pools,omitempty"`
	// Group is set when the node has a consensus log: a node whose log
	// is new joins the group through a membership change instead of
	// bootstrapping it when another node has one.
	Group bool `json:"group,omitempty"`
	// SetSize and Parity are what the node was started with (0: not given).
	SetSize int `json:"setSize"`
	Parity  int `json:"parity"`
	// Version is the release (version and commit). Nodes of different
	// releases serve together when their protocols are adjacent
	// (version.go); releases before release stamps refused any other
	// release at their own start.
	Version string `json:"version"`
	// Protocol and Features are the node's internal protocol and the
	// features it supports (package release); absent from the hello of
	// a release before release stamps (protocol 1, no features).
	Protocol int      `json:"protocol,omitempty"`
	Features []string `json:"features,omitempty"`
	// Deployment is the deployment id in the node's formatted drives;
	// empty while it has none (a new deployment, or a node whose drives
	// are all blank or missing).
	Deployment string `json:"deployment,omitempty"`
	// Starting is set while the node has not opened its drives, locks
	// and consensus member yet: it answers hello only (DeploymentExists),
	// and Await waits for it.
	Starting bool `json:"starting,omitempty"`
	// LockEpoch and LockOlder are the node's locker's phase: the epoch
	// of the lock nodes it asks, and how many of its locks were taken
	// under an earlier one (locknodes.go); absent before it serves.
	LockEpoch int `json:"lockEpoch,omitempty"`
	LockOlder int `json:"lockOlder,omitempty"`
}

// HelloFor is the Hello of node self of t.
func HelloFor(t Topology, self, setSize, parity int, version string) Hello {
	h := Hello{Node: t.Nodes[self], SetSize: setSize, Parity: parity, Version: version,
		Protocol: release.Protocol, Features: release.Supported(), Pools: slices.Clone(t.Pools)}
	for i := range t.Drives {
		h.Drives = append(h.Drives, t.Endpoint(i))
	}
	return h
}

// Differences lists what another node's Hello disagrees on, in words.
func (h Hello) Differences(other Hello) []string {
	var out []string
	rel, _ := Relate(h.PoolList(), other.PoolList())
	// A new deployment (both blank) needs the same list everywhere; in an
	// existing one an append is an expansion under way, which the
	// recorded pool list judges (PlanStart).
	// So is a list with whole pools left out (a removal under way, the
	// first pool's included: locknodes.go).
	expanding := (rel == Appends || rel == Prefix || removing(h.PoolList(), other.PoolList())) && (h.Deployment != "" || other.Deployment != "")
	if !slices.Equal(h.Drives, other.Drives) && !expanding {
		why := fmt.Sprintf("it was given %d drives, this node %d", len(other.Drives), len(h.Drives))
		if len(h.Drives) == len(other.Drives) {
			for i := range h.Drives {
				if h.Drives[i] != other.Drives[i] {
					why = fmt.Sprintf("drive %d is %s there but %s here", i+1, other.Drives[i], h.Drives[i])
					break
				}
			}
		}
		out = append(out, "the drive endpoints differ ("+why+"): start every node with the same arguments (or, to expand a deployment, the same arguments followed by the new pools)")
	}
	if h.SetSize != other.SetSize {
		out = append(out, fmt.Sprintf("--set-size is %d there and %d here", other.SetSize, h.SetSize))
	}
	if h.Parity != other.Parity {
		out = append(out, fmt.Sprintf("--parity is %d there and %d here", other.Parity, h.Parity))
	}
	if err := release.Compatible(other.Stamp(), nil); err != nil {
		out = append(out, fmt.Sprintf("it runs release %s, this node %s: %v", other.Version, h.Version, err))
	}
	if h.Deployment != "" && other.Deployment != "" && h.Deployment != other.Deployment {
		out = append(out, fmt.Sprintf("its drives belong to deployment %s, this node's to %s", other.Deployment, h.Deployment))
	}
	return out
}

// PeerServer answers the peer calls of one node.
type PeerServer struct {
	key   peerauth.Key
	hello Hello
	mu    sync.RWMutex
	// notify receives change notices once the node is ready.
	notify func(kind, name string) error
	// locks reports the locker's phase for hello (SetLocks).
	locks func() (epoch, older int)
}

// NewPeerServer serves hello for this node.
func NewPeerServer(key peerauth.Key, hello Hello) *PeerServer {
	return &PeerServer{key: key, hello: hello}
}

// SetDeployment sets the deployment id hello reports (once this node's
// drives are formatted).
func (s *PeerServer) SetDeployment(id string) {
	s.mu.Lock()
	s.hello.Deployment = id
	s.mu.Unlock()
}

// SetOpen marks the node's drives, locks and consensus member as served.
func (s *PeerServer) SetOpen() {
	s.mu.Lock()
	s.hello.Starting = false
	s.mu.Unlock()
}

// OnNotify sets what a change notice from another node does; an error
// is answered as 503 (the change is not applied here).
func (s *PeerServer) OnNotify(fn func(kind, name string) error) {
	s.mu.Lock()
	s.notify = fn
	s.mu.Unlock()
}

func (s *PeerServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, err := s.key.Verify(r, wallclock.Now()); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	switch strings.TrimPrefix(r.URL.Path, PathPrefix) {
	case "hello":
		s.mu.RLock()
		h, locks := s.hello, s.locks
		s.mu.RUnlock()
		if locks != nil {
			h.LockEpoch, h.LockOlder = locks()
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(h)
	case "notify":
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		s.mu.RLock()
		fn := s.notify
		s.mu.RUnlock()
		if fn == nil {
			// Not serving yet: it reads the state when it starts serving,
			// but cannot say it applied this change (Confirm).
			http.Error(w, "this node is starting", http.StatusServiceUnavailable)
			return
		}
		if err := fn(r.URL.Query().Get("kind"), r.URL.Query().Get("name")); err != nil {
			http.Error(w, "change not applied: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

// Peers calls the other nodes.
type Peers struct {
	key   peerauth.Key
	hc    *http.Client
	nodes []string // the other nodes' URLs
	log   *slog.Logger
}

// NewPeers returns a caller of nodes (the other nodes' URLs).
func NewPeers(key peerauth.Key, hc *http.Client, nodes []string, log *slog.Logger) *Peers {
	return &Peers{key: key, hc: hc, nodes: nodes, log: log}
}

func (p *Peers) call(ctx context.Context, method, node, call string, q url.Values) (*http.Response, error) {
	u := node + PathPrefix + call
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, http.NoBody)
	if err != nil {
		return nil, err
	}
	p.key.Sign(req, peerauth.BodyHash(nil))
	resp, err := p.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %s: %s", node, resp.Status, bytes.TrimSpace(msg))
	}
	return resp, nil
}

// Hello asks node who it is.
func (p *Peers) Hello(ctx context.Context, node string) (Hello, error) {
	resp, err := p.call(ctx, http.MethodGet, node, "hello", nil)
	if err != nil {
		return Hello{}, err
	}
	defer resp.Body.Close()
	var h Hello
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&h); err != nil {
		return Hello{}, fmt.Errorf("%s: hello: %w", node, err)
	}
	return h, nil
}

// NotifyTimeout bounds how long a change waits for each other node to
// re-read it.
const NotifyTimeout = 2 * time.Second

// Notify tells every other node that shared state changed and waits
// (NotifyTimeout at most) until each has re-read it, so a request sent
// to any node after the change returns sees it. A node that is down or
// cut off catches up at its next start or periodic re-read.
func (p *Peers) Notify(kind, name string) {
	var wg sync.WaitGroup
	for _, n := range p.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), NotifyTimeout)
			defer cancel()
			resp, err := p.call(ctx, http.MethodPost, n, "notify", url.Values{"kind": {kind}, "name": {name}})
			if err != nil {
				p.log.Debug("change notice not delivered", "node", n, "kind", kind, "name", name, "err", err)
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
}

// Confirm tells every other node that shared state changed, as Notify,
// and returns an error naming each running node that did not answer that
// it applied the change (within NotifyTimeout or ctx): a node that
// refuses the connection is not running, and applies the state when it
// starts.
func (p *Peers) Confirm(ctx context.Context, kind, name string) error {
	errs := make([]error, len(p.nodes))
	var wg sync.WaitGroup
	for i, n := range p.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, NotifyTimeout)
			defer cancel()
			resp, err := p.call(ctx, http.MethodPost, n, "notify", url.Values{"kind": {kind}, "name": {name}})
			if err != nil {
				if !errors.Is(err, syscall.ECONNREFUSED) {
					errs[i] = fmt.Errorf("node %s: %w", n, err)
				}
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// DeploymentExists asks the other nodes whether the deployment this node
// belongs to was made already: true as soon as one reports a deployment
// id, false once every other node answered without one (a new
// deployment: all nodes blank). A node whose own drives are all blank or
// missing cannot tell a first start from a restart on disks that did not
// mount, and must not create drive directories or skip its lock quiet
// period on a guess. progress is called every few seconds while waiting.
func (p *Peers) DeploymentExists(ctx context.Context, progress func(waiting []string)) (bool, error) {
	found := false
	err := p.pollHellos(ctx, progress,
		func(_ string, h Hello) (bool, error) {
			found = found || h.Deployment != ""
			return true, nil
		},
		func(settled int) (bool, error) { return found || settled == len(p.nodes), nil })
	return found, err
}

// Await waits until the other nodes answer hello and agree with mine. It
// returns at once with an error naming the node and what differs when
// one disagrees. With all set it waits for every node (a new deployment
// is formatted only with all drives present); otherwise it returns once a
// majority of all nodes (this one included) agreed and grace has passed
// without the rest. progress is called every few seconds while waiting.
func (p *Peers) Await(ctx context.Context, mine Hello, all bool, grace time.Duration, progress func(waiting []string)) error {
	start := time.Now()
	total := len(p.nodes) + 1
	var refused error
	return p.pollHellos(ctx, progress,
		func(n string, h Hello) (bool, error) {
			if diff := mine.Differences(h); len(diff) > 0 {
				refused = fmt.Errorf("cluster: node %s does not agree with this node (%s): %s", n, mine.Node, strings.Join(diff, "; "))
				return false, refused
			}
			if h.Starting {
				return false, errors.New("it is starting: its drives are not open yet")
			}
			return true, nil
		},
		func(agreed int) (bool, error) {
			switch {
			case refused != nil:
				return true, refused
			case agreed == len(p.nodes):
				return true, nil
			}
			return !all && agreed+1 > total/2 && time.Since(start) >= grace, nil
		})
}

// pollHellos asks every other node for its hello, a round every half
// second, until done says to stop (with its error) or ctx ends. take
// judges each answer, under a lock: true settles the node, which is not
// asked again; false leaves it waiting for the reason take gives. done
// sees how many nodes are settled after each round. progress gets the
// waiting nodes and why every few seconds.
func (p *Peers) pollHellos(ctx context.Context, progress func(waiting []string),
	take func(node string, h Hello) (bool, error), done func(settled int) (bool, error)) error {
	settled := map[string]bool{}
	lastReport := time.Now()
	for {
		var mu sync.Mutex
		var wg sync.WaitGroup
		lastErr := map[string]error{}
		// The round's nodes are chosen before any of its answers comes
		// in: the answers write settled (under mu) while this loop runs.
		var round []string
		for _, n := range p.nodes {
			if !settled[n] {
				round = append(round, n)
			}
		}
		for _, n := range round {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				h, err := p.Hello(cctx, n)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					var ok bool
					if ok, err = take(n, h); ok {
						settled[n] = true
						return
					}
				}
				lastErr[n] = err
			}()
		}
		wg.Wait()
		if stop, err := done(len(settled)); stop {
			return err
		}
		if time.Since(lastReport) >= 5*time.Second && progress != nil {
			lastReport = time.Now()
			var waiting []string
			for _, n := range p.nodes {
				if !settled[n] {
					waiting = append(waiting, fmt.Sprintf("%s (%v)", n, lastErr[n]))
				}
			}
			progress(waiting)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
