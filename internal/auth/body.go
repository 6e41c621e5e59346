package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"hash"
	"io"
)

// maxObjectSize is S3's largest object (5 TiB); larger declared lengths are
// refused outright.
const maxObjectSize = 5 << 40

// mapReadErr turns an error from the client's body into what the consumer
// should see: an early end of the body is S3's IncompleteBody, anything else
// (a reset connection, a server read timeout) is passed on with context.
func mapReadErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return newErr(CodeIncompleteBody, "You did not provide the number of bytes specified by the Content-Length HTTP header")
	}
	return fmt.Errorf("auth: reading request body: %w", err)
}

// plainReader passes an unsigned payload through, turning a short body into
// IncompleteBody. remaining is -1 when the length is unknown.
type plainReader struct {
	body      io.ReadCloser
	remaining int64
	err       error
}

func (p *plainReader) Read(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	if p.body == nil {
		p.err = io.EOF
		return 0, p.err
	}
	n, err := p.body.Read(b)
	if p.remaining >= 0 {
		p.remaining -= int64(n)
	}
	switch {
	case err == nil:
		return n, nil
	case err == io.EOF && p.remaining > 0:
		p.err = mapReadErr(io.ErrUnexpectedEOF)
	case err == io.EOF:
		p.err = io.EOF
	default:
		p.err = mapReadErr(err)
	}
	return n, p.err
}

func (p *plainReader) Close() error {
	if p.body == nil {
		return nil
	}
	return p.body.Close()
}

// hashReader verifies a payload against the hex SHA-256 the signature
// covered. It reports io.EOF only after the digest matched; the bytes are
// handed out as they arrive (never buffered), and a mismatch surfaces as an
// XAmzContentSHA256Mismatch error in place of io.EOF.
type hashReader struct {
	body      io.ReadCloser
	want      []byte
	h         hash.Hash
	remaining int64 // -1 when unknown
	err       error
}

func newHashReader(body io.ReadCloser, want []byte, contentLength int64) *hashReader {
	return &hashReader{body: body, want: want, h: sha256.New(), remaining: contentLength}
}

func (r *hashReader) Read(b []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	var n int
	var err error
	if r.body != nil {
		n, err = r.body.Read(b)
	} else {
		err = io.EOF
	}
	r.h.Write(b[:n])
	if r.remaining >= 0 {
		r.remaining -= int64(n)
	}
	switch {
	case err == nil:
		return n, nil
	case err == io.EOF && r.remaining > 0:
		r.err = mapReadErr(io.ErrUnexpectedEOF)
	case err == io.EOF:
		if subtle.ConstantTimeCompare(r.h.Sum(nil), r.want) == 1 {
			r.err = io.EOF
		} else {
			r.err = newErr(CodeXAmzContentSHA256Mismatch, "The provided 'x-amz-content-sha256' header does not match what was computed.")
		}
	default:
		r.err = mapReadErr(err)
	}
	// The bytes of this call are returned with the verdict: a consumer
	// following the io.Reader contract processes them and then sees the
	// error, so it still never reaches a clean EOF on bad data.
	return n, r.err
}

func (r *hashReader) Close() error {
	if r.body == nil {
		return nil
	}
	return r.body.Close()
}
