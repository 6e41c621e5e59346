package notifytarget_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/shardstore/shardstore/internal/notifytarget"
	"github.com/shardstore/shardstore/internal/notifytarget/targettest"
)

const mqttPassword = "mqtt-Secret-pw"

// TestMQTT runs the suite against a real Mosquitto (Debian's mosquitto),
// started once with a password file, at QoS 1 and 2.
func TestMQTT(t *testing.T) {
	bin := targettest.Find(t, targettest.Program{
		Name: "mosquitto", Paths: []string{"mosquitto", "/usr/sbin/mosquitto"},
		Apt: []string{"mosquitto"}, Require: "SHARDSTORE_REQUIRE_MOSQUITTO",
	})
	passwd := targettest.Find(t, targettest.Program{
		Name: "mosquitto_passwd", Paths: []string{"mosquitto_passwd", "/usr/bin/mosquitto_passwd"},
		Apt: []string{"mosquitto"}, Require: "SHARDSTORE_REQUIRE_MOSQUITTO",
	})
	dir := targettest.TempDir(t)
	pwfile := filepath.Join(dir, "passwd")
	targettest.RunCommand(t, nil, dir, passwd, "-c", "-b", pwfile, "shard", mqttPassword)
	_ = os.Chmod(pwfile, 0o644) // mosquitto drops root for its own user
	port := targettest.FreePort(t)
	conf := filepath.Join(dir, "mosquitto.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous false\npassword_file %s\npersistence false\n", port, pwfile)), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := &targettest.Process{Name: "mosquitto", Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir, Args: []string{bin, "-c", conf}}
	srv.Start(t)
	t.Cleanup(func() { srv.Stop(t) })
	broker := "tcp://" + srv.Addr

	// The reader: its own client subscribed at QoS 2, keeping every
	// message in order; it re-subscribes after a broker restart.
	var mu sync.Mutex
	var got []targettest.Received
	subscribed := make(chan struct{}, 16)
	opts := mqtt.NewClientOptions().AddBroker(broker).SetClientID("shardstore-test-reader").
		SetUsername("shard").SetPassword(mqttPassword).SetCleanSession(true).SetOrderMatters(true).
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
				"username": "shard", "password": mqttPassword, "keep_alive_interval": "5s"}
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
