package auth

import (
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Bounds on what the parsers accept; anything larger is refused before any
// allocation proportional to it.
const (
	maxAuthHeaderLen   = 16 << 10
	maxSignedHeaders   = 128
	maxPresignExpires  = 7 * 24 * 60 * 60 // one week, in seconds
	signatureHexLength = 64
)

// authParams is what a SigV4 signature declares about itself, whether it
// arrived in the Authorization header or in presigned query parameters.
type authParams struct {
	accessKey     string
	scope         scope
	signedHeaders []string
	signature     string
	// Presigned URLs only.
	amzDate string
	expires time.Duration
}

// parseAuthorization parses
// "AWS4-HMAC-SHA256 Credential=AK/YYYYMMDD/region/s3/aws4_request, SignedHeaders=a;b, Signature=hex".
// Spaces around the comma-separated components are tolerated (clients
// differ); unknown, repeated or missing components are not.
func parseAuthorization(h string) (authParams, *Error) {
	return parseAuthorizationFor(h, serviceS3)
}

// parseAuthorizationFor parses an Authorization header whose credential
// scope must name service.
func parseAuthorizationFor(h, service string) (authParams, *Error) {
	const code = CodeAuthorizationHeaderMalformed
	var p authParams
	if len(h) > maxAuthHeaderLen {
		return p, newErr(code, "the authorization header is too long")
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(h), algorithm)
	if !ok || (rest != "" && rest[0] != ' ') {
		return p, newErr(code, "the authorization header is malformed; the authorization mechanism must be %s", algorithm)
	}
	var cred, signed, sig string
	var haveCred, haveSigned, haveSig bool
	for part := range strings.SplitSeq(rest, ",") {
		part = strings.TrimSpace(part)
		k, v, found := strings.Cut(part, "=")
		if !found {
			return p, newErr(code, "the authorization header is malformed; the component %q is not of the form key=value", truncate(part))
		}
		var dst *string
		var seen *bool
		switch k {
		case "Credential":
			dst, seen = &cred, &haveCred
		case "SignedHeaders":
			dst, seen = &signed, &haveSigned
		case "Signature":
			dst, seen = &sig, &haveSig
		default:
			return p, newErr(code, "the authorization header is malformed; unknown component %q", truncate(k))
		}
		if *seen {
			return p, newErr(code, "the authorization header is malformed; %s appears twice", k)
		}
		*dst, *seen = v, true
	}
	switch {
	case !haveCred:
		return p, newErr(code, "the authorization header is malformed; missing Credential")
	case !haveSigned:
		return p, newErr(code, "the authorization header is malformed; missing SignedHeaders")
	case !haveSig:
		return p, newErr(code, "the authorization header is malformed; missing Signature")
	}
	var err *Error
	if p.accessKey, p.scope, err = parseCredentialFor(cred, code, service); err != nil {
		return p, err
	}
	if p.signedHeaders, err = parseSignedHeaders(signed, code); err != nil {
		return p, err
	}
	if !isLowerHex(sig, signatureHexLength) {
		return p, newErr(code, "the authorization header is malformed; the signature must be %d lowercase hex characters", signatureHexLength)
	}
	p.signature = sig
	return p, nil
}

// parseCredential splits "AK/YYYYMMDD/region/service/aws4_request".
func parseCredential(v, code string) (string, scope, *Error) {
	return parseCredentialFor(v, code, serviceS3)
}

// parseCredentialFor parses a credential scope that must name service.
func parseCredentialFor(v, code, service string) (string, scope, *Error) {
	var s scope
	parts := strings.Split(v, "/")
	if len(parts) != 5 {
		return "", s, newErr(code, "the Credential is malformed; expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\"")
	}
	ak := parts[0]
	s.date, s.region, s.service = parts[1], parts[2], parts[3]
	switch {
	case ak == "":
		return "", s, newErr(code, "the Credential is malformed; the access key is empty")
	case len(s.date) != 8 || !isDigits(s.date):
		return "", s, newErr(code, "the Credential is malformed; invalid date %q", truncate(s.date))
	case s.region == "":
		return "", s, newErr(code, "the Credential is malformed; the region is empty")
	case s.service != service:
		return "", s, newErr(code, "the Credential is malformed; incorrect service %q, this endpoint belongs to %q", truncate(s.service), service)
	case parts[4] != scopeTerminator:
		return "", s, newErr(code, "the Credential is malformed; incorrect terminal %q, this endpoint uses %q", truncate(parts[4]), scopeTerminator)
	}
	if _, err := time.Parse(scopeDateFormat, s.date); err != nil {
		return "", s, newErr(code, "the Credential is malformed; invalid date %q", s.date)
	}
	return ak, s, nil
}

// parseSignedHeaders splits "a;b;c": lower-case header names, no empty or
// repeated entries.
func parseSignedHeaders(v, code string) ([]string, *Error) {
	if v == "" {
		return nil, newErr(code, "SignedHeaders is empty")
	}
	if strings.Count(v, ";") >= maxSignedHeaders {
		return nil, newErr(code, "SignedHeaders lists more than %d headers", maxSignedHeaders)
	}
	names := strings.Split(v, ";")
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if n == "" || !isLowerToken(n) {
			return nil, newErr(code, "SignedHeaders contains an invalid header name %q", truncate(n))
		}
		if seen[n] {
			return nil, newErr(code, "SignedHeaders lists %q twice", n)
		}
		seen[n] = true
	}
	return names, nil
}

// Presigned URL query parameter names.
const (
	qAlgorithm     = "X-Amz-Algorithm"
	qCredential    = "X-Amz-Credential"
	qDate          = "X-Amz-Date"
	qExpires       = "X-Amz-Expires"
	qSignedHeaders = "X-Amz-SignedHeaders"
	qSignature     = "X-Amz-Signature"
	qContentSHA256 = "X-Amz-Content-Sha256"
	qSecurityToken = "X-Amz-Security-Token"
)

// parsePresigned parses the query parameters of a SigV4 presigned URL.
func parsePresigned(q url.Values) (authParams, *Error) {
	const code = CodeAuthorizationQueryParametersError
	var p authParams
	for _, k := range []string{qAlgorithm, qCredential, qDate, qExpires, qSignedHeaders, qSignature} {
		switch len(q[k]) {
		case 0:
			return p, newErr(code, "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters; %s is missing", k)
		case 1:
		default:
			return p, newErr(code, "the query parameter %s appears more than once", k)
		}
	}
	if q.Get(qAlgorithm) != algorithm {
		return p, newErr(code, "X-Amz-Algorithm only supports %q", algorithm)
	}
	var err *Error
	if p.accessKey, p.scope, err = parseCredential(q.Get(qCredential), code); err != nil {
		return p, err
	}
	p.amzDate = q.Get(qDate)
	if _, ok := parseAmzDate(p.amzDate); !ok {
		return p, newErr(code, "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"")
	}
	// S3's answers, in S3's words: a number, not negative, and at most a
	// week. Zero passes: a URL valid for no time, answered as expired
	// (AccessDenied "Request has expired") by the caller's expiry check.
	exp := q.Get(qExpires)
	digits := strings.TrimPrefix(exp, "-")
	if len(digits) > 18 || !isDigits(digits) {
		return p, newErr(code, "X-Amz-Expires should be a number")
	}
	secs, _ := strconv.ParseInt(exp, 10, 64) // at most 18 digits: fits
	switch {
	case secs < 0:
		return p, newErr(code, "X-Amz-Expires must be non-negative")
	case secs > maxPresignExpires:
		return p, newErr(code, "X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than %d seconds", maxPresignExpires)
	}
	p.expires = time.Duration(secs) * time.Second
	if p.signedHeaders, err = parseSignedHeaders(q.Get(qSignedHeaders), code); err != nil {
		return p, err
	}
	// The signature's form is not checked: S3 answers any signature that
	// is not the right one, malformed or not, with SignatureDoesNotMatch
	// (403), and clients retry or report on that code.
	p.signature = q.Get(qSignature)
	return p, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isLowerHex reports whether s is exactly n lowercase hex digits (n < 0: any length > 0).
func isLowerHex(s string, n int) bool {
	if (n >= 0 && len(s) != n) || s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// isLowerToken reports whether s is an HTTP token without upper-case letters.
func isLowerToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// truncate shortens attacker-controlled text before it goes into a message.
func truncate(s string) string {
	const maxLen = 64
	if len(s) > maxLen {
		return s[:maxLen] + "..."
	}
	return s
}
