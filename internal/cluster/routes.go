package cluster

import (
	"context"
	"fmt"
	"net"
	"strings"
)

// RoutesEnv names the environment variable that routes connections to
// other nodes through other addresses: "ADDR=VIA,ADDR=VIA", each a
// host:port. A node then dials VIA whenever it would dial ADDR (drive,
// lock, peer and consensus connections alike). The cluster tests use it
// to put a fault-injecting proxy between every pair of nodes (latency,
// partitions); an operator may use it where a node is reached through a
// forwarded port.
const RoutesEnv = "SHARDSTORE_PEER_ROUTES"

// Routes maps a node address (host:port) to the address dialled
// instead.
type Routes map[string]string

// ParseRoutes reads the RoutesEnv syntax. An empty string is no routes.
func ParseRoutes(s string) (Routes, error) {
	r := Routes{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		from, via, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("%s: %q is not ADDR=VIA", RoutesEnv, item)
		}
		for _, a := range []string{from, via} {
			if _, _, err := net.SplitHostPort(a); err != nil {
				return nil, fmt.Errorf("%s: %q: %w", RoutesEnv, a, err)
			}
		}
		if _, dup := r[from]; dup {
			return nil, fmt.Errorf("%s: %s routed twice", RoutesEnv, from)
		}
		r[from] = via
	}
	return r, nil
}

// Dialer returns a dial function (as http.Transport.DialContext takes)
// that dials through d and replaces a routed address by its route.
func (r Routes) Dialer(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if via, ok := r[addr]; ok {
			addr = via
		}
		return d.DialContext(ctx, network, addr)
	}
}
