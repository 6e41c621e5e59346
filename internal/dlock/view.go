package dlock

import (
	"fmt"
	"strings"
)

// A view is the lock nodes a Locker asks, as one set, or two while the
// lock nodes move (joint: a lock needs a majority of each set; see
// "Moving the lock nodes" in the package doc). A node in both sets is
// asked once, and its answer counts in both.
type view struct {
	epoch  int
	nodes  []node  // every node of the sets, once; the local table first when it is one
	local  bool    // nodes[0] is this node's own table
	groups [][]int // each set, as indices into nodes
	quorum []int   // each set's majority
	users  int     // attempts in flight and leases held under it (Locker.mu)
}

// makeView builds the view of sets (each a list of peers; a peer whose
// ID is self is this node's own table), reusing the Locker's remote
// nodes so that each node's calls stay in one queue, in order. Within a
// set, a node named twice counts once. solo marks a view of the own
// table alone (a single node: no restart pause). Called with l.mu held,
// or before the Locker is shared.
func (l *Locker) makeView(epoch int, sets [][]Peer, solo bool) *view {
	v := &view{epoch: epoch}
	index := map[string]int{} // "id:"/"url:" -> position in v.nodes
	// The local table goes first when any set names it: it is called
	// without the network, before the others.
	for _, set := range sets {
		for _, p := range set {
			if p.ID == l.self && !v.local {
				v.local = true
				v.nodes = append(v.nodes, &localNode{id: l.self, table: l.own, solo: solo})
				index["id:"+l.self] = 0
			}
		}
	}
	for _, set := range sets {
		var group []int
		in := map[int]bool{}
		for _, p := range set {
			base := normalBase(p.Endpoint)
			i, ok := index["id:"+p.ID]
			if p.ID == "" {
				i, ok = index["url:"+base]
			}
			if !ok && base != "" {
				if j, found := index["url:"+base]; found {
					i, ok = j, true
				}
			}
			if !ok {
				i = len(v.nodes)
				v.nodes = append(v.nodes, l.remote(p, base))
				if p.ID != "" {
					index["id:"+p.ID] = i
				}
				if base != "" {
					index["url:"+base] = i
				}
			}
			// Counting a node twice would let a minority pass for a
			// majority.
			if !in[i] {
				in[i] = true
				group = append(group, i)
			}
		}
		if len(group) > 0 {
			v.groups = append(v.groups, group)
			v.quorum = append(v.quorum, len(group)/2+1)
		}
	}
	return v
}

// remote is the Locker's node object for peer p, made once per node.
func (l *Locker) remote(p Peer, base string) node {
	k := "url:" + base
	if n, ok := l.remotes[k]; ok {
		return n
	}
	n := &remoteNode{peer: p, base: base, key: l.key, client: l.client, callTimeout: l.callTimeout}
	l.remotes[k] = n
	return n
}

func normalBase(endpoint string) string {
	base := strings.TrimRight(endpoint, "/")
	if base != "" && !strings.Contains(base, "://") {
		base = "http://" + base
	}
	return base
}

// counts are a round's grants (ok), certain refusals (no) and nodes still
// unanswered that answered their last call (healthy), per set.
func (v *view) counts(t *tally) (ok, no, healthy []int) {
	ok, no, healthy = make([]int, len(v.groups)), make([]int, len(v.groups)), make([]int, len(v.groups))
	for g, group := range v.groups {
		for _, i := range group {
			switch t.state[i] {
			case stGranted:
				ok[g]++
			case stRefused:
				no[g]++
			case stPending:
				if !v.nodes[i].suspect() {
					healthy[g]++
				}
			}
		}
	}
	return ok, no, healthy
}

// held: a majority of every set granted.
func (v *view) held(t *tally) bool {
	if len(v.groups) == 0 {
		return false // no lock node at all
	}
	ok, _, _ := v.counts(t)
	for g := range v.groups {
		if ok[g] < v.quorum[g] {
			return false
		}
	}
	return true
}

// hopeless: in some set, so many refused for certain that no majority of
// it can grant.
func (v *view) hopeless(t *tally) bool {
	_, no, _ := v.counts(t)
	for g, group := range v.groups {
		if no[g] > len(group)-v.quorum[g] {
			return true
		}
	}
	return false
}

// reached: a majority of every set answered at all (granted or refused):
// this node is not cut off.
func (v *view) reached(t *tally) bool {
	ok, no, _ := v.counts(t)
	for g := range v.groups {
		if ok[g]+no[g] < v.quorum[g] {
			return false
		}
	}
	return true
}

// decided: the round's outcome is known, or only nodes that failed their
// last call could still make it a grant.
func (v *view) decided(t *tally) bool {
	if v.held(t) || v.hopeless(t) {
		return true
	}
	ok, _, healthy := v.counts(t)
	for g := range v.groups {
		if ok[g]+healthy[g] < v.quorum[g] {
			return true
		}
	}
	return false
}

// need says in words what a lock needs from the view, for errors.
func (v *view) need() string {
	if len(v.groups) == 1 {
		return fmt.Sprintf("%d needed", v.quorum[0])
	}
	var s []string
	for g, group := range v.groups {
		s = append(s, fmt.Sprintf("%d of set %d's %d", v.quorum[g], g+1, len(group)))
	}
	return "a majority of each set of lock nodes needed (" + strings.Join(s, ", ") + "; the lock nodes are moving)"
}

// settledEnough: a majority of every set is settled (settled, by node).
func (v *view) settledEnough(settled []bool) bool {
	for g, group := range v.groups {
		c := 0
		for _, i := range group {
			if settled[i] {
				c++
			}
		}
		if c < v.quorum[g] {
			return false
		}
	}
	return true
}

// SetNodes switches the Locker to new lock nodes while it runs: from now
// on each attempt to lock asks sets (one set, or two while the lock nodes
// move: a lock then needs a majority of each), a Peer whose ID is this
// node's being its own table. epoch numbers the change (the record's);
// a change not newer than the current one is ignored, so a late or
// repeated change never takes the Locker back. Leases already held keep
// the nodes they were taken on until they end (Phase counts them).
func (l *Locker) SetNodes(epoch int, sets ...[]Peer) error {
	if len(sets) == 0 || len(sets) > 2 {
		return fmt.Errorf("dlock: %d sets of lock nodes (1, or 2 while moving)", len(sets))
	}
	for i, s := range sets {
		if len(s) == 0 {
			return fmt.Errorf("dlock: set %d of lock nodes is empty", i+1)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if epoch <= l.cur.epoch {
		return nil
	}
	old := l.cur
	l.cur = l.makeView(epoch, sets, false)
	if old.users == 0 {
		delete(l.views, old)
	}
	l.views[l.cur] = struct{}{}
	return nil
}

// Phase reports the epoch of the lock nodes the Locker asks now and how
// many of its locks (held, or being taken) were taken under an earlier
// one. Once older is 0, every lock this node holds or will take is on
// the current nodes: what the consensus leader waits for before the next
// step of a move.
func (l *Locker) Phase() (epoch, older int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for v := range l.views {
		if v != l.cur {
			older += v.users
		}
	}
	return l.cur.epoch, older
}

// use takes the current view for one attempt (counted until done).
func (l *Locker) use() *view {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cur.users++
	return l.cur
}

// done ends one use of v.
func (l *Locker) done(v *view) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if v.users--; v.users == 0 && v != l.cur {
		delete(l.views, v)
	}
}
