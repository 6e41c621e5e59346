package notifytarget

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/notify"
)

func TestStoreFormats(t *testing.T) {
	d := notify.Delivery{
		EventName: "s3:ObjectCreated:Put", Key: "b/k",
		Time:    time.Date(2026, 1, 2, 3, 4, 5, 678_000_000, time.FixedZone("x", 3600)),
		Payload: []byte(`{"EventName":"s3:ObjectCreated:Put","Key":"b/k","Records":[{"a":1}]}`),
		Record:  []byte(`{"a":1}`),
	}
	if got, want := string(records(d)), `{"Records":[{"a":1}]}`; got != want {
		t.Errorf("records: %s, want %s", got, want)
	}
	if got, want := string(redisAccess(d)), `[{"Event":[{"a":1}],"EventTime":"2026-01-02T02:04:05.678Z"}]`; got != want {
		t.Errorf("redisAccess: %s, want %s", got, want)
	}
	audit := notify.Delivery{Payload: []byte(`{"version":"1"}`), Time: d.Time}
	if got, want := string(records(audit)), `{"Records":[{"version":"1"}]}`; got != want {
		t.Errorf("records of an audit record: %s, want %s", got, want)
	}
}

func TestScrub(t *testing.T) {
	base := io.ErrUnexpectedEOF
	err := scrub(&wrapped{msg: "dial amqp://u:s3cr3t@h: refused, password s3cr3t", err: base}, []string{"s3cr3t", ""})
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("scrub left the secret: %v", err)
	}
	if !errors.Is(err, base) {
		t.Fatal("scrub lost the cause")
	}
	plain := errors.New("no secret here")
	if scrub(plain, []string{"s3cr3t"}) != plain {
		t.Fatal("scrub changed an error without secrets")
	}
	if scrub(nil, nil) != nil {
		t.Fatal("scrub(nil)")
	}
}

type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

func TestSecretsKeepTheirSpaces(t *testing.T) {
	s, err := parse("x", []notify.Field{{Name: "password", Secret: true}, {Name: "address"}},
		map[string]string{"password": " pw ", "address": " h:1 "})
	if err != nil {
		t.Fatal(err)
	}
	if s.str("password") != " pw " || s.str("address") != "h:1" {
		t.Fatalf("password %q, address %q", s.str("password"), s.str("address"))
	}
}
