package s3api

import (
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"github.com/shardstore/shardstore/internal/hashing"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/engine"
)

// storedHeaders are the system headers that round-trip with an object.
var storedHeaders = []string{"Content-Encoding", "Content-Disposition", "Content-Language", "Cache-Control", "Expires"}

// parseContentMD5 decodes Content-MD5; nil when absent.
func parseContentMD5(h http.Header) ([]byte, error) {
	v, ok := h["Content-Md5"]
	if !ok {
		return nil, nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(strings.Join(v, "")))
	if err != nil || len(raw) != md5.Size {
		return nil, errorf("InvalidDigest", http.StatusBadRequest, "The Content-MD5 you specified was invalid.")
	}
	return raw, nil
}

// checksumAlgorithms maps S3 checksum algorithm names to digest sizes:
// every algorithm the hashing package computes.
var checksumAlgorithms = func() map[string]int {
	m := map[string]int{}
	for _, alg := range hashing.ChecksumAlgorithms {
		n, err := hashing.ChecksumSize(alg)
		if err != nil {
			panic(err) // a name hashing lists but cannot compute: a build defect
		}
		m[alg] = n
	}
	return m
}()

// errUnsupportedChecksum is S3's answer to an algorithm it does not know.
func errUnsupportedChecksum() error {
	return errInvalidRequest("Checksum algorithm provided is unsupported. Please try again with any of the valid types: [%s]",
		strings.Join(hashing.ChecksumAlgorithms, ", "))
}

// checksumHeaderNotValue are x-amz-checksum-* headers that carry no
// checksum value.
var checksumHeaderNotValue = map[string]bool{"mode": true, "algorithm": true, "type": true}

// checksumHeader is the header carrying alg's value.
func checksumHeader(alg string) string { return "x-amz-checksum-" + strings.ToLower(alg) }

// checksumSpec is the flexible checksum a request carries.
type checksumSpec struct {
	alg     string // upper-case algorithm, "" for none
	value   string // header value; "" when it comes in a trailer
	trailer bool   // value arrives in the x-amz-trailer
}

// validChecksumValue reports whether v is base64 of the right size.
func validChecksumValue(alg, v string) bool {
	raw, err := base64.StdEncoding.DecodeString(v)
	return err == nil && len(raw) == checksumAlgorithms[alg]
}

// parseChecksum reads x-amz-checksum-*, x-amz-trailer and
// x-amz-sdk-checksum-algorithm the way S3 does.
func parseChecksum(h http.Header) (checksumSpec, error) {
	var cs checksumSpec
	var err error
	if cs.alg, cs.value, err = checksumHeaderValue(h, validChecksumValue); err != nil {
		return cs, err
	}
	if t := h.Get("X-Amz-Trailer"); t != "" {
		for _, name := range strings.Split(t, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			alg, ok := strings.CutPrefix(name, "x-amz-checksum-")
			if !ok {
				continue
			}
			alg = strings.ToUpper(alg)
			if _, known := checksumAlgorithms[alg]; !known {
				return cs, errInvalidRequest("The value specified in the x-amz-trailer header is not supported")
			}
			if cs.alg != "" {
				return cs, errInvalidRequest("Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
			}
			cs.alg, cs.trailer = alg, true
		}
	}
	if sdk := strings.ToUpper(strings.TrimSpace(h.Get("X-Amz-Sdk-Checksum-Algorithm"))); sdk != "" {
		if _, known := checksumAlgorithms[sdk]; !known {
			return cs, errUnsupportedChecksum()
		}
		if cs.alg == "" {
			// The SDK named an algorithm without sending a value: compute
			// and store it, which is what the client wants back later.
			cs.alg = sdk
		} else if cs.alg != sdk {
			return cs, errInvalidRequest("Value for x-amz-sdk-checksum-algorithm header is invalid.")
		}
	}
	return cs, nil
}

// checksumHeaderValue finds the one x-amz-checksum-<algorithm> header
// carrying a value and checks it with valid: the S3 errors for a header
// of an unknown algorithm, for several, and for a malformed value.
func checksumHeaderValue(h http.Header, valid func(alg, v string) bool) (alg, value string, err error) {
	// A checksum header of an algorithm this server does not compute
	// must not be stored unverified.
	for name := range h {
		lower := strings.ToLower(name)
		if a, ok := strings.CutPrefix(lower, "x-amz-checksum-"); ok && !checksumHeaderNotValue[a] {
			if _, known := checksumAlgorithms[strings.ToUpper(a)]; !known {
				return "", "", errUnsupportedChecksum()
			}
		}
	}
	for _, a := range hashing.ChecksumAlgorithms {
		v := h.Get(checksumHeader(a))
		if v == "" {
			continue
		}
		if alg != "" {
			return "", "", errInvalidRequest("Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
		}
		if !valid(a, v) {
			return "", "", errInvalidRequest("Value for %s header is invalid.", checksumHeader(a))
		}
		alg, value = a, v
	}
	return alg, value, nil
}

// parseChecksumType reads x-amz-checksum-type: "" when absent, else
// FULL_OBJECT or COMPOSITE (any case, as S3 accepts).
func parseChecksumType(h http.Header) (string, error) {
	v, ok := h["X-Amz-Checksum-Type"]
	if !ok {
		return "", nil
	}
	t, err := hashing.CanonicalChecksumType(strings.Join(v, ","))
	if err != nil {
		return "", errInvalidRequest("Value for x-amz-checksum-type header is invalid.")
	}
	return t, nil
}

// parseCreateChecksum reads the checksum algorithm and type of a
// CreateMultipartUpload and refuses, with S3's messages, the
// combinations S3 does not allow. The type is S3's default for the
// algorithm when none is asked for.
func parseCreateChecksum(h http.Header) (alg, typ string, err error) {
	if v := h.Get("X-Amz-Checksum-Algorithm"); v != "" {
		alg = strings.ToUpper(strings.TrimSpace(v))
		if _, ok := checksumAlgorithms[alg]; !ok {
			return "", "", errUnsupportedChecksum()
		}
	}
	if typ, err = parseChecksumType(h); err != nil {
		return "", "", err
	}
	switch {
	case typ == "" && alg == "":
	case alg == "":
		return "", "", errInvalidRequest("The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.")
	case typ == "":
		typ = hashing.DefaultChecksumType(alg)
	case !hashing.SupportsChecksumType(alg, typ):
		return "", "", errInvalidRequest("The %s checksum type cannot be used with the %s checksum algorithm.", typ, strings.ToLower(alg))
	}
	return alg, typ, nil
}

// validObjectChecksum reports whether v is a whole-object checksum a
// CompleteMultipartUpload may carry: base64 of the right size, with or
// without a COMPOSITE checksum's "-N" part count.
func validObjectChecksum(alg, v string) bool {
	_, _, err := hashing.ParseObjectChecksum(alg, v)
	return err == nil
}

// expected returns the function the engine calls after the body is read
// to get the client's checksum (from the header or the trailer).
func (cs checksumSpec) expected(q *request) func() (string, error) {
	switch {
	case cs.alg == "":
		return nil
	case cs.value != "":
		v := cs.value
		return func() (string, error) { return v, nil }
	case cs.trailer:
		return func() (string, error) {
			// Trailers arrive only after the body's EOF.
			if q.exact != nil {
				if err := q.exact.drain(); err != nil {
					return "", err
				}
			}
			var v string
			if q.trailer != nil {
				if t := q.trailer(); t != nil {
					v = t.Get(checksumHeader(cs.alg))
				}
			}
			if v == "" {
				return "", errInvalidRequest("The trailing %s was not received.", checksumHeader(cs.alg))
			}
			if !validChecksumValue(cs.alg, v) {
				return "", errInvalidRequest("Value for %s trailing header is invalid.", checksumHeader(cs.alg))
			}
			return v, nil
		}
	}
	return nil
}

// putOptions gathers the stored metadata of a PUT, copy or multipart
// create into bucket bi, its ACL and owner included (newObjectACL), and
// the object lock it asks for (writeLock).
func (q *request) putOptions(bi engine.BucketInfo) (engine.PutOptions, error) {
	h := q.r.Header
	opts := engine.PutOptions{
		ContentType: h.Get("Content-Type"),
		Headers:     map[string]string{},
		UserMeta:    map[string]string{},
		Owner:       q.caller.owner(),
	}
	for _, name := range storedHeaders {
		v := h.Get(name)
		if name == "Content-Encoding" {
			v = stripAWSChunked(v)
		}
		if v != "" {
			opts.Headers[name] = v
		}
	}
	metaSize := 0
	for name, vals := range h {
		lname := strings.ToLower(name)
		k, ok := strings.CutPrefix(lname, "x-amz-meta-")
		if !ok {
			continue
		}
		v := decodeMetaValue(strings.Join(vals, ","))
		opts.UserMeta[k] = v
		metaSize += len(k) + len(v)
	}
	if metaSize > engine.MaxUserMetaLen {
		return opts, errorf("MetadataTooLarge", http.StatusBadRequest,
			"Your metadata headers exceed the maximum allowed metadata size.")
	}
	switch sc := h.Get("X-Amz-Storage-Class"); sc {
	case "", "STANDARD", "REDUCED_REDUNDANCY":
		opts.StorageClass = sc
	default:
		return opts, errorf("InvalidStorageClass", http.StatusBadRequest,
			"The storage class you specified is not valid")
	}
	if q.tags != nil {
		opts.Tags = q.tags // a form's tagging field
	} else {
		tags, err := parseTaggingHeader(h.Get("X-Amz-Tagging"))
		if err != nil {
			return opts, err
		}
		opts.Tags = tags
	}
	acl, bucketOwns, err := q.newObjectACL(bi)
	if err != nil {
		return opts, err
	}
	opts.ACL = acl
	if bucketOwns {
		opts.Owner = bi.Owner
	}
	if h.Get("X-Amz-Website-Redirect-Location") != "" {
		return opts, errNotImplemented("X-Amz-Website-Redirect-Location")
	}
	if opts.Lock, err = q.writeLock(bi); err != nil {
		return opts, err
	}
	if q.sse, err = q.sseForWrite(h); err != nil {
		return opts, err
	}
	if opts.Encryption, err = q.newEncryption(bi, q.key, q.sse); err != nil {
		return opts, err
	}
	return opts, nil
}

// writeConditions reads the conditional-write headers of PutObject,
// CompleteMultipartUpload and CopyObject (its destination) into opts:
// If-None-Match: * (the key must not exist), If-None-Match with ETags
// (the current ETag must not be listed) and If-Match (the key must exist,
// 404 NoSuchKey otherwise, with a listed ETag or *). The engine checks
// them under the key's lock, atomically with the commit.
func writeConditions(h http.Header, opts *engine.PutOptions) {
	if inm := strings.TrimSpace(h.Get("If-None-Match")); inm == "*" {
		opts.IfNoneMatchAny = true
	} else if inm != "" {
		opts.IfNoneMatch = inm
	}
	if im := strings.TrimSpace(h.Get("If-Match")); im != "" {
		opts.IfMatch = im
	}
}

// deleteConditions reads a DeleteObject's conditional headers: If-Match
// (an ETag, a list, or *), x-amz-if-match-last-modified-time (an HTTP
// date) and x-amz-if-match-size (bytes). nil when none is sent; a bad
// date or size is 400 InvalidArgument rather than a condition ignored,
// since ignoring it would delete what the caller meant to protect.
func deleteConditions(h http.Header) (*engine.DeleteConditions, error) {
	var c engine.DeleteConditions
	set := false
	if im := strings.TrimSpace(h.Get("If-Match")); im != "" {
		c.IfMatch, set = im, true
	}
	if v := h.Get("X-Amz-If-Match-Last-Modified-Time"); v != "" {
		t, err := http.ParseTime(strings.TrimSpace(v))
		if err != nil {
			return nil, errInvalidArgument("Invalid x-amz-if-match-last-modified-time: %q", v)
		}
		c.ModTime, set = t, true
	}
	if v := h.Get("X-Amz-If-Match-Size"); v != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return nil, errInvalidArgument("Invalid x-amz-if-match-size: %q", v)
		}
		c.Size, c.HasSize, set = n, true, true
	}
	if !set {
		return nil, nil
	}
	return &c, nil
}

// stripAWSChunked removes the aws-chunked transfer coding S3 clients put in
// Content-Encoding: it describes the request, not the object. The other
// codings are kept as sent, separators included ("deflate, gzip" stays
// "deflate, gzip", as S3 answers it).
func stripAWSChunked(v string) string {
	if v == "" {
		return ""
	}
	var keep []string
	for _, p := range strings.Split(v, ",") {
		if t := strings.TrimSpace(p); t != "" && !strings.EqualFold(t, "aws-chunked") {
			keep = append(keep, p)
		}
	}
	return strings.TrimSpace(strings.Join(keep, ","))
}

// parseHTTPTime parses an HTTP date; ok is false for absent or bad ones
// (S3 ignores unparsable conditional dates).
func parseHTTPTime(v string) (*time.Time, bool) {
	if v == "" {
		return nil, false
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return nil, false
	}
	return &t, true
}

// conditions reads If-* headers, or x-amz-copy-source-if-* with prefix.
func conditions(h http.Header, prefix string) engine.Conditions {
	var c engine.Conditions
	c.IfMatch = strings.TrimSpace(h.Get(prefix + "If-Match"))
	c.IfNoneMatch = strings.TrimSpace(h.Get(prefix + "If-None-Match"))
	if t, ok := parseHTTPTime(h.Get(prefix + "If-Modified-Since")); ok {
		c.IfModifiedSince = t
	}
	if t, ok := parseHTTPTime(h.Get(prefix + "If-Unmodified-Since")); ok {
		c.IfUnmodifiedSince = t
	}
	return c
}

// parseRange parses a single HTTP byte range. ok is false when the header
// is absent or not a single well-formed range, which S3 treats as no range.
// A nil range with ok true is the unsatisfiable zero-length suffix
// "bytes=-0".
func parseRange(v string) (*engine.Range, bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(v), "bytes=")
	if !found || strings.Contains(spec, ",") {
		return nil, false
	}
	first, last, found := strings.Cut(spec, "-")
	if !found {
		return nil, false
	}
	first, last = strings.TrimSpace(first), strings.TrimSpace(last)
	if first == "" {
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return nil, false
		}
		if n == 0 {
			// A zero-length suffix can never be satisfied; the nil range
			// with ok=true tells the caller to answer InvalidRange.
			return nil, true
		}
		return &engine.Range{Start: -n, End: -1}, true
	}
	a, err := strconv.ParseInt(first, 10, 64)
	if err != nil || a < 0 {
		return nil, false
	}
	if last == "" {
		return &engine.Range{Start: a, End: -1}, true
	}
	b, err := strconv.ParseInt(last, 10, 64)
	if err != nil || b < a {
		return nil, false
	}
	return &engine.Range{Start: a, End: b}, true
}

// quoteETag returns an ETag in the quoted form S3 headers and XML use.
func quoteETag(etag string) string {
	if strings.HasPrefix(etag, `"`) {
		return etag
	}
	return `"` + etag + `"`
}

// trimETag strips quotes (and a weak prefix) from a client-sent ETag.
func trimETag(etag string) string {
	etag = strings.TrimPrefix(strings.TrimSpace(etag), "W/")
	return strings.Trim(etag, `"`)
}

// User metadata that is not plain ASCII travels as RFC 2047 encoded
// words, as S3 documents: a value sent encoded ("=?UTF-8?B?...?=" or
// "=?UTF-8?Q?...?=", which is how botocore users must send it) is decoded
// before it is stored, and a stored value with bytes outside printable
// ASCII (sent raw by clients such as aws-sdk-go-v2) is returned encoded,
// so every client can carry it in a header and decode it.
func decodeMetaValue(v string) string {
	if !strings.Contains(v, "=?") {
		return v
	}
	d, err := new(mime.WordDecoder).DecodeHeader(v)
	if err != nil {
		return v
	}
	return d
}

func encodeMetaValue(v string) string {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c >= 0x7f || (c < 0x20 && c != '\t') {
			return mime.BEncoding.Encode("UTF-8", v)
		}
	}
	return v
}

// setObjectHeaders writes the headers describing an object on GET/HEAD.
// partial is true when a Range or partNumber selected some of the bytes.
func (q *request) setObjectHeaders(oi engine.ObjectInfo, partial bool) {
	h := q.w.Header()
	ct := oi.ContentType
	if ct == "" {
		ct = "binary/octet-stream"
	}
	h.Set("Content-Type", ct)
	h.Set("ETag", quoteETag(oi.ETag))
	h.Set("Last-Modified", oi.ModTime.UTC().Format(http.TimeFormat))
	h.Set("Accept-Ranges", "bytes")
	for _, name := range storedHeaders {
		if v := oi.Headers[name]; v != "" {
			h.Set(name, v)
		}
	}
	for k, v := range oi.UserMeta {
		// Lower-case, as S3 sends them: clients such as botocore return
		// metadata names exactly as they appear on the wire.
		h["x-amz-meta-"+strings.ToLower(k)] = []string{encodeMetaValue(v)}
	}
	if oi.StorageClass != "" && oi.StorageClass != "STANDARD" {
		h.Set("X-Amz-Storage-Class", oi.StorageClass)
	}
	// Only multipart objects (ETag "md5-N") report a part count.
	if len(oi.Parts) > 0 && strings.Contains(oi.ETag, "-") {
		h.Set("X-Amz-Mp-Parts-Count", strconv.Itoa(len(oi.Parts)))
	}
	// The stored checksum covers the whole object, so like S3 it is not
	// sent for a range (clients would fail validating the slice).
	if !partial && strings.EqualFold(q.r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED") && oi.Checksum.Algorithm != "" {
		h.Set(checksumHeader(oi.Checksum.Algorithm), oi.Checksum.Value)
		if oi.Checksum.Type != "" {
			h.Set("X-Amz-Checksum-Type", oi.Checksum.Type)
		}
	}
}

// setPartChecksum adds, on a GET or HEAD with partNumber and checksum
// mode, the checksum of the part returned, as S3 does: a COMPOSITE
// object's part checksum with type COMPOSITE, and the object's own
// checksum when the part is the whole object (part 1 of a single PUT or
// of a one-part FULL_OBJECT upload). For a part of a FULL_OBJECT object
// of several parts S3 sends none; shardstore sends the part's CRC, which
// holds for the bytes returned (docs/conformance.md).
func (q *request) setPartChecksum(oi engine.ObjectInfo, part int) {
	if part <= 0 || oi.Checksum.Algorithm == "" || !strings.EqualFold(q.r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED") {
		return
	}
	h := q.w.Header()
	if len(oi.Parts) == 0 || (len(oi.Parts) == 1 && oi.Checksum.Type != hashing.Composite) {
		if part == 1 {
			setChecksumResponse(h, oi.Checksum)
		}
		return
	}
	for _, p := range oi.Parts {
		if p.Number == part && p.Checksum != "" {
			h.Set(checksumHeader(oi.Checksum.Algorithm), p.Checksum)
			if oi.Checksum.Type == hashing.Composite {
				h.Set("X-Amz-Checksum-Type", hashing.Composite)
			}
		}
	}
}

// responseOverrides applies response-* query parameters to a GET answer.
func (q *request) responseOverrides() error {
	pairs := [][2]string{
		{"response-content-type", "Content-Type"},
		{"response-content-language", "Content-Language"},
		{"response-expires", "Expires"},
		{"response-cache-control", "Cache-Control"},
		{"response-content-disposition", "Content-Disposition"},
		{"response-content-encoding", "Content-Encoding"},
	}
	for _, p := range pairs {
		v, ok := q.query[p[0]]
		if !ok {
			continue
		}
		if q.caller.Anonymous {
			return errInvalidRequest("Request specific response headers cannot be used for anonymous GET requests.")
		}
		q.w.Header().Set(p[1], strings.Join(v, ","))
	}
	return nil
}

// intParam parses an optional non-negative integer query parameter.
func (q *request) intParam(name string, def int) (int, error) {
	v, ok := q.query[name]
	if !ok || len(v) == 0 || v[0] == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v[0])
	if err != nil || n < 0 {
		return 0, errInvalidArgument("Provided %s not an integer or within integer range", name)
	}
	return n, nil
}

// param returns the first value of a query parameter.
func (q *request) param(name string) string {
	if v := q.query[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// setChecksumResponse adds the stored checksum to a write answer.
func setChecksumResponse(h http.Header, c engine.Checksum) {
	if c.Algorithm == "" || c.Value == "" {
		return
	}
	h.Set(checksumHeader(c.Algorithm), c.Value)
	if c.Type != "" {
		h.Set("X-Amz-Checksum-Type", c.Type)
	}
}

// String for debugging a checksum spec in logs.
func (cs checksumSpec) String() string {
	return fmt.Sprintf("%s(trailer=%v)", cs.alg, cs.trailer)
}
