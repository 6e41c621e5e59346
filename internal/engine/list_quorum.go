package engine

import (
	"errors"
	"fmt"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/quorum"
)

// How a listing keeps list-after-write (docs/consistency.md): a write
// acknowledged on a write quorum W of a set's N drives is on at least
// one of any N-W+1 of them, and so is the removal (or delete marker) of
// an acknowledged DELETE. A set's listing therefore needs the whole
// scans of at least listQuorum drives: keys they agree on are answered
// from their records, the others by a quorum read of the key. Where it
// cannot keep that many walkers (drives offline, failing, cut off), or
// where a key's quorum read fails while drives that did not answer
// could hold a version with quorum, the listing fails with
// ErrReadQuorum (503) rather than answer from fewer drives.

// listQuorum is how many drives of set a listing must scan to meet
// every write acknowledged in it: N - W + 1 for the set's largest
// parity (an object of a lower storage class has a larger write
// quorum, so fewer drives meet it).
func listQuorum(set *erasureSet) int {
	n := len(set.drives)
	return n - quorum.WriteQuorum(n-set.parity, set.parity) + 1
}

// errListQuorum is the error of a set listing left with fewer than
// listQuorum walkers; cause is the last drive error, if any.
func errListQuorum(set *erasureSet, have int, cause error) error {
	if cause != nil {
		return fmt.Errorf("%w: listing reaches %d drives of set %d, %d needed: %v",
			ErrReadQuorum, have, set.index+1, listQuorum(set), cause)
	}
	return fmt.Errorf("%w: listing reaches %d drives of set %d, %d needed",
		ErrReadQuorum, have, set.index+1, listQuorum(set))
}

// mayHideVersion reports whether a quorum read of a key that found no
// version with read quorum could have missed one for want of drives:
// some version's holders among the drives that answered, plus those
// that did not answer, reach its quorum (or the drives that did not
// answer alone could hold a version nobody else does). Such a key may
// be an acknowledged write, so a listing must not leave it out; one
// that every drive answered for (an interrupted, unacknowledged write,
// a damaged key: a damaged record counts as an answer) is left out and
// healed.
func mayHideVersion(st *objectState, set *erasureSet) bool {
	if st == nil {
		return true
	}
	unknown := 0
	for p := range set.drives {
		// A drive that answered with a damaged record answered: the
		// heal repairs it, and waiting for it would not help.
		if p >= len(st.recs) || (st.recs[p] == nil && !errors.Is(st.readErrs[p], drive.ErrNotFound) &&
			!errors.Is(st.readErrs[p], meta.ErrCorrupt)) {
			unknown++
		}
	}
	if unknown == 0 {
		return false
	}
	if unknown >= len(set.drives)-set.parity {
		return true
	}
	var seen []*meta.Object
	for _, r := range st.recs {
		if r == nil {
			continue
		}
		for _, v := range []*meta.Object{r.Current(), r.Prev()} {
			if v == nil {
				continue
			}
			dup := false
			for _, s := range seen {
				if s.SameVersion(v) {
					dup = true
					break
				}
			}
			if dup {
				continue
			}
			seen = append(seen, v)
			votes := 0
			for _, r2 := range st.recs {
				if r2 == nil {
					continue
				}
				if c := r2.Current(); c != nil && c.SameVersion(v) {
					votes++
				} else if pv := r2.Prev(); pv != nil && pv.SameVersion(v) {
					votes++
				}
			}
			if votes+unknown >= v.Erasure.DataShards {
				return true
			}
		}
	}
	return false
}
