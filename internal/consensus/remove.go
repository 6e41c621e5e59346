package consensus

import (
	"context"
	"fmt"

	"github.com/hashicorp/raft"
)

// Removing members (a cluster shrunk by a decommissioned pool's nodes)
// goes through raft's own single-server change, RemoveServer, on the
// leader, one server at a time: each change is committed by a majority
// of the configuration it changes, so the nodes leaving must still be
// running (or few enough that the others are a majority) until they are
// removed. A leader that is itself leaving hands leadership to a member
// that stays first, which then removes it.

// RemoveMembers removes from the group, on the leader, every member
// keep refuses, and returns their ids. It returns false, nil on a node
// that is not the leader. A leader that keep refuses transfers
// leadership to a voter that keep accepts instead and removes nothing
// (the new leader removes it); it refuses to leave no voter behind.
func (n *Node) RemoveMembers(ctx context.Context, keep func(id string) bool) (removed []string, leader bool, err error) {
	if !n.IsLeader() {
		return nil, false, nil
	}
	cf := n.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return nil, true, err
	}
	var stay, leave []raft.Server
	for _, s := range cf.Configuration().Servers {
		if keep(string(s.ID)) {
			if s.Suffrage == raft.Voter {
				stay = append(stay, s)
			}
			continue
		}
		leave = append(leave, s)
	}
	if len(leave) == 0 {
		return nil, true, nil
	}
	if len(stay) == 0 {
		return nil, true, fmt.Errorf("remove members: no voter of the group would stay")
	}
	if !keep(n.opts.Self.ID) {
		n.log.Info("this node leaves the consensus group: handing leadership to a member that stays", "to", stay[0].ID)
		if err := waitFuture(ctx, n.raft.LeadershipTransferToServer(stay[0].ID, stay[0].Address)); err != nil {
			return nil, true, fmt.Errorf("leadership transfer to %s before leaving: %w", stay[0].ID, err)
		}
		return nil, true, nil
	}
	for _, s := range leave {
		n.log.Info("removing a node from the consensus group", "node", s.ID, "address", s.Address)
		if err := waitFuture(ctx, n.raft.RemoveServer(s.ID, 0, 0)); err != nil {
			return removed, true, fmt.Errorf("remove %s from the consensus group: %w", s.ID, err)
		}
		removed = append(removed, string(s.ID))
	}
	return removed, true, nil
}

// Members lists the ids of the group's members, voters or not, as this
// node knows them (its latest configuration, committed or not).
func (n *Node) Members() ([]string, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	var out []string
	for _, s := range f.Configuration().Servers {
		out = append(out, string(s.ID))
	}
	return out, nil
}
