package notify

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
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

// The S3 event message (what AWS and MinIO send), one record.
type eventRecord struct {
	EventVersion      string            `json:"eventVersion"`
	EventSource       string            `json:"eventSource"`
	AWSRegion         string            `json:"awsRegion"`
	EventTime         string            `json:"eventTime"`
	EventName         string            `json:"eventName"`
	UserIdentity      identity          `json:"userIdentity"`
	RequestParameters map[string]string `json:"requestParameters"`
	ResponseElements  map[string]string `json:"responseElements"`
	S3                s3Entity          `json:"s3"`
	Source            sourceInfo        `json:"source"`
}

type identity struct {
	PrincipalID string `json:"principalId"`
}

type s3Entity struct {
	SchemaVersion   string       `json:"s3SchemaVersion"`
	ConfigurationID string       `json:"configurationId"`
	Bucket          bucketEntity `json:"bucket"`
	Object          objectEntity `json:"object"`
}

type bucketEntity struct {
	Name          string   `json:"name"`
	OwnerIdentity identity `json:"ownerIdentity"`
	ARN           string   `json:"arn"`
}

type objectEntity struct {
	Key       string `json:"key"`
	Size      int64  `json:"size"`
	ETag      string `json:"eTag,omitempty"`
	VersionID string `json:"versionId,omitempty"`
	Sequencer string `json:"sequencer"`
}

type sourceInfo struct {
	Host      string `json:"host"`
	UserAgent string `json:"userAgent"`
}

type envelope struct {
	EventName string            `json:"EventName"`
	Key       string            `json:"Key"`
	Records   []json.RawMessage `json:"Records"`
}

// Delivery is the record of e for one matched rule: Payload MinIO's
// envelope, Record the S3 event record inside it. Full names (with
// "s3:") are in Delivery.EventName and the envelope; the record's
// eventName has no "s3:" prefix, as AWS sends it.
func (e Event) Delivery(m Matched) Delivery {
	t := e.Time.UTC()
	rec := eventRecord{
		EventVersion: "2.0", EventSource: "aws:s3", AWSRegion: e.Region,
		EventTime:         t.Format("2006-01-02T15:04:05.000Z"),
		EventName:         strings.TrimPrefix(m.EventName, "s3:"),
		UserIdentity:      identity{PrincipalID: e.Principal},
		RequestParameters: map[string]string{"sourceIPAddress": e.SourceIP, "principalId": e.Principal, "region": e.Region},
		ResponseElements:  map[string]string{"x-amz-request-id": e.RequestID, "x-amz-id-2": e.HostID},
		S3: s3Entity{SchemaVersion: "1.0", ConfigurationID: m.ID,
			Bucket: bucketEntity{Name: e.Bucket, OwnerIdentity: identity{PrincipalID: e.Owner}, ARN: "arn:aws:s3:::" + e.Bucket},
			Object: objectEntity{Key: url.QueryEscape(e.Key), Size: e.Size, ETag: e.ETag, VersionID: e.VersionID,
				Sequencer: fmt.Sprintf("%016X", t.UnixNano())}},
		Source: sourceInfo{Host: e.SourceIP, UserAgent: e.UserAgent},
	}
	r, err := json.Marshal(rec)
	if err != nil {
		// Strings and numbers only: cannot fail.
		panic(fmt.Sprintf("notify: marshal event: %v", err))
	}
	key := e.Bucket + "/" + e.Key
	p, err := json.Marshal(envelope{EventName: m.EventName, Key: key, Records: []json.RawMessage{r}})
	if err != nil {
		panic(fmt.Sprintf("notify: marshal envelope: %v", err))
	}
	return Delivery{EventName: m.EventName, Key: key, Time: t, Payload: p, Record: r}
}
