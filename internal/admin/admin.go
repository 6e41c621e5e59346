// Package admin serves shardstore's operator API under
// /shardstore/admin/: starting a heal run (streamed progress and a final
// report), reading drive and repair status, and a cluster's upgrade
// status (upgrade.go). It knows the engine only
// through the Engine interface and leaves authentication to the caller's
// Authorize function, so the HTTP server decides who is an operator.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/iam"
	"github.com/shardstore/shardstore/internal/kms"
	"github.com/shardstore/shardstore/internal/notify"
	"github.com/shardstore/shardstore/internal/release"
)

// Prefix is the URL path the handler serves.
const Prefix = "/shardstore/admin/"

// Engine is what the admin API needs of the object store.
type Engine interface {
	Heal(ctx context.Context, req engine.HealRequest, progress func(engine.HealProgress)) (engine.HealReport, error)
	HealStatus() engine.HealStatus
	Status() engine.Status
	Layout() engine.Layout
	DriveStatus(ctx context.Context) []engine.DriveStatus
}

// Actor is an authenticated caller of the admin API.
type Actor struct {
	// Name is who the audit records name: "root", or a user.
	Name string
	// User is the identity-store user the credentials belong to ("" for
	// root and users-file users); Key is the access key used. A user
	// calling with its own key (Key == User) may manage its own access
	// keys without admin permissions.
	User, Key string
	// Can reports whether the actor may perform another admin action;
	// calls whose effect reaches further than their own action (an
	// access key for another user, replacing an attached policy) ask it.
	// Nil means no.
	Can func(action string) bool
}

// can is a.Can(action), false when Can is nil.
func (a Actor) can(action string) bool { return a.Can != nil && a.Can(action) }

// ErrDenied is what an Authorize function returns, wrapped, for an
// authenticated caller whose policies do not grant the action (an
// explicit Deny is some other error).
var ErrDenied = errors.New("not allowed")

// Authorize authenticates r and decides whether its caller may perform
// action (an "admin:" action, e.g. "admin:Heal"), with the server's one
// access decision (internal/access). ownKeys, when not nil, tells whether
// the call manages access keys of the actor's own user: the decision lets
// a user do that with its own key without the action (self-service). It
// returns the actor also when it refuses, so the refusal is audited.
type Authorize func(r *http.Request, action string, ownKeys func(Actor) bool) (Actor, error)

// Handler is the admin API. Create it with NewHandler.
type Handler struct {
	eng       Engine
	authorize Authorize
	ids       Identities
	// Consensus, when set (a cluster node), reports the consensus
	// group in status.
	Consensus func() ConsensusStatus
	// KMS, when set, serves the kms calls and shows in status; Objects
	// is what a rewrap walks (kms.go).
	KMS     kms.KMS
	Objects Objects
	// Notify, when set, serves the notify calls and shows the
	// notification targets' health in status (notify.go).
	Notify Notify
	// NotifyKinds are the target kinds notify/kinds describes (the
	// kinds the Notify's store accepts).
	NotifyKinds []notify.Kind
	// Upgrade, when set, answers cluster/upgrade-status (upgrade.go).
	Upgrade func(ctx context.Context) release.UpgradeStatus
}

// NewHandler returns the admin API for eng. authorize is called on every
// request before anything else; a non-nil error answers 403 with its
// message. ids serves the identity calls; nil answers them 501.
func NewHandler(eng Engine, authorize Authorize, ids Identities) *Handler {
	return &Handler{eng: eng, authorize: authorize, ids: ids}
}

// Event is one line of a heal stream (newline-delimited JSON), and the
// body of every error answer (Type "error").
type Event struct {
	// Type is "progress", "report" (last line of a finished run) or
	// "error" (last line of a failed run).
	Type     string             `json:"type"`
	Done     int                `json:"done,omitempty"`
	Total    int                `json:"total,omitempty"`
	Bucket   string             `json:"bucket,omitempty"`
	Key      string             `json:"key,omitempty"`
	Damaged  bool               `json:"damaged,omitempty"`
	Rewrites int                `json:"rewrites,omitempty"`
	Err      string             `json:"error,omitempty"`
	Report   *engine.HealReport `json:"report,omitempty"`
}

// StatusReply is the body of GET status (and of `admin status --json`).
type StatusReply struct {
	Layout engine.Layout        `json:"layout"`
	Status engine.Status        `json:"status"`
	Drives []engine.DriveStatus `json:"drives"`
	Heal   engine.HealStatus    `json:"heal"`
	// Consensus is this node's view of the cluster's consensus group
	// (absent on a single node).
	Consensus *ConsensusStatus `json:"consensus,omitempty"`
	// KMS is the key server's status (absent without one).
	KMS *kms.Status `json:"kms,omitempty"`
	// Notify lists the notification and audit targets with their
	// queues' counters (absent when none is configured).
	Notify []notify.TargetInfo `json:"notify,omitempty"`
}

// ConsensusStatus is one node's view of the Raft group that keeps the
// cluster's bucket records and config documents.
type ConsensusStatus struct {
	Node    string `json:"node"`   // the answering node
	State   string `json:"state"`  // Leader, Follower, Candidate
	Leader  string `json:"leader"` // "" while none is known
	Term    uint64 `json:"term"`
	Applied uint64 `json:"applied"`
}

func writeJSONError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(Event{Type: "error", Err: msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// call is one routed admin request.
type call struct {
	action string // the admin action it needs
	// self, when set, says whether the call manages the actor's own
	// access keys: the access decision's self-service lets a user do so
	// without the action.
	self  func(a Actor) bool
	serve func(w http.ResponseWriter, r *http.Request, a Actor)
}

// ServeHTTP routes an admin call, authorizes it and serves it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.authorize == nil {
		writeJSONError(w, http.StatusForbidden, "admin API has no authorization configured")
		return
	}
	path := strings.TrimPrefix(r.URL.Path, Prefix)
	c, status, msg := h.route(r.Method, path, r)
	if c == nil {
		writeJSONError(w, status, msg)
		return
	}
	actor, err := h.authorize(r, c.action, c.self)
	if err != nil {
		if actor.Name != "" && h.ids != nil {
			h.ids.Record(iam.AuditRecord{Actor: actor.Name, Action: "denied", Target: r.Method + " " + path, Detail: c.action})
		}
		writeJSONError(w, http.StatusForbidden, "access denied: "+err.Error())
		return
	}
	c.serve(w, r, actor)
}

// route finds the call for method and path; nil with a status and
// message when there is none.
func (h *Handler) route(method, path string, r *http.Request) (*call, int, string) {
	switch path {
	case "heal":
		if method != http.MethodPost {
			return nil, http.StatusMethodNotAllowed, "use POST to start a heal"
		}
		return &call{action: "admin:Heal", serve: func(w http.ResponseWriter, r *http.Request, _ Actor) { h.heal(w, r) }}, 0, ""
	case "status":
		if method != http.MethodGet {
			return nil, http.StatusMethodNotAllowed, "use GET for status"
		}
		return &call{action: "admin:ServerInfo", serve: func(w http.ResponseWriter, r *http.Request, _ Actor) {
			w.Header().Set("Content-Type", "application/json")
			reply := StatusReply{Layout: h.eng.Layout(), Status: h.eng.Status(),
				Drives: h.eng.DriveStatus(r.Context()), Heal: h.eng.HealStatus()}
			if h.Consensus != nil {
				cs := h.Consensus()
				reply.Consensus = &cs
			}
			if h.KMS != nil {
				ks := h.KMS.Status(r.Context())
				reply.KMS = &ks
			}
			if h.Notify != nil {
				reply.Notify = h.Notify.Targets()
			}
			json.NewEncoder(w).Encode(reply)
		}}, 0, ""
	}
	if c, status, msg, ok := h.routeNotify(method, path); ok {
		return c, status, msg
	}
	if c, status, msg, ok := h.routeUpgrade(method, path); ok {
		return c, status, msg
	}
	if c, status, msg, ok := h.routePools(method, path); ok {
		return c, status, msg
	}
	if c, status, msg, ok := h.routeKMS(method, path); ok {
		return c, status, msg
	}
	if c, status, msg, ok := h.routeIdentities(method, path, r); ok {
		return c, status, msg
	}
	return nil, http.StatusNotFound, "unknown admin call " + Prefix + path
}

// heal runs a heal and streams one JSON line per object (at most ten a
// second, plus every failure) and a final report line. The run stops
// when the client goes away.
func (h *Handler) heal(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := engine.HealRequest{Bucket: q.Get("bucket"), Prefix: q.Get("prefix")}
	if v := q.Get("deep"); v != "" {
		deep, err := strconv.ParseBool(v)
		if err != nil {
			writeJSONError(w, http.StatusBadRequest, "deep must be true or false")
			return
		}
		req.Deep = deep
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	flusher, _ := w.(http.Flusher)
	var last time.Time
	send := func(ev Event) {
		enc.Encode(ev)
		if flusher != nil {
			flusher.Flush()
		}
	}
	rep, err := h.eng.Heal(r.Context(), req, func(p engine.HealProgress) {
		if p.Err == "" && p.Done != p.Total && time.Since(last) < 100*time.Millisecond {
			return
		}
		last = time.Now()
		send(Event{Type: "progress", Done: p.Done, Total: p.Total, Bucket: p.Result.Bucket, Key: p.Result.Key,
			Damaged: p.Result.Damaged(), Rewrites: p.Result.Healed, Err: p.Err})
	})
	if err != nil {
		if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
			return // client gone
		}
		send(Event{Type: "error", Err: err.Error(), Report: &rep})
		return
	}
	send(Event{Type: "report", Report: &rep})
}
