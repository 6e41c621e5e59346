package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/shardstore/shardstore/internal/cluster"
)

// removedNode says why this node cannot read the recorded pool list when
// it is a node the deployment took out (a shrink, a canceled expansion):
// the leader removed it from the consensus group, so it finds no leader
// to read through, and without this it would wait its whole start
// deadline and end on "no majority reachable". It is such a node when
// its own consensus configuration no longer names it and the other
// nodes that answer run with lists that name none of its drives. ""
// otherwise.
func (n *clusterNode) removedNode(ctx context.Context, mine cluster.PoolList) string {
	self := n.top.ID(n.self)
	members, err := n.state.Members()
	if err != nil || len(members) == 0 || slices.Contains(members, self) {
		return ""
	}
	var theirs []string
	for _, p := range n.top.Nodes {
		if p == n.top.Nodes[n.self] {
			continue
		}
		hctx, cancel := context.WithTimeout(ctx, helloTimeout)
		h, err := n.peers.Hello(hctx, p)
		cancel()
		if err != nil || h.Deployment == "" {
			continue
		}
		l := h.PoolList()
		if slices.Contains(l.Nodes(), self) {
			return "" // a running node still has this node's drives in its list
		}
		theirs = append(theirs, fmt.Sprintf("%s runs with %d pool(s) of %v drives", strings.TrimPrefix(p, n.top.Scheme+"://"), len(l.Pools), l.Pools))
	}
	if len(theirs) == 0 {
		return ""
	}
	return fmt.Sprintf("this node (%s) is no longer a member of the consensus group (its members are %s), and the running nodes' pool lists name none of its drives (%s): its pool was taken out of the deployment (removed after its decommission, or its expansion canceled), and it was started with %s, a command line from before that. Stop it; to add its drives again as a new pool, empty them and start it with --readd-removed-pools",
		self, strings.Join(members, ", "), strings.Join(theirs, "; "), mine.Describe())
}
