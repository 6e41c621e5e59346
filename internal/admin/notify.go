package admin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/shardstore/shardstore/internal/notify"
)

// Notification targets: list them with their queues' counters (secrets
// masked), add or replace one, test one, remove one. Added targets are
// kept in the cluster's config documents (notify.TargetStore) and apply
// on every node; targets of the environment are listed, not changed.
// Listing asks admin:GetBucketTarget, the others admin:SetBucketTarget;
// notify/kinds (notifykinds.go) lists the kinds a target can be.

// Notify is what the notify calls need (the server's hub and target
// store).
type Notify interface {
	Targets() []notify.TargetInfo
	Put(ctx context.Context, spec notify.Spec) error
	Delete(ctx context.Context, key string) error
	Test(ctx context.Context, key string) error
}

// NotifyTest is the answer of notify/test.
type NotifyTest struct {
	ARN     string        `json:"arn"`
	OK      bool          `json:"ok"`
	Error   string        `json:"error,omitempty"`
	Latency time.Duration `json:"latency"`
}

// maxNotifyBody bounds a target's JSON.
const maxNotifyBody = 64 << 10

func (h *Handler) routeNotify(method, path string) (*call, int, string, bool) {
	switch path {
	case "notify/targets", "notify/test", "notify/kinds":
	default:
		return nil, 0, "", false
	}
	if h.Notify == nil {
		return nil, http.StatusNotImplemented, "notifications are not configured on this server", true
	}
	keyOf := func(r *http.Request) (string, bool) {
		arn := r.URL.Query().Get("arn")
		key, err := notify.ParseARN(arn)
		if err != nil {
			return "", false
		}
		if r.URL.Query().Get("audit") == "true" {
			key = "audit:" + key
		}
		return key, true
	}
	switch {
	case path == "notify/kinds" && method == http.MethodGet:
		return h.notifyKindsCall(), 0, "", true
	case path == "notify/targets" && method == http.MethodGet:
		return &call{action: "admin:GetBucketTarget", serve: func(w http.ResponseWriter, r *http.Request, _ Actor) {
			writeJSON(w, http.StatusOK, h.Notify.Targets())
		}}, 0, "", true
	case path == "notify/targets" && method == http.MethodPut:
		return &call{action: "admin:SetBucketTarget", serve: func(w http.ResponseWriter, r *http.Request, a Actor) {
			body, err := io.ReadAll(io.LimitReader(r.Body, maxNotifyBody+1))
			if err != nil || len(body) > maxNotifyBody {
				writeJSONError(w, http.StatusBadRequest, "target body unreadable or over 64 KiB")
				return
			}
			var spec notify.Spec
			if err := json.Unmarshal(body, &spec); err != nil {
				writeJSONError(w, http.StatusBadRequest, "target body is not a JSON target (kind, id, settings, audit)")
				return
			}
			if err := h.Notify.Put(r.Context(), spec); err != nil {
				writeJSONError(w, notifyStatus(err), err.Error())
				return
			}
			h.audit(a, "notify target add", notify.ARN(spec.ID, spec.Kind))
			writeJSON(w, http.StatusOK, map[string]string{"arn": notify.ARN(spec.ID, spec.Kind)})
		}}, 0, "", true
	case path == "notify/targets" && method == http.MethodDelete:
		return &call{action: "admin:SetBucketTarget", serve: func(w http.ResponseWriter, r *http.Request, a Actor) {
			key, ok := keyOf(r)
			if !ok {
				writeJSONError(w, http.StatusBadRequest, "arn must be arn:minio:sqs::<ID>:<kind>")
				return
			}
			if err := h.Notify.Delete(r.Context(), key); err != nil {
				writeJSONError(w, notifyStatus(err), err.Error())
				return
			}
			h.audit(a, "notify target remove", r.URL.Query().Get("arn"))
			writeJSON(w, http.StatusOK, map[string]string{"removed": r.URL.Query().Get("arn")})
		}}, 0, "", true
	case path == "notify/test" && method == http.MethodPost:
		return &call{action: "admin:SetBucketTarget", serve: func(w http.ResponseWriter, r *http.Request, _ Actor) {
			key, ok := keyOf(r)
			if !ok {
				writeJSONError(w, http.StatusBadRequest, "arn must be arn:minio:sqs::<ID>:<kind>")
				return
			}
			ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
			defer cancel()
			t0 := time.Now()
			err := h.Notify.Test(ctx, key)
			res := NotifyTest{ARN: r.URL.Query().Get("arn"), OK: err == nil, Latency: time.Since(t0)}
			if err != nil {
				res.Error = err.Error()
			}
			writeJSON(w, http.StatusOK, res)
		}}, 0, "", true
	}
	return nil, http.StatusMethodNotAllowed, "use GET, PUT or DELETE on notify/targets, POST on notify/test, GET on notify/kinds", true
}

func notifyStatus(err error) int {
	switch {
	case errors.Is(err, notify.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, notify.ErrExists):
		return http.StatusConflict
	case errors.Is(err, notify.ErrNotFound):
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}
