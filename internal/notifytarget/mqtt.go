package notifytarget

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/shardstore/shardstore/internal/notify"
)

// MQTT publishes each record's payload to a topic at QoS 1 or 2, with
// Eclipse Paho's Go client (the Eclipse project's MQTT 3.1.1 client, the
// one MinIO uses). Send returns after the broker's PUBACK (QoS 1) or
// PUBCOMP (QoS 2); QoS 0, which has no acknowledgement, is refused. The
// client does not reconnect or buffer by itself: a Send on a lost
// connection connects again, and fails while the broker is down.
func MQTT() notify.Kind {
	return notify.Kind{Name: "mqtt", Fields: mqttFields, New: newMQTT}
}

var mqttFields = []notify.Field{
	{Name: "broker", Required: true, Help: "broker URL: tcp://host:1883, ssl:// or tls:// (TLS, 8883), ws:// or wss://"},
	{Name: "topic", Required: true, Help: "topic to publish to (no wildcards)"},
	{Name: "qos", Help: "1 (default: at least once, waits for PUBACK) or 2 (exactly once, waits for PUBCOMP)"},
	{Name: "username", Help: "user name"},
	{Name: "password", Secret: true, Help: "password"},
	{Name: "keep_alive_interval", Help: "keep-alive interval, e.g. 10s (default 10s)"},
	{Name: "reconnect_interval", Help: "accepted for MinIO compatibility; the queue's backoff paces reconnects"},
}

type mqttTarget struct {
	id, broker, topic string
	qos               byte
	opts              *mqtt.ClientOptions
	secrets           []string

	mu     sync.Mutex
	client mqtt.Client
	closed bool
}

func newMQTT(id string, m map[string]string) (notify.Target, error) {
	const kind = "mqtt"
	if err := checkID(kind, id); err != nil {
		return nil, err
	}
	s, err := parse(kind, mqttFields, m)
	if err != nil {
		return nil, err
	}
	t := &mqttTarget{id: id, secrets: s.secrets()}
	u, err := url.Parse(s.str("broker"))
	if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, s.errf("broker", "not a broker URL like tcp://host:1883 (user and password go in their own fields)")
	}
	defPort := "1883"
	switch u.Scheme {
	case "tcp", "mqtt", "ws":
	case "ssl", "tls", "mqtts", "tcps", "wss":
		defPort = "8883"
	default:
		return nil, s.errf("broker", "scheme not tcp, ssl, tls, mqtt, mqtts, ws or wss")
	}
	if u.Scheme == "ws" || u.Scheme == "wss" {
		defPort = map[string]string{"ws": "80", "wss": "443"}[u.Scheme]
	} else if u.Path != "" && u.Path != "/" {
		return nil, s.errf("broker", "a path is only for ws:// and wss://")
	}
	host, err := s.hostPort("broker", u.Host, defPort)
	if err != nil {
		return nil, err
	}
	scheme := map[string]string{"mqtt": "tcp", "mqtts": "ssl", "tcps": "ssl", "tls": "ssl"}[u.Scheme]
	if scheme == "" {
		scheme = u.Scheme
	}
	t.broker = scheme + "://" + host
	if u.Scheme == "ws" || u.Scheme == "wss" {
		t.broker += u.EscapedPath()
	}
	t.topic = s.str("topic")
	if strings.ContainsAny(t.topic, "+#\x00") || len(t.topic) > 4096 {
		return nil, s.errf("topic", "not a publish topic (no + or # wildcards, at most 4096 bytes)")
	}
	qos, err := s.integer("qos", 1, 0, 2)
	if err != nil {
		return nil, err
	}
	if qos == 0 {
		return nil, s.errf("qos", "0 has no acknowledgement: use 1 or 2, so that Send returns only once the broker has the record")
	}
	t.qos = byte(qos)
	keep, err := s.duration("keep_alive_interval", 10*time.Second, time.Second, time.Hour)
	if err != nil {
		return nil, err
	}
	if _, err := s.duration("reconnect_interval", 5*time.Second, 0, time.Hour); err != nil {
		return nil, err
	}
	// A client ID of our own per target and process: two servers must
	// not take each other's session over.
	suffix := make([]byte, 6)
	if _, err := rand.Read(suffix); err != nil {
		return nil, fmt.Errorf("mqtt client id: %w", err)
	}
	t.opts = mqtt.NewClientOptions().
		AddBroker(t.broker).
		SetClientID("shardstore-" + id + "-" + hex.EncodeToString(suffix)).
		SetUsername(s.str("username")).
		SetPassword(s.str("password")).
		SetKeepAlive(keep).
		SetConnectTimeout(5 * time.Second).
		SetWriteTimeout(10 * time.Second).
		SetCleanSession(true).
		SetOrderMatters(true).
		SetAutoReconnect(false).
		SetConnectRetry(false)
	return t, nil
}

func (t *mqttTarget) ARN() string { return arn(t.id, "mqtt") }

// wait waits for a token within ctx.
func wait(ctx context.Context, tok mqtt.Token) error {
	select {
	case <-tok.Done():
		return tok.Error()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// conn connects on first use and after the connection was lost.
func (t *mqttTarget) conn(ctx context.Context) (mqtt.Client, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("mqtt target %s is closed", t.id)
	}
	if t.client != nil && t.client.IsConnectionOpen() {
		return t.client, nil
	}
	if t.client != nil {
		t.client.Disconnect(0)
	}
	c := mqtt.NewClient(t.opts)
	if err := wait(ctx, c.Connect()); err != nil {
		c.Disconnect(0)
		t.client = nil
		return nil, fmt.Errorf("mqtt connect %s: %w", t.broker, scrub(err, t.secrets))
	}
	t.client = c
	return c, nil
}

func (t *mqttTarget) Send(ctx context.Context, d notify.Delivery) error {
	c, err := t.conn(ctx)
	if err != nil {
		return err
	}
	if err := wait(ctx, c.Publish(t.topic, t.qos, false, d.Payload)); err != nil {
		// The outcome is unknown: start a fresh session next time.
		t.mu.Lock()
		if t.client == c {
			c.Disconnect(0)
			t.client = nil
		}
		t.mu.Unlock()
		return fmt.Errorf("mqtt publish to %q: %w", t.topic, scrub(err, t.secrets))
	}
	return nil
}

func (t *mqttTarget) Healthy(ctx context.Context) error {
	c, err := t.conn(ctx)
	if err != nil {
		return err
	}
	if !c.IsConnectionOpen() {
		return fmt.Errorf("mqtt %s: %w", t.broker, errNotConnected)
	}
	return nil
}

var errNotConnected = errors.New("not connected")

func (t *mqttTarget) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.client != nil {
		t.client.Disconnect(250)
		t.client = nil
	}
	return nil
}
