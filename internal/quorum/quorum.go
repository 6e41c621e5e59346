package quorum

import (
	"errors"
	"maps"

	"github.com/shardstore/shardstore/internal/meta"
)

// ErrStale is the error of a drive whose record holds another version
// than the one a read settled on. The heal counts such a drive as stale
// and rewrites its record.
var ErrStale = errors.New("stale version")

// WriteQuorum is how many drives a write of an object with data data
// shards and parity parity shards must reach: M, or M+1 when M == K, so
// that two halves of a set can never both acknowledge a write.
func WriteQuorum(data, parity int) int {
	if data == parity {
		return data + 1
	}
	return data
}

// State is what one drive holds of the version a read settled on.
type State uint8

const (
	// Unknown: no record was read from the drive (it failed, its record
	// is corrupt, it lags or was not asked); the caller's error for the
	// drive says which.
	Unknown State = iota
	// Absent: the drive answered that it holds no current version of the
	// key (no record, or only a previous one that did not count).
	Absent
	// Holds: the drive's current version is the settled one.
	Holds
	// HoldsPrev: the drive holds the settled version as its previous
	// record (FlagPrev): a commit reached it and was cut short.
	HoldsPrev
	// Stale: the drive's current version is another one.
	Stale
)

var stateNames = [...]string{Unknown: "unknown", Absent: "absent", Holds: "holds", HoldsPrev: "holds-prev", Stale: "stale"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(?)"
}

// Result is what a set of drives' records says about one version of a
// key: the one settled on, or why none is.
type Result struct {
	// Version is the settled version, with the settings most of its
	// holders agree on (AgreedSettings); nil when no version has read
	// quorum. It is one of the records passed in, not a copy.
	Version *meta.Object
	// Votes is how many drives hold Version; when it is nil, how many
	// hold the version most drives hold as current.
	Votes int
	// Need is how many drives a read of Version needs (its data shard
	// count); when it is nil, of the best candidate, or of the set's
	// data shard count when no drive holds any version.
	Need int
	// NotFound is set, when Version is nil, where so many drives
	// answered that they hold nothing that no version can be on Need of
	// them: the key does not exist, rather than being unreadable.
	NotFound bool
	// Drives and Held are set with Version: what each drive holds of it,
	// and the drive's record of it (nil unless Holds or HoldsPrev).
	Drives []State
	Held   []*meta.Object
	// FromPrev says that no current version had read quorum and Version
	// was found counting the drives' previous records as well: a commit
	// was cut short, and the heal must make Version current again where
	// a drive holds it as previous. Its settings are then taken as the
	// picked record has them (a commit keeps a previous record only for a
	// new version, never for an in-place settings update).
	FromPrev bool
	// Pending says that some drive's record still keeps a replaced
	// version for the versions table (FlagKeep): a commit in flight, or
	// one whose settling batch was lost; the heal settles it.
	Pending bool
}

// Current settles which version of a key is current, from each drive's
// record of it: recs[p] is drive p's record (nil where none was read),
// absent[p] says that drive p answered that it holds no record. parity
// is the set's parity, which sizes the read when no drive holds a
// version.
//
// The current version is the one at least its data shard count of
// drives hold as current (the most held; the newest on a tie). When no
// version has that many, previous records (FlagPrev) count too, so the
// last acknowledged version stays readable after a commit cut short.
func Current(recs []*meta.Record, absent []bool, parity int) Result {
	n := len(recs)
	cur := make([]*meta.Object, n)
	var prev []*meta.Object // nil while no record holds a previous version
	nothing := make([]bool, n)
	pending := false
	for p, r := range recs {
		nothing[p] = absent[p]
		if r == nil {
			continue
		}
		cur[p] = r.Current()
		if pv := r.Prev(); pv != nil {
			if prev == nil {
				prev = make([]*meta.Object, n)
			}
			prev[p] = pv
		}
		// A record with no current version holds nothing readable.
		nothing[p] = nothing[p] || cur[p] == nil
		if len(r.Versions) > 1 && r.Versions[1].Flags&meta.FlagKeep != 0 {
			pending = true
		}
	}
	best, votes := pick(cur, nil)
	if best == nil || votes < readQuorum(best) {
		if prev != nil {
			if res, ok := fromPrevious(cur, prev, nothing); ok && !mayBeCommitted(recs, cur, nothing, res.Version) {
				return res
			}
		}
		return unsettled(best, votes, nothing, parity)
	}
	// cur is this call's own: the held records can take its place.
	res := settled(cur, nothing, best, votes, cur)
	res.Pending = pending
	return res
}

// Noncurrent settles one noncurrent version of a key from each drive's
// copy of it (its versions-table entry, or a pending copy its record
// keeps): copies[p] is drive p's copy (nil where none was read), absent
// as for Current. Only copies count: there are no previous records.
func Noncurrent(copies []*meta.Object, absent []bool, parity int) Result {
	best, votes := pick(copies, nil)
	if best == nil || votes < best.Erasure.DataShards {
		return unsettled(best, votes, absent, parity)
	}
	return settled(copies, absent, best, votes, make([]*meta.Object, len(copies)))
}

// settled is the Result of best, which votes of cur hold: every other
// version there is stale. nothing marks the drives that answered they
// hold no version. held receives the holders' records (it may be cur).
func settled(cur []*meta.Object, nothing []bool, best *meta.Object, votes int, held []*meta.Object) Result {
	res := Result{Votes: votes, Need: best.Erasure.DataShards, Drives: make([]State, len(cur)), Held: held}
	for p, m := range cur {
		held[p] = nil
		switch {
		case m == nil && nothing[p]:
			res.Drives[p] = Absent
		case m == nil:
			res.Drives[p] = Unknown
		case m.SameVersion(best):
			res.Drives[p], held[p] = Holds, m
		default:
			res.Drives[p] = Stale
		}
	}
	res.Version = AgreedSettings(best, res.Held)
	return res
}

// unsettled is the Result when no version has read quorum. best and
// votes are the best candidate (nil, 0 when there is none); nothing
// marks the drives that answered they hold no version.
func unsettled(best *meta.Object, votes int, nothing []bool, parity int) Result {
	n := len(nothing)
	need := n - parity
	if best != nil {
		need = best.Erasure.DataShards
	}
	none := 0
	for _, a := range nothing {
		if a {
			none++
		}
	}
	return Result{Votes: votes, Need: need, NotFound: none > n-need}
}

// fromPrevious retries a read no current version has quorum for,
// counting each drive's previous record as well; ok is false when that
// does not reach quorum either.
func fromPrevious(cur, prev []*meta.Object, nothing []bool) (Result, bool) {
	best, votes := pick(cur, prev)
	if best == nil || votes < best.Erasure.DataShards {
		return Result{}, false
	}
	n := len(cur)
	res := Result{Version: best, Votes: votes, Need: best.Erasure.DataShards, FromPrev: true,
		Drives: make([]State, n), Held: make([]*meta.Object, n)}
	for p := range cur {
		switch {
		case cur[p] != nil && cur[p].SameVersion(best):
			res.Drives[p], res.Held[p] = Holds, cur[p]
		case prev[p] != nil && prev[p].SameVersion(best):
			res.Drives[p], res.Held[p] = HoldsPrev, prev[p]
		case cur[p] != nil:
			res.Drives[p] = Stale
		case nothing[p]:
			res.Drives[p] = Absent
		}
	}
	return res, true
}

// mayBeCommitted reports whether a version other than old that some
// drive holds as current may have reached its write quorum on the drives
// heard plus those not heard (recs[p] nil and not answering that they
// hold nothing): its commit may then have been acknowledged, and old,
// found from previous records, is no longer the current version. A read
// cannot tell such a commit from one cut short until those drives
// answer: it must fail (read quorum) rather than answer old (finding R1
// in docs/consistency.md: a partition left the new version's write
// quorum on drives the reader could not reach, and the reader answered
// the version it replaced).
func mayBeCommitted(recs []*meta.Record, cur []*meta.Object, nothing []bool, old *meta.Object) bool {
	unheard := 0
	for p, r := range recs {
		if r == nil && !nothing[p] {
			unheard++
		}
	}
	for _, m := range cur {
		if m == nil || m.SameVersion(old) {
			continue
		}
		holders := 0
		for _, o := range cur {
			if o != nil && o.SameVersion(m) {
				holders++
			}
		}
		if holders+unheard >= WriteQuorum(m.Erasure.DataShards, m.Erasure.ParityShards) {
			return true
		}
	}
	return false
}

// Superseded reports whether a version other than v that some drive
// holds as current may be on its write quorum of the set's drives,
// counting the drives whose record was not read (recs[p] nil, absent[p]
// false) as holders: a version picked without read quorum of current
// records (the heal's recovery from shard data) must not be made current
// then, since the other one may have been acknowledged after it. Current
// applies the same rule to previous records.
func Superseded(recs []*meta.Record, absent []bool, v *meta.Object) bool {
	cur := make([]*meta.Object, len(recs))
	nothing := make([]bool, len(recs))
	for p, r := range recs {
		nothing[p] = absent[p]
		if r != nil {
			cur[p] = r.Current()
			nothing[p] = nothing[p] || cur[p] == nil
		}
	}
	return mayBeCommitted(recs, cur, nothing, v)
}

// Decided reports whether the current versions heard so far from a
// write quorum of a set's drives (cur[p], nil where a drive holds none or
// was not heard) already decide a read, so that drives still to answer
// need not be waited for: no version at all, or a version whose copies
// with one set of settings are on that version's own write quorum of
// them. Only the last committed version and settings can be, since every
// commit and in-place update reaches a write quorum, and any two write
// quorums overlap.
func Decided(cur []*meta.Object) bool {
	best, _ := pick(cur, nil)
	if best == nil {
		return true
	}
	votes := 0
	for _, m := range cur {
		if m != nil && m.SameVersion(best) {
			agree := 0
			for _, o := range cur {
				if o != nil && o.SameVersion(best) && SameSettings(o, m) {
					agree++
				}
			}
			votes = max(votes, agree)
		}
	}
	return votes >= WriteQuorum(best.Erasure.DataShards, best.Erasure.ParityShards)
}

// AgreedSettings picks, among the drives' records of one version (held,
// nil where a drive does not hold it), the settings most of them hold.
// An in-place update (an ACL, a tag set) keeps the version, so a drive
// that missed one still votes for it with its old settings; the update
// reached write quorum, more than half of the set, so the copy most
// drives hold is the current one. Usually all agree and best is returned
// as it is.
func AgreedSettings(best *meta.Object, held []*meta.Object) *meta.Object {
	agree := true
	for _, m := range held {
		if m != nil && !SameSettings(m, best) {
			agree = false
			break
		}
	}
	if agree {
		return best
	}
	pick, votes := best, 0
	for _, m := range held {
		if m == nil {
			continue
		}
		n := 0
		for _, o := range held {
			if o != nil && SameSettings(o, m) {
				n++
			}
		}
		if n > votes {
			pick, votes = m, n
		}
	}
	return pick
}

// SameSettings reports whether two records of one version agree on what
// an in-place update changes (the object's ACL and tags). A holder of
// the settled version whose settings differ from the agreed ones is what
// the heal rewrites.
func SameSettings(a, b *meta.Object) bool {
	return a.ACL == b.ACL && maps.Equal(a.Tags, b.Tags)
}

// Unanimous returns the version every one of want drives' records (ms)
// holds, intact and with the same settings, or nil: a listing trusts
// such a version without a quorum read.
func Unanimous(ms []*meta.Object, want int) *meta.Object {
	if len(ms) != want || ms[0] == nil {
		return nil
	}
	for _, m := range ms[1:] {
		if m == nil || !m.SameVersion(ms[0]) || !SameSettings(m, ms[0]) {
			return nil
		}
	}
	return ms[0]
}

// pick returns the version most drives hold (the newest on a tie) and
// its votes; a drive votes with its current record or, when prev is
// given, its previous one.
func pick(cur, prev []*meta.Object) (*meta.Object, int) {
	var best *meta.Object
	bestVotes := 0
	consider := func(m *meta.Object) {
		if m == nil {
			return
		}
		votes := 0
		for p := range cur {
			if (cur[p] != nil && cur[p].SameVersion(m)) || (prev != nil && prev[p] != nil && prev[p].SameVersion(m)) {
				votes++
			}
		}
		if votes > bestVotes || (votes == bestVotes && best != nil && m.ModTime > best.ModTime) {
			best, bestVotes = m, votes
		}
	}
	for p := range cur {
		consider(cur[p])
		if prev != nil {
			consider(prev[p])
		}
	}
	return best, bestVotes
}
