// Package notifytarget holds the kinds of notification target, one file
// per external system (NATS, Redis, PostgreSQL, MySQL, AMQP, MQTT,
// Kafka; the webhook kind is built beside them), each a notify.Kind with
// MinIO's setting names, so `mc admin config set notify_<kind>` keys and
// MINIO_NOTIFY_<KIND>_<FIELD>_<ID> variables carry over unchanged. (As in
// MinIO, PostgreSQL's kind and ARN type is "postgresql" while its
// configuration is notify_postgres and MINIO_NOTIFY_POSTGRES_*.)
//
// What every kind does alike:
//   - New checks every setting (settings.go): bounded length, UTF-8, no
//     control characters, then each value's meaning (host:port, URL,
//     subject, topic, SQL identifier, on/off). Its errors wrap
//     ErrSetting, name the field and never repeat a value. Keys that are
//     not the kind's fields (queue_dir, queue_limit, parallel, enable, comment) are
//     left to the configuration layer.
//   - New does not connect: the first Send or Healthy does, and a lost
//     connection is made again by a later call, so a system that is down
//     at start only delays its records.
//   - Send returns nil only once the system acknowledged the record (a
//     PubAck, a publisher confirm, a PUBACK/PUBCOMP, acks=all, a Redis
//     reply, an autocommitted row); clients never buffer or retry on
//     their own, the durable queue does (one exception: a webhook record
//     whose kept-alive connection turns out closed by the endpoint is
//     sent again at once on a new one). Errors wrap their cause with %w,
//     with secrets replaced by *** (scrub).
//   - Send is safe to call concurrently for records of different keys
//     (the queue's lanes, notify.QueueConfig.Parallel): the lazy
//     connection is made under a mutex held only while it is made, then
//     the clients' own concurrency is used (the webhook's lanes each
//     on a kept-alive connection of their own, webhookconn.go, or
//     http.Client behind a proxy; nats.Conn,
//     go-redis and pgx pools, database/sql, franz-go, paho). AMQP
//     publishes concurrently on one confirm-mode channel, each Send
//     waiting for its own deferred confirm, except with mandatory on,
//     where Sends go one at a time (a basic.return is only matched to
//     its publish by coming before its ack). The SQL kinds send at most
//     max_open_connections at once (default 2).
//   - The Redis and SQL kinds keep MinIO's namespace and access formats
//     (envelope.go).
//
// Every kind passes the conformance suite of package
// notifytarget/targettest against a real server of its system, which
// its test starts (see docs/notifications.md, "Targets", and
// docs/testing.md).
package notifytarget

import "github.com/shardstore/shardstore/internal/notify"

// All is every kind of target, by name.
func All() []notify.Kind {
	return []notify.Kind{Webhook(nil), NATS(), Redis(), PostgreSQL(), MySQL(), AMQP(), MQTT(), Kafka()}
}
