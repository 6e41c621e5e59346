package notifytarget

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/shardstore/shardstore/internal/notify"
)

// AMQP publishes each record's payload to an AMQP 0-9-1 exchange
// (RabbitMQ), with amqp091-go (the client the RabbitMQ team maintains,
// successor of streadway/amqp). The channel is in confirm mode: Send
// returns after the broker's ack (for a persistent message to a durable
// queue, once it is on disk), an error on a nack, and with mandatory=on
// an error when the broker returned the message as unroutable (no queue
// bound): the record stays queued until one is.
func AMQP() notify.Kind {
	return notify.Kind{Name: "amqp", Fields: amqpFields, New: newAMQP}
}

var amqpFields = []notify.Field{
	{Name: "url", Required: true, Secret: true, Help: "broker URL, amqp://user:password@host:5672/vhost (or amqps://)"},
	{Name: "exchange", Help: "exchange to publish to (empty: the default exchange, routing_key naming the queue)"},
	{Name: "exchange_type", Help: "type the exchange is declared with: direct (default), fanout, topic, headers or x-..."},
	{Name: "routing_key", Help: "routing key of the messages"},
	{Name: "mandatory", Help: "on: a message no queue takes is an error (and retried), not dropped"},
	{Name: "durable", Help: "on: declare the exchange durable (default on)"},
	{Name: "auto_deleted", Help: "on: declare the exchange auto-deleted"},
	{Name: "internal", Help: "on: declare the exchange internal"},
	{Name: "no_wait", Help: "on: declare the exchange without waiting for the broker"},
	{Name: "delivery_mode", Help: "1 (transient) or 2 (persistent, the default)"},
	{Name: "publisher_confirms", Help: "always on: a record leaves the queue only after the broker's ack"},
}

var (
	amqpExchangeName = regexp.MustCompile(`^[A-Za-z0-9_.:-]{0,255}$`)
	amqpExchangeType = regexp.MustCompile(`^(direct|fanout|topic|headers|x-[a-z0-9-]{1,64})$`)
)

type amqpTarget struct {
	id, url, host        string
	exchange, kind, key  string
	mandatory, durable   bool
	autoDelete, internal bool
	noWait               bool
	mode                 uint8
	secrets              []string

	// serial is held around a whole Send when mandatory is on: a
	// returned message is matched to its Send only by coming before its
	// ack, so those Sends go one at a time. Without mandatory, Sends of
	// different keys run concurrently on the one channel, each waiting
	// for its own deferred confirm (the library numbers publishes under
	// the channel's lock).
	serial  sync.Mutex
	mu      sync.Mutex
	conn    *amqp.Connection
	ch      *amqp.Channel
	returns chan amqp.Return
	closed  bool
}

func newAMQP(id string, m map[string]string) (notify.Target, error) {
	const kind = "amqp"
	if err := checkID(kind, id); err != nil {
		return nil, err
	}
	s, err := parse(kind, amqpFields, m)
	if err != nil {
		return nil, err
	}
	t := &amqpTarget{id: id, url: s.str("url"), secrets: s.secrets()}
	uri, err := amqp.ParseURI(t.url)
	if err != nil {
		// ParseURI's message may quote the URL, password and all.
		return nil, s.errf("url", "not an amqp:// or amqps:// URL")
	}
	if !validHost(uri.Host) {
		return nil, s.errf("url", "no valid host")
	}
	if uri.Port < 1 || uri.Port > 65535 {
		return nil, s.errf("url", "port not from 1 to 65535")
	}
	if uri.Password != "" {
		t.secrets = append(t.secrets, uri.Password)
	}
	t.host = uri.Host
	t.exchange = s.str("exchange")
	if !amqpExchangeName.MatchString(t.exchange) || strings.HasPrefix(t.exchange, "amq.") {
		return nil, s.errf("exchange", "not an exchange name (letters, digits, _ . : -, at most 255; amq. is the broker's)")
	}
	if t.kind, err = s.oneOf("exchange_type", "direct", "direct", "fanout", "topic", "headers"); err != nil {
		if !amqpExchangeType.MatchString(s.str("exchange_type")) {
			return nil, err
		}
		t.kind = s.str("exchange_type")
	}
	t.key = s.str("routing_key")
	if len(t.key) > 255 {
		return nil, s.errf("routing_key", "longer than 255 bytes")
	}
	if t.exchange == "" && t.key == "" {
		return nil, s.errf("routing_key", "needed with the default exchange (it names the queue)")
	}
	for _, b := range []struct {
		name string
		def  bool
		to   *bool
	}{{"mandatory", false, &t.mandatory}, {"durable", true, &t.durable}, {"auto_deleted", false, &t.autoDelete},
		{"internal", false, &t.internal}, {"no_wait", false, &t.noWait}} {
		if *b.to, err = s.boolean(b.name, b.def); err != nil {
			return nil, err
		}
	}
	if t.internal {
		return nil, s.errf("internal", "an internal exchange cannot be published to")
	}
	mode, err := s.integer("delivery_mode", 2, 1, 2)
	if err != nil {
		return nil, err
	}
	t.mode = uint8(mode)
	if confirms, err := s.boolean("publisher_confirms", true); err != nil {
		return nil, err
	} else if !confirms {
		return nil, s.errf("publisher_confirms", "cannot be off: a record leaves the queue only after the broker's ack")
	}
	return t, nil
}

func (t *amqpTarget) ARN() string { return arn(t.id, "amqp") }

// channel dials on first use, and again after the connection or the
// channel closed (a broker restart, an error that closed the channel);
// it puts the channel in confirm mode and declares the exchange.
func (t *amqpTarget) channel(ctx context.Context) (*amqp.Channel, chan amqp.Return, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, nil, fmt.Errorf("amqp target %s is closed", t.id)
	}
	if t.ch != nil && !t.ch.IsClosed() && !t.conn.IsClosed() {
		return t.ch, t.returns, nil
	}
	t.dropLocked()
	timeout := 5 * time.Second
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl), 10*time.Millisecond)
	}
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName("shardstore-notify-" + t.id)
	conn, err := amqp.DialConfig(t.url, amqp.Config{Dial: amqp.DefaultDial(timeout), Heartbeat: 10 * time.Second, Properties: props})
	if err != nil {
		return nil, nil, fmt.Errorf("amqp dial %s: %w", t.host, scrub(err, t.secrets))
	}
	ch, err := conn.Channel()
	if err == nil {
		err = ch.Confirm(false)
	}
	if err == nil && t.exchange != "" {
		err = ch.ExchangeDeclare(t.exchange, t.kind, t.durable, t.autoDelete, false, t.noWait, nil)
	}
	if err != nil {
		_ = conn.Close()
		return nil, nil, fmt.Errorf("amqp channel on %s: %w", t.host, scrub(err, t.secrets))
	}
	t.conn, t.ch = conn, ch
	t.returns = ch.NotifyReturn(make(chan amqp.Return, 1))
	return ch, t.returns, nil
}

func (t *amqpTarget) dropLocked() {
	if t.conn != nil {
		_ = t.conn.Close()
	}
	t.conn, t.ch, t.returns = nil, nil, nil
}

// drop closes the connection after an error whose outcome is unclear
// (a confirm that timed out): the next Send starts afresh. Only the
// connection of ch: one a concurrent Send already made anew stays.
func (t *amqpTarget) drop(ch *amqp.Channel) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ch == ch {
		t.dropLocked()
	}
}

func (t *amqpTarget) Send(ctx context.Context, d notify.Delivery) error {
	if t.mandatory {
		t.serial.Lock()
		defer t.serial.Unlock()
	}
	ch, returns, err := t.channel(ctx)
	if err != nil {
		return err
	}
	msg := amqp.Publishing{ContentType: "application/json", DeliveryMode: t.mode, Timestamp: d.Time, Body: d.Payload}
	dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, t.exchange, t.key, t.mandatory, false, msg)
	if err != nil {
		t.drop(ch)
		return fmt.Errorf("amqp publish to %q: %w", t.exchange, scrub(err, t.secrets))
	}
	acked, err := dc.WaitContext(ctx)
	if err != nil {
		t.drop(ch)
		return fmt.Errorf("amqp publish to %q: waiting for the broker's confirm: %w", t.exchange, err)
	}
	if !acked {
		return fmt.Errorf("amqp publish to %q: the broker refused the message (nack)", t.exchange)
	}
	// A returned message comes before its ack on the same channel.
	select {
	case r := <-returns:
		return fmt.Errorf("amqp publish to %q with routing key %q: %w (%d %s)", t.exchange, t.key, errUnroutable, r.ReplyCode, r.ReplyText)
	default:
	}
	return nil
}

var errUnroutable = errors.New("the broker returned the message: no queue is bound for it")

func (t *amqpTarget) Healthy(ctx context.Context) error {
	_, _, err := t.channel(ctx)
	return err
}

func (t *amqpTarget) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	t.dropLocked()
	return nil
}
