package console

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// adminPrefix is where the S3 server serves the admin API.
const adminPrefix = "/shardstore/admin/"

// adminCall makes a signed admin API call for the session into w. The
// body (nil for none) is signed with its SHA-256, which the admin API
// checks.
func (c *Console) adminCall(w http.ResponseWriter, r *http.Request, s *session, method, name string, query url.Values, body []byte) {
	sum := sha256.Sum256(body)
	sr := s3Request{method: method, path: adminPrefix + name, query: query, payload: hex.EncodeToString(sum[:])}
	if len(body) > 0 {
		sr.body, sr.size = bytes.NewReader(body), int64(len(body))
		sr.header = http.Header{"Content-Type": {"application/json"}}
	}
	c.cfg.S3.ServeHTTP(w, c.newS3Request(r.Context(), r, s, sr))
}

// mayOperate reports whether the identity may see the operations pages
// (the admin action admin:ServerInfo), asking the admin API at most
// every opsCacheFor.
func (c *Console) mayOperate(r *http.Request, s *session) bool {
	now := c.now()
	s.mu.Lock()
	if now.Before(s.opsUntil) {
		ok := s.ops
		s.mu.Unlock()
		return ok
	}
	s.mu.Unlock()
	rec := &recorder{header: http.Header{}}
	c.adminCall(rec, r, s, http.MethodGet, "status", nil, nil)
	ok := rec.status == 0 || rec.status == http.StatusOK
	s.mu.Lock()
	s.ops, s.opsUntil = ok, now.Add(opsCacheFor)
	s.mu.Unlock()
	return ok
}

// requireOps answers 403 unless the identity may operate.
func (c *Console) requireOps(w http.ResponseWriter, r *http.Request, s *session) bool {
	if c.mayOperate(r, s) {
		return true
	}
	writeError(w, http.StatusForbidden, "AccessDenied", "the operations pages need the admin:ServerInfo permission (root or an admin policy)")
	return false
}

// opsStatus passes the admin status through (layout, sets, drives, heal
// queue and scanner).
func (c *Console) opsStatus(w http.ResponseWriter, r *http.Request, s *session) {
	c.adminCall(w, r, s, http.MethodGet, "status", nil, nil)
}

// opsHeal starts a heal through the admin API and streams its progress
// lines (newline-delimited JSON) to the page.
func (c *Console) opsHeal(w http.ResponseWriter, r *http.Request, s *session) {
	bq, q := r.URL.Query(), url.Values{}
	for _, k := range []string{"bucket", "prefix", "deep"} {
		if v, ok := bq[k]; ok {
			q[k] = v
		}
	}
	c.adminCall(w, r, s, http.MethodPost, "heal", q, nil)
}

// metricsReply is one sample of the live charts; the page turns the
// counters into rates between two samples.
type metricsReply struct {
	Time     time.Time `json:"time"`
	Requests float64   `json:"requests"` // S3 requests answered, all time
	Errors   float64   `json:"errors"`   // of those, answered 5xx
	BytesIn  float64   `json:"bytesIn"`
	BytesOut float64   `json:"bytesOut"`
	// LatencySum and LatencyCount are the request-duration histogram's
	// totals (seconds, requests).
	LatencySum   float64 `json:"latencySum"`
	LatencyCount float64 `json:"latencyCount"`
	InFlight     float64 `json:"inFlight"`
	// CPU is each core's busy fraction over the last few seconds.
	CPU []float64 `json:"cpu"`
	// Phases is the PUT path's time per phase, all time.
	Phases []phaseRow `json:"phases"`
	// APIs are per-API request counts and latency sums, all time.
	APIs []apiRow `json:"apis"`
}

type phaseRow struct {
	Phase string  `json:"phase"`
	Count float64 `json:"count"`
	Sum   float64 `json:"sum"`
}

type apiRow struct {
	API   string  `json:"api"`
	Count float64 `json:"count"`
	Sum   float64 `json:"sum"`
}

func (c *Console) opsMetrics(w http.ResponseWriter, r *http.Request, s *session) {
	if !c.requireOps(w, r, s) {
		return
	}
	rep := metricsReply{Time: c.now(), CPU: []float64{}, Phases: []phaseRow{}, APIs: []apiRow{}}
	if c.cfg.CPU != nil {
		if cpu := c.cfg.CPU(); cpu != nil {
			rep.CPU = cpu
		}
	}
	if c.cfg.Metrics != nil {
		fams, err := c.cfg.Metrics.Gather()
		if err != nil && len(fams) == 0 {
			writeError(w, http.StatusInternalServerError, "InternalError", "read metrics: "+err.Error())
			return
		}
		readMetrics(fams, &rep)
	}
	writeJSON(w, http.StatusOK, rep)
}

// readMetrics picks the charts' series out of the registry's families.
func readMetrics(fams []*dto.MetricFamily, rep *metricsReply) {
	apis := map[string]*apiRow{}
	for _, f := range fams {
		switch f.GetName() {
		case "shardstore_s3_requests_total":
			for _, m := range f.GetMetric() {
				v := m.GetCounter().GetValue()
				rep.Requests += v
				if strings.HasPrefix(label(m, "code"), "5") {
					rep.Errors += v
				}
			}
		case "shardstore_s3_received_bytes_total":
			rep.BytesIn = sumCounters(f)
		case "shardstore_s3_sent_bytes_total":
			rep.BytesOut = sumCounters(f)
		case "shardstore_s3_requests_inflight":
			for _, m := range f.GetMetric() {
				rep.InFlight += m.GetGauge().GetValue()
			}
		case "shardstore_s3_request_duration_seconds":
			for _, m := range f.GetMetric() {
				h := m.GetHistogram()
				rep.LatencySum += h.GetSampleSum()
				rep.LatencyCount += float64(h.GetSampleCount())
				name := label(m, "api")
				a := apis[name]
				if a == nil {
					a = &apiRow{API: name}
					apis[name] = a
				}
				a.Count += float64(h.GetSampleCount())
				a.Sum += h.GetSampleSum()
			}
		default:
			if strings.HasPrefix(f.GetName(), "shardstore_put_phase") && f.GetType() == dto.MetricType_HISTOGRAM {
				for _, m := range f.GetMetric() {
					h := m.GetHistogram()
					rep.Phases = append(rep.Phases, phaseRow{Phase: label(m, "phase"), Count: float64(h.GetSampleCount()), Sum: h.GetSampleSum()})
				}
			}
		}
	}
	for _, a := range apis {
		rep.APIs = append(rep.APIs, *a)
	}
	sort.Slice(rep.APIs, func(i, j int) bool { return rep.APIs[i].Count > rep.APIs[j].Count })
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func sumCounters(f *dto.MetricFamily) float64 {
	var v float64
	for _, m := range f.GetMetric() {
		v += m.GetCounter().GetValue()
	}
	return v
}

// opsErrors lists the server's recent warnings and errors.
func (c *Console) opsErrors(w http.ResponseWriter, r *http.Request, s *session) {
	if !c.requireOps(w, r, s) {
		return
	}
	type reply struct {
		Entries any   `json:"entries"`
		Total   int64 `json:"total"`
	}
	if c.cfg.Errors == nil {
		writeJSON(w, http.StatusOK, reply{Entries: []any{}})
		return
	}
	e, n := c.cfg.Errors.Entries()
	writeJSON(w, http.StatusOK, reply{Entries: e, Total: n})
}

// iamPrefix is where the console passes identity-store calls through to
// the admin API (users, groups, policies, access keys, audit).
const iamPrefix = "/api/iam/"

// identities passes an identity-store call to the admin API as the
// session's identity; the admin API decides (admin:ListUsers,
// admin:CreateUser, ...) and its JSON answer goes back as it is.
func (c *Console) identities(w http.ResponseWriter, r *http.Request, s *session) {
	rest := strings.TrimPrefix(r.URL.Path, iamPrefix)
	first, _, _ := strings.Cut(rest, "/")
	switch first {
	case "users", "groups", "policies", "accesskeys", "audit":
	default:
		writeError(w, http.StatusNotFound, "NotFound", "no such identity call: "+rest)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20+1))
	if err != nil || len(body) > 1<<20 {
		writeError(w, http.StatusBadRequest, "BadRequest", "the request body is unreadable or over 1 MiB")
		return
	}
	c.adminCall(w, r, s, r.Method, rest, r.URL.Query(), body)
}
