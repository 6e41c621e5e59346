package s3api

import (
	"errors"
	"io"
	"net/http"
)

// exactBody hands the engine exactly the declared number of bytes and,
// as soon as the last one is delivered, reads the underlying body on to
// EOF. That final read is where the verifier checks the payload hash,
// the last chunk signature and the trailer, and where trailers become
// available; an engine that stops after size bytes would otherwise commit
// data whose verification never ran. On failure the read that would have
// delivered the last bytes returns (0, err) instead: a caller using
// io.ReadFull would silently drop an error that came with a full buffer.
//
// A remaining of -1 is a body of unknown size (plain HTTP chunked
// transfer without a Content-Length): it is passed through as it comes
// until EOF, which is where its verification runs, so nothing needs
// buffering and the size is learned at the end.
type exactBody struct {
	r         io.Reader
	remaining int64
	done      bool
	err       error // final result once done: io.EOF or the failure
}

func newExactBody(r io.Reader, size int64) *exactBody {
	return &exactBody{r: r, remaining: size}
}

func (b *exactBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, b.err
	}
	if b.remaining < 0 {
		n, err := b.r.Read(p)
		switch {
		case errors.Is(err, io.EOF):
			b.done, b.err = true, io.EOF
			return n, io.EOF
		case err != nil:
			b.done, b.err = true, err
			return 0, err
		}
		return n, nil
	}
	if b.remaining == 0 {
		b.finish()
		return 0, b.err
	}
	if int64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	n, err := b.r.Read(p)
	b.remaining -= int64(n)
	switch {
	case errors.Is(err, io.EOF):
		if b.remaining > 0 {
			b.done, b.err = true, io.ErrUnexpectedEOF
			return 0, b.err
		}
		// EOF exactly at the end: verification already ran.
		b.done, b.err = true, io.EOF
		return n, nil
	case err != nil:
		// Drop the bytes: the write fails anyway, and a (n, err) pair
		// that fills the caller's buffer would be lost by io.ReadFull.
		b.done, b.err = true, err
		return 0, err
	}
	if b.remaining == 0 {
		b.finish()
		if !errors.Is(b.err, io.EOF) {
			return 0, b.err
		}
	}
	return n, nil
}

// finish reads to EOF; any byte beyond the declared size is an error.
func (b *exactBody) finish() {
	b.done = true
	var buf [512]byte
	for {
		n, err := b.r.Read(buf[:])
		if n > 0 {
			b.err = errorf("IncompleteBody", http.StatusBadRequest,
				"The request body is longer than the declared content length.")
			return
		}
		if err != nil {
			b.err = err
			return
		}
	}
}

// drain makes sure the body has been read to EOF (so trailers are in)
// and reports the verification result.
func (b *exactBody) drain() error {
	if !b.done {
		if _, err := io.Copy(io.Discard, b); err != nil {
			return err
		}
	}
	if errors.Is(b.err, io.EOF) {
		return nil
	}
	return b.err
}
