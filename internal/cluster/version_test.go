package cluster

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/peerauth"
	"github.com/shardstore/shardstore/internal/release"
)

// TestHelloAcrossReleases: nodes of adjacent releases agree (a rolling
// upgrade), a protocol two away does not, and a hello without a protocol
// is a release before stamps (protocol 1).
func TestHelloAcrossReleases(t *testing.T) {
	top, err := Parse([]string{"http://n{1...2}:9000/d{1...2}"})
	if err != nil {
		t.Fatal(err)
	}
	mine := HelloFor(top, 0, 0, 0, "v2 bbb")
	if mine.Protocol != release.Protocol || !slices.Equal(mine.Features, release.Supported()) {
		t.Fatalf("hello %+v", mine)
	}
	old := HelloFor(top, 1, 0, 0, "v1 aaa")
	old.Protocol, old.Features = 0, nil // as a release before stamps sends it
	if d := mine.Differences(old); len(d) != 0 {
		t.Errorf("previous release refused: %v", d)
	}
	if s := old.Stamp(); s.Protocol != release.Unstamped || len(s.Features) != 0 {
		t.Errorf("old stamp %+v", s)
	}
	newer := HelloFor(top, 1, 0, 0, "v3 ccc")
	newer.Protocol = release.Protocol + 1
	if d := mine.Differences(newer); len(d) != 0 {
		t.Errorf("next release refused: %v", d)
	}
	far := HelloFor(top, 1, 0, 0, "v9 fff")
	far.Protocol = release.Protocol + 2
	d := mine.Differences(far)
	if len(d) != 1 || !strings.Contains(d[0], "v9 fff") || !strings.Contains(d[0], "protocol 4") {
		t.Errorf("protocol 4: %v", d)
	}
}

// TestReports asks the hellos of a current, an old, a starting and an
// absent node.
func TestReports(t *testing.T) {
	key := peerauth.Derive("root", "secret")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cur := Hello{Version: "v2", Protocol: release.Protocol, Features: release.Supported()}
	urls, _ := peerNodes(t, key, cur, Hello{Version: "v1"}, Hello{Version: "v2", Protocol: 2, Starting: true})
	urls = append(urls, "http://127.0.0.1:1")
	p := NewPeers(key, http.DefaultClient, urls, log)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := p.Reports(ctx, Hello{Node: "self", Version: "v2", Protocol: 2, Features: release.Supported()}, 2*time.Second)
	if len(got) != 5 || got[0].Node != "self" || !got[0].Up {
		t.Fatalf("%+v", got)
	}
	if !got[1].Up || got[1].Protocol != 2 || got[1].Node != urls[0] {
		t.Errorf("current: %+v", got[1])
	}
	if !got[2].Up || got[2].Protocol != release.Unstamped || got[2].Release != "v1" {
		t.Errorf("old: %+v", got[2])
	}
	if got[3].Up || got[3].Err == "" {
		t.Errorf("starting: %+v", got[3])
	}
	if got[4].Up || got[4].Err == "" {
		t.Errorf("absent: %+v", got[4])
	}
	_, st, changed := release.Plan(got, release.Gates{}, time.Now())
	if changed || len(st[0].Blocked) != 3 {
		t.Errorf("gates: %+v", st)
	}
}
