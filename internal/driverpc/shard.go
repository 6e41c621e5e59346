package driverpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/peerauth"
)

// CreateShard implements drive.Drive. The shard is one streamed request:
// what the caller writes goes through a pipe into a chunked request
// body, never buffered whole. The request asks for "100 Continue", which
// the server sends once it created the file, so CreateShard returns the
// drive's refusal (an unformatted drive, a file that exists) itself,
// after one round trip, and no data is sent to a drive that refused it.
//
// Close ends the body with a trailer holding the byte count and returns
// nil only once the server made the file durable; a server that fails
// mid-stream answers at once, and Write returns its error. Abort ends
// the body with an abort marker and waits briefly for the server to
// remove the file, then cancels the request; a cancelled or cut request
// is always aborted on the server, never committed.
func (c *Client) CreateShard(ctx context.Context, ref drive.ShardRef) (drive.FileWriter, error) {
	if c.closed.Load() {
		return nil, c.closedErr(nameCreateShard)
	}
	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	w := &shardWriter{
		c:        c,
		ctx:      ctx,
		cancel:   cancel,
		pw:       pw,
		done:     make(chan struct{}),
		accepted: make(chan struct{}),
	}
	var once sync.Once
	accept := func() { once.Do(func() { close(w.accepted) }) }
	trace := &httptrace.ClientTrace{
		// Got100Continue fires only when the transport waits for the
		// 100 itself (ExpectContinueTimeout set); Got1xxResponse sees
		// it either way.
		Got100Continue: accept,
		Got1xxResponse: func(code int, _ textproto.MIMEHeader) error {
			if code == http.StatusContinue {
				accept()
			}
			return nil
		},
	}
	q := url.Values{"id": {ref.ID}, "part": {strconv.Itoa(ref.Part)}}
	w.body = &shardBody{pr: pr, w: w}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, c.url(opShard, q), w.body)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("drive %s: %s: %w: %v", c.name, nameCreateShard, drive.ErrInvalidArgument, err)
	}
	req.Header.Set("Expect", "100-continue")
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Trailer = http.Header{trailerShardEnd: nil}
	w.body.req = req
	// A request that failed before any of its body was read (a
	// keep-alive connection the server had just closed) may be sent
	// again on another connection; the body is still untouched then.
	req.GetBody = func() (io.ReadCloser, error) {
		if w.body.read.Load() > 0 {
			return nil, errors.New("shard stream already started")
		}
		return w.body, nil
	}
	c.key.Sign(req, peerauth.Unsigned)
	go w.run(req)
	select {
	case <-w.accepted:
		return w, nil
	case <-w.done:
		// Answered without asking for the data: a refusal.
		cancel()
		if w.res == nil {
			return nil, fmt.Errorf("drive %s: %s: node %s answered before the data was sent: %w",
				c.name, nameCreateShard, c.endpoint, drive.ErrDriveFaulty)
		}
		return nil, w.res
	}
}

// abortWait bounds how long Abort waits for the server to confirm it
// removed the file; past it the request is cancelled and the server
// aborts when it sees the cut.
const abortWait = time.Second

// errAborted is what a writer's calls return after Abort.
var errAborted = errors.New("shard writer aborted")

// Writer states.
const (
	writerOpen = iota
	writerClosed
	writerAborted
)

// shardWriter is the client side of a CreateShard stream. Like the
// local writer it is used by one goroutine at a time.
type shardWriter struct {
	c      *Client
	ctx    context.Context
	cancel context.CancelFunc
	pw     *io.PipeWriter
	body   *shardBody

	// accepted is closed when the server asked for the data.
	accepted chan struct{}
	// done is closed when the request finished; res is its outcome.
	done chan struct{}
	res  error

	state int
	n     int64 // bytes written
	err   error // first failure, returned by every later call
	// end is the trailer value the body ends with; set before the pipe
	// is closed, read by the transport after it saw the pipe's EOF.
	end string
}

// run sends the request and records its outcome. When it ends, the pipe
// is closed with that outcome, so a Write blocked on a server that
// failed (or on a connection that broke) returns instead of waiting for
// a reader that is gone.
func (w *shardWriter) run(req *http.Request) {
	defer close(w.done)
	resp, err := w.c.hc.Do(req)
	switch {
	case err != nil:
		w.res = w.c.transportErr(w.ctx, nameCreateShard, err)
	case resp.StatusCode != http.StatusOK:
		w.res = w.c.statusErr(w.ctx, nameCreateShard, resp)
		resp.Body.Close()
	default:
		w.res = w.result(resp)
		resp.Body.Close()
	}
	res := w.res
	if res == nil {
		res = errors.New("shard stream finished")
	}
	w.body.pr.CloseWithError(res)
}

// result reads a 200 answer to the stream.
func (w *shardWriter) result(resp *http.Response) error {
	var r shardResult
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return w.c.transportErr(w.ctx, nameCreateShard, err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return w.c.transportErr(w.ctx, nameCreateShard, fmt.Errorf("malformed answer: %w", err))
	}
	if r.Aborted {
		return errAborted
	}
	if r.Size != w.n {
		// The server checked the count against the trailer; a
		// disagreement here is a bug on one side, and the file is
		// durable with the wrong size.
		return fmt.Errorf("drive %s: %s: node %s stored %d bytes of %d: %w",
			w.c.name, nameCreateShard, w.c.endpoint, r.Size, w.n, drive.ErrDriveFaulty)
	}
	return nil
}

// failed returns why the pipe refused data: the request's outcome.
func (w *shardWriter) failed() error {
	<-w.done
	if w.res != nil {
		return w.res
	}
	return fmt.Errorf("drive %s: %s: node %s: stream ended early: %w",
		w.c.name, nameCreateShard, w.c.endpoint, drive.ErrDriveFaulty)
}

func (w *shardWriter) check() error {
	if w.err != nil {
		return w.err
	}
	if w.state != writerOpen {
		if w.state == writerAborted {
			return errAborted
		}
		return errors.New("shard writer already closed")
	}
	return nil
}

// Write implements io.Writer.
func (w *shardWriter) Write(p []byte) (int, error) {
	if err := w.check(); err != nil {
		return 0, err
	}
	n, err := w.pw.Write(p)
	w.n += int64(n)
	if err != nil {
		w.err = w.failed()
		return n, w.err
	}
	return n, nil
}

// WriteBuffers implements drive.BuffersWriter: the buffers go into the
// stream in order (there is no writev across a network; what saves
// syscalls is the server writing its drive in large pieces).
func (w *shardWriter) WriteBuffers(bufs [][]byte) error {
	for _, b := range bufs {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// Close implements drive.FileWriter: it returns nil once the server made
// the shard durable.
func (w *shardWriter) Close() error {
	switch {
	case w.state == writerClosed:
		return w.err
	case w.state == writerAborted:
		return errAborted
	case w.err != nil:
		// A Write failed: the request is over and the server aborted.
		w.state = writerClosed
		w.cancel()
		return w.err
	}
	w.state = writerClosed
	if cerr := w.ctx.Err(); cerr != nil {
		// Cancelled: the body must not end cleanly, or the server
		// would commit a shard the caller gave up on.
		w.pw.CloseWithError(cerr)
		<-w.done
		w.err = fmt.Errorf("drive %s: %s: %w", w.c.name, nameCreateShard, cerr)
		return w.err
	}
	w.end = strconv.FormatInt(w.n, 10)
	w.pw.Close()
	<-w.done
	w.cancel()
	w.err = w.res
	return w.err
}

// Abort implements drive.FileWriter. A committed shard stays.
func (w *shardWriter) Abort() {
	if w.state == writerAborted || (w.state == writerClosed && w.err == nil) {
		return
	}
	wasOpen := w.state == writerOpen && w.err == nil
	w.state = writerAborted
	if wasOpen {
		// Asking the server to abort, rather than cutting the
		// connection, removes the file before Abort returns and keeps
		// the connection for reuse.
		w.end = shardEndAbort
		w.pw.Close()
		t := time.NewTimer(abortWait)
		select {
		case <-w.done:
		case <-t.C:
		}
		t.Stop()
	}
	w.cancel()
	w.pw.CloseWithError(errAborted)
}

// shardBody is the request body of a CreateShard stream: the pipe, then
// the end marker in the trailer. It checks that what the transport read
// is what the writer wrote before it lets the body end cleanly.
type shardBody struct {
	pr   *io.PipeReader
	w    *shardWriter
	req  *http.Request
	read atomic.Int64
}

func (b *shardBody) Read(p []byte) (int, error) {
	n, err := b.pr.Read(p)
	read := b.read.Add(int64(n))
	if err == io.EOF {
		if cerr := b.w.ctx.Err(); cerr != nil {
			// Cancelled while the body was sent: cut it, do not end
			// it with a marker the server would commit.
			return n, cerr
		}
		// The writer closed the pipe, after setting end.
		end := b.w.end
		if end != shardEndAbort && end != strconv.FormatInt(read, 10) {
			return n, fmt.Errorf("shard stream sent %d bytes, writer wrote %s", read, end)
		}
		b.req.Trailer.Set(trailerShardEnd, end)
	}
	return n, err
}

// bodyChunkSize is the most a CreateShard body sends as one HTTP chunk
// (and one write(2)): the transport's own copy moves 32 KiB at a time,
// which costs about twice the CPU per byte.
const bodyChunkSize = 256 << 10

var bodyChunkPool = sync.Pool{New: func() any { b := make([]byte, bodyChunkSize); return &b }}

// WriteTo is how the transport copies the body (io.Copy prefers it):
// what the writer puts into the pipe is gathered into chunks of up to
// bodyChunkSize.
func (b *shardBody) WriteTo(dst io.Writer) (int64, error) {
	bp := bodyChunkPool.Get().(*[]byte)
	defer bodyChunkPool.Put(bp)
	var total int64
	for {
		n, err := fill(b, *bp)
		if n > 0 {
			m, werr := dst.Write((*bp)[:n])
			total += int64(m)
			if werr != nil {
				return total, werr
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// Close does nothing: the transport closes the body when a request
// ends or fails, but the pipe is the writer's, closed by run with the
// request's outcome (and the body may be sent again, see GetBody).
func (b *shardBody) Close() error { return nil }

// OpenShard implements drive.Drive: the answer's body is the shard from
// offset. The server opens the file before it answers, so a missing
// shard is ErrNotFound here; a stream cut later fails Read with
// ErrDriveFaulty.
func (c *Client) OpenShard(ctx context.Context, ref drive.ShardRef, offset int64) (io.ReadCloser, error) {
	ctx, cancel := context.WithCancel(ctx)
	q := url.Values{"id": {ref.ID}, "part": {strconv.Itoa(ref.Part)}, "offset": {strconv.FormatInt(offset, 10)}}
	resp, err := c.call(ctx, http.MethodGet, opShard, nameOpenShard, q, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	return &shardReader{c: c, ctx: ctx, cancel: cancel, resp: resp}, nil
}

// shardReader is the client side of an OpenShard stream. Close may be
// called while a Read is blocked (it cancels the request, which ends
// the Read).
type shardReader struct {
	c      *Client
	ctx    context.Context
	cancel context.CancelFunc
	resp   *http.Response
	err    error // sticky; touched by Read only
	closed atomic.Bool
}

func (r *shardReader) Read(p []byte) (int, error) {
	if r.closed.Load() {
		return 0, fs.ErrClosed
	}
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.resp.Body.Read(p)
	switch {
	case err == nil:
	case err == io.EOF:
		r.err = io.EOF
		if t := r.resp.Trailer.Get(trailerError); t != "" {
			var we wireError
			if jerr := json.Unmarshal([]byte(t), &we); jerr != nil {
				r.err = r.c.transportErr(r.ctx, nameOpenShard, fmt.Errorf("malformed error trailer: %w", jerr))
			} else {
				r.err = r.c.remoteErr(nameOpenShard, we)
			}
		}
	case r.closed.Load():
		r.err = fs.ErrClosed
	default:
		r.err = r.c.transportErr(r.ctx, nameOpenShard, err)
	}
	return n, r.err
}

// Close ends the stream. A stream closed before its end costs its
// connection (HTTP/1.1 cannot drop the rest of an answer and keep the
// connection), which the server sees as a client gone.
func (r *shardReader) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	err := r.resp.Body.Close()
	r.cancel()
	return err
}
