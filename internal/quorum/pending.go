package quorum

import "github.com/shardstore/shardstore/internal/meta"

// PendingVersion is the replaced version a drive's record keeps for the
// versions table (FlagKeep), without its pending flags, or nil: a
// version that is noncurrent although no versions-table entry holds it
// yet.
func PendingVersion(r *meta.Record) *meta.Object {
	if r == nil {
		return nil
	}
	for _, v := range r.Versions {
		if v.Flags&meta.FlagKeep != 0 {
			pv := *v
			pv.Flags &^= meta.FlagsPending
			return &pv
		}
	}
	return nil
}

// Settle says what settling a drive's record r does once its current
// version cur has quorum: every other version r holds either becomes
// noncurrent (FlagKeep: it moves to the versions table) or is dropped
// with its data. The record then holds cur alone, without pending flags.
func Settle(r *meta.Record, cur *meta.Object) (noncurrent, dropped []*meta.Object) {
	for _, v := range r.Versions {
		switch {
		case v.SameVersion(cur):
		case v.Flags&meta.FlagKeep != 0:
			noncurrent = append(noncurrent, v)
		default:
			dropped = append(dropped, v)
		}
	}
	return noncurrent, dropped
}
