package cluster

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/peerauth"
)

// peerNodes serves a PeerServer per hello on loopback and returns their
// URLs and servers.
func peerNodes(t *testing.T, key peerauth.Key, hellos ...Hello) ([]string, []*PeerServer) {
	t.Helper()
	var urls []string
	var svs []*PeerServer
	for _, h := range hellos {
		sv := NewPeerServer(key, h)
		ts := httptest.NewServer(sv)
		t.Cleanup(ts.Close)
		urls = append(urls, ts.URL)
		svs = append(svs, sv)
	}
	return urls, svs
}

func TestDeploymentExists(t *testing.T) {
	key := peerauth.Derive("root", "secret")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := func() context.Context {
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		t.Cleanup(cancel)
		return c
	}

	// Every other node answers blank: a new deployment.
	urls, _ := peerNodes(t, key, Hello{Starting: true}, Hello{})
	if exists, err := NewPeers(key, http.DefaultClient, urls, log).DeploymentExists(ctx(), nil); err != nil || exists {
		t.Fatalf("all blank: %v, %v", exists, err)
	}

	// One node knows the deployment (even one still starting): it
	// exists, without waiting for a node that does not answer.
	urls, _ = peerNodes(t, key, Hello{}, Hello{Deployment: "d-1", Starting: true})
	urls = append(urls, "http://127.0.0.1:1")
	if exists, err := NewPeers(key, http.DefaultClient, urls, log).DeploymentExists(ctx(), nil); err != nil || !exists {
		t.Fatalf("one formatted: %v, %v", exists, err)
	}

	// Blank nodes that answer and one that does not: no guess, wait.
	urls, _ = peerNodes(t, key, Hello{})
	urls = append(urls, "http://127.0.0.1:1")
	short, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if exists, err := NewPeers(key, http.DefaultClient, urls, log).DeploymentExists(short, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a node silent: %v, %v; want to keep waiting", exists, err)
	}

	// A wrong key gets no answer, so it cannot make a node believe
	// anything.
	urls, _ = peerNodes(t, key, Hello{Deployment: "d-1"})
	short2, cancel2 := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel2()
	if exists, err := NewPeers(peerauth.Derive("root", "other"), http.DefaultClient, urls, log).DeploymentExists(short2, nil); exists || err == nil {
		t.Fatalf("wrong key: %v, %v", exists, err)
	}
}

func TestAwaitWaitsForStartingNodes(t *testing.T) {
	key := peerauth.Derive("root", "secret")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	top, _ := Parse([]string{"http://127.0.0.1:{9000...9001}/d{1...2}"})
	mine := HelloFor(top, 0, 0, 0, "v1")
	theirs := HelloFor(top, 1, 0, 0, "v1")
	theirs.Starting = true
	urls, svs := peerNodes(t, key, theirs)
	p := NewPeers(key, http.DefaultClient, urls, log)
	short, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
	defer cancel()
	if err := p.Await(short, mine, true, 0, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Await with the other node starting: %v, want to wait", err)
	}
	svs[0].SetOpen()
	svs[0].SetDeployment("d-1")
	ctx, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if err := p.Await(ctx, mine, true, 0, nil); err != nil {
		t.Fatalf("Await once open: %v", err)
	}
	// A node of another deployment is refused by name.
	mine.Deployment = "d-2"
	err := p.Await(ctx, mine, true, 0, nil)
	if err == nil || !strings.Contains(err.Error(), "deployment d-1, this node's to d-2") {
		t.Fatalf("another deployment: %v", err)
	}
}
