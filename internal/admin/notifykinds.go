package admin

import (
	"net/http"

	"github.com/shardstore/shardstore/internal/notify"
)

// The notify/kinds call lists the target kinds this server can add
// (Handler.NotifyKinds) with each kind's settings: name, whether it is
// required, whether it is a secret, and its help line, then the
// settings every kind's queue takes (parallel). It describes fields
// only, never a target's values; a form (the console's) renders a kind
// from it. It asks admin:GetBucketTarget, as listing the targets does.

// NotifyKind is one kind in the notify/kinds answer.
type NotifyKind struct {
	Name   string        `json:"name"`
	Fields []NotifyField `json:"fields"`
}

// NotifyField is one setting of a kind.
type NotifyField struct {
	Name     string `json:"name"`
	Required bool   `json:"required"`
	Secret   bool   `json:"secret"`
	Help     string `json:"help"`
}

// notifyKindsCall serves GET notify/kinds.
func (h *Handler) notifyKindsCall() *call {
	return &call{action: "admin:GetBucketTarget", serve: func(w http.ResponseWriter, _ *http.Request, _ Actor) {
		writeJSON(w, http.StatusOK, describeKinds(h.NotifyKinds))
	}}
}

// describeKinds copies the kinds' field descriptions (only those: a
// Kind's constructor and anything else stay out of the answer).
func describeKinds(kinds []notify.Kind) []NotifyKind {
	out := make([]NotifyKind, 0, len(kinds))
	for _, k := range kinds {
		nk := NotifyKind{Name: k.Name, Fields: []NotifyField{}}
		for _, f := range append(append([]notify.Field(nil), k.Fields...), notify.QueueFields()...) {
			nk.Fields = append(nk.Fields, NotifyField{Name: f.Name, Required: f.Required, Secret: f.Secret, Help: f.Help})
		}
		out = append(out, nk)
	}
	return out
}
