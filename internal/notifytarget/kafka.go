package notifytarget

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/shardstore/shardstore/internal/notify"
)

// Kafka produces each record's payload to a topic, keyed by
// "bucket/key" (so one object's events share a partition and keep their
// order), with franz-go (pure Go, maintained, the most complete Kafka
// protocol support in Go: KRaft-era brokers, idempotent producing,
// SASL PLAIN/SCRAM, and a synchronous produce). acks=all: Send returns
// once every in-sync replica has the record. The idempotent producer
// keeps the client's own retries from duplicating a record.
func Kafka() notify.Kind {
	return notify.Kind{Name: "kafka", Fields: kafkaFields, New: newKafka, DefaultParallel: kafkaParallel}
}

// The producer's defaults: a record waits up to kafkaLinger for others
// to share its produce request (Kafka 4.0's own linger.ms default), and
// kafkaParallel records of different keys are in Send at once, so a
// request carries many records and a lane's wait does not bound the
// rate (kafkaParallel records per linger and round trip). One request
// per record cost the broker about 0.2 ms of CPU per event
// (scripts/bench-notify, docs/performance.md).
const (
	kafkaLinger   = 5 * time.Millisecond
	kafkaParallel = 128
)

var kafkaFields = []notify.Field{
	{Name: "brokers", Required: true, Help: "comma-separated host:port list of brokers (port 9092 when omitted)"},
	{Name: "topic", Required: true, Help: "topic to produce to (letters, digits, . _ -)"},
	{Name: "tls", Help: "on: connect with TLS"},
	{Name: "tls_skip_verify", Help: "on: do not verify the brokers' certificates (testing only)"},
	{Name: "client_tls_cert", Help: "path of a client certificate (PEM) for mutual TLS"},
	{Name: "client_tls_key", Help: "path of the client certificate's key (PEM)"},
	{Name: "sasl", Help: "on: authenticate with SASL"},
	{Name: "sasl_username", Help: "SASL user name"},
	{Name: "sasl_password", Secret: true, Help: "SASL password"},
	{Name: "sasl_mechanism", Help: "plain (default), sha256 (SCRAM-SHA-256) or sha512 (SCRAM-SHA-512)"},
	{Name: "compression_codec", Help: "none (default), gzip, snappy, lz4 or zstd"},
	{Name: "compression_level", Help: "level of the compression codec (its own range; default the codec's)"},
	{Name: "version", Help: "accepted for MinIO's configurations; versions are negotiated with the broker"},
	{Name: "tls_client_auth", Help: "accepted for MinIO's configurations (a server-side setting; a client certificate is sent when client_tls_cert is set)"},
	{Name: "linger", Help: "how long the producer waits for more records before it sends a batch (0 to 1s, default 5ms, Kafka 4's linger.ms): one produce request carries the records of several Sends; 0 sends each at once"},
	{Name: "batch_size", Help: "accepted for MinIO's configurations; records are produced one at a time, each acknowledged"},
	{Name: "batch_commit_timeout", Help: "accepted for MinIO's configurations; see batch_size"},
}

var kafkaTopic = regexp.MustCompile(`^[A-Za-z0-9._-]{1,249}$`)

type kafkaTarget struct {
	id, topic string
	brokers   []string
	opts      []kgo.Opt
	secrets   []string

	mu     sync.Mutex
	client *kgo.Client
	closed bool
	// failing is set until a Send succeeds (from the start, and after a
	// failure): Send then pings first, whose error names the cause (a
	// refused SASL login, a broker not answering), where a produce would
	// only retry until the deadline.
	failing bool
}

func newKafka(id string, m map[string]string) (notify.Target, error) {
	const kind = "kafka"
	if err := checkID(kind, id); err != nil {
		return nil, err
	}
	s, err := parse(kind, kafkaFields, m)
	if err != nil {
		return nil, err
	}
	t := &kafkaTarget{id: id, topic: s.str("topic"), secrets: s.secrets(), failing: true}
	for _, b := range strings.Split(s.str("brokers"), ",") {
		b = strings.TrimSpace(b)
		if b == "" {
			continue
		}
		addr, err := s.hostPort("brokers", b, "9092")
		if err != nil {
			return nil, err
		}
		t.brokers = append(t.brokers, addr)
	}
	if len(t.brokers) == 0 || len(t.brokers) > 64 {
		return nil, s.errf("brokers", "needs 1 to 64 host:port addresses")
	}
	if !kafkaTopic.MatchString(t.topic) || t.topic == "." || t.topic == ".." {
		return nil, s.errf("topic", "not a Kafka topic name (letters, digits, . _ -, at most 249)")
	}
	t.opts = []kgo.Opt{
		kgo.SeedBrokers(t.brokers...),
		kgo.ClientID("shardstore-notify-" + id),
		kgo.DefaultProduceTopic(t.topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DialTimeout(5 * time.Second),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		// A topic that does not exist yet is created where the broker
		// allows it (auto.create.topics.enable), as MinIO's client does;
		// without this the producer only ever gets
		// UNKNOWN_TOPIC_OR_PARTITION for a new topic.
		kgo.AllowAutoTopicCreation(),
	}
	linger, err := s.duration("linger", kafkaLinger, 0, time.Second)
	if err != nil {
		return nil, err
	}
	t.opts = append(t.opts, kgo.ProducerLinger(linger))
	useTLS, err := s.boolean("tls", false)
	if err != nil {
		return nil, err
	}
	skip, err := s.boolean("tls_skip_verify", false)
	if err != nil {
		return nil, err
	}
	if useTLS || s.str("client_tls_cert") != "" {
		conf, err := s.tlsFiles(skip, "", "client_tls_cert", "client_tls_key")
		if err != nil {
			return nil, err
		}
		t.opts = append(t.opts, kgo.DialTLSConfig(conf))
	}
	useSASL, err := s.boolean("sasl", false)
	if err != nil {
		return nil, err
	}
	mech, err := s.oneOf("sasl_mechanism", "plain", "plain", "sha256", "sha512", "scram-sha-256", "scram-sha-512")
	if err != nil {
		return nil, err
	}
	if useSASL {
		user, pass := s.str("sasl_username"), s.str("sasl_password")
		if user == "" {
			return nil, s.errf("sasl_username", "is required with sasl=on")
		}
		var m sasl.Mechanism
		switch mech {
		case "plain":
			m = plain.Auth{User: user, Pass: pass}.AsMechanism()
		case "sha256", "scram-sha-256":
			m = scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
		default:
			m = scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
		}
		t.opts = append(t.opts, kgo.SASL(m))
	}
	codec, err := s.oneOf("compression_codec", "none", "none", "gzip", "snappy", "lz4", "zstd")
	if err != nil {
		return nil, err
	}
	level, err := s.integer("compression_level", 0, -1, 22)
	if err != nil {
		return nil, err
	}
	cc := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}[codec]
	if level != 0 {
		cc = cc.WithLevel(level)
	}
	t.opts = append(t.opts, kgo.ProducerBatchCompression(cc))
	if _, err := s.integer("tls_client_auth", 0, 0, 4); err != nil {
		return nil, err
	}
	if _, err := s.integer("batch_size", 1, 1, 1<<20); err != nil {
		return nil, err
	}
	if _, err := s.duration("batch_commit_timeout", time.Second, 0, time.Hour); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *kafkaTarget) ARN() string { return arn(t.id, "kafka") }

// conn makes the client on first use; franz-go dials brokers as requests
// need them, so this does not block on the network.
func (t *kafkaTarget) conn() (*kgo.Client, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("kafka target %s is closed", t.id)
	}
	if t.client == nil {
		c, err := kgo.NewClient(t.opts...)
		if err != nil {
			return nil, fmt.Errorf("kafka client: %w", scrub(err, t.secrets))
		}
		t.client = c
	}
	return t.client, nil
}

func (t *kafkaTarget) Send(ctx context.Context, d notify.Delivery) error {
	c, err := t.conn()
	if err != nil {
		return err
	}
	t.mu.Lock()
	failing := t.failing
	t.mu.Unlock()
	if failing {
		if err := c.Ping(ctx); err != nil {
			return fmt.Errorf("kafka %s: %w", strings.Join(t.brokers, ","), scrub(err, t.secrets))
		}
	}
	// Sends of other keys run beside this one (the client is safe for
	// concurrent use and batches them); the flag is set by a failure
	// and cleared by a success, so concurrent Sends do not ping.
	rec := &kgo.Record{Key: []byte(d.Key), Value: d.Payload, Timestamp: d.Time}
	if err := c.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.mu.Lock()
		t.failing = true
		t.mu.Unlock()
		return fmt.Errorf("kafka produce to %s: %w", t.topic, scrub(err, t.secrets))
	}
	t.mu.Lock()
	t.failing = false
	t.mu.Unlock()
	return nil
}

func (t *kafkaTarget) Healthy(ctx context.Context) error {
	c, err := t.conn()
	if err != nil {
		return err
	}
	if err := c.Ping(ctx); err != nil {
		return fmt.Errorf("kafka ping %s: %w", strings.Join(t.brokers, ","), scrub(err, t.secrets))
	}
	return nil
}

func (t *kafkaTarget) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.client != nil {
		t.client.Close()
		t.client = nil
	}
	return nil
}
