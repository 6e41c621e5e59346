package notify

import (
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The S3 event message (what AWS and MinIO send) is written by hand
// here, field by field in the order and with the escaping
// encoding/json gives the equivalent structs (eventjson_test.go keeps
// those structs and checks, also by fuzzing, that the bytes are the
// same): a record is made for every event on the PUT's path, and
// reflection, two maps and re-compacting the record inside the
// envelope cost several times what appending does.

// appendEnvelope appends MinIO's envelope {"EventName","Key","Records"}
// of e for m, holding one S3 event record, to b; the record is
// b[start:end].
func (e Event) appendEnvelope(b []byte, m Matched, t time.Time, key string) (out []byte, start, end int) {
	b = append(b, `{"EventName":`...)
	b = appendJSONString(b, m.EventName)
	b = append(b, `,"Key":`...)
	b = appendJSONString(b, key)
	b = append(b, `,"Records":[`...)
	start = len(b)
	b = e.appendRecord(b, m, t)
	end = len(b)
	return append(b, "]}"...), start, end
}

// appendRecord appends the S3 event record of e for m (time t, UTC).
func (e Event) appendRecord(b []byte, m Matched, t time.Time) []byte {
	b = append(b, `{"eventVersion":"2.0","eventSource":"aws:s3","awsRegion":`...)
	b = appendJSONString(b, e.Region)
	b = append(b, `,"eventTime":"`...)
	b = t.AppendFormat(b, "2006-01-02T15:04:05.000Z")
	b = append(b, `","eventName":`...)
	b = appendJSONString(b, strings.TrimPrefix(m.EventName, "s3:"))
	b = append(b, `,"userIdentity":{"principalId":`...)
	b = appendJSONString(b, e.Principal)
	// Map keys in sorted order, as encoding/json writes a map.
	b = append(b, `},"requestParameters":{"principalId":`...)
	b = appendJSONString(b, e.Principal)
	b = append(b, `,"region":`...)
	b = appendJSONString(b, e.Region)
	b = append(b, `,"sourceIPAddress":`...)
	b = appendJSONString(b, e.SourceIP)
	b = append(b, `},"responseElements":{"x-amz-id-2":`...)
	b = appendJSONString(b, e.HostID)
	b = append(b, `,"x-amz-request-id":`...)
	b = appendJSONString(b, e.RequestID)
	b = append(b, `},"s3":{"s3SchemaVersion":"1.0","configurationId":`...)
	b = appendJSONString(b, m.ID)
	b = append(b, `,"bucket":{"name":`...)
	b = appendJSONString(b, e.Bucket)
	b = append(b, `,"ownerIdentity":{"principalId":`...)
	b = appendJSONString(b, e.Owner)
	b = append(b, `},"arn":`...)
	b = appendJSONString(b, "arn:aws:s3:::"+e.Bucket)
	b = append(b, `},"object":{"key":`...)
	b = appendJSONString(b, url.QueryEscape(e.Key))
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, e.Size, 10)
	if e.ETag != "" {
		b = append(b, `,"eTag":`...)
		b = appendJSONString(b, e.ETag)
	}
	if e.VersionID != "" {
		b = append(b, `,"versionId":`...)
		b = appendJSONString(b, e.VersionID)
	}
	b = append(b, `,"sequencer":"`...)
	b = appendSequencer(b, t.UnixNano())
	b = append(b, `"}},"source":{"host":`...)
	b = appendJSONString(b, e.SourceIP)
	b = append(b, `,"userAgent":`...)
	b = appendJSONString(b, e.UserAgent)
	return append(b, "}}"...)
}

// appendSequencer appends n in upper-case hex, zero-padded to 16
// characters (a minus sign included), as fmt's %016X writes an int64.
func appendSequencer(b []byte, n int64) []byte {
	var d [24]byte
	h := strconv.AppendInt(d[:0], n, 16)
	if n < 0 {
		b = append(b, '-')
		h = h[1:]
		for i := len(h) + 1; i < 16; i++ {
			b = append(b, '0')
		}
	} else {
		for i := len(h); i < 16; i++ {
			b = append(b, '0')
		}
	}
	for _, c := range h {
		if c >= 'a' {
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// jsonSafe are the ASCII bytes a JSON string holds as they are (what
// encoding/json leaves unescaped with HTML escaping on).
var jsonSafe = func() (s [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		s[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return s
}()

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it: control characters, '"', '\\', and '<', '>', '&' (\u00xx,
// or \n, \r, \t, \b, \f); invalid UTF-8 as \ufffd; U+2028 and U+2029
// as \u2028, \u2029.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	from := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[from:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			from = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[from:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[from:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		from = i
	}
	b = append(b, s[from:]...)
	return append(b, '"')
}
