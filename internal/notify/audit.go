package notify

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// AuditEntry is one request's audit record, in the shape of MinIO's
// audit log entries so that existing consumers parse it: who (the
// access key, never a secret or session token), what (API, bucket,
// object), the outcome (status), bytes in and out, duration, the
// source address and the request id.
type AuditEntry struct {
	Time       time.Time
	API        string
	Bucket     string
	Object     string
	StatusCode int
	BytesIn    int64
	BytesOut   int64
	Duration   time.Duration
	RemoteHost string
	AccessKey  string
	RequestID  string
	UserAgent  string
	Host       string
}

type auditJSON struct {
	Version    string       `json:"version"`
	Time       string       `json:"time"`
	Trigger    string       `json:"trigger"`
	API        auditAPIJSON `json:"api"`
	RemoteHost string       `json:"remotehost"`
	RequestID  string       `json:"requestID"`
	UserAgent  string       `json:"userAgent"`
	AccessKey  string       `json:"accessKey"`
	Host       string       `json:"host,omitempty"`
}

type auditAPIJSON struct {
	Name           string `json:"name"`
	Bucket         string `json:"bucket,omitempty"`
	Object         string `json:"object,omitempty"`
	Status         string `json:"status"`
	StatusCode     int    `json:"statusCode"`
	RX             int64  `json:"rx"`
	TX             int64  `json:"tx"`
	TimeToResponse string `json:"timeToResponse"`
}

// JSON is the entry as it is queued and sent.
func (a AuditEntry) JSON() []byte {
	out, err := json.Marshal(auditJSON{Version: "1", Time: a.Time.UTC().Format(time.RFC3339Nano), Trigger: "incoming",
		API: auditAPIJSON{Name: a.API, Bucket: a.Bucket, Object: a.Object, Status: http.StatusText(a.StatusCode),
			StatusCode: a.StatusCode, RX: a.BytesIn, TX: a.BytesOut, TimeToResponse: fmt.Sprintf("%dns", a.Duration.Nanoseconds())},
		RemoteHost: a.RemoteHost, RequestID: a.RequestID, UserAgent: a.UserAgent, AccessKey: a.AccessKey, Host: a.Host})
	if err != nil {
		panic(fmt.Sprintf("notify: marshal audit entry: %v", err))
	}
	return out
}
