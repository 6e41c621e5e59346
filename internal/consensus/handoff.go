package consensus

import (
	"context"
	"fmt"
	"time"
)

// HandOff gives up leadership before this node stops, so the group does
// not wait an election timeout for a new leader: raft's leadership
// transfer picks the most up-to-date follower and tells it to start an
// election at once. It returns false, nil when this node is not the
// leader; an error when the transfer failed or ctx ended first (the
// group then elects a leader as after a crash).
func (n *Node) HandOff(ctx context.Context) (bool, error) {
	if !n.IsLeader() {
		return false, nil
	}
	f := n.raft.LeadershipTransfer()
	if err := waitFuture(ctx, f); err != nil {
		return true, fmt.Errorf("leadership transfer: %w", err)
	}
	// The transfer returns once the target won; wait until this node has
	// heard of the new leader, so forwarded calls made while it drains go
	// there.
	for ctx.Err() == nil {
		if addr, _ := n.raft.LeaderWithID(); addr != "" && !n.IsLeader() {
			return true, nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	return true, ctx.Err()
}
