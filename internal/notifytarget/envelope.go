package notifytarget

import (
	"github.com/shardstore/shardstore/internal/notify"
)

// The store formats of the Redis and SQL kinds, MinIO's two:
//
//	namespace  one entry per object key (a hash field or a row keyed by
//	           "bucket/key"): upserted with {"Records":[<record>]} on
//	           every event, deleted on an ObjectRemoved event
//	access     one appended entry per event: Redis RPUSHes
//	           [{"Event":[<record>],"EventTime":"<time>"}], SQL inserts
//	           (event_time, {"Records":[<record>]})
const (
	formatNamespace = "namespace"
	formatAccess    = "access"
)

// amzTime is the time format of S3 event records (eventTime).
const amzTime = "2006-01-02T15:04:05.000Z"

// record is the S3 event record a store format keeps: Delivery.Record,
// or for an audit record (no Record) its whole Payload.
func record(d notify.Delivery) []byte {
	if d.Record != nil {
		return d.Record
	}
	return d.Payload
}

// records is {"Records":[<record>]}, built around the record's bytes so
// they are stored exactly as queued.
func records(d notify.Delivery) []byte {
	r := record(d)
	b := make([]byte, 0, len(r)+14)
	b = append(b, `{"Records":[`...)
	b = append(b, r...)
	return append(b, "]}"...)
}

// eventTime is the delivery's time as S3 event records spell it.
func eventTime(d notify.Delivery) string { return d.Time.UTC().Format(amzTime) }

// redisAccess is one entry of Redis's access format.
func redisAccess(d notify.Delivery) []byte {
	r := record(d)
	t := eventTime(d)
	b := make([]byte, 0, len(r)+len(t)+30)
	b = append(b, `[{"Event":[`...)
	b = append(b, r...)
	b = append(b, `],"EventTime":"`...)
	b = append(b, t...)
	return append(b, `"}]`...)
}
