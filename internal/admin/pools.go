package admin

import (
	"context"
	"net/http"

	"github.com/shardstore/shardstore/internal/engine"
)

// Pools is what the pool calls need of the object store: the server
// pools with their geometry and free space (docs/pools.md). An Engine
// without it answers the pool calls 501.
type Pools interface {
	Pools(ctx context.Context) []engine.PoolInfo
}

// PoolStatusReply is the body of GET pool/status (and of `admin pool
// status --json`).
type PoolStatusReply struct {
	Pools []engine.PoolInfo `json:"pools"`
}

// routePools routes the pool calls: GET pool/status, a read like status
// (admin:ServerInfo).
func (h *Handler) routePools(method, path string) (*call, int, string, bool) {
	if path != "pool/status" {
		return nil, 0, "", false
	}
	if method != http.MethodGet {
		return nil, http.StatusMethodNotAllowed, "use GET for pool/status", true
	}
	return &call{action: "admin:ServerInfo", serve: func(w http.ResponseWriter, r *http.Request, _ Actor) {
		p, ok := h.eng.(Pools)
		if !ok {
			writeJSONError(w, http.StatusNotImplemented, "this server has no pool status")
			return
		}
		writeJSON(w, http.StatusOK, PoolStatusReply{Pools: p.Pools(r.Context())})
	}}, 0, "", true
}
