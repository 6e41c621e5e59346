package consensus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shardstore/shardstore/internal/peerauth"
)

// Membership changes (a cluster expanded with new nodes, a node whose
// log was wiped) go through raft's own single-server changes, never an
// edited configuration: the leader adds a joining node as a non-voter
// (AddNonvoter), the node catches up on the log, then the leader makes
// it a voter (AddVoter). Only nodes the leader's MayJoin accepts are
// added.

// ErrJoinRefused is returned, wrapped with the leader's reason, when the
// leader refuses to add this node.
var ErrJoinRefused = errors.New("the consensus group refused this node")

// maxMemberField bounds a join request's id and address.
const maxMemberField = 512

// joinRequest is the body of a join or promote call.
type joinRequest struct {
	ID      string `json:"id"`
	Address string `json:"address"`
}

// joinAnswer is the leader's answer: the index of the configuration
// that holds the node (it has caught up once it applied it), whether it
// votes, or, from a node that is not the leader, the leader it knows.
type joinAnswer struct {
	Index  uint64 `json:"index"`
	Voter  bool   `json:"voter"`
	Leader string `json:"leader,omitempty"`
}

// validate checks a join request's fields.
func (r joinRequest) validate() error {
	switch {
	case r.ID == "" || r.Address == "":
		return errors.New("a join request needs the node's id and address")
	case len(r.ID) > maxMemberField || len(r.Address) > maxMemberField:
		return fmt.Errorf("a join request's id or address is longer than %d bytes", maxMemberField)
	}
	for _, c := range r.ID + r.Address {
		if c < 0x20 || c == 0x7f {
			return errors.New("a join request's id or address holds a control character")
		}
	}
	return nil
}

// Voters lists the ids of the group's voting members as this node
// knows them (its latest configuration, committed or not).
func (n *Node) Voters() ([]string, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	var out []string
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			out = append(out, string(s.ID))
		}
	}
	return out, nil
}

// suffrage is this node's place in its latest configuration.
func (n *Node) suffrage() (raft.ServerSuffrage, bool) {
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return 0, false
	}
	for _, s := range f.Configuration().Servers {
		if s.ID == raft.ServerID(n.opts.Self.ID) {
			return s.Suffrage, true
		}
	}
	return 0, false
}

// Join makes this node a voting member of the group, asking the members
// in via (the leader answers; the others name the leader they know):
// the leader adds it as a non-voter, it catches up on the log, and the
// leader promotes it. A node that is already a voter (a wiped log: the
// group still lists it) is only brought up to date. It returns
// ErrJoinRefused (wrapped, with the leader's reason) when the leader
// refuses it; otherwise it tries until ctx ends, calling progress with
// what it waits for every few seconds.
func (n *Node) Join(ctx context.Context, via []Member, progress func(string)) error {
	self := joinRequest{ID: n.opts.Self.ID, Address: n.opts.Self.Address}
	body, _ := json.Marshal(self)
	lastReport := time.Now()
	var last error
	for {
		if s, ok := n.suffrage(); ok && s == raft.Voter {
			return nil
		}
		hint := ""
		if addr, _ := n.raft.LeaderWithID(); addr != "" {
			hint = string(addr)
		}
		ans, err := n.askMembers(ctx, hint, via, "join", body)
		if err == nil {
			err = n.catchUp(ctx, ans.Index)
			if err == nil && !ans.Voter {
				ans, err = n.askMembers(ctx, ans.Leader, via, "promote", body)
			}
			if err == nil {
				err = n.catchUp(ctx, ans.Index)
			}
		}
		if errors.Is(err, ErrJoinRefused) {
			return err
		}
		if err != nil {
			last = err
		}
		if progress != nil && time.Since(lastReport) >= 5*time.Second {
			lastReport = time.Now()
			progress(fmt.Sprintf("waiting to be added to the consensus group (%v)", last))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("join the consensus group: %w (%v)", ctx.Err(), last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// catchUp waits until this node applied the log up to index.
func (n *Node) catchUp(ctx context.Context, index uint64) error {
	for n.raft.AppliedIndex() < index {
		select {
		case <-ctx.Done():
			return fmt.Errorf("catching up to entry %d (at %d): %w", index, n.raft.AppliedIndex(), ctx.Err())
		case <-time.After(25 * time.Millisecond):
		}
	}
	return nil
}

// askMembers makes a membership call on the leader: hint first, then
// each member of via, following a "not the leader" answer's hint. The
// answer's Leader is the address that answered.
func (n *Node) askMembers(ctx context.Context, hint string, via []Member, name string, body []byte) (joinAnswer, error) {
	var order []string
	if hint != "" {
		order = append(order, hint)
	}
	for _, m := range via {
		if m.ID != n.opts.Self.ID {
			order = append(order, m.Address)
		}
	}
	var last error = errors.New("no member to ask")
	tried := map[string]bool{}
	for i := 0; i < len(order) && i < 2*len(via)+2; i++ {
		addr := order[i]
		if tried[addr] {
			continue
		}
		tried[addr] = true
		ans, status, err := n.membershipCall(ctx, addr, name, body)
		switch {
		case errors.Is(err, ErrJoinRefused):
			return joinAnswer{}, err
		case err != nil:
			last = err
		case status == http.StatusOK:
			ans.Leader = addr
			return ans, nil
		case status == http.StatusMisdirectedRequest:
			last = fmt.Errorf("%s is not the leader", addr)
			if ans.Leader != "" && !tried[ans.Leader] {
				order = append([]string{ans.Leader}, order[i+1:]...)
				i = -1
			}
		}
	}
	return joinAnswer{}, last
}

// membershipCall posts a join or promote call to addr. A refusal (403)
// is ErrJoinRefused; a "not the leader" answer returns its hint.
func (n *Node) membershipCall(ctx context.Context, addr, name string, body []byte) (joinAnswer, int, error) {
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, n.opts.Scheme+"://"+addr+PathPrefix+name, bytes.NewReader(body))
	if err != nil {
		return joinAnswer{}, 0, err
	}
	n.opts.Key.Sign(req, peerauth.BodyHash(body))
	resp, err := n.hc.Do(req)
	if err != nil {
		return joinAnswer{}, 0, fmt.Errorf("%s to %s: %w", name, addr, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var ans joinAnswer
	switch resp.StatusCode {
	case http.StatusOK, http.StatusMisdirectedRequest:
		_ = json.Unmarshal(out, &ans)
		return ans, resp.StatusCode, nil
	case http.StatusForbidden:
		return joinAnswer{}, resp.StatusCode, fmt.Errorf("%w: %s (answered by %s)", ErrJoinRefused, bytes.TrimSpace(out), addr)
	default:
		return joinAnswer{}, resp.StatusCode, fmt.Errorf("%s to %s: %s: %s", name, addr, resp.Status, bytes.TrimSpace(out))
	}
}

// serveMembership answers a join or promote call (signed, checked by
// Handler). Only the leader changes the configuration; another node
// answers 421 with the leader it knows.
func (n *Node) serveMembership(w http.ResponseWriter, name string, body []byte) {
	if n.raft.State() != raft.Leader {
		addr, _ := n.raft.LeaderWithID()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusMisdirectedRequest)
		_ = json.NewEncoder(w).Encode(joinAnswer{Leader: string(addr)})
		return
	}
	var req joinRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "join request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := req.validate(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ans, err := n.changeMembership(name, req)
	switch {
	case errors.Is(err, ErrJoinRefused):
		http.Error(w, err.Error(), http.StatusForbidden)
	case err != nil:
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(ans)
	}
}

// changeMembership adds req as a non-voter (join) or makes it a voter
// (promote), on the leader, once MayJoin accepts it. A node already in
// the configuration with that role is answered without a change; one
// whose id is listed with another address is refused (two processes
// would share one vote).
func (n *Node) changeMembership(name string, req joinRequest) (joinAnswer, error) {
	cf := n.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return joinAnswer{}, err
	}
	var have *raft.Server
	for _, s := range cf.Configuration().Servers {
		if s.ID == raft.ServerID(req.ID) {
			have = &s
			break
		}
	}
	if have != nil && string(have.Address) != req.Address {
		return joinAnswer{}, fmt.Errorf("%w: member %s is at %s in the group, not %s", ErrJoinRefused, req.ID, have.Address, req.Address)
	}
	id, addr := raft.ServerID(req.ID), raft.ServerAddress(req.Address)
	if have != nil && have.Suffrage == raft.Voter {
		// A voter (one whose log was wiped): nothing to change.
		return joinAnswer{Index: cf.Index(), Voter: true}, nil
	}
	if n.opts.MayJoin == nil {
		return joinAnswer{}, fmt.Errorf("%w: this group adds no members", ErrJoinRefused)
	}
	if err := n.opts.MayJoin(req.ID, req.Address); err != nil {
		return joinAnswer{}, fmt.Errorf("%w: %v", ErrJoinRefused, err)
	}
	var f raft.IndexFuture
	switch {
	case name == "join" && have != nil:
		return joinAnswer{Index: cf.Index()}, nil
	case name == "join":
		n.log.Info("adding a node to the consensus group as a non-voter", "node", req.ID, "address", req.Address)
		f = n.raft.AddNonvoter(id, addr, 0, 10*time.Second)
	case have == nil:
		return joinAnswer{}, fmt.Errorf("%w: %s asked to vote before it joined", ErrJoinRefused, req.ID)
	default:
		n.log.Info("making a node a voter of the consensus group", "node", req.ID, "address", req.Address)
		f = n.raft.AddVoter(id, addr, 0, 10*time.Second)
	}
	if err := f.Error(); err != nil {
		return joinAnswer{}, fmt.Errorf("membership change for %s: %w", req.ID, err)
	}
	return joinAnswer{Index: f.Index(), Voter: name == "promote"}, nil
}
