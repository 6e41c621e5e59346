package s3api

import (
	"encoding/xml"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/lifecycle"
)

const testLifecycle = `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
	`<Rule><ID>logs</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>3</Days></Expiration></Rule>` +
	`<Rule><ID>tmp</ID><Filter><Tag><Key>class</Key><Value>tmp</Value></Tag></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>` +
	`<Rule><ID>off</ID><Filter><Prefix>keep/</Prefix></Filter><Status>Disabled</Status><Expiration><Days>1</Days></Expiration></Rule>` +
	`<Rule><ID>mpu</ID><Prefix>up/</Prefix><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>7</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>` +
	`</LifecycleConfiguration>`

func (h *harness) putLifecycle(user, bucket, doc string) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.do(user, "PUT", "/"+bucket+"?lifecycle", []byte(doc), "Content-MD5", md5b64(doc))
}

func TestBucketLifecycleConfiguration(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/lcb", nil, "X-Amz-Acl", "public-read-write"), 200, "")
	h.expectError(h.do("alice", "GET", "/lcb?lifecycle", nil), 404, "NoSuchLifecycleConfiguration", "The lifecycle configuration does not exist")
	// Content-MD5 or a checksum is required, and checked.
	h.expect(h.do("alice", "PUT", "/lcb?lifecycle", []byte(testLifecycle)), 400, "InvalidRequest")
	h.expect(h.do("alice", "PUT", "/lcb?lifecycle", []byte(testLifecycle), "Content-MD5", md5b64("other")), 400, "BadDigest")
	h.expect(h.putLifecycle("alice", "lcb", testLifecycle), 200, "")
	rec := h.do("alice", "GET", "/lcb?lifecycle", nil)
	h.expect(rec, 200, "")
	if !strings.Contains(rec.Body.String(), `xmlns="http://s3.amazonaws.com/doc/2006-03-01/"`) {
		t.Fatalf("answer without S3's namespace: %s", rec.Body.String())
	}
	got, err := lifecycle.Parse(rec.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := lifecycle.Parse([]byte(testLifecycle))
	if got.Marshal() != want.Marshal() {
		t.Fatalf("stored document changed:\n%s\n%s", got.Marshal(), want.Marshal())
	}
	// A rule without an ID gets one.
	noID := `<LifecycleConfiguration><Rule><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`
	h.expect(h.putLifecycle("alice", "lcb", noID), 200, "")
	var doc lifecycle.Configuration
	xml.Unmarshal(h.do("alice", "GET", "/lcb?lifecycle", nil).Body.Bytes(), &doc)
	if len(doc.Rules) != 1 || doc.Rules[0].ID == "" {
		t.Fatalf("rule without ID: %+v", doc.Rules)
	}
	rule := func(inner string) string {
		return `<LifecycleConfiguration><Rule><ID>r</ID>` + inner + `</Rule></LifecycleConfiguration>`
	}
	for _, c := range []struct {
		body          string
		status        int
		code, message string
	}{
		{"<LifecycleConfiguration/>", 400, "MalformedXML", errMalformedXML().Message},
		{"not xml", 400, "MalformedXML", errMalformedXML().Message},
		{rule(`<Filter/><Status>On</Status><Expiration><Days>1</Days></Expiration>`), 400, "MalformedXML", errMalformedXML().Message},
		{rule(`<Filter/><Status>Enabled</Status><Expiration><Days>0</Days></Expiration>`), 400, "InvalidArgument", "'Days' for Expiration action must be a positive integer"},
		{rule(`<Filter/><Status>Enabled</Status><Expiration><Date>2030-01-01T12:00:00Z</Date></Expiration>`), 400, "InvalidArgument", "'Date' must be at midnight GMT"},
		{rule(`<Filter/><Status>Enabled</Status>`), 400, "InvalidRequest", "At least one action needs to be specified in a rule"},
		{rule(`<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload>`),
			400, "InvalidRequest", "AbortIncompleteMultipartUpload cannot be specified with Tags."},
		{`<LifecycleConfiguration><Rule><ID>a</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule><Rule><ID>a</ID><Filter/><Status>Enabled</Status><Expiration><Days>2</Days></Expiration></Rule></LifecycleConfiguration>`,
			400, "InvalidArgument", "Rule ID must be unique. Found same ID for more than one rule"},
		{rule(`<Filter/><Status>Enabled</Status><Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition>`), 501, "NotImplemented", "Transition actions are not supported: shardstore has a single storage class"},
	} {
		h.expectError(h.putLifecycle("alice", "lcb", c.body), c.status, c.code, c.message)
	}
	// Refusals leave the stored document alone.
	if h.do("alice", "GET", "/lcb?lifecycle", nil).Code != 200 {
		t.Fatal("refused PUT removed the configuration")
	}
	// The bucket owner's only, by default: bucket WRITE gives nothing.
	h.expect(h.putLifecycle("bob", "lcb", testLifecycle), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/lcb?lifecycle", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "DELETE", "/lcb?lifecycle", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "DELETE", "/lcb?lifecycle", nil), 204, "")
	h.expect(h.do("alice", "GET", "/lcb?lifecycle", nil), 404, "NoSuchLifecycleConfiguration")
	h.expect(h.do("alice", "DELETE", "/lcb?lifecycle", nil), 204, "")
	h.expect(h.putLifecycle("alice", "nobucket", testLifecycle), 404, "NoSuchBucket")
}

func TestLifecyclePolicyActions(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/lcp", nil), 200, "")
	pol := `{"Version":"2012-10-17","Statement":[` +
		`{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"s3:GetLifecycleConfiguration","Resource":"arn:aws:s3:::lcp"},` +
		`{"Effect":"Deny","Principal":{"AWS":"*"},"Action":"s3:PutLifecycleConfiguration","Resource":"arn:aws:s3:::lcp"}]}`
	h.expect(h.do("alice", "PUT", "/lcp?policy", []byte(pol)), 204, "")
	h.expect(h.putLifecycle("alice", "lcp", testLifecycle), 403, "AccessDenied")
	h.expect(h.do("alice", "DELETE", "/lcp?lifecycle", nil), 403, "AccessDenied") // s3:PutLifecycleConfiguration
	h.expect(h.putLifecycle("root", "lcp", testLifecycle), 200, "")
	h.expect(h.do("bob", "GET", "/lcp?lifecycle", nil), 200, "")
}

func TestExpirationHeader(t *testing.T) {
	h := newHarness(t, nil)
	created := time.Date(2026, 12, 19, 10, 30, 0, 0, time.UTC)
	h.store.now = func() time.Time { return created }
	h.expect(h.do("alice", "PUT", "/exp", nil), 200, "")
	// Before a configuration: no header.
	rec := h.do("alice", "PUT", "/exp/logs/a", []byte("x"))
	h.expect(rec, 200, "")
	if v := rec.Header().Get("X-Amz-Expiration"); v != "" {
		t.Fatalf("x-amz-expiration without lifecycle: %q", v)
	}
	h.expect(h.putLifecycle("alice", "exp", testLifecycle), 200, "")
	// The fake stamps the n-th write n seconds after created: still on
	// Dec 19, so Days=3 expire at midnight after Dec 22, Days=1 after Dec 20.
	want := map[string]string{
		"logs/a":   `expiry-date="Wed, 23 Dec 2026 00:00:00 GMT", rule-id="logs"`,
		"logs/b":   `expiry-date="Wed, 23 Dec 2026 00:00:00 GMT", rule-id="logs"`,
		"tagged":   `expiry-date="Mon, 21 Dec 2026 00:00:00 GMT", rule-id="tmp"`,
		"keep/a":   "",
		"untagged": "",
	}
	check := func(what string, rec *httptest.ResponseRecorder, key string) {
		t.Helper()
		if got := rec.Header().Get("X-Amz-Expiration"); got != want[key] {
			t.Fatalf("%s %s: x-amz-expiration %q, want %q", what, key, got, want[key])
		}
	}
	for _, p := range []struct{ key, tags string }{{"logs/b", ""}, {"tagged", "class=tmp"}, {"keep/a", ""}, {"untagged", "class=keep"}} {
		rec := h.do("alice", "PUT", "/exp/"+p.key, []byte("data"), "X-Amz-Tagging", p.tags)
		h.expect(rec, 200, "")
		check("PUT", rec, p.key)
	}
	for key := range want {
		for _, m := range []string{"GET", "HEAD"} {
			rec := h.do("alice", m, "/exp/"+key, nil)
			h.expect(rec, 200, "")
			check(m, rec, key)
		}
	}
	// Copy: the copy is judged by its own key and tags.
	rec = h.do("alice", "PUT", "/exp/logs/copy", nil, "X-Amz-Copy-Source", "/exp/keep/a")
	h.expect(rec, 200, "")
	if got := rec.Header().Get("X-Amz-Expiration"); !strings.Contains(got, `rule-id="logs"`) {
		t.Fatalf("copy: x-amz-expiration %q", got)
	}
	// CreateMultipartUpload: x-amz-abort-date for the upload rule.
	rec = h.do("alice", "POST", "/exp/up/big?uploads", nil)
	h.expect(rec, 200, "")
	if rec.Header().Get("X-Amz-Abort-Rule-Id") != "mpu" || rec.Header().Get("X-Amz-Abort-Date") == "" {
		t.Fatalf("create upload: abort headers %v", rec.Header())
	}
	rec = h.do("alice", "POST", "/exp/other?uploads", nil)
	if rec.Header().Get("X-Amz-Abort-Date") != "" {
		t.Fatalf("abort date outside the rule's prefix: %v", rec.Header())
	}
	// A deleted configuration stops the header.
	h.expect(h.do("alice", "DELETE", "/exp?lifecycle", nil), 204, "")
	if v := h.do("alice", "HEAD", "/exp/logs/a", nil).Header().Get("X-Amz-Expiration"); v != "" {
		t.Fatalf("x-amz-expiration after delete: %q", v)
	}
}
