package ldapidp

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// Lookup connections are reused: a connection bound as the lookup
// account goes back to a small idle pool after a sign-in or a lookup
// that left it bound so (a sign-in binds as the user, then as the lookup
// account again; a connection whose rebind failed, or that failed with a
// network error, is closed). A pooled connection idle for longer than
// maxIdleFor is closed rather than reused (servers drop idle clients),
// and an operation that fails with a network error on a reused
// connection is tried once more on a new one. So a re-check per request
// (RECHECK_INTERVAL=0s) or a burst of sign-ins costs searches, not a TCP
// and TLS handshake and a bind each.

const (
	maxIdleConns = 4
	maxIdleFor   = 30 * time.Second
)

type idleConn struct {
	conn  *ldap.Conn
	since time.Time
}

// pool holds idle lookup-bound connections.
type pool struct {
	mu   sync.Mutex
	idle []idleConn
	// opened and reused count connections made and taken from the pool.
	opened, reused atomic.Uint64
}

// PoolStats are a Directory's connection counts.
type PoolStats struct {
	Opened, Reused uint64 // connections dialled and bound, and reuses of idle ones
	Idle           int    // idle now
}

// Stats reports the directory's connections.
func (d *Directory) Stats() PoolStats {
	d.pool.mu.Lock()
	idle := len(d.pool.idle)
	d.pool.mu.Unlock()
	return PoolStats{Opened: d.pool.opened.Load(), Reused: d.pool.reused.Load(), Idle: idle}
}

// Close closes the idle connections.
func (d *Directory) Close() {
	d.pool.mu.Lock()
	idle := d.pool.idle
	d.pool.idle = nil
	d.pool.mu.Unlock()
	for _, c := range idle {
		c.conn.Close()
	}
}

// take returns an idle connection, nil when there is none fit to use.
func (p *pool) take(now time.Time) *ldap.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.idle) > 0 {
		c := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if now.Sub(c.since) < maxIdleFor && !c.conn.IsClosing() {
			p.reused.Add(1)
			return c.conn
		}
		c.conn.Close()
	}
	return nil
}

// put keeps a lookup-bound connection for the next call, or closes it.
func (p *pool) put(conn *ldap.Conn, now time.Time) {
	if conn.IsClosing() {
		conn.Close()
		return
	}
	p.mu.Lock()
	if len(p.idle) < maxIdleConns {
		p.idle = append(p.idle, idleConn{conn: conn, since: now})
		conn = nil
	}
	p.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
}

// errRebind marks a connection left bound as someone else than the
// lookup account: it must not be pooled.
var errRebind = errors.New("connection not bound as the lookup account")

// withConn runs fn on a lookup-bound connection (pooled or new). fn
// reports whether it left the connection bound as the lookup account
// (keep); a network failure on a reused connection runs fn once more on
// a new one.
func (d *Directory) withConn(ctx context.Context, fn func(conn *ldap.Conn) (keep bool, err error)) error {
	if conn := d.pool.take(time.Now()); conn != nil {
		conn.SetTimeout(d.opTimeout(ctx))
		keep, err := fn(conn)
		if !isNetwork(err) {
			d.release(conn, keep && !errors.Is(err, ErrUnavailable))
			return err
		}
		conn.Close() // stale: the server dropped it; try a new one
	}
	conn, err := d.lookupConn(ctx)
	if err != nil {
		return err
	}
	d.pool.opened.Add(1)
	keep, err := fn(conn)
	d.release(conn, keep && !errors.Is(err, ErrUnavailable))
	return err
}

func (d *Directory) release(conn *ldap.Conn, keep bool) {
	if keep {
		d.pool.put(conn, time.Now())
		return
	}
	conn.Close()
}

// opTimeout is the operation timeout for ctx.
func (d *Directory) opTimeout(ctx context.Context) time.Duration {
	t := d.cfg.Timeout
	if dl, ok := ctx.Deadline(); ok {
		t = max(time.Millisecond, min(t, time.Until(dl)))
	}
	return t
}

// isNetwork reports a connection failure (not a server's answer).
func isNetwork(err error) bool {
	var le *ldap.Error
	return errors.As(err, &le) && le.ResultCode == ldap.ErrorNetwork
}
