package consensus

import (
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestRemoveMembers shrinks a group of five to three through
// RemoveServer, starting on a leader that is leaving (it hands
// leadership over first), then stops the two removed nodes: the three
// left are the whole group and commit changes.
func TestRemoveMembers(t *testing.T) {
	g := newTestGroupOf(t, 5, 5, nil)
	ctx := ctxT(t, 60*time.Second)
	l := g.leader()
	if l < 3 {
		// Make a leaving node the leader.
		if err := waitFuture(ctx, g.nodes[l].raft.LeadershipTransferToServer("node5", raft.ServerAddress(g.members[4].Address))); err != nil {
			t.Logf("transfer to node5: %v", err)
		}
		l = g.leader()
	}
	keep := func(id string) bool { return slices.Contains([]string{"node1", "node2", "node3"}, id) }
	if l >= 3 {
		removed, leader, err := g.nodes[l].RemoveMembers(ctx, keep)
		if err != nil || !leader || len(removed) != 0 {
			t.Fatalf("a leaving leader: removed %v, leader %v, %v", removed, leader, err)
		}
		if nl := g.leader(); nl >= 3 {
			t.Fatalf("leadership went to node %d, which is leaving", nl+1)
		}
	} else {
		t.Log("leadership could not be moved to a leaving node; testing a staying leader only")
	}
	// A follower removes nothing.
	l = g.leader()
	if removed, leader, err := g.nodes[(l+1)%5].RemoveMembers(ctx, keep); leader || err != nil || removed != nil {
		t.Fatalf("a follower: %v %v %v", removed, leader, err)
	}
	removed, leader, err := g.nodes[l].RemoveMembers(ctx, keep)
	if err != nil || !leader || len(removed) != 2 {
		t.Fatalf("removed %v, leader %v: %v", removed, leader, err)
	}
	voters, err := g.nodes[l].Voters()
	if err != nil || len(voters) != 3 || slices.Contains(voters, "node4") || slices.Contains(voters, "node5") {
		t.Fatalf("voters after the removal: %v %v", voters, err)
	}
	// Nothing left to remove; never the last voter.
	if removed, _, err := g.nodes[l].RemoveMembers(ctx, keep); err != nil || len(removed) != 0 {
		t.Fatalf("again: %v %v", removed, err)
	}
	if _, _, err := g.nodes[l].RemoveMembers(ctx, func(string) bool { return false }); err == nil {
		t.Fatal("removing every member was not refused")
	}
	g.stop(3)
	g.stop(4)
	// With one of the three down the other two are a majority.
	down := (l + 1) % 3
	g.stop(down)
	up := 3 - l - down
	if _, err := g.nodes[up].Put(ctx, "config", "after", 0, []byte("shrunk")); err != nil {
		t.Fatalf("change through node %d with the removed nodes and node %d stopped: %v", up+1, down+1, err)
	}
}
