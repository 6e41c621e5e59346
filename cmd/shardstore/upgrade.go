package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/consensus"
	"github.com/shardstore/shardstore/internal/release"
)

// Rolling upgrades (docs/upgrades.md): every call between nodes is
// stamped with the sender's release (release.Stamper on n.hc, the raft
// stream's Stamp option) and checked by the receiver (release.Guard in
// route); the features every node reports become active through the gate
// document in the consensus state, which a round on the leader writes.

// gateRoundEvery is how often the leader looks for features every node
// reports, and every node re-reads the gate document.
const gateRoundEvery = 5 * time.Second

// helloTimeout bounds one node's answer to a status or gate round.
const helloTimeout = 2 * time.Second

// releaseName is the release this binary reports: version and commit.
func releaseName() string {
	b := currentBuild()
	name := strings.TrimSpace(b.Version + " " + b.Commit)
	if b.Modified {
		name += "+modified"
	}
	return name
}

// activeFeatures are the features active in the cluster as this node
// last read the gate document.
func (n *clusterNode) activeFeatures() []release.Feature {
	if g := n.gates.Load(); g != nil {
		return g.Active
	}
	return nil
}

// gate says whether feature f is active (s3api.Config.Gate).
func (n *clusterNode) gate(f release.Feature) error {
	if slices.Contains(n.activeFeatures(), f) {
		return nil
	}
	return fmt.Errorf("feature %s of the on-disk format is used only once every node of the cluster runs a release that has it (a node is down or still runs an older release; see `shardstore admin cluster upgrade-status`)", f)
}

// takeGates keeps g as the active features, never dropping one this
// node already saw active (the document only grows).
func (n *clusterNode) takeGates(g release.Gates) {
	for {
		old := n.gates.Load()
		merged := g
		if old != nil {
			for _, f := range old.Active {
				if !merged.IsActive(f) {
					merged.Active = append(slices.Clone(merged.Active), f)
				}
			}
			slices.Sort(merged.Active)
			if slices.Equal(old.Active, merged.Active) {
				return
			}
		}
		if n.gates.CompareAndSwap(old, &merged) {
			if len(merged.Active) > 0 {
				n.log.Info("active features", "features", strings.Join(merged.Active, ","))
			}
			return
		}
	}
}

// readGates reads the gate document (fresh: through the leader) and its
// version (0: none yet).
func (n *clusterNode) readGates(ctx context.Context, fresh bool) (release.Gates, uint64, error) {
	e, err := n.state.Get(ctx, release.GatesSpace, release.GatesKey, fresh)
	if errors.Is(err, consensus.ErrNotFound) {
		return release.Gates{}, 0, nil
	}
	if err != nil {
		return release.Gates{}, 0, err
	}
	g, err := release.ParseGates(e.Value)
	return g, e.Index, err
}

// loadGates re-reads the gate document from this node's applied state.
func (n *clusterNode) loadGates() {
	g, _, err := n.readGates(context.Background(), false)
	if err != nil {
		n.log.Warn("reading the feature gates", "err", err)
		return
	}
	n.takeGates(g)
}

// selfReport is this node's own report.
func (n *clusterNode) selfReport() release.NodeReport {
	h := n.hello
	h.Starting = false
	return h.Report()
}

// gateRound asks every node's hello and activates every feature all of
// them report. Any node may run it (the write is a compare-and-set on the
// document's version); the periodic round runs on the leader only.
func (n *clusterNode) gateRound(ctx context.Context) error {
	g, version, err := n.readGates(ctx, true)
	if err != nil {
		return err
	}
	n.takeGates(g)
	if !slices.ContainsFunc(release.Supported(), func(f release.Feature) bool { return !g.IsActive(f) }) {
		return nil // every feature this release knows is active: nothing to ask
	}
	reports := n.peers.Reports(ctx, n.hello, helloTimeout)
	reports[0] = n.selfReport()
	next, _, changed := release.Plan(reports, g, time.Now())
	if !changed {
		return nil
	}
	b, err := json.Marshal(next)
	if err != nil {
		return err
	}
	if _, err := n.state.Put(ctx, release.GatesSpace, release.GatesKey, version, b); err != nil {
		return fmt.Errorf("activating features %s: %w", strings.Join(next.Active, ","), err)
	}
	n.takeGates(next)
	n.log.Info("features activated: every node reports them", "active", strings.Join(next.Active, ","))
	return nil
}

// runGates re-reads the gate document and, on the leader, runs a gate
// round every gateRoundEvery until done is closed.
func (n *clusterNode) runGates(done <-chan struct{}) {
	t := time.NewTicker(gateRoundEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		n.loadGates()
		if !n.state.IsLeader() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), gateRoundEvery)
		if err := n.gateRound(ctx); err != nil && !errors.Is(err, consensus.ErrConflict) {
			n.log.Debug("feature gate round", "err", err)
		}
		cancel()
	}
}

// upgradeStatus is every node's release and the gates, for the admin
// call cluster/upgrade-status.
func (n *clusterNode) upgradeStatus(ctx context.Context) release.UpgradeStatus {
	st := release.UpgradeStatus{Answering: n.top.Nodes[n.self], Protocol: release.Protocol,
		MinProtocol: release.Protocol - 1, MaxProtocol: release.Protocol + 1}
	reports := n.peers.Reports(ctx, n.hello, helloTimeout)
	reports[0] = n.selfReport()
	// In the order of the command line's nodes.
	st.Nodes = append(reports[1:n.self+1:n.self+1], reports[0])
	st.Nodes = append(st.Nodes, reports[n.self+1:]...)
	g, _, err := n.readGates(ctx, true)
	if err != nil {
		st.Note = fmt.Sprintf("the gate document could not be read through the leader (%v): gates as this node last applied them", err)
		if g, _, err = n.readGates(ctx, false); err != nil {
			st.Note = fmt.Sprintf("the gate document could not be read: %v", err)
		}
	}
	_, st.Gates, _ = release.Plan(st.Nodes, g, time.Now())
	return st
}

// singleUpgradeStatus is the upgrade status of a server that is not a
// cluster.
func singleUpgradeStatus(self string) release.UpgradeStatus {
	rep := release.NodeReport{Node: self, Up: true, Stamp: release.Current(releaseName())}
	return release.UpgradeStatus{Answering: self, Protocol: release.Protocol,
		MinProtocol: release.Protocol - 1, MaxProtocol: release.Protocol + 1, Nodes: []release.NodeReport{rep},
		Note: "a single server: it has every feature of its release; upgrading is stopping and starting it"}
}
