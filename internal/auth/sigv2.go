package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// AWS Signature Version 2 for S3 (the "RESTAuthentication" scheme):
//
//	Signature    = Base64(HMAC-SHA1(secret, StringToSign))
//	StringToSign = VERB + "\n" + Content-MD5 + "\n" + Content-Type + "\n" +
//	               Date (Expires for presigned URLs) + "\n" +
//	               CanonicalizedAmzHeaders + CanonicalizedResource
//
// It is still what botocore's generate_presigned_url and `aws s3 presign`
// (CLI v1) produce at default settings, so refusing it breaks users who
// changed nothing.

// Query parameters of a SigV2 presigned URL.
const (
	qV2AccessKey = "AWSAccessKeyId"
	qV2Signature = "Signature"
	qV2Expires   = "Expires"
)

// subresourcesV2 are the query parameters that go into the
// CanonicalizedResource. AWS's list (acl ... website, the response-*
// overrides and delete) is extended with the names botocore and minio-go
// sign, so that both verify; a name signed by one client but not by the
// other only concerns sub-resources this server answers NotImplemented.
// Parameters not listed here (prefix, max-keys, list-type ...) are not
// covered by a SigV2 signature, in S3 as here.
var subresourcesV2 = map[string]bool{
	"accelerate": true, "acl": true, "analytics": true, "cors": true,
	"defaultObjectAcl": true, "delete": true, "encryption": true,
	"inventory": true, "legal-hold": true, "lifecycle": true, "location": true,
	"logging": true, "metrics": true, "notification": true, "object-lock": true,
	"partNumber": true, "policy": true, "replication": true,
	"requestPayment": true, "restore": true, "retention": true, "select": true,
	"select-type": true, "storageClass": true, "tagging": true, "torrent": true,
	"uploadId": true, "uploads": true, "versionId": true, "versioning": true,
	"versions": true, "website": true,
	"response-cache-control": true, "response-content-disposition": true,
	"response-content-encoding": true, "response-content-language": true,
	"response-content-type": true, "response-expires": true,
}

// maxExpiresDigits bounds the Expires parameter (epoch seconds) before
// it is parsed.
const maxExpiresDigits = 18

// parseAuthorizationV2 splits "AWS AccessKeyId:Signature". The signature is
// the last ':'-separated part (base64 has no ':'); spaces around either
// part are tolerated. The signature's alphabet is not checked here: a
// value that is not the right base64 simply does not match.
func parseAuthorizationV2(h string) (accessKey, signature string, err *Error) {
	const msg = "AWS authorization header is invalid; expected AwsAccessKeyId:signature"
	if len(h) > maxAuthHeaderLen {
		return "", "", newErr(CodeInvalidArgument, "the authorization header is too long")
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(h), "AWS ")
	if !ok {
		return "", "", newErr(CodeInvalidArgument, msg)
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return "", "", newErr(CodeInvalidArgument, msg)
	}
	accessKey, signature = strings.TrimSpace(rest[:i]), strings.TrimSpace(rest[i+1:])
	if accessKey == "" || signature == "" {
		return "", "", newErr(CodeInvalidArgument, msg)
	}
	return accessKey, signature, nil
}

// verifyHeaderV2 checks a request signed with "Authorization: AWS AK:sig".
func (v *Verifier) verifyHeaderV2(r *http.Request, h string) (*Request, *Error) {
	ak, sig, err := parseAuthorizationV2(h)
	if err != nil {
		return nil, err
	}
	id, lerr := v.lookup(ak, r.Header.Get("X-Amz-Security-Token"))
	if lerr != nil {
		return nil, lerr
	}

	// A timestamp is mandatory and x-amz-date, when the request carries
	// it at all, takes precedence over Date: an empty or unreadable
	// x-amz-date is AccessDenied even beside a good Date, as in S3.
	dateHdr := strings.TrimSpace(r.Header.Get("Date"))
	amzDate := strings.TrimSpace(r.Header.Get("X-Amz-Date"))
	stamp := dateHdr
	if len(r.Header.Values("X-Amz-Date")) > 0 {
		stamp = amzDate
	}
	t, ok := parseHTTPDate(stamp)
	if !ok {
		return nil, errBadRequestDate()
	}
	if err := v.checkSkew(t); err != nil {
		return nil, err
	}

	// The Date slot of the string to sign. AWS's text says: empty when
	// x-amz-date is sent (x-amz-date is then signed as an amz header).
	// Two other layouts are accepted because real signers produce them:
	// the Date header in the slot with x-amz-date also signed (signers
	// that always sign Date, e.g. botocore's HmacV1Auth when the caller
	// added x-amz-date), and x-amz-date's value in the slot and not among
	// the amz headers (AWS's own published "Delete" example). None widens
	// what a signature covers: each binds the same headers and resource,
	// and the layouts cannot be confused with one another (the slot is
	// empty only in the first; only the third lacks an x-amz-date line).
	type layout struct {
		slot        string
		dropAmzDate bool
	}
	layouts := []layout{{slot: dateHdr}}
	if amzDate != "" {
		layouts[0].slot = ""
		if dateHdr != "" {
			layouts = append(layouts, layout{slot: dateHdr})
		}
		layouts = append(layouts, layout{slot: amzDate, dropAmzDate: true})
	}
	md5, ctype := headerJoined(r.Header, "Content-Md5"), headerJoined(r.Header, "Content-Type")
	key := []byte(id.SecretKey)
	for _, l := range layouts {
		amz := amzHeadersV2(r.Header, nil, l.dropAmzDate)
		if v.sigV2Matches(r, key, sig, md5, ctype, l.slot, amz) {
			return v2Result(r, id, false)
		}
	}
	return nil, signatureMismatch()
}

// verifyPresignedV2 checks a URL presigned with AWSAccessKeyId, Expires and
// Signature query parameters.
func (v *Verifier) verifyPresignedV2(r *http.Request, q url.Values) (*Request, *Error) {
	for _, k := range []string{qV2AccessKey, qV2Signature, qV2Expires} {
		switch len(q[k]) {
		case 0:
			return nil, newErr(CodeAccessDenied, "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters")
		case 1:
		default:
			return nil, newErr(CodeAuthorizationQueryParametersError, "the query parameter %s appears more than once", k)
		}
	}
	exp := q.Get(qV2Expires)
	if len(exp) > maxExpiresDigits || !isDigits(exp) {
		return nil, newErr(CodeAccessDenied, "Invalid date (should be seconds since epoch): %q", truncate(exp))
	}
	secs, _ := strconv.ParseInt(exp, 10, 64) // at most 18 digits: fits
	if v.now().After(time.Unix(secs, 0)) {
		return nil, newErr(CodeAccessDenied, "Request has expired")
	}
	// SigV2 has no X-Amz-Expires, but a URL that works for years is a
	// leaked credential waiting to happen: hold it to SigV4's week (plus
	// the clock skew allowed), measured from now.
	if left := time.Unix(secs, 0).Sub(v.now()); left > maxPresignExpires*time.Second+v.maxSkew() {
		return nil, newErr(CodeAuthorizationQueryParametersError,
			"Expires must be less than a week (in seconds) from now; that is, the given Expires must be at most %d seconds in the future", maxPresignExpires)
	}
	token := r.Header.Get("X-Amz-Security-Token")
	for _, name := range []string{"x-amz-security-token", qSecurityToken} {
		if vals := q[name]; token == "" && len(vals) > 0 {
			if token = vals[0]; token == "" {
				return nil, invalidToken()
			}
		}
	}
	id, lerr := v.lookup(q.Get(qV2AccessKey), token)
	if lerr != nil {
		return nil, lerr
	}
	// Presigners (botocore) move Content-MD5, Content-Type and x-amz-*
	// headers into the query, where whoever follows the URL need not send
	// them as headers; a header actually sent still takes precedence, so
	// what the server acts on is what was signed.
	hoisted := url.Values{}
	for k, vals := range q {
		lk := strings.ToLower(k)
		if lk == "content-md5" || lk == "content-type" || strings.HasPrefix(lk, "x-amz-") {
			hoisted[lk] = append(hoisted[lk], vals...)
		}
	}
	md5 := headerJoined(r.Header, "Content-Md5")
	if md5 == "" && len(r.Header.Values("Content-Md5")) == 0 {
		md5 = strings.Join(hoisted["content-md5"], ",")
	}
	ctype := headerJoined(r.Header, "Content-Type")
	if ctype == "" && len(r.Header.Values("Content-Type")) == 0 {
		ctype = strings.Join(hoisted["content-type"], ",")
	}
	// Go's query decoding turns a '+' the client forgot to escape into a
	// space; base64 never contains spaces, so the substitution is exact.
	sig := strings.ReplaceAll(q.Get(qV2Signature), " ", "+")
	amz := amzHeadersV2(r.Header, hoisted, false)
	if !v.sigV2Matches(r, []byte(id.SecretKey), sig, md5, ctype, exp, amz) {
		return nil, signatureMismatch()
	}
	return v2Result(r, id, true)
}

// sigV2Matches recomputes the signature and compares it in constant time.
// The path is signed exactly as it came on the wire, as AWS specifies
// (botocore, minio-go and the AWS examples all sign the bytes they send),
// with one exception: a path-style request for a bucket itself sent as
// "/bucket" is signed by botocore as "/bucket/" (the form its
// virtual-host requests have, and which S3 accepts), so that form is tried
// as well; both name the same bucket.
func (v *Verifier) sigV2Matches(r *http.Request, key []byte, sig, md5, ctype, date string, amz []string) bool {
	bucket, path, query := v.vhostBucket(r), rawPathOf(r), rawQueryOf(r)
	paths := []string{path}
	if bucket == "" && len(path) > 1 && strings.IndexByte(path[1:], '/') < 0 {
		paths = append(paths, path+"/")
	}
	for _, p := range paths {
		want := signV2(key, stringToSignV2(r.Method, md5, ctype, date, amz, canonicalResourceV2(bucket, p, query)))
		if subtle.ConstantTimeCompare([]byte(want), []byte(sig)) == 1 {
			return true
		}
	}
	return false
}

// v2Result builds the verified request. A SigV2 signature does not cover
// the body. When the client nevertheless sent a hex x-amz-content-sha256
// (then signed, as every x-amz-* header is), the body is checked against
// it; aws-chunked framing needs SigV4 keys and is refused.
func v2Result(r *http.Request, id Identity, presigned bool) (*Request, *Error) {
	out := &Request{Identity: id, ContentLength: r.ContentLength, Trailer: noTrailer, Presigned: presigned}
	switch payload := r.Header.Get("X-Amz-Content-Sha256"); payload {
	case "", UnsignedPayload:
		out.PayloadHash = payload
		out.Body = &plainReader{body: r.Body, remaining: r.ContentLength}
	case StreamingPayload, StreamingPayloadTrailer, StreamingUnsignedPayloadTrailer:
		return nil, newErr(CodeInvalidRequest, "aws-chunked uploads (%s) require Signature Version 4", payload)
	default:
		digest, err := hex.DecodeString(payload)
		if err != nil || len(digest) != 32 {
			return nil, newErr(CodeInvalidArgument, "x-amz-content-sha256 must be UNSIGNED-PAYLOAD or a valid sha256 value")
		}
		out.PayloadHash = payload
		out.Body = newHashReader(r.Body, digest, r.ContentLength)
	}
	return out, nil
}

func signatureMismatch() *Error {
	return newErr(CodeSignatureDoesNotMatch, "%s", msgSignatureDoesNotMatch)
}

// signV2 is Base64(HMAC-SHA1(key, stringToSign)).
func signV2(key []byte, stringToSign string) string {
	m := hmac.New(sha1.New, key)
	m.Write([]byte(stringToSign))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// stringToSignV2 assembles the SigV2 string to sign; amz holds the
// canonicalized "name:value" lines, already sorted.
func stringToSignV2(method, md5, ctype, date string, amz []string, resource string) string {
	var b strings.Builder
	b.WriteString(method)
	b.WriteByte('\n')
	b.WriteString(md5)
	b.WriteByte('\n')
	b.WriteString(ctype)
	b.WriteByte('\n')
	b.WriteString(date)
	b.WriteByte('\n')
	for _, line := range amz {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteString(resource)
	return b.String()
}

// amzHeadersV2 returns the CanonicalizedAmzHeaders lines: every x-amz-*
// header, name lower-cased, repeated headers joined with "," (each value
// trimmed), sorted by name. extra adds presigned-URL query parameters for
// names the request does not carry as headers. dropAmzDate leaves
// x-amz-date out (one of the Date layouts, see verifyHeaderV2).
func amzHeadersV2(h http.Header, extra url.Values, dropAmzDate bool) []string {
	// Iterate in sorted key order so that values of keys that fold to the
	// same lower-case name are joined deterministically.
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vals := make(map[string][]string)
	for _, k := range keys {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, "x-amz-") || (dropAmzDate && lk == "x-amz-date") {
			continue
		}
		vals[lk] = append(vals[lk], h[k]...)
	}
	for lk, vs := range extra {
		if _, sent := vals[lk]; sent || !strings.HasPrefix(lk, "x-amz-") {
			continue
		}
		vals[lk] = vs
	}
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	sort.Strings(names)
	lines := make([]string, len(names))
	for i, n := range names {
		vs := vals[n]
		trimmed := make([]string, len(vs))
		for j, v := range vs {
			trimmed[j] = strings.TrimSpace(v)
		}
		lines[i] = n + ":" + strings.Join(trimmed, ",")
	}
	return lines
}

// canonicalResourceV2 builds the CanonicalizedResource: "/bucket" for a
// virtual-host-style request, the path exactly as sent ("/" when empty),
// then the sub-resources in the query, sorted by name, with their values
// decoded ("?acl&versionId=v1").
func canonicalResourceV2(bucketPrefix, rawPath, rawQuery string) string {
	if rawPath == "" {
		rawPath = "/"
	}
	type pair struct{ k, v string }
	var subs []pair
	for part := range strings.SplitSeq(rawQuery, "&") {
		if part == "" {
			continue
		}
		k, val, _ := strings.Cut(part, "=")
		k = pathUnescape(k)
		if !subresourcesV2[k] {
			continue
		}
		subs = append(subs, pair{k, pathUnescape(val)})
	}
	if len(subs) == 0 {
		return bucketPrefix + rawPath
	}
	sort.SliceStable(subs, func(i, j int) bool { return subs[i].k < subs[j].k })
	var b strings.Builder
	b.WriteString(bucketPrefix)
	b.WriteString(rawPath)
	for i, s := range subs {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(s.k)
		if s.v != "" {
			b.WriteByte('=')
			b.WriteString(s.v)
		}
	}
	return b.String()
}

// pathUnescape decodes %XX escapes and, unlike query decoding, keeps '+'
// as is: signers (botocore) sign values decoded that way. An invalid
// escape is kept as sent, which can only cause a mismatch.
func pathUnescape(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	if d, err := url.PathUnescape(s); err == nil {
		return d
	}
	return s
}

// rawPathOf returns the request path exactly as the client sent it (SigV2
// signs it undecoded), falling back to the URL's escaped path for requests
// built in-process.
func rawPathOf(r *http.Request) string {
	if u := r.RequestURI; strings.HasPrefix(u, "/") {
		p, _, _ := strings.Cut(u, "?")
		return p
	}
	return r.URL.EscapedPath()
}

func rawQueryOf(r *http.Request) string {
	if r.URL == nil {
		return ""
	}
	return r.URL.RawQuery
}

// vhostBucket returns "/bucket" when the request addresses its bucket in the
// Host header (BUCKET.Domain), as the S3 layer resolves it, else "".
func (v *Verifier) vhostBucket(r *http.Request) string {
	domain := strings.ToLower(strings.TrimSuffix(v.Domain, "."))
	if domain == "" {
		return ""
	}
	host := strings.ToLower(r.Host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if b, ok := strings.CutSuffix(host, "."+domain); ok && b != "" {
		return "/" + b
	}
	return ""
}

// headerJoined returns a header's values, each trimmed, joined with ",";
// "" when absent.
func headerJoined(h http.Header, name string) string {
	vs := h.Values(name)
	switch len(vs) {
	case 0:
		return ""
	case 1:
		return strings.TrimSpace(vs[0])
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strings.TrimSpace(v)
	}
	return strings.Join(parts, ",")
}

// httpDateLayouts are the forms a SigV2 Date or x-amz-date may take: the
// RFC 2616 formats, RFC 1123 with a numeric zone (used in AWS's examples)
// and the ISO 8601 basic form of SigV4.
var httpDateLayouts = []string{
	http.TimeFormat, time.RFC1123, time.RFC1123Z, time.RFC850, time.ANSIC, amzDateFormat,
}

// parseHTTPDate reads a Date or SigV2 x-amz-date. A date before the
// Unix epoch is no valid request date: S3 answers it AccessDenied, not
// RequestTimeTooSkewed (s3-tests' *_bad_date_before_epoch_aws2).
func parseHTTPDate(s string) (time.Time, bool) {
	if s == "" || len(s) > 64 {
		return time.Time{}, false
	}
	for _, layout := range httpDateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Before(time.Unix(0, 0)) {
				return time.Time{}, false
			}
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
