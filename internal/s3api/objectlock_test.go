package s3api

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/xml"
	"hash/crc32"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/objectlock"
)

// Object lock documents of the handler tests.
const (
	testLockConfig     = `<ObjectLockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>`
	testLockConfigDays = `<ObjectLockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><ObjectLockEnabled>Enabled</ObjectLockEnabled>` +
		`<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`
	msgObjectLocked    = "Access Denied because object protected by object lock."
	msgLockNotEnabled  = "Bucket is missing Object Lock Configuration"
	msgLockChecksumPut = "Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters"
	msgMissingMD5      = "Missing required header for this request: Content-MD5"
	msgNoLockConfig    = "The specified object does not have a ObjectLock configuration"
)

func retentionDoc(mode, until string) string {
	var b strings.Builder
	b.WriteString(`<Retention xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	if mode != "" {
		b.WriteString("<Mode>" + mode + "</Mode>")
	}
	if until != "" {
		b.WriteString("<RetainUntilDate>" + until + "</RetainUntilDate>")
	}
	b.WriteString("</Retention>")
	return b.String()
}

func legalHoldDoc(status string) string {
	return `<LegalHold xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>` + status + `</Status></LegalHold>`
}

// futureDate is a retain-until date days days ahead of the real clock
// (the handlers check dates against it), at whole seconds.
func futureDateIn(days int) string {
	return time.Now().UTC().Add(time.Duration(days) * 24 * time.Hour).Truncate(time.Second).Format(time.RFC3339)
}

func futureDate() string { return futureDateIn(2) }

// s3Date is how S3 answers a retain-until date sent as d (RFC 3339).
func s3Date(t *testing.T, d string) string {
	t.Helper()
	p, err := time.Parse(time.RFC3339, d)
	if err != nil {
		t.Fatal(err)
	}
	return objectlock.FormatRetainUntil(p)
}

func crc32b64(b []byte) string {
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE(b))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// countEntries counts a version listing's entries of kind (Version,
// DeleteMarker).
func countEntries(l xmlListVersions, kind string) int {
	n := 0
	for _, e := range l.Entries {
		if e.XMLName.Local == kind {
			n++
		}
	}
	return n
}

// lockBucket creates bucket b, owned by alice, with object lock enabled.
func (h *harness) lockBucket(b string) {
	h.t.Helper()
	h.expect(h.do("alice", "PUT", "/"+b, nil, "X-Amz-Bucket-Object-Lock-Enabled", "true"), 200, "")
}

// putLocked PUTs body to target as user with its Content-MD5 and the
// headers given, expecting success; it returns the version id.
func (h *harness) putLocked(user, target, body string, hdr ...string) string {
	h.t.Helper()
	rec := h.do(user, "PUT", target, []byte(body), append([]string{"Content-MD5", md5b64(body)}, hdr...)...)
	h.expect(rec, 200, "")
	return rec.Header().Get("X-Amz-Version-Id")
}

// putDoc PUTs an object lock document to target as user with its
// Content-MD5 (and hdr).
func (h *harness) putDoc(user, target, doc string, hdr ...string) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.do(user, "PUT", target, []byte(doc), append([]string{"Content-MD5", md5b64(doc)}, hdr...)...)
}

// lockHeadersOf is a HEAD answer's x-amz-object-lock-* headers as
// "mode|date|hold".
func (h *harness) lockHeadersOf(user, target string) string {
	h.t.Helper()
	rec := h.do(user, "HEAD", target, nil)
	h.expect(rec, 200, "")
	hd := rec.Header()
	return hd.Get("X-Amz-Object-Lock-Mode") + "|" + hd.Get("X-Amz-Object-Lock-Retain-Until-Date") + "|" + hd.Get("X-Amz-Object-Lock-Legal-Hold")
}

func (h *harness) retentionOf(user, target string) xmlRetention {
	h.t.Helper()
	rec := h.do(user, "GET", target, nil)
	h.expect(rec, 200, "")
	var doc xmlRetention
	if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil || !strings.Contains(rec.Body.String(), `<Retention xmlns="`+s3NS+`">`) {
		h.t.Fatalf("retention answer %q: %v", rec.Body.String(), err)
	}
	return doc
}

func (h *harness) legalHoldOf(user, target string) string {
	h.t.Helper()
	rec := h.do(user, "GET", target, nil)
	h.expect(rec, 200, "")
	var doc xmlLegalHold
	if err := xml.Unmarshal(rec.Body.Bytes(), &doc); err != nil || !strings.Contains(rec.Body.String(), `<LegalHold xmlns="`+s3NS+`">`) {
		h.t.Fatalf("legal hold answer %q: %v", rec.Body.String(), err)
	}
	return doc.Status
}

// TestObjectLockBucket pins CreateBucket's x-amz-bucket-object-lock-enabled
// (object lock, and so versioning Enabled, for the bucket's life) and
// GetObjectLockConfiguration's answers.
func TestObjectLockBucket(t *testing.T) {
	h := newHarness(t, nil)
	h.lockBucket("lkb")
	if got := h.versioningStatus("lkb"); got != "Enabled" {
		t.Fatalf("versioning of a lock bucket: %q", got)
	}
	rec := h.do("alice", "GET", "/lkb?object-lock", nil)
	h.expect(rec, 200, "")
	want := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<ObjectLockConfiguration xmlns="` + s3NS + `"><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>`
	if rec.Body.String() != want || rec.Header().Get("Content-Type") != "application/xml" {
		t.Fatalf("configuration of a new lock bucket: %q", rec.Body.String())
	}

	// S3: versioning cannot be suspended while object lock is on.
	h.expectError(h.do("alice", "PUT", "/lkb?versioning", versioningDoc("Suspended")), 409, "InvalidBucketState",
		"An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.")
	if got := h.versioningStatus("lkb"); got != "Enabled" {
		t.Fatalf("a refused suspension changed versioning to %q", got)
	}
	h.expect(h.do("alice", "PUT", "/lkb?versioning", versioningDoc("Enabled")), 200, "")

	// "false" and no header make an ordinary bucket.
	h.expect(h.do("alice", "PUT", "/plain", nil, "X-Amz-Bucket-Object-Lock-Enabled", "false"), 200, "")
	h.expectError(h.do("alice", "GET", "/plain?object-lock", nil), 404, "ObjectLockConfigurationNotFoundError",
		"Object Lock configuration does not exist for this bucket")
	if got := h.versioningStatus("plain"); got != "" {
		t.Fatalf("versioning of a plain bucket: %q", got)
	}
	// Anything else is refused and creates nothing.
	h.expect(h.do("alice", "PUT", "/odd", nil, "X-Amz-Bucket-Object-Lock-Enabled", "yes"), 400, "InvalidArgument")
	h.expect(h.do("alice", "HEAD", "/odd", nil), 404, "")

	// The configuration is the bucket owner's.
	h.expect(h.do("bob", "GET", "/lkb?object-lock", nil), 403, "AccessDenied")
	h.expect(h.putDoc("bob", "/lkb?object-lock", testLockConfigDays), 403, "AccessDenied")
	h.expect(h.do("alice", "GET", "/nob?object-lock", nil), 404, "NoSuchBucket")
	// No API removes it, and DELETE must not fall through to DeleteBucket.
	h.expect(h.do("alice", "DELETE", "/lkb?object-lock", nil), 405, "MethodNotAllowed")
	h.expect(h.do("alice", "HEAD", "/lkb", nil), 200, "")
	h.expect(h.do("alice", "GET", "/lkb?object-lock", nil), 200, "")
}

// TestObjectLockConfiguration pins PutObjectLockConfiguration: a default
// retention stored and answered in S3's form, Content-MD5 (or a checksum)
// required, validation with S3's codes, and versioning Enabled required.
func TestObjectLockConfiguration(t *testing.T) {
	h := newHarness(t, nil)
	h.lockBucket("lkb")
	h.expect(h.putDoc("alice", "/lkb?object-lock", testLockConfigDays), 200, "")
	rec := h.do("alice", "GET", "/lkb?object-lock", nil)
	h.expect(rec, 200, "")
	if !strings.Contains(rec.Body.String(), `<ObjectLockConfiguration xmlns="`+s3NS+`"><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`) {
		t.Fatalf("stored configuration: %q", rec.Body.String())
	}
	stored := func() string {
		t.Helper()
		return h.do("alice", "GET", "/lkb?object-lock", nil).Body.String()
	}
	before := stored()

	years := `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Years>2</Years></DefaultRetention></Rule></ObjectLockConfiguration>`
	// Without Content-MD5 or a checksum S3 refuses the call.
	h.expectError(h.do("alice", "PUT", "/lkb?object-lock", []byte(years)), 400, "InvalidRequest", msgMissingMD5)
	// A wrong Content-MD5 is BadDigest.
	h.expect(h.do("alice", "PUT", "/lkb?object-lock", []byte(years), "Content-MD5", md5b64("other")), 400, "BadDigest")
	if stored() != before {
		t.Fatal("a refused configuration was stored")
	}
	for _, c := range []struct {
		name, doc, code string
	}{
		{"not XML", `<ObjectLockConfiguration>`, "MalformedXML"},
		{"not enabled", `<ObjectLockConfiguration><ObjectLockEnabled>Disabled</ObjectLockEnabled></ObjectLockConfiguration>`, "MalformedXML"},
		{"no ObjectLockEnabled", `<ObjectLockConfiguration><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, "MalformedXML"},
		{"days and years", `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days><Years>1</Years></DefaultRetention></Rule></ObjectLockConfiguration>`, "MalformedXML"},
		{"no period", `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode></DefaultRetention></Rule></ObjectLockConfiguration>`, "MalformedXML"},
		{"unknown mode", `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>FOREVER</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, "MalformedXML"},
		{"zero days", `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>0</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, "InvalidArgument"},
		{"101 years", `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Years>101</Years></DefaultRetention></Rule></ObjectLockConfiguration>`, "InvalidArgument"},
	} {
		h.expect(h.putDoc("alice", "/lkb?object-lock", c.doc), 400, c.code)
		if stored() != before {
			t.Fatalf("%s: the refused configuration was stored", c.name)
		}
	}
	// A flexible checksum does instead of Content-MD5: a value, or the
	// SDK's algorithm alone.
	h.expect(h.do("alice", "PUT", "/lkb?object-lock", []byte(years), "X-Amz-Checksum-Crc32", crc32b64([]byte(years))), 200, "")
	if got := stored(); !strings.Contains(got, "<Mode>COMPLIANCE</Mode><Years>2</Years>") {
		t.Fatalf("after the CRC32 PUT: %q", got)
	}
	h.expect(h.do("alice", "PUT", "/lkb?object-lock", []byte(years), "X-Amz-Checksum-Crc32", crc32b64([]byte("x"))), 400, "BadDigest")
	h.expect(h.do("alice", "PUT", "/lkb?object-lock", []byte(testLockConfig), "X-Amz-Sdk-Checksum-Algorithm", "CRC32"), 200, "")
	if got := stored(); strings.Contains(got, "<Rule>") {
		t.Fatalf("a configuration without Rule kept the default retention: %q", got)
	}

	// On an existing bucket object lock needs versioning Enabled.
	h.expect(h.do("alice", "PUT", "/late", nil), 200, "")
	msg := "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration"
	h.expectError(h.putDoc("alice", "/late?object-lock", testLockConfig), 409, "InvalidBucketState", msg)
	h.expect(h.do("alice", "PUT", "/late?versioning", versioningDoc("Suspended")), 200, "")
	h.expectError(h.putDoc("alice", "/late?object-lock", testLockConfig), 409, "InvalidBucketState", msg)
	h.expect(h.do("alice", "GET", "/late?object-lock", nil), 404, "ObjectLockConfigurationNotFoundError")
	h.expect(h.do("alice", "PUT", "/late?versioning", versioningDoc("Enabled")), 200, "")
	h.expect(h.putDoc("alice", "/late?object-lock", testLockConfigDays), 200, "")
	h.expect(h.do("alice", "GET", "/late?object-lock", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/late?versioning", versioningDoc("Suspended")), 409, "InvalidBucketState")
}

// TestObjectLockWriteHeaders pins the x-amz-object-lock-* headers of
// PutObject (stored, answered by GET and HEAD), their validation with
// S3's messages, the InvalidRequest of a bucket without object lock, and
// S3's demand for Content-MD5 or a checksum.
func TestObjectLockWriteHeaders(t *testing.T) {
	h := newHarness(t, nil)
	h.lockBucket("lkb")
	until := futureDate()
	v1 := h.putLocked("alice", "/lkb/k", "locked", "X-Amz-Object-Lock-Mode", "GOVERNANCE",
		"X-Amz-Object-Lock-Retain-Until-Date", until, "X-Amz-Object-Lock-Legal-Hold", "ON")
	want := "GOVERNANCE|" + s3Date(t, until) + "|ON"
	if got := h.lockHeadersOf("alice", "/lkb/k"); got != want {
		t.Fatalf("HEAD lock headers %q, want %q", got, want)
	}
	get := h.do("alice", "GET", "/lkb/k", nil)
	h.expect(get, 200, "")
	if get.Header().Get("X-Amz-Object-Lock-Mode") != "GOVERNANCE" || get.Header().Get("X-Amz-Object-Lock-Legal-Hold") != "ON" ||
		get.Header().Get("X-Amz-Object-Lock-Retain-Until-Date") != s3Date(t, until) || get.Body.String() != "locked" {
		t.Fatalf("GET: %v %q", get.Header(), get.Body.String())
	}
	if r := h.retentionOf("alice", "/lkb/k?retention"); r.Mode != "GOVERNANCE" || r.RetainUntilDate != s3Date(t, until) {
		t.Fatalf("GetObjectRetention: %+v", r)
	}
	if got := h.legalHoldOf("alice", "/lkb/k?legal-hold"); got != "ON" {
		t.Fatalf("GetObjectLegalHold: %q", got)
	}
	// A newer version without headers has no lock; the old one keeps its own.
	v2 := h.putLocked("alice", "/lkb/k", "plain")
	if got := h.lockHeadersOf("alice", "/lkb/k"); got != "||" {
		t.Fatalf("unlocked version answers %q", got)
	}
	if got := h.lockHeadersOf("alice", "/lkb/k?versionId="+v1); got != want {
		t.Fatalf("HEAD by versionId: %q", got)
	}
	// Only a legal hold, OFF: answered as stored.
	h.putLocked("alice", "/lkb/off", "x", "X-Amz-Object-Lock-Legal-Hold", "OFF")
	if got := h.lockHeadersOf("alice", "/lkb/off"); got != "||OFF" {
		t.Fatalf("legal hold OFF answers %q", got)
	}
	h.expect(h.do("alice", "GET", "/lkb/off?retention", nil), 404, "NoSuchObjectLockConfiguration")

	versions := func() int {
		return countEntries(h.listVersions("/lkb?versions"), "Version")
	}
	n := versions()
	past := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	for _, c := range []struct {
		name string
		hdr  []string
		code string
		msg  string
	}{
		{"mode only", []string{"X-Amz-Object-Lock-Mode", "GOVERNANCE"}, "InvalidArgument",
			"x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied"},
		{"date only", []string{"X-Amz-Object-Lock-Retain-Until-Date", until}, "InvalidArgument",
			"x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied"},
		{"unknown mode", []string{"X-Amz-Object-Lock-Mode", "governance", "X-Amz-Object-Lock-Retain-Until-Date", until}, "InvalidArgument",
			"Unknown wormMode directive."},
		{"past date", []string{"X-Amz-Object-Lock-Mode", "COMPLIANCE", "X-Amz-Object-Lock-Retain-Until-Date", past}, "InvalidArgument",
			"The retain until date must be in the future!"},
		{"not a date", []string{"X-Amz-Object-Lock-Mode", "COMPLIANCE", "X-Amz-Object-Lock-Retain-Until-Date", "tomorrow"}, "InvalidArgument",
			"The retain until date must be provided in ISO 8601 format"},
		{"bad legal hold", []string{"X-Amz-Object-Lock-Legal-Hold", "on"}, "InvalidArgument",
			"Legal Hold must be either of 'ON' or 'OFF'"},
	} {
		rec := h.do("alice", "PUT", "/lkb/k", []byte("bad"), append([]string{"Content-MD5", md5b64("bad")}, c.hdr...)...)
		h.expectError(rec, 400, c.code, c.msg)
		if got := versions(); got != n {
			t.Fatalf("%s: a refused PUT stored a version (%d, was %d)", c.name, got, n)
		}
	}
	// With lock headers S3 wants Content-MD5 or a checksum.
	h.expectError(h.do("alice", "PUT", "/lkb/k", []byte("bad"), "X-Amz-Object-Lock-Legal-Hold", "ON"), 400, "InvalidRequest", msgLockChecksumPut)
	if versions() != n {
		t.Fatal("a PUT without a checksum was stored")
	}
	h.expect(h.do("alice", "PUT", "/lkb/crc", []byte("ok"), "X-Amz-Checksum-Crc32", crc32b64([]byte("ok")),
		"X-Amz-Object-Lock-Legal-Hold", "ON"), 200, "")
	h.expect(h.do("alice", "PUT", "/lkb/sdk", []byte("ok"), "X-Amz-Sdk-Checksum-Algorithm", "CRC32",
		"X-Amz-Object-Lock-Legal-Hold", "ON"), 200, "")
	// Without lock headers and default retention, none is needed.
	h.expect(h.do("alice", "PUT", "/lkb/free", []byte("ok")), 200, "")

	// A bucket without object lock refuses every lock header.
	h.expect(h.do("alice", "PUT", "/plain", nil), 200, "")
	for _, hdr := range [][]string{
		{"X-Amz-Object-Lock-Legal-Hold", "ON"},
		{"X-Amz-Object-Lock-Mode", "GOVERNANCE", "X-Amz-Object-Lock-Retain-Until-Date", until},
	} {
		rec := h.do("alice", "PUT", "/plain/k", []byte("x"), append([]string{"Content-MD5", md5b64("x")}, hdr...)...)
		h.expectError(rec, 400, "InvalidRequest", msgLockNotEnabled)
	}
	// Refused as such before S3's demand for a checksum is considered.
	h.expectError(h.do("alice", "PUT", "/plain/k", []byte("x"), "X-Amz-Object-Lock-Legal-Hold", "ON"), 400, "InvalidRequest", msgLockNotEnabled)
	h.expect(h.do("alice", "HEAD", "/plain/k", nil), 404, "")
	_ = v2
}

// TestObjectLockDefaultRetention pins a bucket's default retention: a
// new version that names none gets it (an explicit one wins), and such a
// bucket wants Content-MD5 or a checksum on every PutObject.
func TestObjectLockDefaultRetention(t *testing.T) {
	h := newHarness(t, nil)
	h.lockBucket("lkb")
	h.expect(h.putDoc("alice", "/lkb?object-lock", testLockConfigDays), 200, "")
	h.putLocked("alice", "/lkb/d", "defaulted")
	// The fake's clock: one day after it.
	until := objectlock.FormatRetainUntil(h.store.now().AddDate(0, 0, 1))
	if got := h.lockHeadersOf("alice", "/lkb/d"); got != "GOVERNANCE|"+until+"|" {
		t.Fatalf("default retention: %q", got)
	}
	explicit := futureDateIn(30)
	h.putLocked("alice", "/lkb/e", "explicit", "X-Amz-Object-Lock-Mode", "COMPLIANCE", "X-Amz-Object-Lock-Retain-Until-Date", explicit)
	if got := h.lockHeadersOf("alice", "/lkb/e"); got != "COMPLIANCE|"+s3Date(t, explicit)+"|" {
		t.Fatalf("explicit retention: %q", got)
	}
	h.expectError(h.do("alice", "PUT", "/lkb/n", []byte("no checksum")), 400, "InvalidRequest", msgLockChecksumPut)
	h.expect(h.do("alice", "HEAD", "/lkb/n", nil), 404, "")
	// A body digest the signature covers counts as a checksum here
	// (aws-sdk-go-v2 over plain HTTP sends only that), where S3 does not.
	h.expect(h.do("alice", "PUT", "/lkb/n", []byte("signed digest"), "X-Test-Signed-Payload", "1"), 200, "")
	if got := h.lockHeadersOf("alice", "/lkb/n"); got != "GOVERNANCE|"+until+"|" {
		t.Fatalf("signed-digest PUT: %q", got)
	}
	// A legal hold alone keeps the default retention.
	h.putLocked("alice", "/lkb/h", "held", "X-Amz-Object-Lock-Legal-Hold", "ON")
	if got := h.lockHeadersOf("alice", "/lkb/h"); got != "GOVERNANCE|"+until+"|ON" {
		t.Fatalf("legal hold with the default retention: %q", got)
	}
}

// TestObjectLockMultipartAndCopy pins the lock headers of
// CreateMultipartUpload (kept for the object the upload completes) and
// CopyObject (the copy's own, never its source's).
func TestObjectLockMultipartAndCopy(t *testing.T) {
	h := newHarness(t, nil)
	h.lockBucket("lkb")
	until := futureDate()
	rec := h.do("alice", "POST", "/lkb/mp?uploads", nil, "X-Amz-Object-Lock-Mode", "COMPLIANCE",
		"X-Amz-Object-Lock-Retain-Until-Date", until, "X-Amz-Object-Lock-Legal-Hold", "ON")
	h.expect(rec, 200, "")
	var init xmlInitiateMultipart
	if err := xml.Unmarshal(rec.Body.Bytes(), &init); err != nil {
		t.Fatal(err)
	}
	part := h.do("alice", "PUT", "/lkb/mp?partNumber=1&uploadId="+init.UploadID, []byte("part one"))
	h.expect(part, 200, "")
	done := []byte("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>" + part.Header().Get("ETag") + "</ETag></Part></CompleteMultipartUpload>")
	h.expect(h.do("alice", "POST", "/lkb/mp?uploadId="+init.UploadID, done), 200, "")
	if got := h.lockHeadersOf("alice", "/lkb/mp"); got != "COMPLIANCE|"+s3Date(t, until)+"|ON" {
		t.Fatalf("completed upload: %q", got)
	}
	h.expect(h.do("alice", "POST", "/lkb/mp2?uploads", nil, "X-Amz-Object-Lock-Mode", "COMPLIANCE"), 400, "InvalidArgument")
	h.expect(h.do("alice", "PUT", "/plain", nil), 200, "")
	h.expectError(h.do("alice", "POST", "/plain/mp?uploads", nil, "X-Amz-Object-Lock-Legal-Hold", "ON"), 400, "InvalidRequest", msgLockNotEnabled)

	// The copy of a locked object is not locked ...
	h.expect(h.do("alice", "PUT", "/lkb/copy", nil, "X-Amz-Copy-Source", "/lkb/mp"), 200, "")
	if got := h.lockHeadersOf("alice", "/lkb/copy"); got != "||" {
		t.Fatalf("copy took its source's lock: %q", got)
	}
	// ... unless the copy request asks for a lock of its own.
	h.expect(h.do("alice", "PUT", "/lkb/copy2", nil, "X-Amz-Copy-Source", "/lkb/mp", "X-Amz-Object-Lock-Legal-Hold", "ON"), 200, "")
	if got := h.lockHeadersOf("alice", "/lkb/copy2"); got != "||ON" {
		t.Fatalf("copy with a legal hold: %q", got)
	}
	h.expectError(h.do("alice", "PUT", "/plain/copy", nil, "X-Amz-Copy-Source", "/lkb/mp", "X-Amz-Object-Lock-Legal-Hold", "ON"),
		400, "InvalidRequest", msgLockNotEnabled)
	h.expect(h.do("alice", "PUT", "/plain/copy", nil, "X-Amz-Copy-Source", "/lkb/mp"), 200, "")
}

// TestObjectRetention pins Put/GetObjectRetention: GOVERNANCE yields to a
// bypass, COMPLIANCE only ever grows, an empty Retention removes one,
// and S3's codes for every malformed request.
func TestObjectRetention(t *testing.T) {
	h := newHarness(t, nil)
	h.lockBucket("lkb")
	v1 := h.putLocked("alice", "/lkb/k", "one")
	v2 := h.putLocked("alice", "/lkb/k", "two")

	// Never set: 404 NoSuchObjectLockConfiguration.
	h.expectError(h.do("alice", "GET", "/lkb/k?retention", nil), 404, "NoSuchObjectLockConfiguration", msgNoLockConfig)

	d10, d20, d5 := futureDateIn(10), futureDateIn(20), futureDateIn(5)
	rec := h.putDoc("alice", "/lkb/k?retention&versionId="+v1, retentionDoc("GOVERNANCE", d10))
	h.expect(rec, 200, "")
	if rec.Header().Get("X-Amz-Version-Id") != v1 {
		t.Fatalf("x-amz-version-id %q, want %q", rec.Header().Get("X-Amz-Version-Id"), v1)
	}
	if r := h.retentionOf("alice", "/lkb/k?retention&versionId="+v1); r.Mode != "GOVERNANCE" || r.RetainUntilDate != s3Date(t, d10) {
		t.Fatalf("retention of v1: %+v", r)
	}
	// The current version (v2) has none of its own.
	h.expect(h.do("alice", "GET", "/lkb/k?retention", nil), 404, "NoSuchObjectLockConfiguration")
	current := h.do("alice", "GET", "/lkb/k?retention&versionId="+v1, nil)
	if current.Header().Get("X-Amz-Version-Id") != v1 {
		t.Fatalf("GET retention version header %q", current.Header().Get("X-Amz-Version-Id"))
	}

	// GOVERNANCE: extending needs nothing; shortening needs the bypass.
	h.expect(h.putDoc("alice", "/lkb/k?retention&versionId="+v1, retentionDoc("GOVERNANCE", d20)), 200, "")
	h.expectError(h.putDoc("alice", "/lkb/k?retention&versionId="+v1, retentionDoc("GOVERNANCE", d5)), 403, "AccessDenied", msgObjectLocked)
	h.expectError(h.putDoc("alice", "/lkb/k?retention&versionId="+v1, retentionDoc("", "")), 403, "AccessDenied", msgObjectLocked)
	if r := h.retentionOf("alice", "/lkb/k?retention&versionId="+v1); r.RetainUntilDate != s3Date(t, d20) {
		t.Fatalf("a refused change was applied: %+v", r)
	}
	h.expect(h.putDoc("alice", "/lkb/k?retention&versionId="+v1, retentionDoc("GOVERNANCE", d5),
		"X-Amz-Bypass-Governance-Retention", "true"), 200, "")
	if r := h.retentionOf("alice", "/lkb/k?retention&versionId="+v1); r.RetainUntilDate != s3Date(t, d5) {
		t.Fatalf("bypassed shortening: %+v", r)
	}
	// An empty Retention with the bypass removes it.
	h.expect(h.putDoc("alice", "/lkb/k?retention&versionId="+v1, `<Retention/>`, "X-Amz-Bypass-Governance-Retention", "true"), 200, "")
	h.expect(h.do("alice", "GET", "/lkb/k?retention&versionId="+v1, nil), 404, "NoSuchObjectLockConfiguration")

	// COMPLIANCE: GOVERNANCE becomes it only with the bypass (a mode
	// change alters the lock settings, even to a later date); after that
	// nothing but an extension is accepted, bypass or not.
	h.expect(h.putDoc("alice", "/lkb/k?retention", retentionDoc("GOVERNANCE", d10)), 200, "")
	for _, until := range []string{d10, d20} {
		h.expectError(h.putDoc("alice", "/lkb/k?retention", retentionDoc("COMPLIANCE", until)), 403, "AccessDenied", msgObjectLocked)
	}
	h.expect(h.putDoc("alice", "/lkb/k?retention", retentionDoc("COMPLIANCE", d10), "X-Amz-Bypass-Governance-Retention", "true"), 200, "")
	for _, doc := range []string{retentionDoc("COMPLIANCE", d5), retentionDoc("GOVERNANCE", d20), retentionDoc("", "")} {
		for _, bypass := range []string{"false", "true"} {
			h.expectError(h.putDoc("alice", "/lkb/k?retention", doc, "X-Amz-Bypass-Governance-Retention", bypass), 403, "AccessDenied", msgObjectLocked)
		}
	}
	h.expect(h.putDoc("alice", "/lkb/k?retention", retentionDoc("COMPLIANCE", d20)), 200, "")
	if r := h.retentionOf("alice", "/lkb/k?retention"); r.Mode != "COMPLIANCE" || r.RetainUntilDate != s3Date(t, d20) {
		t.Fatalf("compliance retention of v2: %+v", r)
	}
	if got := h.lockHeadersOf("alice", "/lkb/k?versionId="+v2); got != "COMPLIANCE|"+s3Date(t, d20)+"|" {
		t.Fatalf("HEAD after PutObjectRetention: %q", got)
	}

	// Malformed requests change nothing.
	past := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	for _, c := range []struct {
		name, doc, code string
		status          int
	}{
		{"mode only", retentionDoc("GOVERNANCE", ""), "MalformedXML", 400},
		{"date only", retentionDoc("", d20), "MalformedXML", 400},
		{"unknown mode", retentionDoc("FOREVER", d20), "MalformedXML", 400},
		{"lower-case mode", retentionDoc("compliance", d20), "MalformedXML", 400},
		{"not a date", retentionDoc("COMPLIANCE", "next year"), "MalformedXML", 400},
		{"not XML", `<Retention><Mode>COMPLIANCE</Mode>`, "MalformedXML", 400},
		{"another document", legalHoldDoc("ON"), "MalformedXML", 400},
		{"unknown element", `<Retention><Mode>COMPLIANCE</Mode><RetainUntilDate>` + d20 + `</RetainUntilDate><Extra/></Retention>`, "MalformedXML", 400},
		{"past date", retentionDoc("COMPLIANCE", past), "InvalidArgument", 400},
	} {
		rec := h.putDoc("alice", "/lkb/k?retention", c.doc)
		h.expect(rec, c.status, c.code)
		if c.name == "past date" && !strings.Contains(rec.Body.String(), "The retain until date must be in the future!") {
			t.Fatalf("past date message: %s", rec.Body.String())
		}
	}
	h.expectError(h.do("alice", "PUT", "/lkb/k?retention", []byte(retentionDoc("COMPLIANCE", futureDateIn(40)))), 400, "InvalidRequest", msgMissingMD5)
	if r := h.retentionOf("alice", "/lkb/k?retention"); r.RetainUntilDate != s3Date(t, d20) {
		t.Fatalf("a refused request changed the retention: %+v", r)
	}

	// A missing key or version, and a bucket without object lock.
	h.expect(h.putDoc("alice", "/lkb/none?retention", retentionDoc("GOVERNANCE", d10)), 404, "NoSuchKey")
	h.expect(h.do("alice", "GET", "/lkb/none?retention", nil), 404, "NoSuchKey")
	h.expect(h.putDoc("alice", "/lkb/k?retention&versionId=fv99999999", retentionDoc("GOVERNANCE", d10)), 404, "NoSuchVersion")
	h.expect(h.do("alice", "PUT", "/plain", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/plain/k", []byte("x")), 200, "")
	h.expectError(h.putDoc("alice", "/plain/k?retention", retentionDoc("GOVERNANCE", d10)), 400, "InvalidRequest", msgLockNotEnabled)
	h.expectError(h.do("alice", "GET", "/plain/k?retention", nil), 400, "InvalidRequest", msgLockNotEnabled)
	// No API deletes a retention; DELETE must not remove the object.
	h.expect(h.do("alice", "DELETE", "/plain/k?retention", nil), 405, "MethodNotAllowed")
	h.expect(h.do("alice", "HEAD", "/plain/k", nil), 200, "")
}

// TestObjectLegalHold pins Put/GetObjectLegalHold: a hold blocks removing
// its version until released, whatever the retention, and only ON and OFF
// are statuses.
func TestObjectLegalHold(t *testing.T) {
	h := newHarness(t, nil)
	h.lockBucket("lkb")
	v1 := h.putLocked("alice", "/lkb/k", "one")
	v2 := h.putLocked("alice", "/lkb/k", "two")
	h.expectError(h.do("alice", "GET", "/lkb/k?legal-hold", nil), 404, "NoSuchObjectLockConfiguration", msgNoLockConfig)

	rec := h.putDoc("alice", "/lkb/k?legal-hold&versionId="+v1, legalHoldDoc("ON"))
	h.expect(rec, 200, "")
	if rec.Header().Get("X-Amz-Version-Id") != v1 {
		t.Fatalf("x-amz-version-id %q", rec.Header().Get("X-Amz-Version-Id"))
	}
	if got := h.legalHoldOf("alice", "/lkb/k?legal-hold&versionId="+v1); got != "ON" {
		t.Fatalf("hold of v1: %q", got)
	}
	h.expect(h.do("alice", "GET", "/lkb/k?legal-hold", nil), 404, "NoSuchObjectLockConfiguration") // v2 has none
	h.expectError(h.do("alice", "DELETE", "/lkb/k?versionId="+v1, nil, "X-Amz-Bypass-Governance-Retention", "true"), 403, "AccessDenied", msgObjectLocked)
	h.expect(h.do("alice", "HEAD", "/lkb/k?versionId="+v1, nil), 200, "")

	for _, doc := range []string{legalHoldDoc("on"), legalHoldDoc(""), `<LegalHold/>`, `<LegalHold><Status>ON</Status>`,
		`<LegalHold><Status>ON</Status><Until>never</Until></LegalHold>`, retentionDoc("GOVERNANCE", futureDate())} {
		h.expect(h.putDoc("alice", "/lkb/k?legal-hold&versionId="+v1, doc), 400, "MalformedXML")
	}
	h.expectError(h.do("alice", "PUT", "/lkb/k?legal-hold&versionId="+v1, []byte(legalHoldDoc("OFF"))), 400, "InvalidRequest", msgMissingMD5)
	if got := h.legalHoldOf("alice", "/lkb/k?legal-hold&versionId="+v1); got != "ON" {
		t.Fatalf("a refused request released the hold: %q", got)
	}

	h.expect(h.putDoc("alice", "/lkb/k?legal-hold&versionId="+v1, legalHoldDoc("OFF")), 200, "")
	if got := h.legalHoldOf("alice", "/lkb/k?legal-hold&versionId="+v1); got != "OFF" {
		t.Fatalf("released hold: %q", got)
	}
	h.expect(h.do("alice", "DELETE", "/lkb/k?versionId="+v1, nil), 204, "")
	h.expect(h.do("alice", "HEAD", "/lkb/k?versionId="+v1, nil), 404, "")

	// A hold on the current version by default, and a retention beside it.
	h.expect(h.putDoc("alice", "/lkb/k?legal-hold", legalHoldDoc("ON")), 200, "")
	h.expect(h.putDoc("alice", "/lkb/k?retention", retentionDoc("GOVERNANCE", futureDate())), 200, "")
	if got := h.lockHeadersOf("alice", "/lkb/k"); !strings.HasPrefix(got, "GOVERNANCE|") || !strings.HasSuffix(got, "|ON") {
		t.Fatalf("hold and retention: %q", got)
	}
	// Removing the retention (with bypass) keeps the hold, which still blocks.
	h.expect(h.putDoc("alice", "/lkb/k?retention", `<Retention/>`, "X-Amz-Bypass-Governance-Retention", "true"), 200, "")
	if got := h.lockHeadersOf("alice", "/lkb/k"); got != "||ON" {
		t.Fatalf("after removing the retention: %q", got)
	}
	h.expect(h.do("alice", "DELETE", "/lkb/k?versionId="+v2, nil), 403, "AccessDenied")

	h.expect(h.do("alice", "PUT", "/plain", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/plain/k", []byte("x")), 200, "")
	h.expectError(h.putDoc("alice", "/plain/k?legal-hold", legalHoldDoc("ON")), 400, "InvalidRequest", msgLockNotEnabled)
	h.expectError(h.do("alice", "GET", "/plain/k?legal-hold", nil), 400, "InvalidRequest", msgLockNotEnabled)
	h.expect(h.do("alice", "DELETE", "/plain/k?legal-hold", nil), 405, "MethodNotAllowed")
	h.expect(h.do("alice", "HEAD", "/plain/k", nil), 200, "")
}

// TestObjectLockDeletes pins what deletes do to locked versions: a delete
// marker is always allowed; removing a locked version is AccessDenied,
// with S3's message; x-amz-bypass-governance-retention removes a
// GOVERNANCE one; DeleteObjects reports each refused key.
func TestObjectLockDeletes(t *testing.T) {
	h := newHarness(t, nil)
	h.lockBucket("lkb")
	until := futureDate()
	gov := h.putLocked("alice", "/lkb/gov", "g", "X-Amz-Object-Lock-Mode", "GOVERNANCE", "X-Amz-Object-Lock-Retain-Until-Date", until)
	comp := h.putLocked("alice", "/lkb/comp", "c", "X-Amz-Object-Lock-Mode", "COMPLIANCE", "X-Amz-Object-Lock-Retain-Until-Date", until)
	free := h.putLocked("alice", "/lkb/free", "f")

	// A delete without versionId only adds a delete marker.
	rec := h.do("alice", "DELETE", "/lkb/gov", nil)
	h.expect(rec, 204, "")
	if rec.Header().Get("X-Amz-Delete-Marker") != "true" {
		t.Fatalf("no delete marker: %v", rec.Header())
	}
	h.expect(h.do("alice", "DELETE", "/lkb/gov?versionId="+rec.Header().Get("X-Amz-Version-Id"), nil), 204, "")

	h.expectError(h.do("alice", "DELETE", "/lkb/gov?versionId="+gov, nil), 403, "AccessDenied", msgObjectLocked)
	h.expectError(h.do("alice", "DELETE", "/lkb/gov?versionId="+gov, nil, "X-Amz-Bypass-Governance-Retention", "false"), 403, "AccessDenied", msgObjectLocked)
	h.expectError(h.do("alice", "DELETE", "/lkb/comp?versionId="+comp, nil, "X-Amz-Bypass-Governance-Retention", "true"), 403, "AccessDenied", msgObjectLocked)
	h.expect(h.do("alice", "HEAD", "/lkb/gov?versionId="+gov, nil), 200, "")
	h.expect(h.do("alice", "DELETE", "/lkb/gov?versionId="+gov, nil, "X-Amz-Bypass-Governance-Retention", "true"), 204, "")
	h.expect(h.do("alice", "HEAD", "/lkb/gov?versionId="+gov, nil), 404, "")

	// DeleteObjects: a per-key AccessDenied for each locked version.
	gov2 := h.putLocked("alice", "/lkb/gov2", "g", "X-Amz-Object-Lock-Mode", "GOVERNANCE", "X-Amz-Object-Lock-Retain-Until-Date", until)
	del := `<Delete><Object><Key>gov2</Key><VersionId>` + gov2 + `</VersionId></Object><Object><Key>comp</Key><VersionId>` + comp +
		`</VersionId></Object><Object><Key>free</Key><VersionId>` + free + `</VersionId></Object></Delete>`
	result := func(hdr ...string) xmlDeleteResult {
		t.Helper()
		rec := h.do("alice", "POST", "/lkb?delete", []byte(del), append([]string{"Content-MD5", md5b64(del)}, hdr...)...)
		h.expect(rec, 200, "")
		var out xmlDeleteResult
		if err := xml.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := result()
	if len(out.Errors) != 2 || len(out.Deleted) != 1 || out.Deleted[0].Key != "free" {
		t.Fatalf("DeleteObjects: %+v", out)
	}
	for _, e := range out.Errors {
		if e.Code != "AccessDenied" || e.Message != msgObjectLocked || (e.Key != "gov2" && e.Key != "comp") {
			t.Fatalf("DeleteObjects error entry: %+v", e)
		}
	}
	out = result("X-Amz-Bypass-Governance-Retention", "true")
	if len(out.Errors) != 1 || out.Errors[0].Key != "comp" || out.Errors[0].Code != "AccessDenied" {
		t.Fatalf("DeleteObjects with bypass: %+v", out)
	}
	h.expect(h.do("alice", "HEAD", "/lkb/gov2?versionId="+gov2, nil), 404, "")
	h.expect(h.do("alice", "HEAD", "/lkb/comp?versionId="+comp, nil), 200, "")
	// Without Content-MD5 or a checksum DeleteObjects is refused, as before.
	h.expect(h.do("alice", "POST", "/lkb?delete", []byte(del)), 400, "InvalidRequest")
}

// TestObjectLockPermissions pins who may do what: the lock actions are
// the bucket's or object's owner's by default (ACL grants give none),
// lock headers on GET/HEAD go only to callers who may read them, bypass
// needs s3:BypassGovernanceRetention, and a write that sets a lock needs
// s3:PutObjectRetention / s3:PutObjectLegalHold where a policy decides.
func TestObjectLockPermissions(t *testing.T) {
	h := newHarness(t, nil)
	h.lockBucket("lkb")
	h.expect(h.do("alice", "PUT", "/lkb?acl", nil, "X-Amz-Acl", "public-read-write"), 200, "")
	until := futureDate()
	av := h.putLocked("alice", "/lkb/a", "alice's", "X-Amz-Acl", "public-read", "X-Amz-Object-Lock-Mode", "GOVERNANCE",
		"X-Amz-Object-Lock-Retain-Until-Date", until, "X-Amz-Object-Lock-Legal-Hold", "OFF")

	// bob may read the object but not its lock.
	if got := h.lockHeadersOf("bob", "/lkb/a"); got != "||" {
		t.Fatalf("lock headers shown to bob: %q", got)
	}
	if got := h.lockHeadersOf("alice", "/lkb/a"); got != "GOVERNANCE|"+s3Date(t, until)+"|OFF" {
		t.Fatalf("lock headers of the owner: %q", got)
	}
	h.expect(h.do("bob", "GET", "/lkb/a?retention", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/lkb/a?legal-hold", nil), 403, "AccessDenied")
	h.expect(h.putDoc("bob", "/lkb/a?legal-hold", legalHoldDoc("ON")), 403, "AccessDenied")
	// Refused before the body is judged: a malformed one is still AccessDenied.
	h.expect(h.putDoc("bob", "/lkb/a?retention", retentionDoc("NOPE", "")), 403, "AccessDenied")
	h.expect(h.do("", "GET", "/lkb/a?retention", nil), 403, "AccessDenied")

	// bob's own object (written through the bucket's WRITE grant): he
	// sets its lock, and so may alice, the bucket's owner.
	bv := h.putLocked("bob", "/lkb/b", "bob's", "X-Amz-Object-Lock-Mode", "GOVERNANCE", "X-Amz-Object-Lock-Retain-Until-Date", until)
	h.expect(h.putDoc("bob", "/lkb/b?legal-hold", legalHoldDoc("OFF")), 200, "")
	h.expect(h.putDoc("alice", "/lkb/b?legal-hold", legalHoldDoc("OFF")), 200, "")
	if r := h.retentionOf("bob", "/lkb/b?retention"); r.Mode != "GOVERNANCE" {
		t.Fatalf("bob's retention: %+v", r)
	}
	// Only the bucket's owner may bypass GOVERNANCE without a policy.
	h.expect(h.do("bob", "DELETE", "/lkb/b?versionId="+bv, nil, "X-Amz-Bypass-Governance-Retention", "true"), 403, "AccessDenied")
	h.expect(h.putDoc("bob", "/lkb/b?retention", `<Retention/>`, "X-Amz-Bypass-Governance-Retention", "true"), 403, "AccessDenied")
	h.expect(h.do("root", "DELETE", "/lkb/b?versionId="+bv, nil, "X-Amz-Bypass-Governance-Retention", "true"), 204, "")

	// A bucket policy: bob may bypass; nobody may set a retention of more
	// than 30 days or a legal hold; alice may not bypass.
	policyDoc := `{"Version": "2012-10-17", "Statement": [
	  {"Effect": "Allow", "Principal": {"AWS": "bob"}, "Action": "s3:BypassGovernanceRetention", "Resource": "arn:aws:s3:::lkb/*"},
	  {"Effect": "Deny", "Principal": "*", "Action": "s3:PutObjectRetention", "Resource": "arn:aws:s3:::lkb/*",
	   "Condition": {"NumericGreaterThan": {"s3:object-lock-remaining-retention-days": "30"}}},
	  {"Effect": "Deny", "Principal": "*", "Action": "s3:PutObjectLegalHold", "Resource": "arn:aws:s3:::lkb/*"},
	  {"Effect": "Deny", "Principal": {"AWS": "alice"}, "Action": "s3:BypassGovernanceRetention", "Resource": "arn:aws:s3:::lkb/*"}
	]}`
	h.expect(h.do("alice", "PUT", "/lkb?policy", []byte(policyDoc)), 204, "")
	bv = h.putLocked("bob", "/lkb/b", "again", "X-Amz-Object-Lock-Mode", "GOVERNANCE", "X-Amz-Object-Lock-Retain-Until-Date", futureDateIn(10))
	long := futureDateIn(100)
	h.expect(h.do("bob", "PUT", "/lkb/c", []byte("x"), "Content-MD5", md5b64("x"), "X-Amz-Object-Lock-Mode", "GOVERNANCE",
		"X-Amz-Object-Lock-Retain-Until-Date", long), 403, "AccessDenied")
	h.expect(h.do("bob", "PUT", "/lkb/c", []byte("x"), "Content-MD5", md5b64("x"), "X-Amz-Object-Lock-Legal-Hold", "ON"), 403, "AccessDenied")
	h.expect(h.do("bob", "HEAD", "/lkb/c", nil), 404, "")
	// The same for a copy's and a multipart upload's lock headers.
	h.expect(h.do("bob", "PUT", "/lkb/c", nil, "X-Amz-Copy-Source", "/lkb/a", "X-Amz-Object-Lock-Legal-Hold", "ON"), 403, "AccessDenied")
	h.expect(h.do("bob", "POST", "/lkb/c?uploads", nil, "X-Amz-Object-Lock-Legal-Hold", "OFF"), 403, "AccessDenied")
	h.expect(h.do("bob", "HEAD", "/lkb/c", nil), 404, "")
	h.expect(h.do("bob", "PUT", "/lkb/c", nil, "X-Amz-Copy-Source", "/lkb/a"), 200, "")
	h.expect(h.do("bob", "POST", "/lkb/c?uploads", nil), 200, "")
	h.expect(h.putDoc("alice", "/lkb/b?retention", retentionDoc("GOVERNANCE", long)), 403, "AccessDenied")
	h.expect(h.putDoc("alice", "/lkb/b?retention", retentionDoc("GOVERNANCE", futureDateIn(20))), 200, "")
	h.expect(h.putDoc("alice", "/lkb/b?legal-hold", legalHoldDoc("ON")), 403, "AccessDenied")
	// alice's bypass is denied, so hers is no bypass: the retention holds.
	h.expectError(h.do("alice", "DELETE", "/lkb/a?versionId="+av, nil, "X-Amz-Bypass-Governance-Retention", "true"), 403, "AccessDenied", msgObjectLocked)
	h.expect(h.do("bob", "DELETE", "/lkb/b?versionId="+bv, nil, "X-Amz-Bypass-Governance-Retention", "true"), 204, "")
	h.expect(h.do("bob", "DELETE", "/lkb/a?versionId="+av, nil, "X-Amz-Bypass-Governance-Retention", "true"), 204, "")
}

// TestObjectLockIdentityPermissions pins the same decisions for
// identities of the identity store, whose policies alone decide.
func TestObjectLockIdentityPermissions(t *testing.T) {
	pol := func(actions string) testPermissions {
		return testPermissions{own: mustIdentityPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":[`+actions+`],"Resource":"*"}]}`)}
	}
	base := `"s3:CreateBucket","s3:PutObject","s3:GetObject","s3:GetObjectVersion","s3:DeleteObjectVersion","s3:ListBucket"`
	h := identityHarness(t, map[string]testPermissions{
		"plain":  pol(base),
		"locker": pol(base + `,"s3:PutObjectRetention","s3:PutObjectLegalHold","s3:GetObjectRetention","s3:GetObjectLegalHold","s3:BypassGovernanceRetention","s3:PutBucketObjectLockConfiguration","s3:PutBucketVersioning"`),
	})
	h.expect(h.do("iam:plain", "PUT", "/nolock", nil, "X-Amz-Bucket-Object-Lock-Enabled", "true"), 403, "AccessDenied")
	h.expect(h.do("iam:locker", "PUT", "/lkb", nil, "X-Amz-Bucket-Object-Lock-Enabled", "true"), 200, "")
	until := futureDate()
	lockHdr := []string{"X-Amz-Object-Lock-Mode", "GOVERNANCE", "X-Amz-Object-Lock-Retain-Until-Date", until}

	h.expect(h.do("iam:plain", "PUT", "/lkb/k", []byte("x"), append([]string{"Content-MD5", md5b64("x")}, lockHdr...)...), 403, "AccessDenied")
	h.expect(h.do("iam:plain", "PUT", "/lkb/k", []byte("x"), "Content-MD5", md5b64("x"), "X-Amz-Object-Lock-Legal-Hold", "OFF"), 403, "AccessDenied")
	v := h.putLocked("iam:locker", "/lkb/k", "x", append(lockHdr, "X-Amz-Object-Lock-Legal-Hold", "OFF")...)

	if got := h.lockHeadersOf("iam:plain", "/lkb/k"); got != "||" {
		t.Fatalf("lock headers without s3:GetObjectRetention: %q", got)
	}
	if got := h.lockHeadersOf("iam:locker", "/lkb/k"); got != "GOVERNANCE|"+s3Date(t, until)+"|OFF" {
		t.Fatalf("lock headers with the read actions: %q", got)
	}
	h.expect(h.do("iam:plain", "GET", "/lkb/k?retention", nil), 403, "AccessDenied")
	h.expect(h.do("iam:plain", "DELETE", "/lkb/k?versionId="+v, nil, "X-Amz-Bypass-Governance-Retention", "true"), 403, "AccessDenied")
	h.expect(h.do("iam:plain", "HEAD", "/lkb/k?versionId="+v, nil), 200, "")
	h.expect(h.do("iam:locker", "DELETE", "/lkb/k?versionId="+v, nil, "X-Amz-Bypass-Governance-Retention", "true"), 204, "")
}

// TestObjectLockSubresourcesStayPut checks that the object lock
// sub-resources named on the wrong kind of resource, or with a method S3
// has no API for, never fall through to a write or a delete.
func TestObjectLockSubresourcesStayPut(t *testing.T) {
	h := newHarness(t, nil)
	h.lockBucket("lkb")
	h.putLocked("alice", "/lkb/k", "keep")
	h.expect(h.do("alice", "PUT", "/newb?retention", nil), 501, "NotImplemented")
	h.expect(h.do("alice", "PUT", "/newb?legal-hold", nil), 501, "NotImplemented")
	h.expect(h.do("alice", "HEAD", "/newb", nil), 404, "")
	h.expect(h.do("alice", "DELETE", "/lkb?retention", nil), 501, "NotImplemented")
	h.expect(h.do("alice", "PUT", "/lkb/k?object-lock", []byte("overwrite")), 501, "NotImplemented")
	h.expect(h.do("alice", "DELETE", "/lkb/k?object-lock", nil), 501, "NotImplemented")
	h.expect(h.do("alice", "DELETE", "/lkb/k?retention", nil), 405, "MethodNotAllowed")
	h.expect(h.do("alice", "DELETE", "/lkb/k?legal-hold", nil), 405, "MethodNotAllowed")
	h.expect(h.do("alice", "POST", "/lkb?object-lock", nil), 405, "MethodNotAllowed")
	if got := h.do("alice", "GET", "/lkb/k", nil); got.Code != 200 || got.Body.String() != "keep" {
		t.Fatalf("object changed: %d %q", got.Code, got.Body.String())
	}
	if n := countEntries(h.listVersions("/lkb?versions"), "DeleteMarker"); n != 0 {
		t.Fatalf("%d delete markers made", n)
	}
}

// TestPayloadSigned: only a hex SHA-256 or signed aws-chunked modes make
// the verifier check the body against the signature.
func TestPayloadSigned(t *testing.T) {
	for hash, want := range map[string]bool{
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855": true,
		"STREAMING-AWS4-HMAC-SHA256-PAYLOAD":                               true,
		"STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER":                       true,
		"UNSIGNED-PAYLOAD":                   false,
		"STREAMING-UNSIGNED-PAYLOAD-TRAILER": false,
		"":                                   false,
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85z": false,
	} {
		if got := payloadSigned(hash); got != want {
			t.Errorf("payloadSigned(%q) = %v, want %v", hash, got, want)
		}
	}
}
