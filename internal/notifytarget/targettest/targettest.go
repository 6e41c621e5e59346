// Package targettest is the conformance suite every kind of notification
// target passes against a real server of its system (started by the
// kind's test): records arrive with their bytes intact and in order per
// key, Send fails while the system is down and succeeds once it is back
// (on a target made while it was down, too: targets connect lazily),
// Healthy follows the system, the namespace formats delete a key on an
// ObjectRemoved event, and Close may be called twice.
//
// The suite sends realistic S3 event deliveries (MinIO's envelope around
// one event record, keys with spaces, non-ASCII and escapes, one record
// of 64 KiB) and reads back through the kind test's Read, which decodes
// what the system holds into Received values.
//
// The servers (servers.go) are for any test that needs one, the
// end-to-end tests of bucket notifications too: StartNATS, StartRedis,
// StartPostgreSQL, StartMariaDB, StartRabbitMQ, StartMosquitto and
// StartKafka each run a real server on loopback ports with a temporary
// data directory, installing it when missing (Find: Debian's packages;
// Kafka's jars from Maven Central with mvn), skipping with the reason
// when that is impossible, or failing with SHARDSTORE_REQUIRE_<X>=1.
// Each returns a Server with a target's Settings for it and the URL a
// test's own client uses.
package targettest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/notify"
)

// Format is how a system keeps records.
type Format int

const (
	// Stream: every record is appended (a message, a list entry, a row);
	// Read returns them in arrival order.
	Stream Format = iota
	// Namespace: one entry per key, replaced by each event and deleted
	// by an ObjectRemoved event; Read returns the current entries.
	Namespace
)

// Received is one record as read back from the system.
type Received struct {
	// Key is the entry's key (Namespace format only).
	Key string
	// Body is what the system holds for the record, decoded from the
	// system's own framing: compared with Config.Body(delivery).
	Body []byte
}

// Config describes the kind under test and its running server.
type Config struct {
	// New makes a target (connecting lazily: it is also called while the
	// server is stopped).
	New func(t *testing.T) notify.Target
	// Read returns what the system holds now: for Stream, every record
	// received since the server started, in order (duplicates allowed);
	// for Namespace, the current entries.
	Read   func(t *testing.T) []Received
	Format Format
	// Body is what of a delivery the system stores (default: Payload).
	Body func(d notify.Delivery) []byte
	// JSON compares bodies as JSON values, for systems that normalise
	// the JSON they store (PostgreSQL's jsonb).
	JSON bool
	// Stop stops the server; Start starts it again on the same address
	// with its data and returns once it (and the test's reader) answers.
	Stop, Start func(t *testing.T)
}

// Run runs the suite as subtests of t.
func Run(t *testing.T, c Config) {
	t.Helper()
	if c.Body == nil {
		c.Body = func(d notify.Delivery) []byte { return d.Payload }
	}
	r := &runner{c: c}
	t.Run("Healthy", r.healthy)
	if c.Format == Namespace {
		t.Run("NamespaceUpsertAndDelete", r.namespace)
	} else {
		t.Run("InOrderBytesIntact", r.inOrder)
	}
	t.Run("ConcurrentKeys", r.concurrentKeys)
	t.Run("DownThenUp", r.downThenUp)
	t.Run("CloseTwice", r.closeTwice)
}

type runner struct{ c Config }

// ctx is a context for one call, bounded so a hung call fails the test
// instead of hanging it.
func ctx(t *testing.T, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return c
}

func (r *runner) target(t *testing.T) notify.Target {
	tg := r.c.New(t)
	t.Cleanup(func() { _ = tg.Close() })
	return tg
}

func (r *runner) healthy(t *testing.T) {
	tg := r.target(t)
	if err := tg.Healthy(ctx(t, 20*time.Second)); err != nil {
		t.Fatalf("Healthy with the server up: %v", err)
	}
	if !strings.HasPrefix(tg.ARN(), "arn:minio:sqs::") {
		t.Errorf("ARN %q is not in MinIO's form arn:minio:sqs::<ID>:<type>", tg.ARN())
	}
}

// nonce makes this run's keys unique, so records of earlier runs or
// subtests kept by the server do not count.
func nonce(t *testing.T) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// Delivery builds a realistic delivery of one S3 event: MinIO's
// envelope around one record, the record holding the key URL-encoded as
// S3 does, and pad bytes of filler in its user metadata.
func Delivery(eventName, bucket, key string, seq, pad int) notify.Delivery {
	now := time.Date(2026, 11, 28, 7, 30, 0, seq*1_000_000, time.UTC)
	rec := map[string]any{
		"eventVersion": "2.0", "eventSource": "minio:s3", "awsRegion": "",
		"eventTime": now.Format("2006-01-02T15:04:05.000Z"), "eventName": strings.TrimPrefix(eventName, "s3:"),
		"userIdentity":      map[string]string{"principalId": "test"},
		"requestParameters": map[string]string{"sourceIPAddress": "127.0.0.1"},
		"s3": map[string]any{
			"s3SchemaVersion": "1.0", "configurationId": "Config",
			"bucket": map[string]any{"name": bucket, "arn": "arn:aws:s3:::" + bucket},
			"object": map[string]any{
				"key": url.QueryEscape(key), "size": seq * 10, "eTag": fmt.Sprintf("%032x", seq),
				"sequencer":    fmt.Sprintf("%016X", seq),
				"userMetadata": map[string]string{"x-amz-meta-pad": strings.Repeat("p", pad)},
			},
		},
	}
	record, err := json.Marshal(rec)
	if err != nil {
		panic(err)
	}
	var p bytes.Buffer
	p.WriteString(`{"EventName":`)
	en, _ := json.Marshal(eventName)
	p.Write(en)
	p.WriteString(`,"Key":`)
	k, _ := json.Marshal(bucket + "/" + key)
	p.Write(k)
	p.WriteString(`,"Records":[`)
	p.Write(record)
	p.WriteString("]}")
	return notify.Delivery{EventName: eventName, Key: bucket + "/" + key, Time: now, Payload: p.Bytes(), Record: record}
}

func (r *runner) send(t *testing.T, tg notify.Target, d notify.Delivery) {
	t.Helper()
	if err := tg.Send(ctx(t, 30*time.Second), d); err != nil {
		t.Fatalf("Send %s %q: %v", d.EventName, d.Key, err)
	}
}

func (r *runner) same(a, b []byte) bool {
	if !r.c.JSON {
		return bytes.Equal(a, b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// waitStream reads until every one of want has arrived (or gives up
// after a minute) and returns, for each of want, the index of its first
// arrival.
func (r *runner) waitStream(t *testing.T, want []notify.Delivery) []int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := r.c.Read(t)
		first := make([]int, len(want))
		missing := 0
		for i, d := range want {
			first[i] = -1
			body := r.c.Body(d)
			for j, g := range got {
				if r.same(g.Body, body) {
					first[i] = j
					break
				}
			}
			if first[i] < 0 {
				missing++
			}
		}
		if missing == 0 {
			return first
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d records never arrived with their bytes intact (read %d records)", missing, len(want), len(got))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (r *runner) inOrder(t *testing.T) {
	tg := r.target(t)
	bucket := "bkt-" + nonce(t)
	keys := []string{"plain.txt", "dir/sp ace+plus%25&<x>.bin", "ünï/cødé/☃.json"}
	var sent []notify.Delivery
	for i := 0; i < 15; i++ {
		ev := "s3:ObjectCreated:Put"
		if i%5 == 4 {
			ev = "s3:ObjectRemoved:Delete"
		}
		pad := 16
		if i == 7 {
			pad = 64 << 10
		}
		d := Delivery(ev, bucket, keys[i%len(keys)], i, pad)
		r.send(t, tg, d)
		sent = append(sent, d)
	}
	first := r.waitStream(t, sent)
	last := map[string]int{}
	for i, d := range sent {
		if prev, ok := last[d.Key]; ok && first[i] < prev {
			t.Errorf("record %d of key %q arrived before the key's previous record", i, d.Key)
		}
		last[d.Key] = first[i]
	}
}

// waitNamespace polls until the entries of this bucket are exactly want
// (key -> body), or fails after a minute.
func (r *runner) waitNamespace(t *testing.T, bucket string, want map[string][]byte) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := map[string][]byte{}
		for _, g := range r.c.Read(t) {
			if strings.HasPrefix(g.Key, bucket+"/") {
				got[g.Key] = g.Body
			}
		}
		problem := ""
		for k, w := range want {
			if g, ok := got[k]; !ok {
				problem = fmt.Sprintf("key %q missing", k)
			} else if !r.same(g, w) {
				problem = fmt.Sprintf("key %q holds %.200q, want %.200q", k, g, w)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				problem = fmt.Sprintf("key %q present, want it deleted", k)
			}
		}
		if problem == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(problem)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (r *runner) namespace(t *testing.T) {
	tg := r.target(t)
	bucket := "bkt-" + nonce(t)
	keys := []string{"plain.txt", "dir/sp ace+plus%25&<x>.bin", "ünï/cødé/☃.json"}
	want := map[string][]byte{}
	for i := 0; i < 9; i++ {
		pad := 16
		if i == 4 {
			pad = 64 << 10
		}
		d := Delivery("s3:ObjectCreated:Put", bucket, keys[i%len(keys)], i, pad)
		r.send(t, tg, d)
		want[d.Key] = r.c.Body(d)
	}
	r.waitNamespace(t, bucket, want)
	for i, ev := range []string{"s3:ObjectRemoved:Delete", "s3:ObjectRemoved:DeleteMarkerCreated"} {
		d := Delivery(ev, bucket, keys[i], 20+i, 16)
		r.send(t, tg, d)
		delete(want, d.Key)
	}
	r.waitNamespace(t, bucket, want)
}

// concurrentKeys sends the records of 8 keys from 8 goroutines at once
// on one target made for it (so the lazy connection is raced too), each
// goroutine its key's records in order, as the queue's lanes do: every
// record arrives intact and each key's records in order (Stream), or
// each key holds its last record and a removed one is gone (Namespace).
func (r *runner) concurrentKeys(t *testing.T) {
	tg := r.target(t)
	bucket := "bkt-" + nonce(t)
	const keys, per = 8, 6
	sent := make([][]notify.Delivery, keys)
	for k := range keys {
		for i := range per {
			ev := "s3:ObjectCreated:Put"
			if k == 0 && i == per-1 {
				ev = "s3:ObjectRemoved:Delete"
			}
			sent[k] = append(sent[k], Delivery(ev, bucket, fmt.Sprintf("k%d/ö %d.txt", k, k), 100*k+i, 16+k*100))
		}
	}
	start := make(chan struct{})
	errs := make(chan error, keys)
	for k := range keys {
		go func() {
			<-start
			for _, d := range sent[k] {
				if err := tg.Send(ctx(t, 30*time.Second), d); err != nil {
					errs <- fmt.Errorf("Send %s %q: %w", d.EventName, d.Key, err)
					return
				}
			}
			errs <- nil
		}()
	}
	close(start)
	for range keys {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if r.c.Format == Namespace {
		want := map[string][]byte{}
		for k := 1; k < keys; k++ {
			d := sent[k][per-1]
			want[d.Key] = r.c.Body(d)
		}
		r.waitNamespace(t, bucket, want)
		return
	}
	var all []notify.Delivery
	for _, s := range sent {
		all = append(all, s...)
	}
	first := r.waitStream(t, all)
	for k := range keys {
		for i := 1; i < per; i++ {
			if a, b := first[k*per+i-1], first[k*per+i]; b < a {
				t.Errorf("key %d: record %d arrived before record %d", k, i, i-1)
			}
		}
	}
}

func (r *runner) downThenUp(t *testing.T) {
	before := r.target(t)
	r.c.Stop(t)
	stopped := true
	defer func() {
		if stopped {
			r.c.Start(t)
		}
	}()
	// Made while the system is down: New must not fail.
	during := r.target(t)
	// Short deadlines: a client that retries inside Send (Kafka's)
	// fails when the deadline passes.
	if err := before.Healthy(ctx(t, 3*time.Second)); err == nil {
		t.Error("Healthy returned nil with the server stopped")
	}
	bucket := "bkt-" + nonce(t)
	d1 := Delivery("s3:ObjectCreated:Put", bucket, "down/one", 1, 16)
	d2 := Delivery("s3:ObjectCreated:Put", bucket, "down/two", 2, 16)
	for _, tg := range []notify.Target{before, during} {
		if err := tg.Send(ctx(t, 3*time.Second), d1); err == nil {
			t.Fatal("Send returned nil with the server stopped: it acknowledged what the system never had")
		}
	}
	r.c.Start(t)
	stopped = false
	// As the queue does: retry until the system answers.
	for i, tg := range []notify.Target{before, during} {
		d := []notify.Delivery{d1, d2}[i]
		var err error
		for try := 0; try < 60; try++ {
			if err = tg.Send(ctx(t, 10*time.Second), d); err == nil {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("Send still fails after the server came back: %v", err)
		}
		if err := tg.Healthy(ctx(t, 10*time.Second)); err != nil {
			t.Errorf("Healthy after a successful Send: %v", err)
		}
	}
	if r.c.Format == Namespace {
		r.waitNamespace(t, bucket, map[string][]byte{d1.Key: r.c.Body(d1), d2.Key: r.c.Body(d2)})
	} else {
		r.waitStream(t, []notify.Delivery{d1, d2})
	}
}

func (r *runner) closeTwice(t *testing.T) {
	tg := r.c.New(t)
	r.send(t, tg, Delivery("s3:ObjectCreated:Put", "bkt-"+nonce(t), "close", 1, 16))
	if err := tg.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := tg.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	unused := r.c.New(t)
	if err := unused.Close(); err != nil {
		t.Fatalf("Close of a target that never connected: %v", err)
	}
}
