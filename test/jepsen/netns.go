package jepsen

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// Network is how the nodes reach each other and the clients reach the
// nodes, and what a partition cuts. Two implementations: nsNet (a
// network namespace per node, the default as root) and proxyNet (a TCP
// proxy on every link, on loopback, wherever namespaces cannot be made).
type Network interface {
	// Name says which implementation this is, for the report.
	Name() string
	// PeerAddr is node i's HOST:PORT in the endpoint list every node
	// gets; ListenAddr what node i's --address is.
	PeerAddr(i int) string
	ListenAddr(i int) string
	// ClientURL is the URL the test's S3 clients use for node i: they
	// are never partitioned from a node (a node that is down or paused
	// still fails their requests).
	ClientURL(i int) string
	// Command is the command that runs bin with args as node i (inside
	// its namespace), and Env the extra environment it needs.
	Command(i int, bin string, args ...string) *exec.Cmd
	Env(i int) []string
	// SetLinks makes the links between nodes exactly what connected
	// says: connected(i, j) false cuts what i sends to j. Both ways cut:
	// packets dropped, so calls hang as on a real split. One way only
	// (partition-oneway): netns drops i's packets to j at i (a blackhole
	// route: i's connections to j fail at once, j's to i hang, since
	// i's answers are dropped too); proxy holds the connections i opens
	// to j and lets j's to i through, answers included.
	SetLinks(connected func(i, j int) bool) error
	// Close removes everything the network made.
	Close() error
}

// nsNet gives every node its own network namespace. Node i has the
// address 10.S.0.(i+1) on its loopback device, the one the other nodes
// reach it at, and 10.S.1.(i+1) on a device bridged to the test's
// namespace, the one clients use. Every pair of nodes has its own
// cable: a veth pair from each node's namespace to a small bridge in the
// test's namespace, with a host route (src the node's address) over it.
// Cutting the pair takes the bridge's two ports down: both nodes' ends
// lose carrier, the route stays (linkdown) and packets are dropped
// silently, so connections hang and new ones time out, as on a real
// split. No packet filter (iptables, tc) is needed: the kernels these
// tests run on may have neither.
type nsNet struct {
	stale  []string // the ids of networks killed runs left, removed before this one was made
	id     string   // 3 hex digits naming this network's devices
	subnet int      // S in 10.S.x.y
	n      int
	port   int

	mu  sync.Mutex
	cut map[[2]int]bool
	// oneway holds (i, j) while i's packets to j go to a blackhole route
	// in i's namespace (j's to i still arrive).
	oneway map[[2]int]bool
}

// nsPort is the port every node listens on (each in its own namespace).
const nsPort = 9000

// newNSNet makes the namespaces and cables for n nodes (n <= 9). It
// needs root (CAP_NET_ADMIN) and the ip tool.
func newNSNet(n int) (*nsNet, error) {
	if n > 9 {
		return nil, fmt.Errorf("nsnet: at most 9 nodes, not %d", n)
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("nsnet: not root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("nsnet: %w", err)
	}
	removed, err := cleanStale()
	if err != nil {
		return nil, fmt.Errorf("nsnet: removing what killed runs left: %w", err)
	}
	b := make([]byte, 2)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	used, err := exec.Command("ip", "-o", "addr").Output()
	if err != nil {
		return nil, fmt.Errorf("nsnet: ip addr: %w", err)
	}
	s := &nsNet{stale: removed, id: hex.EncodeToString(b)[:3], n: n, port: nsPort, cut: map[[2]int]bool{}, oneway: map[[2]int]bool{}}
	for range 50 {
		s.subnet = 100 + mrand.IntN(150)
		if !strings.Contains(string(used), fmt.Sprintf(" 10.%d.", s.subnet)) {
			break
		}
	}
	if err := writeOwner(s.id); err != nil {
		return nil, fmt.Errorf("nsnet: %w", err)
	}
	if err := s.setup(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *nsNet) Name() string { return "netns" }

func (s *nsNet) ns(i int) string            { return fmt.Sprintf("jepsen-%s-%d", s.id, i+1) }
func (s *nsNet) peerIP(i int) string        { return fmt.Sprintf("10.%d.0.%d", s.subnet, i+1) }
func (s *nsNet) clientIP(i int) string      { return fmt.Sprintf("10.%d.1.%d", s.subnet, i+1) }
func (s *nsNet) clientBridge() string       { return "jc" + s.id }
func (s *nsNet) pairBridge(i, j int) string { return fmt.Sprintf("jp%s%d%d", s.id, i+1, j+1) }

// cable is the test-side end of node i's veth towards node j.
func (s *nsNet) cable(i, j int) string { return fmt.Sprintf("ja%s%d%d", s.id, i+1, j+1) }

func (s *nsNet) PeerAddr(i int) string   { return fmt.Sprintf("%s:%d", s.peerIP(i), s.port) }
func (s *nsNet) ListenAddr(i int) string { return fmt.Sprintf("0.0.0.0:%d", s.port) }
func (s *nsNet) ClientURL(i int) string  { return fmt.Sprintf("http://%s:%d", s.clientIP(i), s.port) }
func (s *nsNet) Env(i int) []string      { return nil }

func (s *nsNet) Command(i int, bin string, args ...string) *exec.Cmd {
	// ip netns exec enters the namespace and execs bin: the process is
	// bin itself (same pid), so signals reach the node.
	return exec.Command("ip", append([]string{"netns", "exec", s.ns(i), bin}, args...)...)
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (s *nsNet) setup() error {
	br := s.clientBridge()
	steps := [][]string{
		{"link", "add", br, "type", "bridge"},
		{"link", "set", br, "up"},
		{"addr", "add", fmt.Sprintf("10.%d.1.254/24", s.subnet), "dev", br},
	}
	for i := range s.n {
		ns, k := s.ns(i), fmt.Sprintf("jk%s%d", s.id, i+1)
		steps = append(steps,
			[]string{"netns", "add", ns},
			[]string{"-n", ns, "link", "set", "lo", "up"},
			[]string{"-n", ns, "addr", "add", s.peerIP(i) + "/32", "dev", "lo"},
			[]string{"link", "add", k, "type", "veth", "peer", "name", "c0", "netns", ns},
			[]string{"link", "set", k, "master", br, "up"},
			[]string{"-n", ns, "addr", "add", s.clientIP(i) + "/24", "dev", "c0"},
			[]string{"-n", ns, "link", "set", "c0", "up"},
		)
	}
	for i := range s.n {
		for j := i + 1; j < s.n; j++ {
			pb := s.pairBridge(i, j)
			steps = append(steps,
				[]string{"link", "add", pb, "type", "bridge"},
				[]string{"link", "set", pb, "up"},
			)
			for _, e := range [][2]int{{i, j}, {j, i}} {
				a, b := e[0], e[1]
				dev := fmt.Sprintf("p%d", b+1)
				steps = append(steps,
					[]string{"link", "add", s.cable(a, b), "type", "veth", "peer", "name", dev, "netns", s.ns(a)},
					[]string{"link", "set", s.cable(a, b), "master", pb, "up"},
					[]string{"-n", s.ns(a), "link", "set", dev, "up"},
					[]string{"-n", s.ns(a), "route", "add", s.peerIP(b) + "/32", "dev", dev, "src", s.peerIP(a)},
				)
			}
		}
	}
	for _, st := range steps {
		if err := ip(st...); err != nil {
			return fmt.Errorf("nsnet: %w", err)
		}
	}
	return nil
}

func (s *nsNet) SetLinks(connected func(i, j int) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for i := range s.n {
		for j := range s.n {
			// One way cut (only): a blackhole route at the sender.
			want := i != j && !connected(i, j) && connected(j, i)
			if s.oneway[[2]int{i, j}] == want {
				continue
			}
			route := []string{"-n", s.ns(i), "route", "replace", s.peerIP(j) + "/32", "dev", fmt.Sprintf("p%d", j+1), "src", s.peerIP(i)}
			if want {
				route = []string{"-n", s.ns(i), "route", "replace", "blackhole", s.peerIP(j) + "/32"}
			}
			if err := ip(route...); err != nil {
				errs = append(errs, err)
			}
			s.oneway[[2]int{i, j}] = want
		}
	}
	for i := range s.n {
		for j := i + 1; j < s.n; j++ {
			want := !connected(i, j) && !connected(j, i)
			if s.cut[[2]int{i, j}] == want {
				continue
			}
			state := "up"
			if want {
				state = "down"
			}
			for _, c := range []string{s.cable(i, j), s.cable(j, i)} {
				if err := ip("link", "set", c, state); err != nil {
					errs = append(errs, err)
				}
			}
			s.cut[[2]int{i, j}] = want
		}
	}
	return errors.Join(errs...)
}

// Close deletes the namespaces (which deletes the veth pairs inside
// them) and the bridges.
func (s *nsNet) Close() error {
	var errs []error
	for i := range s.n {
		if err := ip("netns", "del", s.ns(i)); err != nil && !strings.Contains(err.Error(), "No such file") {
			errs = append(errs, err)
		}
		for j := i + 1; j < s.n; j++ {
			_ = ip("link", "del", s.pairBridge(i, j))
		}
	}
	_ = ip("link", "del", s.clientBridge())
	removeOwner(s.id)
	return errors.Join(errs...)
}
