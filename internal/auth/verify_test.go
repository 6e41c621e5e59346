package auth

import (
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func signedGet(t *testing.T, at time.Time) *http.Request {
	t.Helper()
	r := httptest.NewRequest("GET", "http://127.0.0.1:9000/bucket/key?list-type=2", nil)
	SignRequest(r, testID, "us-east-1", at, emptySHA256)
	return r
}

func TestVerifyErrors(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	v := &Verifier{Region: "us-east-1", Users: NewUsers(testID), Now: func() time.Time { return now }}
	cases := []struct {
		name   string
		build  func() *http.Request
		code   string
		status int
	}{
		{"skew future", func() *http.Request { return signedGet(t, now.Add(16*time.Minute)) }, CodeRequestTimeTooSkewed, 403},
		{"skew past", func() *http.Request { return signedGet(t, now.Add(-16*time.Minute)) }, CodeRequestTimeTooSkewed, 403},
		{"unknown key", func() *http.Request {
			r := httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k", nil)
			SignRequest(r, Identity{AccessKey: "NOPE", SecretKey: "whatever1"}, "us-east-1", now, "")
			return r
		}, CodeInvalidAccessKeyID, 403},
		{"wrong region", func() *http.Request {
			r := httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k", nil)
			SignRequest(r, testID, "eu-west-1", now, "")
			return r
		}, CodeAuthorizationHeaderMalformed, 400},
		{"wrong secret", func() *http.Request {
			r := httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k", nil)
			SignRequest(r, Identity{AccessKey: testID.AccessKey, SecretKey: "wrong-secret"}, "us-east-1", now, "")
			return r
		}, CodeSignatureDoesNotMatch, 403},
		{"tampered path", func() *http.Request {
			r := signedGet(t, now)
			r.URL.Path = "/bucket/other"
			return r
		}, CodeSignatureDoesNotMatch, 403},
		{"tampered query", func() *http.Request {
			r := signedGet(t, now)
			r.URL.RawQuery = "list-type=1"
			return r
		}, CodeSignatureDoesNotMatch, 403},
		{"unsigned x-amz header added", func() *http.Request {
			r := signedGet(t, now)
			r.Header.Set("X-Amz-Copy-Source", "/other/secret")
			return r
		}, CodeAccessDenied, 403},
		{"host not signed", func() *http.Request {
			r := signedGet(t, now)
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "SignedHeaders=host;", "SignedHeaders=", 1))
			return r
		}, CodeAccessDenied, 403},
		{"sigv2 without a date", func() *http.Request {
			r := httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k", nil)
			r.Header.Set("Authorization", "AWS AKTESTUSER:frJIUN8DYpKDtOLCwo//yllqDzg=")
			return r
		}, CodeAccessDenied, 403},
		{"sigv2 presigned expired in 1970", func() *http.Request {
			return httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k?AWSAccessKeyId=AKTESTUSER&Expires=1&Signature=abc", nil)
		}, CodeAccessDenied, 403},
		{"unknown scheme", func() *http.Request {
			r := httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k", nil)
			r.Header.Set("Authorization", "Bearer xyz")
			return r
		}, CodeInvalidArgument, 400},
		{"header and query", func() *http.Request {
			r := signedGet(t, now)
			r.URL.RawQuery += "&X-Amz-Signature=00"
			return r
		}, CodeInvalidArgument, 400},
		{"malformed header", func() *http.Request {
			r := httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k", nil)
			r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AK/2026/us-east-1/s3/aws4_request")
			return r
		}, CodeAuthorizationHeaderMalformed, 400},
		{"missing content sha", func() *http.Request {
			r := signedGet(t, now)
			r.Header.Del("X-Amz-Content-Sha256")
			return r
		}, CodeInvalidRequest, 400},
		{"bad content sha", func() *http.Request {
			r := httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k", nil)
			SignRequest(r, testID, "us-east-1", now, "not-a-hash")
			return r
		}, CodeInvalidArgument, 400},
		{"missing date", func() *http.Request {
			r := signedGet(t, now)
			r.Header.Del("X-Amz-Date")
			return r
		}, CodeAccessDenied, 403},
		{"session token", func() *http.Request {
			r := httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k", nil)
			r.Header.Set("X-Amz-Security-Token", "tok")
			SignRequest(r, testID, "us-east-1", now, "")
			return r
		}, CodeInvalidToken, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(tc.build())
			wantCodes(t, err, tc.code)
			if e := asAuthErr(err); e.Status != tc.status {
				t.Fatalf("status %d, want %d", e.Status, tc.status)
			}
		})
	}
	// Within the skew window is fine.
	if _, err := v.Verify(signedGet(t, now.Add(14*time.Minute))); err != nil {
		t.Fatalf("14 minutes of skew rejected: %v", err)
	}
}

func TestPresignedExpiry(t *testing.T) {
	signedAt := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	u := PresignURL(httptest.NewRequest("GET", "http://127.0.0.1:9000/bucket/k%20ey", nil), testID, "us-east-1", signedAt, time.Hour)
	at := func(now time.Time) error {
		v := &Verifier{Region: "us-east-1", Users: NewUsers(testID), Now: func() time.Time { return now }}
		_, err := v.Verify(httptest.NewRequest("GET", u, nil))
		return err
	}
	if err := at(signedAt.Add(59 * time.Minute)); err != nil {
		t.Fatalf("within expiry: %v", err)
	}
	err := at(signedAt.Add(61 * time.Minute))
	wantCodes(t, err, CodeAccessDenied)
	if !strings.Contains(err.Error(), "Request has expired") {
		t.Fatalf("message %q", err)
	}
	wantCodes(t, at(signedAt.Add(-time.Hour)), CodeAccessDenied) // not valid yet

	for _, exp := range []string{"604801", "-5", "abc", "99999999999"} {
		bad := strings.Replace(u, "X-Amz-Expires=3600", "X-Amz-Expires="+exp, 1)
		v := &Verifier{Region: "us-east-1", Users: NewUsers(testID), Now: func() time.Time { return signedAt }}
		_, err := v.Verify(httptest.NewRequest("GET", bad, nil))
		wantCodes(t, err, CodeAuthorizationQueryParametersError)
	}
	// A week exactly is allowed (and then the signature no longer matches).
	v := &Verifier{Region: "us-east-1", Users: NewUsers(testID), Now: func() time.Time { return signedAt }}
	_, err = v.Verify(httptest.NewRequest("GET", strings.Replace(u, "X-Amz-Expires=3600", "X-Amz-Expires=604800", 1), nil))
	wantCodes(t, err, CodeSignatureDoesNotMatch)
	// Wrong region in a presigned credential.
	u2 := PresignURL(httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k", nil), testID, "eu-west-1", signedAt, time.Hour)
	_, err = v.Verify(httptest.NewRequest("GET", u2, nil))
	wantCodes(t, err, CodeAuthorizationQueryParametersError)
}

func TestAnonymousAndRegionless(t *testing.T) {
	r := httptest.NewRequest("PUT", "http://127.0.0.1/b/k", strings.NewReader("data"))
	req, err := testVerifier().Verify(r)
	if err != nil || !req.Anonymous || req.Body != r.Body || req.ContentLength != 4 {
		t.Fatalf("anonymous: %+v %v", req, err)
	}
	// An empty Verifier.Region accepts any scope region.
	r = httptest.NewRequest("GET", "http://127.0.0.1/b/k", nil)
	SignRequest(r, testID, "ap-south-2", time.Now(), "")
	if _, err := (&Verifier{Users: NewUsers(testID)}).Verify(r); err != nil {
		t.Fatalf("regionless verifier: %v", err)
	}
}

func TestPayloadHashMismatch(t *testing.T) {
	r := httptest.NewRequest("PUT", "http://127.0.0.1/b/k", strings.NewReader("the real body"))
	SignRequest(r, testID, "us-east-1", time.Now(), sha256Hex("another body"))
	_, _, err := verifyAndRead(testVerifier(), r)
	wantCodes(t, err, CodeXAmzContentSHA256Mismatch)

	// Short body with a Content-Length: IncompleteBody, not a hash error.
	r = httptest.NewRequest("PUT", "http://127.0.0.1/b/k", strings.NewReader("short"))
	r.ContentLength = 100
	SignRequest(r, testID, "us-east-1", time.Now(), sha256Hex("short"))
	_, _, err = verifyAndRead(testVerifier(), r)
	wantCodes(t, err, CodeIncompleteBody)
}

func TestUsersLoadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(content string) string {
		p := filepath.Join(dir, "users.txt")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	u := NewUsers(Identity{AccessKey: "rootkey", SecretKey: "rootsecret"})
	p := write("# users\n\nalice  alicesecret1  Alice Liddell\nbob bobsecret\n")
	if err := u.LoadFile(p); err != nil {
		t.Fatal(err)
	}
	if id, ok := u.Lookup("alice"); !ok || id.DisplayName != "Alice Liddell" || id.Root || id.SecretKey != "alicesecret1" {
		t.Fatalf("alice = %+v %v", id, ok)
	}
	if id, ok := u.Lookup("rootkey"); !ok || !id.Root {
		t.Fatalf("root = %+v", id)
	}
	if _, ok := u.Lookup("carol"); ok {
		t.Fatal("carol found")
	}
	bad := map[string]string{
		"onlykey\n":                           "users.txt:1",
		"okay okokokok\nab shortak1\n":        "users.txt:2",
		"carol short\n":                       "shorter than 8",
		"dave davesecret\ndave davesecret2\n": "duplicate access key",
		"# c\nrootkey whatever123\n":          "the root user",
		"alice alicesecret9\n":                "an existing user",
		"ev/il evilsecret\n":                  "not allowed",
	}
	for content, want := range bad {
		before := u.Len()
		err := u.LoadFile(write(content))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("content %q: error %v, want it to mention %q", content, err, want)
		}
		if u.Len() != before {
			t.Fatalf("content %q: a failed load added users", content)
		}
	}
	if err := u.LoadFile(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("missing file loaded")
	}
}

// signWithDate signs r as botocore does when its caller sets a Date
// header: no X-Amz-Date, the Date header (in the form given) signed, and
// at's ISO 8601 basic form in the string to sign and the scope.
func signWithDate(r *http.Request, at time.Time, date string) {
	at = at.UTC()
	r.Header.Set("Date", date)
	r.Header.Set("X-Amz-Content-Sha256", UnsignedPayload)
	s := scope{date: at.Format(scopeDateFormat), region: "us-east-1", service: serviceS3}
	signed := headersToSign(r)
	cr := canonicalRequest(r, canonicalURI(r.URL.Path), canonicalQuery(r.URL.RawQuery, ""), signed, UnsignedPayload)
	sig := hex.EncodeToString(hmacSHA256(signingKey(testID.SecretKey, s), stringToSign(at.Format(amzDateFormat), s, cr)))
	r.Header.Set("Authorization", algorithm+" Credential="+testID.AccessKey+"/"+s.String()+
		", SignedHeaders="+strings.Join(signed, ";")+", Signature="+sig)
}

// TestVerifyV4RequestTime: SigV4 takes the request time from X-Amz-Date
// when the request carries it (even empty: then it has none), else from
// Date in any HTTP form, RFC 1123 with a numeric zone included (what
// botocore sends when its caller sets Date); a date centuries away is
// skewed, not accepted.
func TestVerifyV4RequestTime(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	v := &Verifier{Region: "us-east-1", Users: NewUsers(testID), Now: func() time.Time { return now }}
	get := func() *http.Request { return httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k", nil) }
	for _, date := range []string{
		now.Format(http.TimeFormat),        // Thu, 01 Jan 2026 12:00:00 GMT
		now.Format(time.RFC1123Z),          // +0000
		"Thu, 01 Jan 2026 12:00:00 -0000",  // botocore's formatdate(usegmt=False)
		"Thursday, 01-Jan-26 12:00:00 GMT", // RFC 850
		"Thu Jan  1 12:00:00 2026",         // ANSI C
		"Thu, 01 Jan 2026 13:00:00 +0100",  // another zone, same instant
	} {
		r := get()
		signWithDate(r, now, date)
		if _, err := v.Verify(r); err != nil {
			t.Errorf("Date %q: %v", date, err)
		}
	}
	cases := []struct {
		name  string
		build func() *http.Request
		code  string
	}{
		{"Date unreadable", func() *http.Request { r := get(); signWithDate(r, now, "Bad Date"); return r }, CodeAccessDenied},
		{"Date empty", func() *http.Request { r := get(); signWithDate(r, now, ""); return r }, CodeAccessDenied},
		{"Date before the epoch", func() *http.Request {
			r := get()
			signWithDate(r, now, "Fri, 07 Jul 1950 21:53:04 GMT")
			return r
		}, CodeAccessDenied},
		{"Date in 9999", func() *http.Request {
			at := time.Date(9999, 7, 7, 21, 53, 4, 0, time.UTC)
			r := get()
			signWithDate(r, at, at.Format(http.TimeFormat))
			return r
		}, CodeRequestTimeTooSkewed},
		{"X-Amz-Date in 9999", func() *http.Request { return signedGet(t, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)) }, CodeRequestTimeTooSkewed},
		{"X-Amz-Date at year 1", func() *http.Request { return signedGet(t, time.Time{}) }, CodeRequestTimeTooSkewed},
		{"X-Amz-Date empty beside a good Date", func() *http.Request {
			r := get()
			r.Header["X-Amz-Date"] = []string{""}
			signWithDate(r, now, now.Format(http.TimeFormat))
			return r
		}, CodeAccessDenied},
		{"X-Amz-Date unreadable beside a good Date", func() *http.Request {
			r := get()
			r.Header.Set("X-Amz-Date", "Thu, 01 Jan 2026 12:00:00 GMT")
			signWithDate(r, now, now.Format(http.TimeFormat))
			return r
		}, CodeAccessDenied},
		{"Date of another day than the scope", func() *http.Request {
			r := get()
			signWithDate(r, now, now.Add(-13*time.Hour).Format(http.TimeFormat))
			return r
		}, CodeRequestTimeTooSkewed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(tc.build())
			wantCodes(t, err, tc.code)
		})
	}
}
