package notifytarget_test

import (
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/shardstore/shardstore/internal/notify"
	"github.com/shardstore/shardstore/internal/notifytarget"
	"github.com/shardstore/shardstore/internal/notifytarget/targettest"
)

// hookReceiver is a real HTTP receiver on a loopback port that keeps
// the bodies POSTed to it in arrival order, and can be stopped and
// started again on the same address.
type hookReceiver struct {
	addr string
	mu   sync.Mutex
	got  [][]byte
	srv  *http.Server
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.got = append(h.got, b)
		h.mu.Unlock()
	}
	w.WriteHeader(http.StatusOK)
}

func (h *hookReceiver) start(t *testing.T) {
	addr := h.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	h.addr = l.Addr().String()
	h.srv = &http.Server{Handler: h}
	go func() { _ = h.srv.Serve(l) }()
}

// TestWebhookConformance runs the conformance suite against a real HTTP
// receiver.
func TestWebhookConformance(t *testing.T) {
	h := &hookReceiver{}
	h.start(t)
	t.Cleanup(func() { _ = h.srv.Close() })
	targettest.Run(t, targettest.Config{
		New: func(t *testing.T) notify.Target {
			tg, err := notifytarget.Webhook(nil).New("conf", map[string]string{"endpoint": "http://" + h.addr + "/events"})
			if err != nil {
				t.Fatal(err)
			}
			return tg
		},
		Read: func(*testing.T) []targettest.Received {
			h.mu.Lock()
			defer h.mu.Unlock()
			out := make([]targettest.Received, len(h.got))
			for i, b := range h.got {
				out[i] = targettest.Received{Body: b}
			}
			return out
		},
		Format: targettest.Stream,
		Stop:   func(*testing.T) { _ = h.srv.Close() },
		Start:  h.start,
	})
}
