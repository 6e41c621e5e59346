package admin

import (
	"context"
	"net/http"

	"github.com/shardstore/shardstore/internal/iam"
)

// LDAPMappings are the directory DN-to-policy mappings (iam.Store has
// them), the calls of `shardstore admin idp ldap policy`:
//
//	GET idp/ldap/policies[?dn=DN][&policy=P]   (admin:GetPolicy)
//	POST idp/ldap/policies/attach|detach       (admin:AttachUserOrGroupPolicy)
//
// with the body of policies/attach: the DN as "user" or "group".
type LDAPMappings interface {
	AttachLDAPPolicies(ctx context.Context, actor, dn string, policies []string, attach bool) error
	LDAPPolicies(dn, policy string) ([]iam.LDAPMapping, error)
}

func (h *Handler) idpCall(method string, p []string, r *http.Request) *call {
	m, ok := h.ids.(LDAPMappings)
	if !ok || len(p) < 3 || p[1] != "ldap" || p[2] != "policies" {
		return nil
	}
	ctx := r.Context()
	switch {
	case method == http.MethodGet && len(p) == 3:
		q := r.URL.Query()
		return &call{action: "admin:GetPolicy", serve: func(w http.ResponseWriter, _ *http.Request, _ Actor) {
			list, err := m.LDAPPolicies(q.Get("dn"), q.Get("policy"))
			if err != nil {
				writeStoreError(w, err)
				return
			}
			writeJSON(w, http.StatusOK, list)
		}}
	case method == http.MethodPost && len(p) == 4 && (p[3] == "attach" || p[3] == "detach"):
		return &call{action: "admin:AttachUserOrGroupPolicy", serve: func(w http.ResponseWriter, r *http.Request, a Actor) {
			var at Attachment
			if err := readJSON(r, &at); err != nil {
				writeStoreError(w, err)
				return
			}
			if (at.User == "") == (at.Group == "") {
				writeJSONError(w, http.StatusBadRequest, "name the DN of a user or of a group, not both")
				return
			}
			done(w, m.AttachLDAPPolicies(ctx, a.Name, at.User+at.Group, at.Policies, p[3] == "attach"))
		}}
	}
	return nil
}
