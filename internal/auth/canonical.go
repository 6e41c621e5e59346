package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Fixed strings of the SigV4 protocol.
const (
	algorithm        = "AWS4-HMAC-SHA256"
	chunkAlgorithm   = "AWS4-HMAC-SHA256-PAYLOAD"
	trailerAlgorithm = "AWS4-HMAC-SHA256-TRAILER"
	scopeTerminator  = "aws4_request"
	serviceS3        = "s3"
	amzDateFormat    = "20060102T150405Z"
	scopeDateFormat  = "20060102"

	// emptySHA256 is hex(SHA-256("")), part of every chunk string-to-sign.
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// Values of x-amz-content-sha256 other than a hex digest.
const (
	UnsignedPayload                 = "UNSIGNED-PAYLOAD"
	StreamingPayload                = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	StreamingPayloadTrailer         = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	StreamingUnsignedPayloadTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
)

// scope is the credential scope of a signature.
type scope struct {
	date, region, service string // date is YYYYMMDD
}

func (s scope) String() string {
	return s.date + "/" + s.region + "/" + s.service + "/" + scopeTerminator
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// signingKey derives kSigning = HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date), region), service), "aws4_request").
func signingKey(secret string, s scope) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), s.date)
	k = hmacSHA256(k, s.region)
	k = hmacSHA256(k, s.service)
	return hmacSHA256(k, scopeTerminator)
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// stringToSign builds the string-to-sign of a whole request.
func stringToSign(amzDate string, s scope, canonicalRequest string) string {
	return algorithm + "\n" + amzDate + "\n" + s.String() + "\n" + sha256Hex(canonicalRequest)
}

// chunkStringToSign builds the string-to-sign of one aws-chunked chunk.
func chunkStringToSign(amzDate string, s scope, prevSig, chunkHashHex string) string {
	return chunkAlgorithm + "\n" + amzDate + "\n" + s.String() + "\n" + prevSig + "\n" + emptySHA256 + "\n" + chunkHashHex
}

// trailerStringToSign builds the string-to-sign of the trailing headers chunk.
func trailerStringToSign(amzDate string, s scope, prevSig, trailerHashHex string) string {
	return trailerAlgorithm + "\n" + amzDate + "\n" + s.String() + "\n" + prevSig + "\n" + trailerHashHex
}

// isUnreserved reports RFC 3986 unreserved characters, the only bytes SigV4
// leaves unencoded.
func isUnreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~'
}

// uriEncode percent-encodes s the SigV4 way (uppercase hex, space as %20);
// with keepSlash, '/' is left alone, as in S3 object paths.
func uriEncode(s string, keepSlash bool) string {
	const hexdig = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(s); i++ {
		if !isUnreserved(s[i]) && !(keepSlash && s[i] == '/') {
			n++
		}
	}
	if n == 0 {
		return s
	}
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUnreserved(c) || (keepSlash && c == '/') {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hexdig[c>>4], hexdig[c&15])
	}
	return string(b)
}

// canonicalURI encodes the decoded request path segment by segment with S3's
// rules. S3, unlike other services, neither normalizes the path nor encodes
// it twice.
func canonicalURI(path string) string {
	if path == "" {
		return "/"
	}
	return uriEncode(path, true)
}

// canonicalQuery turns a raw query string into its canonical form: every
// name and value decoded, re-encoded with SigV4 rules, the pairs sorted by
// encoded name then value (sorting happens after encoding, as the spec says).
// Parameters named skip (X-Amz-Signature for presigned URLs) are left out.
func canonicalQuery(rawQuery, skip string) string {
	type pair struct{ k, v string }
	var pairs []pair
	for part := range strings.SplitSeq(rawQuery, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		k, v = queryUnescape(k), queryUnescape(v)
		if skip != "" && k == skip {
			continue
		}
		pairs = append(pairs, pair{uriEncode(k, false), uriEncode(v, false)})
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// queryUnescape decodes a query component; an invalid escape is kept as
// sent, which can only lead to a signature mismatch, never to a crash.
func queryUnescape(s string) string {
	if d, err := url.QueryUnescape(s); err == nil {
		return d
	}
	return s
}

// squeezeSpaces trims a header value and collapses runs of spaces into one.
func squeezeSpaces(v string) string {
	v = strings.TrimSpace(v)
	if !strings.Contains(v, "  ") {
		return v
	}
	var b strings.Builder
	b.Grow(len(v))
	prevSpace := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == ' ' {
			if prevSpace {
				continue
			}
			prevSpace = true
		} else {
			prevSpace = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// headerValue returns the canonical value of one signed header. Go's server
// moves Host, Content-Length and Transfer-Encoding out of r.Header, so those
// are rebuilt from the fields Go keeps them in.
func headerValue(r *http.Request, name string) string {
	switch name {
	case "host":
		h := r.Host
		if h == "" && r.URL != nil {
			h = r.URL.Host
		}
		return squeezeSpaces(h)
	case "content-length":
		if v := r.Header.Values("Content-Length"); len(v) > 0 {
			return squeezeSpaces(strings.Join(v, ","))
		}
		if r.ContentLength >= 0 {
			return strconv.FormatInt(r.ContentLength, 10)
		}
		return ""
	case "transfer-encoding":
		if v := r.Header.Values("Transfer-Encoding"); len(v) > 0 {
			return squeezeSpaces(strings.Join(v, ","))
		}
		return strings.Join(r.TransferEncoding, ",")
	}
	vals := r.Header.Values(name)
	if len(vals) == 1 {
		return squeezeSpaces(vals[0])
	}
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = squeezeSpaces(v)
	}
	return strings.Join(parts, ",")
}

// canonicalRequest assembles the canonical request from its parts.
func canonicalRequest(r *http.Request, uri, query string, signedHeaders []string, payloadHash string) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(uri)
	b.WriteByte('\n')
	b.WriteString(query)
	b.WriteByte('\n')
	for _, h := range signedHeaders {
		b.WriteString(h)
		b.WriteByte(':')
		b.WriteString(headerValue(r, h))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(signedHeaders, ";"))
	b.WriteByte('\n')
	b.WriteString(payloadHash)
	return b.String()
}

// parseAmzDate parses the ISO 8601 basic format used by x-amz-date.
func parseAmzDate(s string) (time.Time, bool) {
	if len(s) != len(amzDateFormat) {
		return time.Time{}, false
	}
	t, err := time.Parse(amzDateFormat, s)
	return t, err == nil
}
