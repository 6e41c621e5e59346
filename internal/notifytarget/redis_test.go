package notifytarget_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardstore/shardstore/internal/notify"
	"github.com/shardstore/shardstore/internal/notifytarget"
	"github.com/shardstore/shardstore/internal/notifytarget/targettest"
)

// TestRedis runs the suite against a real redis-server (Debian's
// redis-server), started once, in both formats.
func TestRedis(t *testing.T) {
	srv := targettest.StartRedis(t)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: srv.Password, DisableIdentity: true})
	t.Cleanup(func() { rc.Close() })
	ctx := func() context.Context {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		t.Cleanup(cancel)
		return c
	}

	t.Run("namespace", func(t *testing.T) {
		settings := map[string]string{"address": srv.Addr, "password": srv.Password, "key": "shardstore:ns", "format": "namespace"}
		targettest.Run(t, targettest.Config{
			New:    newTarget(notifytarget.Redis(), "ns", settings),
			Format: targettest.Namespace,
			Body:   func(d notify.Delivery) []byte { return d.Record },
			Read: func(t *testing.T) []targettest.Received {
				m, err := rc.HGetAll(ctx(), "shardstore:ns").Result()
				if err != nil {
					t.Fatalf("HGETALL: %v", err)
				}
				var out []targettest.Received
				for k, v := range m {
					var env struct{ Records []json.RawMessage }
					if err := json.Unmarshal([]byte(v), &env); err != nil || len(env.Records) != 1 {
						t.Fatalf("field %q holds %.200q, not {\"Records\":[record]}", k, v)
					}
					out = append(out, targettest.Received{Key: k, Body: env.Records[0]})
				}
				return out
			},
			Stop:  func(t *testing.T) { srv.Stop(t) },
			Start: func(t *testing.T) { srv.Start(t) },
		})
	})
	t.Run("access", func(t *testing.T) {
		settings := map[string]string{"address": srv.Addr, "password": srv.Password, "key": "shardstore:access", "format": "access"}
		targettest.Run(t, targettest.Config{
			New:  newTarget(notifytarget.Redis(), "access", settings),
			Body: func(d notify.Delivery) []byte { return d.Record },
			Read: func(t *testing.T) []targettest.Received {
				l, err := rc.LRange(ctx(), "shardstore:access", 0, -1).Result()
				if err != nil {
					t.Fatalf("LRANGE: %v", err)
				}
				var out []targettest.Received
				for _, v := range l {
					var entry []struct {
						Event     []json.RawMessage
						EventTime string
					}
					if err := json.Unmarshal([]byte(v), &entry); err != nil || len(entry) != 1 || len(entry[0].Event) != 1 || entry[0].EventTime == "" {
						t.Fatalf("list entry %.200q is not [{\"Event\":[record],\"EventTime\":...}]", v)
					}
					out = append(out, targettest.Received{Body: entry[0].Event[0]})
				}
				return out
			},
			Stop:  func(t *testing.T) { srv.Stop(t) },
			Start: func(t *testing.T) { srv.Start(t) },
		})
	})
	t.Run("WrongPassword", func(t *testing.T) {
		tg, err := notifytarget.Redis().New("bad", map[string]string{"address": srv.Addr, "password": "Wrong-Secret-123", "key": "k"})
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close()
		checkRefused(t, tg.Send(ctx(), targettest.Delivery("s3:ObjectCreated:Put", "b", "k", 1, 1)), "Wrong-Secret-123")
	})
}
