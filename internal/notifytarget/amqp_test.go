package notifytarget_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/shardstore/shardstore/internal/notifytarget"
	"github.com/shardstore/shardstore/internal/notifytarget/targettest"
)

// TestAMQP runs the suite against a real RabbitMQ (Debian's
// rabbitmq-server), started once with its own node name, ports, epmd
// and data directory.
func TestAMQP(t *testing.T) {
	srv := targettest.StartRabbitMQ(t)
	url := srv.URL
	port := srv.Addr[strings.LastIndex(srv.Addr, ":")+1:]

	// The test's side: a durable queue bound to the exchange, read with
	// basic.get (no consumer to re-attach after a broker restart).
	var mu sync.Mutex
	var got []targettest.Received
	withChannel := func(f func(ch *amqp.Channel) error) error {
		c, err := amqp.Dial(url)
		if err != nil {
			return err
		}
		defer c.Close()
		ch, err := c.Channel()
		if err != nil {
			return err
		}
		return f(ch)
	}
	if err := withChannel(func(ch *amqp.Channel) error {
		if err := ch.ExchangeDeclare("shardstore", "direct", true, false, false, false, nil); err != nil {
			return err
		}
		if _, err := ch.QueueDeclare("events", true, false, false, false, nil); err != nil {
			return err
		}
		return ch.QueueBind("events", "bucket-events", "shardstore", false, nil)
	}); err != nil {
		t.Fatal(err)
	}
	read := func(t *testing.T) []targettest.Received {
		mu.Lock()
		defer mu.Unlock()
		err := withChannel(func(ch *amqp.Channel) error {
			for {
				m, ok, err := ch.Get("events", true)
				if err != nil || !ok {
					return err
				}
				got = append(got, targettest.Received{Body: m.Body})
			}
		})
		if err != nil {
			t.Logf("reading the queue: %v", err)
		}
		return append([]targettest.Received(nil), got...)
	}
	settings := map[string]string{"url": url, "exchange": "shardstore", "exchange_type": "direct",
		"routing_key": "bucket-events", "mandatory": "on", "durable": "on", "delivery_mode": "2"}
	targettest.Run(t, targettest.Config{
		New:   newTarget(notifytarget.AMQP(), "1", settings),
		Read:  read,
		Stop:  func(t *testing.T) { srv.Stop(t) },
		Start: func(t *testing.T) { srv.Start(t) },
	})

	ctx := func() context.Context {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		t.Cleanup(cancel)
		return c
	}
	t.Run("DefaultExchange", func(t *testing.T) {
		// No exchange: the routing key names the queue.
		tg := newTarget(notifytarget.AMQP(), "default", map[string]string{"url": url, "routing_key": "events", "mandatory": "on"})(t)
		defer tg.Close()
		d := targettest.Delivery("s3:ObjectCreated:Put", "default-exchange", "k", 1, 1)
		if err := tg.Send(ctx(), d); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the record through the default exchange", func() error {
			for _, r := range read(t) {
				if string(r.Body) == string(d.Payload) {
					return nil
				}
			}
			return fmt.Errorf("not read yet")
		})
	})
	t.Run("UnroutableIsAnError", func(t *testing.T) {
		s := clone(settings)
		s["routing_key"] = "nobody-listens"
		tg := newTarget(notifytarget.AMQP(), "unroutable", s)(t)
		defer tg.Close()
		if err := tg.Send(ctx(), targettest.Delivery("s3:ObjectCreated:Put", "b", "k", 1, 1)); err == nil {
			t.Fatal("a mandatory message no queue took was acknowledged")
		} else {
			t.Logf("refused as expected: %v", err)
		}
	})
	t.Run("WrongPassword", func(t *testing.T) {
		s := clone(settings)
		s["url"] = "amqp://shard:Wrong-Secret-123@127.0.0.1:" + port + "/"
		tg := newTarget(notifytarget.AMQP(), "bad", s)(t)
		defer tg.Close()
		checkRefused(t, tg.Send(ctx(), targettest.Delivery("s3:ObjectCreated:Put", "b", "k", 1, 1)), "Wrong-Secret-123")
	})
}
