package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Rolling expansion (docs/pools.md): a running cluster grows by a pool
// when its nodes are restarted one at a time with the pool appended to
// their drive arguments and the new pool's nodes start with the whole
// list. The deployment's pool list is recorded in the consensus group
// (PoolListSpace/PoolListKey); a node started with that list plus
// appended pools proposes the expansion (a compare-and-set, so it is
// committed once), a node with any other list is refused, and new
// objects go to the new pools only once every node of the list runs with
// it (Complete).

// Where the pool list lives in the consensus state.
const (
	PoolListSpace = "config"
	PoolListKey   = "pools/layout"
)

// Bounds of a recorded pool list.
const (
	maxPoolListBytes = 4 << 20
	maxListDrives    = 16384
	maxListPools     = 256
)

// PoolList is a deployment's pool layout as the consensus group records
// it.
type PoolList struct {
	// Drives are the drive endpoints in slot order, by node id
	// (http://host:port/path, whatever the scheme: moving to TLS changes
	// nothing).
	Drives []string `json:"drives"`
	// Pools are the pools' drive counts, in order.
	Pools []int `json:"pools"`
	// LockNodes are the node ids whose lock tables hold the cluster's
	// locks: the nodes of the list first recorded. Nodes added by an
	// expansion lock on them (dlock.Options.Outside).
	LockNodes []string `json:"lockNodes"`
	// LockMove is set while the lock nodes move to other nodes (a pool
	// holding some is removed): every node locks on both sets
	// (locknodes.go).
	LockMove *LockMove `json:"lockMove,omitempty"`
	// LockEpoch numbers the lock nodes' changes: one more at each phase
	// of a move (0: they never moved).
	LockEpoch int `json:"lockEpoch,omitempty"`
	// NewKeyPools is how many pools, from the first, take new keys:
	// fewer than len(Pools) while an expansion is under way.
	NewKeyPools int `json:"newKeyPools"`
	// Removed are the pools taken out of the list (a shrink, a canceled
	// expansion): their drives are refused as an appended pool unless
	// the operator adds them again on purpose (removed.go).
	Removed []RemovedPool `json:"removed,omitempty"`
}

// Complete reports whether every pool takes new keys (no expansion is
// under way).
func (l PoolList) Complete() bool { return l.NewKeyPools == len(l.Pools) }

// PoolListOf is the list a node started with topology t has; it is
// complete, with every node of t a lock node.
func PoolListOf(t Topology) PoolList {
	l := PoolList{Pools: slices.Clone(t.Pools), NewKeyPools: len(t.Pools)}
	if len(l.Pools) == 0 {
		l.Pools = []int{len(t.Drives)}
		l.NewKeyPools = 1
	}
	for i, d := range t.Drives {
		l.Drives = append(l.Drives, t.ID(d.Node)+t.Drives[i].Path)
	}
	for i := range t.Nodes {
		l.LockNodes = append(l.LockNodes, t.ID(i))
	}
	return l
}

// ParsePoolList reads a recorded pool list, refusing one that is not
// self-consistent.
func ParsePoolList(b []byte) (PoolList, error) {
	var l PoolList
	if len(b) > maxPoolListBytes {
		return l, fmt.Errorf("pool list: %d bytes is too large", len(b))
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return PoolList{}, fmt.Errorf("pool list: %w", err)
	}
	if err := l.validate(); err != nil {
		return PoolList{}, fmt.Errorf("pool list: %w", err)
	}
	return l, nil
}

func (l PoolList) validate() error {
	switch {
	case len(l.Pools) == 0 || len(l.Pools) > maxListPools:
		return fmt.Errorf("%d pools (1 to %d)", len(l.Pools), maxListPools)
	case len(l.Drives) == 0 || len(l.Drives) > maxListDrives:
		return fmt.Errorf("%d drives (1 to %d)", len(l.Drives), maxListDrives)
	case l.NewKeyPools < 1 || l.NewKeyPools > len(l.Pools):
		return fmt.Errorf("%d pools take new keys, of %d", l.NewKeyPools, len(l.Pools))
	case len(l.LockNodes) == 0 || len(l.LockNodes) > len(l.Drives):
		return fmt.Errorf("%d lock nodes", len(l.LockNodes))
	}
	total := 0
	for _, n := range l.Pools {
		if n < 1 || n > maxListDrives {
			return fmt.Errorf("a pool of %d drives", n)
		}
		total += n
	}
	if total != len(l.Drives) {
		return fmt.Errorf("the pools hold %d drives, the list names %d", total, len(l.Drives))
	}
	seen := map[string]bool{}
	for _, d := range l.Drives {
		if _, _, err := splitDrive(d); err != nil {
			return err
		}
		if seen[d] {
			return fmt.Errorf("drive %q named twice", d)
		}
		seen[d] = true
	}
	nodes := l.Nodes()
	// While the lock nodes move, the leaving ones may hold no drive of
	// the list any more; those taking over do.
	inList := l.LockNodes
	if l.LockMove != nil {
		inList = l.LockMove.To
		if len(inList) == 0 || len(inList) > len(l.Drives) {
			return fmt.Errorf("%d lock nodes taking over", len(inList))
		}
		for _, n := range l.LockNodes {
			if _, _, err := splitDrive(n + "/"); err != nil || strings.Count(n, "/") != 2 {
				return fmt.Errorf("lock node %q is not a node id (http://host:port)", n)
			}
		}
	}
	if l.LockEpoch < 0 {
		return fmt.Errorf("lock epoch %d", l.LockEpoch)
	}
	for _, n := range inList {
		if !slices.Contains(nodes, n) {
			return fmt.Errorf("lock node %q holds no drive of the list", n)
		}
	}
	return l.validateRemoved()
}

// splitDrive cuts a recorded drive endpoint into its node id and path.
func splitDrive(d string) (node, path string, err error) {
	rest, ok := strings.CutPrefix(d, "http://")
	host, p, found := strings.Cut(rest, "/")
	if !ok || !found || host == "" || len(d) > 4096 || strings.ContainsFunc(d, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", "", fmt.Errorf("drive %q is not http://host:port/path", d)
	}
	return "http://" + host, "/" + p, nil
}

// Nodes are the node ids of the list's drives, in order of first
// appearance.
func (l PoolList) Nodes() []string {
	var out []string
	for _, d := range l.Drives {
		if n, _, err := splitDrive(d); err == nil && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Relation is how one pool list stands to another.
type Relation int

const (
	// Unrelated lists are neither equal nor one an append of the other.
	Unrelated Relation = iota
	// Same: the same pools and drives.
	Same
	// Appends: the list is the other one with pools appended.
	Appends
	// Prefix: the other list is this one with pools appended.
	Prefix
)

// Relate says how a stands to b, and for Unrelated lists why, in words.
func Relate(a, b PoolList) (Relation, string) {
	short, long, rel := a, b, Prefix
	if len(a.Pools) > len(b.Pools) {
		short, long, rel = b, a, Appends
	}
	for i, n := range short.Pools {
		if long.Pools[i] != n {
			return Unrelated, fmt.Sprintf("pool %d has %d drives in one list and %d in the other", i+1, n, long.Pools[i])
		}
	}
	for i, d := range short.Drives {
		if i >= len(long.Drives) || long.Drives[i] != d {
			return Unrelated, fmt.Sprintf("drive %d is %s in one list, %s in the other", i+1, d, at(long.Drives, i))
		}
	}
	if len(a.Pools) == len(b.Pools) {
		return Same, ""
	}
	return rel, ""
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "absent"
}

// describe is a list in words for messages.
func (l PoolList) describe() string {
	return fmt.Sprintf("%d pool(s) of %v drives over %d nodes", len(l.Pools), l.Pools, len(l.Nodes()))
}

// ErrPoolList marks a start refused because of its pool list.
var ErrPoolList = errors.New("pool list refused")

// PlanStart decides what a node started with list mine does, given the
// recorded list rec: the list to record (propose true: a compare-and-set
// the caller makes), or an error (ErrPoolList) naming the difference.
// mayExpand says whether an expansion may be proposed now (the pools
// feature gate); its error is the reason it may not.
func PlanStart(rec, mine PoolList, mayExpand func() error) (next PoolList, propose bool, err error) {
	rel, why := Relate(mine, rec)
	switch rel {
	case Same:
		return rec, false, nil
	case Prefix:
		return rec, false, fmt.Errorf("%w: the deployment was expanded to %s, but this node was started with %s: start it with the full list (every pool's argument, in order)", ErrPoolList, rec.describe(), mine.describe())
	case Unrelated:
		return rec, false, fmt.Errorf("%w: this node was started with %s, the deployment records %s, and %s: start it with the deployment's arguments, or with them followed by new pools (an expansion)%s", ErrPoolList, mine.describe(), rec.describe(), why, removedHint(rec, mine))
	}
	if !rec.Complete() {
		return rec, false, fmt.Errorf("%w: an expansion to %s is under way: finish it (start every node of it with its list) before appending more pools", ErrPoolList, rec.describe())
	}
	if err := mayExpand(); err != nil {
		return rec, false, fmt.Errorf("%w: cannot expand to %s yet: %v", ErrPoolList, mine.describe(), err)
	}
	next = mine
	next.LockNodes = slices.Clone(rec.LockNodes)
	next.LockMove, next.LockEpoch = rec.LockMove, rec.LockEpoch // a move under way goes on
	next.NewKeyPools = rec.NewKeyPools
	next.Removed = slices.Clone(rec.Removed)
	if err := checkReadd(rec, next); err != nil {
		return rec, false, err
	}
	return next, true, nil
}

// Completes reports whether an expansion under way can be marked
// complete: every node of rec answered its hello (hellos, by node id)
// with rec's list and an open engine (a deployment id); otherwise it
// says which nodes hold it up.
func Completes(rec PoolList, hellos map[string]Hello) (bool, []string) {
	var blocked []string
	for _, n := range rec.Nodes() {
		h, ok := hellos[n]
		switch {
		case !ok:
			blocked = append(blocked, n+" is not answering")
		case h.Starting || h.Deployment == "":
			blocked = append(blocked, n+" is starting")
		default:
			if rel, _ := Relate(h.PoolList(), rec); rel != Same {
				blocked = append(blocked, n+" runs with "+h.PoolList().describe())
			}
		}
	}
	return len(blocked) == 0, blocked
}

// PoolList is the pool list a hello reports (a hello without pools is
// one pool of its drives).
func (h Hello) PoolList() PoolList {
	l := PoolList{Pools: slices.Clone(h.Pools)}
	if len(l.Pools) == 0 {
		l.Pools = []int{len(h.Drives)}
	}
	for _, d := range h.Drives {
		// Endpoints carry the scheme; the list is by node id.
		if rest, ok := strings.CutPrefix(d, "https://"); ok {
			d = "http://" + rest
		}
		l.Drives = append(l.Drives, d)
	}
	l.NewKeyPools = len(l.Pools)
	return l
}

// Deployment is the deployment id this node's hello reports.
func (s *PeerServer) Deployment() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.hello.Deployment
}

// SetGroup marks this node as holding a consensus log (its hello's
// Group), once its member of the group is open.
func (s *PeerServer) SetGroup() {
	s.mu.Lock()
	s.hello.Group = true
	s.mu.Unlock()
}
