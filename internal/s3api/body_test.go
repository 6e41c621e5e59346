package s3api

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// eofErrReader yields data, then fails where a verifier would report a
// bad payload hash: at EOF.
type eofErrReader struct {
	r   io.Reader
	err error
}

func (e *eofErrReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, e.err
	}
	return n, err
}

func TestExactBody(t *testing.T) {
	bad := errors.New("payload hash mismatch")
	// A reader that stops after exactly size bytes still sees the failure.
	b := newExactBody(&eofErrReader{r: strings.NewReader("hello"), err: bad}, 5)
	buf := make([]byte, 5)
	n, err := io.ReadFull(b, buf)
	if n == 5 || !errors.Is(err, bad) {
		t.Fatalf("ReadFull: %d %v, want the verifier's error and a short read", n, err)
	}
	// Clean body: all bytes then EOF, drain is nil.
	b = newExactBody(strings.NewReader("hello"), 5)
	got, err := io.ReadAll(b)
	if string(got) != "hello" || err != nil || b.drain() != nil {
		t.Fatalf("clean: %q %v", got, err)
	}
	// Short body.
	b = newExactBody(strings.NewReader("hel"), 5)
	if _, err := io.ReadAll(b); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short: %v", err)
	}
	// Longer than declared.
	b = newExactBody(strings.NewReader("hello world"), 5)
	if _, err := io.ReadAll(b); err == nil || toAPIError(err).Code != "IncompleteBody" {
		t.Fatalf("long: %v", err)
	}
	// Empty body with a failing verifier.
	b = newExactBody(&eofErrReader{r: strings.NewReader(""), err: bad}, 0)
	if err := b.drain(); !errors.Is(err, bad) {
		t.Fatalf("empty drain: %v", err)
	}
}
