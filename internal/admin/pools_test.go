package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/shardstore/shardstore/internal/engine"
)

type poolEngine struct {
	fakeEngine
	started []string
}

func (p *poolEngine) StartDecommission(_ context.Context, pool string) (engine.DecomStatus, error) {
	if pool != "1" {
		return engine.DecomStatus{}, fmt.Errorf("%w: no pool %s", engine.ErrInvalidArgument, pool)
	}
	p.started = append(p.started, pool)
	return engine.DecomStatus{Pool: 1, State: engine.DecomDraining}, nil
}
func (p *poolEngine) CancelDecommission(_ context.Context, pool string) (engine.DecomStatus, error) {
	return engine.DecomStatus{Pool: 1, State: engine.DecomCanceled}, nil
}
func (p *poolEngine) DecommissionStatus(context.Context) ([]engine.DecomStatus, error) {
	return []engine.DecomStatus{{Pool: 1, State: engine.DecomDraining, Versions: 3}}, nil
}

func (*poolEngine) Pools(context.Context) []engine.PoolInfo {
	return []engine.PoolInfo{{Index: 1, ID: "a", Drives: 4, Sets: 1, SetSize: 4, Parity: 2}, {Index: 2, ID: "b", Drives: 8, Sets: 1, SetSize: 8, Parity: 4}}
}

func TestPoolStatus(t *testing.T) {
	var asked []string
	authorize := func(r *http.Request, action string, _ func(Actor) bool) (Actor, error) {
		asked = append(asked, action)
		if r.Header.Get("X-Test-Root") != "yes" {
			return Actor{}, errors.New("not root")
		}
		return Actor{Name: "root"}, nil
	}
	for _, tc := range []struct {
		eng    Engine
		method string
		root   bool
		status int
	}{
		{&poolEngine{}, "GET", true, 200},
		{&poolEngine{}, "GET", false, 403},
		{&poolEngine{}, "POST", true, 405},
		{&fakeEngine{}, "GET", true, 501},
	} {
		asked = nil
		srv := httptest.NewServer(NewHandler(tc.eng, authorize, nil))
		req, _ := http.NewRequest(tc.method, srv.URL+Prefix+"pool/status", nil)
		if tc.root {
			req.Header.Set("X-Test-Root", "yes")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var reply PoolStatusReply
		if resp.StatusCode == 200 {
			if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil || len(reply.Pools) != 2 || reply.Pools[1].SetSize != 8 {
				t.Errorf("pool status reply %+v, %v", reply, err)
			}
		}
		resp.Body.Close()
		srv.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s pool/status (root %v, %T): %d, want %d", tc.method, tc.root, tc.eng, resp.StatusCode, tc.status)
		}
		if tc.status != 405 && (len(asked) != 1 || asked[0] != "admin:ServerInfo") {
			t.Errorf("actions asked %v, want [admin:ServerInfo]", asked)
		}
	}
}

func TestDecommissionCalls(t *testing.T) {
	pe := &poolEngine{}
	var asked []string
	srv := httptest.NewServer(NewHandler(pe, func(r *http.Request, action string, _ func(Actor) bool) (Actor, error) {
		asked = append(asked, action)
		return Actor{Name: "root"}, nil
	}, nil))
	defer srv.Close()
	for _, tc := range []struct {
		method, path string
		status       int
		action       string
	}{
		{"POST", "pool/decommission/start?pool=1", 200, "admin:Decommission"},
		{"POST", "pool/decommission/start?pool=9", 400, "admin:Decommission"},
		{"POST", "pool/decommission/start", 400, "admin:Decommission"},
		{"POST", "pool/decommission/start?pool=%00%ff", 400, "admin:Decommission"},
		{"GET", "pool/decommission/start?pool=1", 405, ""},
		{"POST", "pool/decommission/cancel?pool=1", 200, "admin:Decommission"},
		{"GET", "pool/decommission/status", 200, "admin:ServerInfo"},
	} {
		asked = nil
		req, _ := http.NewRequest(tc.method, srv.URL+Prefix+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
		}
		if tc.action != "" && (len(asked) != 1 || asked[0] != tc.action) {
			t.Errorf("%s %s asked %v, want %s", tc.method, tc.path, asked, tc.action)
		}
	}
	if len(pe.started) != 1 {
		t.Errorf("decommissions started: %v, want one", pe.started)
	}
}

// expandingEngine is a poolEngine in the middle of an expansion.
type expandingEngine struct{ poolEngine }

func (*expandingEngine) Expansion(context.Context) engine.Expansion {
	return engine.Expansion{Pools: 2, NewKeyPools: 1, State: engine.ExpansionUnderWay}
}

// TestPoolStatusExpansion: pool/status carries the engine's expansion
// state when it has one, and none when it cannot say.
func TestPoolStatusExpansion(t *testing.T) {
	allow := func(*http.Request, string, func(Actor) bool) (Actor, error) { return Actor{Name: "root"}, nil }
	for _, tc := range []struct {
		eng  Engine
		want *engine.Expansion
	}{
		{&expandingEngine{}, &engine.Expansion{Pools: 2, NewKeyPools: 1, State: engine.ExpansionUnderWay}},
		{&poolEngine{}, nil},
	} {
		srv := httptest.NewServer(NewHandler(tc.eng, allow, nil))
		resp, err := http.Get(srv.URL + Prefix + "pool/status")
		if err != nil {
			t.Fatal(err)
		}
		var reply PoolStatusReply
		err = json.NewDecoder(resp.Body).Decode(&reply)
		resp.Body.Close()
		srv.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%T: %d, %v", tc.eng, resp.StatusCode, err)
		}
		if (reply.Expansion == nil) != (tc.want == nil) || reply.Expansion != nil && *reply.Expansion != *tc.want {
			t.Errorf("%T: expansion %+v, want %+v", tc.eng, reply.Expansion, tc.want)
		}
	}
}
