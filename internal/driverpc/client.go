package driverpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/peerauth"
)

// Client is a drive of another node, reached through that node's
// Server. It implements drive.Drive, so the engine (through a
// drive.Health wrapper) uses it like a local drive.
//
// Errors the remote drive returns match the same drive errors here
// (errors.Is). A node that cannot be reached, or answers outside the
// protocol (a connection refused or cut, a stream that ends early, a
// refused signature, a 5xx from something that is not a Server), is
// ErrDriveFaulty naming the node: to the Health wrapper a node that is
// down is a set of offline drives. A call whose context ends returns
// the context's error instead, which says nothing about the drive.
//
// The context of CreateShard and OpenShard governs the whole stream, not
// only the call that opens it. A Client is safe for concurrent use.
type Client struct {
	endpoint string
	slot     string
	path     string // the drive's path on its node, "" if not given (paths.go)
	name     string
	key      peerauth.Key
	hc       *http.Client
	closed   atomic.Bool
}

// NewClient returns the client of drive slot on the node at endpoint
// (scheme, host and port, like "http://10.0.0.2:9000"). name is what
// String returns. Requests are signed with key. hc nil uses one client
// shared by the process (NewHTTPClient); an hc given must not set a
// Timeout, which would cut shard streams.
func NewClient(endpoint string, slot int, name string, key peerauth.Key, hc *http.Client) *Client {
	if hc == nil {
		hc = sharedHTTPClient()
	}
	endpoint = strings.TrimRight(endpoint, "/")
	if name == "" {
		name = endpoint + "#" + strconv.Itoa(slot)
	}
	return &Client{endpoint: endpoint, slot: strconv.Itoa(slot), name: name, key: key, hc: hc}
}

var sharedHTTPClient = sync.OnceValue(func() *http.Client { return NewHTTPClient(nil, nil) })

// NewHTTPClient returns an HTTP client suited to drive calls: keep-alive
// connections, enough of them idle per node for every concurrent shard
// stream to find one, a 5 s dial timeout so a node that is down fails
// fast, and no overall timeout (streams last as long as the object they
// carry; per-call deadlines come from the context and the Health
// wrapper).
//
// It speaks HTTP/1.1 only: one TCP connection per stream keeps parallel
// shard streams from sharing one connection's flow-control window and
// stalling behind each other, as they would multiplexed over HTTP/2.
//
// dial, when not nil, makes the connections (cluster.Routes.Dialer over
// PeerDialer); nil dials directly with PeerDialer. dialTLS, when not nil,
// makes the connections to https:// nodes, handshake done
// (certs.Store.DialTLS over dial): it verifies each node against the
// certificates directory's authorities, reloaded without a restart.
func NewHTTPClient(dial, dialTLS func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Client {
	if dial == nil {
		dial = PeerDialer().DialContext
	}
	t := &http.Transport{
		// Calls between nodes never go through a proxy from the
		// environment.
		Proxy:               nil,
		DialContext:         dial,
		DialTLSContext:      dialTLS,
		TLSHandshakeTimeout: 5 * time.Second,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 256,
		// Shorter than the idle timeout of the peer's server, so the
		// client drops a connection before the server closes it under a
		// request.
		IdleConnTimeout: 30 * time.Second,
		// Covers the time from a request fully sent to its answer: a
		// peer that takes longer is wedged. Streams are not affected
		// once their headers arrived.
		ResponseHeaderTimeout: 2 * time.Minute,
		// A CreateShard body waits for the server's 100 Continue (sent
		// once the file exists); CreateShard waits for it too, so the
		// value only bounds when the transport starts reading the body.
		ExpectContinueTimeout: 5 * time.Second,
		// Shard data is not compressible, and a transparent gzip would
		// hide the body's real length.
		DisableCompression: true,
		WriteBufferSize:    64 << 10,
		// Small on purpose: a shard stream is read a checksum (8 bytes)
		// then a chunk (~87 KiB) at a time, and a read at least this big
		// into an empty buffer goes straight to the socket; with 64 KiB
		// most of each chunk was copied through the buffer first.
		ReadBufferSize: 4 << 10,
	}
	return &http.Client{
		Transport: t,
		// A peer never redirects; following one would send a signed
		// request elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// PeerDialer is the dialer of connections between nodes: a 5 s dial
// timeout, so a node that is down fails fast, and TCP keep-alives.
func PeerDialer() *net.Dialer {
	return &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 15 * time.Second}
}

func (c *Client) String() string { return c.name }

// Close releases the client; the remote drive stays open (it belongs to
// its node). Later calls fail with ErrDriveFaulty; streams already open
// go on.
func (c *Client) Close() error {
	c.closed.Store(true)
	return nil
}

// Operation names in errors.
const (
	nameReadFormat   = "read format"
	nameWriteFormat  = "write format"
	nameDiskInfo     = "disk info"
	nameGet          = "get"
	nameRecord       = "get record"
	nameRecords      = "get records"
	nameApplies      = "apply batches"
	nameApply        = "apply"
	nameScan         = "scan"
	nameCreateShard  = "create shard"
	nameOpenShard    = "open shard"
	nameDeleteShards = "delete shards"
	nameWalkShards   = "walk shards"
)

func (c *Client) closedErr(op string) error {
	return fmt.Errorf("drive %s: %s: client closed: %w", c.name, op, drive.ErrDriveFaulty)
}

// transportErr classifies a failure to talk to the node: the caller's
// context ending is its own error; anything else makes the drive
// faulty.
func (c *Client) transportErr(ctx context.Context, op string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(err, cerr) {
			return fmt.Errorf("drive %s: %s: %w", c.name, op, err)
		}
		return fmt.Errorf("drive %s: %s: %w (%v)", c.name, op, cerr, err)
	}
	return fmt.Errorf("drive %s: %s: node %s: %w: %v", c.name, op, c.endpoint, drive.ErrDriveFaulty, err)
}

// remoteErr is a drive error the server sent.
func (c *Client) remoteErr(op string, we wireError) error {
	e := fromWire(c.endpoint, op, we)
	e.Drive = c.name
	return e
}

// statusErr reads a non-200 answer: a drive error when it is one of the
// protocol's, ErrDriveFaulty otherwise (an auth refusal, a proxy, a
// server that is not a drive Server).
func (c *Client) statusErr(ctx context.Context, op string, resp *http.Response) error {
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return c.statusErrFrom(ctx, op, resp, b, err)
}

// statusErrFrom is statusErr of an answer whose body (b) was read, with
// readErr, already.
func (c *Client) statusErrFrom(ctx context.Context, op string, resp *http.Response, b []byte, err error) error {
	if err != nil {
		return c.transportErr(ctx, op, fmt.Errorf("reading %s answer: %w", resp.Status, err))
	}
	var we wireError
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") &&
		json.Unmarshal(b, &we) == nil && we.Codes != nil {
		return c.remoteErr(op, we)
	}
	return fmt.Errorf("drive %s: %s: node %s answered %s: %w: %s",
		c.name, op, c.endpoint, resp.Status, drive.ErrDriveFaulty, plainText(b))
}

func (c *Client) url(op string, q url.Values) string {
	if q == nil {
		q = url.Values{}
	}
	q.Set("drive", c.slot)
	if c.path != "" {
		q.Set("path", c.path)
	}
	return c.endpoint + PathPrefix + op + "?" + q.Encode()
}

// call makes a non-streamed request with a signed body and returns the
// answer when it is a 200; the caller closes its body.
func (c *Client) call(ctx context.Context, method, op, name string, q url.Values, body []byte) (*http.Response, error) {
	if c.closed.Load() {
		return nil, c.closedErr(name)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url(op, q), rd)
	if err != nil {
		return nil, fmt.Errorf("drive %s: %s: %w: %v", c.name, name, drive.ErrInvalidArgument, err)
	}
	c.key.Sign(req, peerauth.BodyHash(body))
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportErr(ctx, name, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, c.statusErr(ctx, name, resp)
	}
	return resp, nil
}

// callJSON makes a call whose answer is JSON decoded into out.
func (c *Client) callJSON(ctx context.Context, method, op, name string, q url.Values, body []byte, out any) error {
	resp, err := c.call(ctx, method, op, name, q, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return c.transportErr(ctx, name, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return c.transportErr(ctx, name, fmt.Errorf("malformed answer: %w", err))
	}
	return nil
}

// ReadFormat implements drive.Drive.
func (c *Client) ReadFormat(ctx context.Context) (drive.Format, error) {
	var f drive.Format
	if err := c.callJSON(ctx, http.MethodGet, opFormat, nameReadFormat, nil, nil, &f); err != nil {
		return drive.Format{}, err
	}
	return f, nil
}

// WriteFormat implements drive.Drive.
func (c *Client) WriteFormat(ctx context.Context, f drive.Format) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return c.callJSON(ctx, http.MethodPost, opFormat, nameWriteFormat, nil, b, &struct{}{})
}

// DiskInfo implements drive.Drive.
func (c *Client) DiskInfo(ctx context.Context) (drive.DiskInfo, error) {
	var di drive.DiskInfo
	if err := c.callJSON(ctx, http.MethodGet, opDiskInfo, nameDiskInfo, nil, nil, &di); err != nil {
		return drive.DiskInfo{}, err
	}
	return di, nil
}

// Get implements drive.Drive. The value is the answer's body.
func (c *Client) Get(ctx context.Context, t drive.Table, key string) ([]byte, error) {
	q := url.Values{"table": {strconv.Itoa(int(t))}, "key": {key}}
	resp, err := c.call(ctx, http.MethodGet, opGet, nameGet, q, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var v []byte
	if resp.ContentLength >= 0 && resp.ContentLength <= maxField {
		v = make([]byte, resp.ContentLength)
		_, err = io.ReadFull(resp.Body, v)
	} else {
		v, err = io.ReadAll(resp.Body)
	}
	if err != nil {
		return nil, c.transportErr(ctx, nameGet, err)
	}
	if resp.Header.Get(headerNil) != "" {
		return nil, nil
	}
	return v, nil
}

// smallBody reads a response of a known size up to maxBody into memory,
// so decoding it needs no 64 KiB stream buffer per call (most answers
// are a record or a page of entries); others are decoded as they arrive.
func smallBody(resp *http.Response) (io.Reader, error) {
	if resp.ContentLength < 0 || resp.ContentLength > maxBody {
		return resp.Body, nil
	}
	b := make([]byte, resp.ContentLength)
	if _, err := io.ReadFull(resp.Body, b); err != nil {
		return nil, err
	}
	return bytes.NewReader(b), nil
}

// GetRecord implements drive.RecordReader: the node reads the record
// and its inline shard in one call.
func (c *Client) GetRecord(ctx context.Context, bucket, key string) (record, inline []byte, err error) {
	q := url.Values{"bucket": {bucket}, "key": {key}}
	resp, err := c.call(ctx, http.MethodGet, opRecord, nameRecord, q, nil)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := smallBody(resp)
	if err != nil {
		return nil, nil, c.transportErr(ctx, nameRecord, err)
	}
	record, inline, err = decodeRecord(body)
	if err != nil {
		return nil, nil, c.transportErr(ctx, nameRecord, err)
	}
	return record, inline, nil
}

// Node implements drive.NodeRecordReader and drive.NodeApplier: the node's endpoint.
func (c *Client) Node() string { return c.endpoint }

// rpcClient lets GetRecords find the Client inside a drive that embeds
// one (a test's counting wrapper).
func (c *Client) rpcClient() *Client { return c }

// GetRecords implements drive.NodeRecordReader: one request to the node
// for the record (and, withData, inline shard) of every drive in drives,
// answered as a stream of frames, one per drive as its read finishes.
func (c *Client) GetRecords(ctx context.Context, drives []drive.NodeRecordReader, bucket, key string, withData bool,
	deliver func(i int, record, inline []byte, err error)) {
	members := c.nodeMembers(len(drives), func(i int) any { return drives[i] }, nameRecords,
		func(i int, err error) { deliver(i, nil, nil, err) })
	q := url.Values{"bucket": {bucket}, "key": {key}}
	if withData {
		q.Set("data", "1")
	}
	c.nodeCall(ctx, http.MethodGet, opRecords, nameRecords, q, nil, members,
		func(i int, d *decoder) func() {
			record, inline := d.getBytes(), d.getBytes()
			return func() { deliver(i, record, inline, nil) }
		},
		func(i int, err error) { deliver(i, nil, nil, err) })
}

// ApplyBatches implements drive.NodeApplier: one request to the node
// with every drive's batch, answered as a stream of frames, one per drive
// as its batch is applied.
func (c *Client) ApplyBatches(ctx context.Context, drives []drive.NodeApplier, batches []*drive.Batch, deliver func(i int, err error)) {
	members := c.nodeMembers(len(drives), func(i int) any { return drives[i] }, nameApplies, deliver)
	e := encoder{}
	n := 0
	for _, m := range members {
		if m != nil {
			n++
		}
	}
	e.putByte(codecVersion)
	e.putUvarint(uint64(n))
	for i, m := range members {
		if m != nil {
			e.putBytes(encodeBatch(batches[i]))
		}
	}
	c.nodeCall(ctx, http.MethodPost, opApplies, nameApplies, nil, e.b, members,
		func(i int, d *decoder) func() { return func() { deliver(i, nil) } },
		deliver)
}

// nodeMembers finds the Client of each of n drives (drive(i)) that is a
// drive of c's node; a drive that is not is answered at once with an
// error (deliverErr) and left nil.
func (c *Client) nodeMembers(n int, at func(i int) any, name string, deliverErr func(i int, err error)) []*Client {
	members := make([]*Client, n)
	for i := range n {
		d := at(i)
		rc, ok := d.(interface{ rpcClient() *Client })
		if !ok || rc.rpcClient().endpoint != c.endpoint {
			deliverErr(i, fmt.Errorf("drive %v: %s: %w: not a drive of node %s", d, name, drive.ErrInvalidArgument, c.endpoint))
			continue
		}
		members[i] = rc.rpcClient()
	}
	return members
}

// nodeCall makes one request (op, q, body) for the drives members names
// (nil entries left out) and hands each its frame as the node sends it:
// frame reads drive i's fields of a frame that succeeded and returns
// what delivers them; a drive's error frame, and a failure of the whole
// call for every drive not yet answered, go to fail.
func (c *Client) nodeCall(ctx context.Context, method, op, name string, q url.Values, body []byte, members []*Client,
	frame func(i int, d *decoder) func(), fail func(i int, err error)) {
	var order []int // request position -> member index
	var slots, paths []string
	for i, m := range members {
		if m != nil {
			order = append(order, i)
			slots = append(slots, m.slot)
			paths = append(paths, m.path)
		}
	}
	if len(order) == 0 {
		return
	}
	delivered := make([]bool, len(members))
	failAll := func(errFor func(m *Client) error) {
		for _, i := range order {
			if !delivered[i] {
				delivered[i] = true
				fail(i, errFor(members[i]))
			}
		}
	}
	if len(order) > maxNodeCallDrives {
		failAll(func(m *Client) error {
			return fmt.Errorf("drive %s: %s: %w: %d drives in one call", m.name, name, drive.ErrInvalidArgument, len(order))
		})
		return
	}
	if c.closed.Load() {
		failAll(func(m *Client) error { return m.closedErr(name) })
		return
	}
	if q == nil {
		q = url.Values{}
	}
	q.Set("drives", strings.Join(slots, ","))
	if !slices.Contains(paths, "") {
		q["paths"] = paths // each member's path too, in order (paths.go)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	// The request names the first member's slot as its drive (the
	// server checks it serves it); the frames carry every member's.
	req, err := http.NewRequestWithContext(ctx, method, members[order[0]].url(op, q), rd)
	if err != nil {
		failAll(func(m *Client) error {
			return fmt.Errorf("drive %s: %s: %w: %v", m.name, name, drive.ErrInvalidArgument, err)
		})
		return
	}
	c.key.Sign(req, peerauth.BodyHash(body))
	resp, err := c.hc.Do(req)
	if err != nil {
		failAll(func(m *Client) error { return m.transportErr(ctx, name, err) })
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// The whole call was refused (a layout the node does not share,
		// an authentication failure): each member reports it.
		b, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		failAll(func(m *Client) error { return m.statusErrFrom(ctx, name, resp, b, rerr) })
		return
	}
	d := newDecoder(bufio.NewReaderSize(resp.Body, 16<<10))
	d.version()
	for pending := len(order); pending > 0 && d.err == nil; pending-- {
		j := d.getUvarint()
		status := d.getByte()
		if d.err != nil {
			break
		}
		if j >= uint64(len(order)) || delivered[order[j]] || status > frameErr {
			d.fail(fmt.Errorf("%w: %s frame %d (status %d) of %d drives", errCorruptMessage, op, j, status, len(order)))
			break
		}
		i := order[j]
		if status == frameErr {
			werr := d.getBytes()
			if d.err != nil {
				break
			}
			delivered[i] = true
			var we wireError
			if jerr := json.Unmarshal(werr, &we); jerr != nil {
				fail(i, members[i].transportErr(ctx, name, fmt.Errorf("malformed error frame: %w", jerr)))
				continue
			}
			fail(i, members[i].remoteErr(name, we))
			continue
		}
		deliverIt := frame(i, d)
		if d.err != nil {
			break
		}
		delivered[i] = true
		deliverIt()
	}
	cause := d.err
	if cause == nil {
		cause = io.ErrUnexpectedEOF
	}
	failAll(func(m *Client) error { return m.transportErr(ctx, name, cause) })
}

// Apply implements drive.Drive. An empty batch makes no call, as it
// does nothing on a local drive either.
func (c *Client) Apply(ctx context.Context, b *drive.Batch) error {
	if b == nil || len(b.Changes) == 0 {
		return nil
	}
	return c.callJSON(ctx, http.MethodPost, opApply, nameApply, nil, encodeBatch(b), &struct{}{})
}

// Scan implements drive.Drive; the entries are decoded as they arrive.
func (c *Client) Scan(ctx context.Context, t drive.Table, sq drive.ScanQuery) ([]drive.Entry, error) {
	q := url.Values{"table": {strconv.Itoa(int(t))}}
	if sq.Prefix != "" {
		q.Set("prefix", sq.Prefix)
	}
	if sq.After != "" {
		q.Set("after", sq.After)
	}
	if sq.Delimiter != "" {
		q.Set("delimiter", sq.Delimiter)
	}
	if sq.Limit != 0 {
		q.Set("limit", strconv.Itoa(sq.Limit))
	}
	if sq.KeysOnly {
		q.Set("keysonly", "1")
	}
	if sq.Digest {
		q.Set("digest", "1")
	}
	resp, err := c.call(ctx, http.MethodGet, opScan, nameScan, q, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := smallBody(resp)
	if err != nil {
		return nil, c.transportErr(ctx, nameScan, err)
	}
	es, err := decodeEntries(body)
	if err != nil {
		return nil, c.transportErr(ctx, nameScan, err)
	}
	return es, nil
}

// DeleteShards implements drive.Drive.
func (c *Client) DeleteShards(ctx context.Context, refs []drive.ShardRef) error {
	wrefs := make([]wireRef, len(refs))
	for i, r := range refs {
		wrefs[i] = wireRef{ID: r.ID, Part: r.Part}
	}
	b, err := json.Marshal(wrefs)
	if err != nil {
		return err
	}
	return c.callJSON(ctx, http.MethodPost, opDelete, nameDeleteShards, nil, b, &struct{}{})
}

// WalkShards implements drive.Drive: fn runs as the server's lines
// arrive. An error from fn ends the request and is returned as is.
func (c *Client) WalkShards(ctx context.Context, fn func(drive.ShardFile) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := c.call(ctx, http.MethodGet, opWalk, nameWalkShards, nil, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var l walkLine
		if err := dec.Decode(&l); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // no end line: the stream was cut
			}
			return c.transportErr(ctx, nameWalkShards, err)
		}
		switch {
		case l.Err != nil:
			return c.remoteErr(nameWalkShards, *l.Err)
		case l.End:
			return nil
		}
		sf := drive.ShardFile{
			ShardRef: drive.ShardRef{ID: l.ID, Part: l.Part},
			Size:     l.Size,
			ModTime:  time.Unix(0, l.ModTime),
		}
		if err := fn(sf); err != nil {
			return err
		}
	}
}
