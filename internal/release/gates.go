package release

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Where the gate document lives in the cluster's consensus state.
const (
	GatesSpace = "config"
	GatesKey   = "release-gates"
)

// Gates is the gate document: the features active in the cluster. It
// only grows: a feature once active stays active (data may be written in
// its format), so downgrading below it is refused.
type Gates struct {
	Active []Feature `json:"active"`
	// Since is when each feature became active (RFC 3339).
	Since map[Feature]string `json:"since,omitempty"`
}

// ParseGates reads a gate document; an empty one has no active feature.
func ParseGates(b []byte) (Gates, error) {
	var g Gates
	if len(b) == 0 {
		return g, nil
	}
	if len(b) > 64<<10 {
		return Gates{}, fmt.Errorf("gate document: %d bytes is too large", len(b))
	}
	if err := json.Unmarshal(b, &g); err != nil {
		return Gates{}, fmt.Errorf("gate document: %w", err)
	}
	for _, f := range g.Active {
		if !validFeature(f) {
			return Gates{}, fmt.Errorf("gate document: feature %q", f)
		}
	}
	slices.Sort(g.Active)
	g.Active = slices.Compact(g.Active)
	return g, nil
}

// IsActive reports whether f is active.
func (g Gates) IsActive(f Feature) bool { return slices.Contains(g.Active, f) }

// NodeReport is what one node reported of itself (its hello), or why it
// did not.
type NodeReport struct {
	Node string `json:"node"`
	Up   bool   `json:"up"`
	Stamp
	// Err says why the node did not answer (Up false).
	Err string `json:"error,omitempty"`
}

// GateStatus is one feature's gate.
type GateStatus struct {
	Feature Feature `json:"feature"`
	Active  bool    `json:"active"`
	Since   string  `json:"since,omitempty"`
	// Ready is set for an inactive feature every node reports: it
	// activates on the leader's next round (seconds).
	Ready bool `json:"ready,omitempty"`
	// Blocked lists what keeps an inactive feature from activating: nodes
	// that are down or lack it.
	Blocked []string `json:"blocked,omitempty"`
}

// UpgradeStatus is the answer of the admin call cluster/upgrade-status.
type UpgradeStatus struct {
	// Answering is the node that answered; Protocol the protocol it
	// speaks, which answers MinProtocol to MaxProtocol.
	Answering   string `json:"answering"`
	Protocol    int    `json:"protocol"`
	MinProtocol int    `json:"minProtocol"`
	MaxProtocol int    `json:"maxProtocol"`
	// Nodes are every node's release, protocol and features, in the
	// order of the nodes on the command line.
	Nodes []NodeReport `json:"nodes"`
	// Gates are the features and whether each is active, and why not.
	Gates []GateStatus `json:"gates"`
	// Note says what else the answer means (a single server has no gates;
	// the gate document could not be read).
	Note string `json:"note,omitempty"`
}

// Plan says, for every feature this release supports or the document
// lists, whether it is active and what blocks it, and returns the gate
// document with every feature all nodes report added (changed is false
// when nothing was added). A feature activates only when every node is
// up and reports it.
func Plan(nodes []NodeReport, g Gates, now time.Time) (next Gates, status []GateStatus, changed bool) {
	next = Gates{Active: slices.Clone(g.Active), Since: map[Feature]string{}}
	for k, v := range g.Since {
		next.Since[k] = v
	}
	features := slices.Clone(g.Active)
	for _, f := range Supported() {
		if !slices.Contains(features, f) {
			features = append(features, f)
		}
	}
	slices.Sort(features)
	for _, f := range features {
		st := GateStatus{Feature: f, Active: g.IsActive(f), Since: g.Since[f]}
		if !st.Active {
			for _, n := range nodes {
				switch {
				case !n.Up:
					st.Blocked = append(st.Blocked, fmt.Sprintf("%s is not answering (%s)", n.Node, n.Err))
				case !n.Has(f):
					st.Blocked = append(st.Blocked, fmt.Sprintf("%s runs %s, which lacks it", n.Node, releaseName(n.Stamp)))
				}
			}
			if len(nodes) > 0 && len(st.Blocked) == 0 {
				st.Ready = true
				next.Active = append(next.Active, f)
				next.Since[f] = now.UTC().Format(time.RFC3339)
				changed = true
			}
		}
		status = append(status, st)
	}
	slices.Sort(next.Active)
	return next, status, changed
}

func releaseName(s Stamp) string {
	if s.Release == "" {
		return "a release from before release stamps"
	}
	return "release " + strings.TrimSpace(s.Release)
}
