package auth

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestAnyRegionAndStrictRegion: a Verifier without a Region accepts
// signatures scoped to any region in each SigV4 form (header, presigned,
// aws-chunked streaming); one with a Region refuses any other region, with
// the code S3 uses for that form.
func TestAnyRegionAndStrictRegion(t *testing.T) {
	now := time.Now().UTC()
	data := bytes.Repeat([]byte("region "), 2000)
	forms := []struct {
		name  string
		build func(region string) *httptestReq
		code  string
	}{
		{"header", func(region string) *httptestReq {
			r := httptest.NewRequest("GET", "http://127.0.0.1:9000/b/k", nil)
			SignRequest(r, testID, region, now, "")
			return &httptestReq{r: r}
		}, CodeAuthorizationHeaderMalformed},
		{"presigned", func(region string) *httptestReq {
			u := PresignURL(httptest.NewRequest("PUT", "http://127.0.0.1:9000/b/k", nil), testID, region, now, time.Hour)
			return &httptestReq{r: httptest.NewRequest("PUT", u, nil)}
		}, CodeAuthorizationQueryParametersError},
		{"streaming", func(region string) *httptestReq {
			r := httptest.NewRequest("PUT", "http://127.0.0.1:9000/b/k", nil)
			body, err := SignStreamingRequest(r, testID, region, now, StreamingPayload, data, []int{8192}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return &httptestReq{r: withBody(r, body), want: data}
		}, CodeAuthorizationHeaderMalformed},
	}
	for _, f := range forms {
		for _, region := range []string{"us-east-1", "eu-west-1", "eu-central-1", "ap-southeast-2"} {
			tr := f.build(region)
			_, got, err := verifyAndRead(&Verifier{Users: NewUsers(testID)}, tr.r)
			if err != nil || (tr.want != nil && !bytes.Equal(got, tr.want)) {
				t.Fatalf("%s signed for %s, any-region verifier: %v", f.name, region, err)
			}
			strict := &Verifier{Region: "us-east-1", Users: NewUsers(testID)}
			_, _, err = verifyAndRead(strict, f.build(region).r)
			if region == "us-east-1" {
				if err != nil {
					t.Fatalf("%s signed for its own region: %v", f.name, err)
				}
				continue
			}
			wantCodes(t, err, f.code)
			if !strings.Contains(err.Error(), region) || !strings.Contains(err.Error(), "us-east-1") {
				t.Fatalf("%s: message %q should name both regions", f.name, err)
			}
		}
	}
}

type httptestReq struct {
	r    *http.Request
	want []byte // the decoded body expected, when there is one
}

// replaceQuery returns rawURL with query parameter k set to v.
func replaceQuery(t *testing.T, rawURL, k, v string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(k, v)
	u.RawQuery = q.Encode()
	return u.String()
}

// TestPresignedExpiresBounds: X-Amz-Expires must be a number from 0 to
// 604800 (0: a URL already expired), refused with S3's AuthorizationQueryParametersError and S3's
// wording; an expired presigned URL is AccessDenied "Request has expired"
// whatever its method.
func TestPresignedExpiresBounds(t *testing.T) {
	signedAt := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	v := &Verifier{Users: NewUsers(testID), Now: func() time.Time { return signedAt }}
	u := PresignURL(httptest.NewRequest("PUT", "http://127.0.0.1:9000/bucket/k", nil), testID, "eu-west-1", signedAt, time.Hour)
	cases := map[string]string{
		"-1":                    "X-Amz-Expires must be non-negative",
		"-604800":               "X-Amz-Expires must be non-negative",
		"604801":                "X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds",
		"99999999999":           "must be less than a week",
		"abc":                   "X-Amz-Expires should be a number",
		"":                      "X-Amz-Expires should be a number",
		"1.5":                   "X-Amz-Expires should be a number",
		"--5":                   "X-Amz-Expires should be a number",
		"+5":                    "X-Amz-Expires should be a number",
		strings.Repeat("9", 40): "X-Amz-Expires should be a number",
	}
	for exp, msg := range cases {
		bad := strings.Replace(u, "X-Amz-Expires=3600", "X-Amz-Expires="+exp, 1)
		_, err := v.Verify(httptest.NewRequest("PUT", bad, nil))
		wantCodes(t, err, CodeAuthorizationQueryParametersError)
		if e := asAuthErr(err); e.Status != 400 || !strings.Contains(e.Message, msg) {
			t.Errorf("X-Amz-Expires=%q: %d %q, want 400 %q", exp, e.Status, e.Message, msg)
		}
	}
	// Zero: valid for no time, so expired even at the instant it was
	// signed (a number S3's bounds allow, not a malformed one).
	zero := strings.Replace(u, "X-Amz-Expires=3600", "X-Amz-Expires=0", 1)
	_, err0 := v.Verify(httptest.NewRequest("GET", zero, nil))
	wantCodes(t, err0, CodeAccessDenied)
	if e := asAuthErr(err0); e.Status != 403 || e.Message != "Request has expired" {
		t.Fatalf("X-Amz-Expires=0: %d %q", e.Status, e.Message)
	}
	// Expired: AccessDenied for a PUT as for a GET.
	late := &Verifier{Users: NewUsers(testID), Now: func() time.Time { return signedAt.Add(time.Hour + time.Second) }}
	_, err := late.Verify(httptest.NewRequest("PUT", u, strings.NewReader("body")))
	wantCodes(t, err, CodeAccessDenied)
	if e := asAuthErr(err); e.Status != 403 || e.Message != "Request has expired" {
		t.Fatalf("expired PUT: %d %q", e.Status, e.Message)
	}
}

// TestPresignedV2ExpiresBounds: SigV2's Expires is an absolute epoch time;
// a past one is AccessDenied "Request has expired", a non-numeric one is
// refused. S3 documents no upper bound for SigV2 query authentication.
func TestPresignedV2ExpiresBounds(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	v := &Verifier{Users: NewUsers(testID), Now: func() time.Time { return now }}
	r := httptest.NewRequest("PUT", "http://127.0.0.1/bucket/key", nil)
	past := specPresign(r, testID, "", now.Add(-time.Second))
	_, err := v.Verify(httptest.NewRequest("PUT", past, strings.NewReader("x")))
	wantCodes(t, err, CodeAccessDenied)
	if e := asAuthErr(err); e.Status != 403 || e.Message != "Request has expired" {
		t.Fatalf("expired v2 PUT: %d %q", e.Status, e.Message)
	}
	ok := specPresign(r, testID, "", now.Add(time.Minute))
	for _, exp := range []string{"soon", "-1", "1e9", ""} {
		bad := replaceQuery(t, ok, "Expires", exp)
		_, err := v.Verify(httptest.NewRequest("PUT", bad, nil))
		wantCodes(t, err, CodeAccessDenied)
		if e := asAuthErr(err); e.Status != 403 {
			t.Fatalf("Expires=%q: status %d", exp, e.Status)
		}
	}
	if _, err := v.Verify(httptest.NewRequest("PUT", ok, nil)); err != nil {
		t.Fatalf("valid v2 presigned PUT: %v", err)
	}
}
