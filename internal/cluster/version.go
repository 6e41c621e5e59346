package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/release"
)

// Stamp is what h says of the node's release: a hello without a
// protocol is from a release before release stamps.
func (h Hello) Stamp() release.Stamp {
	s := release.Stamp{Release: h.Version, Protocol: h.Protocol, Features: h.Features}
	if s.Protocol == 0 {
		s.Protocol = release.Unstamped
	}
	return s
}

// Report is h as a node report for the upgrade status.
func (h Hello) Report() release.NodeReport {
	return release.NodeReport{Node: h.Node, Up: !h.Starting, Stamp: h.Stamp(),
		Err: map[bool]string{true: "starting: its drives are not open yet"}[h.Starting]}
}

// Reports asks every other node for its hello once (each within
// timeout) and returns self's report and theirs, in the order of the
// nodes; a node that does not answer is reported down with the reason.
func (p *Peers) Reports(ctx context.Context, self Hello, timeout time.Duration) []release.NodeReport {
	out := make([]release.NodeReport, len(p.nodes)+1)
	out[0] = self.Report()
	var wg sync.WaitGroup
	for i, n := range p.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			h, err := p.Hello(cctx, n)
			if err != nil {
				out[i+1] = release.NodeReport{Node: n, Err: err.Error()}
				return
			}
			out[i+1] = h.Report()
			out[i+1].Node = n
		}()
	}
	wg.Wait()
	return out
}
