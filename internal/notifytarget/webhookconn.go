package notifytarget

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// hookConns are HTTP/1.1 keep-alive connections to one webhook
// endpoint that the sending lane uses itself: it writes the request
// (net/http's Request.Write) and reads the answer (http.ReadResponse)
// on its own goroutine. http.Transport hands every request to the
// connection's writer goroutine and the answer back from its reader
// goroutine: two goroutine hand-offs per record, which on a busy node
// cost more scheduler time than the POST itself (docs/performance.md).
// Used only where the Transport would go straight to the endpoint (no
// proxy from the environment) and the Send has a deadline; otherwise
// webhook.Send keeps the http.Client.
type hookConns struct {
	addr string      // host:port
	tls  *tls.Config // nil for http
	max  int         // idle connections kept

	mu     sync.Mutex
	idle   []*hookConn
	closed bool
}

// hookConn is one connection with its buffers.
type hookConn struct {
	c  net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

// maxHookAnswer is how much of an answer's body is read (and dropped)
// for the connection to be reused; a longer body closes it.
const maxHookAnswer = 64 << 10

// newHookConns is the pool for u, or nil where the lanes must go
// through the Transport (a proxy applies to u).
func newHookConns(u *url.URL, tlsCfg *tls.Config, max int) *hookConns {
	if p, err := http.ProxyFromEnvironment(&http.Request{URL: u}); err != nil || p != nil {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	p := &hookConns{addr: net.JoinHostPort(u.Hostname(), port), max: max}
	if u.Scheme == "https" {
		p.tls = tlsCfg.Clone()
		if p.tls.ServerName == "" {
			p.tls.ServerName = u.Hostname()
		}
	}
	return p
}

func (p *hookConns) get() *hookConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return c
	}
	return nil
}

func (p *hookConns) put(c *hookConn) {
	p.mu.Lock()
	if !p.closed && len(p.idle) < p.max {
		p.idle = append(p.idle, c)
		c = nil
	}
	p.mu.Unlock()
	if c != nil {
		_ = c.c.Close()
	}
}

// close closes the idle connections; later ones are closed when put.
func (p *hookConns) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, c := range idle {
		_ = c.c.Close()
	}
}

func (p *hookConns) dial(ctx context.Context) (*hookConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	if p.tls != nil {
		tc := tls.Client(c, p.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = c.Close()
			return nil, err
		}
		c = tc
	}
	return &hookConn{c: c, br: bufio.NewReaderSize(c, 4096), bw: bufio.NewWriterSize(c, 4096)}, nil
}

// errStaleConn: an idle connection failed before any byte of an answer
// came back (the endpoint closed it meanwhile); the request is sent
// again on another connection.
var errStaleConn = errors.New("webhook: idle connection closed by the endpoint")

// do sends req (its body from GetBody) and returns the answer's status;
// the connection goes back to the pool when it can carry another.
func (p *hookConns) do(ctx context.Context, req *http.Request) (int, string, error) {
	for {
		hc := p.get()
		reused := hc != nil
		if hc == nil {
			var err error
			if hc, err = p.dial(ctx); err != nil {
				return 0, "", err
			}
		}
		code, status, keep, err := hc.roundTrip(ctx, req, reused)
		if err == nil {
			if keep {
				p.put(hc)
			} else {
				_ = hc.c.Close()
			}
			return code, status, nil
		}
		_ = hc.c.Close()
		if errors.Is(err, errStaleConn) && ctx.Err() == nil {
			continue
		}
		return 0, "", err
	}
}

// aLongTimeAgo is a deadline that makes a blocked read or write return.
var aLongTimeAgo = time.Unix(1, 0)

func (hc *hookConn) roundTrip(ctx context.Context, req *http.Request, reused bool) (code int, status string, keep bool, err error) {
	deadline, _ := ctx.Deadline()
	if err := hc.c.SetDeadline(deadline); err != nil {
		return 0, "", false, err
	}
	// The queue cancels the context when it closes: a blocked read or
	// write returns then, as the Transport's would.
	stop := context.AfterFunc(ctx, func() { _ = hc.c.SetDeadline(aLongTimeAgo) })
	defer stop()
	body, err := req.GetBody()
	if err != nil {
		return 0, "", false, err
	}
	r := *req
	r.Body = body
	werr := r.Write(hc.bw)
	if werr == nil {
		werr = hc.bw.Flush()
	}
	if werr != nil {
		if reused && !isTimeout(werr) {
			return 0, "", false, fmt.Errorf("%w: %w", errStaleConn, werr)
		}
		return 0, "", false, werr
	}
	if reused {
		// Nothing of the answer yet: a connection the endpoint closed
		// while idle fails here with EOF or a reset.
		if _, err := hc.br.Peek(1); err != nil && !isTimeout(err) && ctx.Err() == nil {
			return 0, "", false, fmt.Errorf("%w: %w", errStaleConn, err)
		}
	}
	resp, err := http.ReadResponse(hc.br, &r)
	if err != nil {
		return 0, "", false, err
	}
	n, cerr := io.Copy(io.Discard, io.LimitReader(resp.Body, maxHookAnswer+1))
	_ = resp.Body.Close()
	keep = cerr == nil && n <= maxHookAnswer && !resp.Close && ctx.Err() == nil
	return resp.StatusCode, resp.Status, keep, nil
}

// isTimeout: err is a deadline's (the Send's time is up), not the
// endpoint closing the connection.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
