package cluster

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A move of the lock nodes from nodes 1-4 to nodes 5-8 (pool 1 removed).
func movingList(t *testing.T) (rec, moving PoolList) {
	rec = expanded(t, "http://n{1...4}:9000/d{1...4}", "http://n{5...8}:9000/d{1...4}")
	next, applies, err := PlanShrink(rec, expanded(t, "http://n{5...8}:9000/d{1...4}"), func(int) error { return nil })
	if err != nil || !applies || next.LockMove == nil {
		t.Fatalf("shrink: %+v %v %v", next, applies, err)
	}
	return rec, next
}

func TestAdvanceLocks(t *testing.T) {
	rec, moving := movingList(t)
	joint := moving.LockEpoch
	old, leaving, staying := rec.LockNodes, rec.LockNodes, moving.Nodes()
	takers := LockTakers(moving, append(append([]string{}, old...), staying...))
	if len(takers) != 8 {
		t.Fatalf("takers: %v", takers)
	}
	all := func(r LockReport) map[string]LockReport {
		m := map[string]LockReport{}
		for _, id := range takers {
			m[id] = r
		}
		return m
	}
	with := func(m map[string]LockReport, id string, r LockReport) map[string]LockReport {
		m[id] = r
		return m
	}
	without := func(m map[string]LockReport, id string) map[string]LockReport {
		delete(m, id)
		return m
	}
	for _, tc := range []struct {
		name    string
		reports map[string]LockReport
		advance bool
		why     string
	}{
		{"every node joint", all(LockReport{Epoch: joint}), true, ""},
		{"a leaving node still old", with(all(LockReport{Epoch: joint}), leaving[0], LockReport{Epoch: joint - 1}), false, "n1:9000 locks under epoch 0, not 1"},
		{"a staying node still old", with(all(LockReport{Epoch: joint}), staying[2], LockReport{Epoch: joint - 1}), false, "n7:9000 locks under epoch 0"},
		{"a lock taken under old still held", with(all(LockReport{Epoch: joint}), staying[0], LockReport{Epoch: joint, Older: 1}), false, "holds 1 lock(s)"},
		{"a leaving node not answering", without(all(LockReport{Epoch: joint}), leaving[3]), false, "n4:9000 is not answering"},
		{"a staying node not answering", without(all(LockReport{Epoch: joint}), staying[3]), false, "n8:9000 is not answering"},
		{"a node starting", with(all(LockReport{Epoch: joint}), staying[1], LockReport{Starting: true}), false, "n6:9000 is starting"},
		// A stopped node holds no lock and reads the record (joint at
		// least) when it starts.
		{"a leaving node stopped", with(all(LockReport{Epoch: joint}), leaving[1], LockReport{Stopped: true}), true, ""},
		// A report from a later epoch is not this one (hostile or
		// stale record): not advanced.
		{"a node ahead", with(all(LockReport{Epoch: joint}), staying[0], LockReport{Epoch: joint + 5}), false, "epoch 6"},
		{"nobody answers", map[string]LockReport{}, false, "not answering"},
		{"negative older", with(all(LockReport{Epoch: joint}), staying[0], LockReport{Epoch: joint, Older: -1}), false, "holds -1"},
	} {
		next, advance, blocked := AdvanceLocks(moving, takers, tc.reports)
		if advance != tc.advance || !strings.Contains(strings.Join(blocked, "; "), tc.why) {
			t.Errorf("%s: advance %v (blocked %v), want %v (%q)", tc.name, advance, blocked, tc.advance, tc.why)
			continue
		}
		if !advance {
			if next.LockMove == nil || next.LockEpoch != joint {
				t.Errorf("%s: not advanced but the list changed: %+v", tc.name, next)
			}
			continue
		}
		// New: the nodes that stay alone, one epoch on, a valid list.
		if next.LockMove != nil || next.LockEpoch != joint+1 || fmt.Sprint(next.LockNodes) != fmt.Sprint(staying) {
			t.Errorf("%s: advanced to %+v", tc.name, next)
		}
		if err := next.validate(); err != nil {
			t.Errorf("%s: the new list is invalid: %v", tc.name, err)
		}
		if got := next.LockSets(); len(got) != 1 {
			t.Errorf("%s: lock sets after the move: %v", tc.name, got)
		}
		// A settled list advances no further.
		if _, again, _ := AdvanceLocks(next, takers, all(LockReport{Epoch: joint + 1})); again {
			t.Errorf("%s: advanced a settled list", tc.name)
		}
	}
}

// The joint phase is never skipped: the shrink records joint (both sets),
// never the new set alone, and the leader's step from a list that is not
// moving does nothing; only AdvanceLocks from joint reaches the new set.
func TestLockMoveNeverSkipsJoint(t *testing.T) {
	rec, moving := movingList(t)
	if got := rec.LockSets(); len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint(rec.LockNodes) {
		t.Fatalf("old: %v", got)
	}
	sets := moving.LockSets()
	if len(sets) != 2 || fmt.Sprint(sets[0]) != fmt.Sprint(rec.LockNodes) || fmt.Sprint(sets[1]) != fmt.Sprint(moving.Nodes()) {
		t.Fatalf("the shrink recorded %v, want joint: old and new sets", sets)
	}
	if moving.LockEpoch != rec.LockEpoch+1 {
		t.Fatalf("joint epoch %d after %d", moving.LockEpoch, rec.LockEpoch)
	}
	everyone := map[string]LockReport{}
	for _, id := range LockTakers(rec, nil) {
		everyone[id] = LockReport{Epoch: rec.LockEpoch}
	}
	if _, advance, _ := AdvanceLocks(rec, LockTakers(rec, nil), everyone); advance {
		t.Fatal("advanced a list with no move under way")
	}
	// Another removal during the move is refused until it completes.
	three := expanded(t, "http://n{1...4}:9000/d{1...4}", "http://n{5...8}:9000/d{1...4}", "http://n{9...10}:9000/d{1...2}")
	moving3, _, err := PlanShrink(three, expanded(t, "http://n{5...8}:9000/d{1...4}", "http://n{9...10}:9000/d{1...2}"), func(int) error { return nil })
	if err != nil || moving3.LockMove == nil {
		t.Fatalf("shrink of three: %+v %v", moving3, err)
	}
	if _, applies, err := PlanShrink(moving3, expanded(t, "http://n{5...8}:9000/d{1...4}"), func(int) error { return nil }); !applies || !errors.Is(err, ErrPoolList) || !strings.Contains(err.Error(), "lock nodes are moving") {
		t.Fatalf("a removal during a move: %v %v", applies, err)
	}
	// An expansion during the move keeps it.
	grow, propose, err := PlanStart(moving, expanded(t, "http://n{5...8}:9000/d{1...4}", "http://n{9...10}:9000/d{1...2}"), func() error { return nil })
	if err != nil || !propose || grow.LockMove == nil || grow.LockEpoch != moving.LockEpoch {
		t.Fatalf("expansion during a move: %+v %v %v", grow, propose, err)
	}
}

func TestLocksSettled(t *testing.T) {
	_, moving := movingList(t)
	if ok, blocked := LocksSettled(moving, nil); ok || !strings.Contains(blocked[0], "joint") {
		t.Fatalf("settled while moving: %v", blocked)
	}
	reports := map[string]LockReport{}
	for _, id := range moving.LockMove.To {
		reports[id] = LockReport{Epoch: moving.LockEpoch}
	}
	done, advance, _ := AdvanceLocks(moving, moving.LockMove.To, reports)
	if !advance {
		t.Fatal("not advanced")
	}
	// The staying nodes still on joint: not settled.
	if ok, blocked := LocksSettled(done, reports); ok || len(blocked) != 4 {
		t.Fatalf("settled with every node on joint: %v", blocked)
	}
	for id := range reports {
		reports[id] = LockReport{Epoch: done.LockEpoch}
	}
	reports["http://n6:9000"] = LockReport{Epoch: done.LockEpoch, Older: 2}
	if ok, blocked := LocksSettled(done, reports); ok || !strings.Contains(blocked[0], "n6:9000 holds 2") {
		t.Fatalf("settled with joint locks held: %v", blocked)
	}
	reports["http://n6:9000"] = LockReport{Stopped: true}
	if ok, blocked := LocksSettled(done, reports); !ok {
		t.Fatalf("not settled: %v", blocked)
	}
}

// Nodes restarted without pool 1 serve beside nodes still on both pools
// (a removal of the first pool under way): their hellos agree in an
// existing deployment, not in a new one, and a reordered list does not.
func TestDifferencesDuringARemoval(t *testing.T) {
	both := HelloFor(mustParse(t, twoPools...), 4, 0, 0, "v")
	second := HelloFor(mustParse(t, twoPools[1]), 0, 0, 0, "v")
	if d := both.Differences(second); len(d) == 0 {
		t.Fatal("a new deployment accepted two lists")
	}
	both.Deployment, second.Deployment = "dep", "dep"
	if d := both.Differences(second); len(d) != 0 {
		t.Fatalf("pool 1 left out, seen from a node on both: %v", d)
	}
	if d := second.Differences(both); len(d) != 0 {
		t.Fatalf("pool 1 left out, seen from a restarted node: %v", d)
	}
	swapped := HelloFor(mustParse(t, twoPools[1], twoPools[0]), 0, 0, 0, "v")
	swapped.Deployment = "dep"
	if d := both.Differences(swapped); len(d) == 0 {
		t.Fatal("reordered pools accepted")
	}
}
