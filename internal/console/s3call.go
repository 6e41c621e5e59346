package console

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/auth"
)

// consoleHost is the Host of the S3 requests the console makes in
// process. It has no dot, so a --domain never reads it as a
// virtual-host bucket.
const consoleHost = "shardstore-console"

// emptySHA256 is the hex SHA-256 of an empty body.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// maxXMLResponse bounds an S3 answer the console buffers (listings,
// errors); bodies of objects are streamed, never buffered.
const maxXMLResponse = 16 << 20

// s3Request describes one S3 call made for a session.
type s3Request struct {
	method string
	bucket string
	key    string // "" for bucket and service calls
	path   string // instead of bucket and key (admin API calls)
	query  url.Values
	header http.Header
	body   io.Reader
	size   int64 // -1: unknown (sent chunked)
	// payload is the body's hex SHA-256 when the body is buffered (the
	// admin API checks it); "" streams the body as UNSIGNED-PAYLOAD.
	payload string
}

// s3Error is an S3 error answer, carried back to the browser as JSON.
type s3Error struct {
	Status  int    `json:"status"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *s3Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// newS3Request builds the HTTP request of sr for identity id, signed
// with SigV4 exactly as a client would sign it, so the S3 layer applies
// every access rule it applies to that identity's own requests. The
// browser's address goes along for policies that test aws:SourceIp.
func (c *Console) newS3Request(ctx context.Context, browser *http.Request, s *session, sr s3Request) *http.Request {
	path := "/"
	if sr.bucket != "" {
		path += sr.bucket
		if sr.key != "" {
			path += "/" + sr.key
		}
	}
	if sr.path != "" {
		path = sr.path
	}
	u := &url.URL{Scheme: "http", Host: consoleHost, Path: path, RawQuery: encodeQuery(sr.query)}
	body := sr.body
	if body == nil {
		body = http.NoBody
	}
	// Built by hand rather than parsed from a string: a key may hold
	// "?", "#" or "%" and must reach the S3 layer exactly as it is.
	r := (&http.Request{Method: sr.method, URL: u, Host: consoleHost, Header: http.Header{},
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, RequestURI: u.RequestURI()}).WithContext(ctx)
	r.Body = io.NopCloser(body)
	r.ContentLength = sr.size
	if sr.body == nil {
		r.ContentLength = 0
	}
	for k, vs := range sr.header {
		r.Header[k] = vs
	}
	if browser != nil {
		r.RemoteAddr = browser.RemoteAddr
		if ua := browser.Header.Get("User-Agent"); ua != "" {
			r.Header.Set("User-Agent", "shardstore-console ("+ua+")")
		}
	}
	payload := sr.payload // "": UNSIGNED-PAYLOAD, bodies stream through unread
	if sr.body == nil {
		// The admin API wants the body's hash; an empty body's is known.
		payload = emptySHA256
	}
	if s.token != "" {
		r.Header.Set("X-Amz-Security-Token", s.token) // signed with the rest
	}
	auth.SignRequest(r, s.identity(), c.region(), c.now(), payload)
	return r
}

// encodeQuery encodes q with %20 for spaces (SigV4's canonical form; a
// "+" would be read back as a plus).
func encodeQuery(q url.Values) string {
	return strings.ReplaceAll(q.Encode(), "+", "%20")
}

func (c *Console) region() string {
	if c.cfg.Region != "" {
		return c.cfg.Region
	}
	return "us-east-1"
}

func (c *Console) now() time.Time {
	if c.cfg.Now != nil {
		return c.cfg.Now()
	}
	return time.Now()
}

// recorder captures an S3 answer in memory (bounded).
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	over   bool
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.body.Len()+len(p) > maxXMLResponse {
		r.over = true
		return 0, fmt.Errorf("console: S3 answer larger than %d bytes", maxXMLResponse)
	}
	return r.body.Write(p)
}

// call makes sr for the session and returns the buffered answer, or
// the S3 error it carried.
func (c *Console) call(browser *http.Request, s *session, sr s3Request) (*recorder, error) {
	rec := &recorder{header: http.Header{}}
	c.cfg.S3.ServeHTTP(rec, c.newS3Request(browser.Context(), browser, s, sr))
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if rec.over {
		return nil, &s3Error{Status: http.StatusBadGateway, Code: "ResponseTooLarge", Message: "the S3 answer was too large for the console"}
	}
	if rec.status >= 300 {
		return nil, decodeS3Error(rec.status, rec.body.Bytes())
	}
	return rec, nil
}

// callXML is call, decoding the answer's XML body into v.
func (c *Console) callXML(browser *http.Request, s *session, sr s3Request, v any) (*recorder, error) {
	rec, err := c.call(browser, s, sr)
	if err != nil {
		return nil, err
	}
	if v != nil {
		if err := xml.Unmarshal(rec.body.Bytes(), v); err != nil {
			return nil, fmt.Errorf("console: decode %s answer: %w", sr.method, err)
		}
	}
	return rec, nil
}

// decodeS3Error reads an S3 error body; a body-less answer (HEAD) gets
// a code from its status.
func decodeS3Error(status int, body []byte) *s3Error {
	var x struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if len(body) > 0 && xml.Unmarshal(body, &x) == nil && x.Code != "" {
		return &s3Error{Status: status, Code: x.Code, Message: x.Message}
	}
	code := http.StatusText(status)
	switch status {
	case http.StatusNotFound:
		code = "NotFound"
	case http.StatusForbidden:
		code = "AccessDenied"
	}
	return &s3Error{Status: status, Code: code, Message: strings.TrimSpace(string(body))}
}
