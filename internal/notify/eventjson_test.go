package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The structs encoding/json writes the S3 event message from: the
// oracle the hand-written encoder (eventjson.go) must match byte for
// byte.
type oracleRecord struct {
	EventVersion      string            `json:"eventVersion"`
	EventSource       string            `json:"eventSource"`
	AWSRegion         string            `json:"awsRegion"`
	EventTime         string            `json:"eventTime"`
	EventName         string            `json:"eventName"`
	UserIdentity      oracleIdentity    `json:"userIdentity"`
	RequestParameters map[string]string `json:"requestParameters"`
	ResponseElements  map[string]string `json:"responseElements"`
	S3                oracleS3          `json:"s3"`
	Source            oracleSource      `json:"source"`
}

type oracleIdentity struct {
	PrincipalID string `json:"principalId"`
}

type oracleS3 struct {
	SchemaVersion   string       `json:"s3SchemaVersion"`
	ConfigurationID string       `json:"configurationId"`
	Bucket          oracleBucket `json:"bucket"`
	Object          oracleObject `json:"object"`
}

type oracleBucket struct {
	Name          string         `json:"name"`
	OwnerIdentity oracleIdentity `json:"ownerIdentity"`
	ARN           string         `json:"arn"`
}

type oracleObject struct {
	Key       string `json:"key"`
	Size      int64  `json:"size"`
	ETag      string `json:"eTag,omitempty"`
	VersionID string `json:"versionId,omitempty"`
	Sequencer string `json:"sequencer"`
}

type oracleSource struct {
	Host      string `json:"host"`
	UserAgent string `json:"userAgent"`
}

type oracleEnvelope struct {
	EventName string            `json:"EventName"`
	Key       string            `json:"Key"`
	Records   []json.RawMessage `json:"Records"`
}

// oracleDelivery is Event.Delivery as encoding/json makes it.
func oracleDelivery(t testing.TB, e Event, m Matched) (payload, record []byte) {
	tm := e.Time.UTC()
	rec := oracleRecord{
		EventVersion: "2.0", EventSource: "aws:s3", AWSRegion: e.Region,
		EventTime:         tm.Format("2006-01-02T15:04:05.000Z"),
		EventName:         strings.TrimPrefix(m.EventName, "s3:"),
		UserIdentity:      oracleIdentity{PrincipalID: e.Principal},
		RequestParameters: map[string]string{"sourceIPAddress": e.SourceIP, "principalId": e.Principal, "region": e.Region},
		ResponseElements:  map[string]string{"x-amz-request-id": e.RequestID, "x-amz-id-2": e.HostID},
		S3: oracleS3{SchemaVersion: "1.0", ConfigurationID: m.ID,
			Bucket: oracleBucket{Name: e.Bucket, OwnerIdentity: oracleIdentity{PrincipalID: e.Owner}, ARN: "arn:aws:s3:::" + e.Bucket},
			Object: oracleObject{Key: url.QueryEscape(e.Key), Size: e.Size, ETag: e.ETag, VersionID: e.VersionID,
				Sequencer: fmt.Sprintf("%016X", tm.UnixNano())}},
		Source: oracleSource{Host: e.SourceIP, UserAgent: e.UserAgent},
	}
	r, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := json.Marshal(oracleEnvelope{EventName: m.EventName, Key: e.Bucket + "/" + e.Key, Records: []json.RawMessage{r}})
	if err != nil {
		t.Fatal(err)
	}
	return p, r
}

func checkDelivery(t *testing.T, e Event, m Matched) {
	t.Helper()
	d := e.Delivery(m)
	p, r := oracleDelivery(t, e, m)
	if !bytes.Equal(d.Payload, p) {
		t.Fatalf("payload differs from encoding/json's:\n got %s\nwant %s", d.Payload, p)
	}
	if !bytes.Equal(d.Record, r) {
		t.Fatalf("record differs from encoding/json's:\n got %s\nwant %s", d.Record, r)
	}
	if !json.Valid(d.Payload) {
		t.Fatalf("payload is not JSON: %s", d.Payload)
	}
}

// Hostile values: every escape encoding/json makes, invalid UTF-8,
// U+2028/2029, empty fields (omitted eTag/versionId), negative and
// huge sizes, times before 1970 (a negative sequencer).
func TestDeliveryMatchesEncodingJSON(t *testing.T) {
	base := Event{Name: ObjectCreatedPut, Bucket: "b", Key: "k", Size: 4096, ETag: "abc", VersionID: "v1",
		Time: time.Date(2026, 11, 28, 10, 0, 0, 123456789, time.UTC), Region: "us-east-1", Principal: "AKIA",
		Owner: "owner", SourceIP: "127.0.0.1", UserAgent: "ua", RequestID: "RID", HostID: "HID"}
	hostile := []string{"", "plain", "a\"b\\c", "<script>&amp;</script>", "\x00\x01\x07\x08\x0b\x0c\x1f\x7f",
		"tab\tnl\nr\r", "\xff\xfe bad utf8 \xc3", "line\u2028para\u2029", "ünïcödé 日本 🎉", "a b+c%2F/d?e=f#g",
		strings.Repeat("x", 3000)}
	for i, h := range hostile {
		for _, mod := range []func(*Event){
			func(e *Event) { e.Key = h }, func(e *Event) { e.Bucket = h }, func(e *Event) { e.ETag = h },
			func(e *Event) { e.VersionID = h }, func(e *Event) { e.Region = h }, func(e *Event) { e.Principal = h },
			func(e *Event) { e.Owner = h }, func(e *Event) { e.SourceIP = h }, func(e *Event) { e.UserAgent = h },
			func(e *Event) { e.RequestID = h }, func(e *Event) { e.HostID = h },
		} {
			e := base
			mod(&e)
			checkDelivery(t, e, Matched{Target: "1:webhook", ID: h, EventName: "s3:ObjectCreated:Put"})
			checkDelivery(t, e, Matched{Target: "1:webhook", ID: "id", EventName: h})
		}
		_ = i
	}
	for _, tm := range []time.Time{time.Unix(0, 0), time.Unix(-1, 0), time.Unix(0, -1), time.Unix(1, 0),
		time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), {}} {
		e := base
		e.Time = tm
		checkDelivery(t, e, Matched{ID: "id", EventName: "s3:ObjectRemoved:Delete"})
	}
	for _, size := range []int64{0, -1, 1 << 62, -1 << 63} {
		e := base
		e.Size = size
		checkDelivery(t, e, Matched{ID: "id", EventName: "s3:ObjectCreated:Copy"})
	}
}

func FuzzDeliveryMatchesEncodingJSON(f *testing.F) {
	f.Add("k", "b", "etag", "v", "ua", "id", "s3:ObjectCreated:Put", int64(1), int64(1764000000000000000))
	f.Add("\xff<>&\u2028", "", "", "", "\x00", "\"", "", int64(-1), int64(-5))
	f.Fuzz(func(t *testing.T, key, bucket, etag, version, ua, id, name string, size, nanos int64) {
		e := Event{Bucket: bucket, Key: key, ETag: etag, VersionID: version, UserAgent: ua, Size: size,
			Time: time.Unix(0, nanos), Region: ua, Principal: id, Owner: key, SourceIP: etag, RequestID: name, HostID: bucket}
		checkDelivery(t, e, Matched{ID: id, EventName: name})
	})
}

func BenchmarkDelivery(b *testing.B) {
	e := Event{Name: ObjectCreatedPut, Bucket: "bench", Key: "shardstore-bench/20261128T102038-7e6f/obj-000123", Size: 4096,
		ETag: "0123456789abcdef0123456789abcdef", VersionID: "", Time: time.Now(), Region: "us-east-1",
		Principal: "shardstoreadmin", Owner: "shardstoreadmin", SourceIP: "127.0.0.1", UserAgent: "aws-sdk-go-v2/1.30",
		RequestID: "187C2B6F4D1E2A3B", HostID: "dd9025bab4ad464b049177c95eb6ebf374d3b3fd1af9251148b658df7ac2e3e8"}
	m := Matched{Target: "B:webhook", ID: "rule1", EventName: "s3:ObjectCreated:Put"}
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = e.Delivery(m)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = oracleDelivery(b, e, m)
		}
	})
}
