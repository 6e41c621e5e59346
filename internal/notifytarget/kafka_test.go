package notifytarget_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardstore/shardstore/internal/notifytarget"
	"github.com/shardstore/shardstore/internal/notifytarget/targettest"
)

// TestKafka runs the suite against a real Apache Kafka broker in KRaft
// mode (one process, broker and controller), started once, through a
// SASL_PLAINTEXT listener (PLAIN; SCRAM-SHA-256 and -512 users made at
// format time), read back by a franz-go consumer on a plain listener.
func TestKafka(t *testing.T) {
	srv := targettest.StartKafka(t)
	plainAddr := srv.PlainAddr

	// The reader: a consumer of the topic from its start, polled by Read.
	consumer, err := kgo.NewClient(kgo.SeedBrokers(plainAddr), kgo.ConsumeTopics("shardstore-events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(consumer.Close)
	var got []targettest.Received
	read := func(t *testing.T) []targettest.Received {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		fs := consumer.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { got = append(got, targettest.Received{Body: r.Value}) })
		return got
	}
	saslAddr := srv.Addr
	settings := map[string]string{"brokers": saslAddr, "topic": "shardstore-events", "sasl": "on",
		"sasl_username": "shard", "sasl_password": srv.Password, "sasl_mechanism": "plain"}
	targettest.Run(t, targettest.Config{
		New:   newTarget(notifytarget.Kafka(), "1", settings),
		Read:  read,
		Stop:  func(t *testing.T) { srv.Stop(t) },
		Start: func(t *testing.T) { srv.Start(t) },
	})
	for _, mech := range []string{"sha256", "sha512"} {
		t.Run("SCRAM-"+mech, func(t *testing.T) {
			s := clone(settings)
			s["sasl_mechanism"] = mech
			s["compression_codec"] = "zstd"
			tg := newTarget(notifytarget.Kafka(), "scram", s)(t)
			defer tg.Close()
			d := targettest.Delivery("s3:ObjectCreated:Put", "scram-"+mech, "k", 1, 1)
			if err := tg.Send(ctxFor(t, 30*time.Second), d); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the SCRAM record", func() error {
				for _, r := range read(t) {
					if string(r.Body) == string(d.Payload) {
						return nil
					}
				}
				return fmt.Errorf("not read yet")
			})
		})
	}
	// TLS: the target has no CA setting (MinIO's neither: the server's
	// trusted CAs), so the test CA is accepted with tls_skip_verify, and
	// without it the unknown CA is refused.
	sslAddr := srv.TLSAddr
	t.Run("TLS", func(t *testing.T) {
		tg := newTarget(notifytarget.Kafka(), "tls", map[string]string{"brokers": sslAddr, "topic": "shardstore-events", "tls": "on", "tls_skip_verify": "on"})(t)
		defer tg.Close()
		d := targettest.Delivery("s3:ObjectCreated:Put", "tls", "k", 1, 1)
		if err := tg.Send(ctxFor(t, 30*time.Second), d); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the TLS record", func() error {
			for _, r := range read(t) {
				if string(r.Body) == string(d.Payload) {
					return nil
				}
			}
			return fmt.Errorf("not read yet")
		})
		untrusted := newTarget(notifytarget.Kafka(), "untrusted", map[string]string{"brokers": sslAddr, "topic": "shardstore-events", "tls": "on"})(t)
		defer untrusted.Close()
		if err := untrusted.Send(ctxFor(t, 3*time.Second), d); err == nil {
			t.Fatal("a broker whose certificate no trusted CA signed was accepted")
		}
	})
	t.Run("WrongPassword", func(t *testing.T) {
		s := clone(settings)
		s["sasl_password"] = "Wrong-Secret-123"
		tg := newTarget(notifytarget.Kafka(), "bad", s)(t)
		defer tg.Close()
		err := tg.Send(ctxFor(t, 10*time.Second), targettest.Delivery("s3:ObjectCreated:Put", "b", "k", 1, 1))
		checkRefused(t, err, "Wrong-Secret-123")
		if !strings.Contains(err.Error(), "SASL") {
			t.Errorf("the error does not say that the SASL login was refused: %v", err)
		}
	})
}
