package auth

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Bounds of the aws-chunked decoder. Chunk data is streamed, never
// buffered, so a large chunk costs no memory; the limits exist so hostile
// framing is refused early and every allocation stays small and fixed.
const (
	maxChunkLineLen  = 4 << 10 // a chunk header line is ~100 bytes in practice
	maxTrailerLines  = 32      // trailer lines, empty ones included
	maxTrailers      = 16      // distinct trailing headers
	maxChunkSize     = 5 << 30 // S3's largest single PUT
	maxChunkHexLen   = 16
	maxTrailingSlack = 4 // stray CR/LF bytes tolerated after the trailer section
	chunkBufferSize  = 64 << 10
)

type chunkState int

const (
	stHeader chunkState = iota // expecting a chunk header line
	stData                     // inside chunk data
	stDone                     // everything verified; io.EOF
)

// chunkedOptions configures a chunkedReader.
type chunkedOptions struct {
	signed   bool // chunk and trailer signatures present (STREAMING-AWS4-HMAC-SHA256-*)
	trailer  bool // a trailer section follows the final chunk
	key      []byte
	amzDate  string
	scope    scope
	seedSig  string
	declared int64    // x-amz-decoded-content-length, -1 when unknown
	expect   []string // lower-case names announced in x-amz-trailer
}

// chunkedReader decodes an aws-chunked body:
//
//	signed:   hex-size;chunk-signature=SIG\r\n DATA \r\n ... 0;chunk-signature=SIG\r\n
//	unsigned: hex-size\r\n DATA \r\n ... 0\r\n
//
// followed, without a trailer, by \r\n, or, with a trailer, by lines
// "name:value" (terminated by \n or \r\n), for signed bodies a line
// "x-amz-trailer-signature:SIG", and an empty line. Each chunk signature is
// HMAC(key, "AWS4-HMAC-SHA256-PAYLOAD\n" date "\n" scope "\n" previous-sig
// "\n" hex(sha256("")) "\n" hex(sha256(data))), chained from the seed
// signature of the Authorization header; the trailer signature is
// HMAC(key, "AWS4-HMAC-SHA256-TRAILER\n" date "\n" scope "\n" last-chunk-sig
// "\n" hex(sha256(trailer lines as "name:value\n"))).
//
// Data is returned as it is read; the chunk's signature is checked before
// the next chunk header is accepted, and io.EOF is returned only after the
// final chunk, the trailer and the declared length all checked out.
type chunkedReader struct {
	opt       chunkedOptions
	body      io.Closer
	br        *bufio.Reader
	state     chunkState
	remaining int64  // bytes left in the current chunk
	chunkSig  string // signature announced by the current chunk header
	prevSig   string
	total     int64
	h         hash.Hash
	err       error // sticky

	mu      sync.Mutex
	trailer http.Header // set once the body is fully verified
}

func newChunkedReader(body io.Reader, opt chunkedOptions) *chunkedReader {
	c := &chunkedReader{
		opt:     opt,
		br:      bufio.NewReaderSize(body, chunkBufferSize),
		prevSig: opt.seedSig,
		h:       sha256.New(),
	}
	if cl, ok := body.(io.Closer); ok {
		c.body = cl
	}
	return c
}

// newChunkedFromRequest sets up the decoder for a verified streaming request.
func newChunkedFromRequest(r *http.Request, mode string, key []byte, amzDate string, s scope, seedSig string) (*chunkedReader, *Error) {
	declared, err := parseDecodedLength(r)
	if err != nil {
		return nil, err
	}
	signed := mode != StreamingUnsignedPayloadTrailer
	if declared < 0 && signed {
		return nil, newErr(CodeInvalidRequest, "x-amz-decoded-content-length is required with x-amz-content-sha256 %s", mode)
	}
	opt := chunkedOptions{
		signed:   signed,
		trailer:  mode != StreamingPayload,
		key:      key,
		amzDate:  amzDate,
		scope:    s,
		seedSig:  seedSig,
		declared: declared,
	}
	if opt.trailer {
		for _, v := range r.Header.Values("X-Amz-Trailer") {
			for name := range strings.SplitSeq(v, ",") {
				name = strings.ToLower(strings.TrimSpace(name))
				if name == "" {
					continue
				}
				if !isLowerToken(name) || len(opt.expect) >= maxTrailers {
					return nil, newErr(CodeInvalidArgument, "x-amz-trailer must list at most %d header names", maxTrailers)
				}
				opt.expect = append(opt.expect, name)
			}
		}
	}
	body := io.Reader(http.NoBody)
	if r.Body != nil {
		body = r.Body
	}
	return newChunkedReader(body, opt), nil
}

func malformed(format string, args ...any) *Error {
	return newErr(CodeInvalidRequest, "malformed aws-chunked encoding: "+format, args...)
}

// Read implements io.Reader.
func (c *chunkedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	for {
		switch c.state {
		case stDone:
			return 0, io.EOF
		case stHeader:
			if err := c.readHeader(); err != nil {
				c.err = err
				return 0, err
			}
		case stData:
			if c.remaining == 0 {
				if err := c.endChunk(); err != nil {
					c.err = err
					return 0, err
				}
				continue
			}
			if len(p) == 0 {
				return 0, nil
			}
			want := int64(len(p))
			if want > c.remaining {
				want = c.remaining
			}
			n, err := c.br.Read(p[:want])
			c.h.Write(p[:n])
			c.remaining -= int64(n)
			c.total += int64(n)
			if n > 0 {
				return n, nil
			}
			if err == nil {
				err = io.ErrNoProgress
			}
			c.err = mapReadErr(err)
			return 0, c.err
		}
	}
}

// readLine returns one line without its terminator. With strictCRLF the
// line must end in "\r\n"; otherwise a bare "\n" is accepted too (some
// clients separate trailer lines that way).
func (c *chunkedReader) readLine(strictCRLF bool) (string, error) {
	b, err := c.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) || len(b) > maxChunkLineLen {
		return "", malformed("line longer than %d bytes", maxChunkLineLen)
	}
	if err != nil {
		return "", mapReadErr(err)
	}
	b = b[:len(b)-1]
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	} else if strictCRLF {
		return "", malformed("line not terminated by CRLF")
	}
	return string(b), nil
}

// readHeader parses a chunk header line and moves to stData, or handles the
// final chunk and moves to stDone.
func (c *chunkedReader) readHeader() error {
	line, err := c.readLine(true)
	if err != nil {
		return err
	}
	sizeStr, ext, hasExt := strings.Cut(line, ";")
	if c.opt.signed {
		sig, ok := strings.CutPrefix(ext, "chunk-signature=")
		if !hasExt || !ok || !isLowerHex(sig, signatureHexLength) {
			return malformed("chunk header %q lacks a valid chunk-signature", truncate(line))
		}
		c.chunkSig = sig
	} else if hasExt {
		return malformed("unexpected chunk extension in unsigned chunk header %q", truncate(line))
	}
	if sizeStr == "" || len(sizeStr) > maxChunkHexLen {
		return malformed("invalid chunk size %q", truncate(sizeStr))
	}
	size, perr := strconv.ParseUint(sizeStr, 16, 64)
	if perr != nil {
		return malformed("invalid chunk size %q", truncate(sizeStr))
	}
	if size > maxChunkSize {
		return malformed("chunk size %d exceeds the limit of %d", size, int64(maxChunkSize))
	}
	if c.opt.declared >= 0 && c.total+int64(size) > c.opt.declared {
		return newErr(CodeInvalidRequest, "the chunk data exceeds x-amz-decoded-content-length (%d)", c.opt.declared)
	}
	c.h.Reset()
	if size > 0 {
		c.remaining = int64(size)
		c.state = stData
		return nil
	}
	return c.finish()
}

// endChunk consumes the CRLF after chunk data and checks the chunk signature.
func (c *chunkedReader) endChunk() error {
	var crlf [2]byte
	if _, err := io.ReadFull(c.br, crlf[:]); err != nil {
		return mapReadErr(err)
	}
	if crlf != [2]byte{'\r', '\n'} {
		return malformed("chunk data not followed by CRLF")
	}
	if err := c.checkChunkSig(); err != nil {
		return err
	}
	c.state = stHeader
	return nil
}

// checkChunkSig verifies the signature of the chunk whose data c.h holds.
func (c *chunkedReader) checkChunkSig() error {
	if !c.opt.signed {
		return nil
	}
	sts := chunkStringToSign(c.opt.amzDate, c.opt.scope, c.prevSig, hex.EncodeToString(c.h.Sum(nil)))
	if !macEqual(c.opt.key, sts, c.chunkSig) {
		return newErr(CodeSignatureDoesNotMatch, "%s", msgSignatureDoesNotMatch)
	}
	c.prevSig = c.chunkSig
	return nil
}

// finish handles everything after the final zero-length chunk header.
func (c *chunkedReader) finish() error {
	if err := c.checkChunkSig(); err != nil {
		return err
	}
	var trailer http.Header
	if c.opt.trailer {
		var err error
		if trailer, err = c.readTrailers(); err != nil {
			return err
		}
	} else {
		line, err := c.readLine(true)
		if err != nil {
			return err
		}
		if line != "" {
			return malformed("final chunk not followed by an empty line")
		}
	}
	if err := c.expectEOF(); err != nil {
		return err
	}
	if c.opt.declared >= 0 && c.total != c.opt.declared {
		return newErr(CodeIncompleteBody, "the decoded body has %d bytes, x-amz-decoded-content-length says %d", c.total, c.opt.declared)
	}
	if trailer == nil {
		trailer = http.Header{}
	}
	c.mu.Lock()
	c.trailer = trailer
	c.mu.Unlock()
	c.state = stDone
	return nil
}

// readTrailers parses the trailer section. Empty lines are skipped until
// the section is complete (all announced trailers seen and, when signed,
// the trailer signature), because clients differ in whether they put an
// empty line after the final chunk and between trailers; the first empty
// line after that ends the section.
func (c *chunkedReader) readTrailers() (http.Header, error) {
	trailers := http.Header{}
	var canon strings.Builder
	sawSig, lastEmpty := false, false
	complete := func() bool {
		if c.opt.signed && !sawSig {
			return false
		}
		for _, name := range c.opt.expect {
			if _, ok := trailers[http.CanonicalHeaderKey(name)]; !ok {
				return false
			}
		}
		return true
	}
	for lines := 0; ; lines++ {
		if lines >= maxTrailerLines {
			return nil, newErr(CodeMalformedTrailerError, "the trailer section has more than %d lines", maxTrailerLines)
		}
		line, err := c.readLine(false)
		if err != nil {
			var e *Error
			if errors.As(err, &e) && e.Code == CodeInvalidRequest {
				return nil, newErr(CodeMalformedTrailerError, "%s", e.Message)
			}
			if errors.As(err, &e) && e.Code == CodeIncompleteBody && lastEmpty && (!c.opt.signed || sawSig) {
				// The section was terminated but an announced trailer
				// never came: say so rather than "incomplete body".
				break
			}
			return nil, err
		}
		lastEmpty = line == ""
		if line == "" {
			if complete() {
				break
			}
			continue
		}
		if sawSig {
			return nil, newErr(CodeMalformedTrailerError, "trailing header after x-amz-trailer-signature")
		}
		name, value, ok := strings.Cut(line, ":")
		lname := strings.ToLower(name)
		if !ok || lname == "" || !isLowerToken(lname) {
			return nil, newErr(CodeMalformedTrailerError, "invalid trailer line %q", truncate(line))
		}
		if lname == "x-amz-trailer-signature" {
			if !c.opt.signed {
				return nil, newErr(CodeMalformedTrailerError, "x-amz-trailer-signature in an unsigned payload")
			}
			sig := strings.TrimSpace(value)
			sts := trailerStringToSign(c.opt.amzDate, c.opt.scope, c.prevSig, sha256Hex(canon.String()))
			if !isLowerHex(sig, signatureHexLength) || !macEqual(c.opt.key, sts, sig) {
				return nil, newErr(CodeSignatureDoesNotMatch, "%s", msgSignatureDoesNotMatch)
			}
			sawSig = true
			continue
		}
		key := http.CanonicalHeaderKey(lname)
		if _, dup := trailers[key]; dup {
			return nil, newErr(CodeMalformedTrailerError, "trailer %q appears twice", lname)
		}
		if len(trailers) >= maxTrailers {
			return nil, newErr(CodeMalformedTrailerError, "more than %d trailing headers", maxTrailers)
		}
		// The signed form is the line as sent with the name lower-cased
		// and a "\n" terminator.
		canon.WriteString(lname)
		canon.WriteByte(':')
		canon.WriteString(value)
		canon.WriteByte('\n')
		trailers[key] = []string{strings.TrimSpace(value)}
	}
	for _, name := range c.opt.expect {
		if _, ok := trailers[http.CanonicalHeaderKey(name)]; !ok {
			return nil, newErr(CodeMalformedTrailerError, "the trailer %q announced in x-amz-trailer is missing", name)
		}
	}
	return trailers, nil
}

// expectEOF requires the body to end here, tolerating a few stray CR/LF
// bytes that some clients add after the last line.
func (c *chunkedReader) expectEOF() error {
	for i := 0; ; i++ {
		b, err := c.br.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return mapReadErr(err)
		}
		if (b != '\r' && b != '\n') || i >= maxTrailingSlack {
			return malformed("unexpected data after the end of the aws-chunked body")
		}
	}
}

// Close closes the underlying body.
func (c *chunkedReader) Close() error {
	if c.body == nil {
		return nil
	}
	return c.body.Close()
}

// trailers returns a copy of the verified trailing headers, empty until the
// body has been read to io.EOF.
func (c *chunkedReader) trailers() http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.trailer == nil {
		return http.Header{}
	}
	return c.trailer.Clone()
}

// macEqual compares hex(HMAC(key, msg)) with sig in constant time.
func macEqual(key []byte, msg, sig string) bool {
	want := hex.EncodeToString(hmacSHA256(key, msg))
	return subtle.ConstantTimeCompare([]byte(want), []byte(sig)) == 1
}
