package auth

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The fuzz targets below run their seed corpora (testdata/fuzz/<Name>/)
// as ordinary tests; `go test -fuzz=FuzzX ./internal/auth` explores further.

func FuzzParseAuthorization(f *testing.F) {
	f.Add("AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
	f.Fuzz(func(t *testing.T, h string) {
		p, err := parseAuthorization(h)
		if err != nil {
			if err.Code != CodeAuthorizationHeaderMalformed || err.Status != 400 {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if !isLowerHex(p.signature, 64) || len(p.signedHeaders) == 0 || p.accessKey == "" || p.scope.service != serviceS3 {
			t.Fatalf("accepted inconsistent params %+v from %q", p, h)
		}
		// Whatever parses must also survive a full verification attempt.
		r := httptest.NewRequest("GET", "http://127.0.0.1/b/k", nil)
		r.Header.Set("Authorization", h)
		r.Header.Set("X-Amz-Date", time.Now().UTC().Format(amzDateFormat))
		r.Header.Set("X-Amz-Content-Sha256", UnsignedPayload)
		if _, verr := testVerifier().Verify(r); verr == nil {
			t.Fatalf("fuzzed header %q verified", h)
		}
	})
}

func FuzzParsePresigned(f *testing.F) {
	f.Add("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
	f.Fuzz(func(t *testing.T, rawQuery string) {
		q, _ := url.ParseQuery(rawQuery)
		p, err := parsePresigned(q)
		if err == nil && (p.expires <= 0 || p.expires > 7*24*time.Hour || len(q[qSignature]) != 1) {
			t.Fatalf("accepted inconsistent params %+v", p)
		}
		_ = canonicalQuery(rawQuery, qSignature)
		u := &url.URL{Scheme: "http", Host: "127.0.0.1", Path: "/b/k", RawQuery: rawQuery}
		r := httptest.NewRequest("GET", "http://127.0.0.1/b/k", nil)
		r.URL = u
		req, verr := exampleVerifier().Verify(r)
		if verr != nil {
			var e *Error
			if !errors.As(verr, &e) {
				t.Fatalf("non-S3 error %v", verr)
			}
			return
		}
		// Only queries carrying the AWS example's real signature may verify.
		if !req.Anonymous && !strings.Contains(rawQuery, "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404") {
			t.Fatalf("fuzzed query %q verified", rawQuery)
		}
	})
}

// FuzzParseAuthorizationV2 feeds arbitrary SigV2 Authorization headers to
// the parser and, when they parse, through a full verification: nothing
// may panic, errors must be S3 errors, and nothing fuzzed may verify
// except the AWS example's own signature.
func FuzzParseAuthorizationV2(f *testing.F) {
	f.Add("AWS AKIAIOSFODNN7EXAMPLE:bWq2s1WEIj+Ydj0vQ697zp+IXMU=")
	now := time.Date(2007, 3, 27, 19, 36, 42, 0, time.UTC)
	v := &Verifier{Users: NewUsers(exampleID), Domain: "s3.amazonaws.com", Now: func() time.Time { return now }}
	f.Fuzz(func(t *testing.T, h string) {
		ak, sig, err := parseAuthorizationV2(h)
		if err != nil {
			if err.Code != CodeInvalidArgument || err.Status != 400 {
				t.Fatalf("unexpected error %v", err)
			}
		} else {
			if ak == "" || sig == "" || ak != strings.TrimSpace(ak) || sig != strings.TrimSpace(sig) || strings.Contains(sig, ":") {
				t.Fatalf("accepted inconsistent %q / %q from %q", ak, sig, h)
			}
			// Re-assembling the parts must parse to the same parts.
			if ak2, sig2, err2 := parseAuthorizationV2("AWS " + ak + ":" + sig); err2 != nil || ak2 != ak || sig2 != sig {
				t.Fatalf("round trip of %q: %q %q %v", h, ak2, sig2, err2)
			}
		}
		r := httptest.NewRequest("GET", "http://johnsmith.s3.amazonaws.com/photos/puppy.jpg", nil)
		r.Header.Set("Authorization", h)
		r.Header.Set("Date", "Tue, 27 Mar 2007 19:36:42 +0000")
		req, verr := v.Verify(r)
		if verr != nil {
			var e *Error
			if !errors.As(verr, &e) {
				t.Fatalf("non-S3 error %v", verr)
			}
			return
		}
		if !strings.Contains(h, "bWq2s1WEIj+Ydj0vQ697zp+IXMU=") && !req.Anonymous {
			t.Fatalf("fuzzed header %q verified", h)
		}
	})
}

func FuzzChunkedDecoder(f *testing.F) {
	f.Add([]byte("5\r\nhello\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n"), false, true, int64(5))
	f.Add([]byte("10;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n0123456789abcdef\r\n0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n"), true, false, int64(16))
	s := scope{date: "20130524", region: "us-east-1", service: "s3"}
	key := signingKey(exampleID.SecretKey, s)
	f.Fuzz(func(t *testing.T, body []byte, signed, trailer bool, declared int64) {
		if declared < -1 {
			declared = -1
		}
		c := newChunkedReader(bytes.NewReader(body), chunkedOptions{
			signed: signed, trailer: trailer, key: key, amzDate: "20130524T000000Z", scope: s,
			seedSig:  "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9",
			declared: declared, expect: []string{"x-amz-checksum-crc32"},
		})
		var out int64
		buf := make([]byte, 512)
		for {
			n, err := c.Read(buf)
			out += int64(n)
			if out > int64(len(body)) {
				t.Fatalf("decoded %d bytes from a %d-byte body", out, len(body))
			}
			if err == io.EOF {
				if declared >= 0 && out != declared {
					t.Fatalf("EOF after %d bytes, declared %d", out, declared)
				}
				if trailer && c.trailers().Get("X-Amz-Checksum-Crc32") == "" {
					t.Fatalf("EOF without the announced trailer")
				}
				return
			}
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("non-S3 error %v", err)
				}
				if _, err2 := c.Read(buf); err2 != err {
					t.Fatalf("error not sticky: %v then %v", err, err2)
				}
				return
			}
		}
	})
}
