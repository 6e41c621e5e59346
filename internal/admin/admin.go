// Package admin serves shardstore's operator API under
// /shardstore/admin/: starting a heal run (streamed progress and a final
// report) and reading drive and repair status. It knows the engine only
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

// Handler is the admin API. Create it with NewHandler.
type Handler struct {
	eng       Engine
	authorize func(r *http.Request) error
}

// NewHandler returns the admin API for eng. authorize is called on every
// request before anything else; a non-nil error answers 403 with its
// message (it should accept only root / operator credentials).
func NewHandler(eng Engine, authorize func(r *http.Request) error) *Handler {
	return &Handler{eng: eng, authorize: authorize}
}

// Event is one line of a heal stream (newline-delimited JSON).
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
}

func writeJSONError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(Event{Type: "error", Err: msg})
}

// ServeHTTP routes POST heal and GET status.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.authorize == nil {
		writeJSONError(w, http.StatusForbidden, "admin API has no authorization configured")
		return
	}
	if err := h.authorize(r); err != nil {
		writeJSONError(w, http.StatusForbidden, "access denied: "+err.Error())
		return
	}
	switch strings.TrimPrefix(r.URL.Path, Prefix) {
	case "heal":
		if r.Method != http.MethodPost {
			writeJSONError(w, http.StatusMethodNotAllowed, "use POST to start a heal")
			return
		}
		h.heal(w, r)
	case "status":
		if r.Method != http.MethodGet {
			writeJSONError(w, http.StatusMethodNotAllowed, "use GET for status")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(StatusReply{Layout: h.eng.Layout(), Status: h.eng.Status(),
			Drives: h.eng.DriveStatus(r.Context()), Heal: h.eng.HealStatus()})
	default:
		writeJSONError(w, http.StatusNotFound, "unknown admin call "+r.URL.Path)
	}
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
