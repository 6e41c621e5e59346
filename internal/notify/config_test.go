package notify

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func known(t string) bool { return t == "1:webhook" || t == "_:webhook" || t == "two:kafka" }

const queueRule = `<QueueConfiguration><Id>%s</Id><Filter><S3Key><FilterRule><Name>prefix</Name><Value>%s</Value></FilterRule><FilterRule><Name>Suffix</Name><Value>%s</Value></FilterRule></S3Key></Filter><Queue>%s</Queue>%s</QueueConfiguration>`

func TestParseConfig(t *testing.T) {
	ns := `<NotificationConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`
	cases := []struct {
		name, doc string
		code, msg string // "" = accepted
		rules     int
	}{
		{"empty", `<NotificationConfiguration/>`, "", "", 0},
		{"queue", ns + `<QueueConfiguration><Queue>arn:minio:sqs::1:webhook</Queue><Event>s3:ObjectCreated:*</Event></QueueConfiguration></NotificationConfiguration>`, "", "", 1},
		{"shardstore arn and region", `<NotificationConfiguration><QueueConfiguration><Queue>arn:shardstore:sqs:us-east-1:1:webhook</Queue><Event>s3:ObjectRemoved:Delete</Event></QueueConfiguration></NotificationConfiguration>`, "", "", 1},
		{"topic and lambda", `<NotificationConfiguration><TopicConfiguration><Topic>arn:minio:sns::1:webhook</Topic><Event>s3:ObjectTagging:*</Event></TopicConfiguration><CloudFunctionConfiguration><CloudFunction>arn:minio:lambda::two:kafka</CloudFunction><Event>s3:LifecycleExpiration:*</Event></CloudFunctionConfiguration></NotificationConfiguration>`, "", "", 2},
		{"unknown arn", `<NotificationConfiguration><QueueConfiguration><Queue>arn:minio:sqs::9:webhook</Queue><Event>s3:ObjectCreated:Put</Event></QueueConfiguration></NotificationConfiguration>`, "InvalidArgument", ErrUnknownDestination, 0},
		{"aws arn", `<NotificationConfiguration><QueueConfiguration><Queue>arn:aws:sqs:us-east-1:123:q</Queue><Event>s3:ObjectCreated:Put</Event></QueueConfiguration></NotificationConfiguration>`, "InvalidArgument", ErrUnknownDestination, 0},
		{"arn with colon id", `<NotificationConfiguration><QueueConfiguration><Queue>arn:minio:sqs::1:2:webhook</Queue><Event>s3:ObjectCreated:Put</Event></QueueConfiguration></NotificationConfiguration>`, "InvalidArgument", ErrUnknownDestination, 0},
		{"unknown event", `<NotificationConfiguration><QueueConfiguration><Queue>arn:minio:sqs::1:webhook</Queue><Event>s3:ObjectCreated:Sneeze</Event></QueueConfiguration></NotificationConfiguration>`, "InvalidArgument", "not supported", 0},
		{"bare star", `<NotificationConfiguration><QueueConfiguration><Queue>arn:minio:sqs::1:webhook</Queue><Event>s3:*</Event></QueueConfiguration></NotificationConfiguration>`, "InvalidArgument", "not supported", 0},
		{"deep star", `<NotificationConfiguration><QueueConfiguration><Queue>arn:minio:sqs::1:webhook</Queue><Event>s3:ObjectCreated:Put:*</Event></QueueConfiguration></NotificationConfiguration>`, "InvalidArgument", "not supported", 0},
		{"no event", `<NotificationConfiguration><QueueConfiguration><Queue>arn:minio:sqs::1:webhook</Queue></QueueConfiguration></NotificationConfiguration>`, "MalformedXML", "", 0},
		{"no queue", `<NotificationConfiguration><QueueConfiguration><Event>s3:ObjectCreated:Put</Event></QueueConfiguration></NotificationConfiguration>`, "MalformedXML", "", 0},
		{"bad filter name", `<NotificationConfiguration><QueueConfiguration><Filter><S3Key><FilterRule><Name>infix</Name><Value>a</Value></FilterRule></S3Key></Filter><Queue>arn:minio:sqs::1:webhook</Queue><Event>s3:ObjectCreated:Put</Event></QueueConfiguration></NotificationConfiguration>`, "InvalidArgument", "prefix or suffix", 0},
		{"two prefixes", `<NotificationConfiguration><QueueConfiguration><Filter><S3Key><FilterRule><Name>prefix</Name><Value>a</Value></FilterRule><FilterRule><Name>Prefix</Name><Value>b</Value></FilterRule></S3Key></Filter><Queue>arn:minio:sqs::1:webhook</Queue><Event>s3:ObjectCreated:Put</Event></QueueConfiguration></NotificationConfiguration>`, "InvalidArgument", "more than one prefix", 0},
		{"overlap same target", `<NotificationConfiguration>` + rule("a", "img/", "", "arn:minio:sqs::1:webhook", "s3:ObjectCreated:*") + rule("b", "img/x", ".jpg", "arn:minio:sqs::1:webhook", "s3:ObjectCreated:Put") + `</NotificationConfiguration>`, "InvalidArgument", "overlap", 0},
		{"disjoint prefixes", `<NotificationConfiguration>` + rule("a", "img/", "", "arn:minio:sqs::1:webhook", "s3:ObjectCreated:*") + rule("b", "doc/", "", "arn:minio:sqs::1:webhook", "s3:ObjectCreated:*") + `</NotificationConfiguration>`, "", "", 2},
		{"disjoint suffixes", `<NotificationConfiguration>` + rule("a", "", ".jpg", "arn:minio:sqs::1:webhook", "s3:ObjectCreated:*") + rule("b", "", ".png", "arn:minio:sqs::1:webhook", "s3:ObjectCreated:*") + `</NotificationConfiguration>`, "", "", 2},
		{"different events", `<NotificationConfiguration>` + rule("a", "", "", "arn:minio:sqs::1:webhook", "s3:ObjectCreated:*") + rule("b", "", "", "arn:minio:sqs::1:webhook", "s3:ObjectRemoved:*") + `</NotificationConfiguration>`, "", "", 2},
		{"two targets same filter", `<NotificationConfiguration>` + rule("a", "", "", "arn:minio:sqs::1:webhook", "s3:ObjectCreated:*") + rule("b", "", "", "arn:minio:sqs::two:kafka", "s3:ObjectCreated:*") + `</NotificationConfiguration>`, "", "", 2},
		{"duplicate id", `<NotificationConfiguration>` + rule("a", "x", "", "arn:minio:sqs::1:webhook", "s3:ObjectCreated:*") + rule("a", "y", "", "arn:minio:sqs::1:webhook", "s3:ObjectCreated:*") + `</NotificationConfiguration>`, "InvalidArgument", "unique", 0},
		{"not xml", `{"Queue": 1}`, "MalformedXML", "", 0},
		{"trailing junk", `<NotificationConfiguration/><x/>`, "MalformedXML", "", 0},
		{"wrong root", `<LifecycleConfiguration/>`, "MalformedXML", "", 0},
		{"entity bomb", `<!DOCTYPE x [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><NotificationConfiguration>&b;</NotificationConfiguration>`, "MalformedXML", "", 0},
		{"long filter", `<NotificationConfiguration>` + rule("a", strings.Repeat("p", 2000), "", "arn:minio:sqs::1:webhook", "s3:ObjectCreated:*") + `</NotificationConfiguration>`, "InvalidArgument", "longer", 0},
		{"nul in event", "<NotificationConfiguration><QueueConfiguration><Queue>arn:minio:sqs::1:webhook</Queue><Event>s3:Object\x00</Event></QueueConfiguration></NotificationConfiguration>", "MalformedXML", "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(c.doc), known)
			if c.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(cfg.Rules) != c.rules {
					t.Fatalf("%d rules, want %d", len(cfg.Rules), c.rules)
				}
				// The canonical form parses back to the same rules.
				again, err := ParseConfig(cfg.Marshal(""), known)
				if err != nil || len(again.Rules) != c.rules {
					t.Fatalf("canonical form: %v", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Code != c.code || !strings.Contains(ce.Message, c.msg) {
				t.Fatalf("got %v, want %s containing %q", err, c.code, c.msg)
			}
		})
	}
}

func rule(id, prefix, suffix, arn string, events ...string) string {
	var ev string
	for _, e := range events {
		ev += "<Event>" + e + "</Event>"
	}
	return strings.NewReplacer("%ID", id, "%P", prefix, "%S", suffix, "%A", arn, "%E", ev).Replace(
		`<QueueConfiguration><Id>%ID</Id><Filter><S3Key><FilterRule><Name>prefix</Name><Value>%P</Value></FilterRule><FilterRule><Name>suffix</Name><Value>%S</Value></FilterRule></S3Key></Filter><Queue>%A</Queue>%E</QueueConfiguration>`)
}

func TestMatch(t *testing.T) {
	doc := `<NotificationConfiguration>` +
		rule("img", "img/", ".jpg", "arn:minio:sqs::1:webhook", "s3:ObjectCreated:*", "s3:ObjectRemoved:*") +
		rule("tags", "", "", "arn:minio:sqs::two:kafka", "s3:ObjectTagging:*", "s3:LifecycleExpiration:*") +
		`</NotificationConfiguration>`
	c, err := ParseConfig([]byte(doc), known)
	must(t, err)
	cases := []struct {
		ev   Name
		key  string
		want string // target=name,...
	}{
		{ObjectCreatedPut, "img/a.jpg", "1:webhook=s3:ObjectCreated:Put"},
		{ObjectCreatedPut, "img/a.png", ""},
		{ObjectCreatedPut, "doc/a.jpg", ""},
		{ObjectRemovedDeleteMarker, "img/x.jpg", "1:webhook=s3:ObjectRemoved:DeleteMarkerCreated"},
		{ObjectCreatedPutTagging, "img/a.jpg", "1:webhook=s3:ObjectCreated:PutTagging,two:kafka=s3:ObjectTagging:Put"},
		{ObjectCreatedPutTagging, "z", "two:kafka=s3:ObjectTagging:Put"},
		{LifecycleExpirationDelete, "img/a.jpg", "1:webhook=s3:ObjectRemoved:Delete,two:kafka=s3:LifecycleExpiration:Delete"},
		{ObjectCreatedPutRetention, "z", ""},
	}
	for _, tc := range cases {
		var got []string
		for _, m := range c.Match(tc.ev, tc.key) {
			got = append(got, m.Target+"="+m.EventName)
		}
		if s := strings.Join(got, ","); s != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.ev, tc.key, s, tc.want)
		}
	}
}

func TestEventRecord(t *testing.T) {
	ev := Event{Name: ObjectCreatedPut, Bucket: "bkt", Key: "a b/ü+&.txt", Size: 5, ETag: "abc", VersionID: "v1",
		Time: time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC), Region: "us-east-1", Principal: "AKIA", Owner: "own",
		SourceIP: "127.0.0.1", RequestID: "REQ", HostID: "HOST"}
	d := ev.Delivery(Matched{Target: "1:webhook", ID: "cfg", EventName: string(ObjectCreatedPut)})
	var env struct {
		EventName string
		Key       string
		Records   []map[string]any
	}
	must(t, json.Unmarshal(d.Payload, &env))
	if env.EventName != "s3:ObjectCreated:Put" || env.Key != "bkt/a b/ü+&.txt" || len(env.Records) != 1 {
		t.Fatalf("envelope %+v", env)
	}
	r := env.Records[0]
	s3 := r["s3"].(map[string]any)
	obj := s3["object"].(map[string]any)
	bkt := s3["bucket"].(map[string]any)
	checks := map[string]any{
		"eventVersion": r["eventVersion"], "eventSource": r["eventSource"], "eventName": r["eventName"],
		"eventTime": r["eventTime"], "key": obj["key"], "size": obj["size"], "eTag": obj["eTag"],
		"versionId": obj["versionId"], "bucket": bkt["name"], "arn": bkt["arn"], "configurationId": s3["configurationId"],
		"principal": r["userIdentity"].(map[string]any)["principalId"],
		"ip":        r["requestParameters"].(map[string]any)["sourceIPAddress"],
		"reqid":     r["responseElements"].(map[string]any)["x-amz-request-id"],
	}
	want := map[string]any{"eventVersion": "2.0", "eventSource": "aws:s3", "eventName": "ObjectCreated:Put",
		"eventTime": "2026-01-02T03:04:05.006Z", "key": "a+b%2F%C3%BC%2B%26.txt", "size": 5.0, "eTag": "abc",
		"versionId": "v1", "bucket": "bkt", "arn": "arn:aws:s3:::bkt", "configurationId": "cfg", "principal": "AKIA",
		"ip": "127.0.0.1", "reqid": "REQ"}
	for k, v := range want {
		if checks[k] != v {
			t.Errorf("%s = %v, want %v", k, checks[k], v)
		}
	}
	if string(d.Record) == "" || !strings.Contains(string(d.Payload), string(d.Record)) {
		t.Error("Record is not the record inside Payload")
	}
}

func TestFromEnv(t *testing.T) {
	kinds := []Kind{{Name: "webhook", Fields: []Field{{Name: "endpoint", Required: true}, {Name: "auth_token", Secret: true}, {Name: "queue_limit"}}},
		{Name: "kafka", Fields: []Field{{Name: "brokers", Required: true}}}}
	env := []string{
		"MINIO_NOTIFY_WEBHOOK_ENABLE_PRIMARY=on",
		"MINIO_NOTIFY_WEBHOOK_ENDPOINT_PRIMARY=http://a/",
		"MINIO_NOTIFY_WEBHOOK_AUTH_TOKEN_PRIMARY=tok",
		"SHARDSTORE_NOTIFY_WEBHOOK_ENDPOINT_PRIMARY=http://b/", // wins
		"MINIO_NOTIFY_WEBHOOK_ENABLE=on",
		"MINIO_NOTIFY_WEBHOOK_ENDPOINT=http://default/",
		"MINIO_NOTIFY_WEBHOOK_ENABLE_OFF=off",
		"MINIO_NOTIFY_WEBHOOK_ENDPOINT_OFF=http://off/",
		"MINIO_NOTIFY_NSQ_ENABLE_X=on",
		"MINIO_NOTIFY_WEBHOOK_COMMENT_PRIMARY=hi",
		"MINIO_AUDIT_WEBHOOK_ENABLE_A=on",
		"MINIO_AUDIT_WEBHOOK_ENDPOINT_A=http://audit/",
		"MINIO_AUDIT_KAFKA_ENABLE_K=on",
		"MINIO_AUDIT_KAFKA_BROKERS_K=h:9092",
		"PATH=/bin",
		"broken",
	}
	specs, unknown, err := FromEnv(env, kinds)
	must(t, err)
	var got []string
	for _, s := range specs {
		got = append(got, s.Kind+"/"+s.ID+"/"+s.Settings["endpoint"]+s.Settings["brokers"]+"/"+s.Settings["auth_token"]+"/"+map[bool]string{true: "audit", false: "event"}[s.Audit])
	}
	want := "webhook/PRIMARY/http://b//tok/event,webhook/_/http://default///event,kafka/K/h:9092//audit,webhook/A/http://audit///audit"
	if strings.Join(got, ",") != want {
		t.Fatalf("specs\n%s\nwant\n%s", strings.Join(got, ","), want)
	}
	if strings.Join(unknown, ",") != "MINIO_NOTIFY_NSQ_ENABLE_X,MINIO_NOTIFY_WEBHOOK_COMMENT_PRIMARY" {
		t.Fatalf("unknown %v", unknown)
	}
	for _, bad := range [][]string{
		{"MINIO_NOTIFY_WEBHOOK_ENABLE_X=maybe"},
		{"MINIO_NOTIFY_WEBHOOK_ENABLE_X=on"},                                       // no endpoint
		{"MINIO_NOTIFY_WEBHOOK_ENABLE_X=on", "MINIO_NOTIFY_WEBHOOK_ENDPOINT_X=  "}, // blank endpoint
		{"MINIO_NOTIFY_WEBHOOK_ENABLE_a/b=on", "MINIO_NOTIFY_WEBHOOK_ENDPOINT_a/b=http://x/"},
		{"MINIO_NOTIFY_WEBHOOK_ENABLE_" + strings.Repeat("x", 65) + "=on"},
	} {
		if _, _, err := FromEnv(bad, kinds); err == nil {
			t.Errorf("%v accepted", bad)
		} else if strings.Contains(err.Error(), "http://x/") {
			t.Errorf("error echoes a value: %v", err)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`<NotificationConfiguration>` + rule("a", "img/", ".jpg", "arn:minio:sqs::1:webhook", "s3:ObjectCreated:*") + `</NotificationConfiguration>`))
	f.Add([]byte(`<NotificationConfiguration/>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		c, err := ParseConfig(doc, known)
		if err != nil {
			return
		}
		if _, err := ParseConfig(c.Marshal(""), known); err != nil {
			t.Fatalf("canonical form of an accepted document refused: %v", err)
		}
	})
}

// TestFromEnvConfigName: a kind whose configuration name differs from
// its ARN type (MinIO's notify_postgres for the postgresql kind) is
// found by either spelling, and a prefix of one name never captures
// the other.
func TestFromEnvConfigName(t *testing.T) {
	kinds := []Kind{{Name: "postgresql", Config: "postgres", Fields: []Field{{Name: "table", Required: true}}}}
	specs, unknown, err := FromEnv([]string{
		"MINIO_NOTIFY_POSTGRES_ENABLE_A=on", "MINIO_NOTIFY_POSTGRES_TABLE_A=events",
		"MINIO_NOTIFY_POSTGRESQL_ENABLE_B=on", "MINIO_NOTIFY_POSTGRESQL_TABLE_B=more",
	}, kinds)
	must(t, err)
	if len(unknown) != 0 || len(specs) != 2 {
		t.Fatalf("specs %+v unknown %v", specs, unknown)
	}
	for _, s := range specs {
		if s.Kind != "postgresql" || (s.ID == "A") != (s.Settings["table"] == "events") {
			t.Fatalf("spec %+v", s)
		}
	}
	if k := kindNamed(kinds, "postgres"); k.Name != "postgresql" {
		t.Fatalf("kindNamed(postgres) = %q", k.Name)
	}
}
