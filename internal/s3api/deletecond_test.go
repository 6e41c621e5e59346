package s3api

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDeleteConditions: DeleteObject's conditional headers, hostile
// values included: a bad size or date is refused (400), never ignored.
func TestDeleteConditions(t *testing.T) {
	when := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		h       map[string]string
		wantNil bool
		wantErr bool
		check   func(c string) bool
	}{
		{name: "none", wantNil: true},
		{name: "blank If-Match", h: map[string]string{"If-Match": "  "}, wantNil: true},
		{name: "etag", h: map[string]string{"If-Match": ` "abc" `}},
		{name: "star", h: map[string]string{"If-Match": "*"}},
		{name: "size", h: map[string]string{"X-Amz-If-Match-Size": "0"}},
		{name: "date", h: map[string]string{"X-Amz-If-Match-Last-Modified-Time": when.Format(http.TimeFormat)}},
		{name: "negative size", h: map[string]string{"X-Amz-If-Match-Size": "-1"}, wantErr: true},
		{name: "size overflow", h: map[string]string{"X-Amz-If-Match-Size": "99999999999999999999"}, wantErr: true},
		{name: "size hex", h: map[string]string{"X-Amz-If-Match-Size": "0x10"}, wantErr: true},
		{name: "size NUL", h: map[string]string{"X-Amz-If-Match-Size": "1\x00"}, wantErr: true},
		{name: "bad date", h: map[string]string{"X-Amz-If-Match-Last-Modified-Time": "yesterday"}, wantErr: true},
		{name: "iso date in header", h: map[string]string{"X-Amz-If-Match-Last-Modified-Time": "2026-11-28T03:00:00Z"}, wantErr: true},
		{name: "huge header", h: map[string]string{"X-Amz-If-Match-Size": strings.Repeat("9", 1<<16)}, wantErr: true},
	} {
		h := http.Header{}
		for k, v := range tc.h {
			h.Set(k, v)
		}
		c, err := deleteConditions(h)
		switch {
		case tc.wantErr:
			if err == nil {
				t.Errorf("%s: accepted: %+v", tc.name, c)
			} else if ae, ok := err.(*Error); !ok || ae.Code != "InvalidArgument" {
				t.Errorf("%s: error %v, want InvalidArgument", tc.name, err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantNil != (c == nil):
			t.Errorf("%s: conditions %+v, want nil %v", tc.name, c, tc.wantNil)
		}
	}
	c, _ := deleteConditions(http.Header{"X-Amz-If-Match-Last-Modified-Time": {when.Format(http.TimeFormat)}, "X-Amz-If-Match-Size": {"12"}, "If-Match": {`"e"`}})
	if c == nil || !c.ModTime.Equal(when) || !c.HasSize || c.Size != 12 || c.IfMatch != `"e"` {
		t.Fatalf("parsed %+v", c)
	}
}

// TestDeleteObjectsEntryConditions: the conditional elements of one
// DeleteObjects key.
func TestDeleteObjectsEntryConditions(t *testing.T) {
	for _, tc := range []struct {
		o       xmlDeleteObject
		wantNil bool
		wantErr bool
	}{
		{o: xmlDeleteObject{Key: "k"}, wantNil: true},
		{o: xmlDeleteObject{Key: "k", ETag: `"abc"`}},
		{o: xmlDeleteObject{Key: "k", Size: "5"}},
		{o: xmlDeleteObject{Key: "k", LastModifiedTime: "2026-11-28T03:00:00.000Z"}},
		{o: xmlDeleteObject{Key: "k", LastModifiedTime: "Sat, 28 Nov 2026 03:00:00 GMT"}},
		{o: xmlDeleteObject{Key: "k", LastModifiedTime: "soon"}, wantErr: true},
		{o: xmlDeleteObject{Key: "k", Size: "-3"}, wantErr: true},
		{o: xmlDeleteObject{Key: "k", Size: "1e3"}, wantErr: true},
	} {
		c, err := tc.o.conditions()
		switch {
		case tc.wantErr:
			if err == nil || err.Code != "InvalidArgument" {
				t.Errorf("%+v: %v %+v, want InvalidArgument", tc.o, err, c)
			}
		case err != nil:
			t.Errorf("%+v: %v", tc.o, err)
		case tc.wantNil != (c == nil):
			t.Errorf("%+v: %+v, want nil %v", tc.o, c, tc.wantNil)
		}
	}
}

// FuzzDeleteConditions: no header values make the parser panic, and
// what it accepts is a size that is not negative.
func FuzzDeleteConditions(f *testing.F) {
	f.Add("*", "Sat, 28 Nov 2026 03:00:00 GMT", "0")
	f.Add("", "", "-1")
	f.Add(`"a", W/"b"`, "Mon, 02 Jan 2006 15:04:05 GMT", "9223372036854775807")
	f.Fuzz(func(t *testing.T, im, lm, size string) {
		h := http.Header{}
		h.Set("If-Match", im)
		h.Set("X-Amz-If-Match-Last-Modified-Time", lm)
		h.Set("X-Amz-If-Match-Size", size)
		c, err := deleteConditions(h)
		if err == nil && c != nil && c.HasSize && c.Size < 0 {
			t.Fatalf("negative size accepted: %+v", c)
		}
		o := xmlDeleteObject{Key: "k", ETag: im, LastModifiedTime: lm, Size: size}
		if c, err := o.conditions(); err == nil && c != nil && c.HasSize && c.Size < 0 {
			t.Fatalf("negative Size accepted: %+v", c)
		}
	})
}

// TestStripAWSChunked: aws-chunked goes, the other codings stay as sent.
func TestStripAWSChunked(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "",
		"gzip":                      "gzip",
		"deflate, gzip":             "deflate, gzip",
		"deflate,gzip":              "deflate,gzip",
		"gzip, aws-chunked":         "gzip",
		"aws-chunked, gzip":         "gzip",
		"aws-chunked":               "",
		"aws-chunked, aws-chunked":  "",
		"AWS-CHUNKED,deflate, gzip": "deflate, gzip",
		"deflate, aws-chunked, br":  "deflate, br",
		" , ,":                      "",
		"gzip,,br":                  "gzip,br",
	} {
		if got := stripAWSChunked(in); got != want {
			t.Errorf("stripAWSChunked(%q) = %q, want %q", in, got, want)
		}
	}
}
