package engine

import (
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/quorum"
)

// prevMayHideCommit reports whether a version found from previous
// records (quorum.Result.FromPrev) may be hiding a newer acknowledged
// one, and names it: a version other than picked that some drives hold
// as current, on so many drives that, with the drives not heard from
// (recs[p] nil and not absent: failed, cut off, lagging), it could be on
// a write quorum. The drives' previous records are then no evidence
// that its commit was cut short: it may have been acknowledged through
// the other side of a partition, with its settling batch not yet there
// (finding V3 in docs/consistency.md). Reading the previous version
// would answer a stale value, and a commit on top of it would replace
// the acknowledged version on these drives without keeping it.
func prevMayHideCommit(recs []*meta.Record, absent []bool, picked *meta.Object) *meta.Object {
	unheard := 0
	for p, r := range recs {
		if r == nil && !absent[p] {
			unheard++
		}
	}
	for p, r := range recs {
		if r == nil {
			continue
		}
		x := r.Current()
		if x == nil || x.SameVersion(picked) {
			continue
		}
		held := 0
		for _, o := range recs[p:] {
			if o != nil && o.Current() != nil && o.Current().SameVersion(x) {
				held++
			}
		}
		if held+unheard >= quorum.WriteQuorum(x.Erasure.DataShards, x.Erasure.ParityShards) {
			return x
		}
	}
	return nil
}
