package auth

import (
	"crypto/subtle"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/wallclock"
)

// DefaultMaxSkew is the clock skew tolerated when Verifier.MaxSkew is zero;
// it is the window S3 itself allows.
const DefaultMaxSkew = 15 * time.Minute

// Verifier checks request signatures.
type Verifier struct {
	// Region the server answers for, e.g. "us-east-1"; the region of a
	// signature's credential scope must equal it. Empty accepts any region,
	// which suits single-node test servers whose clients pick their own.
	Region string
	Users  *Users
	// Identities, when set, holds the users, access keys and sessions
	// of the identity store; without it every session token is refused.
	Identities IdentityStore
	// Domain is the server's virtual-host domain (s3api.Config.Domain):
	// a request whose Host is BUCKET.Domain names BUCKET there. Only
	// Signature Version 2 needs it, because a SigV2 signature covers
	// "/BUCKET/key" whichever way the bucket was addressed. Empty means
	// path-style only, which verifies every path-style request.
	Domain  string
	Now     func() time.Time // nil = time.Now
	MaxSkew time.Duration    // 0 = DefaultMaxSkew

	keys signingKeys
}

// signingKeys remembers derived signing keys. Deriving one is four
// HMACs, a quarter of verifying a small request's signature, and a
// client signs with the same key (secret, day, region, service) all day.
type signingKeys struct {
	mu sync.Mutex
	m  map[signingKeyID][]byte
}

type signingKeyID struct {
	secret string
	scope  scope
}

// maxSigningKeys bounds the cache; past it the cache starts over.
const maxSigningKeys = 4096

// key returns signingKey(secret, s) and whether it was remembered: a
// key is remembered (remember) only once a signature made with it
// verified, so requests with made-up scopes cannot fill the cache.
func (c *signingKeys) key(secret string, s scope) ([]byte, bool) {
	c.mu.Lock()
	k, ok := c.m[signingKeyID{secret, s}]
	c.mu.Unlock()
	if ok {
		return k, true
	}
	return signingKey(secret, s), false
}

// remember keeps k as the signing key of secret and s; the scope's
// strings are copied, not kept as slices of a request's header.
func (c *signingKeys) remember(secret string, s scope, k []byte) {
	id := signingKeyID{secret, scope{date: strings.Clone(s.date), region: strings.Clone(s.region), service: strings.Clone(s.service)}}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxSigningKeys {
		c.m = make(map[signingKeyID][]byte)
	}
	c.m[id] = k
	c.mu.Unlock()
}

// Request is the outcome of a successful Verify.
type Request struct {
	Anonymous bool
	Identity  Identity
	// Body yields the payload to store: aws-chunked framing removed, each
	// chunk signature verified as it arrives, the x-amz-content-sha256 hex
	// hash verified at the end. When verification fails, Read returns an
	// *Error (XAmzContentSHA256Mismatch / SignatureDoesNotMatch /
	// IncompleteBody ...) instead of io.EOF, so a consumer that reads to EOF
	// can never store unverified bytes.
	Body io.ReadCloser
	// ContentLength is the decoded payload length: x-amz-decoded-content-length
	// for aws-chunked, else r.ContentLength; -1 when unknown.
	ContentLength int64
	// Trailer returns the trailing headers (canonical names, e.g.
	// "X-Amz-Checksum-Crc32") after Body has returned io.EOF; empty before
	// that or when there are none.
	Trailer func() http.Header
	// PayloadHash is the x-amz-content-sha256 value the signature covered
	// (a hex digest, UNSIGNED-PAYLOAD or a STREAMING-* mode); empty for
	// anonymous requests and for SigV2 requests that sent none (SigV2
	// does not sign the body; Content-MD5 is the engine's to check).
	PayloadHash string
	// Presigned reports authentication by query parameters.
	Presigned bool
}

func noTrailer() http.Header { return http.Header{} }

func (v *Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return wallclock.Now()
}

func (v *Verifier) maxSkew() time.Duration {
	if v.MaxSkew > 0 {
		return v.MaxSkew
	}
	return DefaultMaxSkew
}

// Verify authenticates r. A request without any auth (no Authorization
// header, no X-Amz-Signature query) returns Request{Anonymous: true} with
// Body = r.Body. It never reads the body up front: payload checks happen as
// the returned Body is read. All failures are *Error values.
func (v *Verifier) Verify(r *http.Request) (*Request, error) {
	req, err := v.verify(r)
	if err != nil {
		return nil, err // keep a nil *Error from turning into a non-nil error
	}
	if err := req.Identity.Refusal; err != nil {
		return nil, err
	}
	return req, nil
}

func (v *Verifier) verify(r *http.Request) (*Request, *Error) {
	authz := r.Header.Values("Authorization")
	q := r.URL.Query()
	presignV4 := q.Has(qAlgorithm) || q.Has(qSignature) || q.Has(qCredential)
	presignV2 := q.Has(qV2AccessKey) || q.Has(qV2Signature)

	switch {
	case len(authz) > 1:
		return nil, newErr(CodeInvalidArgument, "only one Authorization header is allowed")
	case len(authz) == 1 && (presignV4 || presignV2):
		return nil, newErr(CodeInvalidArgument, "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified")
	case len(authz) == 1:
		h := strings.TrimSpace(authz[0])
		switch {
		case strings.HasPrefix(h, algorithm+" ") || h == algorithm:
			return v.verifyHeader(r, h)
		case strings.HasPrefix(h, "AWS "):
			return v.verifyHeaderV2(r, h)
		default:
			return nil, newErr(CodeInvalidArgument, "Unsupported Authorization Type")
		}
	case presignV4:
		return v.verifyPresigned(r, q)
	case presignV2:
		return v.verifyPresignedV2(r, q)
	}
	return anonymousRequest(r)
}

// anonymousRequest is the outcome for a request without authentication.
// Its body is read as its x-amz-content-sha256 frames it, as for a signed
// request: current SDKs send an unsigned upload as aws-chunked
// STREAMING-UNSIGNED-PAYLOAD-TRAILER with a trailing checksum, which is
// decoded (the trailer handed on for checking); a hex digest is checked.
// Chunk signatures cannot be checked without a signer and are refused.
// Any other value (none, UNSIGNED-PAYLOAD) leaves the body as sent.
func anonymousRequest(r *http.Request) (*Request, *Error) {
	out := &Request{Anonymous: true, Body: r.Body, ContentLength: r.ContentLength, Trailer: noTrailer}
	switch payload := r.Header.Get("X-Amz-Content-Sha256"); payload {
	case StreamingUnsignedPayloadTrailer:
		cr, err := newChunkedFromRequest(r, payload, nil, "", scope{}, "")
		if err != nil {
			return nil, err
		}
		out.Body, out.ContentLength, out.Trailer = cr, cr.opt.declared, cr.trailers
	case StreamingPayload, StreamingPayloadTrailer:
		return nil, newErr(CodeInvalidRequest, "aws-chunked uploads with chunk signatures (%s) need a signed request", payload)
	default:
		if digest, err := hex.DecodeString(payload); err == nil && len(digest) == 32 {
			out.Body = newHashReader(r.Body, digest, r.ContentLength)
		}
	}
	return out, nil
}

// verifyHeader checks a request signed in the Authorization header.
func (v *Verifier) verifyHeader(r *http.Request, h string) (*Request, *Error) {
	p, err := parseAuthorization(h)
	if err != nil {
		return nil, err
	}
	if err := v.checkRegion(p.scope, CodeAuthorizationHeaderMalformed); err != nil {
		return nil, err
	}
	id, lerr := v.lookup(p.accessKey, r.Header.Get("X-Amz-Security-Token"))
	if lerr != nil {
		return nil, lerr
	}
	t, amzDate, terr := requestTimeV4(r.Header)
	if terr != nil {
		return nil, terr
	}
	if err := v.checkSkew(t); err != nil {
		return nil, err
	}
	if p.scope.date != amzDate[:8] {
		return nil, newErr(CodeAuthorizationHeaderMalformed, "The authorization header is malformed; Invalid credential date. Date is not the same as X-Amz-Date.")
	}
	if err := checkSignedHeaders(r, p.signedHeaders, false); err != nil {
		return nil, err
	}

	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		return nil, newErr(CodeInvalidRequest, "Missing required header for this request: x-amz-content-sha256")
	}
	var digest []byte
	switch payload {
	case UnsignedPayload, StreamingPayload, StreamingPayloadTrailer, StreamingUnsignedPayloadTrailer:
	default:
		var derr error
		if digest, derr = hex.DecodeString(payload); derr != nil || len(digest) != 32 {
			return nil, newErr(CodeInvalidArgument, "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, STREAMING-UNSIGNED-PAYLOAD-TRAILER or a valid sha256 value")
		}
	}

	key, known := v.keys.key(id.SecretKey, p.scope)
	query := canonicalQuery(r.URL.RawQuery, "")
	if err := checkSignature(r, key, amzDate, p, query, payload); err != nil {
		return nil, err
	}
	if !known {
		v.keys.remember(id.SecretKey, p.scope, key)
	}

	out := &Request{Identity: id, PayloadHash: payload, ContentLength: r.ContentLength, Trailer: noTrailer}
	switch payload {
	case UnsignedPayload:
		out.Body = &plainReader{body: r.Body, remaining: r.ContentLength}
	case StreamingPayload, StreamingPayloadTrailer, StreamingUnsignedPayloadTrailer:
		cr, err := newChunkedFromRequest(r, payload, key, amzDate, p.scope, p.signature)
		if err != nil {
			return nil, err
		}
		out.Body, out.ContentLength, out.Trailer = cr, cr.opt.declared, cr.trailers
	default:
		out.Body = newHashReader(r.Body, digest, r.ContentLength)
	}
	return out, nil
}

// verifyPresigned checks a request authenticated by query parameters.
func (v *Verifier) verifyPresigned(r *http.Request, q map[string][]string) (*Request, *Error) {
	p, err := parsePresigned(q)
	if err != nil {
		return nil, err
	}
	if err := v.checkRegion(p.scope, CodeAuthorizationQueryParametersError); err != nil {
		return nil, err
	}
	t, _ := parseAmzDate(p.amzDate) // validated by parsePresigned
	if p.scope.date != p.amzDate[:8] {
		return nil, newErr(CodeAuthorizationQueryParametersError, "invalid credential date %q; it is not the same as X-Amz-Date %q", p.scope.date, p.amzDate[:8])
	}
	now := v.now()
	if t.After(now.Add(v.maxSkew())) {
		return nil, newErr(CodeAccessDenied, "Request is not valid yet")
	}
	if p.expires == 0 || now.After(t.Add(p.expires)) {
		return nil, newErr(CodeAccessDenied, "Request has expired")
	}
	token := ""
	if vals := q[qSecurityToken]; len(vals) > 0 {
		if token = vals[0]; token == "" {
			return nil, invalidToken()
		}
	}
	id, lerr := v.lookup(p.accessKey, token)
	if lerr != nil {
		return nil, lerr
	}
	if err := checkSignedHeaders(r, p.signedHeaders, true); err != nil {
		return nil, err
	}
	// A presigned URL signs UNSIGNED-PAYLOAD unless the signer put a digest
	// in the query.
	payload := UnsignedPayload
	var digest []byte
	if vals := q[qContentSHA256]; len(vals) > 0 {
		payload = vals[0]
		if payload != UnsignedPayload {
			var derr error
			if digest, derr = hex.DecodeString(payload); derr != nil || len(digest) != 32 {
				return nil, newErr(CodeAuthorizationQueryParametersError, "X-Amz-Content-Sha256 in a presigned URL must be UNSIGNED-PAYLOAD or a valid sha256 value")
			}
		}
	}
	key, known := v.keys.key(id.SecretKey, p.scope)
	query := canonicalQuery(r.URL.RawQuery, qSignature)
	if err := checkSignature(r, key, p.amzDate, p, query, payload); err != nil {
		return nil, err
	}
	if !known {
		v.keys.remember(id.SecretKey, p.scope, key)
	}
	out := &Request{Identity: id, PayloadHash: payload, ContentLength: r.ContentLength, Trailer: noTrailer, Presigned: true}
	if digest != nil {
		out.Body = newHashReader(r.Body, digest, r.ContentLength)
	} else {
		out.Body = &plainReader{body: r.Body, remaining: r.ContentLength}
	}
	return out, nil
}

func (v *Verifier) checkRegion(s scope, code string) *Error {
	if v.Region != "" && s.region != v.Region {
		prefix := "The authorization header is malformed"
		if code == CodeAuthorizationQueryParametersError {
			prefix = "Error parsing the X-Amz-Credential parameter"
		}
		return newErr(code, "%s; the region '%s' is wrong; expecting '%s'", prefix, truncate(s.region), v.Region)
	}
	return nil
}

func (v *Verifier) checkSkew(t time.Time) *Error {
	// Compared as times, not as a Duration: now.Sub of a date centuries
	// away saturates, and the absolute value of the most negative
	// Duration is still negative (year 9999 passed as "no skew").
	now, skew := v.now(), v.maxSkew()
	if t.Before(now.Add(-skew)) || t.After(now.Add(skew)) {
		return newErr(CodeRequestTimeTooSkewed, "The difference between the request time and the current time is too large.")
	}
	return nil
}

// errBadRequestDate is S3's answer to a request whose time cannot be
// read.
func errBadRequestDate() *Error {
	return newErr(CodeAccessDenied, "AWS authentication requires a valid Date or x-amz-date header")
}

// requestTimeV4 is a SigV4 request's time, and its ISO 8601 basic form
// for the string to sign: X-Amz-Date when the request carries it (even
// empty, which is no valid date), else the Date header, in any form
// HTTP allows (botocore sends RFC 1123 with a numeric zone, "-0000",
// when a caller sets Date).
func requestTimeV4(h http.Header) (time.Time, string, *Error) {
	if vals := h.Values("X-Amz-Date"); len(vals) > 0 {
		t, ok := parseAmzDate(vals[0])
		if !ok {
			return time.Time{}, "", errBadRequestDate()
		}
		return t, vals[0], nil
	}
	t, ok := parseHTTPDate(strings.TrimSpace(h.Get("Date")))
	if !ok {
		return time.Time{}, "", errBadRequestDate()
	}
	return t, t.Format(amzDateFormat), nil
}

// checkSignedHeaders enforces S3's rules on SignedHeaders: host must be
// signed, and so must every x-amz-* header the request carries (otherwise a
// man in the middle could add x-amz-copy-source or metadata to a signed
// request). For presigned URLs x-amz-content-sha256 is exempt: the payload
// hash of a presigned URL comes from the query, the header is ignored.
func checkSignedHeaders(r *http.Request, signed []string, presigned bool) *Error {
	hasHost := false
	set := make(map[string]bool, len(signed))
	for _, h := range signed {
		set[h] = true
		if h == "host" {
			hasHost = true
		}
	}
	if !hasHost {
		return newErr(CodeAccessDenied, "the host header must be signed")
	}
	var unsigned []string
	for k := range r.Header {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, "x-amz-") || set[lk] {
			continue
		}
		if presigned && lk == "x-amz-content-sha256" {
			continue
		}
		unsigned = append(unsigned, lk)
	}
	if len(unsigned) > 0 {
		return newErr(CodeAccessDenied, "There were headers present in the request which were not signed: %s", truncate(strings.Join(unsigned, ", ")))
	}
	return nil
}

// checkSignature recomputes the request signature and compares it in
// constant time. The canonical URI is first built S3's way (decoded path
// re-encoded per segment); if that does not match and the client sent the
// path with a different but valid encoding, the path exactly as sent is
// tried too, because some clients sign their own escaping (e.g. a literal
// '+' or '!') rather than the canonical one. Both forms name the same
// object, so accepting either widens nothing an attacker could exploit.
func checkSignature(r *http.Request, key []byte, amzDate string, p authParams, query, payload string) *Error {
	uri := canonicalURI(r.URL.Path)
	if sigMatches(r, key, amzDate, p, uri, query, payload) {
		return nil
	}
	if raw := r.URL.EscapedPath(); raw != "" && raw != uri {
		if sigMatches(r, key, amzDate, p, raw, query, payload) {
			return nil
		}
	}
	return signatureMismatch()
}

func sigMatches(r *http.Request, key []byte, amzDate string, p authParams, uri, query, payload string) bool {
	cr := canonicalRequest(r, uri, query, p.signedHeaders, payload)
	want := hex.EncodeToString(hmacSHA256(key, stringToSign(amzDate, p.scope, cr)))
	return subtle.ConstantTimeCompare([]byte(want), []byte(p.signature)) == 1
}

// parseDecodedLength reads x-amz-decoded-content-length; -1 when absent.
func parseDecodedLength(r *http.Request) (int64, *Error) {
	v := r.Header.Get("X-Amz-Decoded-Content-Length")
	if v == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > maxObjectSize {
		return 0, newErr(CodeInvalidArgument, "x-amz-decoded-content-length must be a non-negative integer no larger than %d", int64(maxObjectSize))
	}
	return n, nil
}
