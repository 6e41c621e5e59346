package admin

import (
	"context"
	"errors"
	"net/http"

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
// pool/rebalance/cancel and pool/throttle?bandwidth=B&objects=N
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
			var th engine.MoveThrottle
			if th.Bandwidth, err = engine.ParseRate(q.Get("bandwidth")); err == nil {
				if th.Objects, err = engine.ParseObjectRate(q.Get("objects")); err == nil {
					out, err = rb.SetMoveThrottle(r.Context(), th)
				}
			}
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
