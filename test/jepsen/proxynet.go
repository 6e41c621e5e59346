package jepsen

import (
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// proxyNet is the fallback where network namespaces cannot be made (not
// root, no ip tool): every node listens on its own loopback port and
// reaches node j through a TCP proxy of the ordered link (i, j), named
// to it in SHARDSTORE_PEER_ROUTES (the same hook test/cluster's
// faultNet uses). A cut link holds its bytes (connections hang; new
// ones are accepted but carry nothing); when it heals, the connections
// that lived through the cut are closed, as a real split would have
// reset them. Clients reach the nodes directly.
type proxyNet struct {
	ports []int
	links map[[2]int]*proxyLink
}

func newProxyNet(n int) (*proxyNet, error) {
	p := &proxyNet{links: map[[2]int]*proxyLink{}}
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		p.ports = append(p.ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	for i := range n {
		for j := range n {
			if i == j {
				continue
			}
			l, err := newProxyLink(p.PeerAddr(j))
			if err != nil {
				p.Close()
				return nil, err
			}
			p.links[[2]int{i, j}] = l
		}
	}
	return p, nil
}

func (p *proxyNet) Name() string            { return "proxy" }
func (p *proxyNet) PeerAddr(i int) string   { return fmt.Sprintf("127.0.0.1:%d", p.ports[i]) }
func (p *proxyNet) ListenAddr(i int) string { return p.PeerAddr(i) }
func (p *proxyNet) ClientURL(i int) string  { return "http://" + p.PeerAddr(i) }

func (p *proxyNet) Command(i int, bin string, args ...string) *exec.Cmd {
	return exec.Command(bin, args...)
}

func (p *proxyNet) Env(i int) []string {
	var routes []string
	for k, l := range p.links {
		if k[0] == i {
			routes = append(routes, l.target+"="+l.ln.Addr().String())
		}
	}
	return []string{"SHARDSTORE_PEER_ROUTES=" + strings.Join(routes, ",")}
}

func (p *proxyNet) SetLinks(connected func(i, j int) bool) error {
	// Link (i, j) carries the connections i opens to j: a one-way cut
	// holds i's calls to j while j's calls to i, answers included, pass.
	for k, l := range p.links {
		l.set(!connected(k[0], k[1]))
	}
	return nil
}

func (p *proxyNet) Close() error {
	for _, l := range p.links {
		l.close()
	}
	return nil
}

// proxyLink forwards connections accepted on ln to target unless cut.
type proxyLink struct {
	target string
	ln     net.Listener

	mu    sync.Mutex
	cut   bool
	done  bool
	open  chan struct{} // closed while not cut
	conns map[*proxyConn]bool
}

type proxyConn struct {
	a, b     net.Conn
	poisoned bool
	once     sync.Once
}

func (c *proxyConn) close() {
	c.once.Do(func() {
		c.a.Close()
		if c.b != nil {
			c.b.Close()
		}
	})
}

func newProxyLink(target string) (*proxyLink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &proxyLink{target: target, ln: ln, open: make(chan struct{}), conns: map[*proxyConn]bool{}}
	close(l.open)
	go l.accept()
	return l, nil
}

func (l *proxyLink) set(cut bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cut == l.cut || l.done {
		return
	}
	l.cut = cut
	if cut {
		l.open = make(chan struct{})
		for c := range l.conns {
			c.poisoned = true
		}
		return
	}
	close(l.open)
	for c := range l.conns {
		if c.poisoned {
			delete(l.conns, c)
			c.close()
		}
	}
}

func (l *proxyLink) close() {
	l.mu.Lock()
	l.done = true
	for c := range l.conns {
		c.close()
	}
	if l.cut {
		close(l.open)
		l.cut = false
	}
	l.mu.Unlock()
	l.ln.Close()
}

// pass waits while the link is cut; false: the connection must close.
func (l *proxyLink) pass(c *proxyConn) bool {
	for {
		l.mu.Lock()
		open, poisoned, done := l.open, c.poisoned, l.done
		l.mu.Unlock()
		if done {
			return false
		}
		select {
		case <-open:
			return !poisoned
		default:
		}
		<-open
	}
}

func (l *proxyLink) accept() {
	for {
		a, err := l.ln.Accept()
		if err != nil {
			return
		}
		c := &proxyConn{a: a}
		l.mu.Lock()
		if l.done {
			l.mu.Unlock()
			a.Close()
			return
		}
		l.conns[c] = true
		l.mu.Unlock()
		go l.serve(c)
	}
}

func (l *proxyLink) serve(c *proxyConn) {
	defer func() {
		c.close()
		l.mu.Lock()
		delete(l.conns, c)
		l.mu.Unlock()
	}()
	if !l.pass(c) {
		return
	}
	b, err := net.DialTimeout("tcp", l.target, 5*time.Second)
	if err != nil {
		return
	}
	l.mu.Lock()
	c.b = b
	l.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { l.forward(c, b, c.a); done <- struct{}{} }()
	go func() { l.forward(c, c.a, b); done <- struct{}{} }()
	<-done
	c.close()
	<-done
}

// forward copies src to dst, holding each chunk while the link is cut.
func (l *proxyLink) forward(c *proxyConn, dst, src net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !l.pass(c) {
				c.close()
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				c.close()
				return
			}
		}
		if err != nil {
			c.close()
			return
		}
	}
}
