package jepsen

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The nemeses that need a binary built with -tags testhooks: clock skew
// (internal/wallclock) and slow or failing drives (internal/drivefault).

// skews are the clock offsets the clock-skew nemesis gives a node: within
// the node-to-node signatures' window (peerauth.MaxSkew, 5 min) and, the
// last of each way, past it. +3 min was S1's case (a node ahead served
// nothing for as long as it was ahead after a restart; fixed: see
// restart below).
var skews = []time.Duration{1500 * time.Millisecond, 30 * time.Second, 3 * time.Minute, 8 * time.Minute,
	-5 * time.Second, -45 * time.Second, -3 * time.Minute, -8 * time.Minute}

// peerMaxSkew is peerauth.MaxSkew: how far apart two nodes' clocks may
// be for their signed requests to pass.
const peerMaxSkew = 5 * time.Minute

// clockEnv is the environment that sets a node's clock offset.
func clockEnv(d time.Duration) string {
	return "SHARDSTORE_TEST_CLOCK_OFFSET=" + d.String()
}

// startSkew restarts node v (SIGTERM, start) with its clock off by one
// of skews, either way; the round's end restarts it with its clock right.
// The restart is the only way in: the offset is read at start, as a
// machine's clock is off from boot (see internal/wallclock).
func (n *nemesis) startSkew(v int) (*active, error) {
	d := skews[n.rng.IntN(len(skews))]
	outside := func(off time.Duration) bool { return off > peerMaxSkew || off < -peerMaxSkew }
	var now time.Duration // the node's offset
	restart := func(off time.Duration) error {
		n.c.SetEnv(v, clockEnv(off))
		if outside(now) {
			// Still waiting for the others (it never got ready): such a
			// node does not shut down gracefully, there is nothing to.
			n.c.Kill(v)
		} else if err := n.c.Term(v); err != nil {
			return err
		}
		now = off
		if outside(off) {
			// Past the signatures' window the other nodes refuse it and
			// it refuses them: it never gets ready (it answers 503 "This
			// node is starting"), so it is not waited for.
			return n.c.launch(v)
		}
		if err := n.c.launch(v); err != nil {
			return err
		}
		// Within the window a node gets ready as after any restart,
		// whichever way its clock is off: the others' requests name its
		// new run once it has called them, so peerauth's replay guard no
		// longer judges them by date (S1, docs/consistency.md; before,
		// a node ahead by D got ready only D after its start).
		return n.c.WaitReady(v, 2*time.Minute)
	}
	if err := restart(d); err != nil {
		return nil, fmt.Errorf("clock-skew: node %d: %w", v+1, err)
	}
	return &active{name: NemSkew, nodes: fmt.Sprintf("%v %+v", nodes1([]int{v}), d), start: n.h.Now(), stop: func() error {
		return restart(0)
	}}, nil
}

// FaultsFile is the drive faults file node i's drives follow in a
// testhooks build (internal/drivefault), when the run has a disk
// nemesis.
func (c *Cluster) FaultsFile(i int) string {
	return filepath.Join(c.dir, fmt.Sprintf("node%d.faults", i+1))
}

// setFaults writes node i's faults file; the node reads it within
// 200 ms. It is written whole under another name and renamed, so the
// node never reads half a file.
func (c *Cluster) setFaults(i int, text string) error {
	tmp := c.FaultsFile(i) + ".new"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, c.FaultsFile(i))
}

// Delays of slow-disk (the last past the cluster's 3 s drive timeout)
// and 1-in-N rates of failing-disk.
var (
	diskDelays = []time.Duration{50 * time.Millisecond, 300 * time.Millisecond, time.Second, 4 * time.Second}
	diskEvery  = []int{2, 5, 20}
)

// startDisk makes node v's drives slow or failing until the round ends.
func (n *nemesis) startDisk(kind string, v int) (*active, error) {
	var spec string
	if kind == NemSlowDisk {
		spec = fmt.Sprintf("ops=all delay=%v", diskDelays[n.rng.IntN(len(diskDelays))])
	} else {
		spec = fmt.Sprintf("ops=all eio=%d", diskEvery[n.rng.IntN(len(diskEvery))])
	}
	if err := n.c.setFaults(v, spec+"\n"); err != nil {
		return nil, err
	}
	return &active{name: kind, nodes: fmt.Sprintf("%v %s", nodes1([]int{v}), spec), start: n.h.Now(), stop: func() error {
		return n.c.setFaults(v, "")
	}}, nil
}

// startOneWay cuts node p[0]'s messages to some of the others (two, or
// all of them) while theirs to it still arrive.
func (n *nemesis) startOneWay(p []int) (*active, error) {
	a := p[0]
	k := len(p) - 1
	if n.rng.IntN(2) == 0 {
		k = min(2, k)
	}
	to := p[1 : 1+k]
	cut := func(i, j int) bool { return i == a && slices.Contains(to, j) }
	if err := n.c.net.SetLinks(func(i, j int) bool { return !cut(i, j) }); err != nil {
		return nil, err
	}
	return &active{name: NemOneWay, nodes: fmt.Sprintf("%v -/-> %v", nodes1([]int{a}), nodes1(to)), start: n.h.Now(), stop: func() error {
		return n.c.net.SetLinks(func(i, j int) bool { return true })
	}}, nil
}
