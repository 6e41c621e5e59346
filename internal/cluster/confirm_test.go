package cluster

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shardstore/shardstore/internal/peerauth"
)

// Confirm succeeds only when every running node applied the change: a
// node not serving yet (no notice handler) or whose handler failed is
// named in the error; a node that refuses the connection is stopped and
// counts as done.
func TestPeersConfirm(t *testing.T) {
	key := peerauth.Derive("root", "secret")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	urls, svs := peerNodes(t, key, Hello{}, Hello{}, Hello{})
	var applied atomic.Int32
	ok := func(kind, name string) error {
		if kind != "config" || name != "pools/decommission" {
			return errors.New("wrong notice " + kind + " " + name)
		}
		applied.Add(1)
		return nil
	}
	svs[0].OnNotify(ok)
	svs[1].OnNotify(ok)
	// svs[2] is not serving yet: no handler.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stopped := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	p := NewPeers(key, http.DefaultClient, append(urls, stopped), log)

	err = p.Confirm(context.Background(), "config", "pools/decommission")
	if err == nil || !strings.Contains(err.Error(), urls[2]) || strings.Contains(err.Error(), urls[0]) || strings.Contains(err.Error(), stopped) {
		t.Fatalf("a starting node: %v, want an error naming %s only", err, urls[2])
	}
	svs[2].OnNotify(func(string, string) error { return errors.New("cannot read the group") })
	if err := p.Confirm(context.Background(), "config", "pools/decommission"); err == nil || !strings.Contains(err.Error(), urls[2]) {
		t.Fatalf("a node whose re-read failed: %v, want an error naming %s", err, urls[2])
	}
	svs[2].OnNotify(ok)
	applied.Store(0)
	if err := p.Confirm(context.Background(), "config", "pools/decommission"); err != nil {
		t.Fatalf("every running node applied it: %v", err)
	}
	if n := applied.Load(); n != 3 {
		t.Fatalf("%d nodes applied the notice, want 3", n)
	}
}
