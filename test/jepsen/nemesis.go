package jepsen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Nemesis names. Network faults (one at a time) and process faults (one
// at a time) compose: a round may start one of each together.
const (
	NemHalves  = "partition-halves"  // two sides of n/2 and n-n/2 nodes (5 nodes: minority 2, majority 3)
	NemIsolate = "partition-isolate" // one node cut from all the others
	NemBridge  = "partition-bridge"  // two sides that cannot see each other, one node seeing both
	NemKill    = "kill"              // kill -9 of one or two nodes (a minority), restarted when the round ends
	NemPause   = "pause"             // SIGSTOP of one node for longer than a lock lease (30 s), then SIGCONT
	NemRolling = "rolling-restart"   // every node in turn: SIGTERM, start again, wait until ready
	NemFull    = "disk-full"         // one node's drives (each a small tmpfs) filled to ENOSPC, emptied when the round ends
	// The next three need a binary built with -tags testhooks
	// (nemesis_hooks.go); Run leaves them out, saying so, otherwise.
	NemSkew     = "clock-skew"   // one node restarted with its clock seconds to minutes off, restarted right when the round ends
	NemSlowDisk = "slow-disk"    // one node's drives answer late (50 ms to 4 s, past the 3 s drive timeout), switched at run time
	NemFailDisk = "failing-disk" // one node's drives fail 1 call in N with EIO, switched at run time
	// NemOneWay cuts one node's messages to some others while theirs to
	// it still arrive (netns: a blackhole route on its side; proxy: its
	// connections to them held).
	NemOneWay = "partition-oneway"
)

// AllNemeses is every nemesis the harness has.
var AllNemeses = []string{NemHalves, NemIsolate, NemBridge, NemKill, NemPause, NemRolling, NemFull,
	NemSkew, NemSlowDisk, NemFailDisk, NemOneWay}

// needHooks is whether nemesis n needs a testhooks build.
func needHooks(n string) bool { return n == NemSkew || n == NemSlowDisk || n == NemFailDisk }

func isNetwork(n string) bool { return strings.HasPrefix(n, "partition-") }

// ParseNemeses reads a comma-separated list ("all" is every one).
func ParseNemeses(s string) ([]string, error) {
	if s == "" || s == "all" {
		return AllNemeses, nil
	}
	var out []string
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(AllNemeses, n) {
			return nil, fmt.Errorf("jepsen: unknown nemesis %q (have %s)", n, strings.Join(AllNemeses, ", "))
		}
		out = append(out, n)
	}
	return out, nil
}

// nemesis applies faults to a cluster.
type nemesis struct {
	c     *Cluster
	h     *History
	rng   *rand.Rand
	log   func(string, ...any)
	kinds []string
	// hold: how long a fault lasts; pauseFor: a SIGSTOP's length.
	hold, pauseFor time.Duration
	// next is the round's index: the first rounds go through the kinds
	// in order, so a short run still has each at least once.
	next int
}

// active is a started fault and how to end it.
type active struct {
	name, nodes string
	start       time.Duration
	stop        func() error
}

func (n *nemesis) perm() []int { return n.rng.Perm(n.c.N()) }

// startNetwork cuts the network as kind says.
func (n *nemesis) startNetwork(kind string) (*active, error) {
	p := n.perm()
	N := n.c.N()
	side := map[int]int{} // node → side; bridge node: -1
	var desc string
	switch kind {
	case NemHalves:
		for i, node := range p {
			side[node] = min(1, i/(N/2))
		}
		desc = fmt.Sprintf("%v | %v", nodes1(p[:N/2]), nodes1(p[N/2:]))
	case NemIsolate:
		for i, node := range p {
			side[node] = min(i, 1)
		}
		desc = fmt.Sprintf("%v alone", nodes1(p[:1]))
	case NemBridge:
		half := (N - 1) / 2
		for i, node := range p {
			switch {
			case i == 0:
				side[node] = -1
			case i <= half:
				side[node] = 0
			default:
				side[node] = 1
			}
		}
		desc = fmt.Sprintf("%v | bridge %v | %v", nodes1(p[1:half+1]), nodes1(p[:1]), nodes1(p[half+1:]))
	case NemOneWay:
		return n.startOneWay(p)
	default:
		return nil, fmt.Errorf("not a network nemesis: %s", kind)
	}
	connected := func(i, j int) bool { return side[i] == side[j] || side[i] == -1 || side[j] == -1 }
	if err := n.c.net.SetLinks(connected); err != nil {
		return nil, err
	}
	return &active{name: kind, nodes: desc, start: n.h.Now(), stop: func() error {
		return n.c.net.SetLinks(func(i, j int) bool { return true })
	}}, nil
}

// startProcess starts a process fault.
func (n *nemesis) startProcess(kind string) (*active, error) {
	p := n.perm()
	switch kind {
	case NemKill:
		k := 1 + n.rng.IntN(max(1, (n.c.N()-1)/2))
		victims := p[:k]
		for _, v := range victims {
			n.c.Kill(v)
		}
		return &active{name: kind, nodes: fmt.Sprint(nodes1(victims)), start: n.h.Now(), stop: func() error {
			var errs []error
			for _, v := range victims {
				errs = append(errs, n.c.Restart(v))
			}
			return errors.Join(errs...)
		}}, nil
	case NemFull:
		v := p[0]
		if err := n.c.FillDrives(v); err != nil {
			return nil, err
		}
		return &active{name: kind, nodes: fmt.Sprint(nodes1([]int{v})), start: n.h.Now(), stop: func() error {
			err := n.c.EmptyDrives(v)
			if !n.c.Up(v) {
				// A node that died of the full disk is a finding for the
				// report; the run goes on with it restarted.
				n.log("nemesis: node %d exited while its drives were full:\n%s", v+1, n.c.Log(v, 15))
				n.h.AddFault(FaultEvent{Name: "crashed-on-full-disk", Nodes: fmt.Sprint(v + 1), Start: n.h.Now(), End: n.h.Now()})
				err = errors.Join(err, n.c.Restart(v))
			}
			return err
		}}, nil
	case NemSkew:
		return n.startSkew(p[0])
	case NemSlowDisk, NemFailDisk:
		return n.startDisk(kind, p[0])
	case NemPause:
		v := p[0]
		n.c.Pause(v)
		return &active{name: kind, nodes: fmt.Sprint(nodes1([]int{v})), start: n.h.Now(), stop: func() error {
			n.c.Resume(v)
			return nil
		}}, nil
	}
	return nil, fmt.Errorf("not a process nemesis: %s", kind)
}

// rolling restarts every node in turn, gracefully.
func (n *nemesis) rolling() error {
	start := n.h.Now()
	var errs []error
	for i := range n.c.N() {
		if err := n.c.Term(i); err != nil {
			errs = append(errs, err)
		}
		if err := n.c.Restart(i); err != nil {
			errs = append(errs, err)
			break
		}
	}
	err := errors.Join(errs...)
	n.h.AddFault(FaultEvent{Name: NemRolling, Nodes: "all", Start: start, End: n.h.Now(), Err: errString(err)})
	return err
}

// round runs one fault round: a network fault, a process fault or both
// at once, held for n.hold (a pause for n.pauseFor), then healed (the
// network first, so restarted nodes find the others).
func (n *nemesis) round() error {
	var netKinds, procKinds []string
	for _, k := range n.kinds {
		if isNetwork(k) {
			netKinds = append(netKinds, k)
		} else {
			procKinds = append(procKinds, k)
		}
	}
	var netK, procK string
	if n.next < len(n.kinds) {
		// The first rounds: each kind once, on its own.
		k := n.kinds[n.next]
		if isNetwork(k) {
			netK = k
		} else {
			procK = k
		}
	} else {
		if len(netKinds) > 0 && n.rng.IntN(3) > 0 {
			netK = netKinds[n.rng.IntN(len(netKinds))]
		}
		if len(procKinds) > 0 && (netK == "" || n.rng.IntN(2) == 0) {
			procK = procKinds[n.rng.IntN(len(procKinds))]
		}
	}
	n.next++
	if procK == NemRolling {
		// Not composed: it takes the nodes down one by one itself.
		if netK == "" {
			n.log("nemesis: rolling restart")
			return n.rolling()
		}
		procK = ""
	}
	var faults []*active
	hold := n.hold
	if netK != "" {
		a, err := n.startNetwork(netK)
		if err != nil {
			return err
		}
		faults = append(faults, a)
	}
	if procK != "" {
		a, err := n.startProcess(procK)
		if err != nil {
			return errors.Join(err, n.end(faults))
		}
		faults = append(faults, a)
		if procK == NemPause {
			hold = n.pauseFor
		}
	}
	var names []string
	for _, f := range faults {
		names = append(names, f.name+" "+f.nodes)
	}
	n.log("nemesis: %s for %v", strings.Join(names, " + "), hold)
	time.Sleep(hold)
	return n.end(faults)
}

func (n *nemesis) end(faults []*active) error {
	var errs []error
	for _, f := range faults {
		err := f.stop()
		errs = append(errs, err)
		n.h.AddFault(FaultEvent{Name: f.name, Nodes: f.nodes, Start: f.start, End: n.h.Now(), Err: errString(err)})
	}
	return errors.Join(errs...)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// nodes1 is node indexes as the report shows them (1-based).
func nodes1(ns []int) []int {
	out := make([]int, len(ns))
	for i, v := range ns {
		out[i] = v + 1
	}
	return out
}
