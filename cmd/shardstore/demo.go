package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shardstore/shardstore/internal/certs"
	"github.com/shardstore/shardstore/internal/cli"
)

const clusterUsage = "shardstore cluster demo [--nodes N] [--drives D] [--pools N] [--new-nodes] [--dir DIR] [--base-port P] [--tls]"

// runCluster dispatches `shardstore cluster SUBCOMMAND`.
func runCluster(args []string) error {
	if len(args) == 0 || args[0] != "demo" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintf(os.Stderr, "usage: %s\n\nStarts a cluster of node processes on this machine (loopback) for trying it out and for tests.\n", clusterUsage)
			return flag.ErrHelp
		}
		return cli.Usagef(clusterUsage, "shardstore cluster demo -h", "unknown cluster command: want demo")
	}
	return runClusterDemo(args[1:])
}

// demoNode is one node process of the demo.
type demoNode struct {
	index    int
	cmd      *exec.Cmd
	endpoint string
	log      string
	exited   chan error
}

// runClusterDemo starts N node processes on loopback, each with D drives
// under DIR/nodeI, prints one line per node once all serve and stops
// them all on a signal. A killed node is a node crash: the others keep
// running. Starting it again on the same DIR brings the same cluster back.
func runClusterDemo(args []string) error {
	fs := flag.NewFlagSet("cluster demo", flag.ContinueOnError)
	nodes := fs.Int("nodes", 4, "node processes to start")
	drives := fs.Int("drives", 4, "drives per node (of each pool)")
	pools := fs.Int("pools", 1, "server pools, each of --drives drives on every node (docs/pools.md): started again on its --dir with more pools, the demo is expanded; with fewer, the last pools are removed (decommission them first: admin pool decommission start N)")
	dir := fs.String("dir", "./data/cluster", "`DIR` holding every node's drives (DIR/nodeI/dJ) and logs (DIR/nodeI.log)")
	basePort := fs.Int("base-port", 9000, "node I listens on 127.0.0.1:(base-port+I-1)")
	parity := fs.Int("parity", 0, "parity shards per object (passed to every node)")
	setSize := fs.Int("set-size", 0, "drives per erasure set (passed to every node)")
	console := fs.String("console-address", "", "`HOST:PORT` for node 1's web console (\"\" = none)")
	newNodes := fs.Bool("new-nodes", false, "put each pool on --nodes nodes of its own (node I on 127.0.0.I:base-port, drives under DIR/nodeI; Linux): started again on its --dir with more pools, the demo rehearses a rolling expansion (new nodes started, existing nodes restarted one at a time)")
	useTLS := fs.Bool("tls", false, "run the nodes over TLS: a throwaway CA is made in DIR/ca (kept for later starts) and each node gets a certificate for 127.0.0.1 and localhost in DIR/nodeI/certs")
	head := fmt.Sprintf("usage: %s\n\nStarts a cluster of node processes on this machine (loopback), prints\n"+
		"'node I pid PID endpoint URL' per node once all serve, and stops them all\n"+
		"on Ctrl-C or SIGTERM. Root credentials come from the environment as for\n"+
		"`shardstore server`.", clusterUsage)
	if err := cli.Parse(fs, args, os.Stderr, clusterUsage, head); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef(clusterUsage, "shardstore cluster demo -h", "unexpected argument %q", fs.Arg(0))
	}
	if *nodes < 2 || *drives < 1 || *nodes**drives < 2 {
		return cli.Usagef(clusterUsage, "shardstore cluster demo -h", "want at least 2 nodes and 1 drive per node")
	}
	if *pools < 1 || *pools > 16 {
		return cli.Usagef(clusterUsage, "shardstore cluster demo -h", "want 1 to 16 pools")
	}
	if *basePort < 1 || *basePort+*nodes-1 > 65535 {
		return cli.Usagef(clusterUsage, "shardstore cluster demo -h", "bad --base-port %d", *basePort)
	}
	root, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(root, 0o750); err != nil {
		return fmt.Errorf("cluster demo: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cluster demo: find own binary: %w", err)
	}
	if *newNodes {
		if *useTLS {
			return cli.Usagef(clusterUsage, "shardstore cluster demo -h", "--new-nodes runs without --tls (its certificates name 127.0.0.1 only)")
		}
		d := newNodesDemo{nodes: *nodes, drives: *drives, pools: *pools, port: *basePort, root: root, exe: exe, console: *console}
		if *parity > 0 {
			d.extra = append(d.extra, "--parity", strconv.Itoa(*parity))
		}
		if *setSize > 0 {
			d.extra = append(d.extra, "--set-size", strconv.Itoa(*setSize))
		}
		return runNewNodesDemo(d)
	}
	// The same endpoint list for every node; on one machine each node's
	// drives are under its own directory.
	scheme := "http"
	if *useTLS {
		scheme = "https"
		caFile, err := demoCertificates(root, *nodes)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "cluster demo: TLS with the throwaway CA %s: give it to clients (aws --ca-bundle %s, SSL_CERT_FILE=%s, shardstore admin --ca-cert %s)\n", caFile, caFile, caFile, caFile)
	}
	// Pool 1 is DIR/nodeI/dJ, pool P > 1 DIR/nodeI/poolP/dJ: written node
	// by node, each pool names every node again (cluster.Parse). The
	// directories of pools after the first are made here, empty: a
	// running deployment formats only existing empty directories as a
	// new pool.
	var endpoints []string
	for p := 1; p <= *pools; p++ {
		for i := 0; i < *nodes; i++ {
			dir := filepath.Join(root, fmt.Sprintf("node%d", i+1))
			if p > 1 {
				dir = filepath.Join(dir, fmt.Sprintf("pool%d", p))
				for j := 1; j <= *drives; j++ {
					if err := os.MkdirAll(filepath.Join(dir, fmt.Sprintf("d%d", j)), 0o750); err != nil {
						return fmt.Errorf("cluster demo: %w", err)
					}
				}
			}
			endpoints = append(endpoints, fmt.Sprintf("%s://127.0.0.1:%d%s/d{1...%d}", scheme, *basePort+i, dir, *drives))
		}
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)

	var procs []*demoNode
	stopAll := func() {
		for _, p := range procs {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range procs {
			select {
			case <-p.exited:
			case <-time.After(40 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
	}
	ready := make(chan *demoNode, *nodes)
	failed := make(chan error, *nodes)
	for i := 0; i < *nodes; i++ {
		args := []string{"server", "--address", "127.0.0.1:" + strconv.Itoa(*basePort+i), "--allow-root-drives"}
		cons := ""
		if i == 0 {
			cons = *console
		}
		args = append(args, "--console-address", cons)
		if *useTLS {
			args = append(args, "--certs-dir", filepath.Join(root, fmt.Sprintf("node%d", i+1), "certs"))
		}
		if *parity > 0 {
			args = append(args, "--parity", strconv.Itoa(*parity))
		}
		if *setSize > 0 {
			args = append(args, "--set-size", strconv.Itoa(*setSize))
		}
		args = append(args, endpoints...)
		p, err := startDemoNode(exe, args, i, filepath.Join(root, fmt.Sprintf("node%d.log", i+1)), ready, failed)
		if err != nil {
			stopAll()
			return err
		}
		procs = append(procs, p)
	}
	fmt.Fprintf(os.Stderr, "cluster demo: started %d nodes x %d drives x %d pools under %s; waiting for all to serve (logs: %s/nodeI.log)\n", *nodes, *drives, *pools, root, root)
	up := 0
	for up < *nodes {
		select {
		case <-ready:
			up++
		case err := <-failed:
			stopAll()
			return err
		case sig := <-sigs:
			fmt.Fprintf(os.Stderr, "cluster demo: %v: stopping the nodes\n", sig)
			stopAll()
			return nil
		}
	}
	for _, p := range procs {
		fmt.Fprintf(os.Stdout, "node %d pid %d endpoint %s\n", p.index+1, p.cmd.Process.Pid, p.endpoint)
	}
	fmt.Fprintln(os.Stderr, "cluster demo: all nodes serve; Ctrl-C stops them. Killing a node's pid is a node crash; the others keep serving.")
	// Report nodes that die; keep running until told to stop.
	exits := make(chan *demoNode, *nodes)
	for _, p := range procs {
		go func() {
			<-p.exited
			exits <- p
		}()
	}
	running := *nodes
	for {
		select {
		case p := <-exits:
			running--
			fmt.Fprintf(os.Stderr, "cluster demo: node %d (pid %d) exited: %v; %d nodes still running\n", p.index+1, p.cmd.Process.Pid, p.cmd.ProcessState, running)
			if running == 0 {
				return errors.New("cluster demo: every node has exited")
			}
		case sig := <-sigs:
			fmt.Fprintf(os.Stderr, "cluster demo: %v: stopping the nodes\n", sig)
			stopAll()
			return nil
		}
	}
}

// demoCertificates makes (or reuses) the demo's CA in root/ca and gives
// every node a certificates directory root/nodeI/certs with a fresh
// certificate for 127.0.0.1 and localhost and the CA in CAs/. It returns
// the CA certificate's path.
func demoCertificates(root string, nodes int) (string, error) {
	caDir := filepath.Join(root, "ca")
	caFile, keyFile := filepath.Join(caDir, "ca.crt"), filepath.Join(caDir, "ca.key")
	ca, err := certs.LoadCA(caFile, keyFile)
	if errors.Is(err, fs.ErrNotExist) {
		if ca, err = certs.NewCA("shardstore cluster demo CA", demoCertValidity); err == nil {
			if err = os.MkdirAll(caDir, 0o700); err == nil {
				err = ca.WriteFiles(caFile, keyFile)
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("cluster demo: CA in %s: %w", caDir, err)
	}
	for i := 1; i <= nodes; i++ {
		dir := filepath.Join(root, fmt.Sprintf("node%d", i), "certs")
		if err := ca.WriteCertsDir(dir, []string{"127.0.0.1", "localhost", "::1"}, demoCertValidity); err != nil {
			return "", fmt.Errorf("cluster demo: certificate of node %d: %w", i, err)
		}
	}
	return caFile, nil
}

// demoCertValidity is how long the demo's CA and certificates are valid.
const demoCertValidity = 365 * 24 * time.Hour

// startDemoNode starts one node, logging its stderr to logPath, and
// reports it on ready once it prints its endpoint (or on failed if it
// exits first).
func startDemoNode(exe string, args []string, i int, logPath string, ready chan<- *demoNode, failed chan<- error) (*demoNode, error) {
	return startDemoNodeIn("", exe, args, i, logPath, ready, failed)
}

// startDemoNodeIn is startDemoNode with the node's working directory dir
// ("": the demo's).
func startDemoNodeIn(dir, exe string, args []string, i int, logPath string, ready chan<- *demoNode, failed chan<- error) (*demoNode, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("cluster demo: %w", err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Stderr = logf
	// The nodes die with the demo, even when it is killed with -9.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("cluster demo: start node %d: %w", i+1, err)
	}
	p := &demoNode{index: i, cmd: cmd, log: logPath, exited: make(chan error, 1)}
	var once sync.Once
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if ep, ok := strings.CutPrefix(line, "S3 endpoint: "); ok {
				p.endpoint = ep
				once.Do(func() { ready <- p })
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() {
		err := cmd.Wait()
		logf.Close()
		once.Do(func() {
			failed <- fmt.Errorf("cluster demo: node %d exited before serving (%v); its log is %s:\n%s", i+1, err, logPath, tail(logPath, 20))
		})
		p.exited <- err
		close(p.exited)
	}()
	return p, nil
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}
