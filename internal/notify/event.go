package notify

import (
	"time"
)

// Event is what happened to one object, as the S3 layer (or the
// lifecycle runner) reports it after the change is durable.
type Event struct {
	Name      Name
	Bucket    string
	Key       string
	Size      int64
	ETag      string // without quotes
	VersionID string
	Time      time.Time
	Region    string
	// Principal is who made the request (its access key; empty for an
	// anonymous one), Owner the bucket owner's id.
	Principal string
	Owner     string
	SourceIP  string
	UserAgent string
	RequestID string
	HostID    string
}

// Delivery is the record of e for one matched rule: Payload MinIO's
// envelope, Record the S3 event record inside it. Full names (with
// "s3:") are in Delivery.EventName and the envelope; the record's
// eventName has no "s3:" prefix, as AWS sends it.
func (e Event) Delivery(m Matched) Delivery {
	t := e.Time.UTC()
	key := e.Bucket + "/" + e.Key
	p, start, end := e.appendEnvelope(make([]byte, 0, 1024), m, t, key)
	r := p[start:end:end]
	return Delivery{EventName: m.EventName, Key: key, Time: t, Payload: p, Record: r}
}
