package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/certs"
	"github.com/shardstore/shardstore/internal/cluster"
	"github.com/shardstore/shardstore/internal/consensus"
	"github.com/shardstore/shardstore/internal/dlock"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/drivefault"
	"github.com/shardstore/shardstore/internal/driverpc"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/peerauth"
	"github.com/shardstore/shardstore/internal/release"
	"github.com/shardstore/shardstore/internal/s3api"
)

// clusterNode is this process's part of a cluster: its local drives,
// served to the other nodes over the S3 port under /_shardstore/ (signed
// with the cluster key, never reachable with S3 credentials), the remote
// drives of the other nodes, the lock service and the peer calls. It
// listens before the engine opens, because the engine needs the other
// nodes' drives and they need this node's.
type clusterNode struct {
	top    cluster.Topology
	self   int
	key    peerauth.Key
	log    *slog.Logger
	hc     *http.Client
	dial   func(ctx context.Context, network, addr string) (net.Conn, error) // to other nodes (routes applied, TLS done)
	hello  cluster.Hello
	peers  *cluster.Peers
	peerSv *cluster.PeerServer
	table  *dlock.Table
	locker *dlock.Locker
	// state is the node's member of the consensus group that keeps
	// bucket records and config documents; onState is what a change
	// applied on this node does (set once the engine is open).
	state   *consensus.Node
	onState atomic.Pointer[func(space, key string)]

	drives     []drive.Drive // every slot, Health-wrapped
	healths    []*drive.Health
	indexCache *drive.IndexCache
	// sharedSync is the local drives' sync group, for the engine (and
	// through it the notification queues beside the drives).
	sharedSync *drive.SharedSync
	// fresh is set for a new deployment: no local drive is formatted
	// and no other node's is (DeploymentExists). It waits for every node
	// before formatting, creates missing drive directories and grants
	// locks at once.
	fresh bool
	// grantsFrom is when a restarted node's lock table grants again.
	grantsFrom time.Time

	ln   net.Listener
	http *http.Server
	s3   atomic.Pointer[http.Handler]
	// internal serves the signed calls of other nodes: only hello until
	// the drives, locks and consensus member are open.
	internal atomic.Pointer[http.Handler]
	served   chan error

	// Rolling upgrades (upgrade.go): stamper stamps this node's calls,
	// guard checks the calls of others; gates are the active features as
	// last read, and gatesDone stops the gate rounds.
	stamper   *release.Stamper
	guard     http.Handler
	gates     atomic.Pointer[release.Gates]
	gatesDone chan struct{}
	gatesOnce sync.Once
	// stderr gets the lines an operator reads (start, stop).
	stderr io.Writer
	// exp is the node's part in the recorded pool list and in rolling
	// expansions (expand.go).
	exp expansion
	// locks follows the recorded lock nodes (locknodes.go).
	locks lockMover
}

// clusterLockTTL is how long a node keeps a lock it granted without
// hearing from the holder. The engine holds object locks for a commit
// (milliseconds), so a short lease costs few refreshes and lets the
// locks of a crashed node go soon; a restarted node grants nothing for
// this long.
const clusterLockTTL = 10 * time.Second

// newLogVoteDelay is how long a node whose consensus log is new, in a
// deployment that exists, waits before it takes part in elections (see
// openState): several election timeouts and raft's RPC timeout.
const newLogVoteDelay = 10 * time.Second

// clusterStartWait bounds how long a node waits for the other nodes at
// start before giving up (a new deployment needs all of them).
const clusterStartWait = 10 * time.Minute

// handOffWait bounds the leadership transfer of a stopping node.
const handOffWait = 10 * time.Second

// openClusterNode parses the endpoints, finds this node, opens its local
// drives and starts serving them (and the lock and peer calls) on its
// address; S3 requests get 503 until ready is called.
func openClusterNode(o serverOptions, creds rootCreds, store *certs.Store, logger *slog.Logger, stderr io.Writer) (*clusterNode, error) {
	top, err := cluster.Parse(o.drives)
	if err != nil {
		return nil, err
	}
	switch {
	case top.Scheme == "https" && !store.HasCertificate():
		return nil, fmt.Errorf("cluster: the endpoints are https:// but the certificates directory %s holds no %s and %s: give this node its certificate (--certs-dir), or write http:// endpoints on every node", store.Dir(), certs.PublicCert, certs.PrivateKey)
	case top.Scheme == "http" && store.HasCertificate():
		return nil, fmt.Errorf("cluster: this node has a certificate in %s but the endpoints are http://: write https:// endpoints on every node (nodes of a deployment all speak TLS or none does), or start it with another --certs-dir", store.Dir())
	}
	ctx := context.Background()
	self, err := top.FindSelf(ctx, o.address, o.addressChosen)
	if err != nil {
		return nil, err
	}
	address := o.address
	if !o.addressChosen {
		_, port, _ := strings.Cut(top.Host(self), ":")
		address = ":" + port
	}
	routes, err := cluster.ParseRoutes(os.Getenv(cluster.RoutesEnv))
	if err != nil {
		return nil, err
	}
	if len(routes) > 0 {
		logger.Warn("connections to other nodes are routed through other addresses", "env", cluster.RoutesEnv, "routes", len(routes))
	}
	// Connections to other nodes: routed where SHARDSTORE_PEER_ROUTES
	// says, and over TLS (verified against the certificates directory's
	// authorities and the system's) when the endpoints are https://.
	dial := routes.Dialer(driverpc.PeerDialer())
	var dialTLS certs.DialFunc
	peerDial := dial
	if top.Scheme == "https" {
		dialTLS = store.DialTLS(dial)
		peerDial = dialTLS
	}
	n := &clusterNode{top: top, self: self, key: peerauth.Derive(creds.user, creds.pass), log: logger,
		hc: driverpc.NewHTTPClient(dial, dialTLS), dial: peerDial, served: make(chan error, 1), gatesDone: make(chan struct{}), stderr: stderr}
	// The node's requests name it, so a peer that restarted learns this
	// run and takes its requests whatever the clocks say (peerauth, S1).
	n.key.SetSelf(top.Host(self))
	n.stamper = release.NewStamper(n.hc.Transport, releaseName(), n.activeFeatures, logger.With("component", "release"))
	n.hc.Transport = n.stamper
	n.hello = cluster.HelloFor(top, self, o.setSize, o.parity, releaseName())
	n.exp.readd = o.readdRemoved

	var localPaths []string
	for _, d := range top.Drives {
		if d.Node == self {
			localPaths = append(localPaths, d.Path)
		}
	}
	allowRoot := o.allowRoot || envTrue(os.Getenv("SHARDSTORE_ALLOW_ROOT_DRIVES"))
	if err := checkPlacement(stderr, localPaths, "/", allowRoot, false); err != nil {
		return nil, err
	}
	var others []string
	for i, u := range top.Nodes {
		if i != self {
			others = append(others, u)
		}
	}
	n.peers = cluster.NewPeers(n.key, n.hc, others, logger.With("component", "cluster"))
	n.hello.Deployment = n.localDeployment()
	n.hello.Group = n.hasConsensusLog()
	starting := n.hello
	starting.Starting = true
	n.peerSv = cluster.NewPeerServer(n.key, starting)

	// Listen first, answering hello only: a node whose drives are all
	// blank or missing asks the others whether the deployment exists
	// before it creates a drive directory or grants a lock, and the
	// others may be asking the same of it.
	early := http.NewServeMux()
	early.Handle(cluster.PathPrefix, n.peerSv)
	early.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "this node is starting: its drives are not open yet", http.StatusServiceUnavailable)
	})
	n.setInternal(early)
	n.ln, err = net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", address, err)
	}
	ln := serveListener(n.ln, store)
	n.http = &http.Server{
		Handler: n.route(),
		// The S3 endpoint's bound, as on a single server: peer calls
		// carry small headers.
		MaxHeaderBytes:    s3api.DefaultMaxHeaderBytes,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	go func() {
		err := n.http.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		n.served <- err
	}()
	if n.hello.Deployment == "" {
		fmt.Fprintf(stderr, "Cluster: none of this node's drives is formatted; asking the other nodes whether the deployment exists\n")
		wctx, cancel := context.WithTimeout(ctx, clusterStartWait)
		exists, err := n.peers.DeploymentExists(wctx, func(waiting []string) {
			fmt.Fprintf(stderr, "Cluster: still waiting for %s\n", strings.Join(waiting, ", "))
		})
		cancel()
		if err != nil {
			n.close()
			return nil, fmt.Errorf("cluster: cannot tell whether this deployment exists (this node's drives are all blank or missing): %w", err)
		}
		n.fresh = !exists
	}
	if err := n.openDrives(o); err != nil {
		n.close()
		return nil, err
	}

	// A table that may have granted leases in an earlier run pauses
	// for one lease time before granting again; a new deployment has
	// granted none.
	quiet := time.Duration(0)
	if n.fresh {
		quiet = -1
	} else {
		n.grantsFrom = time.Now().Add(clusterLockTTL)
	}
	n.table = dlock.NewTable(dlock.TableOptions{MaxTTL: clusterLockTTL, Quiet: quiet})
	// The lock client is made once the pool list is known (openEngine):
	// its lock nodes are recorded there.

	if !n.fresh && !n.hello.Group {
		jctx, cancel := context.WithTimeout(ctx, clusterStartWait)
		n.exp.join, err = n.decideJoin(jctx, stderr)
		cancel()
		if err != nil {
			n.close()
			return nil, err
		}
	}
	if err := n.openState(logger, stderr); err != nil {
		n.close()
		return nil, err
	}

	locals := map[int]drive.Drive{}
	for i, d := range top.Drives {
		if d.Node == self {
			locals[i] = n.drives[i]
		}
	}
	internal := http.NewServeMux()
	drivePaths := map[int]string{}
	for i := range locals {
		drivePaths[i] = top.Drives[i].Path
	}
	internal.Handle(driverpc.PathPrefix, driverpc.NewServer(locals, n.key, logger.With("component", "driverpc")).WithPaths(drivePaths))
	internal.Handle(dlock.PathPrefix, dlock.NewServer(n.table, n.key))
	internal.Handle(cluster.PathPrefix, n.peerSv)
	internal.Handle(consensus.PathPrefix, n.state.Handler())
	n.setInternal(internal)
	n.peerSv.SetGroup()
	n.peerSv.SetOpen()
	return n, nil
}

func (n *clusterNode) setInternal(h http.Handler) { n.internal.Store(&h) }

// localDeployment is the deployment id of the first formatted local
// drive, "" when none is.
func (n *clusterNode) localDeployment() string {
	for _, d := range n.top.Drives {
		if d.Node != n.self {
			continue
		}
		if f, err := drive.PeekFormat(d.Path); err == nil && f.DeploymentID != "" {
			return f.DeploymentID
		}
	}
	return ""
}

// openDrives opens the local drives (Health-wrapped, sharing one index
// cache) and a remote client for every other node's drive.
func (n *clusterNode) openDrives(o serverOptions) error {
	for _, d := range n.top.Drives {
		if d.Node != n.self {
			continue
		}
		if _, err := drive.PeekFormat(d.Path); errors.Is(err, drive.ErrOldLayout) || errors.Is(err, drive.ErrNewerLayout) {
			return fmt.Errorf("drive %s: %w", d.Path, err)
		}
	}
	n.indexCache = drive.NewIndexCache(int64(o.indexCache))
	shared := drive.NewSharedSync()
	n.sharedSync = shared
	hcfg := drive.HealthConfig{OpTimeout: o.driveTimeout, Logger: n.log.With("component", "drive")}
	for i, d := range n.top.Drives {
		var inner drive.Drive
		if d.Node == n.self {
			if n.fresh {
				// A new deployment creates its drive directories; an
				// existing one never does (a missing one is a disk that
				// did not mount).
				if err := os.MkdirAll(d.Path, 0o750); err != nil {
					return fmt.Errorf("create drive directory %s: %w", d.Path, err)
				}
			}
			l, err := drive.OpenLocal(d.Path, drive.LocalOptions{Cache: n.indexCache, SharedSync: shared, NoCreate: !n.fresh, Name: n.top.Endpoint(i)})
			if err != nil {
				return fmt.Errorf("drive %s: %w", d.Path, err)
			}
			// A testhooks build may make it slow or failing
			// (internal/drivefault); a release build returns l.
			inner = drivefault.Wrap(l, n.log.With("component", "drive"))
		} else {
			// By path too: slots shift while the first pool is removed.
			inner = driverpc.NewClient(n.top.Nodes[d.Node], i, n.top.Endpoint(i), n.key, n.hc).WithPath(d.Path)
		}
		h := drive.NewHealth(inner, hcfg)
		n.healths = append(n.healths, h)
		n.drives = append(n.drives, h)
	}
	return nil
}

// openState starts this node's member of the consensus group, its log
// on one of the node's drives: the first that already holds one, else the
// first formatted one, else the first present (a new deployment).
func (n *clusterNode) openState(logger *slog.Logger, stderr io.Writer) error {
	var members []consensus.Member
	for i := range n.top.Nodes {
		members = append(members, consensus.Member{ID: n.top.ID(i), Address: n.top.Host(i)})
	}
	var withLog, logDirs []string
	var formatted, present string
	for _, d := range n.top.Drives {
		if d.Node != n.self {
			continue
		}
		dir := drive.ClusterStateDir(d.Path)
		if fi, err := os.Stat(filepath.Join(dir, "raft.db")); err == nil {
			withLog = append(withLog, fmt.Sprintf("%s (last written %s)", dir, fi.ModTime().UTC().Format(time.RFC3339)))
			logDirs = append(logDirs, dir)
		}
		if _, err := drive.PeekFormat(d.Path); err == nil && formatted == "" {
			formatted = dir
		}
		if _, err := os.Stat(d.Path); err == nil && present == "" {
			present = dir
		}
	}
	var dir string
	switch {
	case len(withLog) > 1:
		// A drive that was away while the node started a new log on
		// another has come back: one of the two is stale, and taking
		// either silently could roll back what this node acknowledged.
		return fmt.Errorf("cluster: this node's consensus log is on more than one drive: %s; keep the newest, remove the other's %s directory, and start again",
			strings.Join(withLog, ", "), filepath.Join(".shardstore.sys", "cluster"))
	case len(withLog) == 1:
		dir = logDirs[0]
	default:
		dir = cmp.Or(formatted, present)
		if dir == "" {
			return fmt.Errorf("cluster: every drive directory of this node is missing (disks that did not mount?) and the deployment exists, so this node does not start: nothing is written to the filesystem beneath them. Mount the drives and start again; to replace them, create the empty directories (they are adopted and healed)")
		}
		if !n.fresh {
			// A deployment from before the consensus group, or a node
			// whose log drive was lost or replaced: it starts with an
			// empty log and is brought up to date by the leader. It has
			// also forgotten its votes: if it voted in an election that
			// is still running, voting again in that term could elect a
			// second leader. Elections end within a few election
			// timeouts and vote requests die with their RPC timeouts, so
			// it joins the vote only after that long.
			logger.Warn("no consensus log on this node's drives: starting a new one; the leader brings it up to date", "dir", dir)
			fmt.Fprintf(stderr, "Cluster: this node's consensus log is new in an existing deployment; it joins the votes in %v, once any election it may have voted in has ended\n", newLogVoteDelay)
			time.Sleep(newLogVoteDelay)
		}
	}
	st, err := consensus.Open(consensus.Options{
		Dir: dir, Self: members[n.self], Members: members, Key: n.key, Client: n.hc, Dial: n.dial, Scheme: n.top.Scheme,
		Stamp: n.stamper.Stamp, Logger: logger.With("component", "consensus"),
		Join: n.exp.join, MayJoin: n.mayJoin,
		OnChange: func(space, key string) {
			if space == release.GatesSpace && key == release.GatesKey {
				go n.loadGates() // off the apply path
			}
			if space == cluster.PoolListSpace && key == cluster.PoolListKey {
				go n.loadPoolList()
			}
			if fn := n.onState.Load(); fn != nil {
				(*fn)(space, key)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	n.state = st
	n.loadGates()
	return nil
}

// consensusStatus is this node's view of the consensus group.
func (n *clusterNode) consensusStatus() admin.ConsensusStatus {
	st := n.state.Status()
	leader := st.Leader
	for i := range n.top.Nodes {
		if n.top.ID(i) == leader {
			leader = n.top.Nodes[i] // the URL, with its scheme
		}
	}
	return admin.ConsensusStatus{Node: n.top.Nodes[n.self], State: st.State, Leader: leader, Term: st.Term, Applied: st.Applied}
}

// onStateChange sets what a change of the cluster state applied on this
// node does.
func (n *clusterNode) onStateChange(fn func(space, key string)) { n.onState.Store(&fn) }

// route sends signed requests under /_shardstore/ to the internal
// handlers and everything else to S3 (503 until the node is ready).
// Bucket names never start with '_', so no path-style S3 request is
// taken; a virtual-host request for a key under _shardstore/ carries no
// peer signature and goes to S3.
func (n *clusterNode) route() http.Handler {
	// Calls of other nodes pass the release guard first (a release too
	// old or too new, or one that lacks an active feature, is refused),
	// which stamps the answers with this node's protocol.
	n.guard = release.NewGuard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A signed request names the node it was signed for: one for
		// another node is a replay (or a misrouted call), refused
		// before any handler records its nonce.
		if !peerauth.ForHost(r, n.top.Host(n.self)) {
			http.Error(w, fmt.Sprintf("this node is %s, not %s", n.top.Host(n.self), r.Host), http.StatusMisdirectedRequest)
			return
		}
		(*n.internal.Load()).ServeHTTP(w, r)
	}), n.activeFeatures, n.log.With("component", "release"))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/_shardstore/") && r.Header.Get(peerauth.HeaderSignature) != "" {
			n.guard.ServeHTTP(w, r)
			return
		}
		if h := n.s3.Load(); h != nil {
			(*h).ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
			`<Error><Code>ServiceUnavailable</Code><Message>This node is starting: it is waiting for the other nodes of the cluster.</Message></Error>`)
	})
}

// openEngine waits for the other nodes, then opens the engine on all
// drives. A node other than the first waits for the first to format a
// new deployment.
func (n *clusterNode) openEngine(cfg engine.Config, stderr io.Writer) (*engine.Engine, error) {
	ctx, cancel := context.WithTimeout(context.Background(), clusterStartWait)
	defer cancel()
	fmt.Fprintf(stderr, "Cluster: this is node %d of %d (%s); waiting for the others\n", n.self+1, len(n.top.Nodes), n.top.Nodes[n.self])
	list, err := n.prepareMembership(ctx, stderr)
	if err != nil {
		return nil, err
	}
	n.locker = n.newLocker(list)
	cfg.Drives = n.drives
	cfg.SharedSync = n.sharedSync
	cfg.Pools = n.top.Pools
	freeDelay, err := testFreeDelay()
	if err != nil {
		return nil, err
	}
	cfg.Cluster = &engine.ClusterConfig{
		FreeDelay:   freeDelay,
		NewKeyPools: n.newKeyPools,
		Locker:      lockerAdapter{n.locker},
		FormatNew:   n.self == 0,
		Local:       func(slot int) bool { return n.top.Drives[slot].Node == n.self },
		Changed:     n.peers.Notify,
		NodeID:      nodeID(n.top.ID(n.self)),
		State:       stateAdapter{n.state},
		ScansHere:   n.state.IsLeader,
		Confirm:     n.peers.Confirm,
		// docs/pools.md "Canceling an expansion" (cancel.go).
		CancelExpansion: n.cancelExpansion,
	}
	for {
		eng, err := engine.New(cfg)
		if !errors.Is(err, engine.ErrAwaitingFormat) {
			if err == nil {
				n.peerSv.SetDeployment(eng.DeploymentID())
				// Features every node has are activated before S3 is
				// served (a new deployment has every node up by now);
				// later, the leader's rounds do it.
				gctx, gcancel := context.WithTimeout(ctx, 10*time.Second)
				if gerr := n.gateRound(gctx); gerr != nil {
					n.log.Debug("feature gate round at start", "err", gerr)
				}
				gcancel()
				go n.runGates(n.gatesDone)
				go n.runExpansion(n.gatesDone)
				n.waitForGrants(stderr)
			}
			return eng, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cluster: the first node (%s) did not format the deployment within %v: %w", n.top.Nodes[0], clusterStartWait, err)
		case <-time.After(time.Second):
		}
	}
}

// waitForGrants holds a restarted node back from S3 until its lock table
// grants again: leases it granted before the restart may still be held,
// so it refuses every grant for one lease time, and a request taken now
// would only wait for that (or, with most nodes restarted, time out).
func (n *clusterNode) waitForGrants(stderr io.Writer) {
	if wait := time.Until(n.grantsFrom); wait > 0 {
		fmt.Fprintf(stderr, "Cluster: this node restarted; it serves S3 in %v, once locks it granted before the restart have expired\n", wait.Round(100*time.Millisecond))
		time.Sleep(wait)
	}
}

// ready starts answering S3 requests with h; notices from other nodes
// call onNotify from now on.
func (n *clusterNode) ready(h http.Handler, onNotify func(kind, name string) error) {
	n.s3.Store(&h)
	n.peerSv.OnNotify(onNotify)
}

// printPlacement tells how the sets spread over the nodes.
func (n *clusterNode) printPlacement(w io.Writer, setSize, parity int) {
	fmt.Fprintf(w, "Cluster: %d nodes, drives per node %v\n", len(n.top.Nodes), n.top.NodeDrives())
	if len(n.top.Pools) > 1 {
		fmt.Fprintf(w, "Cluster: %d server pools of %v drives\n", len(n.top.Pools), n.top.Pools)
		return
	}
	for s, most := range n.top.SetSpread(setSize) {
		survives := "survives the loss of a whole node"
		if most > parity {
			survives = fmt.Sprintf("does NOT survive the loss of a node (%d of its drives are on one node, parity is %d)", most, parity)
		}
		fmt.Fprintf(w, "  set %d: at most %d drives per node; %s\n", s+1, most, survives)
	}
}

// shutdown stops serving (S3 and internal) and waits for requests in
// flight until ctx ends.
func (n *clusterNode) Shutdown(ctx context.Context) error {
	// Leadership goes to another node first, while this one still
	// answers, so the group does not wait an election timeout for it.
	if n.state != nil {
		hctx, cancel := context.WithTimeout(ctx, handOffWait)
		led, err := n.state.HandOff(hctx)
		cancel()
		switch {
		case err != nil:
			fmt.Fprintf(n.stderr, "shutdown: this node led the consensus group and could not hand leadership over (%v); the others elect a leader after an election timeout\n", err)
		case led:
			fmt.Fprintf(n.stderr, "shutdown: handed consensus leadership to another node (%s) before stopping\n", n.state.Status().Leader)
		}
	}
	err := n.http.Shutdown(ctx)
	if err != nil {
		return errors.Join(err, n.http.Close())
	}
	return nil
}

// close releases the locker, the consensus member, the drives and the
// listener.
func (n *clusterNode) close() {
	n.gatesOnce.Do(func() { close(n.gatesDone) })
	if n.locker != nil {
		n.locker.Close()
	}
	if n.state != nil {
		if err := n.state.Close(); err != nil {
			n.log.Warn("closing the cluster state", "err", err)
		}
	}
	if n.http != nil {
		_ = n.http.Close()
	}
	if n.table != nil {
		n.table.Close()
	}
	var wg sync.WaitGroup
	for _, h := range n.healths {
		wg.Add(1)
		go func() { defer wg.Done(); h.Close() }()
	}
	wg.Wait()
	if n.indexCache != nil {
		n.indexCache.Close()
	}
}

// nodeID is a node's name in records it keeps on shared drives, from its
// Topology.ID (which does not change with the scheme).
func nodeID(url string) string {
	return strings.NewReplacer("http://", "", ":", "_", "/", "_").Replace(url)
}

// lockerAdapter gives the engine the dlock locker.
type lockerAdapter struct{ l *dlock.Locker }

// lockError makes "no majority reachable" the engine's error for it (S3
// 503 ServiceUnavailable, rather than the SlowDown of a busy lock).
func lockError(err error) error {
	if errors.Is(err, dlock.ErrNoQuorum) {
		return fmt.Errorf("%w: %w", engine.ErrClusterUnavailable, err)
	}
	return err
}

func (a lockerAdapter) Lock(ctx context.Context, name string) (engine.ClusterLease, error) {
	l, err := a.l.Lock(ctx, name)
	if err != nil {
		return nil, lockError(err)
	}
	return l, nil
}

func (a lockerAdapter) RLock(ctx context.Context, name string) (engine.ClusterLease, error) {
	l, err := a.l.RLock(ctx, name)
	if err != nil {
		return nil, lockError(err)
	}
	return l, nil
}

// endpoints names every drive slot by its URL.
// localPaths are the directories of this node's own drives.
func (n *clusterNode) localPaths() []string {
	var out []string
	for _, d := range n.top.Drives {
		if d.Node == n.self {
			out = append(out, d.Path)
		}
	}
	return out
}

func (n *clusterNode) endpoints() []string {
	out := make([]string, len(n.top.Drives))
	for i := range out {
		out[i] = n.top.Endpoint(i)
	}
	return out
}

// nodeStopper stops a cluster node's listener (S3 and internal calls)
// and counts the S3 requests in flight.
type nodeStopper struct {
	node *clusterNode
	s3   stoppable
}

func (s nodeStopper) Shutdown(ctx context.Context) error { return s.node.Shutdown(ctx) }
func (s nodeStopper) InFlight() int                      { return s.s3.InFlight() }

// stateAdapter gives the engine the consensus group, its errors mapped to
// the engine's.
type stateAdapter struct{ n *consensus.Node }

func stateErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, consensus.ErrNotFound):
		return fmt.Errorf("%w: %v", engine.ErrStateNotFound, err)
	case errors.Is(err, consensus.ErrConflict):
		return fmt.Errorf("%w: %v", engine.ErrStateConflict, err)
	case errors.Is(err, consensus.ErrUnavailable):
		return fmt.Errorf("%w: %v", engine.ErrClusterUnavailable, err)
	}
	return err
}

func (a stateAdapter) Get(ctx context.Context, space, key string, fresh bool) ([]byte, uint64, error) {
	e, err := a.n.Get(ctx, space, key, fresh)
	return e.Value, e.Index, stateErr(err)
}

func (a stateAdapter) List(ctx context.Context, space string, fresh bool) (map[string][]byte, error) {
	all, err := a.n.List(ctx, space, fresh)
	if err != nil {
		return nil, stateErr(err)
	}
	out := make(map[string][]byte, len(all))
	for k, e := range all {
		out[k] = e.Value
	}
	return out, nil
}

func (a stateAdapter) Sync(ctx context.Context) error { return stateErr(a.n.Sync(ctx)) }

func (a stateAdapter) Put(ctx context.Context, space, key string, prev uint64, value []byte) (uint64, error) {
	v, err := a.n.Put(ctx, space, key, prev, value)
	return v, stateErr(err)
}

func (a stateAdapter) Delete(ctx context.Context, space, key string, prev uint64) error {
	return stateErr(a.n.Delete(ctx, space, key, prev))
}

func (a stateAdapter) Seeded(ctx context.Context) (bool, error) {
	ok, err := a.n.Seeded(ctx)
	return ok, stateErr(err)
}

func (a stateAdapter) Seed(ctx context.Context, state map[string]map[string][]byte) error {
	return stateErr(a.n.Seed(ctx, state))
}
