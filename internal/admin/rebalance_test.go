package admin

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/shardstore/shardstore/internal/engine"
)

type rebalEngine struct {
	poolEngine
	threshold float64
	throttle  engine.MoveThrottle
}

func (r *rebalEngine) StartRebalance(_ context.Context, t float64) (engine.RebalStatus, error) {
	r.threshold = t
	return engine.RebalStatus{State: engine.RebalRunning, Threshold: t}, nil
}
func (r *rebalEngine) CancelRebalance(context.Context) (engine.RebalStatus, error) {
	return engine.RebalStatus{}, engine.ErrInvalidArgument
}
func (r *rebalEngine) RebalanceStatus(context.Context) (engine.RebalStatus, error) {
	return engine.RebalStatus{State: engine.RebalComplete}, nil
}
func (r *rebalEngine) MoveThrottle(context.Context) (engine.MoveThrottle, error) {
	return r.throttle, nil
}
func (r *rebalEngine) SetMoveThrottle(_ context.Context, th engine.MoveThrottle) (engine.MoveThrottle, error) {
	r.throttle = th
	return th, nil
}

// TestRebalanceRoutes: each rebalance and throttle call asks the one
// access decision for its action, refuses a caller it denies, checks its
// method, and answers 400 for a bad threshold or limit (the engine is
// not called), 501 for an engine without pools; adaptive=on|off alone
// keeps the limits.
func TestRebalanceRoutes(t *testing.T) {
	var asked []string
	authorize := func(r *http.Request, action string, _ func(Actor) bool) (Actor, error) {
		asked = append(asked, action)
		if r.Header.Get("X-Test-Root") != "yes" {
			return Actor{}, errors.New("not root")
		}
		return Actor{Name: "root"}, nil
	}
	for _, tc := range []struct {
		eng          Engine
		method, path string
		root         bool
		status       int
		action       string
	}{
		{&rebalEngine{}, "GET", "pool/rebalance/status", true, 200, "admin:ServerInfo"},
		{&rebalEngine{}, "GET", "pool/rebalance/status", false, 403, "admin:ServerInfo"},
		{&rebalEngine{}, "POST", "pool/rebalance/status", true, 405, ""},
		{&rebalEngine{}, "POST", "pool/rebalance/start?threshold=10%25", true, 200, "admin:Rebalance"},
		{&rebalEngine{}, "POST", "pool/rebalance/start?threshold=150%25", true, 400, "admin:Rebalance"},
		{&rebalEngine{}, "POST", "pool/rebalance/start?threshold=NaN", true, 400, "admin:Rebalance"},
		{&rebalEngine{}, "POST", "pool/rebalance/start", false, 403, "admin:Rebalance"},
		{&rebalEngine{}, "GET", "pool/rebalance/start", true, 405, ""},
		{&rebalEngine{}, "POST", "pool/rebalance/cancel", true, 400, "admin:Rebalance"},
		{&rebalEngine{}, "GET", "pool/throttle", true, 200, "admin:ServerInfo"},
		{&rebalEngine{}, "POST", "pool/throttle?bandwidth=64MiB&objects=10", true, 200, "admin:Rebalance"},
		{&rebalEngine{}, "POST", "pool/throttle?bandwidth=-1", true, 400, "admin:Rebalance"},
		{&rebalEngine{}, "POST", "pool/throttle?objects=1e9", true, 400, "admin:Rebalance"},
		{&rebalEngine{throttle: engine.MoveThrottle{Bandwidth: 5, Objects: 2}}, "POST", "pool/throttle?adaptive=off", true, 200, "admin:Rebalance"},
		{&rebalEngine{throttle: engine.MoveThrottle{Bandwidth: 5, Adaptive: "off"}}, "POST", "pool/throttle?adaptive=%20ON&bandwidth=1K", true, 200, "admin:Rebalance"},
		{&rebalEngine{}, "POST", "pool/throttle?adaptive=maybe", true, 400, "admin:Rebalance"},
		{&rebalEngine{}, "POST", "pool/throttle?adaptive=on%00", true, 400, "admin:Rebalance"},
		{&rebalEngine{}, "POST", "pool/throttle?adaptive=1", true, 400, "admin:Rebalance"},
		{&rebalEngine{throttle: engine.MoveThrottle{Bandwidth: 5}}, "POST", "pool/throttle?adaptive=off&bandwidth=-1", true, 400, "admin:Rebalance"},
		{&rebalEngine{}, "POST", "pool/throttle", false, 403, "admin:Rebalance"},
		{&fakeEngine{}, "GET", "pool/rebalance/status", true, 501, "admin:ServerInfo"},
	} {
		asked = nil
		srv := httptest.NewServer(NewHandler(tc.eng, authorize, nil))
		req, _ := http.NewRequest(tc.method, srv.URL+Prefix+tc.path, nil)
		if tc.root {
			req.Header.Set("X-Test-Root", "yes")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		srv.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s (root %v): %d, want %d", tc.method, tc.path, tc.root, resp.StatusCode, tc.status)
		}
		if tc.action != "" && (len(asked) != 1 || asked[0] != tc.action) {
			t.Errorf("%s %s: actions asked %v, want [%s]", tc.method, tc.path, asked, tc.action)
		}
		if re, ok := tc.eng.(*rebalEngine); ok && tc.status == 200 {
			if tc.path == "pool/rebalance/start?threshold=10%25" && re.threshold != 0.1 {
				t.Errorf("threshold %v passed, want 0.1", re.threshold)
			}
			if tc.path == "pool/throttle?bandwidth=64MiB&objects=10" && re.throttle != (engine.MoveThrottle{Bandwidth: 64 << 20, Objects: 10}) {
				t.Errorf("throttle %+v passed", re.throttle)
			}
			// adaptive alone keeps the limits; a limit given sets both.
			if tc.path == "pool/throttle?adaptive=off" && re.throttle != (engine.MoveThrottle{Bandwidth: 5, Objects: 2, Adaptive: "off"}) {
				t.Errorf("throttle %+v passed, want the limits kept and adaptive off", re.throttle)
			}
			if tc.path == "pool/throttle?adaptive=%20ON&bandwidth=1K" && re.throttle != (engine.MoveThrottle{Bandwidth: 1024, Adaptive: "on"}) {
				t.Errorf("throttle %+v passed, want 1 KiB/s, no object limit, adaptive on", re.throttle)
			}
		}
	}
}
