package s3api

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/accesslog"
)

// fakeAccessLog records what the server spools, and the order of its
// calls among the events of a response (events, when set).
type fakeAccessLog struct {
	mu       sync.Mutex
	appended []accesslog.Entry
	amended  []accesslog.Entry
	events   *[]string
	err      error
}

func (f *fakeAccessLog) Append(e accesslog.Entry) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.events != nil {
		*f.events = append(*f.events, "append "+e.Record.Operation)
	}
	if f.err != nil {
		return 0, f.err
	}
	f.appended = append(f.appended, e)
	return 7, nil
}

func (f *fakeAccessLog) Amend(e accesslog.Entry, gen uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if gen != 7 {
		panic("Amend with a generation Append did not return")
	}
	f.amended = append(f.amended, e)
}

// eventWriter notes when a response's header is written.
type eventWriter struct {
	*httptest.ResponseRecorder
	events *[]string
}

func (w eventWriter) WriteHeader(code int) {
	*w.events = append(*w.events, "header")
	w.ResponseRecorder.WriteHeader(code)
}

func loggingBody(target, prefix, extra string) []byte {
	return []byte(`<BucketLoggingStatus xmlns="http://doc.s3.amazonaws.com/2006-03-01"><LoggingEnabled>` +
		`<TargetBucket>` + target + `</TargetBucket><TargetPrefix>` + prefix + `</TargetPrefix>` + extra +
		`</LoggingEnabled></BucketLoggingStatus>`)
}

// loggingHarness: alice owns src and logs (ACLs on), bob owns bobs.
func loggingHarness(t *testing.T, al AccessLog) *harness {
	h := newHarness(t, func(c *Config) { c.AccessLog = al })
	for _, b := range []struct{ user, name string }{{"alice", "src"}, {"alice", "logs"}, {"bob", "bobs"}} {
		h.expect(h.do(b.user, "PUT", "/"+b.name, nil, "X-Amz-Object-Ownership", "ObjectWriter"), http.StatusOK, "")
	}
	return h
}

func getLogging(t *testing.T, h *harness, user, bucket string) xmlLoggingStatus {
	t.Helper()
	rec := h.do(user, "GET", "/"+bucket+"?logging", nil)
	h.expect(rec, http.StatusOK, "")
	var out xmlLoggingStatus
	if err := xml.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("GetBucketLogging body %q: %v", rec.Body.String(), err)
	}
	return out
}

func TestRouteLogging(t *testing.T) {
	for _, c := range []struct{ method, key, api string }{
		{"GET", "", "GetBucketLogging"}, {"PUT", "", "PutBucketLogging"},
		{"DELETE", "", "MethodNotAllowed"}, {"POST", "", "MethodNotAllowed"},
		{"GET", "k", "NotImplemented"}, {"PUT", "k", "NotImplemented"}, {"DELETE", "k", "NotImplemented"},
	} {
		r := route(c.method, "b", c.key, map[string][]string{"logging": {""}}, http.Header{})
		if r.api != c.api {
			t.Errorf("%s %q ?logging: %s, want %s", c.method, c.key, r.api, c.api)
		}
	}
}

// TestBucketLoggingConfig: enabling, reading back (with grants and a
// partitioned key format), and turning off with an empty status.
func TestBucketLoggingConfig(t *testing.T) {
	h := loggingHarness(t, nil)
	if got := getLogging(t, h, "alice", "src"); got.Enabled != nil {
		t.Fatalf("logging on a fresh bucket: %+v", got.Enabled)
	}
	grants := `<TargetGrants><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser">` +
		`<ID>` + canonicalID("bob") + `</ID></Grantee><Permission>READ</Permission></Grant>` +
		`<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group"><URI>` + uriAuthenticatedUsers +
		`</URI></Grantee><Permission>WRITE</Permission></Grant></TargetGrants>` +
		`<TargetObjectKeyFormat><PartitionedPrefix><PartitionDateSource>DeliveryTime</PartitionDateSource></PartitionedPrefix></TargetObjectKeyFormat>`
	h.expect(h.do("alice", "PUT", "/src?logging", loggingBody("logs", "access/", grants)), http.StatusOK, "")
	got := getLogging(t, h, "alice", "src")
	e := got.Enabled
	if e == nil || e.TargetBucket != "logs" || e.TargetPrefix != "access/" || e.KeyFormat == nil ||
		e.KeyFormat.Partitioned == nil || e.KeyFormat.Partitioned.DateSource != "DeliveryTime" ||
		e.TargetGrants == nil || len(e.TargetGrants.Grants) != 2 || e.TargetGrants.Grants[0].Grantee.ID != canonicalID("bob") ||
		e.TargetGrants.Grants[1].Grantee.URI != uriAuthenticatedUsers || e.TargetGrants.Grants[1].Permission != "WRITE" {
		t.Fatalf("GetBucketLogging: %+v", e)
	}
	d := h.srv.loggingDestination(h.store.buckets["src"].info)
	if d == nil || !d.Partitioned || !d.DeliveryDate || d.SourceOwner != "alice" || d.SourceRegion != defaultRegion ||
		!strings.Contains(d.Grants, canonicalID("alice")) || !strings.Contains(d.Grants, canonicalID("bob")) {
		t.Fatalf("destination %+v", d)
	}
	// A simple key format, and the source itself as the target (S3
	// allows it).
	h.expect(h.do("alice", "PUT", "/src?logging", loggingBody("src", "",
		"<TargetObjectKeyFormat><SimplePrefix/></TargetObjectKeyFormat>")), http.StatusOK, "")
	if e := getLogging(t, h, "alice", "src").Enabled; e == nil || e.TargetBucket != "src" || e.KeyFormat == nil || e.KeyFormat.Simple == nil {
		t.Fatalf("after the second PUT: %+v", e)
	}
	h.expect(h.do("alice", "PUT", "/src?logging", []byte(`<BucketLoggingStatus xmlns="http://doc.s3.amazonaws.com/2006-03-01"/>`)), http.StatusOK, "")
	if e := getLogging(t, h, "alice", "src").Enabled; e != nil || h.store.buckets["src"].info.Logging != "" {
		t.Fatalf("logging still on after an empty status: %+v", e)
	}
}

// TestBucketLoggingRefusals: S3's answers for targets and documents it
// refuses; none changes the stored configuration.
func TestBucketLoggingRefusals(t *testing.T) {
	h := loggingHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/eu-bucket", []byte(`<CreateBucketConfiguration><LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>`)), http.StatusOK, "")
	h.expect(h.do("alice", "PUT", "/locked", nil, "X-Amz-Bucket-Object-Lock-Enabled", "true"), http.StatusOK, "")
	h.expect(h.do("alice", "PUT", "/enforced", nil, "X-Amz-Object-Ownership", "BucketOwnerEnforced"), http.StatusOK, "")
	h.expect(h.do("alice", "PUT", "/src?logging", loggingBody("logs", "kept/", "")), http.StatusOK, "")
	readGrant := `<TargetGrants><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>` +
		canonicalID("bob") + `</ID></Grantee><Permission>READ</Permission></Grant></TargetGrants>`
	cases := []struct {
		name, user string
		body       []byte
		status     int
		code       string
	}{
		{"missing target", "alice", loggingBody("nosuchbucket", "p/", ""), 400, "InvalidTargetBucketForLogging"},
		{"empty target", "alice", loggingBody("", "p/", ""), 400, "InvalidTargetBucketForLogging"},
		{"invalid target name", "alice", loggingBody("Not_A_Bucket", "p/", ""), 400, "InvalidTargetBucketForLogging"},
		{"target of another owner", "alice", loggingBody("bobs", "p/", ""), 400, "InvalidTargetBucketForLogging"},
		{"target in another region", "alice", loggingBody("eu-bucket", "p/", ""), 403, "CrossLocationLoggingProhibitted"},
		{"target with object lock", "alice", loggingBody("locked", "p/", ""), 400, "InvalidTargetBucketForLogging"},
		{"grants on an ACL-less target", "alice", loggingBody("enforced", "p/", readGrant), 400, "AccessControlListNotSupported"},
		{"not the owner", "bob", loggingBody("logs", "p/", ""), 403, "AccessDenied"},
		{"anonymous", "", loggingBody("logs", "p/", ""), 403, "AccessDenied"},
		{"no body", "alice", nil, 400, "MalformedXML"},
		{"not XML", "alice", []byte("<<<"), 400, "MalformedXML"},
		{"other root", "alice", []byte(`<LoggingEnabled><TargetBucket>logs</TargetBucket></LoggingEnabled>`), 400, "MalformedXML"},
		{"no prefix", "alice", []byte(`<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket></LoggingEnabled></BucketLoggingStatus>`), 400, "MalformedXML"},
		{"no target", "alice", []byte(`<BucketLoggingStatus><LoggingEnabled><TargetPrefix>p</TargetPrefix></LoggingEnabled></BucketLoggingStatus>`), 400, "MalformedXML"},
		{"two targets", "alice", loggingBody("logs", "p/", "<TargetBucket>src</TargetBucket>"), 400, "MalformedXML"},
		{"two LoggingEnabled", "alice", []byte(`<BucketLoggingStatus>` + strings.Repeat(`<LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix>p</TargetPrefix></LoggingEnabled>`, 2) + `</BucketLoggingStatus>`), 400, "MalformedXML"},
		{"both key formats", "alice", loggingBody("logs", "p/", "<TargetObjectKeyFormat><SimplePrefix/><PartitionedPrefix/></TargetObjectKeyFormat>"), 400, "MalformedXML"},
		{"empty key format", "alice", loggingBody("logs", "p/", "<TargetObjectKeyFormat></TargetObjectKeyFormat>"), 400, "MalformedXML"},
		{"unknown key format", "alice", loggingBody("logs", "p/", "<TargetObjectKeyFormat><HashedPrefix/></TargetObjectKeyFormat>"), 400, "MalformedXML"},
		{"bad date source", "alice", loggingBody("logs", "p/", "<TargetObjectKeyFormat><PartitionedPrefix><PartitionDateSource>Tomorrow</PartitionDateSource></PartitionedPrefix></TargetObjectKeyFormat>"), 400, "MalformedXML"},
		{"bad permission", "alice", loggingBody("logs", "p/", strings.Replace(readGrant, "READ", "READ_ACP", 1)), 400, "MalformedXML"},
		{"grant without grantee", "alice", loggingBody("logs", "p/", "<TargetGrants><Grant><Permission>READ</Permission></Grant></TargetGrants>"), 400, "MalformedXML"},
		{"grant to an unknown id", "alice", loggingBody("logs", "p/", strings.Replace(readGrant, canonicalID("bob"), strings.Repeat("0", 64), 1)), 400, "InvalidArgument"},
		{"grant to an e-mail", "alice", loggingBody("logs", "p/", `<TargetGrants><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="AmazonCustomerByEmail"><EmailAddress>a@example.com</EmailAddress></Grantee><Permission>READ</Permission></Grant></TargetGrants>`), 400, "UnresolvableGrantByEmailAddress"},
		{"grant to an unknown group", "alice", loggingBody("logs", "p/", `<TargetGrants><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group"><URI>http://example.com/g</URI></Grantee><Permission>READ</Permission></Grant></TargetGrants>`), 400, "InvalidArgument"},
		{"prefix too long", "alice", loggingBody("logs", strings.Repeat("p", 1000), ""), 400, "InvalidArgument"},
		{"entity expansion", "alice", []byte(`<!DOCTYPE x [<!ENTITY a "aaaa">]><BucketLoggingStatus><LoggingEnabled><TargetBucket>&a;</TargetBucket><TargetPrefix>p</TargetPrefix></LoggingEnabled></BucketLoggingStatus>`), 400, "MalformedXML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			h.expect(h.do(c.user, "PUT", "/src?logging", c.body), c.status, c.code)
			if e := getLogging(t, h, "alice", "src").Enabled; e == nil || e.TargetBucket != "logs" || e.TargetPrefix != "kept/" {
				t.Fatalf("configuration changed by a refused PUT: %+v", e)
			}
		})
	}
	h.t = t
	h.expect(h.do("bob", "GET", "/src?logging", nil), http.StatusForbidden, "AccessDenied")
	h.expect(h.do("alice", "GET", "/nosuchbucket?logging", nil), http.StatusNotFound, "NoSuchBucket")
	h.expect(h.do("alice", "PUT", "/nosuchbucket?logging", loggingBody("logs", "p/", "")), http.StatusNotFound, "NoSuchBucket")
	// A policy can grant another user s3:PutBucketLogging.
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["bob"]},"Action":["s3:PutBucketLogging","s3:GetBucketLogging"],"Resource":"arn:aws:s3:::src"}]}`
	h.expect(h.do("alice", "PUT", "/src?policy", []byte(policy)), http.StatusNoContent, "")
	h.expect(h.do("bob", "PUT", "/src?logging", loggingBody("logs", "bob/", "")), http.StatusOK, "")
	if e := getLogging(t, h, "bob", "src").Enabled; e == nil || e.TargetPrefix != "bob/" {
		t.Fatalf("after bob's PUT: %+v", e)
	}
}

// TestAccessLogRecords: a request on a logged bucket is spooled before
// its answer's first byte and amended once complete; one on a bucket
// without logging spools nothing.
func TestAccessLogRecords(t *testing.T) {
	al := &fakeAccessLog{}
	h := loggingHarness(t, al)
	h.expect(h.do("alice", "PUT", "/src/pre", []byte("0123456789")), http.StatusOK, "")
	if len(al.appended) != 0 {
		t.Fatalf("records for a bucket without logging: %+v", al.appended)
	}
	h.expect(h.do("alice", "PUT", "/src?logging", loggingBody("logs", "p/", "")), http.StatusOK, "")

	var events []string
	al.events = &events
	req := httptest.NewRequest("GET", "/src/pre?x-custom=1", nil)
	req.Header.Set("X-Test-User", "alice")
	req.Header.Set("User-Agent", `evil "agent"`+"\n")
	req.Header.Set("Range", "bytes=2-5")
	req.RemoteAddr = "192.0.2.7:4444"
	w := eventWriter{httptest.NewRecorder(), &events}
	h.srv.ServeHTTP(w, req)
	if w.Code != http.StatusPartialContent {
		t.Fatalf("GET: %d %s", w.Code, w.Body.String())
	}
	if len(events) != 2 || events[0] != "append REST.GET.OBJECT" || events[1] != "header" {
		t.Fatalf("events %v: the record must be spooled before the header", events)
	}
	al.events = nil
	a, f := al.appended[0], al.amended[0]
	r := a.Record
	if a.Dest.TargetBucket != "logs" || a.Dest.TargetPrefix != "p/" || a.Dest.SourceBucket != "src" ||
		r.Bucket != "src" || r.BucketOwner != canonicalID("alice") || r.Requester != canonicalID("alice") ||
		r.Key != "pre" || r.HTTPStatus != 206 || r.ObjectSize != 10 || r.BytesSent != 4 || r.RemoteIP != "192.0.2.7" ||
		r.RequestURI != "GET /src/pre?x-custom=1 HTTP/1.1" || r.UserAgent != "evil \"agent\"\n" ||
		r.RequestID != w.Header().Get("X-Amz-Request-Id") || r.HostID != w.Header().Get("X-Amz-Id-2") || f.Record.RequestID != r.RequestID {
		t.Fatalf("record %+v", r)
	}
	if f.Record.BytesSent != 4 || f.Record.TotalTime < r.TotalTime {
		t.Fatalf("amended record %+v", f.Record)
	}

	// Errors carry their code; a refused caller is logged as such.
	h.expect(h.do("bob", "GET", "/src/pre", nil), http.StatusForbidden, "AccessDenied")
	h.expect(h.do("", "GET", "/src/missing", nil), http.StatusForbidden, "AccessDenied")
	h.expect(h.do("alice", "GET", "/src/missing", nil), http.StatusNotFound, "NoSuchKey")
	n := len(al.appended)
	for i, want := range []struct {
		requester, code string
		status          int
	}{{canonicalID("bob"), "AccessDenied", 403}, {"", "AccessDenied", 403}, {canonicalID("alice"), "NoSuchKey", 404}} {
		r := al.appended[n-3+i].Record
		if r.Requester != want.requester || r.ErrorCode != want.code || r.HTTPStatus != want.status || r.Operation != "REST.GET.OBJECT" {
			t.Errorf("record %d: %+v", i, r)
		}
	}
	// A read an ACL grant allowed says so (aclRequired).
	h.expect(h.do("alice", "PUT", "/src/shared", []byte("s"), "X-Amz-Grant-Read", "id="+canonicalID("bob")), http.StatusOK, "")
	h.expect(h.do("bob", "GET", "/src/shared", nil), http.StatusOK, "")
	if r := al.appended[len(al.appended)-1].Record; !r.ACLRequired || r.Requester != canonicalID("bob") {
		t.Errorf("a read granted by an ACL: %+v", r)
	}
	if r := al.appended[len(al.appended)-2].Record; r.ACLRequired {
		t.Errorf("the owner's write marked as needing an ACL: %+v", r)
	}
	n = len(al.appended)
	// A bad signature is not logged (no lookup before authentication).
	h.expect(h.do("bad", "GET", "/src/pre", nil), http.StatusForbidden, "SignatureDoesNotMatch")
	if len(al.appended) != n {
		t.Errorf("a request refused before authentication was logged: %+v", al.appended[n:])
	}
	// A copy out of the logged bucket is logged in the source's log too.
	h.expect(h.do("alice", "PUT", "/logs/copy", nil, "X-Amz-Copy-Source", "/src/pre"), http.StatusOK, "")
	last := al.appended[len(al.appended)-1].Record
	if last.Operation != "REST.COPY.OBJECT_GET" || last.Bucket != "src" || last.Key != "pre" {
		t.Errorf("copy source record %+v", last)
	}
	// DeleteBucket of a logged bucket is logged: the configuration is
	// read when the request arrives.
	h.expect(h.do("alice", "DELETE", "/src/pre", nil), http.StatusNoContent, "")
	h.expect(h.do("alice", "DELETE", "/src/shared", nil), http.StatusNoContent, "")
	h.expect(h.do("alice", "DELETE", "/src", nil), http.StatusNoContent, "")
	if last := al.appended[len(al.appended)-1].Record; last.Operation != "REST.DELETE.BUCKET" || last.HTTPStatus != 204 {
		t.Errorf("DeleteBucket record %+v", last)
	}
}

// TestAccessLogRefusedRecord: a record the spool refuses does not fail
// the request (it has been done).
func TestAccessLogRefusedRecord(t *testing.T) {
	al := &fakeAccessLog{err: accesslog.ErrBacklog}
	h := loggingHarness(t, al)
	h.expect(h.do("alice", "PUT", "/src?logging", loggingBody("logs", "p/", "")), http.StatusOK, "")
	h.expect(h.do("alice", "PUT", "/src/k", []byte("x")), http.StatusOK, "")
	if len(al.amended) != 0 {
		t.Fatalf("amended a record that was never spooled: %+v", al.amended)
	}
}

// TestDeliverAccessLog: a log object lands in its target with the
// target owner's ownership and the TargetGrants; a target that is gone,
// changed owner, has object lock or denies by policy is undeliverable.
func TestDeliverAccessLog(t *testing.T) {
	h := loggingHarness(t, nil)
	grants := `<TargetGrants><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>` +
		canonicalID("bob") + `</ID></Grantee><Permission>READ</Permission></Grant></TargetGrants>`
	h.expect(h.do("alice", "PUT", "/src?logging", loggingBody("logs", "p/", grants)), http.StatusOK, "")
	d := *h.srv.loggingDestination(h.store.buckets["src"].info)
	ctx := context.Background()
	obj := accesslog.Object{Dest: d, Key: "p/2025-01-01-00-00-00-ABCDEF0123456789", Body: []byte("line\n"), Records: 1}
	if err := h.srv.DeliverAccessLog(ctx, obj); err != nil {
		t.Fatal(err)
	}
	fo := h.store.buckets["logs"].objects[obj.Key]
	if fo == nil || string(fo.data) != "line\n" || fo.info.Owner != "alice" || fo.info.ContentType != "text/plain" {
		t.Fatalf("delivered object %+v", fo)
	}
	gs := h.srv.aclGrants(fo.info.ACL, true)
	if len(gs) != 2 || gs[1].ID != canonicalID("bob") || gs[1].Perm != access.PermRead {
		t.Fatalf("log object grants %+v", gs)
	}
	// bob may read it through his grant.
	h.expect(h.do("bob", "GET", "/logs/"+obj.Key, nil), http.StatusOK, "")

	undeliverable := func(name string) {
		t.Helper()
		if err := h.srv.DeliverAccessLog(ctx, obj); !errors.Is(err, accesslog.ErrUndeliverable) {
			t.Fatalf("%s: %v, want ErrUndeliverable", name, err)
		}
	}
	h.expect(h.do("alice", "PUT", "/logs?policy", []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::logs/p/*"}]}`)), http.StatusNoContent, "")
	undeliverable("a policy denying everyone")
	h.expect(h.do("alice", "PUT", "/logs?policy", []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":{"Service":"logging.s3.amazonaws.com"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::logs/*","Condition":{"ArnLike":{"aws:SourceArn":"arn:aws:s3:::src"}}}]}`)), http.StatusNoContent, "")
	undeliverable("a policy denying the logging service for this source")
	h.expect(h.do("alice", "PUT", "/logs?policy", []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":{"Service":"logging.s3.amazonaws.com"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::logs/*","Condition":{"ArnLike":{"aws:SourceArn":"arn:aws:s3:::elsewhere"}}}]}`)), http.StatusNoContent, "")
	if err := h.srv.DeliverAccessLog(ctx, obj); err != nil {
		t.Fatalf("a policy denying the logging service for another source: %v", err)
	}
	h.expect(h.do("alice", "DELETE", "/logs?policy", nil), http.StatusNoContent, "")
	// Another owner's bucket of the same name.
	h.store.buckets["logs"].info.Owner = "bob"
	undeliverable("a target that changed owner")
	delete(h.store.buckets, "logs")
	undeliverable("a target that is gone")
	h.expect(h.do("alice", "PUT", "/logs", nil, "X-Amz-Bucket-Object-Lock-Enabled", "true"), http.StatusOK, "")
	undeliverable("a target with object lock")
}

// TestLoggedRequestsUnchanged: a bucket with logging answers requests
// exactly as one without does (headers and bodies).
func TestLoggedRequestsUnchanged(t *testing.T) {
	plain := loggingHarness(t, &fakeAccessLog{})
	logged := loggingHarness(t, &fakeAccessLog{})
	logged.expect(logged.do("alice", "PUT", "/src?logging", loggingBody("logs", "p/", "")), http.StatusOK, "")
	for _, h := range []*harness{plain, logged} {
		h.expect(h.do("alice", "PUT", "/src/k", []byte("hello")), http.StatusOK, "")
	}
	a, b := plain.do("alice", "GET", "/src/k", nil), logged.do("alice", "GET", "/src/k", nil)
	if a.Code != b.Code || a.Body.String() != b.Body.String() || a.Header().Get("ETag") != b.Header().Get("ETag") {
		t.Fatalf("logged GET differs: %d %q vs %d %q", a.Code, a.Body, b.Code, b.Body)
	}
}

// FuzzBucketLogging: whatever the body, PutBucketLogging answers 200 or
// an S3 error, and what it stored reads back as a configuration that
// PutBucketLogging takes again and that names a target of the same
// owner.
func FuzzBucketLogging(f *testing.F) {
	f.Add(loggingBody("logs", "p/", ""))
	f.Add(loggingBody("logs", "", "<TargetObjectKeyFormat><PartitionedPrefix><PartitionDateSource>EventTime</PartitionDateSource></PartitionedPrefix></TargetObjectKeyFormat>"))
	f.Add(loggingBody("logs", "a&amp;b<>", `<TargetGrants><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group"><URI>`+uriLogDelivery+`</URI></Grantee><Permission>FULL_CONTROL</Permission></Grant></TargetGrants>`))
	f.Add([]byte(`<BucketLoggingStatus><LoggingEnabled><TargetBucket>bobs</TargetBucket><TargetPrefix>x</TargetPrefix></LoggingEnabled></BucketLoggingStatus>`))
	f.Add([]byte(`<BucketLoggingStatus/>`))
	f.Add([]byte("<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix>\xff</TargetPrefix></LoggingEnabled></BucketLoggingStatus>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		h := loggingHarness(t, nil)
		rec := h.do("alice", "PUT", "/src?logging", body)
		if rec.Code != http.StatusOK {
			var e xmlError
			if rec.Code >= 500 || xml.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Code == "" {
				t.Fatalf("answer %d %q", rec.Code, rec.Body.String())
			}
			return
		}
		got := h.do("alice", "GET", "/src?logging", nil)
		var doc xmlLoggingStatus
		if got.Code != http.StatusOK || xml.Unmarshal(got.Body.Bytes(), &doc) != nil {
			t.Fatalf("GetBucketLogging: %d %q", got.Code, got.Body.String())
		}
		if doc.Enabled != nil {
			if bi := h.store.buckets[doc.Enabled.TargetBucket]; bi == nil || bi.info.Owner != "alice" {
				t.Fatalf("target %q stored", doc.Enabled.TargetBucket)
			}
			if h.srv.loggingDestination(h.store.buckets["src"].info) == nil {
				t.Fatalf("stored configuration does not parse: %q", h.store.buckets["src"].info.Logging)
			}
		}
		h.expect(h.do("alice", "PUT", "/src?logging", got.Body.Bytes()), http.StatusOK, "")
	})
}

// nopAccessLog keeps nothing: the benchmark measures the S3 layer's
// part of a logged request (the lookup, the record, its encoding is the
// spool's).
type nopAccessLog struct{}

func (nopAccessLog) Append(accesslog.Entry) (uint64, error) { return 0, nil }
func (nopAccessLog) Amend(accesslog.Entry, uint64)          {}

// BenchmarkAccessLogOverhead: a small PUT answered in process on a
// bucket without logging (no spool configured, and one configured but
// unused by the bucket) and on a logged bucket whose spool keeps nothing,
// so the difference is what the S3 layer spends on access logging.
func BenchmarkAccessLogOverhead(b *testing.B) {
	for _, c := range []struct {
		name   string
		al     AccessLog
		logged bool
	}{{"no-spool", nil, false}, {"unlogged-bucket", nopAccessLog{}, false}, {"logged-bucket", nopAccessLog{}, true}} {
		b.Run(c.name, func(b *testing.B) {
			st := newFakeStore()
			srv, err := New(Config{Store: st, Auth: testAuth, Users: testUsers, AccessLog: c.al})
			if err != nil {
				b.Fatal(err)
			}
			do := func(method, target string, body []byte) int {
				req := httptest.NewRequest(method, target, bytes.NewReader(body))
				req.Header.Set("X-Test-User", "alice")
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, req)
				return w.Code
			}
			for _, bkt := range []string{"/src", "/logs"} {
				if code := do("PUT", bkt, nil); code != 200 {
					b.Fatal(code)
				}
			}
			if c.logged {
				if code := do("PUT", "/src?logging", loggingBody("logs", "p/", "")); code != 200 {
					b.Fatal(code)
				}
			}
			body := make([]byte, 1024)
			b.ReportAllocs()
			for b.Loop() {
				if code := do("PUT", "/src/k", body); code != 200 {
					b.Fatal(code)
				}
			}
		})
	}
}
