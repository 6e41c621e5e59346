package consensus

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shardstore/shardstore/internal/peerauth"
)

// upgradeProtocol names the protocol a raft stream switches to.
const upgradeProtocol = "shardstore-raft/1"

// streamLayer carries raft's connections over the node's HTTP port: a
// dialer sends a signed upgrade request, the other node's handler checks
// the signature, takes the connection over and hands it to raft's
// accept loop. So raft needs no port of its own and no connection is
// accepted without the cluster key.
type streamLayer struct {
	addr   net.Addr
	key    peerauth.Key
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	conns  chan net.Conn
	closed chan struct{}
	// stamp adds the release stamp to the upgrade request (nil: none).
	stamp func(http.Header)
	once  sync.Once
}

func newStreamLayer(address string, key peerauth.Key, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *streamLayer {
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	return &streamLayer{addr: textAddr(address), key: key, dial: dial, conns: make(chan net.Conn), closed: make(chan struct{})}
}

// textAddr is a net.Addr given as host:port.
type textAddr string

func (a textAddr) Network() string { return "tcp" }
func (a textAddr) String() string  { return string(a) }

var errStreamClosed = errors.New("raft stream layer closed")

// Accept returns the next connection a peer opened (net.Listener).
func (s *streamLayer) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.closed:
		return nil, errStreamClosed
	}
}

// Close stops accepting (net.Listener).
func (s *streamLayer) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

// Addr is this node's address (net.Listener).
func (s *streamLayer) Addr() net.Addr { return s.addr }

// Dial opens a raft connection to the node at address (raft.StreamLayer).
func (s *streamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := s.dial(ctx, "tcp", string(address))
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+string(address)+PathPrefix+"stream", http.NoBody)
	if err != nil {
		c.Close()
		return nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", upgradeProtocol)
	if s.stamp != nil {
		s.stamp(req.Header)
	}
	s.key.Sign(req, peerauth.BodyHash(nil))
	_ = c.SetDeadline(time.Now().Add(timeout))
	if err := req.Write(c); err != nil {
		c.Close()
		return nil, fmt.Errorf("raft stream to %s: %w", address, err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("raft stream to %s: %w", address, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		c.Close()
		return nil, fmt.Errorf("raft stream to %s: %s: %s", address, resp.Status, msg)
	}
	_ = c.SetDeadline(time.Time{})
	return &bufferedConn{Conn: c, r: br}, nil
}

// serveStream takes over an upgrade request's connection for raft.
func (s *streamLayer) serveStream(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") != upgradeProtocol {
		http.Error(w, "expected Upgrade: "+upgradeProtocol, http.StatusBadRequest)
		return
	}
	select {
	case <-s.closed:
		http.Error(w, "this node's cluster state group is closed", http.StatusServiceUnavailable)
		return
	default:
	}
	c, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "cannot take over the connection: "+err.Error(), http.StatusInternalServerError)
		return
	}
	// The server's header and idle deadlines do not apply to raft.
	_ = c.SetDeadline(time.Time{})
	_, err = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + upgradeProtocol + "\r\n\r\n")
	if err == nil {
		err = brw.Flush()
	}
	if err != nil {
		c.Close()
		return
	}
	var conn net.Conn = c
	if brw.Reader.Buffered() > 0 {
		conn = &bufferedConn{Conn: c, r: brw.Reader}
	}
	select {
	case s.conns <- conn:
	case <-s.closed:
		c.Close()
	}
}

// bufferedConn reads first what a bufio.Reader took from the connection.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
