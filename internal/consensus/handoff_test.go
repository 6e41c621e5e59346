package consensus

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shardstore/shardstore/internal/peerauth"
)

// TestHandOff: the leader hands leadership to another member, which
// every member then names; a follower has nothing to hand off; the
// group takes changes through the new leader; and the raft streams
// carried the stamp the Stamp option adds.
func TestHandOff(t *testing.T) {
	g := newTestGroup(t, 3)
	ctx := ctxT(t, 60*time.Second)
	l := g.leader()
	if _, err := g.nodes[l].Put(ctx, "config", "k", 0, []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if led, err := g.nodes[(l+1)%3].HandOff(ctx); led || err != nil {
		t.Fatalf("follower hand-off: %v %v", led, err)
	}
	led, err := g.nodes[l].HandOff(ctx)
	if !led || err != nil {
		t.Fatalf("leader hand-off: %v %v", led, err)
	}
	if g.nodes[l].IsLeader() {
		t.Fatal("still the leader after handing off")
	}
	next := g.leader()
	if next == l {
		t.Fatalf("node %d leads again", l+1)
	}
	e, err := g.nodes[l].Get(ctx, "config", "k", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.nodes[l].Put(ctx, "config", "k", e.Index, []byte("v2")); err != nil {
		t.Fatalf("change through the old leader after the hand-off: %v", err)
	}
}

// TestStreamStamp: the upgrade request of a raft connection carries what
// Options.Stamp adds.
func TestStreamStamp(t *testing.T) {
	seen := make(chan string, 1)
	s := newStreamLayer("127.0.0.1:1", g0key(), nil)
	s.stamp = func(h http.Header) { h.Set("X-Test-Stamp", "yes") }
	srv := newStampRecorder(t, seen)
	if _, err := s.Dial(srv, time.Second); err == nil {
		t.Fatal("dial to a recorder that refuses the upgrade succeeded")
	}
	if got := <-seen; got != "yes" {
		t.Fatalf("upgrade request stamped %q", got)
	}
}

func g0key() peerauth.Key { return peerauth.Derive("root", "secret") }

// newStampRecorder serves one HTTP answer (400) per request and sends
// the request's X-Test-Stamp to seen; it returns its address.
func newStampRecorder(t *testing.T, seen chan<- string) raft.ServerAddress {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case seen <- r.Header.Get("X-Test-Stamp"):
		default:
		}
		http.Error(w, "no", http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	return raft.ServerAddress(strings.TrimPrefix(srv.URL, "http://"))
}
