package migrate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/cluster"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/minioformat"
)

// A node's share of a multi-node MinIO deployment (doc.go, "A node's
// share of a MinIO cluster"): `migrate from-minio http://n{1...4}:9000/d{1...4}`
// runs on every node at once, with the endpoints the MinIO servers had.
// Each run serves its own drives' MinIO metadata to the others on the
// node's address (MinIO's port, free while MinIO is stopped), copies the
// other nodes' metadata (every file but the shard data, which only its
// size stands for) into a staging directory on its first drive, and then
// adopts as a single node would, over all the deployment's drives, the
// other nodes' being the staged copies: every node decides every key
// from the same files by the same rules, so the nodes agree on what is
// adopted and what is refused without talking further, and each writes
// the records and links of its own drives only.

// clusterPrefix is where the migration's calls between nodes go, on the
// node's address, signed with peerauth like the server's internal calls.
const clusterPrefix = "/_shardstore/migrate/v1/"

// stageDirName is the staging directory, under the first local drive's
// .shardstore.sys (a dry run stages in a temporary directory instead).
const stageDirName = "migrate-minio-cluster"

// removingSuffix names the staging directory while it is removed.
const removingSuffix = ".removing"

// clusterRun is this node's part of a multi-node adoption.
type clusterRun struct {
	a    *adopter
	top  cluster.Topology
	self int
	// args are the endpoints as given (one argument per pool, or the
	// pools' drives node by node: cluster.PoolArgs).
	args []string
	// slotPath is each slot's directory here: the local drive, or the
	// staged copy of another node's.
	slotPath  []string
	local     []bool // by slot
	stage     string
	tempStage bool // a dry run's: removed at the end
	hc        *http.Client
	srv       *http.Server
	served    chan error

	mu sync.Mutex
	// packFiles are the staged drives' packs, open while adopting.
	packFiles []*os.File
	// heard are the nodes that said they staged every drive of this
	// node (persisted in stage/heard/ for a real run); a dry run counts
	// dry and real runs' notices, a real run real ones only.
	heard map[int]bool
	// trees are this node's drives' trees as served, each written once
	// and sent to every other node (clustertree.go), by slot.
	trees map[int]*servedTree
}

// isLocal reports whether the drive at position g of a.paths is one of
// this node's (always, outside a cluster adoption).
func (a *adopter) isLocal(g int) bool {
	return a.cl == nil || a.local[g]
}

// clusterRefusalf wraps a refusal of this node's share.
func clusterRefusalf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRefused}, args...)...)
}

// joinCluster parses the endpoints, finds this node among them and
// checks its own drives: present, MinIO drives of one deployment, each
// at the position the endpoints' order gives it. It writes nothing.
func (a *adopter) joinCluster(ctx context.Context) (*clusterRun, error) {
	top, err := cluster.Parse(a.opts.Drives)
	if err != nil {
		return nil, clusterRefusalf("%v", err)
	}
	if top.Scheme != "http" {
		return nil, clusterRefusalf("the endpoints are %s://: adopting a node's share over TLS is not supported yet; give the same endpoints with http:// to the migration (it talks to the other nodes' migrations only, while MinIO is stopped)", top.Scheme)
	}
	addr, chosen := a.opts.Address, a.opts.Address != ""
	if !chosen {
		addr = ":0"
	}
	self, err := top.FindSelf(ctx, addr, chosen)
	if err != nil {
		return nil, clusterRefusalf("%v (say which node this is with --address HOST:PORT)", err)
	}
	if !a.opts.PeerKey.Valid() {
		return nil, clusterRefusalf("no cluster key: the nodes' migrations authenticate each other with the root credentials (MINIO_ROOT_USER and MINIO_ROOT_PASSWORD, or SHARDSTORE_ROOT_*), the same on every node")
	}
	c := &clusterRun{a: a, top: top, self: self, args: a.opts.Drives, slotPath: make([]string, len(top.Drives)), local: make([]bool, len(top.Drives)),
		heard: map[int]bool{}, hc: &http.Client{Timeout: 0}}
	// Each pool's drives carry that pool's format.json (its sets); the
	// pools share the deployment id.
	poolOf, poolOff := slotPools(top)
	var first *minioformat.Format
	firstOf := make([]*minioformat.Format, len(top.Pools))
	for g, d := range top.Drives {
		if d.Node != self {
			continue
		}
		c.local[g], c.slotPath[g] = true, d.Path
		f, err := readMinIOFormat(d.Path)
		if err != nil {
			return nil, clusterRefusalf("drive %s of this node (%s, slot %d): %v: every drive of this node must be present, as MinIO had it", d.Path, top.Nodes[self], g+1, err)
		}
		pi := poolOf[g]
		if first == nil {
			first = f
		}
		if f.DeploymentID != first.DeploymentID {
			return nil, clusterRefusalf("drive %s is of MinIO deployment %s, drive %s of %s", d.Path, f.DeploymentID, c.localPaths()[0], first.DeploymentID)
		}
		if firstOf[pi] == nil {
			firstOf[pi] = f
		}
		if err := firstOf[pi].SameDeployment(f); err != nil {
			return nil, clusterRefusalf("drive %s: %v", d.Path, err)
		}
		if total := len(f.Sets) * f.SetDriveCount(); total != top.Pools[pi] {
			if len(top.Pools) == 1 {
				return nil, clusterRefusalf("the MinIO deployment has %d drives (%d erasure sets of %d) but the endpoints name %d: give the endpoints the MinIO servers had (a deployment of several server pools: one argument per pool, http://node{1...N}:PORT/pool1/d{1...M} http://node{1...N}:PORT/pool2/d{1...M})",
					total, len(f.Sets), f.SetDriveCount(), len(top.Drives))
			}
			return nil, clusterRefusalf("drive %s is in a MinIO server pool of %d drives (%d erasure sets of %d) but the endpoints make it a drive of pool %d, of %d drives: give the endpoints the MinIO servers had, one argument per pool",
				d.Path, total, len(f.Sets), f.SetDriveCount(), pi+1, top.Pools[pi])
		}
		set, pos, err := f.Position()
		if err != nil {
			return nil, clusterRefusalf("drive %s: %v", d.Path, err)
		}
		if got := set*f.SetDriveCount() + pos; got != g-poolOff[pi] {
			return nil, clusterRefusalf("drive %s is position %d of MinIO's erasure set %d (drive %d of its pool) but the endpoints make it drive %d: "+
				"give the endpoints in the order the MinIO servers had them (shardstore's cluster takes drive k of every node in turn, as MinIO's http://node{1...N}:PORT/path{1...M} does)",
				d.Path, pos+1, set+1, got+1, g-poolOff[pi]+1)
		}
	}
	if first == nil {
		return nil, clusterRefusalf("node %s has no drives", top.Nodes[self])
	}
	return c, nil
}

// slotPools gives each slot's pool (0-based) and each pool's first slot.
func slotPools(top cluster.Topology) (poolOf []int, off []int) {
	counts := top.Pools
	if len(counts) == 0 {
		counts = []int{len(top.Drives)}
	}
	poolOf = make([]int, len(top.Drives))
	at := 0
	for pi, n := range counts {
		off = append(off, at)
		for g := at; g < at+n && g < len(poolOf); g++ {
			poolOf[g] = pi
		}
		at += n
	}
	return poolOf, off
}

// readMinIOFormat reads a drive's .minio.sys/format.json.
func readMinIOFormat(dir string) (*minioformat.Format, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, fmt.Errorf("missing: %w", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, minioSys, "format.json"))
	if err != nil {
		return nil, fmt.Errorf("no MinIO format: %w", err)
	}
	return minioformat.ParseFormat(raw)
}

// localPaths are this node's drives, in slot order.
func (c *clusterRun) localPaths() []string {
	var out []string
	for g, l := range c.local {
		if l {
			out = append(out, c.slotPath[g])
		}
	}
	return out
}

// fromCluster adopts this node's share (or, with Finish, finishes it).
func (a *adopter) fromCluster(ctx context.Context) (*Report, error) {
	c, err := a.joinCluster(ctx)
	if err != nil {
		return nil, err
	}
	out := a.opts.Out
	fmt.Fprintf(out, "node %d of %d (%s): drives %s\n", c.self+1, len(c.top.Nodes), c.top.Nodes[c.self], strings.Join(c.localPaths(), " "))
	if a.opts.Finish {
		// Only this node's drives: each node removes MinIO's names of
		// what it adopted on its own.
		a.opts.Drives = c.localPaths()
		a.paths = a.opts.Drives
		f, err := readMinIOFormat(a.paths[0])
		if err != nil {
			return nil, clusterRefusalf("%v", err)
		}
		a.format = f
		return a.finish(ctx)
	}
	if c.stage, c.tempStage, err = c.stageDir(ctx); err != nil {
		return nil, err
	}
	if c.stage == "" {
		fmt.Fprintln(out, "this node's share is already adopted and every node had its copy of this node's metadata: nothing done")
		return &a.rep, nil
	}
	if c.tempStage {
		defer os.RemoveAll(c.stage)
	}
	if err := c.loadHeard(); err != nil {
		return nil, err
	}
	if err := c.serve(); err != nil {
		return nil, err
	}
	defer c.stop()
	defer c.closePacks()
	if err := c.stageAll(ctx); err != nil {
		return nil, err
	}
	notified := make(chan error, 1)
	go func() { notified <- c.notifyAll(ctx) }()

	a.cl = c
	a.opts.Drives = c.slotPath
	a.local = c.local
	groups := cluster.PoolArgs(c.args)
	var rep *Report
	if len(c.top.Pools) > 1 {
		// Several server pools (pools.go): each adopted over its own
		// slots, local and staged, with the checks that span them.
		_, off := slotPools(c.top)
		a.opts.Pools, a.opts.PoolArgs = nil, nil
		for pi, n := range c.top.Pools {
			a.opts.Pools = append(a.opts.Pools, c.slotPath[off[pi]:off[pi]+n])
			a.opts.PoolArgs = append(a.opts.PoolArgs, strings.Join(groups[pi], " "))
		}
		rep, err = a.fromPools(ctx)
	} else {
		a.opts.PoolArgs = []string{strings.Join(c.args, " ")}
		rep, err = a.adopt(ctx)
	}
	if errors.Is(err, ErrRefused) {
		// Every node refuses alike, from the same files, but not at the
		// same moment: stay until every other node has copied this
		// node's drives, so that their runs reach the same refusal
		// rather than wait for ever for this one.
		if nerr := <-notified; nerr == nil && c.waitHeard(ctx) == nil {
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
			}
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	// Stay until every other node has its copy of this node's drives
	// (it may need them after a crash) and knows this node has its own.
	if err := <-notified; err != nil {
		return nil, err
	}
	waited := time.Now()
	if err := c.waitHeard(ctx); err != nil {
		return nil, err
	}
	if d := time.Since(waited); d >= time.Second {
		fmt.Fprintf(out, "waited %s for the other nodes to copy this node's metadata\n", d.Round(time.Millisecond))
	}
	// A node that exits as soon as it heard the last notice might leave
	// that notice's sender retrying (its answer lost): answer a little
	// longer than the senders' retry interval.
	select {
	case <-time.After(time.Second):
	case <-ctx.Done():
	}
	c.closePacks()
	if !c.tempStage {
		// Renamed away first: a run killed while removing must not find a
		// staging directory whose notices are half gone (it would wait
		// for notices nobody sends again).
		start := time.Now()
		trash := c.stage + removingSuffix
		if err := os.Rename(c.stage, trash); err != nil {
			return nil, fmt.Errorf("migrate: remove the staged copies %s: %w", c.stage, err)
		}
		if err := os.RemoveAll(trash); err != nil {
			return nil, fmt.Errorf("migrate: remove the staged copies %s: %w", c.stage, err)
		}
		fmt.Fprintf(out, "every node has its copy of this node's metadata; removed the staged copies of the other nodes' (%s) in %s\n",
			c.stage, time.Since(start).Round(time.Millisecond))
	}
	return rep, nil
}

// checkClusterOrder refuses when a staged drive's MinIO position is not
// its slot (run after orderDrives, before anything is written).
func (a *adopter) checkClusterOrder() error {
	c := a.cl
	off := a.slotOff
	for g, p := range a.paths {
		if p != c.slotPath[off+g] {
			for s, q := range c.slotPath {
				if q == p {
					return clusterRefusalf("drive %s is drive %d of the MinIO deployment's pool by its format.json but the endpoints make it drive %d: give the endpoints in the order the MinIO servers had them",
						c.top.Endpoint(s), g+1, s-off+1)
				}
			}
		}
	}
	a.local = c.local[off : off+len(a.paths)]
	return nil
}

// stageDir returns the staging directory, made if needed: on the first
// local drive for a real run ("" when the share is adopted and the
// directory is gone: nothing left to do), a temporary one for a dry run.
func (c *clusterRun) stageDir(ctx context.Context) (string, bool, error) {
	if c.a.opts.DryRun {
		d, err := os.MkdirTemp("", "shardstore-migrate-stage-")
		return d, true, err
	}
	first := c.localPaths()[0]
	dir := filepath.Join(first, ".shardstore.sys", stageDirName)
	if err := os.RemoveAll(dir + removingSuffix); err != nil { // a removal cut short
		return "", false, fmt.Errorf("migrate: staging directory: %w", err)
	}
	if _, err := os.Stat(dir); err != nil {
		st, err := c.localState(ctx)
		if err != nil {
			return "", false, err
		}
		if st == stateAdopted || st == stateFinished {
			return "", false, nil
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "heard"), 0o755); err != nil {
		return "", false, fmt.Errorf("migrate: staging directory: %w", err)
	}
	return dir, false, nil
}

// localState reads the adoption state of this node's drives, as the
// single-node adoption does, without formatting anything.
func (c *clusterRun) localState(ctx context.Context) (string, error) {
	votes := map[string]int{}
	for _, p := range c.localPaths() {
		if _, err := os.Stat(filepath.Join(p, ".shardstore.sys")); err != nil {
			continue
		}
		d, err := drive.OpenLocal(p, drive.LocalOptions{Beside: true, NoCreate: true, NoSync: c.a.opts.NoSync})
		if err != nil {
			return "", fmt.Errorf("migrate: open drive %s: %w", p, err)
		}
		v, err := d.Get(ctx, drive.TableSystem, stateKey)
		d.Close()
		if err == nil {
			votes[string(v)]++
		}
	}
	if votes[stateAdopting] > 0 {
		return stateAdopting, nil
	}
	best := ""
	for s, n := range votes {
		if n > votes[best] {
			best = s
		}
	}
	return best, nil
}

// loadHeard reads the notices a real run received before a crash.
func (c *clusterRun) loadHeard() error {
	if c.tempStage {
		return nil
	}
	ents, err := os.ReadDir(filepath.Join(c.stage, "heard"))
	if err != nil {
		return fmt.Errorf("migrate: staging directory: %w", err)
	}
	for _, e := range ents {
		var n int
		if _, err := fmt.Sscanf(e.Name(), "node%d", &n); err == nil && n >= 1 && n <= len(c.top.Nodes) {
			c.heard[n-1] = true
		}
	}
	return nil
}

// waitHeard waits until every other node said it staged this node's
// drives, saying once in a while which ones it waits for.
func (c *clusterRun) waitHeard(ctx context.Context) error {
	last := time.Time{}
	for {
		var missing []string
		c.mu.Lock()
		for n := range c.top.Nodes {
			if n != c.self && !c.heard[n] {
				missing = append(missing, c.top.Nodes[n])
			}
		}
		c.mu.Unlock()
		if len(missing) == 0 {
			return nil
		}
		if time.Since(last) >= 10*time.Second {
			last = time.Now()
			fmt.Fprintf(c.a.opts.Out, "waiting for the migrations of %s to copy this node's metadata (run `shardstore migrate from-minio` with the same endpoints there)\n", strings.Join(missing, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-c.served:
			return fmt.Errorf("migrate: serving the other nodes: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// serve listens on this node's address and answers the other nodes'
// migrations (clusterHandler).
func (c *clusterRun) serve() error {
	addr := c.a.opts.Address
	if addr == "" {
		addr = c.top.Host(c.self)
		if _, port, err := net.SplitHostPort(addr); err == nil {
			addr = ":" + port
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("migrate: listen on %s for the other nodes (is MinIO, or shardstore, still running on this node?): %w", addr, err)
	}
	c.srv = &http.Server{Handler: http.HandlerFunc(c.handle), ReadHeaderTimeout: 30 * time.Second}
	c.served = make(chan error, 1)
	go func() { c.served <- c.srv.Serve(ln) }()
	return nil
}

func (c *clusterRun) stop() {
	if c.srv != nil {
		c.srv.Close()
	}
}

// peerNodes are the other nodes, in order.
func (c *clusterRun) peerNodes() []int {
	var out []int
	for n := range c.top.Nodes {
		if n != c.self {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}
