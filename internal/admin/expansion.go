package admin

import (
	"context"
	"errors"
	"net/http"

	"github.com/shardstore/shardstore/internal/engine"
)

// ExpansionCanceler is what POST pool/expansion/cancel needs of the
// object store (docs/pools.md, "Canceling an expansion"). An Engine
// without it answers 501.
type ExpansionCanceler interface {
	CancelExpansion(ctx context.Context) (engine.ExpansionCancel, error)
}

// routeExpansion routes POST pool/expansion/cancel (admin:Decommission:
// it takes pools out of the deployment, as a decommission does), then
// the rebalance calls.
func (h *Handler) routeExpansion(method, path string) (*call, int, string, bool) {
	if path != "pool/expansion/cancel" {
		return h.routeRebalance(method, path)
	}
	if method != http.MethodPost {
		return nil, http.StatusMethodNotAllowed, "use POST for " + path, true
	}
	return &call{action: "admin:Decommission", serve: func(w http.ResponseWriter, r *http.Request, _ Actor) {
		c, ok := h.eng.(ExpansionCanceler)
		if !ok {
			writeJSONError(w, http.StatusNotImplemented, "this server has no server pools")
			return
		}
		out, err := c.CancelExpansion(r.Context())
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
