package consensus

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// joinTweak bootstraps nodes below initial with the first initial
// members, and starts the others with Join; the leader accepts the ids
// in allowed.
func joinTweak(initial int, allowed ...string) func(i int, o *Options) {
	return func(i int, o *Options) {
		o.Members = o.Members[:initial]
		o.Join = i >= initial
		o.MayJoin = func(id, _ string) error {
			if slices.Contains(allowed, id) {
				return nil
			}
			return fmt.Errorf("node %s is not in the recorded pool list", id)
		}
	}
}

func TestJoinAddsANodeThroughMembershipChange(t *testing.T) {
	g := newTestGroupOf(t, 4, 3, joinTweak(3, "node4"))
	ctx := ctxT(t, 60*time.Second)
	l := g.leader()
	if _, err := g.nodes[l].Put(ctx, "config", "before", 0, []byte("one")); err != nil {
		t.Fatal(err)
	}
	g.start(3)
	if voters, _ := g.nodes[3].Voters(); len(voters) != 0 {
		t.Fatalf("a joining node knows voters %v before it joined: it bootstrapped", voters)
	}
	if err := g.nodes[3].Join(ctx, g.members[:3], func(s string) { t.Log(s) }); err != nil {
		t.Fatal(err)
	}
	l = g.leader()
	voters, err := g.nodes[l].Voters()
	if err != nil || len(voters) != 4 || !slices.Contains(voters, "node4") {
		t.Fatalf("voters after the join: %v %v", voters, err)
	}
	if e, err := g.nodes[3].Get(ctx, "config", "before", true); err != nil || string(e.Value) != "one" {
		t.Fatalf("the joined node's fresh read: %+v %v", e, err)
	}
	// The new member's vote counts: with one original node down, the
	// group of four still has a majority (three) only with node 4.
	down := (l + 1) % 3
	g.stop(down)
	if _, err := g.nodes[3].Put(ctx, "config", "after", 0, []byte("two")); err != nil {
		t.Fatalf("change through the joined node with node %d down: %v", down+1, err)
	}
	// Joining again is a no-op.
	if err := g.nodes[3].Join(ctx, g.members[:3], nil); err != nil {
		t.Fatal(err)
	}
}

func TestJoinRefused(t *testing.T) {
	g := newTestGroupOf(t, 4, 3, joinTweak(3 /* nobody allowed */))
	ctx := ctxT(t, 30*time.Second)
	l := g.leader()
	g.start(3)
	err := g.nodes[3].Join(ctx, g.members[:3], nil)
	if !errors.Is(err, ErrJoinRefused) || !strings.Contains(err.Error(), "not in the recorded pool list") {
		t.Fatalf("join of a node the leader does not accept: %v", err)
	}
	if voters, _ := g.nodes[l].Voters(); len(voters) != 3 {
		t.Fatalf("voters after a refused join: %v", voters)
	}
	// A member's id at another address is refused, even by a leader
	// that accepts every node: two processes would share one vote.
	g.nodes[l].opts.MayJoin = func(string, string) error { return nil }
	_, err = g.nodes[l].changeMembership("join", joinRequest{ID: g.members[(l+1)%3].ID, Address: "127.0.0.1:1"})
	if !errors.Is(err, ErrJoinRefused) || !strings.Contains(err.Error(), "not 127.0.0.1:1") {
		t.Fatalf("join under a member's id at another address: %v", err)
	}
	// Promote before join is refused.
	if _, err := g.nodes[l].changeMembership("promote", joinRequest{ID: "node9", Address: "127.0.0.1:2"}); !errors.Is(err, ErrJoinRefused) {
		t.Fatalf("promote of a node that never joined: %v", err)
	}
}

// A node whose log was wiped does not bootstrap (its bootstrap entry
// could differ from the group's first entry once the membership
// changed): it starts empty, is still a voter in the group's
// configuration, and is brought up to date by the leader.
func TestWipedNodeRejoinsWithoutBootstrap(t *testing.T) {
	g := newTestGroupOf(t, 3, 3, func(i int, o *Options) {
		o.MayJoin = func(string, string) error { return nil }
	})
	ctx := ctxT(t, 60*time.Second)
	l := g.leader()
	if _, err := g.nodes[l].Put(ctx, "bucket", "kept", 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	wiped := (l + 1) % 3
	g.stop(wiped)
	if err := os.RemoveAll(g.dirs[wiped]); err != nil {
		t.Fatal(err)
	}
	g.tweak = func(i int, o *Options) {
		o.MayJoin = func(string, string) error { return nil }
		o.Join = i == wiped
	}
	g.start(wiped)
	if err := g.nodes[wiped].Join(ctx, g.members, nil); err != nil {
		t.Fatal(err)
	}
	if e, err := g.nodes[wiped].Get(ctx, "bucket", "kept", true); err != nil || string(e.Value) != "x" {
		t.Fatalf("wiped node after rejoining: %+v %v", e, err)
	}
	if voters, _ := g.nodes[wiped].Voters(); len(voters) != 3 {
		t.Fatalf("wiped node's voters: %v", voters)
	}
}

func TestJoinRequestValidate(t *testing.T) {
	long := strings.Repeat("a", maxMemberField+1)
	for _, tc := range []struct {
		req joinRequest
		ok  bool
	}{
		{joinRequest{"http://n5:9000", "n5:9000"}, true},
		{joinRequest{"", "n5:9000"}, false},
		{joinRequest{"x", ""}, false},
		{joinRequest{long, "n5:9000"}, false},
		{joinRequest{"x", long}, false},
		{joinRequest{"x\n", "n5:9000"}, false},
		{joinRequest{"x", "n5:9000\x00"}, false},
		{joinRequest{"x", "n5\x7f"}, false},
	} {
		if err := tc.req.validate(); (err == nil) != tc.ok {
			t.Errorf("%q: %v, want ok=%v", tc.req, err, tc.ok)
		}
	}
}

// A node stopped after it was added as a non-voter and before it was
// made a voter finishes on its next Join: the leader answers that it is
// a non-voter, and promotes it.
func TestJoinFinishesAfterACutShortJoin(t *testing.T) {
	g := newTestGroupOf(t, 4, 3, joinTweak(3, "node4"))
	ctx := ctxT(t, 60*time.Second)
	l := g.leader()
	if _, err := g.nodes[l].changeMembership("join", joinRequest{ID: "node4", Address: g.members[3].Address}); err != nil {
		t.Fatal(err)
	}
	if voters, _ := g.nodes[l].Voters(); len(voters) != 3 {
		t.Fatalf("voters with node 4 a non-voter: %v", voters)
	}
	g.start(3)
	if err := g.nodes[3].Join(ctx, g.members[:3], nil); err != nil {
		t.Fatal(err)
	}
	if voters, _ := g.nodes[g.leader()].Voters(); len(voters) != 4 {
		t.Fatalf("voters after the join finished: %v", voters)
	}
}
