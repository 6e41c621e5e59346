package cluster

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func mustParse(t *testing.T, args ...string) Topology {
	t.Helper()
	top, err := Parse(args)
	if err != nil {
		t.Fatal(err)
	}
	return top
}

var (
	onePool  = []string{"http://n{1...4}:9000/d{1...4}"}
	twoPools = []string{"http://n{1...4}:9000/d{1...4}", "http://n{5...8}:9000/d{1...4}"}
)

func TestPoolListOfAndRelate(t *testing.T) {
	a := PoolListOf(mustParse(t, onePool...))
	b := PoolListOf(mustParse(t, twoPools...))
	if len(a.Pools) != 1 || len(b.Pools) != 2 || len(b.Drives) != 32 || len(b.LockNodes) != 8 || !b.Complete() {
		t.Fatalf("lists: %+v / %+v", a, b)
	}
	if got := b.Nodes(); len(got) != 8 || got[0] != "http://n1:9000" || got[7] != "http://n8:9000" {
		t.Fatalf("nodes: %v", got)
	}
	for _, tc := range []struct {
		x, y PoolList
		want Relation
	}{
		{a, a, Same}, {b, a, Appends}, {a, b, Prefix},
		{PoolListOf(mustParse(t, "http://n{1...4}:9000/e{1...4}")), a, Unrelated},
		{PoolListOf(mustParse(t, "http://n{1...4}:9000/d{1...4}", "http://n{5...8}:9000/d{1...2}")), b, Unrelated},
		{PoolListOf(mustParse(t, "http://n{5...8}:9000/d{1...4}", "http://n{1...4}:9000/d{1...4}")), b, Unrelated},
		// TLS changes nothing: lists are by node id.
		{PoolListOf(mustParse(t, "https://n{1...4}:9000/d{1...4}")), a, Same},
	} {
		if got, why := Relate(tc.x, tc.y); got != tc.want || (got == Unrelated) != (why != "") {
			t.Errorf("Relate(%v, %v) = %v %q, want %v", tc.x.Pools, tc.y.Pools, got, why, tc.want)
		}
	}
}

func TestPlanStart(t *testing.T) {
	one := PoolListOf(mustParse(t, onePool...))
	two := PoolListOf(mustParse(t, twoPools...))
	ok := func() error { return nil }
	gateOff := func() error { return errors.New("feature pools is not active") }

	// Same list: nothing to do.
	if _, propose, err := PlanStart(one, one, ok); propose || err != nil {
		t.Fatalf("same: %v %v", propose, err)
	}
	// An append proposes the expansion, keeping the lock nodes and the
	// pools that take new keys.
	next, propose, err := PlanStart(one, two, ok)
	if err != nil || !propose || len(next.Pools) != 2 || next.NewKeyPools != 1 || len(next.LockNodes) != 4 || next.Complete() {
		t.Fatalf("append: %+v %v %v", next, propose, err)
	}
	// Not while the gate is off.
	if _, _, err := PlanStart(one, two, gateOff); !errors.Is(err, ErrPoolList) || !strings.Contains(err.Error(), "feature pools is not active") {
		t.Fatalf("append with the gate off: %v", err)
	}
	// Once recorded, the old list is refused (the node would not see
	// the new pool), and so is a second expansion before the first
	// completes.
	if _, _, err := PlanStart(next, one, ok); !errors.Is(err, ErrPoolList) || !strings.Contains(err.Error(), "start it with the full list") {
		t.Fatalf("old list after the expansion: %v", err)
	}
	if _, propose, err := PlanStart(next, two, ok); propose || err != nil {
		t.Fatalf("the recorded list: %v %v", propose, err)
	}
	three := PoolListOf(mustParse(t, append(twoPools, "http://n{9...12}:9000/d{1...4}")...))
	if _, _, err := PlanStart(next, three, ok); !errors.Is(err, ErrPoolList) || !strings.Contains(err.Error(), "under way") {
		t.Fatalf("second expansion while one is under way: %v", err)
	}
	// Another list altogether is refused, saying how it differs.
	other := PoolListOf(mustParse(t, "http://n{1...4}:9000/x{1...4}"))
	if _, _, err := PlanStart(one, other, ok); !errors.Is(err, ErrPoolList) || !strings.Contains(err.Error(), "drive 1 is") {
		t.Fatalf("unrelated: %v", err)
	}
}

func TestCompletes(t *testing.T) {
	one := PoolListOf(mustParse(t, onePool...))
	top := mustParse(t, twoPools...)
	rec, _, _ := PlanStart(one, PoolListOf(top), func() error { return nil })
	hellos := map[string]Hello{}
	for i := range top.Nodes {
		h := HelloFor(top, i, 0, 0, "v")
		h.Deployment = "dep"
		hellos[top.ID(i)] = h
	}
	if done, blocked := Completes(rec, hellos); !done {
		t.Fatalf("every node on the list: %v", blocked)
	}
	old := HelloFor(mustParse(t, onePool...), 1, 0, 0, "v")
	old.Deployment = "dep"
	hellos["http://n2:9000"] = old
	starting := hellos["http://n6:9000"]
	starting.Deployment = ""
	hellos["http://n6:9000"] = starting
	delete(hellos, "http://n8:9000")
	done, blocked := Completes(rec, hellos)
	if done || len(blocked) != 3 || !strings.Contains(strings.Join(blocked, ";"), "n2:9000 runs with 1 pool(s)") {
		t.Fatalf("blocked: %v %v", done, blocked)
	}
}

func TestDifferencesDuringAnExpansion(t *testing.T) {
	old := HelloFor(mustParse(t, onePool...), 0, 0, 0, "v")
	grown := HelloFor(mustParse(t, twoPools...), 4, 0, 0, "v")
	other := HelloFor(mustParse(t, "http://n{1...4}:9000/x{1...4}"), 0, 0, 0, "v")
	// A new deployment (both blank) needs the same list.
	if d := old.Differences(grown); len(d) == 0 {
		t.Fatal("a new deployment accepted two lists")
	}
	old.Deployment = "dep"
	if d := grown.Differences(old); len(d) != 0 {
		t.Fatalf("an append in an existing deployment: %v", d)
	}
	if d := old.Differences(grown); len(d) != 0 {
		t.Fatalf("an append, seen from the old node: %v", d)
	}
	other.Deployment = "dep"
	if d := old.Differences(other); len(d) == 0 || !strings.Contains(d[0], "followed by the new pools") {
		t.Fatalf("unrelated lists: %v", d)
	}
	// A new node whose drives belong to another deployment is refused
	// though its list appends: its pool was taken from another
	// shardstore.
	grown.Deployment = "elsewhere"
	if d := old.Differences(grown); len(d) != 1 || !strings.Contains(d[0], "belong to deployment elsewhere") {
		t.Fatalf("a new node of another deployment: %v", d)
	}
}

func TestParsePoolList(t *testing.T) {
	good := PoolListOf(mustParse(t, twoPools...))
	b, _ := json.Marshal(good)
	if l, err := ParsePoolList(b); err != nil || len(l.Drives) != 32 {
		t.Fatalf("good list: %v", err)
	}
	mutate := func(f func(l *PoolList)) []byte {
		l := good
		l.Drives = append([]string(nil), good.Drives...)
		l.Pools = append([]int(nil), good.Pools...)
		l.LockNodes = append([]string(nil), good.LockNodes...)
		f(&l)
		out, _ := json.Marshal(l)
		return out
	}
	for name, bad := range map[string][]byte{
		"not json":        []byte("{"),
		"array":           []byte("[1]"),
		"empty":           []byte("{}"),
		"too large":       []byte(strings.Repeat(" ", maxPoolListBytes+1)),
		"count mismatch":  mutate(func(l *PoolList) { l.Pools[1] = 15 }),
		"zero pool":       mutate(func(l *PoolList) { l.Pools = []int{32, 0} }),
		"negative pool":   mutate(func(l *PoolList) { l.Pools = []int{40, -8} }),
		"new keys 0":      mutate(func(l *PoolList) { l.NewKeyPools = 0 }),
		"new keys 3":      mutate(func(l *PoolList) { l.NewKeyPools = 3 }),
		"duplicate drive": mutate(func(l *PoolList) { l.Drives[1] = l.Drives[0] }),
		"no scheme":       mutate(func(l *PoolList) { l.Drives[0] = "n1:9000/d1" }),
		"no path":         mutate(func(l *PoolList) { l.Drives[0] = "http://n1:9000" }),
		"control char":    mutate(func(l *PoolList) { l.Drives[0] = "http://n1:9000/d\n1" }),
		"stranger lock":   mutate(func(l *PoolList) { l.LockNodes = []string{"http://evil:1"} }),
		"no lock nodes":   mutate(func(l *PoolList) { l.LockNodes = nil }),
		"move to stranger": mutate(func(l *PoolList) {
			l.LockMove = &LockMove{To: []string{"http://evil:1"}}
		}),
		"move to nobody": mutate(func(l *PoolList) { l.LockMove = &LockMove{} }),
		"move from a path": mutate(func(l *PoolList) {
			l.LockMove = &LockMove{To: l.LockNodes}
			l.LockNodes = []string{"http://n1:9000/d1"}
		}),
		"move from garbage": mutate(func(l *PoolList) { l.LockMove = &LockMove{To: l.LockNodes}; l.LockNodes = []string{"n\x00"} }),
		"negative epoch":    mutate(func(l *PoolList) { l.LockEpoch = -1 }),
	} {
		if _, err := ParsePoolList(bad); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func FuzzParsePoolList(f *testing.F) {
	f.Add([]byte(`{"drives":["http://a:1/d1","http://b:1/d1"],"pools":[2],"lockNodes":["http://a:1"],"newKeyPools":1}`))
	f.Add([]byte(`{"drives":[],"pools":[-1]}`))
	f.Add([]byte(`{"drives":["http://a:1/d1","http://b:1/d1"],"pools":[2],"lockNodes":["http://a:1"],"newKeyPools":1,"removed":[{"drives":["http://c:1/d1"],"reason":"removed after its decommission"}]}`))
	f.Add([]byte(`{"drives":["http://a:1/d1","http://b:1/d1"],"pools":[2],"lockNodes":["http://c:1"],"lockMove":{"to":["http://a:1","http://b:1"]},"lockEpoch":3,"newKeyPools":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParsePoolList(b)
		if err != nil {
			return
		}
		// What parses is self-consistent, relates to itself and plans
		// nothing.
		if rel, _ := Relate(l, l); rel != Same {
			t.Fatalf("a list does not relate to itself: %v", rel)
		}
		if _, propose, err := PlanStart(l, l, func() error { return nil }); propose || err != nil {
			t.Fatalf("plan of the same list: %v %v", propose, err)
		}
	})
}
