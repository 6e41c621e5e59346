package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/shardstore/shardstore/internal/engine"
)

// Rebalancer is what the rebalance and throttle calls need of the object
// store (docs/pools.md). An Engine without it answers them 501.
type Rebalancer interface {
	StartRebalance(ctx context.Context, threshold float64) (engine.RebalStatus, error)
	CancelRebalance(ctx context.Context) (engine.RebalStatus, error)
	RebalanceStatus(ctx context.Context) (engine.RebalStatus, error)
	MoveThrottle(ctx context.Context) (engine.MoveThrottle, error)
	SetMoveThrottle(ctx context.Context, th engine.MoveThrottle) (engine.MoveThrottle, error)
}

// routeRebalance routes GET pool/rebalance/status and GET pool/throttle
// (admin:ServerInfo), POST pool/rebalance/start?threshold=T,
// pool/rebalance/cancel and pool/throttle?bandwidth=B&objects=N&adaptive=on|off
// (admin:Rebalance).
func (h *Handler) routeRebalance(method, path string) (*call, int, string, bool) {
	want := http.MethodPost
	action := "admin:Rebalance"
	switch {
	case path == "pool/rebalance/status" || path == "pool/throttle" && method == http.MethodGet:
		want, action = http.MethodGet, "admin:ServerInfo"
	case path == "pool/rebalance/start" || path == "pool/rebalance/cancel" || path == "pool/throttle":
	default:
		return nil, 0, "", false
	}
	if method != want {
		return nil, http.StatusMethodNotAllowed, "use " + want + " for " + path, true
	}
	return &call{action: action, serve: func(w http.ResponseWriter, r *http.Request, _ Actor) {
		rb, ok := h.eng.(Rebalancer)
		if !ok {
			writeJSONError(w, http.StatusNotImplemented, "this server has no server pools")
			return
		}
		var (
			out any
			err error
		)
		q := r.URL.Query()
		switch {
		case path == "pool/rebalance/status":
			out, err = rb.RebalanceStatus(r.Context())
		case path == "pool/rebalance/cancel":
			out, err = rb.CancelRebalance(r.Context())
		case path == "pool/rebalance/start":
			var t float64
			if t, err = engine.ParseThreshold(q.Get("threshold")); err == nil {
				out, err = rb.StartRebalance(r.Context(), t)
			}
		case method == http.MethodGet:
			out, err = rb.MoveThrottle(r.Context())
		default:
			out, err = setThrottle(r.Context(), rb, q)
		}
		switch {
		case errors.Is(err, engine.ErrInvalidArgument):
			writeJSONError(w, http.StatusBadRequest, err.Error())
		case err != nil:
			writeJSONError(w, http.StatusServiceUnavailable, err.Error())
		default:
			writeJSON(w, http.StatusOK, out)
		}
	}}, 0, "", true
}

// setThrottle sets the move throttle from a query: bandwidth and objects
// together (either absent is no limit) unless neither is given, when the
// limits stay as they are; adaptive (on or off) when given, else as it is.
func setThrottle(ctx context.Context, rb Rebalancer, q url.Values) (engine.MoveThrottle, error) {
	var th engine.MoveThrottle
	bw, err := engine.ParseRate(q.Get("bandwidth"))
	if err != nil {
		return th, err
	}
	objs, err := engine.ParseObjectRate(q.Get("objects"))
	if err != nil {
		return th, err
	}
	a, err := engine.ParseAdaptive(q.Get("adaptive"))
	if err != nil {
		return th, err
	}
	if th, err = rb.MoveThrottle(ctx); err != nil {
		return th, err
	}
	if q.Has("bandwidth") || q.Has("objects") {
		th.Bandwidth, th.Objects = bw, objs
	}
	if a != "" {
		th.Adaptive = a
	}
	return rb.SetMoveThrottle(ctx, th)
}
