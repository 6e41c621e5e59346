package notifytarget

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/shardstore/shardstore/internal/notify"
)

// NATS publishes each record's payload to a subject, with nats.go (the
// NATS maintainers' own client). Plain NATS: Publish then a flush, whose
// PONG says the server has the message (core NATS keeps nothing for a
// subscriber that is not there: use JetStream for that). JetStream
// (jetstream=on): a publish that returns once the stream has stored the
// message (its PubAck); a stream must capture the subject.
func NATS() notify.Kind {
	return notify.Kind{Name: "nats", Fields: natsFields, New: newNATS}
}

var natsFields = []notify.Field{
	{Name: "address", Required: true, Help: "NATS server address, host:port (port 4222 when omitted)"},
	{Name: "subject", Required: true, Help: "subject to publish to (no wildcards)"},
	{Name: "username", Help: "user name"},
	{Name: "password", Secret: true, Help: "password"},
	{Name: "token", Secret: true, Help: "authentication token"},
	{Name: "tls", Help: "on: connect with TLS"},
	{Name: "tls_skip_verify", Help: "on: do not verify the server's certificate (testing only)"},
	{Name: "tls_handshake_first", Help: "on: TLS handshake before the NATS INFO (servers with handshake_first)"},
	{Name: "cert_authority", Help: "path of a CA certificate (PEM) that signs the server's certificate"},
	{Name: "client_cert", Help: "path of a client certificate (PEM) for mutual TLS"},
	{Name: "client_key", Help: "path of the client certificate's key (PEM)"},
	{Name: "ping_interval", Help: "interval of the client's pings, e.g. 2m (default 2m)"},
	{Name: "jetstream", Help: "on: publish with JetStream and wait for the stream's ack"},
	{Name: "nkey_seed", Help: "path of an NKey seed file to authenticate with"},
	{Name: "streaming", Help: "NATS Streaming (STAN), end-of-life: only off; use jetstream"},
	{Name: "streaming_async", Help: "accepted for MinIO's configurations (NATS Streaming only)"},
	{Name: "streaming_max_pub_acks_in_flight", Help: "accepted for MinIO's configurations (NATS Streaming only)"},
	{Name: "streaming_cluster_id", Help: "accepted for MinIO's configurations (NATS Streaming only)"},
}

type natsTarget struct {
	id, subject string
	opts        []nats.Option
	addr        string
	jet         bool
	secrets     []string

	mu     sync.Mutex
	nc     *nats.Conn
	js     jetstream.JetStream
	closed bool
}

func newNATS(id string, m map[string]string) (notify.Target, error) {
	const kind = "nats"
	if err := checkID(kind, id); err != nil {
		return nil, err
	}
	s, err := parse(kind, natsFields, m)
	if err != nil {
		return nil, err
	}
	t := &natsTarget{id: id, secrets: s.secrets()}
	if t.addr, err = s.hostPort("address", strings.TrimPrefix(s.str("address"), "nats://"), "4222"); err != nil {
		return nil, err
	}
	t.subject = s.str("subject")
	if !validSubject(t.subject) {
		return nil, s.errf("subject", "not a NATS subject (dot-separated tokens without spaces or wildcards, at most 255 bytes)")
	}
	if t.jet, err = s.boolean("jetstream", false); err != nil {
		return nil, err
	}
	ping, err := s.duration("ping_interval", 2*time.Minute, time.Second, time.Hour)
	if err != nil {
		return nil, err
	}
	useTLS, err := s.boolean("tls", false)
	if err != nil {
		return nil, err
	}
	skip, err := s.boolean("tls_skip_verify", false)
	if err != nil {
		return nil, err
	}
	first, err := s.boolean("tls_handshake_first", false)
	if err != nil {
		return nil, err
	}
	if s.str("username") != "" && s.str("token") != "" {
		return nil, s.errf("token", "set either username/password or token, not both")
	}
	t.opts = []nats.Option{
		nats.Name("shardstore notify " + id),
		nats.PingInterval(ping),
		// Never buffer while reconnecting: a publish the server did not
		// take must fail, so the queue keeps the record.
		nats.ReconnectBufSize(-1),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.NoCallbacksAfterClientClose(),
	}
	if u := s.str("username"); u != "" {
		t.opts = append(t.opts, nats.UserInfo(u, s.str("password")))
	}
	if tok := s.str("token"); tok != "" {
		t.opts = append(t.opts, nats.Token(tok))
	}
	if seed := s.str("nkey_seed"); seed != "" {
		opt, err := nats.NkeyOptionFromSeed(seed)
		if err != nil {
			return nil, s.errf("nkey_seed", "cannot read an NKey seed from the file")
		}
		t.opts = append(t.opts, opt)
	}
	if streaming, err := s.boolean("streaming", false); err != nil {
		return nil, err
	} else if streaming {
		return nil, s.errf("streaming", "NATS Streaming is end-of-life and not supported: use jetstream=on")
	}
	if _, err := s.boolean("streaming_async", false); err != nil {
		return nil, err
	}
	if _, err := s.integer("streaming_max_pub_acks_in_flight", 0, 0, 1<<20); err != nil {
		return nil, err
	}
	if useTLS || first || s.str("cert_authority") != "" || s.str("client_cert") != "" {
		conf, err := s.tlsFiles(skip, "cert_authority", "client_cert", "client_key")
		if err != nil {
			return nil, err
		}
		conf.ServerName = strings.Trim(t.addr[:strings.LastIndex(t.addr, ":")], "[]")
		t.opts = append(t.opts, nats.Secure(conf))
		if first {
			t.opts = append(t.opts, nats.TLSHandshakeFirst())
		}
	}
	return t, nil
}

// validSubject: tokens of printable non-space characters separated by
// dots, no wildcard tokens (a publish subject).
func validSubject(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for _, tok := range strings.Split(s, ".") {
		if tok == "" || tok == "*" || tok == ">" || strings.ContainsAny(tok, " \t\r\n") {
			return false
		}
	}
	return true
}

func (t *natsTarget) ARN() string { return arn(t.id, "nats") }

// conn connects on first use (and again after Close of a dead
// connection); nats.go reconnects by itself after that.
func (t *natsTarget) conn(ctx context.Context) (*nats.Conn, jetstream.JetStream, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, nil, fmt.Errorf("nats target %s is closed", t.id)
	}
	if t.nc != nil && !t.nc.IsClosed() {
		return t.nc, t.js, nil
	}
	timeout := 5 * time.Second
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl), 10*time.Millisecond)
	}
	nc, err := nats.Connect("nats://"+t.addr, append(t.opts, nats.Timeout(timeout))...)
	if err != nil {
		return nil, nil, fmt.Errorf("nats connect %s: %w", t.addr, scrub(err, t.secrets))
	}
	var js jetstream.JetStream
	if t.jet {
		if js, err = jetstream.New(nc); err != nil {
			nc.Close()
			return nil, nil, fmt.Errorf("nats jetstream: %w", err)
		}
	}
	t.nc, t.js = nc, js
	return nc, js, nil
}

func (t *natsTarget) Send(ctx context.Context, d notify.Delivery) error {
	nc, js, err := t.conn(ctx)
	if err != nil {
		return err
	}
	if js != nil {
		if _, err := js.Publish(ctx, t.subject, d.Payload); err != nil {
			return fmt.Errorf("nats jetstream publish to %s: %w", t.subject, scrub(err, t.secrets))
		}
		return nil
	}
	if err := nc.Publish(t.subject, d.Payload); err != nil {
		return fmt.Errorf("nats publish to %s: %w", t.subject, scrub(err, t.secrets))
	}
	if err := nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("nats flush to %s: %w", t.subject, scrub(err, t.secrets))
	}
	return nil
}

func (t *natsTarget) Healthy(ctx context.Context) error {
	nc, js, err := t.conn(ctx)
	if err != nil {
		return err
	}
	if !nc.IsConnected() {
		return fmt.Errorf("nats %s: %w", t.addr, nats.ErrConnectionReconnecting)
	}
	if err := nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("nats ping %s: %w", t.addr, err)
	}
	if js != nil {
		if _, err := js.AccountInfo(ctx); err != nil {
			return fmt.Errorf("nats jetstream account: %w", err)
		}
	}
	return nil
}

func (t *natsTarget) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.nc != nil {
		t.nc.Close()
		t.nc = nil
	}
	return nil
}
