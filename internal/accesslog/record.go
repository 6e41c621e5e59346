package accesslog

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// Record is one request in S3's server access log format. Its fields are
// the documented ones, in order; Line renders them. Empty strings, and
// negative numbers where a number is unknown, are written "-".
type Record struct {
	BucketOwner string    `json:"owner"` // canonical id of the source bucket's owner
	Bucket      string    `json:"bucket"`
	Time        time.Time `json:"time"` // when the request was received
	RemoteIP    string    `json:"ip,omitempty"`
	Requester   string    `json:"requester,omitempty"` // canonical id or IAM ARN; "" for anonymous
	RequestID   string    `json:"id"`
	Operation   string    `json:"op"`            // REST.PUT.OBJECT and the like
	Key         string    `json:"key,omitempty"` // as stored; written URL-encoded
	RequestURI  string    `json:"uri"`           // "METHOD URI PROTO" of the request line
	HTTPStatus  int       `json:"status"`
	ErrorCode   string    `json:"error,omitempty"`
	BytesSent   int64     `json:"sent"` // response body bytes; 0 is written "-"
	ObjectSize  int64     `json:"size"` // -1 when unknown or not applicable
	// TotalTime is from receipt to the last byte sent, TurnAround from
	// the last byte of the request to the first of the response; -1
	// when unknown. Both are written in milliseconds.
	TotalTime   time.Duration `json:"total"`
	TurnAround  time.Duration `json:"turn"`
	Referer     string        `json:"referer,omitempty"`
	UserAgent   string        `json:"ua,omitempty"`
	VersionID   string        `json:"version,omitempty"`
	HostID      string        `json:"hostid,omitempty"`
	SigVersion  string        `json:"sig,omitempty"`    // SigV2, SigV4
	CipherSuite string        `json:"cipher,omitempty"` // OpenSSL name, as S3 writes it
	AuthType    string        `json:"auth,omitempty"`   // AuthHeader, QueryString
	HostHeader  string        `json:"host,omitempty"`
	TLSVersion  string        `json:"tls,omitempty"` // TLSv1.2, TLSv1.3
	AccessPoint string        `json:"ap,omitempty"`
	ACLRequired bool          `json:"acl,omitempty"` // an ACL grant decided access: "Yes"
}

// logTime is the Time field's layout: strftime's [%d/%b/%Y:%H:%M:%S %z].
const logTime = "[02/Jan/2006:15:04:05 -0700]"

// Line appends r's log line, with its newline, to b.
//
// Unquoted fields never hold a space, a quote or a control character:
// the key is URL-encoded (as S3 writes it) and any other unquoted value
// escapes such bytes as \xHH. Quoted fields (the request line, the
// referer and the user agent) escape '"', '\' and control characters
// as \xHH, and bytes that are not UTF-8 as well, so that a line always
// splits into the same fields and a hostile header cannot add a line or
// a field. Parsers written for S3's logs (a field is either unquoted
// text without spaces or "..." without quotes inside) read them as they
// are.
func (r *Record) Line(b []byte) []byte {
	b = field(b, r.BucketOwner)
	b = append(b, ' ')
	b = field(b, r.Bucket)
	b = append(b, ' ')
	b = r.Time.UTC().AppendFormat(b, logTime)
	b = append(b, ' ')
	b = field(b, r.RemoteIP)
	b = append(b, ' ')
	b = field(b, r.Requester)
	b = append(b, ' ')
	b = field(b, r.RequestID)
	b = append(b, ' ')
	b = field(b, r.Operation)
	b = append(b, ' ')
	if r.Key == "" {
		b = append(b, '-')
	} else {
		b = urlEncode(b, r.Key)
	}
	b = append(b, ' ')
	b = quoted(b, r.RequestURI)
	b = append(b, ' ')
	b = number(b, int64(r.HTTPStatus), false)
	b = append(b, ' ')
	b = field(b, r.ErrorCode)
	b = append(b, ' ')
	b = number(b, r.BytesSent, true)
	b = append(b, ' ')
	b = number(b, r.ObjectSize, false)
	b = append(b, ' ')
	b = millis(b, r.TotalTime)
	b = append(b, ' ')
	b = millis(b, r.TurnAround)
	b = append(b, ' ')
	b = quoted(b, r.Referer)
	b = append(b, ' ')
	b = quoted(b, r.UserAgent)
	b = append(b, ' ')
	b = field(b, r.VersionID)
	b = append(b, ' ')
	b = field(b, r.HostID)
	b = append(b, ' ')
	b = field(b, r.SigVersion)
	b = append(b, ' ')
	b = field(b, r.CipherSuite)
	b = append(b, ' ')
	b = field(b, r.AuthType)
	b = append(b, ' ')
	b = field(b, r.HostHeader)
	b = append(b, ' ')
	b = field(b, r.TLSVersion)
	b = append(b, ' ')
	b = field(b, r.AccessPoint)
	b = append(b, ' ')
	if r.ACLRequired {
		b = append(b, "Yes"...)
	} else {
		b = append(b, '-')
	}
	return append(b, '\n')
}

const hexDigits = "0123456789ABCDEF"

func escapeByte(b []byte, c byte) []byte {
	return append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
}

// field appends an unquoted field: "-" when empty, else printable ASCII
// other than space, '"', '\\', '[' and ']' (which would read as a
// quoted field or the time) as is, everything else as \xHH.
func field(b []byte, s string) []byte {
	if s == "" {
		return append(b, '-')
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '"' || c == '\\' || c == '[' || c == ']' {
			b = escapeByte(b, c)
		} else {
			b = append(b, c)
		}
	}
	return b
}

// quoted appends a quoted field: "-" (quotes included) when empty.
// Inside the quotes, '"', '\', control characters and bytes that are
// not UTF-8 are written \xHH; other text, spaces and UTF-8 included, is
// kept.
func quoted(b []byte, s string) []byte {
	b = append(b, '"')
	if s == "" {
		b = append(b, '-')
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < ' ' || c == 0x7f || c == '"' || c == '\\' {
				b = escapeByte(b, c)
			} else {
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || isControl(r) {
			for j := 0; j < size; j++ {
				b = escapeByte(b, s[i+j])
			}
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// isControl reports the C1 controls and the Unicode line and paragraph
// separators, which some readers take for line breaks.
func isControl(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || r == 0x2028 || r == 0x2029
}

// urlEncode appends s percent-encoded, keeping only unreserved
// characters and '/' (as S3 writes keys in its logs).
func urlEncode(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '~', c == '/':
			b = append(b, c)
		default:
			b = append(b, '%', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	return b
}

// number appends n, or "-" when negative (unknown), or when zero and
// zeroDash (S3 writes a zero Bytes Sent as "-").
func number(b []byte, n int64, zeroDash bool) []byte {
	if n < 0 || (n == 0 && zeroDash) {
		return append(b, '-')
	}
	return strconv.AppendInt(b, n, 10)
}

// millis appends d in whole milliseconds, "-" when negative.
func millis(b []byte, d time.Duration) []byte {
	if d < 0 {
		return append(b, '-')
	}
	return strconv.AppendInt(b, d.Milliseconds(), 10)
}
