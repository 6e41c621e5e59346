package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/iam"
	"github.com/shardstore/shardstore/internal/kms"
	"github.com/shardstore/shardstore/internal/sealing"
)

// KMS calls: the key server's status, creating a key, and rewrapping
// every object's data key under the newest version of its KMS key
// (after the key was rotated at the key server), which touches only the
// sealed maps, never object data.

// Objects is what a rewrap needs of the object store.
type Objects interface {
	ListBuckets(ctx context.Context) ([]engine.BucketInfo, error)
	ListObjectVersions(ctx context.Context, bucket string, opts engine.ListVersionsOptions) (engine.ListVersionsResult, error)
	SetObjectSealed(ctx context.Context, bucket, key, versionID string, update func(map[string]string) (map[string]string, error)) (engine.ObjectInfo, error)
}

// RewrapEvent is one line of a rewrap stream: progress, an object that
// failed, and last the report (or an error).
type RewrapEvent struct {
	Type      string `json:"type"` // progress, failed, report, error
	Bucket    string `json:"bucket,omitempty"`
	Key       string `json:"key,omitempty"`
	VersionID string `json:"versionId,omitempty"`
	Scanned   int    `json:"scanned"`
	Rewrapped int    `json:"rewrapped"`
	Failed    int    `json:"failed"`
	Err       string `json:"error,omitempty"`
}

func (h *Handler) routeKMS(method, path string) (*call, int, string, bool) {
	switch path {
	case "kms/status", "kms/key/create", "kms/rewrap":
	default:
		return nil, 0, "", false
	}
	if h.KMS == nil {
		return nil, http.StatusNotImplemented, "no KMS is configured on this server", true
	}
	switch path {
	case "kms/status":
		if method != http.MethodGet {
			return nil, http.StatusMethodNotAllowed, "use GET for kms/status", true
		}
		return &call{action: "admin:KMSKeyStatus", serve: func(w http.ResponseWriter, r *http.Request, _ Actor) {
			writeJSON(w, http.StatusOK, h.KMS.Status(r.Context()))
		}}, 0, "", true
	case "kms/key/create":
		if method != http.MethodPost {
			return nil, http.StatusMethodNotAllowed, "use POST to create a key", true
		}
		return &call{action: "admin:KMSCreateKey", serve: func(w http.ResponseWriter, r *http.Request, a Actor) {
			name := r.URL.Query().Get("name")
			err := h.KMS.CreateKey(r.Context(), name)
			switch {
			case errors.Is(err, kms.ErrKeyExists):
				writeJSONError(w, http.StatusConflict, err.Error())
			case errors.Is(err, kms.ErrUnavailable):
				writeJSONError(w, http.StatusServiceUnavailable, err.Error())
			case err != nil:
				writeJSONError(w, http.StatusBadRequest, err.Error())
			default:
				h.audit(a, "kms key create", name)
				writeJSON(w, http.StatusOK, map[string]string{"created": name})
			}
		}}, 0, "", true
	default: // kms/rewrap
		if method != http.MethodPost {
			return nil, http.StatusMethodNotAllowed, "use POST to start a rewrap", true
		}
		if h.Objects == nil {
			return nil, http.StatusNotImplemented, "rewrap needs the object store", true
		}
		return &call{action: "admin:KMSRewrap", serve: func(w http.ResponseWriter, r *http.Request, a Actor) {
			h.audit(a, "kms rewrap", r.URL.Query().Get("bucket"))
			h.rewrap(w, r)
		}}, 0, "", true
	}
}

// audit records an admin change when an identity store keeps the trail.
func (h *Handler) audit(a Actor, what, target string) {
	if h.ids != nil {
		h.ids.Record(iam.AuditRecord{Actor: a.Name, Action: what, Target: target})
	}
}

// rewrap walks every version of every object (of one bucket with
// ?bucket=) and rewraps the data keys of SSE-S3 and SSE-KMS versions,
// streaming newline-delimited RewrapEvents.
func (h *Handler) rewrap(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	var ev RewrapEvent
	emit := func(e RewrapEvent) {
		e.Scanned, e.Rewrapped, e.Failed = ev.Scanned, ev.Rewrapped, ev.Failed
		enc.Encode(e)
		flush()
	}
	buckets := []string{r.URL.Query().Get("bucket")}
	if buckets[0] == "" {
		all, err := h.Objects.ListBuckets(ctx)
		if err != nil {
			emit(RewrapEvent{Type: "error", Err: err.Error()})
			return
		}
		buckets = buckets[:0]
		for _, b := range all {
			buckets = append(buckets, b.Name)
		}
	}
	keys := sealing.Keys{KMS: h.KMS}
	last := time.Now()
	for _, bucket := range buckets {
		opts := engine.ListVersionsOptions{}
		for {
			page, err := h.Objects.ListObjectVersions(ctx, bucket, opts)
			if err != nil {
				emit(RewrapEvent{Type: "error", Bucket: bucket, Err: err.Error()})
				return
			}
			for _, v := range page.Versions {
				if v.DeleteMarker {
					continue
				}
				ev.Scanned++
				if v.Cipher == "" && v.Sealed == nil {
					continue
				}
				id := v.VersionID
				if id == "" && !v.IsLatest {
					id = engine.NullVersionID
				}
				changed := false
				_, err := h.Objects.SetObjectSealed(ctx, bucket, v.Key, id, func(old map[string]string) (map[string]string, error) {
					nm, ch, err := keys.Rewrap(ctx, bucket, v.Key, old)
					if err != nil {
						return nil, err
					}
					if !ch {
						return nil, errUnchanged
					}
					changed = true
					return nm, nil
				})
				switch {
				case errors.Is(err, errUnchanged), errors.Is(err, engine.ErrInvalidArgument):
				case err != nil:
					ev.Failed++
					emit(RewrapEvent{Type: "failed", Bucket: bucket, Key: v.Key, VersionID: v.VersionID, Err: err.Error()})
					if errors.Is(err, kms.ErrUnavailable) || ctx.Err() != nil {
						emit(RewrapEvent{Type: "error", Err: fmt.Sprintf("stopped: %v", err)})
						return
					}
				case changed:
					ev.Rewrapped++
				}
				if time.Since(last) > time.Second {
					last = time.Now()
					emit(RewrapEvent{Type: "progress", Bucket: bucket, Key: v.Key})
				}
			}
			if !page.IsTruncated {
				break
			}
			opts.KeyMarker, opts.VersionIDMarker = page.NextKeyMarker, page.NextVersionIDMarker
		}
	}
	emit(RewrapEvent{Type: "report"})
}

// errUnchanged stops an in-place update that has nothing to change.
var errUnchanged = errors.New("unchanged")
