package notifytarget_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/notify"
	"github.com/shardstore/shardstore/internal/notifytarget"
	"github.com/shardstore/shardstore/internal/notifytarget/targettest"
)

// BenchmarkWebhookQueue measures the records per second a target's
// durable queue delivers to a webhook receiver that answers each POST
// after 20 ms (a receiver across a network, or a slow one), with one
// record in flight (parallel=1, the old sender) and with 16:
//
//	go test -run XXX -bench WebhookQueue -benchtime 400x ./internal/notifytarget/
//
// Each iteration is one record of its own key (1 KiB payload), appended
// (synced on the queue's directory) and delivered; the records/s metric
// is delivered records over the time from the first append to the last
// acknowledgement.
func BenchmarkWebhookQueue(b *testing.B) {
	for _, p := range []int{1, 16} {
		b.Run("parallel="+strconv.Itoa(p), func(b *testing.B) {
			var got atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(20 * time.Millisecond)
				got.Add(1)
				w.WriteHeader(http.StatusOK)
			}))
			defer srv.Close()
			tg, err := notifytarget.Webhook(nil).New("bench", map[string]string{"endpoint": srv.URL})
			if err != nil {
				b.Fatal(err)
			}
			defer tg.Close()
			q, err := notify.OpenQueue(notify.QueueConfig{Dirs: []string{b.TempDir()}, Send: tg.Send, Parallel: p})
			if err != nil {
				b.Fatal(err)
			}
			defer q.Close()
			ds := make([]notify.Delivery, b.N)
			for i := range ds {
				ds[i] = targettest.Delivery("s3:ObjectCreated:Put", "bench", fmt.Sprintf("obj-%06d", i), i, 600)
			}
			b.ResetTimer()
			start := time.Now()
			for _, d := range ds {
				if err := q.Append(d); err != nil {
					b.Fatal(err)
				}
			}
			for q.Stats().Sent < uint64(b.N) {
				time.Sleep(time.Millisecond)
			}
			el := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/el.Seconds(), "records/s")
			if int(got.Load()) < b.N {
				b.Fatalf("receiver got %d of %d", got.Load(), b.N)
			}
		})
	}
}
