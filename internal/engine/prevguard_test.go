package engine

import (
	"testing"

	"github.com/shardstore/shardstore/internal/meta"
)

// TestPrevMayHideCommit: which drive states make a version settled from
// previous records unsafe (ten drives, 6+4, write quorum 6).
func TestPrevMayHideCommit(t *testing.T) {
	ver := func(id string, t int64) *meta.Object {
		return &meta.Object{VersionID: id, DataID: id, ModTime: t, Erasure: meta.Erasure{DataShards: 6, ParityShards: 4}}
	}
	v0, a1 := ver("v0", 1), ver("a1", 2)
	prevOf := func(m *meta.Object) *meta.Object { c := *m; c.Flags |= meta.FlagPrev; return &c }
	cur := &meta.Record{Versions: []*meta.Object{v0}}
	over := &meta.Record{Versions: []*meta.Object{a1, prevOf(v0)}} // a1 committed or cut short
	for _, tc := range []struct {
		name   string
		layout string // per drive: c = [v0], o = [a1, prev v0], . = not heard, - = absent
		unsafe bool
	}{
		{"bridge: 2 over, 4 not heard", "cccc....oo", true},
		{"cut short on 2, all heard", "ccccccccoo", false},
		{"cut short on 3, 2 not heard", "ccccc..ooo", false},
		{"4 over + 2 not heard", "cccc..oooo", true},
		{"4 over, all heard", "ccccccoooo", false},
		{"absent drives are heard", "cccc----oo", false},
		{"nothing heard but over", "........oo", true},
		{"empty", "----------", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := make([]*meta.Record, len(tc.layout))
			absent := make([]bool, len(tc.layout))
			for p, c := range tc.layout {
				switch c {
				case 'c':
					recs[p] = cur
				case 'o':
					recs[p] = over
				case '-':
					absent[p] = true
				}
			}
			got := prevMayHideCommit(recs, absent, v0)
			if (got != nil) != tc.unsafe {
				t.Fatalf("%s: prevMayHideCommit = %v, want unsafe=%v", tc.layout, got, tc.unsafe)
			}
			if got != nil && !got.SameVersion(a1) {
				t.Fatalf("named %s, want a1", got.VersionID)
			}
		})
	}
}
