package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// newNodesDemo is `cluster demo --new-nodes`: every pool on nodes of its
// own, as a cluster grows on servers (http://n{1...4}:9000/d{1...4}
// http://n{5...8}:9000/d{1...4}). Node I listens on 127.0.0.I:PORT (the
// whole 127/8 is loopback on Linux) in the working directory DIR/nodeI,
// and its drives are /proc/self/cwd/dJ: one drive path for every node,
// as on servers, each node's its own directory. Started again on its
// --dir with more pools it rehearses a rolling expansion: it starts the
// pools that exist with their list, then the new pools' nodes with the
// whole list, then restarts the existing nodes one at a time with it.
type newNodesDemo struct {
	nodes, drives, pools, port int
	root, exe                  string
	extra                      []string // --parity, --set-size
	console                    string
}

// demoPoolArg is pool p's (1-based) argument.
func (d newNodesDemo) poolArg(p int) string {
	return fmt.Sprintf("http://127.0.0.{%d...%d}:%d/proc/self/cwd/d{1...%d}", (p-1)*d.nodes+1, p*d.nodes, d.port, d.drives)
}

func (d newNodesDemo) args(pools int) []string {
	var out []string
	for p := 1; p <= pools; p++ {
		out = append(out, d.poolArg(p))
	}
	return out
}

func (d newNodesDemo) nodeDir(i int) string {
	return filepath.Join(d.root, fmt.Sprintf("node%d", i+1))
}

// formattedPools counts the pools, from the first, whose first node has
// a formatted drive: the pools the deployment has.
func (d newNodesDemo) formattedPools() int {
	n := 0
	for p := 1; ; p++ {
		f := filepath.Join(d.nodeDir((p-1)*d.nodes), "d1", ".shardstore.sys", "format.json")
		if _, err := os.Stat(f); err != nil {
			return n
		}
		n = p
	}
}

// demoStart is a node started, with what startDemoNode reports of it.
type demoStart struct {
	p      *demoNode
	ready  chan *demoNode
	failed chan error
}

// start starts node i with the pool arguments of pools pools.
func (d newNodesDemo) start(i, pools int) (demoStart, error) {
	dir := d.nodeDir(i)
	for j := 1; j <= d.drives; j++ {
		if err := os.MkdirAll(filepath.Join(dir, fmt.Sprintf("d%d", j)), 0o750); err != nil {
			return demoStart{}, fmt.Errorf("cluster demo: %w", err)
		}
	}
	args := []string{"server", "--address", fmt.Sprintf("127.0.0.%d:%d", i+1, d.port), "--allow-root-drives"}
	cons := ""
	if i == 0 {
		cons = d.console
	}
	args = append(append(append(args, "--console-address", cons), d.extra...), d.args(pools)...)
	s := demoStart{ready: make(chan *demoNode, 1), failed: make(chan error, 1)}
	var err error
	s.p, err = startDemoNodeIn(dir, d.exe, args, i, filepath.Join(d.root, fmt.Sprintf("node%d.log", i+1)), s.ready, s.failed)
	return s, err
}

// wait waits until the node serves, fails, or a signal arrives.
func (s demoStart) wait(sigs <-chan os.Signal) error {
	select {
	case <-s.ready:
		return nil
	case err := <-s.failed:
		return err
	case sig := <-sigs:
		return fmt.Errorf("cluster demo: %v", sig)
	}
}

// runNewNodesDemo runs the demo of pools on nodes of their own.
func runNewNodesDemo(d newNodesDemo) error {
	if runtime.GOOS != "linux" {
		return errors.New("cluster demo --new-nodes: needs Linux (nodes on 127.0.0.I, drives under /proc/self/cwd)")
	}
	if d.nodes*d.pools > 254 {
		return fmt.Errorf("cluster demo --new-nodes: %d nodes: at most 254 (127.0.0.1 to 127.0.0.254)", d.nodes*d.pools)
	}
	have := d.formattedPools()
	if have > d.pools {
		return fmt.Errorf("cluster demo --new-nodes: %s has %d pools and %d were asked for: removing a pool's nodes from the consensus group is not built yet (docs/pools.md)", d.root, have, d.pools)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	procs := make([]demoStart, d.nodes*d.pools)
	stop := func(p *demoNode) {
		if p == nil {
			return
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(40 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	stopAll := func() {
		for _, s := range procs {
			if s.p != nil {
				_ = s.p.cmd.Process.Signal(syscall.SIGTERM)
			}
		}
		for _, s := range procs {
			stop(s.p)
		}
	}
	startAll := func(nodes []int, pools int) error {
		for _, i := range nodes {
			s, err := d.start(i, pools)
			if err != nil {
				stopAll()
				return err
			}
			procs[i] = s
		}
		return nil
	}
	waitAll := func(nodes []int) error {
		for _, i := range nodes {
			if err := procs[i].wait(sigs); err != nil {
				stopAll()
				return err
			}
		}
		return nil
	}
	first := d.pools
	if have > 0 {
		first = have
	}
	var old []int
	for i := 0; i < first*d.nodes; i++ {
		old = append(old, i)
	}
	fmt.Fprintf(os.Stderr, "cluster demo: starting %d nodes with %d pool(s): %v (logs: %s/nodeI.log)\n", len(old), first, d.args(first), d.root)
	// A new deployment needs every node before it formats: start all,
	// then wait.
	if err := startAll(old, first); err != nil {
		return err
	}
	if err := waitAll(old); err != nil {
		return err
	}
	if first < d.pools {
		fmt.Fprintf(os.Stderr, "cluster demo: rolling expansion to %d pools: %v\n", d.pools, d.args(d.pools))
		var added []int
		for i := first * d.nodes; i < d.pools*d.nodes; i++ {
			added = append(added, i)
		}
		fmt.Fprintf(os.Stderr, "cluster demo: starting the new nodes %d-%d with the whole list; they wait until the expansion is recorded\n", added[0]+1, added[len(added)-1]+1)
		if err := startAll(added, d.pools); err != nil {
			return err
		}
		for _, i := range old {
			fmt.Fprintf(os.Stderr, "cluster demo: restarting node %d with the pool appended\n", i+1)
			stop(procs[i].p)
			if err := startAll([]int{i}, d.pools); err != nil {
				return err
			}
			if err := waitAll([]int{i}); err != nil {
				return err
			}
			if i == old[0] {
				if err := waitAll(added); err != nil {
					return err
				}
			}
		}
		fmt.Fprintln(os.Stderr, "cluster demo: every node runs with the new list; new objects go to the new pool once the consensus leader marks the expansion complete (seconds; its log says \"expansion complete\")")
	}
	for _, s := range procs {
		fmt.Fprintf(os.Stdout, "node %d pid %d endpoint %s\n", s.p.index+1, s.p.cmd.Process.Pid, s.p.endpoint)
	}
	fmt.Fprintln(os.Stderr, "cluster demo: all nodes serve; Ctrl-C stops them.")
	<-sigs
	fmt.Fprintln(os.Stderr, "cluster demo: stopping the nodes")
	stopAll()
	return nil
}
