package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/ellipses"
)

// Drive is one drive of the deployment.
type Drive struct {
	// Node is the index of the node it is attached to (Topology.Nodes).
	Node int
	// Path is its directory on that node.
	Path string
}

// Topology is the deployment every node is started with.
type Topology struct {
	// Nodes are the nodes' base URLs (scheme://host:port), in the order
	// they first appear on the command line.
	Nodes []string
	// Scheme is every node's: "http", or "https" when the nodes speak
	// TLS to each other and to clients.
	Scheme string
	// Drives are in slot order: slot i is drive i of the engine. Pool
	// after pool; within a pool, set s holds its slots s*setSize ..
	// (s+1)*setSize-1.
	Drives []Drive
	// Pools are the drive counts of the server pools, in slot order:
	// each argument whose host has ellipses is a pool; arguments naming
	// one node each are one pool together (poolArgs).
	Pools []int
}

// IsCluster reports whether the drive arguments name nodes (URLs).
func IsCluster(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "https://") {
			return true
		}
	}
	return false
}

// Parse expands args (MinIO-style: http://node{1...4}:9000/data/d{1...4},
// or https://) into a topology. Every argument must be a URL with a host,
// a port and an absolute path, and all must have the same scheme: nodes
// of one deployment either all speak TLS or none does. The drives are interleaved across nodes: slot 0 is
// the first drive of node 1, slot 1 the first drive of node 2, and so
// on, so any run of consecutive slots (an erasure set) takes drives from
// as many nodes as possible.
func Parse(args []string) (Topology, error) {
	var t Topology
	if len(args) == 0 {
		return t, errors.New("cluster: no drive endpoints given")
	}
	var pools [][]string
	for _, group := range poolArgs(args) {
		urls, err := ellipses.ExpandAll(group)
		if err != nil {
			return t, fmt.Errorf("cluster: %w", err)
		}
		pools = append(pools, urls)
	}
	nodeIndex := map[string]int{}
	for _, urls := range pools {
		perNode := make([][]string, len(t.Nodes))
		if err := t.addPool(urls, nodeIndex, &perNode); err != nil {
			return t, err
		}
		n := len(t.Drives)
		for depth := 0; len(t.Drives)-n < len(urls); depth++ {
			for node, paths := range perNode {
				if depth < len(paths) {
					t.Drives = append(t.Drives, Drive{Node: node, Path: paths[depth]})
				}
			}
		}
		t.Pools = append(t.Pools, len(urls))
	}
	if len(t.Nodes) < 2 {
		return t, fmt.Errorf("cluster: all drives are on one node (%s): start it with plain drive paths instead of URLs", t.Nodes[0])
	}
	seen := map[Drive]bool{}
	for _, d := range t.Drives {
		if seen[d] {
			return t, fmt.Errorf("cluster: drive %s%s is given twice", t.Nodes[d.Node], d.Path)
		}
		seen[d] = true
	}
	return t, nil
}

// poolArgs groups the drive arguments into server pools: an argument
// whose host has ellipses (http://n{1...4}:9000/d{1...4}, drives on
// several nodes) is a pool of its own; arguments that each name one node
// (http://a:9000/d{1...4} http://b:9000/d{1...4}, the form of a cluster
// written node by node) are one pool together with the single-node
// arguments next to them, until an argument with ellipses names a node
// the run already has: that starts the next pool (a second pool written
// node by node over the same nodes).
func poolArgs(args []string) [][]string {
	var out [][]string
	var run map[string]bool // hosts of the current run of single-node arguments; nil: none
	for _, a := range args {
		host, path := a, ""
		if i := strings.Index(host, "://"); i >= 0 {
			host = host[i+3:]
		}
		if i := strings.IndexByte(host, '/'); i >= 0 {
			host, path = host[:i], host[i:]
		}
		host = strings.ToLower(host)
		switch {
		case ellipses.HasPattern(host):
			out = append(out, []string{a})
			run = nil
		case run != nil && !(run[host] && ellipses.HasPattern(path)):
			out[len(out)-1] = append(out[len(out)-1], a)
			run[host] = true
		default:
			out = append(out, []string{a})
			run = map[string]bool{host: true}
		}
	}
	return out
}

// addPool adds the nodes of one pool's drive URLs and lists each node's
// drive paths of the pool in perNode (indexed like t.Nodes).
func (t *Topology) addPool(urls []string, nodeIndex map[string]int, perNode *[][]string) error {
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			return fmt.Errorf("cluster: drive endpoint %q: %w", raw, err)
		}
		switch {
		case u.Scheme != "http" && u.Scheme != "https":
			return fmt.Errorf("cluster: drive endpoint %q: the scheme must be http:// or https://", raw)
		case t.Scheme != "" && u.Scheme != t.Scheme:
			return fmt.Errorf("cluster: drive endpoint %q is %s:// but an earlier one is %s://: all nodes of a deployment use the same scheme (https:// when they have certificates)", raw, u.Scheme, t.Scheme)
		case u.Hostname() == "" || u.Port() == "":
			return fmt.Errorf("cluster: drive endpoint %q: write host and port, as %s://HOST:PORT/PATH", raw, u.Scheme)
		case u.User != nil || u.RawQuery != "" || u.Fragment != "":
			return fmt.Errorf("cluster: drive endpoint %q: only %s://HOST:PORT/PATH is allowed", raw, u.Scheme)
		case !strings.HasPrefix(u.Path, "/") || u.Path == "/":
			return fmt.Errorf("cluster: drive endpoint %q: the drive path must be absolute and not /", raw)
		}
		if p, err := strconv.Atoi(u.Port()); err != nil || p <= 0 || p > 65535 {
			return fmt.Errorf("cluster: drive endpoint %q: bad port", raw)
		}
		t.Scheme = u.Scheme
		node := u.Scheme + "://" + strings.ToLower(u.Host)
		i, ok := nodeIndex[node]
		if !ok {
			i = len(t.Nodes)
			nodeIndex[node] = i
			t.Nodes = append(t.Nodes, node)
		}
		for len(*perNode) <= i {
			*perNode = append(*perNode, nil)
		}
		(*perNode)[i] = append((*perNode)[i], u.Path)
	}
	return nil
}

// Endpoint is the URL naming drive slot i (node URL + path).
func (t Topology) Endpoint(i int) string { return t.Nodes[t.Drives[i].Node] + t.Drives[i].Path }

// Host is node n's host:port.
func (t Topology) Host(n int) string { return strings.TrimPrefix(t.Nodes[n], t.Scheme+"://") }

// ID is node n's stable name: in the consensus group's membership and in
// the records a node keeps on shared drives (its heal queue, its running
// marker). It is "http://HOST:PORT" whatever the scheme: that was the
// node's URL before nodes spoke TLS, and a deployment that moves to
// https:// keeps its membership and records.
func (t Topology) ID(n int) string { return "http://" + t.Host(n) }

// NodeDrives is the number of drives of every node.
func (t Topology) NodeDrives() []int {
	out := make([]int, len(t.Nodes))
	for _, d := range t.Drives {
		out[d.Node]++
	}
	return out
}

// SetSpread describes how each erasure set of setSize drives spreads over
// the nodes: for each set, the most drives it has on one node. A set
// survives the loss of a whole node when that number is at most its
// parity.
func (t Topology) SetSpread(setSize int) []int {
	var out []int
	for s := 0; (s+1)*setSize <= len(t.Drives); s++ {
		count := map[int]int{}
		most := 0
		for _, d := range t.Drives[s*setSize : (s+1)*setSize] {
			count[d.Node]++
			most = max(most, count[d.Node])
		}
		out = append(out, most)
	}
	return out
}

// FindSelf returns the index of the node this process is. listen is the
// address it will listen on (--address); chosen tells whether the
// operator gave it. A node is this process when its port is the listen
// port and its host is an address of this machine (resolved by DNS when
// it is a name) matching the listen host unless that is a wildcard.
func (t Topology) FindSelf(ctx context.Context, listen string, chosen bool) (int, error) {
	lhost, lport, err := net.SplitHostPort(listen)
	if err != nil {
		return -1, fmt.Errorf("cluster: --address %q: %w", listen, err)
	}
	local, err := localAddrs()
	if err != nil {
		return -1, fmt.Errorf("cluster: list this machine's addresses: %w", err)
	}
	wildcard := lhost == "" || lhost == "0.0.0.0" || lhost == "::"
	var matches []int
	var problems []string
	for n := range t.Nodes {
		host, port, _ := net.SplitHostPort(t.Host(n))
		if chosen && port != lport {
			continue
		}
		ips, err := resolve(ctx, host)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", host, err))
			continue
		}
		mine := false
		for _, ip := range ips {
			if (local[ip.String()] || ip.IsLoopback()) && (!chosen || wildcard || lhost == host || lhost == ip.String()) {
				mine = true
			}
		}
		if mine {
			matches = append(matches, n)
		}
	}
	switch {
	case len(matches) == 1:
		return matches[0], nil
	case len(matches) > 1:
		var names []string
		for _, n := range matches {
			names = append(names, t.Nodes[n])
		}
		return -1, fmt.Errorf("cluster: several nodes are on this machine (%s): say which one this is with --address HOST:PORT", strings.Join(names, ", "))
	}
	msg := fmt.Sprintf("cluster: none of the %d nodes is this machine listening on %s", len(t.Nodes), listen)
	if !chosen {
		msg = fmt.Sprintf("cluster: none of the %d nodes (%s) resolves to an address of this machine", len(t.Nodes), strings.Join(t.Nodes, ", "))
	}
	if len(problems) > 0 {
		msg += " (could not resolve: " + strings.Join(problems, "; ") + ")"
	}
	return -1, errors.New(msg + ": check the endpoints and --address")
}

func localAddrs() (map[string]bool, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	out := map[string]bool{"127.0.0.1": true, "::1": true}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			out[ipn.IP.String()] = true
		}
	}
	return out, nil
}

func resolve(ctx context.Context, host string) ([]net.IP, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, err
	}
	out := make([]net.IP, len(addrs))
	for i, a := range addrs {
		out[i] = a.IP
	}
	return out, nil
}
