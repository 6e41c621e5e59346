package notifytarget

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardstore/shardstore/internal/notify"
)

// Redis stores records under one Redis key, with go-redis (the client
// the Redis project maintains). Format namespace (the default, as in
// MinIO): a hash whose field "bucket/key" holds {"Records":[<record>]},
// HSET on every event and HDEL on an ObjectRemoved event. Format access:
// RPUSH of [{"Event":[<record>],"EventTime":"<time>"}] to a list. Send
// returns after Redis's reply to the command.
func Redis() notify.Kind {
	return notify.Kind{Name: "redis", Fields: redisFields, New: newRedis}
}

var redisFields = []notify.Field{
	{Name: "address", Required: true, Help: "Redis server address, host:port (port 6379 when omitted)"},
	{Name: "key", Required: true, Help: "Redis key of the hash (namespace) or list (access) the records go to"},
	{Name: "format", Help: "namespace (default: one hash field per object) or access (a list of events)"},
	{Name: "password", Secret: true, Help: "password (AUTH)"},
	{Name: "user", Help: "ACL user name (Redis 6+)"},
}

type redisTarget struct {
	id, key, format string
	secrets         []string
	opts            *redis.Options

	mu     sync.Mutex
	client *redis.Client
	closed bool
}

func newRedis(id string, m map[string]string) (notify.Target, error) {
	const kind = "redis"
	if err := checkID(kind, id); err != nil {
		return nil, err
	}
	s, err := parse(kind, redisFields, m)
	if err != nil {
		return nil, err
	}
	t := &redisTarget{id: id, key: s.str("key"), secrets: s.secrets()}
	addr, err := s.hostPort("address", s.str("address"), "6379")
	if err != nil {
		return nil, err
	}
	if len(t.key) > 512 || strings.ContainsAny(t.key, " ") {
		return nil, s.errf("key", "not a Redis key of at most 512 bytes without spaces")
	}
	if t.format, err = s.oneOf("format", formatNamespace, formatNamespace, formatAccess); err != nil {
		return nil, err
	}
	if strings.ContainsAny(s.str("user"), " ") {
		return nil, s.errf("user", "contains a space")
	}
	t.opts = &redis.Options{
		Addr:     addr,
		Username: s.str("user"),
		Password: s.str("password"),
		// The queue retries; a command is sent once per Send.
		MaxRetries:      -1,
		DialTimeout:     5 * time.Second,
		PoolSize:        2,
		DisableIdentity: true,
		ClientName:      "shardstore-notify-" + id,
	}
	return t, nil
}

func (t *redisTarget) ARN() string { return arn(t.id, "redis") }

// conn makes the client on first use; go-redis dials per command as its
// pool needs, so this never blocks on the network.
func (t *redisTarget) conn() (*redis.Client, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("redis target %s is closed", t.id)
	}
	if t.client == nil {
		t.client = redis.NewClient(t.opts)
	}
	return t.client, nil
}

func (t *redisTarget) Send(ctx context.Context, d notify.Delivery) error {
	c, err := t.conn()
	if err != nil {
		return err
	}
	var cmd string
	switch {
	case t.format == formatAccess:
		cmd, err = "RPUSH", c.RPush(ctx, t.key, redisAccess(d)).Err()
	case d.Removed():
		cmd, err = "HDEL", c.HDel(ctx, t.key, d.Key).Err()
	default:
		cmd, err = "HSET", c.HSet(ctx, t.key, d.Key, records(d)).Err()
	}
	if err != nil {
		return fmt.Errorf("redis %s %s: %w", cmd, t.key, scrub(err, t.secrets))
	}
	return nil
}

func (t *redisTarget) Healthy(ctx context.Context) error {
	c, err := t.conn()
	if err != nil {
		return err
	}
	if err := c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis ping %s: %w", t.opts.Addr, scrub(err, t.secrets))
	}
	return nil
}

func (t *redisTarget) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.client == nil {
		return nil
	}
	err := t.client.Close()
	t.client = nil
	return err
}
