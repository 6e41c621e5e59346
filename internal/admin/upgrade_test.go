package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/shardstore/shardstore/internal/release"
)

// TestUpgradeStatusCall: cluster/upgrade-status asks the access decision
// for admin:ServerInfo before anything, answers GET only, and 501 where
// the server reports none.
func TestUpgradeStatusCall(t *testing.T) {
	var asked []string
	h := NewHandler(&fakeEngine{}, func(r *http.Request, action string, _ func(Actor) bool) (Actor, error) {
		asked = append(asked, action)
		if r.Header.Get("X-Test-Root") != "yes" {
			return Actor{}, errors.New("not allowed")
		}
		return Actor{Name: "root"}, nil
	}, nil)
	calls := 0
	h.Upgrade = func(context.Context) release.UpgradeStatus {
		calls++
		return release.UpgradeStatus{Answering: "n1", Protocol: release.Protocol,
			Nodes: []release.NodeReport{{Node: "n1", Up: true, Stamp: release.Current("v")}}}
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	do := func(method string, root bool) (*http.Response, release.UpgradeStatus) {
		req, _ := http.NewRequest(method, srv.URL+Prefix+"cluster/upgrade-status", nil)
		if root {
			req.Header.Set("X-Test-Root", "yes")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st release.UpgradeStatus
		_ = json.NewDecoder(resp.Body).Decode(&st)
		return resp, st
	}
	if resp, _ := do("GET", false); resp.StatusCode != 403 || calls != 0 {
		t.Fatalf("denied caller: %d, status asked %d times", resp.StatusCode, calls)
	}
	if asked[0] != "admin:ServerInfo" {
		t.Fatalf("asked for %v", asked)
	}
	if resp, _ := do("POST", true); resp.StatusCode != 405 {
		t.Fatalf("POST: %d", resp.StatusCode)
	}
	resp, st := do("GET", true)
	if resp.StatusCode != 200 || st.Answering != "n1" || len(st.Nodes) != 1 || st.Nodes[0].Protocol != release.Protocol {
		t.Fatalf("GET: %d %+v", resp.StatusCode, st)
	}
	h.Upgrade = nil
	if resp, _ := do("GET", true); resp.StatusCode != 501 {
		t.Fatalf("without a status: %d", resp.StatusCode)
	}
}
