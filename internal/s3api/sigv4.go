package s3api

import (
	"errors"
	"io"
	"net/http"

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
	res := &AuthResult{
		Caller: Caller{
			Anonymous:   req.Anonymous,
			AccessKey:   req.Identity.AccessKey,
			DisplayName: req.Identity.DisplayName,
			Root:        req.Identity.Root && !req.Anonymous,
		},
		ContentLength: req.ContentLength,
		Trailer:       req.Trailer,
	}
	if req.Body != nil {
		res.Body = authBody{req.Body}
	}
	return res, nil
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
