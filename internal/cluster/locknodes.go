package cluster

import (
	"fmt"
	"slices"
	"strings"
)

// Moving the lock nodes (internal/dlock's doc, "Moving the lock nodes";
// docs/pools.md, "Removing the first pool"). The recorded pool list
// holds the lock nodes and, while they move, the move: three phases,
// each numbered by LockEpoch, which every node's locker follows
// (dlock.Locker.SetNodes):
//
//	old    LockNodes = L,            LockMove = nil    locks on a majority of L
//	joint  LockNodes = L,            LockMove.To = L'  a majority of L and of L'
//	new    LockNodes = L', epoch+1,  LockMove = nil    a majority of L'
//
// A node that removes a pool holding lock nodes records joint at once
// (old and joint lockers always share a grantor in L). The consensus
// leader records new only once every node that can take a lock (every
// node of the list and every member of the consensus group, the leaving
// nodes included while they serve) reports in its hello that it runs the
// joint epoch and holds no lock taken under an earlier one (AdvanceLocks):
// joint and new lockers share a grantor in L', old and new ones need
// not. Nodes leave the consensus group only once every node of the list
// runs the new epoch (LocksSettled).

// LockMove is a hand-over of the lock nodes under way.
type LockMove struct {
	// To are the lock nodes taking over (node ids of the list).
	To []string `json:"to"`
}

// LockSets are the sets of lock nodes a node's locker asks under rec:
// LockNodes alone, or LockNodes and LockMove.To while they move.
func (l PoolList) LockSets() [][]string {
	if l.LockMove != nil {
		return [][]string{slices.Clone(l.LockNodes), slices.Clone(l.LockMove.To)}
	}
	return [][]string{slices.Clone(l.LockNodes)}
}

// LockPhase names rec's phase for messages: "joint" while the lock nodes
// move, else "" (settled).
func (l PoolList) LockPhase() string {
	if l.LockMove != nil {
		return "joint"
	}
	return ""
}

// moveLocks records in next (a shortened list) the start of a move of the
// lock nodes to next's nodes when some of rec's lock nodes hold no drive
// of next, and reports the lock nodes that leave (none: no move).
func moveLocks(rec PoolList, next *PoolList) []string {
	keep := next.Nodes()
	var leaving []string
	for _, id := range rec.LockNodes {
		if !slices.Contains(keep, id) {
			leaving = append(leaving, id)
		}
	}
	next.LockNodes = slices.Clone(rec.LockNodes)
	next.LockEpoch = rec.LockEpoch
	next.LockMove = nil
	if len(leaving) > 0 {
		next.LockMove = &LockMove{To: keep}
		next.LockEpoch++
	}
	return leaving
}

// LockReport is what a node says of its locker (its hello).
type LockReport struct {
	// Epoch is the lock nodes' epoch its locker asks now.
	Epoch int
	// Older counts its locks (held or being taken) taken under an
	// earlier epoch.
	Older int
	// Starting: the node answers but does not serve yet (its locker is
	// not made: it will read the record when it is).
	Starting bool
	// Stopped: the node's address refused the connection (no process
	// listens: it holds no lock, and reads the record when it starts).
	Stopped bool
}

// LockReportOf is the report in a hello.
func LockReportOf(h Hello) LockReport {
	return LockReport{Epoch: h.LockEpoch, Older: h.LockOlder, Starting: h.Starting}
}

// LockTakers are the nodes whose lockers a move waits for: every node of
// rec, every member of the consensus group (members, ids) and every lock
// node of rec, each once.
func LockTakers(rec PoolList, members []string) []string {
	out := rec.Nodes()
	for _, id := range slices.Concat(members, rec.LockNodes) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// AdvanceLocks decides the leader's step of a move of the lock nodes
// under way in rec: the list with the move's new phase recorded (the
// lock nodes are To, the epoch one more; a compare-and-set the caller
// makes), once every node of takers reports that its locker runs rec's
// epoch and holds no lock of an earlier one, or is stopped. Otherwise
// advance is false and blocked says which nodes hold it up and why. A
// node that does not answer at all (absent from reports) holds it up: it
// may be running with an earlier epoch.
func AdvanceLocks(rec PoolList, takers []string, reports map[string]LockReport) (next PoolList, advance bool, blocked []string) {
	if rec.LockMove == nil {
		return rec, false, nil
	}
	blocked = lockBlocked(rec, takers, reports)
	if len(blocked) > 0 {
		return rec, false, blocked
	}
	next = rec
	next.LockNodes = slices.Clone(rec.LockMove.To)
	next.LockMove = nil
	next.LockEpoch = rec.LockEpoch + 1
	return next, true, nil
}

// LocksSettled reports whether no move of the lock nodes is under way in
// rec and every node of rec runs its epoch with no lock of an earlier
// one (or is stopped): from then on no node of the list asks a node
// that left the lock nodes, which may then leave the cluster.
func LocksSettled(rec PoolList, reports map[string]LockReport) (bool, []string) {
	if rec.LockMove != nil {
		return false, []string{"the lock nodes are moving (joint phase)"}
	}
	blocked := lockBlocked(rec, rec.Nodes(), reports)
	return len(blocked) == 0, blocked
}

func lockBlocked(rec PoolList, nodes []string, reports map[string]LockReport) []string {
	var blocked []string
	for _, id := range nodes {
		r, ok := reports[id]
		switch {
		case !ok:
			blocked = append(blocked, id+" is not answering")
		case r.Stopped:
		case r.Starting:
			blocked = append(blocked, id+" is starting")
		case r.Epoch != rec.LockEpoch:
			blocked = append(blocked, fmt.Sprintf("%s locks under epoch %d, not %d yet", id, r.Epoch, rec.LockEpoch))
		case r.Older != 0:
			blocked = append(blocked, fmt.Sprintf("%s holds %d lock(s) taken under an earlier epoch", id, r.Older))
		}
	}
	return blocked
}

// describeLocks is the lock nodes of rec in words.
func describeLocks(nodes []string) string { return strings.Join(nodes, ", ") }

// SetLocks makes hello report the node's locker's phase (fn: the epoch
// its locker asks and how many locks it holds from an earlier one).
func (s *PeerServer) SetLocks(fn func() (epoch, older int)) {
	s.mu.Lock()
	s.locks = fn
	s.mu.Unlock()
}

// removing reports whether one list is the other with whole pools left
// out (a removal under way: nodes restarted without a pool serve beside
// nodes not restarted yet, as in an expansion; PlanShrink judges it).
func removing(a, b PoolList) bool {
	if r, ok := RemovedPools(a, b); ok && len(r) > 0 {
		return true
	}
	r, ok := RemovedPools(b, a)
	return ok && len(r) > 0
}
