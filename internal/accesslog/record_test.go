package accesslog

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fieldCount is the number of fields Line writes.
const fieldCount = 26

// parseLine splits a log line as parsers written for S3's logs do: a
// field is [..] (the time), "..." (no quote inside) or a run of
// non-space characters. It fails the test on anything else.
func parseLine(t testing.TB, line string) []string {
	t.Helper()
	if !strings.HasSuffix(line, "\n") || strings.Count(line, "\n") != 1 {
		t.Fatalf("line %q: want exactly one newline, at the end", line)
	}
	s := strings.TrimSuffix(line, "\n")
	var out []string
	for len(s) > 0 {
		var f string
		switch s[0] {
		case '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				t.Fatalf("line %q: unclosed [", line)
			}
			f, s = s[:end+1], s[end+1:]
		case '"':
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				t.Fatalf("line %q: unclosed quote", line)
			}
			f, s = s[:end+2], s[end+2:]
		default:
			end := strings.IndexByte(s, ' ')
			if end < 0 {
				end = len(s)
			}
			f, s = s[:end], s[end:]
		}
		if f == "" {
			t.Fatalf("line %q: empty field", line)
		}
		out = append(out, f)
		if s != "" {
			if s[0] != ' ' {
				t.Fatalf("line %q: field %q not followed by a space", line, f)
			}
			s = s[1:]
			if s == "" {
				t.Fatalf("line %q: trailing space", line)
			}
		}
	}
	return out
}

func sampleRecord() Record {
	return Record{
		BucketOwner: "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be", Bucket: "src",
		Time:     time.Date(2019, 2, 6, 0, 0, 38, 500e6, time.FixedZone("x", 3600)),
		RemoteIP: "192.0.2.3", Requester: "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be",
		RequestID: "3E57427F3EXAMPLE", Operation: "REST.PUT.OBJECT", Key: "s3-dg.pdf",
		RequestURI: "PUT /src/s3-dg.pdf HTTP/1.1", HTTPStatus: 200, BytesSent: 0, ObjectSize: 4406583,
		TotalTime: 41754 * time.Millisecond, TurnAround: 28 * time.Millisecond, UserAgent: "S3Console/0.4",
		HostID:     "s9lzHYrFp76ZVxRcpX9+5cjAnEH2ROuNkd2BHfIa6UkFVdtjf5mKR3/eTPFvsiP/XV/VLi31234=",
		SigVersion: "SigV4", CipherSuite: "ECDHE-RSA-AES128-SHA", AuthType: "AuthHeader",
		HostHeader: "src.s3.us-west-1.amazonaws.com", TLSVersion: "TLSv1.2",
	}
}

// TestLineDocumentedExample: a record renders as the PUT of S3's own
// example log, field for field.
func TestLineDocumentedExample(t *testing.T) {
	r := sampleRecord()
	want := "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be src [05/Feb/2019:23:00:38 +0000] 192.0.2.3 " +
		"79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be 3E57427F3EXAMPLE REST.PUT.OBJECT s3-dg.pdf " +
		"\"PUT /src/s3-dg.pdf HTTP/1.1\" 200 - - 4406583 41754 28 \"-\" \"S3Console/0.4\" - " +
		"s9lzHYrFp76ZVxRcpX9+5cjAnEH2ROuNkd2BHfIa6UkFVdtjf5mKR3/eTPFvsiP/XV/VLi31234= SigV4 ECDHE-RSA-AES128-SHA " +
		"AuthHeader src.s3.us-west-1.amazonaws.com TLSv1.2 - -\n"
	if got := string(r.Line(nil)); got != want {
		t.Fatalf("line\n got %q\nwant %q", got, want)
	}
	if n := len(parseLine(t, want)); n != fieldCount {
		t.Fatalf("%d fields, want %d", n, fieldCount)
	}
}

// TestLineHostileValues: whatever a client puts in a key, a header, the
// request line or a version id, the line keeps its fields and its one
// newline, and the values can be read back.
func TestLineHostileValues(t *testing.T) {
	cases := []struct {
		name  string
		set   func(*Record)
		field int // 0-based field index to check
		want  string
	}{
		{"key with spaces and quotes", func(r *Record) { r.Key = `a b"c` }, 7, `a%20b%22c`},
		{"key with newline", func(r *Record) { r.Key = "x\ny\r\n" }, 7, "x%0Ay%0D%0A"},
		{"key keeps slashes", func(r *Record) { r.Key = "photos/2019/08/puppy.jpg" }, 7, "photos/2019/08/puppy.jpg"},
		{"key unicode and percent", func(r *Record) { r.Key = "é%+" }, 7, "%C3%A9%25%2B"},
		{"empty key", func(r *Record) { r.Key = "" }, 7, "-"},
		{"user agent with quotes", func(r *Record) { r.UserAgent = `Mozilla "evil" agent` }, 16, `"Mozilla \x22evil\x22 agent"`},
		{"user agent with newline", func(r *Record) { r.UserAgent = "a\nb\rc\x00" }, 16, `"a\x0Ab\x0Dc\x00"`},
		{"user agent backslash", func(r *Record) { r.UserAgent = `a\x22` }, 16, `"a\x5Cx22"`},
		{"user agent line separator", func(r *Record) { r.UserAgent = "a\u2028b\u0085" }, 16, `"a\xE2\x80\xA8b\xC2\x85"`},
		{"user agent not UTF-8", func(r *Record) { r.UserAgent = "a\xffb" }, 16, `"a\xFFb"`},
		{"user agent UTF-8 kept", func(r *Record) { r.UserAgent = "curl/8 — ü" }, 16, `"curl/8 — ü"`},
		{"empty user agent", func(r *Record) { r.UserAgent = "" }, 16, `"-"`},
		{"referer quote only", func(r *Record) { r.Referer = `"` }, 15, `"\x22"`},
		{"request line with quotes", func(r *Record) { r.RequestURI = `GET /b/"x" HTTP/1.1` }, 8, `"GET /b/\x22x\x22 HTTP/1.1"`},
		{"version id with space", func(r *Record) { r.VersionID = "v 1\n" }, 17, `v\x201\x0A`},
		{"version id like a time", func(r *Record) { r.VersionID = "[x]" }, 17, `\x5Bx\x5D`},
		{"host header with quote", func(r *Record) { r.HostHeader = `h"o st` }, 22, `h\x22o\x20st`},
		{"requester unicode", func(r *Record) { r.Requester = "arn:aws:iam:::user/ü" }, 4, `arn:aws:iam:::user/\xC3\xBC`},
		{"error code", func(r *Record) { r.HTTPStatus, r.ErrorCode = 404, "NoSuchKey" }, 10, "NoSuchKey"},
		{"unknown size", func(r *Record) { r.ObjectSize = -1 }, 12, "-"},
		{"zero size", func(r *Record) { r.ObjectSize = 0 }, 12, "0"},
		{"bytes sent", func(r *Record) { r.BytesSent = 113 }, 11, "113"},
		{"unknown times", func(r *Record) { r.TotalTime, r.TurnAround = -1, -1 }, 13, "-"},
		{"acl required", func(r *Record) { r.ACLRequired = true }, 25, "Yes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := sampleRecord()
			c.set(&r)
			fields := parseLine(t, string(r.Line(nil)))
			if len(fields) != fieldCount {
				t.Fatalf("%d fields, want %d: %q", len(fields), fieldCount, fields)
			}
			if fields[c.field] != c.want {
				t.Fatalf("field %d = %q, want %q", c.field, fields[c.field], c.want)
			}
		})
	}
}

// FuzzLine: any values make a line of the documented fields and one
// newline, all printable.
func FuzzLine(f *testing.F) {
	f.Add("k", "ua", "GET / HTTP/1.1", "ref", "v", "h", "E")
	f.Add("a b\"c\n", "\"\\\x00\xff", "GET /\" HTTP/1.1", "\u2028", " ", "\t", "\r")
	f.Fuzz(func(t *testing.T, key, ua, uri, referer, version, host, code string) {
		r := sampleRecord()
		r.Key, r.UserAgent, r.RequestURI, r.Referer, r.VersionID, r.HostHeader, r.ErrorCode = key, ua, uri, referer, version, host, code
		line := string(r.Line(nil))
		if !utf8.ValidString(line) {
			t.Fatalf("line is not UTF-8: %q", line)
		}
		for _, c := range strings.TrimSuffix(line, "\n") {
			if c < ' ' || c == 0x7f || isControl(c) {
				t.Fatalf("control character %U in %q", c, line)
			}
		}
		if n := len(parseLine(t, line)); n != fieldCount {
			t.Fatalf("%d fields in %q", n, line)
		}
	})
}
