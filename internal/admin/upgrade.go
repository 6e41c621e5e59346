package admin

import (
	"net/http"
)

// routeUpgrade serves cluster/upgrade-status: every node's release,
// internal protocol and features, and which feature gates are active and
// what blocks the rest (docs/upgrades.md). It needs admin:ServerInfo,
// as status does.
func (h *Handler) routeUpgrade(method, path string) (*call, int, string, bool) {
	if path != "cluster/upgrade-status" {
		return nil, 0, "", false
	}
	if method != http.MethodGet {
		return nil, http.StatusMethodNotAllowed, "use GET for cluster/upgrade-status", true
	}
	if h.Upgrade == nil {
		return nil, http.StatusNotImplemented, "this server does not report an upgrade status", true
	}
	return &call{action: "admin:ServerInfo", serve: func(w http.ResponseWriter, r *http.Request, _ Actor) {
		writeJSON(w, http.StatusOK, h.Upgrade(r.Context()))
	}}, 0, "", true
}
