package notify

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Delivery is what a Target is handed for one queued record: a bucket
// event (the S3 event message) or an audit record. The queue owns it;
// a Target must not keep Payload after Send returns.
type Delivery struct {
	// EventName is the full S3 event name ("s3:ObjectCreated:Put",
	// "s3:ObjectRemoved:DeleteMarkerCreated"); empty for an audit record.
	EventName string
	// Key is "bucket/objectkey", unescaped: the per-key ordering unit,
	// and the row or hash field of the namespace formats.
	Key string
	// Time is when the event happened (the request's time).
	Time time.Time
	// Payload is exactly the bytes a plain target sends (webhook body,
	// NATS/Kafka/AMQP/MQTT message): for an event, MinIO's envelope
	// {"EventName":...,"Key":...,"Records":[<S3 event record>]}; for an
	// audit record, the audit entry's JSON.
	Payload []byte
	// Record is the one S3 event record inside Payload's Records[]
	// (what the access formats of Redis and SQL targets store); nil for
	// an audit record.
	Record []byte
}

// Removed reports whether the event removed the key, so that a target
// in namespace format deletes its row or hash field instead of
// upserting it.
func (d Delivery) Removed() bool {
	return strings.HasPrefix(d.EventName, "s3:ObjectRemoved:")
}

// Target delivers records to one external system. Send returns nil only
// once the system has accepted the record (an HTTP 2xx, a broker ack, a
// committed row): the queue deletes a record only after that, so a
// Target must not acknowledge what it merely buffered. Send may be
// called concurrently, for records of different keys (up to the
// queue's Parallel, or Kind.MaxParallel); records of one key are never
// in Send together and come in queue order. It honours ctx's deadline. An error is retried with backoff by the
// queue; errors wrap their cause with %w and never include secrets.
type Target interface {
	// ARN is the target's ARN in MinIO's form: arn:minio:sqs::<ID>:<type>.
	ARN() string
	// Send delivers one record, see above.
	Send(ctx context.Context, d Delivery) error
	// Healthy checks that the system answers (a connect, a ping), for
	// `admin notify test`, admin status and the console.
	Healthy(ctx context.Context) error
	// Close releases connections; Send is not called after it.
	Close() error
}

// Field is one setting of a target kind, in MinIO's spelling: the
// lower-case key of `mc admin config set notify_<kind>` and the upper-
// case infix of MINIO_NOTIFY_<KIND>_<FIELD>_<ID>.
type Field struct {
	Name     string // "endpoint", "auth_token", "brokers", ...
	Secret   bool   // never logged or listed back (passwords, tokens, keys)
	Required bool
	Help     string
}

// Kind is one type of target: its name in ARNs ("webhook", "nats",
// "kafka", "amqp", "redis", "postgresql", "mysql", "mqtt"), its
// settings, and how to make one from them. New validates every setting
// (hostile values are refused with an error naming the field, never
// echoing a secret) and may connect lazily: a system that is down at
// start must not stop the server, its records queue until it answers.
type Kind struct {
	Name string
	// Config is the kind's name in MINIO_NOTIFY_<CONFIG>_... and
	// notify_<config> where it differs from Name: MinIO configures the
	// postgresql kind as notify_postgres.
	Config string
	Fields []Field
	New    func(id string, settings map[string]string) (Target, error)
	// MaxParallel caps how many records the queue has in its targets'
	// Send at once (the parallel setting, default DefaultParallel); 0
	// is no cap, 1 for a kind whose Send must not run concurrently.
	MaxParallel int
	// DefaultParallel is the lanes a queue of this kind gets when its
	// parallel setting is not given (0: DefaultParallel): a kind whose
	// client batches what is in flight (Kafka, with its linger) wants
	// more records in Send at once.
	DefaultParallel int
}

// QueueFields are the settings every kind takes for its queue rather
// than its system, beside its Fields (enable is the configuration's).
func QueueFields() []Field {
	return []Field{{Name: "parallel", Help: fmt.Sprintf("records of different object keys sent at once (1-%d, default %d; 1 sends every record in queue order)", MaxParallel, DefaultParallel)}}
}

// parallelSetting reads the parallel setting ("" is the default).
func parallelSetting(v string) (int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxParallel {
		return 0, fmt.Errorf("parallel must be a number from 1 to %d", MaxParallel)
	}
	return n, nil
}

// ConfigName is the kind's name in configuration variables.
func (k Kind) ConfigName() string {
	if k.Config != "" {
		return k.Config
	}
	return k.Name
}
