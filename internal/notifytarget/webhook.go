package notifytarget

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/notify"
)

// webhookFields are MinIO's notify_webhook settings. queue_dir and
// queue_limit are accepted for MinIO's configurations: the queue is
// always on the node's drives, queue_limit bounds its records.
var webhookFields = []notify.Field{
	{Name: "endpoint", Required: true, Help: "http(s) URL the records are POSTed to"},
	{Name: "auth_token", Secret: true, Help: "sent as Authorization: Bearer <token> (or as given when it has a scheme)"},
	{Name: "client_cert", Help: "PEM client certificate file for mutual TLS"},
	{Name: "client_key", Help: "PEM key file of client_cert"},
	{Name: "queue_dir", Help: "accepted for MinIO's configurations; the queue is on the node's drives"},
	{Name: "queue_limit", Help: "most records the target's queue holds (default 100000)"},
}

// Webhook is the webhook kind; roots, when set, gives the trusted CAs
// (the system's and the certificates directory's), else the system
// roots alone are used.
func Webhook(roots func() *x509.CertPool) notify.Kind {
	return notify.Kind{Name: "webhook", Fields: webhookFields, New: func(id string, s map[string]string) (notify.Target, error) {
		return newWebhook(id, s, roots)
	}}
}

type webhook struct {
	arn      string
	endpoint string
	auth     string
	client   *http.Client
	tr       *http.Transport // client's; Send calls it directly (see there)
	conns    *hookConns      // nil: through tr (webhookconn.go)
}

func newWebhook(id string, m map[string]string, roots func() *x509.CertPool) (*webhook, error) {
	const kind = "webhook"
	if err := checkID(kind, id); err != nil {
		return nil, err
	}
	s, err := parse(kind, webhookFields, m)
	if err != nil {
		return nil, err
	}
	ep := s.str("endpoint")
	u, err := url.Parse(ep)
	if err != nil || ep == "" {
		return nil, s.errf("endpoint", "not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, s.errf("endpoint", "scheme is not http or https")
	}
	if u.Host == "" {
		return nil, s.errf("endpoint", "has no host")
	}
	if u.User != nil {
		return nil, s.errf("endpoint", "must not hold credentials (use auth_token)")
	}
	if v := s.str("queue_limit"); v != "" {
		if n, err := strconv.ParseUint(v, 10, 32); err != nil || n == 0 {
			return nil, s.errf("queue_limit", "not a positive number")
		}
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if roots != nil {
		tlsCfg.RootCAs = roots()
	}
	cert, key := s.str("client_cert"), s.str("client_key")
	if (cert == "") != (key == "") {
		return nil, s.errf("client_key", "client_cert and client_key go together")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%w: webhook client_cert/client_key: %w", ErrSetting, err)
		}
		tlsCfg.Certificates = []tls.Certificate{pair}
	}
	auth := strings.TrimSpace(s.str("auth_token"))
	if auth != "" && !strings.Contains(auth, " ") {
		auth = "Bearer " + auth
	}
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsCfg,
		MaxIdleConnsPerHost: notify.MaxParallel, IdleConnTimeout: 90 * time.Second, ResponseHeaderTimeout: 30 * time.Second}
	return &webhook{arn: notify.ARN(id, "webhook"), endpoint: u.String(), auth: auth, tr: tr,
		conns: newHookConns(u, tlsCfg, notify.MaxParallel),
		client: &http.Client{Transport: tr, Timeout: time.Minute,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}, nil
}

func (w *webhook) ARN() string { return w.arn }

// Send POSTs the payload; only a 2xx answer accepts it.
func (w *webhook) Send(ctx context.Context, d notify.Delivery) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.endpoint, bytes.NewReader(d.Payload))
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if w.auth != "" {
		req.Header.Set("Authorization", w.auth)
	}
	// Resending a record is allowed (at least once): the Transport may
	// retry it on a new connection when a kept-alive one turns out
	// closed by the endpoint. An empty slice marks it so without
	// sending the header (net/http's Transport documents this).
	req.Header["Idempotency-Key"] = nil
	if _, ok := ctx.Deadline(); ok && w.conns != nil {
		// The lane's own goroutine writes the request and reads the
		// answer (webhookconn.go).
		code, status, err := w.conns.do(ctx, req)
		if err != nil {
			return fmt.Errorf("webhook: post: %w", err)
		}
		if code < 200 || code > 299 {
			return fmt.Errorf("webhook: endpoint answered %s", status)
		}
		return nil
	}
	var resp *http.Response
	if _, ok := ctx.Deadline(); ok {
		// The queue's Send always has its deadline (SendTimeout), and
		// the client follows no redirect: the transport alone does what
		// Client.Do would, without its per-request header copy and
		// redirect bookkeeping (a record is sent for every event).
		resp, err = w.tr.RoundTrip(req)
	} else {
		resp, err = w.client.Do(req)
	}
	if err != nil {
		return fmt.Errorf("webhook: post: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("webhook: endpoint answered %s", resp.Status)
	}
	return nil
}

// Healthy checks that the endpoint answers at all (any HTTP status): a
// HEAD request, as MinIO's check does.
func (w *webhook) Healthy(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, w.endpoint, nil)
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	if w.auth != "" {
		req.Header.Set("Authorization", w.auth)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	_ = resp.Body.Close()
	return nil
}

func (w *webhook) Close() error {
	w.client.CloseIdleConnections()
	if w.conns != nil {
		w.conns.close()
	}
	return nil
}
