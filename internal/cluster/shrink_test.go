package cluster

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// expanded is a deployment first started on nodes 1-4 (its lock nodes)
// and expanded by pools on nodes 5-8 and 9-12.
func expanded(t *testing.T, args ...string) PoolList {
	l := PoolListOf(mustParse(t, args...))
	l.LockNodes = l.LockNodes[:4]
	return l
}

func TestRemovedPools(t *testing.T) {
	three := []string{"http://n{1...4}:9000/d{1...4}", "http://n{5...8}:9000/d{1...4}", "http://n{9...12}:9000/d{1...2}"}
	rec := PoolListOf(mustParse(t, three...))
	for _, tc := range []struct {
		args []string
		want []int
		ok   bool
	}{
		{three, nil, true},
		{three[:2], []int{2}, true},
		{three[:1], []int{1, 2}, true},
		{[]string{three[0], three[2]}, []int{1}, true},
		{three[1:], []int{0}, true},
		{[]string{three[2]}, []int{0, 1}, true},
		// Reordered, changed or new pools are not removals.
		{[]string{three[1], three[0]}, nil, false},
		{[]string{"http://n{1...4}:9000/d{1...2}"}, nil, false},
		{[]string{three[0], "http://n{13...14}:9000/d{1...2}"}, nil, false},
		{append(three, "http://n{13...14}:9000/d{1...2}"), nil, false},
	} {
		got, ok := RemovedPools(rec, PoolListOf(mustParse(t, tc.args...)))
		if ok != tc.ok || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("RemovedPools(%v) = %v %v, want %v %v", tc.args, got, ok, tc.want, tc.ok)
		}
	}
	// Hostile lists: pools naming more drives than the list holds.
	bad := PoolList{Drives: []string{"http://a:1/x"}, Pools: []int{2}}
	if _, ok := RemovedPools(bad, rec); ok {
		t.Error("a list whose pools overrun its drives was taken")
	}
	if _, ok := RemovedPools(rec, bad); ok {
		t.Error("a list whose pools overrun its drives was taken")
	}
}

func TestPlanShrink(t *testing.T) {
	p1, p2, p3 := "http://n{1...4}:9000/d{1...4}", "http://n{5...8}:9000/d{1...4}", "http://n{9...12}:9000/d{1...2}"
	rec := expanded(t, p1, p2, p3)
	done := func(int) error { return nil }
	notDone := func(p int) error {
		if p == 1 {
			return errors.New("its decommission is draining")
		}
		return nil
	}

	// Not a removal: PlanStart decides.
	if _, applies, err := PlanShrink(rec, rec, done); applies || err != nil {
		t.Fatalf("same list: %v %v", applies, err)
	}
	if _, applies, _ := PlanShrink(rec, expanded(t, p1, p2, p3, "http://n{13...14}:9000/d{1...2}"), done); applies {
		t.Fatal("an append was taken for a removal")
	}
	// Pool 2 removed once its decommission is complete: the list
	// without it, the lock nodes kept, every pool taking new keys.
	next, applies, err := PlanShrink(rec, expanded(t, p1, p3), done)
	if err != nil || !applies || fmt.Sprint(next.Pools) != "[16 8]" || len(next.LockNodes) != 4 || !next.Complete() {
		t.Fatalf("remove pool 2: %+v %v %v", next, applies, err)
	}
	if err := next.validate(); err != nil {
		t.Fatalf("the shrunk list is not valid: %v", err)
	}
	if got := Leaving(next, rec.Nodes()); fmt.Sprint(got) != "[http://n5:9000 http://n6:9000 http://n7:9000 http://n8:9000]" {
		t.Fatalf("leaving: %v", got)
	}
	// Refused while its decommission is not complete, naming the pool
	// and the command.
	_, applies, err = PlanShrink(rec, expanded(t, p1, p3), notDone)
	if !applies || !errors.Is(err, ErrPoolList) || !strings.Contains(err.Error(), "pool 2 (16 drives on http://n5:9000") ||
		!strings.Contains(err.Error(), "its decommission is draining") || !strings.Contains(err.Error(), "decommission start 2") {
		t.Fatalf("remove pool 2 before its decommission completes: %v", err)
	}
	// Pool 3 alone is complete here.
	if _, _, err := PlanShrink(rec, expanded(t, p1, p2), notDone); err != nil {
		t.Fatalf("remove pool 3: %v", err)
	}
	// Refused while an expansion is under way.
	grow := rec
	grow.NewKeyPools = 2
	if _, _, err := PlanShrink(grow, expanded(t, p1, p2), done); !errors.Is(err, ErrPoolList) || !strings.Contains(err.Error(), "under way") {
		t.Fatalf("remove during an expansion: %v", err)
	}
	// Pool 1 holds the lock nodes: they start moving to the nodes that
	// stay (joint phase, the next epoch), and the list is valid though
	// its lock nodes hold none of its drives.
	next, applies, err = PlanShrink(rec, expanded(t, p2, p3), done)
	if err != nil || !applies || next.LockMove == nil || next.LockEpoch != rec.LockEpoch+1 ||
		fmt.Sprint(next.LockNodes) != fmt.Sprint(rec.LockNodes) || fmt.Sprint(next.LockMove.To) != fmt.Sprint(next.Nodes()) {
		t.Fatalf("remove the lock nodes' pool: %+v %v %v", next, applies, err)
	}
	if err := next.validate(); err != nil {
		t.Fatalf("the shrunk list moving the lock nodes is not valid: %v", err)
	}
	if got := next.LockSets(); len(got) != 2 || len(got[0]) != 4 || len(got[1]) != 8 {
		t.Fatalf("lock sets while moving: %v", got)
	}
}
