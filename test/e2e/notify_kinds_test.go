package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	mqtt "github.com/eclipse/paho.mqtt.golang"
	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardstore/shardstore/internal/notifytarget/targettest"
)

// kindCase is one kind of notification target under
// TestBucketNotificationsEveryKind: its real server, the settings that
// configure the server's target (as MINIO_NOTIFY_<CONFIG>_<FIELD>_E2E
// variables), and a reader that returns every event the system holds
// so far, as "eventName key" lines.
type kindCase struct {
	kind, config string
	start        func(t *testing.T) (settings map[string]string, read func(t *testing.T) []string, srv *targettest.Server)
	// durable: the system keeps what it accepted for a reader across
	// its own restart, so the test stops it during writes.
	durable bool
}

// TestBucketNotificationsEveryKind: for every kind of target, the real
// system is started, the server is configured with MinIO's variables,
// aws-sdk-go-v2 makes each kind of object event (put, copy, multipart
// complete, delete of a key that needs URL encoding), and the events
// are read back from the system with its own client. For the systems
// that keep messages across their own restart, the system is then
// stopped while more objects are written, and every acknowledged
// write's event arrives once it is started again.
func TestBucketNotificationsEveryKind(t *testing.T) {
	singleNodeOnly(t, "the server's environment is set per process here")
	cases := []kindCase{
		{kind: "nats", config: "NATS", durable: true, start: startNATSKind},
		{kind: "redis", config: "REDIS", durable: true, start: startRedisKind},
		{kind: "postgresql", config: "POSTGRES", durable: true, start: startPostgresKind},
		{kind: "mysql", config: "MYSQL", durable: true, start: startMySQLKind},
		{kind: "amqp", config: "AMQP", durable: true, start: startAMQPKind},
		{kind: "mqtt", config: "MQTT", start: startMQTTKind},
		{kind: "kafka", config: "KAFKA", durable: true, start: startKafkaKind},
	}
	for _, kc := range cases {
		t.Run(kc.kind, func(t *testing.T) {
			settings, read, srv := kc.start(t)
			dir := t.TempDir()
			env := append(serverEnv(), "MINIO_NOTIFY_"+kc.config+"_ENABLE_E2E=on")
			for k, v := range settings {
				env = append(env, "MINIO_NOTIFY_"+kc.config+"_"+strings.ToUpper(k)+"_E2E="+v)
			}
			s := launch(t, dir, env, []string{"server", "--console-address", "", "--address", "127.0.0.1:0",
				"--notify-retry-max", "1s", filepath.Join(dir, "drive") + "{1...4}"})
			c := s.root()
			ctx := context.Background()
			bucket := "kind-" + kc.kind
			must(t, err1(c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})))
			must(t, err1(c.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{
				Bucket: aws.String(bucket),
				NotificationConfiguration: &types.NotificationConfiguration{QueueConfigurations: []types.QueueConfiguration{{
					Id: aws.String("all"), QueueArn: aws.String("arn:minio:sqs::E2E:" + kc.kind),
					Events: []types.Event{"s3:ObjectCreated:*", "s3:ObjectRemoved:*"}}}}})))

			put := func(key string) {
				t.Helper()
				must(t, err1(c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
					Body: bytes.NewReader([]byte("body of " + key))})))
			}
			put("a.txt")
			must(t, err1(c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String("b dir/b+ü.txt"),
				CopySource: aws.String(bucket + "/a.txt")})))
			up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("c.bin")})
			must(t, err)
			part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("c.bin"),
				UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("one part"))})
			must(t, err)
			must(t, err1(c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket),
				Key: aws.String("c.bin"), UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{
					Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}})))
			must(t, err1(c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("b dir/b+ü.txt")})))
			want := []string{
				"s3:ObjectCreated:Put " + bucket + "/a.txt",
				"s3:ObjectCreated:Copy " + bucket + "/b dir/b+ü.txt",
				"s3:ObjectCreated:CompleteMultipartUpload " + bucket + "/c.bin",
				"s3:ObjectRemoved:Delete " + bucket + "/b dir/b+ü.txt",
			}
			waitEvents(t, kc.kind, read, want)

			if !kc.durable {
				t.Logf("%s: no restart phase: the broker keeps nothing for a subscriber across its own restart (the conformance suite checks Send fails while it is down)", kc.kind)
				return
			}
			t0 := time.Now()
			srv.Stop(t)
			t.Logf("%s: stopped in %v", kc.kind, time.Since(t0).Round(time.Millisecond))
			for i := range 5 {
				key := fmt.Sprintf("while-down/%d", i)
				put(key)
				want = append(want, "s3:ObjectCreated:Put "+bucket+"/"+key)
			}
			t0 = time.Now()
			srv.Start(t)
			t.Logf("%s: started again in %v", kc.kind, time.Since(t0).Round(time.Millisecond))
			t0 = time.Now()
			waitEvents(t, kc.kind, read, want)
			t.Logf("%s: every event of the writes made while it was down arrived %v after the start", kc.kind, time.Since(t0).Round(time.Millisecond))
		})
	}
}

func err1[T any](_ T, err error) error { return err }

// waitEvents waits until the system holds exactly want (as a multiset:
// at-least-once may repeat an event after a retry, which is allowed, so
// repeats are folded), and each key's events are in want's order.
func waitEvents(t *testing.T, kind string, read func(t *testing.T) []string, want []string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var got []string
	for time.Now().Before(deadline) {
		got = read(t)
		if sameEvents(got, want) {
			checkKeyOrder(t, kind, got, want)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: events\n%s\nwant\n%s", kind, strings.Join(got, "\n"), strings.Join(want, "\n"))
}

func sameEvents(got, want []string) bool {
	set := func(l []string) []string {
		m := map[string]bool{}
		for _, e := range l {
			m[e] = true
		}
		out := make([]string, 0, len(m))
		for e := range m {
			out = append(out, e)
		}
		sort.Strings(out)
		return out
	}
	return strings.Join(set(got), "\n") == strings.Join(set(want), "\n")
}

// checkKeyOrder: the first arrival of each event of one key comes in
// the order the requests were made.
func checkKeyOrder(t *testing.T, kind string, got, want []string) {
	t.Helper()
	key := func(e string) string { _, k, _ := strings.Cut(e, " "); return k }
	first := map[string]int{}
	for i, e := range got {
		if _, ok := first[e]; !ok {
			first[e] = i
		}
	}
	last := map[string]int{}
	for _, e := range want {
		if p, ok := last[key(e)]; ok && first[e] < p {
			t.Errorf("%s: %q arrived before an earlier event of its key", kind, e)
		}
		last[key(e)] = first[e]
	}
}

// eventLines turns what a system holds (MinIO's envelope, a Redis or
// SQL access-format entry, or a bare {"Records":[...]}) into
// "eventName bucket/key" lines, the key URL-decoded as S3 sends it.
func eventLines(t *testing.T, raw []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("event is not JSON: %v: %.200q", err, raw)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if recs, ok := x["Records"]; ok {
				walk(recs)
				return
			}
			if ev, ok := x["Event"]; ok {
				walk(ev)
				return
			}
			name, _ := x["eventName"].(string)
			s3m, _ := x["s3"].(map[string]any)
			b, _ := s3m["bucket"].(map[string]any)
			o, _ := s3m["object"].(map[string]any)
			bn, _ := b["name"].(string)
			ok, _ := o["key"].(string)
			key, err := url.QueryUnescape(ok)
			if name == "" || bn == "" || err != nil {
				t.Fatalf("not an S3 event record: %.300q", raw)
			}
			out = append(out, "s3:"+name+" "+bn+"/"+key)
		}
	}
	walk(v)
	return out
}

func startNATSKind(t *testing.T) (map[string]string, func(*testing.T) []string, *targettest.Server) {
	srv := targettest.StartNATS(t)
	settings := map[string]string{"address": srv.Addr, "username": srv.User, "password": srv.Password,
		"subject": "e2e.events", "jetstream": "on"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := nats.Connect(srv.URL)
	must(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	must(t, err)
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "E2E", Subjects: []string{"e2e.events"}, Storage: jetstream.FileStorage})
	must(t, err)
	read := func(t *testing.T) []string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		nc, err := nats.Connect(srv.URL)
		if err != nil {
			return nil // restarting
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		must(t, err)
		st, err := js.Stream(ctx, "E2E")
		if err != nil {
			return nil
		}
		info, err := st.Info(ctx)
		if err != nil {
			return nil
		}
		var out []string
		for seq := info.State.FirstSeq; seq > 0 && seq <= info.State.LastSeq; seq++ {
			m, err := st.GetMsg(ctx, seq)
			if err != nil {
				return nil
			}
			out = append(out, eventLines(t, m.Data)...)
		}
		return out
	}
	return settings, read, srv
}

func startRedisKind(t *testing.T) (map[string]string, func(*testing.T) []string, *targettest.Server) {
	srv := targettest.StartRedis(t)
	settings := map[string]string{"address": srv.Addr, "password": srv.Password, "key": "e2e:events", "format": "access"}
	read := func(t *testing.T) []string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rc := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: srv.Password, MaxRetries: -1})
		defer rc.Close()
		vals, err := rc.LRange(ctx, "e2e:events", 0, -1).Result()
		if err != nil {
			return nil
		}
		var out []string
		for _, v := range vals {
			out = append(out, eventLines(t, []byte(v))...)
		}
		return out
	}
	return settings, read, srv
}

func startPostgresKind(t *testing.T) (map[string]string, func(*testing.T) []string, *targettest.Server) {
	srv := targettest.StartPostgreSQL(t)
	settings := map[string]string{"connection_string": srv.URL, "table": "e2e_events", "format": "access"}
	read := func(t *testing.T) []string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, srv.URL)
		if err != nil {
			return nil
		}
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, "SELECT event_data::text FROM e2e_events ORDER BY event_time")
		if err != nil {
			return nil // the table is made with the first event
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			must(t, rows.Scan(&s))
			out = append(out, eventLines(t, []byte(s))...)
		}
		return out
	}
	return settings, read, srv
}

func startMySQLKind(t *testing.T) (map[string]string, func(*testing.T) []string, *targettest.Server) {
	srv := targettest.StartMariaDB(t)
	settings := map[string]string{"dsn_string": srv.URL, "table": "e2e_events", "format": "access"}
	read := func(t *testing.T) []string {
		db, err := sql.Open("mysql", srv.URL)
		must(t, err)
		defer db.Close()
		rows, err := db.Query("SELECT event_data FROM e2e_events ORDER BY event_time")
		if err != nil {
			return nil
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var b []byte
			must(t, rows.Scan(&b))
			out = append(out, eventLines(t, b)...)
		}
		return out
	}
	return settings, read, srv
}

func startAMQPKind(t *testing.T) (map[string]string, func(*testing.T) []string, *targettest.Server) {
	srv := targettest.StartRabbitMQ(t)
	settings := map[string]string{"url": srv.URL, "exchange": "e2e", "exchange_type": "direct", "routing_key": "events",
		"mandatory": "on", "durable": "on", "delivery_mode": "2"}
	conn, err := amqp.Dial(srv.URL)
	must(t, err)
	ch, err := conn.Channel()
	must(t, err)
	must(t, ch.ExchangeDeclare("e2e", "direct", true, false, false, false, nil))
	_, err = ch.QueueDeclare("e2e-events", true, false, false, false, nil)
	must(t, err)
	must(t, ch.QueueBind("e2e-events", "events", "e2e", false, nil))
	_ = conn.Close()
	// The queue is durable and the messages persistent, so the reader
	// takes them (acknowledged) whenever it asks and keeps them here.
	var mu sync.Mutex
	var got []string
	read := func(t *testing.T) []string {
		mu.Lock()
		defer mu.Unlock()
		conn, err := amqp.Dial(srv.URL)
		if err != nil {
			return append([]string(nil), got...)
		}
		defer conn.Close()
		ch, err := conn.Channel()
		if err != nil {
			return append([]string(nil), got...)
		}
		for {
			m, ok, err := ch.Get("e2e-events", true)
			if err != nil || !ok {
				break
			}
			got = append(got, eventLines(t, m.Body)...)
		}
		return append([]string(nil), got...)
	}
	return settings, read, srv
}

func startMQTTKind(t *testing.T) (map[string]string, func(*testing.T) []string, *targettest.Server) {
	srv := targettest.StartMosquitto(t)
	settings := map[string]string{"broker": srv.URL, "topic": "e2e/events", "qos": "1", "username": srv.User, "password": srv.Password}
	var mu sync.Mutex
	var got []string
	opts := mqtt.NewClientOptions().AddBroker(srv.URL).SetClientID("shardstore-e2e-reader").
		SetUsername(srv.User).SetPassword(srv.Password).SetCleanSession(true).SetOrderMatters(true)
	reader := mqtt.NewClient(opts)
	if tok := reader.Connect(); !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		t.Fatalf("mqtt reader connect: %v", tok.Error())
	}
	t.Cleanup(func() { reader.Disconnect(250) })
	tok := reader.Subscribe("e2e/events", 1, func(_ mqtt.Client, m mqtt.Message) {
		lines := eventLines(t, m.Payload())
		mu.Lock()
		got = append(got, lines...)
		mu.Unlock()
	})
	if !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		t.Fatalf("mqtt subscribe: %v", tok.Error())
	}
	read := func(*testing.T) []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
	return settings, read, srv
}

func startKafkaKind(t *testing.T) (map[string]string, func(*testing.T) []string, *targettest.Server) {
	srv := targettest.StartKafka(t)
	settings := map[string]string{}
	for k, v := range srv.Settings {
		settings[k] = v
	}
	settings["topic"] = "e2e-events"
	// The reader never creates the topic: the target must (a new topic
	// is created by the producer where the broker allows it, as MinIO's
	// client does).
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.PlainAddr), kgo.ConsumeTopics("e2e-events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	must(t, err)
	t.Cleanup(cl.Close)
	var got []string
	read := func(t *testing.T) []string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { got = append(got, eventLines(t, r.Value)...) })
		return append([]string(nil), got...)
	}
	return settings, read, srv
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
