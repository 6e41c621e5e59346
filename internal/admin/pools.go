package admin

import (
	"context"
	"errors"
	"net/http"

	"github.com/shardstore/shardstore/internal/engine"
)

// Pools is what the pool calls need of the object store: the server
// pools with their geometry and free space, and their decommissions
// (docs/pools.md). An Engine without it answers the pool calls 501.
type Pools interface {
	Pools(ctx context.Context) []engine.PoolInfo
	StartDecommission(ctx context.Context, pool string) (engine.DecomStatus, error)
	CancelDecommission(ctx context.Context, pool string) (engine.DecomStatus, error)
	DecommissionStatus(ctx context.Context) ([]engine.DecomStatus, error)
}

// PoolStatusReply is the body of GET pool/status (and of `admin pool
// status --json`).
type PoolStatusReply struct {
	Pools         []engine.PoolInfo    `json:"pools"`
	Decommissions []engine.DecomStatus `json:"decommissions,omitempty"`
	// Expansion says whether the last pools appended take new keys yet
	// (absent from an engine that cannot say).
	Expansion *engine.Expansion `json:"expansion,omitempty"`
}

// Expander is what pool/status needs to report an expansion under way.
type Expander interface {
	Expansion(ctx context.Context) engine.Expansion
}

// routePools routes the pool calls: GET pool/status and GET
// pool/decommission/status (reads, admin:ServerInfo); POST
// pool/decommission/start?pool=N and .../cancel?pool=N
// (admin:Decommission; N is a pool's 1-based position or its id).
func (h *Handler) routePools(method, path string) (*call, int, string, bool) {
	switch path {
	case "pool/status", "pool/decommission/status":
		if method != http.MethodGet {
			return nil, http.StatusMethodNotAllowed, "use GET for " + path, true
		}
		return &call{action: "admin:ServerInfo", serve: h.withPools(func(w http.ResponseWriter, r *http.Request, p Pools) {
			reply := PoolStatusReply{Pools: p.Pools(r.Context())}
			if x, ok := p.(Expander); ok {
				st := x.Expansion(r.Context())
				reply.Expansion = &st
			}
			st, err := p.DecommissionStatus(r.Context())
			if err != nil {
				writeJSONError(w, http.StatusServiceUnavailable, "decommission state: "+err.Error())
				return
			}
			reply.Decommissions = st
			writeJSON(w, http.StatusOK, reply)
		})}, 0, "", true
	case "pool/decommission/start", "pool/decommission/cancel":
		if method != http.MethodPost {
			return nil, http.StatusMethodNotAllowed, "use POST for " + path, true
		}
		return &call{action: "admin:Decommission", serve: h.withPools(func(w http.ResponseWriter, r *http.Request, p Pools) {
			pool := r.URL.Query().Get("pool")
			if pool == "" {
				writeJSONError(w, http.StatusBadRequest, "say which pool: ?pool=N (its position on the command line, from 1) or its id")
				return
			}
			do := p.StartDecommission
			if path == "pool/decommission/cancel" {
				do = p.CancelDecommission
			}
			st, err := do(r.Context(), pool)
			switch {
			case errors.Is(err, engine.ErrInvalidArgument):
				writeJSONError(w, http.StatusBadRequest, err.Error())
			case err != nil:
				writeJSONError(w, http.StatusServiceUnavailable, err.Error())
			default:
				writeJSON(w, http.StatusOK, st)
			}
		})}, 0, "", true
	}
	return h.routeExpansion(method, path)
}

// withPools serves a pool call with the engine's pools, or 501.
func (h *Handler) withPools(serve func(w http.ResponseWriter, r *http.Request, p Pools)) func(w http.ResponseWriter, r *http.Request, _ Actor) {
	return func(w http.ResponseWriter, r *http.Request, _ Actor) {
		p, ok := h.eng.(Pools)
		if !ok {
			writeJSONError(w, http.StatusNotImplemented, "this server has no server pools")
			return
		}
		serve(w, r, p)
	}
}
