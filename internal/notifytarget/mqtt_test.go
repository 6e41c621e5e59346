package notifytarget_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/shardstore/shardstore/internal/notifytarget"
	"github.com/shardstore/shardstore/internal/notifytarget/targettest"
)

// TestMQTT runs the suite against a real Mosquitto (Debian's mosquitto),
// started once with a password file, at QoS 1 and 2.
func TestMQTT(t *testing.T) {
	srv := targettest.StartMosquitto(t)
	broker := "tcp://" + srv.Addr

	// The reader: its own client subscribed at QoS 2, keeping every
	// message in order; it re-subscribes after a broker restart.
	var mu sync.Mutex
	var got []targettest.Received
	subscribed := make(chan struct{}, 16)
	opts := mqtt.NewClientOptions().AddBroker(broker).SetClientID("shardstore-test-reader").
		SetUsername("shard").SetPassword(srv.Password).SetCleanSession(true).SetOrderMatters(true).
		SetAutoReconnect(true).SetMaxReconnectInterval(200 * time.Millisecond).SetConnectRetry(true).
		SetConnectRetryInterval(200 * time.Millisecond)
	opts.SetOnConnectHandler(func(c mqtt.Client) {
		go func() {
			tok := c.Subscribe("shardstore/#", 2, func(_ mqtt.Client, m mqtt.Message) {
				mu.Lock()
				got = append(got, targettest.Received{Body: append([]byte(nil), m.Payload()...)})
				mu.Unlock()
			})
			if tok.WaitTimeout(10*time.Second) && tok.Error() == nil {
				subscribed <- struct{}{}
			}
		}()
	})
	reader := mqtt.NewClient(opts)
	if tok := reader.Connect(); !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		t.Fatalf("reader connect: %v", tok.Error())
	}
	t.Cleanup(func() { reader.Disconnect(250) })
	waitSubscribed := func(t *testing.T) {
		select {
		case <-subscribed:
		case <-time.After(time.Minute):
			t.Fatal("the MQTT reader did not subscribe")
		}
	}
	waitSubscribed(t)
	read := func(*testing.T) []targettest.Received {
		mu.Lock()
		defer mu.Unlock()
		return append([]targettest.Received(nil), got...)
	}
	for _, qos := range []string{"1", "2"} {
		t.Run("qos"+qos, func(t *testing.T) {
			settings := map[string]string{"broker": broker, "topic": "shardstore/events/" + qos, "qos": qos,
				"username": "shard", "password": srv.Password, "keep_alive_interval": "5s"}
			targettest.Run(t, targettest.Config{
				New:  newTarget(notifytarget.MQTT(), "q"+qos, settings),
				Read: read,
				Stop: func(t *testing.T) { srv.Stop(t) },
				Start: func(t *testing.T) {
					srv.Start(t)
					// Nothing is kept for an absent subscriber here:
					// wait until the reader is back.
					waitSubscribed(t)
				},
			})
		})
	}
	t.Run("WrongPassword", func(t *testing.T) {
		tg := newTarget(notifytarget.MQTT(), "bad", map[string]string{"broker": broker, "topic": "x", "username": "shard", "password": "Wrong-Secret-123"})(t)
		defer tg.Close()
		err := tg.Send(ctxFor(t, 10*time.Second), targettest.Delivery("s3:ObjectCreated:Put", "b", "k", 1, 1))
		checkRefused(t, err, "Wrong-Secret-123")
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatal("a refused login should fail at once, not time out")
		}
	})
}
