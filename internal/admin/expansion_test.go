package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/engine"
)

// cancelEngine cancels an expansion once; then there is none.
type cancelEngine struct {
	fakeEngine
	canceled int
	fail     error
}

func (c *cancelEngine) CancelExpansion(context.Context) (engine.ExpansionCancel, error) {
	if c.fail != nil {
		return engine.ExpansionCancel{}, c.fail
	}
	if c.canceled > 0 {
		return engine.ExpansionCancel{}, fmt.Errorf("%w: no expansion is under way", engine.ErrInvalidArgument)
	}
	c.canceled++
	return engine.ExpansionCancel{Pools: 1, Canceled: []int{2}, Leaving: []string{"http://n5:9000"}}, nil
}

// TestExpansionCancelCall: POST pool/expansion/cancel goes through the
// access decision as admin:Decommission, answers what was canceled,
// 400 with the engine's reason once there is nothing to cancel, 503 on
// another failure, 405 for another method, 403 when refused and 501
// from an engine without pools; a refused caller cancels nothing.
func TestExpansionCancelCall(t *testing.T) {
	var asked []string
	authorize := func(r *http.Request, action string, _ func(Actor) bool) (Actor, error) {
		asked = append(asked, action)
		if r.Header.Get("X-Test-Root") != "yes" {
			return Actor{}, errors.New("not root")
		}
		return Actor{Name: "root"}, nil
	}
	ce := &cancelEngine{}
	for _, tc := range []struct {
		eng    Engine
		method string
		root   bool
		status int
		body   string
	}{
		{ce, "POST", false, 403, ""},
		{ce, "GET", true, 405, ""},
		{ce, "POST", true, 200, `"canceled":[2]`},
		{ce, "POST", true, 400, "no expansion is under way"},
		{&cancelEngine{fail: errors.New("consensus: no leader")}, "POST", true, 503, "no leader"},
		{&fakeEngine{}, "POST", true, 501, ""},
	} {
		asked = nil
		srv := httptest.NewServer(NewHandler(tc.eng, authorize, nil))
		req, _ := http.NewRequest(tc.method, srv.URL+Prefix+"pool/expansion/cancel", nil)
		if tc.root {
			req.Header.Set("X-Test-Root", "yes")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		_ = json.NewDecoder(resp.Body).Decode(&raw)
		var compact bytes.Buffer
		if json.Compact(&compact, raw) == nil {
			raw = compact.Bytes()
		}
		resp.Body.Close()
		srv.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(raw), tc.body) {
			t.Errorf("%s (root %v, %T): %d %s, want %d %q", tc.method, tc.root, tc.eng, resp.StatusCode, raw, tc.status, tc.body)
		}
		if tc.status != 405 && (len(asked) != 1 || asked[0] != "admin:Decommission") {
			t.Errorf("actions asked %v, want [admin:Decommission]", asked)
		}
	}
	if ce.canceled != 1 {
		t.Errorf("canceled %d times, want 1 (a refused caller cancels nothing)", ce.canceled)
	}
}
