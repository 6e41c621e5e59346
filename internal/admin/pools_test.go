package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/shardstore/shardstore/internal/engine"
)

type poolEngine struct{ fakeEngine }

func (poolEngine) Pools(context.Context) []engine.PoolInfo {
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
