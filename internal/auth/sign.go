package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The signing side below exists for tests and tools (benchmark clients,
// admin CLI); servers only verify.

// headersNeverSigned are left out by SignRequest and PresignURL because
// proxies and transports add or rewrite them.
var headersNeverSigned = map[string]bool{
	"authorization":     true,
	"user-agent":        true,
	"expect":            true,
	"transfer-encoding": true,
	"accept-encoding":   true,
	"connection":        true,
	"content-length":    true,
}

// headersToSign returns "host" plus every header of r that is safe to sign,
// lower-cased and sorted.
func headersToSign(r *http.Request) []string {
	names := []string{"host"}
	for k := range r.Header {
		lk := strings.ToLower(k)
		if lk == "host" || headersNeverSigned[lk] {
			continue
		}
		names = append(names, lk)
	}
	sort.Strings(names)
	return names
}

// SignRequest signs r in the Authorization header with SigV4 for service s3.
// payloadHash is the x-amz-content-sha256 value (a hex SHA-256 of the body,
// UNSIGNED-PAYLOAD or a STREAMING-* mode); empty means UNSIGNED-PAYLOAD. It
// sets X-Amz-Date, X-Amz-Content-Sha256 and Authorization and signs host and
// every other header present except transport-level ones.
func SignRequest(r *http.Request, id Identity, region string, t time.Time, payloadHash string) {
	if payloadHash == "" {
		payloadHash = UnsignedPayload
	}
	t = t.UTC()
	amzDate := t.Format(amzDateFormat)
	r.Header.Del("Authorization")
	r.Header.Set("X-Amz-Date", amzDate)
	r.Header.Set("X-Amz-Content-Sha256", payloadHash)
	s := scope{date: t.Format(scopeDateFormat), region: region, service: serviceS3}
	signed := headersToSign(r)
	cr := canonicalRequest(r, canonicalURI(r.URL.Path), canonicalQuery(r.URL.RawQuery, ""), signed, payloadHash)
	sig := hex.EncodeToString(hmacSHA256(signingKey(id.SecretKey, s), stringToSign(amzDate, s, cr)))
	r.Header.Set("Authorization", fmt.Sprintf("%s Credential=%s/%s, SignedHeaders=%s, Signature=%s",
		algorithm, id.AccessKey, s, strings.Join(signed, ";"), sig))
}

// PresignURL returns a presigned URL for r (method, URL, headers) valid for
// expires from t. Headers present on r are signed and must be sent with the
// URL. r is not modified. Scheme defaults to http.
func PresignURL(r *http.Request, id Identity, region string, t time.Time, expires time.Duration) string {
	t = t.UTC()
	amzDate := t.Format(amzDateFormat)
	s := scope{date: t.Format(scopeDateFormat), region: region, service: serviceS3}
	signed := headersToSign(r)
	extra := []string{
		qAlgorithm + "=" + algorithm,
		qCredential + "=" + uriEncode(id.AccessKey+"/"+s.String(), false),
		qDate + "=" + amzDate,
		qExpires + "=" + strconv.FormatInt(int64(expires/time.Second), 10),
		qSignedHeaders + "=" + uriEncode(strings.Join(signed, ";"), false),
	}
	rawQuery := strings.Join(extra, "&")
	if r.URL.RawQuery != "" {
		rawQuery = r.URL.RawQuery + "&" + rawQuery
	}
	cr := canonicalRequest(r, canonicalURI(r.URL.Path), canonicalQuery(rawQuery, ""), signed, UnsignedPayload)
	sig := hex.EncodeToString(hmacSHA256(signingKey(id.SecretKey, s), stringToSign(amzDate, s, cr)))
	scheme := r.URL.Scheme
	if scheme == "" {
		scheme = "http"
	}
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	return scheme + "://" + host + canonicalURI(r.URL.Path) + "?" + rawQuery + "&" + qSignature + "=" + sig
}

// SignStreamingRequest turns r into an aws-chunked upload of data in mode
// StreamingPayload, StreamingPayloadTrailer or StreamingUnsignedPayloadTrailer:
// it sets the streaming headers, signs the request (the seed signature),
// encodes data in chunks whose sizes cycle through chunkSizes (64 KiB when
// empty), appends trailers (trailer modes only; sorted by name) and installs
// the result as r.Body. It returns the encoded body so tests can tamper with
// a copy.
func SignStreamingRequest(r *http.Request, id Identity, region string, t time.Time, mode string, data []byte, chunkSizes []int, trailers http.Header) ([]byte, error) {
	switch mode {
	case StreamingPayload, StreamingPayloadTrailer, StreamingUnsignedPayloadTrailer:
	default:
		return nil, fmt.Errorf("sign streaming request: unsupported mode %q", mode)
	}
	for _, n := range chunkSizes {
		if n <= 0 {
			return nil, fmt.Errorf("sign streaming request: chunk size %d is not positive", n)
		}
	}
	hasTrailer := mode != StreamingPayload
	var names []string
	if hasTrailer {
		for k := range trailers {
			names = append(names, strings.ToLower(k))
		}
		sort.Strings(names)
	} else if len(trailers) > 0 {
		return nil, fmt.Errorf("sign streaming request: mode %s carries no trailers", mode)
	}
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Decoded-Content-Length", strconv.Itoa(len(data)))
	if len(names) > 0 {
		r.Header.Set("X-Amz-Trailer", strings.Join(names, ","))
	}
	SignRequest(r, id, region, t, mode)
	_, seed, _ := strings.Cut(r.Header.Get("Authorization"), "Signature=")

	t = t.UTC()
	s := scope{date: t.Format(scopeDateFormat), region: region, service: serviceS3}
	enc := chunkEncoder{
		signed:  mode != StreamingUnsignedPayloadTrailer,
		key:     signingKey(id.SecretKey, s),
		amzDate: t.Format(amzDateFormat),
		scope:   s,
		prevSig: seed,
	}
	if len(chunkSizes) == 0 {
		chunkSizes = []int{64 << 10}
	}
	for i := 0; len(data) > 0; i++ {
		n := min(chunkSizes[i%len(chunkSizes)], len(data))
		enc.chunk(data[:n])
		data = data[n:]
	}
	enc.chunk(nil)
	if !hasTrailer {
		enc.buf.WriteString("\r\n")
	} else {
		var canon strings.Builder
		for _, name := range names {
			v := trailers.Get(name)
			canon.WriteString(name + ":" + v + "\n")
			enc.buf.WriteString(name + ":" + v + "\r\n")
		}
		if enc.signed {
			sts := trailerStringToSign(enc.amzDate, enc.scope, enc.prevSig, sha256Hex(canon.String()))
			enc.buf.WriteString("x-amz-trailer-signature:" + hex.EncodeToString(hmacSHA256(enc.key, sts)) + "\r\n")
		}
		enc.buf.WriteString("\r\n")
	}
	body := enc.buf.Bytes()
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return bytes.Clone(body), nil
}

// chunkEncoder writes aws-chunked framing.
type chunkEncoder struct {
	buf     bytes.Buffer
	signed  bool
	key     []byte
	amzDate string
	scope   scope
	prevSig string
}

// chunk appends one chunk; data == nil writes the final zero-length chunk,
// whose CRLF after the (empty) data is written only when no trailer follows
// — callers with trailers append their section directly.
func (e *chunkEncoder) chunk(data []byte) {
	e.buf.WriteString(strconv.FormatInt(int64(len(data)), 16))
	if e.signed {
		sum := sha256.Sum256(data)
		sts := chunkStringToSign(e.amzDate, e.scope, e.prevSig, hex.EncodeToString(sum[:]))
		e.prevSig = hex.EncodeToString(hmacSHA256(e.key, sts))
		e.buf.WriteString(";chunk-signature=" + e.prevSig)
	}
	e.buf.WriteString("\r\n")
	if len(data) > 0 {
		e.buf.Write(data)
		e.buf.WriteString("\r\n")
	}
}

// SignPostPolicy builds the authentication fields of a SigV4 browser form
// upload, as SDKs' presigned POST helpers do: a policy document that
// expires at expiration with conditions plus the x-amz-algorithm,
// x-amz-credential and x-amz-date conditions, base64-encoded in "policy",
// and the form fields that go with it. Each condition is a map (an exact
// match) or a three-element slice, as in S3's policy grammar.
func SignPostPolicy(id Identity, region string, t, expiration time.Time, conditions []any) (map[string]string, error) {
	t = t.UTC()
	amzDate := t.Format(amzDateFormat)
	s := scope{date: t.Format(scopeDateFormat), region: region, service: serviceS3}
	credential := id.AccessKey + "/" + s.String()
	all := append([]any{}, conditions...)
	all = append(all,
		map[string]string{"x-amz-algorithm": algorithm},
		map[string]string{"x-amz-credential": credential},
		map[string]string{"x-amz-date": amzDate})
	doc, err := json.Marshal(map[string]any{
		"expiration": expiration.UTC().Format("2006-01-02T15:04:05.000Z"),
		"conditions": all,
	})
	if err != nil {
		return nil, fmt.Errorf("encode post policy: %w", err)
	}
	policy := base64.StdEncoding.EncodeToString(doc)
	return map[string]string{
		"policy":           policy,
		"x-amz-algorithm":  algorithm,
		"x-amz-credential": credential,
		"x-amz-date":       amzDate,
		"x-amz-signature":  hex.EncodeToString(hmacSHA256(signingKey(id.SecretKey, s), policy)),
	}, nil
}
