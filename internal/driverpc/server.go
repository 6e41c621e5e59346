package driverpc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/peerauth"
	"github.com/shardstore/shardstore/internal/wallclock"
)

// Server serves a node's local drives to the other nodes of the cluster.
// It handles full paths under PathPrefix; the node mounts it there.
//
// The node's http.Server must not cut long requests: shard streams run
// as long as the PUT or GET they serve, so the stream handlers clear any
// read and write deadlines the server set (ReadTimeout, WriteTimeout).
// Its IdleTimeout should exceed the client's idle connection timeout
// (30 s with NewHTTPClient), so a client never sends a call on a
// connection the server is closing.
type Server struct {
	drives map[int]drive.Drive
	byPath map[string]drive.Drive // set by WithPaths (paths.go)
	key    peerauth.Key
	log    *slog.Logger
}

// NewServer serves drives, keyed by their global slot index, to peers
// that sign their requests with key. A nil log discards messages.
func NewServer(drives map[int]drive.Drive, key peerauth.Key, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{drives: maps.Clone(drives), key: key, log: log}
}

// copyBufSize is the buffer a shard stream moves data through on the
// server: one drive Write (or one response write) per buffer.
const copyBufSize = 1 << 20

// copyBufPool's buffers are aligned for direct I/O, so a local drive
// writes a received shard from them without copying it again.
var copyBufPool = sync.Pool{New: func() any { return drive.AlignedBuffer(copyBufSize) }}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, ok := strings.CutPrefix(r.URL.Path, PathPrefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	// Authentication comes first: an unsigned caller learns nothing,
	// not even which drives or operations exist.
	bodyHash, err := s.key.Verify(r, wallclock.Now())
	if err != nil {
		s.log.Warn("drive rpc: refused request", "remote", r.RemoteAddr, "path", r.URL.Path, "err", err)
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	q := r.URL.Query()
	slot, err := strconv.Atoi(q.Get("drive"))
	if err != nil {
		writeError(w, fmt.Errorf("drive slot %q: %w", q.Get("drive"), drive.ErrInvalidArgument))
		return
	}
	d, ok := s.lookup(slot, q.Get("path"))
	if !ok {
		// The caller believes this node holds a drive it does not: the
		// nodes disagree about the layout. To the caller the drive is
		// unusable, so it must look faulty (offline), not missing data.
		we, _ := toWire(fmt.Errorf("%w: this node serves no drive at slot %d, path %q (do all nodes have the same drive list?)", drive.ErrDriveFaulty, slot, q.Get("path")))
		writeWire(w, we, http.StatusNotFound)
		return
	}

	if r.Method == http.MethodPost && op == opShard {
		// The only call whose body may be unsigned: shard data is
		// streamed and carries its own bitrot checksums.
		s.createShard(w, r, d, q, bodyHash)
		return
	}
	// Every other body is small and must be signed, so a body cannot be
	// swapped under a valid signature.
	body, err := readBody(w, r, bodyHash)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			we, _ := toWire(fmt.Errorf("request body over %d bytes: %w", maxBody, drive.ErrInvalidArgument))
			writeWire(w, we, http.StatusRequestEntityTooLarge)
			return
		}
		if errors.Is(err, peerauth.ErrUnauthorized) {
			s.log.Warn("drive rpc: refused request", "remote", r.RemoteAddr, "path", r.URL.Path, "err", err)
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}

	ctx := r.Context()
	switch {
	case r.Method == http.MethodGet && op == opFormat:
		f, err := d.ReadFormat(ctx)
		writeJSON(w, f, err)
	case r.Method == http.MethodPost && op == opFormat:
		var f drive.Format
		if err := json.Unmarshal(body, &f); err != nil {
			writeError(w, fmt.Errorf("format: %w: %v", drive.ErrInvalidArgument, err))
			return
		}
		writeJSON(w, struct{}{}, d.WriteFormat(ctx, f))
	case r.Method == http.MethodGet && op == opDiskInfo:
		di, err := d.DiskInfo(ctx)
		writeJSON(w, di, err)
	case r.Method == http.MethodGet && op == opGet:
		s.get(w, r, d, q)
	case r.Method == http.MethodGet && op == opRecord:
		s.getRecord(w, r, d, q)
	case r.Method == http.MethodGet && op == opRecords:
		s.getRecords(w, r, q)
	case r.Method == http.MethodPost && op == opApplies:
		s.applyBatches(w, r, q, body)
	case r.Method == http.MethodPost && op == opApply:
		b, err := decodeBatch(bytes.NewReader(body))
		if err != nil {
			writeError(w, fmt.Errorf("%w: %v", drive.ErrInvalidArgument, err))
			return
		}
		writeJSON(w, struct{}{}, d.Apply(ctx, b))
	case r.Method == http.MethodGet && op == opScan:
		s.scan(w, r, d, q)
	case r.Method == http.MethodGet && op == opShard:
		s.openShard(w, r, d, q)
	case r.Method == http.MethodPost && op == opDelete:
		var wrefs []wireRef
		if err := json.Unmarshal(body, &wrefs); err != nil {
			writeError(w, fmt.Errorf("shard refs: %w: %v", drive.ErrInvalidArgument, err))
			return
		}
		refs := make([]drive.ShardRef, len(wrefs))
		for i, wr := range wrefs {
			refs[i] = drive.ShardRef{ID: wr.ID, Part: wr.Part}
		}
		writeJSON(w, struct{}{}, d.DeleteShards(ctx, refs))
	case r.Method == http.MethodGet && op == opWalk:
		s.walk(w, r, d)
	default:
		we, _ := toWire(fmt.Errorf("%s %s: unknown operation (a peer running another release?): %w", r.Method, op, drive.ErrInvalidArgument))
		writeWire(w, we, http.StatusNotFound)
	}
}

// readBody reads a small signed body and checks it against the hash the
// signature covers.
func readBody(w http.ResponseWriter, r *http.Request, bodyHash string) ([]byte, error) {
	if bodyHash == peerauth.Unsigned {
		return nil, fmt.Errorf("%w: this call needs a signed body", peerauth.ErrUnauthorized)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	if !strings.EqualFold(hex.EncodeToString(sum[:]), bodyHash) {
		return nil, fmt.Errorf("%w: body does not match its signed hash", peerauth.ErrUnauthorized)
	}
	return body, nil
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, d drive.Drive, q url.Values) {
	t, err := parseTable(q.Get("table"))
	if err != nil {
		writeError(w, err)
		return
	}
	v, err := d.Get(r.Context(), t, q.Get("key"))
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(v)))
	if v == nil {
		w.Header().Set(headerNil, "1")
	}
	w.WriteHeader(http.StatusOK)
	w.Write(v)
}

// getRecord answers drive.RecordReader: the record of bucket/key and the
// inline shard of its current version when the drive holds one. Only a
// drive fault on the shard fails the call; any other shard error leaves
// it to the reader, as a local read does.
func (s *Server) getRecord(w http.ResponseWriter, r *http.Request, d drive.Drive, q url.Values) {
	record, inline, err := readRecordOn(r.Context(), d, q.Get("bucket"), q.Get("key"), true)
	if err != nil {
		writeError(w, err)
		return
	}
	b := encodeRecord(record, inline)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// readRecordOn reads bucket/key's record on d and, withData, the inline
// shard its current version keeps there (see drive.RecordReader): only a
// drive fault on the shard fails the read; any other shard error leaves
// it to the reader, as a local read does.
func readRecordOn(ctx context.Context, d drive.Drive, bucket, key string, withData bool) (record, inline []byte, err error) {
	record, err = d.Get(ctx, drive.TableObjects, drive.ObjectKey(bucket, key))
	if err != nil || !withData {
		return record, nil, err
	}
	if rec, err := meta.UnmarshalRecord(record); err == nil {
		if m := rec.Current(); m.HoldsInlineShard() {
			data, err := d.Get(ctx, drive.TableInline, drive.DataKey(m.DataID, 1))
			if errors.Is(err, drive.ErrDriveFaulty) {
				return nil, nil, err
			}
			if err == nil {
				inline = data
			}
		}
	}
	return record, inline, nil
}

// getRecords reads one key's record on several of this node's drives
// (drive.NodeRecordReader).
func (s *Server) getRecords(w http.ResponseWriter, r *http.Request, q url.Values) {
	bucket, key, withData := q.Get("bucket"), q.Get("key"), q.Get("data") == "1"
	s.perDrive(w, r, q, 0, func(ctx context.Context, i int, d drive.Drive) ([][]byte, error) {
		record, inline, err := readRecordOn(ctx, d, bucket, key, withData)
		return [][]byte{record, inline}, err
	})
}

// applyBatches applies one batch on each of several of this node's
// drives (drive.NodeApplier); body holds the batches in the order of the
// drives query.
func (s *Server) applyBatches(w http.ResponseWriter, r *http.Request, q url.Values, body []byte) {
	d := newDecoder(bytes.NewReader(body))
	d.version()
	n, _ := d.count()
	var batches []*drive.Batch
	for i := 0; i < n && d.err == nil; i++ {
		raw := d.getBytes()
		if d.err != nil {
			break
		}
		b, err := decodeBatch(bytes.NewReader(raw))
		if err != nil {
			d.fail(err)
			break
		}
		batches = append(batches, b)
	}
	if d.err != nil {
		writeError(w, fmt.Errorf("applies: %w: %v", drive.ErrInvalidArgument, d.err))
		return
	}
	s.perDrive(w, r, q, len(batches), func(ctx context.Context, i int, d drive.Drive) ([][]byte, error) {
		return nil, d.Apply(ctx, batches[i])
	})
}

// perDrive runs work on each drive the drives query names, each on its
// own goroutine, and streams a frame per drive as soon as its work is
// done, so a slow drive delays only its own answer. want, when not 0,
// is how many drives the request must name (one per batch it carries).
func (s *Server) perDrive(w http.ResponseWriter, r *http.Request, q url.Values, want int,
	work func(ctx context.Context, i int, d drive.Drive) ([][]byte, error)) {
	ctx := r.Context()
	list := strings.Split(q.Get("drives"), ",")
	if len(list) > maxNodeCallDrives || (want != 0 && want != len(list)) {
		writeError(w, fmt.Errorf("%d drives, %d batches: %w", len(list), want, drive.ErrInvalidArgument))
		return
	}
	drives := make([]drive.Drive, len(list))
	paths := q["paths"] // each drive's path, when the client names them (paths.go)
	if len(paths) != len(list) {
		paths = nil
	}
	for i, v := range list {
		slot, err := strconv.Atoi(v)
		if err != nil {
			writeError(w, fmt.Errorf("drive slot %q: %w", v, drive.ErrInvalidArgument))
			return
		}
		path := ""
		if paths != nil {
			path = paths[i]
		}
		drives[i], _ = s.lookup(slot, path) // nil: answered as a single-drive call is, below
	}
	type result struct {
		i      int
		fields [][]byte
		err    error
	}
	results := make(chan result, len(drives))
	for i, d := range drives {
		if d == nil {
			results <- result{i: i, err: fmt.Errorf("%w: this node serves no drive at slot %s (do all nodes have the same drive list?)", drive.ErrDriveFaulty, list[i])}
			continue
		}
		go func() {
			fields, err := work(ctx, i, d)
			results <- result{i, fields, err}
		}()
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	buf := []byte{codecVersion}
	for left := len(drives); left > 0; left-- {
		res := <-results
		var werr []byte
		if res.err != nil {
			we, _ := toWire(res.err)
			if werr, _ = json.Marshal(we); werr == nil {
				werr = []byte("{}")
			}
		}
		buf = appendFrame(buf, res.i, werr, res.fields...)
		if len(results) > 0 {
			continue // more are ready: one write for them all
		}
		if _, err := w.Write(buf); err != nil {
			return
		}
		if left == 1 {
			break // the end of the answer flushes the last frame with it: one write
		}
		if rc.Flush() != nil {
			return
		}
		buf = buf[:0]
	}
}

func (s *Server) scan(w http.ResponseWriter, r *http.Request, d drive.Drive, q url.Values) {
	t, err := parseTable(q.Get("table"))
	if err != nil {
		writeError(w, err)
		return
	}
	sq := drive.ScanQuery{
		Prefix:    q.Get("prefix"),
		After:     q.Get("after"),
		Delimiter: q.Get("delimiter"),
		KeysOnly:  q.Get("keysonly") == "1",
		Digest:    q.Get("digest") == "1",
	}
	if l := q.Get("limit"); l != "" {
		if sq.Limit, err = strconv.Atoi(l); err != nil {
			writeError(w, fmt.Errorf("scan limit %q: %w", l, drive.ErrInvalidArgument))
			return
		}
	}
	es, err := d.Scan(r.Context(), t, sq)
	if err != nil {
		writeError(w, err)
		return
	}
	b := encodeEntries(es)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// clearDeadlines lifts the node server's read and write deadlines off a
// stream: a shard is read or written at the pace of the S3 client the
// engine serves, which may pause for longer than any request timeout.
// A peer that vanishes is found by TCP keep-alive instead.
func clearDeadlines(rc *http.ResponseController) {
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
}

// createShard streams a request body into a new shard file. The file is
// made durable (FileWriter.Close) only when the body ended cleanly with
// an end marker whose byte count matches what arrived; anything else (a
// cut connection, a cancelled request, a peer that aborted, a short
// body) aborts it.
func (s *Server) createShard(w http.ResponseWriter, r *http.Request, d drive.Drive, q url.Values, bodyHash string) {
	ref, err := parseRef(q)
	if err != nil {
		writeError(w, err)
		return
	}
	// Created before the body is read, so a refusal goes back before the
	// client sent any data: the client waits for the "100 Continue" Go's
	// server sends on the first body read.
	fw, err := d.CreateShard(r.Context(), ref)
	if err != nil {
		writeError(w, err)
		return
	}
	settled := false // Close or Abort was called
	defer func() {
		if !settled {
			fw.Abort()
		}
	}()
	rc := http.NewResponseController(w)
	clearDeadlines(rc)
	// Full duplex lets a drive failure be answered while the client is
	// still sending (see answerEarly).
	_ = rc.EnableFullDuplex()

	body := io.Reader(r.Body)
	var sum hash.Hash
	if bodyHash != peerauth.Unsigned {
		// A sender may sign a stream too; it is checked before commit.
		sum = sha256.New()
		body = io.TeeReader(r.Body, sum)
	}
	pieces, done := receiveBody(body)
	defer done()
	var n, drained int64
	var werr, rerr error
	for p := range pieces {
		switch {
		case werr == nil && p.n > 0:
			if _, werr = fw.Write(p.data()); werr != nil {
				settled = true
				fw.Abort()
				answerEarly(w, rc, werr)
			} else {
				n += int64(p.n)
			}
		case werr != nil:
			// Dropping what the client sent before it read the answer.
			if drained += int64(p.n); drained > maxDrain {
				_ = rc.SetReadDeadline(time.Now())
			}
		}
		rerr = p.err
		p.release()
	}
	if werr != nil {
		return
	}
	if rerr != io.EOF {
		// The client went away or cancelled: nobody reads an answer.
		s.log.Debug("drive rpc: shard stream cut; shard aborted", "remote", r.RemoteAddr,
			"shard", ref.ID, "part", ref.Part, "bytes", n, "err", rerr)
		return
	}
	if sum != nil && !strings.EqualFold(hex.EncodeToString(sum.Sum(nil)), bodyHash) {
		s.log.Warn("drive rpc: refused shard stream", "remote", r.RemoteAddr, "err", "body does not match its signed hash")
		http.Error(w, fmt.Sprintf("%v: body does not match its signed hash", peerauth.ErrUnauthorized), http.StatusForbidden)
		return
	}
	switch end := r.Trailer.Get(trailerShardEnd); end {
	case shardEndAbort:
		// Aborted before the answer, so the file is gone when the
		// client's Abort returns.
		settled = true
		fw.Abort()
		writeJSON(w, shardResult{Size: n, Aborted: true}, nil)
		return
	case strconv.FormatInt(n, 10):
	default:
		writeError(w, fmt.Errorf("shard %s.%d: body of %d bytes ended with marker %q: %w: not committed",
			ref.ID, ref.Part, n, end, drive.ErrInvalidArgument))
		return
	}
	settled = true // Close removes the file itself when it fails
	if err := fw.Close(); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, shardResult{Size: n}, nil)
}

// A drive that fails mid-stream is answered at once; then what the
// client still sends is read and dropped, for at most drainWait and
// maxDrain bytes, until the client, having read the answer, ends the
// request. Closing the connection with unread data in it would reset
// it, and a reset can destroy the answer before the client reads it.
const (
	drainWait = 10 * time.Second
	maxDrain  = 64 << 20
)

// answerEarly sends a drive error while the request body still flows.
func answerEarly(w http.ResponseWriter, rc *http.ResponseController, err error) {
	writeError(w, err)
	if rc.Flush() != nil {
		_ = rc.SetReadDeadline(time.Now()) // nobody to answer: stop reading
		return
	}
	_ = rc.SetReadDeadline(time.Now().Add(drainWait))
}

// piece is one buffer of a shard stream's body.
type piece struct {
	buf  *[]byte
	n    int
	err  error // the body's error after these n bytes; io.EOF at a clean end
	free chan<- *[]byte
}

func (p piece) data() []byte { return (*p.buf)[:p.n] }

// release hands the buffer back for the next piece.
func (p piece) release() { p.free <- p.buf }

// receiveBody reads body on its own goroutine into two buffers in turn,
// so the network fills one while the drive writes the other (the drive
// write is synchronous, O_DIRECT on disks). Each piece is released when
// used; the channel closes after the piece that carries the body's
// error. done, deferred by the handler, returns the buffers and ends the
// goroutine should the handler leave early.
func receiveBody(body io.Reader) (pieces <-chan piece, done func()) {
	const nbuf = 2
	free := make(chan *[]byte, nbuf)
	for range nbuf {
		free <- copyBufPool.Get().(*[]byte)
	}
	out := make(chan piece, nbuf) // never full: only nbuf buffers exist
	stop := make(chan struct{})
	go func() {
		defer close(out)
		for {
			var bp *[]byte
			select {
			case bp = <-free:
			case <-stop:
				return
			}
			n, err := fill(body, *bp)
			out <- piece{buf: bp, n: n, err: err, free: free}
			if err != nil {
				return
			}
		}
	}()
	return out, func() {
		close(stop)
		for range nbuf {
			select {
			case bp := <-free:
				copyBufPool.Put(bp)
			default: // still in use after a panic: left to the collector
			}
		}
	}
}

// fill reads into buf until it is full or r fails; unlike io.ReadFull it
// passes r's error through unchanged, so a clean io.EOF stays apart
// from io.ErrUnexpectedEOF (a chunked body cut short).
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// openShard streams a shard file from an offset. The file is opened
// before the 200 goes out, so a missing file is an ordinary error
// answer; a read error after that travels in the error trailer.
func (s *Server) openShard(w http.ResponseWriter, r *http.Request, d drive.Drive, q url.Values) {
	ref, err := parseRef(q)
	if err != nil {
		writeError(w, err)
		return
	}
	offset, err := strconv.ParseInt(q.Get("offset"), 10, 64)
	if err != nil {
		writeError(w, fmt.Errorf("offset %q: %w", q.Get("offset"), drive.ErrInvalidArgument))
		return
	}
	rd, err := d.OpenShard(r.Context(), ref, offset)
	if err != nil {
		writeError(w, err)
		return
	}
	defer rd.Close()
	rc := http.NewResponseController(w)
	clearDeadlines(rc)
	w.Header().Set("Content-Type", "application/octet-stream")
	if fr, ok := rd.(drive.FileReader); ok {
		if f, n, err := fr.File(); err == nil {
			sendFile(w, f, n)
			return
		}
	}
	w.Header().Set("Trailer", trailerError)
	w.WriteHeader(http.StatusOK)

	bp := copyBufPool.Get().(*[]byte)
	defer copyBufPool.Put(bp)
	buf := *bp
	for {
		m, rerr := rd.Read(buf)
		if m > 0 {
			if _, werr := w.Write(buf[:m]); werr != nil {
				return // the client went away; rd.Close releases the file
			}
		}
		if rerr == io.EOF {
			return
		}
		if rerr != nil {
			we, _ := toWire(rerr)
			b, _ := json.Marshal(we)
			w.Header().Set(trailerError, string(b))
			return
		}
	}
}

// sendFile answers with the n bytes of a local shard file f from its
// position, with a Content-Length, which lets net/http hand the copy to
// the kernel (sendfile): the bytes go from the page cache to the socket
// without being read into this process. A read failure part way cannot
// travel in a trailer then; the answer is cut short, which the client
// takes for a failed drive, as the trailer would have said (a local read
// error is a drive fault). The client checks the length.
func sendFile(w http.ResponseWriter, f *os.File, n int64) {
	defer f.Close()
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	w.WriteHeader(http.StatusOK)
	if m, err := io.Copy(w, io.LimitReader(f, n)); err != nil || m != n {
		// net/http closes a connection whose answer fell short of its
		// Content-Length; make sure of it.
		panic(http.ErrAbortHandler)
	}
}

// walkFlushInterval is how long a found shard file may wait in the
// response buffer: a caller that bounds the time between two files
// (drive.Health) must see progress even when files turn up slowly.
const walkFlushInterval = 200 * time.Millisecond

// walk streams the drive's shard files as JSON lines, ending with an end
// line or an error line. The 200 goes out with the first file, so a walk
// that fails at once (an unformatted drive) answers with an ordinary
// error.
func (s *Server) walk(w http.ResponseWriter, r *http.Request, d drive.Drive) {
	rc := http.NewResponseController(w)
	clearDeadlines(rc)
	var (
		mu      sync.Mutex
		started bool
		dirty   bool
		werr    error
	)
	enc := json.NewEncoder(w)
	start := func() {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		started = true
	}
	stop := make(chan struct{})
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		t := time.NewTicker(walkFlushInterval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			mu.Lock()
			if dirty && werr == nil {
				werr = rc.Flush()
				dirty = false
			}
			mu.Unlock()
		}
	}()
	err := d.WalkShards(r.Context(), func(sf drive.ShardFile) error {
		mu.Lock()
		defer mu.Unlock()
		if werr != nil {
			return werr
		}
		if !started {
			start()
		}
		werr = enc.Encode(walkLine{ID: sf.ID, Part: sf.Part, Size: sf.Size, ModTime: sf.ModTime.UnixNano()})
		dirty = true
		return werr
	})
	close(stop)
	<-flushed
	if werr != nil {
		return // the client went away
	}
	if !started {
		if err != nil {
			writeError(w, err)
			return
		}
		start()
	}
	end := walkLine{End: true}
	if err != nil {
		we, _ := toWire(err)
		end = walkLine{Err: &we}
	}
	_ = enc.Encode(end)
}

func parseTable(s string) (drive.Table, error) {
	v, err := strconv.ParseUint(s, 10, 8)
	if err != nil {
		return 0, fmt.Errorf("table %q: %w", s, drive.ErrInvalidArgument)
	}
	return drive.Table(v), nil
}

func parseRef(q url.Values) (drive.ShardRef, error) {
	part, err := strconv.Atoi(q.Get("part"))
	if err != nil {
		return drive.ShardRef{}, fmt.Errorf("shard part %q: %w", q.Get("part"), drive.ErrInvalidArgument)
	}
	return drive.ShardRef{ID: q.Get("id"), Part: part}, nil
}

// writeJSON answers v, or err when it is not nil.
func writeJSON(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeError(w, err)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// writeError answers a drive error as codes and message.
func writeError(w http.ResponseWriter, err error) {
	we, status := toWire(err)
	writeWire(w, we, status)
}

func writeWire(w http.ResponseWriter, we wireError, status int) {
	b, _ := json.Marshal(we)
	h := w.Header()
	h.Del("Trailer")
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}
