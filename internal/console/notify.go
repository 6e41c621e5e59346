package console

// Event notifications in the console: the operations page lists the
// notification and audit targets with their health and queues (from
// the admin status), tests, adds (of any kind the server has, its form
// drawn from notify/kinds) and removes targets through the admin API's
// notify calls, and a bucket's page shows its notification rules
// (GetBucketNotificationConfiguration). Every call is signed as the
// session's identity, so the server's access decision applies.

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
)

// maxNotifyJSON bounds a target sent by the page.
const maxNotifyJSON = 64 << 10

// opsNotify lists (GET), adds (PUT, a JSON target) or removes (DELETE,
// ?arn=&audit=) notification targets.
func (c *Console) opsNotify(w http.ResponseWriter, r *http.Request, s *session) {
	q := url.Values{}
	for _, k := range []string{"arn", "audit"} {
		if v := r.URL.Query().Get(k); v != "" {
			q.Set(k, v)
		}
	}
	switch r.Method {
	case http.MethodPut:
		body, err := io.ReadAll(io.LimitReader(r.Body, maxNotifyJSON+1))
		if err != nil || len(body) > maxNotifyJSON {
			writeError(w, http.StatusBadRequest, "InvalidRequest", "the target is unreadable or over 64 KiB")
			return
		}
		c.adminCall(w, r, s, http.MethodPut, "notify/targets", nil, body)
	case http.MethodDelete:
		c.adminCall(w, r, s, http.MethodDelete, "notify/targets", q, nil)
	default:
		c.adminCall(w, r, s, http.MethodGet, "notify/targets", nil, nil)
	}
}

// opsNotifyTest asks whether a target's system answers.
func (c *Console) opsNotifyTest(w http.ResponseWriter, r *http.Request, s *session) {
	q := url.Values{"arn": {r.URL.Query().Get("arn")}}
	if r.URL.Query().Get("audit") == "true" {
		q.Set("audit", "true")
	}
	c.adminCall(w, r, s, http.MethodPost, "notify/test", q, nil)
}

// opsNotifyKinds lists the target kinds the server can add, with their
// fields (never a value), for the add form.
func (c *Console) opsNotifyKinds(w http.ResponseWriter, r *http.Request, s *session) {
	c.adminCall(w, r, s, http.MethodGet, "notify/kinds", nil, nil)
}

// notifyRule is one rule of a bucket's configuration, for the page.
type notifyRule struct {
	ID     string   `json:"id"`
	ARN    string   `json:"arn"`
	Events []string `json:"events"`
	Prefix string   `json:"prefix,omitempty"`
	Suffix string   `json:"suffix,omitempty"`
}

// bucketNotification answers a bucket's notification rules as JSON.
func (c *Console) bucketNotification(w http.ResponseWriter, r *http.Request, s *session) {
	bucket := r.URL.Query().Get("bucket")
	rec, err := c.call(r, s, s3Request{method: http.MethodGet, bucket: bucket, query: url.Values{"notification": {""}}})
	if err != nil {
		writeS3Error(w, err)
		return
	}
	type xmlRule struct {
		ID     string   `xml:"Id"`
		Queue  string   `xml:"Queue"`
		Topic  string   `xml:"Topic"`
		Lambda string   `xml:"CloudFunction"`
		Events []string `xml:"Event"`
		Rules  []struct {
			Name  string `xml:"Name"`
			Value string `xml:"Value"`
		} `xml:"Filter>S3Key>FilterRule"`
	}
	var doc struct {
		Queues  []xmlRule `xml:"QueueConfiguration"`
		Topics  []xmlRule `xml:"TopicConfiguration"`
		Lambdas []xmlRule `xml:"CloudFunctionConfiguration"`
	}
	if err := xml.Unmarshal(rec.body.Bytes(), &doc); err != nil {
		writeError(w, http.StatusBadGateway, "InternalError", "the server's notification configuration did not parse")
		return
	}
	out := []notifyRule{}
	for _, group := range [][]xmlRule{doc.Queues, doc.Topics, doc.Lambdas} {
		for _, x := range group {
			nr := notifyRule{ID: x.ID, ARN: x.Queue + x.Topic + x.Lambda, Events: x.Events}
			for _, fr := range x.Rules {
				switch fr.Name {
				case "Prefix", "prefix":
					nr.Prefix = fr.Value
				case "Suffix", "suffix":
					nr.Suffix = fr.Value
				}
			}
			out = append(out, nr)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"bucket": bucket, "rules": out})
}
