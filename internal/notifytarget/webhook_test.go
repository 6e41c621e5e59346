package notifytarget

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/certs"
	"github.com/shardstore/shardstore/internal/notify"
)

func TestWebhookSettings(t *testing.T) {
	k := Webhook(nil)
	cases := []struct {
		name string
		s    map[string]string
		bad  string // a word the error must hold; "" = accepted
	}{
		{"plain", map[string]string{"endpoint": "http://127.0.0.1:1/x"}, ""},
		{"https with minio fields", map[string]string{"endpoint": "https://h.example/e", "queue_dir": "/tmp/q", "queue_limit": "10"}, ""},
		{"no endpoint", map[string]string{}, "endpoint"},
		{"ftp", map[string]string{"endpoint": "ftp://h/"}, "scheme"},
		{"file", map[string]string{"endpoint": "file:///etc/passwd"}, "scheme"},
		{"javascript", map[string]string{"endpoint": "javascript:alert(1)"}, "scheme"},
		{"no host", map[string]string{"endpoint": "http:///path"}, "host"},
		{"credentials in url", map[string]string{"endpoint": "http://u:p@h/"}, "credentials"},
		{"newline", map[string]string{"endpoint": "http://h/\r\nX: y"}, "control"},
		{"nul in token", map[string]string{"endpoint": "http://h/", "auth_token": "a\x00b"}, "control"},
		{"huge", map[string]string{"endpoint": "http://h/" + strings.Repeat("a", 5000)}, "longer"},
		{"cert without key", map[string]string{"endpoint": "https://h/", "client_cert": "/nope"}, "together"},
		{"missing cert files", map[string]string{"endpoint": "https://h/", "client_cert": "/nope", "client_key": "/nope"}, "client_cert"},
		{"bad queue limit", map[string]string{"endpoint": "http://h/", "queue_limit": "-1"}, "queue_limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg, err := k.New("id", c.s)
			if c.bad == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tg.ARN() != "arn:minio:sqs::id:webhook" {
					t.Fatalf("ARN %s", tg.ARN())
				}
				_ = tg.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.bad) {
				t.Fatalf("got %v, want an error about %s", err, c.bad)
			}
			if tok := c.s["auth_token"]; tok != "" && strings.Contains(err.Error(), tok) {
				t.Fatal("error echoes the token")
			}
		})
	}
}

// receiver is a real HTTP server keeping bodies and Authorization.
type receiver struct {
	mu     sync.Mutex
	bodies []string
	auth   []string
	status int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.Method == http.MethodPost {
		r.bodies = append(r.bodies, string(b))
		r.auth = append(r.auth, req.Header.Get("Authorization"))
	}
	w.WriteHeader(r.status)
}

func delivery() notify.Delivery {
	return notify.Delivery{EventName: "s3:ObjectCreated:Put", Key: "b/k", Time: time.Now(), Payload: []byte(`{"EventName":"s3:ObjectCreated:Put"}`)}
}

// sendContexts: Send without a deadline goes through the http.Client,
// with one (as the queue's lanes call it) over the lane's own
// connections (webhookconn.go); both are tested.
func sendContexts(t *testing.T, f func(t *testing.T, ctx context.Context)) {
	t.Run("client", func(t *testing.T) { f(t, context.Background()) })
	t.Run("lane", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		f(t, ctx)
	})
}

func TestWebhookSend(t *testing.T) { sendContexts(t, testWebhookSend) }

func testWebhookSend(t *testing.T, ctx context.Context) {
	rc := &receiver{status: 200}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	tg, err := Webhook(nil).New("w", map[string]string{"endpoint": srv.URL + "/events", "auth_token": "tok"})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if err := tg.Send(ctx, delivery()); err != nil {
		t.Fatal(err)
	}
	// The endpoint closes the idle connection: the next record goes on
	// a new one, no failure.
	srv.CloseClientConnections()
	if err := tg.Send(ctx, delivery()); err != nil {
		t.Fatalf("after the endpoint closed the idle connection: %v", err)
	}
	if err := tg.Healthy(ctx); err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	if len(rc.bodies) != 2 || !strings.Contains(rc.bodies[0], "ObjectCreated") || rc.auth[0] != "Bearer tok" {
		t.Fatalf("received %v %v", rc.bodies, rc.auth)
	}
	rc.status = 503
	rc.mu.Unlock()
	if err := tg.Send(ctx, delivery()); err == nil || strings.Contains(err.Error(), "tok") {
		t.Fatalf("a 503 answer: %v", err)
	}
	// A redirect is not followed: it is not an acceptance.
	redir := httptest.NewServer(http.RedirectHandler(srv.URL, http.StatusTemporaryRedirect))
	defer redir.Close()
	tr, _ := Webhook(nil).New("r", map[string]string{"endpoint": redir.URL})
	if err := tr.Send(ctx, delivery()); err == nil {
		t.Fatal("a redirect was taken for an acceptance")
	}
	srv.Close()
	if err := tg.Send(ctx, delivery()); err == nil {
		t.Fatal("a closed endpoint accepted")
	}
	if err := tg.Healthy(ctx); err == nil {
		t.Fatal("a closed endpoint is healthy")
	}
}

// TestWebhookTLS: an endpoint with a private CA is trusted through the
// roots given (the certificates directory's CAs), not otherwise; a
// client certificate is presented when configured.
func TestWebhookTLS(t *testing.T) { sendContexts(t, testWebhookTLS) }

func testWebhookTLS(t *testing.T, ctx context.Context) {
	ca, err := certs.NewCA("notify test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM())
	rc := &receiver{status: 204}
	srv := httptest.NewUnstartedServer(rc)
	var sawClientCert bool
	var mu sync.Mutex
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequestClientCert,
		VerifyConnection: func(cs tls.ConnectionState) error {
			mu.Lock()
			sawClientCert = sawClientCert || len(cs.PeerCertificates) > 0
			mu.Unlock()
			return nil
		}}
	srv.StartTLS()
	defer srv.Close()
	untrusted, _ := Webhook(nil).New("u", map[string]string{"endpoint": srv.URL})
	if err := untrusted.Send(ctx, delivery()); err == nil {
		t.Fatal("a private CA's certificate was trusted without the CA")
	}
	dir := t.TempDir()
	cf, kf := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	if err := os.WriteFile(cf, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kf, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	trusted, err := Webhook(func() *x509.CertPool { return pool }).New("t", map[string]string{"endpoint": srv.URL,
		"client_cert": cf, "client_key": kf})
	if err != nil {
		t.Fatal(err)
	}
	if err := trusted.Send(ctx, delivery()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !sawClientCert {
		t.Fatal("the client certificate was not presented")
	}
}

// TestWebhookSendCancelled: a Send to an endpoint that never answers
// returns once its context is cancelled (the queue cancels it when it
// closes), on the lane's own connection as through the client.
func TestWebhookSendCancelled(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	tg, err := Webhook(nil).New("w", map[string]string{"endpoint": srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	if err := tg.Send(ctx, delivery()); err == nil {
		t.Fatal("a Send whose context was cancelled before any answer succeeded")
	}
}

func TestAllHasWebhook(t *testing.T) {
	for _, k := range All() {
		if k.Name == "webhook" {
			return
		}
	}
	t.Fatal("All() has no webhook kind")
}
