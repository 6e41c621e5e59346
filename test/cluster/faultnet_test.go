package cluster

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// faultNet puts a TCP proxy on every ordered pair of nodes: node i
// reaches node j only through link (i, j), which the test can delay or
// cut. The nodes learn the proxies through SHARDSTORE_PEER_ROUTES
// (cluster.RoutesEnv); S3 clients of the test talk to the nodes
// directly.
type faultNet struct {
	links map[[2]int]*link
}

// newFaultNet starts the proxies for nodes listening on ports.
func newFaultNet(t *testing.T, ports []int) *faultNet {
	f := &faultNet{links: map[[2]int]*link{}}
	for i := range ports {
		for j := range ports {
			if i == j {
				continue
			}
			l, err := newLink(fmt.Sprintf("127.0.0.1:%d", ports[j]))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(l.close)
			f.links[[2]int{i, j}] = l
		}
	}
	return f
}

// routes is node i's SHARDSTORE_PEER_ROUTES value.
func (f *faultNet) routes(i int) string {
	var out []string
	for k, l := range f.links {
		if k[0] == i {
			out = append(out, l.target+"="+l.ln.Addr().String())
		}
	}
	return strings.Join(out, ",")
}

// partition cuts every link between a node of side and a node not in
// it, in both directions: packets are dropped (connections hang; new
// ones open but carry nothing), as on a real network split.
func (f *faultNet) partition(side ...int) {
	in := map[int]bool{}
	for _, i := range side {
		in[i] = true
	}
	for k, l := range f.links {
		if in[k[0]] != in[k[1]] {
			l.set(true, 0)
		}
	}
}

// slow adds delay to every link into and out of node i (so a round
// trip to it costs twice that).
func (f *faultNet) slow(i int, delay time.Duration) {
	for k, l := range f.links {
		if k[0] == i || k[1] == i {
			l.set(false, delay)
		}
	}
}

// heal restores every link. Connections that lived through a cut are
// closed (their bytes were dropped, as a real split would have reset
// them), so the nodes reconnect.
func (f *faultNet) heal() {
	for _, l := range f.links {
		l.set(false, 0)
	}
}

// link is one direction of proxying: connections accepted on ln are
// forwarded to target.
type link struct {
	target string
	ln     net.Listener

	mu    sync.Mutex
	cut   bool
	delay time.Duration
	open  chan struct{} // closed while not cut
	conns map[*proxyConn]bool
	done  bool
}

// proxyConn is one proxied connection; poisoned once it lived through a
// cut.
type proxyConn struct {
	a, b     net.Conn
	poisoned bool
	once     sync.Once
}

func (p *proxyConn) close() {
	p.once.Do(func() {
		p.a.Close()
		if p.b != nil {
			p.b.Close()
		}
	})
}

func newLink(target string) (*link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &link{target: target, ln: ln, open: make(chan struct{}), conns: map[*proxyConn]bool{}}
	close(l.open)
	go l.accept()
	return l, nil
}

func (l *link) set(cut bool, delay time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.delay = delay
	if cut == l.cut {
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

func (l *link) close() {
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

// pass returns whether traffic may pass now (waiting while the link is
// cut) and the delay to add; false means the connection must close.
func (l *link) pass(c *proxyConn) (time.Duration, bool) {
	for {
		l.mu.Lock()
		open, delay, poisoned, done := l.open, l.delay, c.poisoned, l.done
		l.mu.Unlock()
		if done {
			return 0, false
		}
		select {
		case <-open:
			if poisoned {
				return 0, false
			}
			return delay, true
		default:
		}
		<-open
	}
}

func (l *link) accept() {
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

func (l *link) serve(c *proxyConn) {
	defer func() {
		c.close()
		l.mu.Lock()
		delete(l.conns, c)
		l.mu.Unlock()
	}()
	// A connection opened while cut is accepted (the dialer's SYN went
	// out before the split was noticed) but reaches nothing.
	if _, ok := l.pass(c); !ok {
		return
	}
	b, err := net.DialTimeout("tcp", l.target, 5*time.Second)
	if err != nil {
		return
	}
	l.mu.Lock()
	c.b = b
	l.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); l.forward(c, b, c.a); c.close() }()
	go func() { defer wg.Done(); l.forward(c, c.a, b); c.close() }()
	wg.Wait()
}

// chunk is bytes read from one side, due at the other side at at.
type chunk struct {
	at   time.Time
	data []byte
}

// forward copies src to dst, holding each chunk while the link is cut
// and delivering it delay after it was read (a reader goroutine keeps
// reading meanwhile, so delay adds latency without capping throughput).
func (l *link) forward(c *proxyConn, dst, src net.Conn) {
	q := make(chan chunk, 256)
	go func() {
		defer close(q)
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				delay, ok := l.pass(c)
				if !ok {
					return
				}
				q <- chunk{at: time.Now().Add(delay), data: append([]byte(nil), buf[:n]...)}
			}
			if err != nil {
				return
			}
		}
	}()
	for ch := range q {
		time.Sleep(time.Until(ch.at))
		if _, ok := l.pass(c); !ok {
			break
		}
		if _, err := dst.Write(ch.data); err != nil {
			break
		}
	}
	c.close()
	for range q {
	}
}
