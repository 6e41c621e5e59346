package s3api

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/shardstore/shardstore/internal/auth"
)

// SigV4 authenticates requests with an auth.Verifier.
type SigV4 struct {
	Verifier *auth.Verifier
}

// Authenticate verifies r's signature (or accepts it as anonymous) and
// returns the caller with the verified body.
func (a SigV4) Authenticate(r *http.Request) (*AuthResult, error) {
	req, err := a.Verifier.Verify(r)
	if err != nil {
		return nil, authError(err)
	}
	if req.Presigned {
		promoteSignedQuery(r)
	}
	res := &AuthResult{
		Caller:        callerOf(req.Identity, req.Anonymous),
		ContentLength: req.ContentLength,
		Trailer:       req.Trailer,
		PayloadSigned: payloadSigned(req.PayloadHash),
	}
	if req.Body != nil {
		res.Body = authBody{req.Body}
	}
	return res, nil
}

// AuthenticateBearer authenticates r by its bearer token (the metrics
// endpoint's scrapers) and returns the caller.
func (a SigV4) AuthenticateBearer(r *http.Request) (Caller, error) {
	id, err := a.Verifier.VerifyBearer(r)
	if err != nil {
		return Caller{}, err
	}
	return callerOf(id, false), nil
}

// payloadSigned reports whether an x-amz-content-sha256 value makes the
// verifier check the body against the signature.
func payloadSigned(hash string) bool {
	switch hash {
	case auth.StreamingPayload, auth.StreamingPayloadTrailer:
		return true
	}
	if len(hash) != 64 {
		return false
	}
	for _, c := range hash {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// callerOf is the caller an authenticated identity makes.
func callerOf(id auth.Identity, anonymous bool) Caller {
	if anonymous {
		return Caller{Anonymous: true}
	}
	return Caller{AccessKey: id.AccessKey, DisplayName: id.DisplayName, Root: id.Root,
		User: id.User, Owner: id.Owner, Permissions: id.Permissions, Session: id.Session, Claims: id.Claims}
}

// authError turns an *auth.Error into the S3 error the client sees.
func authError(err error) error {
	var ae *auth.Error
	if errors.As(err, &ae) {
		return &Error{Code: ae.Code, Status: ae.Status, Message: ae.Message, Err: err}
	}
	return err
}

// authBody converts verification failures met while reading the body
// into *Error so that, wrapped by the engine, they still map to the
// verifier's S3 code.
type authBody struct{ io.ReadCloser }

func (b authBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF { //nolint:errorlint // io.EOF is returned unwrapped by contract
		err = authError(err)
	}
	return n, err
}

// promoteSignedQuery moves request headers that a presigner hoisted into
// the query string (botocore does so for Content-MD5, Content-Type and
// x-amz-* headers) back into the header, where the handlers read them.
// The signature covers the query, so these values are authenticated;
// headers the client really sent win.
func promoteSignedQuery(r *http.Request) {
	q := r.URL.Query()
	// In a SigV2 URL, Expires is the URL's own expiry, not the object's
	// Expires header.
	v2 := q.Has("AWSAccessKeyId")
	for k, vs := range q {
		lk := strings.ToLower(k)
		if len(vs) == 0 || !promotable(lk) || r.Header.Get(lk) != "" || (v2 && k == "Expires") {
			continue
		}
		r.Header.Set(lk, vs[0])
	}
}

func promotable(k string) bool {
	switch k {
	case "content-md5", "content-type", "cache-control", "content-disposition",
		"content-encoding", "content-language", "expires":
		return true
	}
	// Auth parameters stay in the query; everything else x-amz-* (meta,
	// acl, storage class, checksums) is a header hoisted by the signer.
	return strings.HasPrefix(k, "x-amz-") && !strings.HasPrefix(k, "x-amz-signature") &&
		k != "x-amz-algorithm" && k != "x-amz-credential" && k != "x-amz-date" &&
		k != "x-amz-expires" && k != "x-amz-signedheaders" && k != "x-amz-security-token" &&
		k != "x-amz-content-sha256"
}
