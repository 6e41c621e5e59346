package cluster

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// shrunk is the list of a deployment of pools p1 (nodes 1-4, the lock
// nodes), p2 (nodes 5-8) and p3 (nodes 9-12) after pool 3's removal.
func shrunk(t *testing.T) (rec PoolList, p1, p2, p3 string) {
	t.Helper()
	p1, p2, p3 = "http://n{1...4}:9000/d{1...4}", "http://n{5...8}:9000/d{1...4}", "http://n{9...12}:9000/d{1...2}"
	next, applies, err := PlanShrink(expanded(t, p1, p2, p3), expanded(t, p1, p2), func(int) error { return nil })
	if err != nil || !applies {
		t.Fatalf("remove pool 3: %v %v", applies, err)
	}
	return next, p1, p2, p3
}

// TestPlanStartAfterShrink: a removed pool's nodes (or a remaining node)
// started again with the list from before the removal are refused, not
// taken for an expansion; adding the drives again is explicit.
func TestPlanStartAfterShrink(t *testing.T) {
	ok := func() error { return nil }
	rec, p1, p2, p3 := shrunk(t)
	if len(rec.Removed) != 1 || rec.Removed[0].Reason != RemovedByShrink || len(rec.Removed[0].Drives) != 8 || rec.Removed[0].Drives[0] != "http://n9:9000/d1" {
		t.Fatalf("removed record: %+v", rec.Removed)
	}
	if err := rec.validate(); err != nil {
		t.Fatalf("the shrunk list is not valid: %v", err)
	}
	// The record survives the document's round trip.
	b, _ := json.Marshal(rec)
	back, err := ParsePoolList(b)
	if err != nil || len(back.Removed) != 1 || !slices.Equal(back.Removed[0].Drives, rec.Removed[0].Drives) {
		t.Fatalf("round trip: %+v %v", back.Removed, err)
	}
	// The current list starts.
	if _, propose, err := PlanStart(rec, expanded(t, p1, p2), ok); propose || err != nil {
		t.Fatalf("the recorded list: %v %v", propose, err)
	}
	p3other := "http://n{13...16}:9000/d{1...2}"
	for _, tc := range []struct {
		name string
		args []string
		want string // "" = proposes an expansion
	}{
		// The old command line: taken for an expansion before.
		{"old list", []string{p1, p2, p3}, "drive http://n9:9000/d1"},
		// Hostile variants naming a removed drive among new ones.
		{"one removed node among new ones", []string{p1, p2, "http://n{12...15}:9000/d{1...2}"}, "drive http://n12:9000/d1"},
		{"a removed drive by another set size", []string{p1, p2, "http://n9:9000/d{1...2}", "http://n100:9000/d{1...2}"}, "drive http://n9:9000/d1"},
		{"removed pool then a new one", []string{p1, p2, p3, p3other}, "drive http://n9:9000/d1"},
		{"new pool then the removed one", []string{p1, p2, p3other, p3}, "drive http://n9:9000/d1"},
		// The removed pool given in the middle: unrelated, with a hint.
		{"removed pool in the middle", []string{p1, p3, p2}, "taken out of the deployment (removed after its decommission)"},
		// Other paths on the removed nodes are other drives: an expansion.
		{"other drives on the removed nodes", []string{p1, p2, "http://n{9...12}:9000/e{1...2}"}, ""},
		{"a new pool elsewhere", []string{p1, p2, p3other}, ""},
	} {
		next, propose, err := PlanStart(rec, expanded(t, tc.args...), ok)
		switch {
		case tc.want == "" && (err != nil || !propose || len(next.Removed) != 1):
			t.Errorf("%s: %v %v %+v", tc.name, propose, err, next.Removed)
		case tc.want != "" && (!errors.Is(err, ErrPoolList) || propose || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: propose %v, err %v; want a refusal naming %q", tc.name, propose, err, tc.want)
		case tc.want != "" && strings.HasPrefix(tc.name, "old") && !strings.Contains(err.Error(), "--readd-removed-pools"):
			t.Errorf("%s: the refusal does not say how to add the drives again: %v", tc.name, err)
		}
	}
	// Added again on purpose: the expansion is proposed and the record
	// no longer names the drives (a later removal records them anew).
	old := expanded(t, p1, p2, p3)
	next, propose, err := PlanStart(ForgetRemoved(rec, old), old, ok)
	if err != nil || !propose || len(next.Removed) != 0 || len(next.Pools) != 3 || next.NewKeyPools != 2 {
		t.Fatalf("re-added on purpose: %+v %v %v", next, propose, err)
	}
	// Forgetting for another list keeps the record.
	if got := ForgetRemoved(rec, expanded(t, p1, p2, p3other)); len(got.Removed) != 1 {
		t.Fatalf("forgot a pool not named: %+v", got.Removed)
	}
	// A second shrink adds to the record; an expansion keeps it.
	grown, _, err := PlanStart(rec, expanded(t, p1, p2, p3other), ok)
	if err != nil {
		t.Fatal(err)
	}
	grown.NewKeyPools = 3
	again, _, err := PlanShrink(grown, expanded(t, p1, p2), func(int) error { return nil })
	if err != nil || len(again.Removed) != 2 || again.Removed[1].Drives[0] != "http://n13:9000/d1" {
		t.Fatalf("second shrink: %+v %v", again.Removed, err)
	}
}

func TestPlanCancel(t *testing.T) {
	ok := func() error { return nil }
	one := PoolListOf(mustParse(t, onePool...))
	two := PoolListOf(mustParse(t, twoPools...))
	// Nothing under way: refused, saying why and what to do instead.
	for _, rec := range []PoolList{one, two} {
		if _, _, err := PlanCancel(rec); !errors.Is(err, ErrPoolList) || !strings.Contains(err.Error(), "no expansion is under way") || !strings.Contains(err.Error(), "decommission") {
			t.Errorf("cancel with nothing under way (%v): %v", rec.Pools, err)
		}
	}
	grow, _, err := PlanStart(one, two, ok)
	if err != nil {
		t.Fatal(err)
	}
	next, leaving, err := PlanCancel(grow)
	if err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if rel, _ := Relate(next, one); rel != Same || !next.Complete() || !slices.Equal(next.LockNodes, grow.LockNodes) {
		t.Fatalf("canceled list: %+v", next)
	}
	if len(next.Removed) != 1 || next.Removed[0].Reason != RemovedByCancel || len(next.Removed[0].Drives) != 16 {
		t.Fatalf("canceled pool not recorded: %+v", next.Removed)
	}
	if want := []string{"http://n5:9000", "http://n6:9000", "http://n7:9000", "http://n8:9000"}; !slices.Equal(leaving, want) {
		t.Fatalf("leaving: %v", leaving)
	}
	// The old nodes start with the old list; a node still started with
	// the longer list is refused instead of proposing the expansion
	// again, and once canceled, canceling again is refused.
	if _, propose, err := PlanStart(next, one, ok); propose || err != nil {
		t.Fatalf("old list after the cancel: %v %v", propose, err)
	}
	if _, _, err := PlanStart(next, two, ok); !errors.Is(err, ErrPoolList) || !strings.Contains(err.Error(), RemovedByCancel) {
		t.Fatalf("longer list after the cancel: %v", err)
	}
	if _, _, err := PlanCancel(next); !errors.Is(err, ErrPoolList) {
		t.Fatalf("cancel twice: %v", err)
	}
	// Once complete (keys may be in the new pool): refused.
	done := grow
	done.NewKeyPools = 2
	if _, _, err := PlanCancel(done); !errors.Is(err, ErrPoolList) || !strings.Contains(err.Error(), "keys may be in") {
		t.Fatalf("cancel after completion: %v", err)
	}
	// Three pools, the third under way: only it is taken out.
	three := PoolListOf(mustParse(t, append(twoPools, "http://n{9...12}:9000/d{1...2}")...))
	three.LockNodes = three.LockNodes[:4]
	three.NewKeyPools = 2
	next, leaving, err = PlanCancel(three)
	if err != nil || len(next.Pools) != 2 || len(leaving) != 4 || leaving[0] != "http://n9:9000" {
		t.Fatalf("cancel the third pool: %+v %v %v", next.Pools, leaving, err)
	}
	// Hostile records: not self-consistent, or the lock nodes on the
	// appended pool.
	for name, bad := range map[string]PoolList{
		"new keys 0":          func() PoolList { l := grow; l.NewKeyPools = 0; return l }(),
		"pools overrun":       func() PoolList { l := grow; l.Pools = []int{16, 40}; return l }(),
		"lock nodes appended": func() PoolList { l := grow; l.LockNodes = []string{"http://n5:9000"}; return l }(),
		"empty":               {},
	} {
		if _, _, err := PlanCancel(bad); !errors.Is(err, ErrPoolList) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestParseRemovedRecord(t *testing.T) {
	rec, _, _, _ := shrunk(t)
	mutate := func(f func(l *PoolList)) []byte {
		l := rec
		l.Removed = []RemovedPool{{Drives: slices.Clone(rec.Removed[0].Drives), Reason: rec.Removed[0].Reason}}
		f(&l)
		out, _ := json.Marshal(l)
		return out
	}
	for name, bad := range map[string][]byte{
		"no drives":   mutate(func(l *PoolList) { l.Removed[0].Drives = nil }),
		"bad drive":   mutate(func(l *PoolList) { l.Removed[0].Drives[0] = "n9:9000/d1" }),
		"control":     mutate(func(l *PoolList) { l.Removed[0].Drives[0] = "http://n9:9000/d\x001" }),
		"reason":      mutate(func(l *PoolList) { l.Removed[0].Reason = "because" }),
		"no reason":   mutate(func(l *PoolList) { l.Removed[0].Reason = "" }),
		"too many":    mutate(func(l *PoolList) { l.Removed = slices.Repeat(l.Removed, maxRemovedPools+1) }),
		"not objects": []byte(strings.Replace(string(mutate(func(*PoolList) {})), `"removed":[{`, `"removed":[7,{`, 1)),
	} {
		if _, err := ParsePoolList(bad); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if err := MayRemove(nil); err != nil {
		t.Fatal(err)
	}
	if err := MayRemove(errors.New("feature pool-removal is not active")); !errors.Is(err, ErrPoolList) || !strings.Contains(err.Error(), "pool-removal") {
		t.Fatalf("gate off: %v", err)
	}
}
