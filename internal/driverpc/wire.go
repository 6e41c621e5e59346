package driverpc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/shardstore/shardstore/internal/drive"
)

// PathPrefix is where a node mounts the Server.
const PathPrefix = "/_shardstore/drive/v1/"

// Operations: the path element after PathPrefix. Read-only calls are
// GETs with their arguments in the (signed) query, so the transport may
// retry them on a keep-alive connection the server closed; calls that
// change the drive are POSTs, which it never replays.
const (
	opFormat   = "format"   // GET: ReadFormat; POST: WriteFormat (JSON)
	opDiskInfo = "diskinfo" // GET (JSON)
	opGet      = "get"      // GET ?table&key: the raw value
	opRecord   = "record"   // GET ?bucket&key: binary record and inline shard (drive.RecordReader)
	opRecords  = "records"  // GET ?drives&bucket&key&data: a stream of per-drive record frames (drive.NodeRecordReader)
	opApplies  = "applies"  // POST ?drives: binary batches, one per drive; a stream of per-drive result frames (drive.NodeApplier)
	opApply    = "apply"    // POST: binary batch
	opScan     = "scan"     // GET ?table&prefix&after&delimiter&limit&keysonly&digest: binary entries
	opShard    = "shard"    // POST ?id&part: CreateShard, streamed; GET ?id&part&offset: OpenShard
	opDelete   = "delete"   // POST: JSON refs
	opWalk     = "walk"     // GET: NDJSON lines
)

// Headers and trailers of the protocol. None is signed: they carry
// results (unauthenticated, like every response) or, for the shard end
// marker, an integrity check rather than a permission.
const (
	// headerNil marks a Get value that is nil rather than empty.
	headerNil = "X-Shardstore-Drive-Nil"
	// trailerError carries a JSON wireError when an OpenShard stream
	// fails after its 200 header went out.
	trailerError = "X-Shardstore-Drive-Error"
	// trailerShardEnd ends a CreateShard body: the decimal byte count the
	// client wrote (commit), or shardEndAbort. A body that ends without
	// it, or with a count other than what arrived, is aborted.
	trailerShardEnd = "X-Shardstore-Shard-End"
	shardEndAbort   = "abort"
)

// maxBody caps the body of a non-streamed call: an Apply batch holding
// inline shard data is the largest.
const maxBody = 64 << 20

// maxErrorBody caps how much of an error response the client reads.
const maxErrorBody = 64 << 10

// errorKinds are the drive errors that cross the wire, by code. An error
// travels as the codes of every kind it matches (ErrDriveMissing comes
// with ErrDriveFaulty, an index corruption with ErrFileCorrupt and
// ErrDriveFaulty), so errors.Is answers the same on both sides. The
// first kind matched picks the HTTP status, for people reading logs;
// clients go by the codes. A client ignores codes it does not know, so
// kinds can be added.
var errorKinds = []struct {
	code   string
	err    error
	status int
}{
	{"not_found", drive.ErrNotFound, http.StatusNotFound},
	{"invalid_argument", drive.ErrInvalidArgument, http.StatusBadRequest},
	{"unformatted", drive.ErrUnformatted, http.StatusConflict},
	{"not_blank", drive.ErrNotBlank, http.StatusConflict},
	{"old_layout", drive.ErrOldLayout, http.StatusConflict},
	{"newer_layout", drive.ErrNewerLayout, http.StatusConflict},
	{"locked", drive.ErrLocked, http.StatusConflict},
	{"conflict", drive.ErrConflict, http.StatusPreconditionFailed},
	{"drive_full", drive.ErrDriveFull, http.StatusInsufficientStorage},
	{"file_corrupt", drive.ErrFileCorrupt, http.StatusInternalServerError},
	{"drive_missing", drive.ErrDriveMissing, http.StatusServiceUnavailable},
	{"drive_faulty", drive.ErrDriveFaulty, http.StatusServiceUnavailable},
}

// wireError is an error as it crosses the wire (JSON).
type wireError struct {
	Codes   []string `json:"codes"`
	Message string   `json:"message"`
}

// toWire encodes err and picks its status.
func toWire(err error) (wireError, int) {
	we := wireError{Codes: []string{}, Message: err.Error()}
	status := http.StatusInternalServerError
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			if len(we.Codes) == 0 {
				status = k.status
			}
			we.Codes = append(we.Codes, k.code)
		}
	}
	return we, status
}

// RemoteError is an error a remote drive returned. It matches (errors.Is)
// the drive errors the server's error matched.
type RemoteError struct {
	// Drive names the drive (the Client's String).
	Drive string
	// Node is the endpoint of the node that answered.
	Node string
	// Op is the operation.
	Op string
	// Message is the server's error text.
	Message string
	kinds   []error
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("drive %s: %s (node %s): %s", e.Drive, e.Op, e.Node, e.Message)
}

// Is reports whether the server's error matched target.
func (e *RemoteError) Is(target error) bool {
	for _, k := range e.kinds {
		if k == target {
			return true
		}
	}
	return false
}

// fromWire rebuilds a wireError received from node for op.
func fromWire(node, op string, we wireError) *RemoteError {
	e := &RemoteError{Node: node, Op: op, Message: we.Message}
	for _, c := range we.Codes {
		for _, k := range errorKinds {
			if k.code == c {
				e.kinds = append(e.kinds, k.err)
			}
		}
	}
	return e
}

// The binary encoding of the index calls (Apply's batch, Scan's
// entries). Keys and values are arbitrary bytes, which JSON strings
// would mangle (invalid UTF-8 becomes U+FFFD) and JSON []byte would
// inflate by a third in base64. Every field is a uvarint or a
// length-prefixed byte string; a value's prefix is its length plus one,
// zero meaning nil, so nil and empty values survive the trip.
const (
	// codecVersion leads every encoded batch and entry list.
	codecVersion = 1

	flagLazy         = 1 << 0 // batch
	flagConds        = 1 << 1 // batch: conditions follow the changes
	flagAbsent       = 1 << 0 // condition
	flagDelete       = 1 << 0 // change
	flagCommonPrefix = 1 << 0 // entry
)

// encoder appends to a byte slice.
type encoder struct{ b []byte }

func (e *encoder) putByte(c byte)      { e.b = append(e.b, c) }
func (e *encoder) putUvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) putString(s string)  { e.putUvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) putBytes(p []byte) { // nil-preserving
	if p == nil {
		e.putUvarint(0)
		return
	}
	e.putUvarint(uint64(len(p)) + 1)
	e.b = append(e.b, p...)
}

// decoder reads what encoder wrote from a stream; the first error sticks.
type decoder struct {
	r interface {
		io.Reader
		io.ByteReader
	}
	err     error
	scratch []byte
}

func newDecoder(r io.Reader) *decoder {
	if br, ok := r.(interface {
		io.Reader
		io.ByteReader
	}); ok {
		return &decoder{r: br}
	}
	return &decoder{r: bufio.NewReaderSize(r, 64<<10)}
}

var errCorruptMessage = errors.New("malformed message")

func (d *decoder) fail(err error) {
	if d.err == nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		d.err = err
	}
}

func (d *decoder) getByte() byte {
	if d.err != nil {
		return 0
	}
	c, err := d.r.ReadByte()
	if err != nil {
		d.fail(err)
	}
	return c
}

func (d *decoder) getUvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.fail(err)
	}
	return v
}

// maxField bounds one key or value: a length beyond it is a corrupt
// message, not a reason to allocate gigabytes.
const maxField = maxBody

func (d *decoder) getRaw(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > maxField {
		d.fail(fmt.Errorf("%w: field of %d bytes", errCorruptMessage, n))
		return nil
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(d.r, p); err != nil {
		d.fail(err)
		return nil
	}
	return p
}

// getString reads through a scratch buffer: one allocation, the string's.
func (d *decoder) getString() string {
	n := d.getUvarint()
	if d.err != nil || n == 0 {
		return ""
	}
	if n > maxField {
		d.fail(fmt.Errorf("%w: field of %d bytes", errCorruptMessage, n))
		return ""
	}
	if uint64(cap(d.scratch)) < n {
		d.scratch = make([]byte, n)
	}
	p := d.scratch[:n]
	if _, err := io.ReadFull(d.r, p); err != nil {
		d.fail(err)
		return ""
	}
	return string(p)
}

func (d *decoder) getBytes() []byte {
	n := d.getUvarint()
	if n == 0 || d.err != nil {
		return nil
	}
	return d.getRaw(n - 1)
}

// count reads an element count; the preallocation it allows is bounded,
// since the count comes from the peer.
func (d *decoder) count() (n int, prealloc int) {
	v := d.getUvarint()
	if v > 1<<40 {
		d.fail(fmt.Errorf("%w: count %d", errCorruptMessage, v))
		return 0, 0
	}
	return int(v), int(min(v, 4096))
}

func (d *decoder) version() {
	if v := d.getByte(); d.err == nil && v != codecVersion {
		d.fail(fmt.Errorf("%w: encoding version %d, want %d", errCorruptMessage, v, codecVersion))
	}
}

func encodeBatch(b *drive.Batch) []byte {
	size := 8
	for _, c := range b.Changes {
		size += 2 + 2*binary.MaxVarintLen32 + len(c.Key) + len(c.Value)
	}
	e := encoder{b: make([]byte, 0, size)}
	e.putByte(codecVersion)
	var flags byte
	if b.Lazy {
		flags |= flagLazy
	}
	if len(b.Conds) > 0 {
		flags |= flagConds
	}
	e.putByte(flags)
	e.putUvarint(uint64(len(b.Changes)))
	for _, c := range b.Changes {
		e.putByte(byte(c.Table))
		var cf byte
		if c.Delete {
			cf |= flagDelete
		}
		e.putByte(cf)
		e.putString(c.Key)
		e.putBytes(c.Value)
	}
	if len(b.Conds) > 0 {
		e.putUvarint(uint64(len(b.Conds)))
		for _, c := range b.Conds {
			e.putByte(byte(c.Table))
			var cf byte
			if c.Absent {
				cf |= flagAbsent
			}
			e.putByte(cf)
			e.putString(c.Key)
			e.b = append(e.b, c.Sum[:]...)
		}
	}
	return e.b
}

func decodeBatch(r io.Reader) (*drive.Batch, error) {
	d := newDecoder(r)
	d.version()
	flags := d.getByte()
	n, pre := d.count()
	b := &drive.Batch{Lazy: flags&flagLazy != 0, Changes: make([]drive.Change, 0, pre)}
	for i := 0; i < n && d.err == nil; i++ {
		var c drive.Change
		c.Table = drive.Table(d.getByte())
		c.Delete = d.getByte()&flagDelete != 0
		c.Key = d.getString()
		c.Value = d.getBytes()
		b.Changes = append(b.Changes, c)
	}
	if flags&flagConds != 0 {
		n, pre := d.count()
		b.Conds = make([]drive.Cond, 0, pre)
		for i := 0; i < n && d.err == nil; i++ {
			var c drive.Cond
			c.Table = drive.Table(d.getByte())
			c.Absent = d.getByte()&flagAbsent != 0
			c.Key = d.getString()
			copy(c.Sum[:], d.getRaw(uint64(len(c.Sum))))
			b.Conds = append(b.Conds, c)
		}
	}
	if d.err != nil {
		return nil, fmt.Errorf("decode batch: %w", d.err)
	}
	return b, nil
}

func encodeEntries(es []drive.Entry) []byte {
	size := 8
	for _, en := range es {
		size += 1 + 2*binary.MaxVarintLen32 + len(en.Key) + len(en.Value)
	}
	e := encoder{b: make([]byte, 0, size)}
	e.putByte(codecVersion)
	e.putUvarint(uint64(len(es)))
	for _, en := range es {
		var f byte
		if en.CommonPrefix {
			f |= flagCommonPrefix
		}
		e.putByte(f)
		e.putString(en.Key)
		e.putBytes(en.Value)
	}
	return e.b
}

// decodeEntries reads an entry list; none decodes as nil, as a local
// scan that finds nothing returns.
func decodeEntries(r io.Reader) ([]drive.Entry, error) {
	d := newDecoder(r)
	d.version()
	n, pre := d.count()
	var es []drive.Entry
	if n > 0 {
		es = make([]drive.Entry, 0, pre)
	}
	for i := 0; i < n && d.err == nil; i++ {
		var en drive.Entry
		en.CommonPrefix = d.getByte()&flagCommonPrefix != 0
		en.Key = d.getString()
		en.Value = d.getBytes()
		es = append(es, en)
	}
	if d.err != nil {
		return nil, fmt.Errorf("decode scan entries: %w", d.err)
	}
	return es, nil
}

// walkLine is one line of a WalkShards response: a shard file, or the
// end of the walk (End, or Err when it failed). A stream that stops
// without an end line was cut.
type walkLine struct {
	ID      string     `json:"id,omitempty"`
	Part    int        `json:"part,omitempty"`
	Size    int64      `json:"size,omitempty"`
	ModTime int64      `json:"mtime,omitempty"` // Unix nanoseconds
	End     bool       `json:"end,omitempty"`
	Err     *wireError `json:"err,omitempty"`
}

// shardResult is the answer to a finished CreateShard stream.
type shardResult struct {
	Size    int64 `json:"size"`
	Aborted bool  `json:"aborted,omitempty"`
}

// wireRef is a ShardRef in DeleteShards' JSON body.
type wireRef struct {
	ID   string `json:"id"`
	Part int    `json:"part"`
}

// plainText trims a non-protocol error body for a message.
func plainText(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// encodeRecord writes a GetRecord answer: the record and the inline
// shard, each nil-preserving.
func encodeRecord(record, inline []byte) []byte {
	e := encoder{b: make([]byte, 0, 1+2*binary.MaxVarintLen32+len(record)+len(inline))}
	e.putByte(codecVersion)
	e.putBytes(record)
	e.putBytes(inline)
	return e.b
}

func decodeRecord(r io.Reader) (record, inline []byte, err error) {
	d := newDecoder(r)
	d.version()
	record = d.getBytes()
	inline = d.getBytes()
	if d.err != nil {
		return nil, nil, fmt.Errorf("decode record: %w", d.err)
	}
	return record, inline, nil
}

// The answer to a call for several drives of a node (records, applies)
// is codecVersion, then one frame per drive, in the order the drives
// answered: the drive's position in the request, a status, and either
// what the drive answered (records: its record and inline shard;
// applies: nothing) or its error as wireError JSON.
const (
	frameOK  byte = 0
	frameErr byte = 1
	// maxNodeCallDrives bounds the drives of one such call (a node
	// serves no more drives of one erasure set).
	maxNodeCallDrives = 256
)

// appendFrame appends drive i's frame: werr when it failed, else the
// fields.
func appendFrame(b []byte, i int, werr []byte, fields ...[]byte) []byte {
	e := encoder{b: b}
	e.putUvarint(uint64(i))
	if werr != nil {
		e.putByte(frameErr)
		e.putBytes(werr)
		return e.b
	}
	e.putByte(frameOK)
	for _, f := range fields {
		e.putBytes(f)
	}
	return e.b
}
