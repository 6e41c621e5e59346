package s3api

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/notify"
)

// fakeNotifier knows the targets 1:webhook and 2:webhook and keeps
// what Publish was given, as "target name key".
type fakeNotifier struct {
	mu  sync.Mutex
	got []string
}

func (f *fakeNotifier) Has(t string) bool { return t == "1:webhook" || t == "2:webhook" }

func (f *fakeNotifier) Publish(ev notify.Event, c *notify.Config) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range c.Match(ev.Name, ev.Key) {
		f.got = append(f.got, fmt.Sprintf("%s %s %s", m.Target, m.EventName, ev.Key))
	}
	return nil
}

func (f *fakeNotifier) Enqueue(ev notify.Event, c *notify.Config) func() error {
	err := f.Publish(ev, c)
	return func() error { return err }
}

func (f *fakeNotifier) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.got
	f.got = nil
	sort.Strings(out)
	return out
}

const testNotification = `<NotificationConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
	`<QueueConfiguration><Id>all</Id><Queue>arn:minio:sqs::1:webhook</Queue><Event>s3:ObjectCreated:*</Event><Event>s3:ObjectRemoved:*</Event></QueueConfiguration>` +
	`<TopicConfiguration><Id>jpg</Id><Filter><S3Key><FilterRule><Name>suffix</Name><Value>.jpg</Value></FilterRule></S3Key></Filter><Topic>arn:shardstore:sqs::2:webhook</Topic><Event>s3:ObjectCreated:Put</Event><Event>s3:ObjectTagging:*</Event></TopicConfiguration>` +
	`</NotificationConfiguration>`

func TestBucketNotificationConfiguration(t *testing.T) {
	n := &fakeNotifier{}
	h := newHarness(t, func(c *Config) { c.Notify = n })
	h.expect(h.do("root", "PUT", "/bkt", nil), 200, "")
	// None set: an empty configuration, as S3 answers.
	rec := h.do("root", "GET", "/bkt?notification", nil)
	h.expect(rec, 200, "")
	if !strings.Contains(rec.Body.String(), "<NotificationConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"></NotificationConfiguration>") {
		t.Fatalf("empty configuration: %s", rec.Body.String())
	}
	h.expect(h.do("root", "PUT", "/bkt?notification", []byte(testNotification)), 200, "")
	rec = h.do("root", "GET", "/bkt?notification", nil)
	h.expect(rec, 200, "")
	var got struct {
		Queues []struct {
			ID     string   `xml:"Id"`
			Queue  string   `xml:"Queue"`
			Events []string `xml:"Event"`
		} `xml:"QueueConfiguration"`
		Topics []struct {
			Topic string `xml:"Topic"`
			Rules []struct {
				Name, Value string
			} `xml:"Filter>S3Key>FilterRule"`
		} `xml:"TopicConfiguration"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got.Queues) != 1 || len(got.Topics) != 1 ||
		got.Queues[0].ID != "all" || len(got.Queues[0].Events) != 2 || got.Topics[0].Topic != "arn:shardstore:sqs::2:webhook" ||
		len(got.Topics[0].Rules) != 1 || got.Topics[0].Rules[0].Value != ".jpg" {
		t.Fatalf("read back %+v (%v): %s", got, err, rec.Body.String())
	}
	// Refusals leave the stored configuration as it was.
	for _, c := range []struct{ body, code string }{
		{`<NotificationConfiguration><QueueConfiguration><Queue>arn:minio:sqs::3:webhook</Queue><Event>s3:ObjectCreated:*</Event></QueueConfiguration></NotificationConfiguration>`, "InvalidArgument"},
		{`<NotificationConfiguration><QueueConfiguration><Queue>arn:minio:sqs::1:webhook</Queue><Event>s3:ObjectCreated:Nope</Event></QueueConfiguration></NotificationConfiguration>`, "InvalidArgument"},
		{`<NotificationConfiguration><QueueConfiguration><Queue>arn:minio:sqs::1:webhook</Queue><Event>s3:ObjectCreated:*</Event></QueueConfiguration><QueueConfiguration><Queue>arn:minio:sqs::1:webhook</Queue><Event>s3:ObjectCreated:Put</Event></QueueConfiguration></NotificationConfiguration>`, "InvalidArgument"},
		{`<NotificationConfiguration><QueueConfiguration>`, "MalformedXML"},
		{`<Nope/>`, "MalformedXML"},
	} {
		h.expect(h.do("root", "PUT", "/bkt?notification", []byte(c.body)), 400, c.code)
	}
	if rec := h.do("root", "GET", "/bkt?notification", nil); !strings.Contains(rec.Body.String(), "<Id>all</Id>") {
		t.Fatalf("a refused document changed the configuration: %s", rec.Body.String())
	}
	if !strings.Contains(h.do("root", "PUT", "/bkt?notification", []byte(`<NotificationConfiguration><QueueConfiguration><Queue>arn:minio:sqs::3:webhook</Queue><Event>s3:ObjectCreated:*</Event></QueueConfiguration></NotificationConfiguration>`)).Body.String(),
		notify.ErrUnknownDestination) {
		t.Error("unknown destination: not S3's message")
	}
	// Only the owner configures it.
	h.expect(h.do("alice", "PUT", "/bkt?notification", []byte(testNotification)), 403, "AccessDenied")
	h.expect(h.do("alice", "GET", "/bkt?notification", nil), 403, "AccessDenied")
	// Without a notifier no destination exists.
	bare := newHarness(t, nil)
	bare.expect(bare.do("root", "PUT", "/bkt", nil), 200, "")
	bare.expect(bare.do("root", "PUT", "/bkt?notification", []byte(testNotification)), 400, "InvalidArgument")
	// An empty document removes it.
	h.expect(h.do("root", "PUT", "/bkt?notification", []byte(`<NotificationConfiguration/>`)), 200, "")
	if rec := h.do("root", "GET", "/bkt?notification", nil); strings.Contains(rec.Body.String(), "Queue") {
		t.Fatalf("not removed: %s", rec.Body.String())
	}
}

func TestBucketEvents(t *testing.T) {
	n := &fakeNotifier{}
	h := newHarness(t, func(c *Config) { c.Notify = n })
	h.expect(h.do("root", "PUT", "/bkt", nil), 200, "")
	h.expect(h.do("root", "PUT", "/bkt?notification", []byte(testNotification)), 200, "")
	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"put", func() { h.expect(h.do("root", "PUT", "/bkt/a.jpg", []byte("x")), 200, "") },
			[]string{"1:webhook s3:ObjectCreated:Put a.jpg", "2:webhook s3:ObjectCreated:Put a.jpg"}},
		{"put other suffix", func() { h.expect(h.do("root", "PUT", "/bkt/b.txt", []byte("x")), 200, "") },
			[]string{"1:webhook s3:ObjectCreated:Put b.txt"}},
		{"copy", func() {
			h.expect(h.do("root", "PUT", "/bkt/c.txt", nil, "X-Amz-Copy-Source", "/bkt/b.txt"), 200, "")
		}, []string{"1:webhook s3:ObjectCreated:Copy c.txt"}},
		{"tagging", func() {
			body := []byte(taggingDoc("k", "v"))
			h.expect(h.do("root", "PUT", "/bkt/a.jpg?tagging", body, "Content-MD5", contentMD5(body)), 200, "")
		}, []string{"1:webhook s3:ObjectCreated:PutTagging a.jpg", "2:webhook s3:ObjectTagging:Put a.jpg"}},
		{"delete tagging", func() { h.expect(h.do("root", "DELETE", "/bkt/a.jpg?tagging", nil), 204, "") },
			[]string{"1:webhook s3:ObjectCreated:DeleteTagging a.jpg", "2:webhook s3:ObjectTagging:Delete a.jpg"}},
		{"delete", func() { h.expect(h.do("root", "DELETE", "/bkt/a.jpg", nil), 204, "") },
			[]string{"1:webhook s3:ObjectRemoved:Delete a.jpg"}},
		{"delete objects", func() {
			body := []byte(`<Delete><Object><Key>b.txt</Key></Object><Object><Key>c.txt</Key></Object></Delete>`)
			h.expect(h.do("root", "POST", "/bkt?delete", body, "Content-MD5", contentMD5(body)), 200, "")
		}, []string{"1:webhook s3:ObjectRemoved:Delete b.txt", "1:webhook s3:ObjectRemoved:Delete c.txt"}},
		{"refused put", func() { h.expect(h.do("alice", "PUT", "/bkt/z.jpg", []byte("x")), 403, "AccessDenied") }, nil},
		{"read", func() { h.expect(h.do("root", "GET", "/bkt?list-type=2", nil), 200, "") }, nil},
	}
	for _, s := range steps {
		s.do()
		if got := n.take(); strings.Join(got, "|") != strings.Join(s.want, "|") {
			t.Errorf("%s: events %q, want %q", s.name, got, s.want)
		}
	}
	// A versioned bucket: a delete makes a marker.
	h.expect(h.do("root", "PUT", "/bkt?versioning", []byte(testVersioningEnabled)), 200, "")
	h.expect(h.do("root", "PUT", "/bkt/v.txt", []byte("x")), 200, "")
	n.take()
	rec := h.do("root", "DELETE", "/bkt/v.txt", nil)
	h.expect(rec, 204, "")
	if got := n.take(); len(got) != 1 || got[0] != "1:webhook s3:ObjectRemoved:DeleteMarkerCreated v.txt" {
		t.Errorf("delete marker: %q", got)
	}
	h.expect(h.do("root", "DELETE", "/bkt/v.txt?versionId="+rec.Header().Get("X-Amz-Version-Id"), nil), 204, "")
	if got := n.take(); len(got) != 1 || got[0] != "1:webhook s3:ObjectRemoved:Delete v.txt" {
		t.Errorf("marker removed: %q", got)
	}
	// Multipart.
	up := h.do("root", http.MethodPost, "/bkt/m.bin?uploads", nil)
	var init xmlInitiateMultipart
	if err := xml.Unmarshal(up.Body.Bytes(), &init); err != nil {
		t.Fatal(err)
	}
	part := h.do("root", "PUT", "/bkt/m.bin?partNumber=1&uploadId="+init.UploadID, []byte("data"))
	h.expect(part, 200, "")
	done := []byte(fmt.Sprintf("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>", part.Header().Get("ETag")))
	h.expect(h.do("root", "POST", "/bkt/m.bin?uploadId="+init.UploadID, done), 200, "")
	if got := n.take(); len(got) != 1 || got[0] != "1:webhook s3:ObjectCreated:CompleteMultipartUpload m.bin" {
		t.Errorf("multipart: %q", got)
	}
}

// headerWatch notes whether the answer's header went out.
type headerWatch struct {
	*httptest.ResponseRecorder
	sent bool
}

func (w *headerWatch) WriteHeader(code int) { w.sent = true; w.ResponseRecorder.WriteHeader(code) }
func (w *headerWatch) Write(p []byte) (int, error) {
	w.sent = true
	return w.ResponseRecorder.Write(p)
}

// auditWatch is an Auditor that records each record and whether the
// answer had started when it was queued.
type auditWatch struct {
	w       *headerWatch
	records []map[string]any
	late    int
}

func (a *auditWatch) HasAudit() bool { return true }
func (a *auditWatch) Audit(payload []byte, key string, _ time.Time) error {
	if a.w.sent {
		a.late++
	}
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		return err
	}
	m["key"] = key
	a.records = append(a.records, m)
	return nil
}

// TestAuditBeforeAnswer: a request's audit record is queued before the
// first byte of its answer (so it is durable when the client sees the
// answer), once, with the bytes received, the answer's length and its
// status; an error answer is audited too.
func TestAuditBeforeAnswer(t *testing.T) {
	aw := &auditWatch{}
	h := newHarness(t, func(c *Config) { c.Audit = aw })
	serve := func(method, target string, body []byte) *headerWatch {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req := httptest.NewRequest(method, target, rd)
		req.Header.Set("X-Test-User", "root")
		w := &headerWatch{ResponseRecorder: httptest.NewRecorder()}
		aw.w = w
		h.srv.ServeHTTP(w, req)
		return w
	}
	serve("PUT", "/audited", nil)
	serve("PUT", "/audited/k", []byte("hello"))
	if w := serve("GET", "/audited/k", nil); w.Body.String() != "hello" {
		t.Fatalf("GET: %d %q", w.Code, w.Body.String())
	}
	serve("GET", "/audited/missing", nil)
	if aw.late != 0 || len(aw.records) != 4 {
		t.Fatalf("%d records, %d queued after the answer started: %v", len(aw.records), aw.late, aw.records)
	}
	api := func(i int) map[string]any { return aw.records[i]["api"].(map[string]any) }
	if a := api(1); a["name"] != "PutObject" || a["rx"].(float64) != 5 || a["statusCode"].(float64) != 200 || aw.records[1]["key"] != "audited/k" {
		t.Fatalf("PUT record %v", aw.records[1])
	}
	if a := api(2); a["name"] != "GetObject" || a["tx"].(float64) != 5 {
		t.Fatalf("GET record %v", aw.records[2])
	}
	if a := api(3); a["statusCode"].(float64) != 404 {
		t.Fatalf("miss record %v", aw.records[3])
	}
}

// TestObjectAccessedEvents: MinIO's read events, for a rule that asks
// for them: a GET and a HEAD answered 2xx make one each; a refused or
// missing read, and a listing, none.
func TestObjectAccessedEvents(t *testing.T) {
	n := &fakeNotifier{}
	h := newHarness(t, func(c *Config) { c.Notify = n })
	h.expect(h.do("root", "PUT", "/reads", nil), 200, "")
	doc := `<NotificationConfiguration><QueueConfiguration><Queue>arn:minio:sqs::1:webhook</Queue>` +
		`<Event>s3:ObjectAccessed:*</Event></QueueConfiguration></NotificationConfiguration>`
	h.expect(h.do("root", "PUT", "/reads?notification", []byte(doc)), 200, "")
	h.expect(h.do("root", "PUT", "/reads/k", []byte("abc")), 200, "")
	if got := n.take(); len(got) != 0 {
		t.Fatalf("a put made read events: %q", got)
	}
	h.expect(h.do("root", "GET", "/reads/k", nil), 200, "")
	h.expect(h.do("root", "HEAD", "/reads/k", nil), 200, "")
	h.expect(h.do("root", "GET", "/reads/k", nil, "Range", "bytes=0-0"), 206, "")
	h.expect(h.do("alice", "GET", "/reads/k", nil), 403, "")
	h.expect(h.do("root", "GET", "/reads/missing", nil), 404, "")
	h.expect(h.do("root", "GET", "/reads?list-type=2", nil), 200, "")
	want := "1:webhook s3:ObjectAccessed:Get k|1:webhook s3:ObjectAccessed:Get k|1:webhook s3:ObjectAccessed:Head k" // the fake sorts
	if got := n.take(); strings.Join(got, "|") != want {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// TestObjectAccessedLockAndAttributesEvents: GetObjectRetention,
// GetObjectLegalHold and GetObjectAttributes answered 200 make MinIO's
// s3:ObjectAccessed:GetRetention, :GetLegalHold and :Attributes events;
// refused ones (no retention, denied, missing key) make none.
func TestObjectAccessedLockAndAttributesEvents(t *testing.T) {
	n := &fakeNotifier{}
	h := newHarness(t, func(c *Config) { c.Notify = n })
	h.lockBucket("lockreads")
	doc := `<NotificationConfiguration><QueueConfiguration><Queue>arn:minio:sqs::1:webhook</Queue>` +
		`<Event>s3:ObjectAccessed:*</Event></QueueConfiguration></NotificationConfiguration>`
	h.expect(h.do("alice", "PUT", "/lockreads?notification", []byte(doc)), 200, "")
	h.putLocked("alice", "/lockreads/held", "held", "X-Amz-Object-Lock-Mode", "GOVERNANCE",
		"X-Amz-Object-Lock-Retain-Until-Date", futureDate(), "X-Amz-Object-Lock-Legal-Hold", "ON")
	h.putLocked("alice", "/lockreads/free", "free")
	if got := n.take(); len(got) != 0 {
		t.Fatalf("puts made read events: %q", got)
	}
	h.expect(h.do("alice", "GET", "/lockreads/held?retention", nil), 200, "")
	h.expect(h.do("alice", "GET", "/lockreads/held?legal-hold", nil), 200, "")
	h.expect(h.do("alice", "GET", "/lockreads/free?attributes", nil, "X-Amz-Object-Attributes", "ETag,ObjectSize"), 200, "")
	h.expect(h.do("alice", "GET", "/lockreads/free?retention", nil), 404, "")
	h.expect(h.do("alice", "GET", "/lockreads/free?legal-hold", nil), 404, "")
	h.expect(h.do("bob", "GET", "/lockreads/held?retention", nil), 403, "")
	h.expect(h.do("alice", "GET", "/lockreads/missing?attributes", nil, "X-Amz-Object-Attributes", "ETag"), 404, "")
	want := "1:webhook s3:ObjectAccessed:Attributes free|1:webhook s3:ObjectAccessed:GetLegalHold held|" +
		"1:webhook s3:ObjectAccessed:GetRetention held" // the fake sorts
	if got := n.take(); strings.Join(got, "|") != want {
		t.Fatalf("events %q, want %q", got, want)
	}
}
