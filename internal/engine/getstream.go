package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/shardstore/shardstore/internal/bitrot"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/erasure"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/sse"
)

var errBitrot = errors.New("shard chunk failed its checksum")

// objectReader decodes an object's bytes block by block, reading only the
// data shards when they are healthy and rebuilding from parity otherwise.
type objectReader struct {
	e      *Engine
	ctx    context.Context
	set    *erasureSet
	bucket string
	key    string
	st     *objectState
	coder  *erasure.Coder
	algo   bitrot.Algorithm

	offset, remaining int64 // next object byte to return, bytes left
	blk               *erasure.Block
	avail             []byte // decoded bytes not yet returned

	partIdx  int            // part the shard readers are open on
	readers  []*shardReader // per drive position, for partIdx
	failed   []bool         // positions that failed during this read
	release  func()         // unpins the version's data
	closed   bool
	degraded bool
	err      error

	// Encrypted versions: offset and remaining count plaintext, blocks
	// are opened into plain with the stream of part streamPart.
	objectKey  []byte
	stream     *sse.Stream
	streamPart int
	plain      []byte
}

func (r *objectReader) Read(p []byte) (int, error) {
	if err := r.ready(); err != nil {
		return 0, err
	}
	n := copy(p, r.avail)
	r.avail = r.avail[n:]
	return n, nil
}

// WriteTo writes the object's bytes to w straight from the decoded
// blocks, sparing io.Copy's copy into a buffer of its own.
func (r *objectReader) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for {
		if err := r.ready(); err == io.EOF {
			return n, nil
		} else if err != nil {
			return n, err
		}
		m, err := w.Write(r.avail)
		n += int64(m)
		r.avail = r.avail[m:]
		if err != nil {
			return n, err
		}
	}
}

// ready makes r.avail hold the next bytes to return, decoding the next
// block when it is empty: io.EOF once every byte was returned, else the
// error that stopped the read (kept for every later call).
func (r *objectReader) ready() error {
	if r.err != nil {
		return r.err
	}
	if len(r.avail) > 0 {
		return nil
	}
	if r.remaining == 0 {
		return io.EOF
	}
	if err := r.nextBlock(); err != nil {
		r.err = err
		return err
	}
	return nil
}

// nextBlock decodes the block holding r.offset into r.avail.
func (r *objectReader) nextBlock() error {
	m := r.st.fi
	if m.Cipher != "" {
		return r.nextEncryptedBlock()
	}
	parts, pi, partStart, err := r.seekPart()
	if err != nil {
		return err
	}
	inPart := r.offset - partStart
	bs := int64(m.Erasure.BlockSize)
	blockIdx := inPart / bs
	blockLen := int(min(bs, parts[pi].Size-blockIdx*bs))
	if r.blk == nil {
		r.blk = r.coder.GetBlock()
	}
	if err := r.decodeBlock(pi, blockIdx, blockLen); err != nil {
		return err
	}
	skip := inPart - blockIdx*bs
	end := min(int64(blockLen), skip+r.remaining)
	r.avail = r.blk.Buf[skip:end]
	r.offset += end - skip
	r.remaining -= end - skip
	return nil
}

// seekPart finds the part holding r.offset (in the sizes the object's
// record gives: plaintext ones for an encrypted version) and where it
// starts, and points the shard readers at it.
func (r *objectReader) seekPart() (parts []meta.Part, pi int, partStart int64, err error) {
	m := r.st.fi
	parts = m.Parts
	if len(parts) == 0 {
		parts = []meta.Part{{Number: 1, Size: m.Size}}
	}
	for ; pi < len(parts); pi++ {
		if r.offset < partStart+parts[pi].Size {
			break
		}
		partStart += parts[pi].Size
	}
	if pi == len(parts) {
		return nil, 0, 0, fmt.Errorf("%s/%s: %w: offset %d past the parts", r.bucket, r.key, ErrReadQuorum, r.offset)
	}
	if r.readers == nil || r.partIdx != pi {
		r.closeReaders()
		r.partIdx = pi
		r.readers = make([]*shardReader, len(r.set.drives))
	}
	return parts, pi, partStart, nil
}

// decodeBlock fills r.blk.Buf[:blockLen] with block blockIdx of part pi.
func (r *objectReader) decodeBlock(pi int, blockIdx int64, blockLen int) error {
	m := r.st.fi
	data, parity := m.Erasure.DataShards, m.Erasure.ParityShards
	ss := r.coder.ShardSize(blockLen)
	shards := r.blk.Shards
	for i := range shards {
		shards[i] = r.blk.Buf[i*ss : i*ss : (i+1)*ss]
	}
	// position of each shard number
	posOf := make([]int, data+parity)
	for p, s := range m.Erasure.Distribution {
		posOf[s-1] = p
	}
	order := r.shardOrder(posOf, data)
	have := 0
	next := 0 // next index into order to try
	for have < data {
		var want []int
		for ; next < data+parity && have+len(want) < data; next++ {
			s := next
			if order != nil {
				s = order[next]
			}
			p := posOf[s]
			if r.failed[p] || r.st.metas[p] == nil {
				if s < data {
					r.degraded = true
				}
				continue
			}
			want = append(want, s)
		}
		if len(want) == 0 {
			return fmt.Errorf("%s/%s: %w: only %d of %d shards readable for block %d", r.bucket, r.key, ErrReadQuorum, have, data, blockIdx)
		}
		errs := make([]error, len(want))
		read := func(i, s int) {
			errs[i] = r.readShard(posOf[s], pi, blockIdx, ss, r.blk.Buf[s*ss:(s+1)*ss])
		}
		if r.inMemory(want, posOf) {
			// Nothing to wait for: a goroutine per shard would cost more
			// than the copies.
			for i, s := range want {
				read(i, s)
			}
		} else {
			var wg sync.WaitGroup
			for i, s := range want {
				wg.Add(1)
				go func() {
					defer wg.Done()
					read(i, s)
				}()
			}
			wg.Wait()
		}
		abandoned := false
		for i, s := range want {
			if errs[i] != nil {
				abandoned = abandoned || errors.Is(errs[i], drive.ErrBufferAbandoned)
				r.failed[posOf[s]] = true
				r.degraded = true
				r.e.log.Warn("shard read failed; rebuilding from parity", "bucket", r.bucket, "key", r.key,
					"drive", r.set.drives[posOf[s]].String(), "err", errs[i])
				continue
			}
			shards[s] = r.blk.Buf[s*ss : (s+1)*ss]
			have++
		}
		if abandoned {
			// A read given up on at its deadline may still write into
			// the block's buffer: leave that buffer to it (never pooled)
			// and decode the block again in a fresh one, around the
			// drives now marked failed.
			r.blk = r.coder.GetBlock()
			return r.decodeBlock(pi, blockIdx, blockLen)
		}
	}
	for i := 0; i < data; i++ {
		if len(shards[i]) == 0 {
			if err := r.coder.ReconstructData(shards); err != nil {
				return fmt.Errorf("%s/%s: %w: %v", r.bucket, r.key, ErrReadQuorum, err)
			}
			break
		}
	}
	return nil
}

// shardOrder is the order decodeBlock tries shard numbers (0-based) in,
// nil for the natural one: data shards first, then parity, so a healthy
// object needs no decoding. But for an inline object whose records
// carried the shards of at least data drives (a cluster GET reads whole
// nodes first: firstReads), those come first, since decoding a small
// block costs less than fetching a data shard from a drive whose record
// was not read.
func (r *objectReader) shardOrder(posOf []int, data int) []int {
	if !r.st.fi.Inline {
		return nil
	}
	carried := func(s int) bool {
		m := r.st.metas[posOf[s]]
		return m != nil && m.InlineData != nil && !r.failed[posOf[s]]
	}
	n, onData := 0, 0
	for s := range posOf {
		if carried(s) {
			n++
			if s < data {
				onData++
			}
		}
	}
	if n < data || onData == data {
		return nil // the natural order reads what came, or must fetch
	}
	// The data shards passed over are noticed as the loop would notice
	// them: a drive that answered without its shard, or with a damaged
	// record, or did not answer, makes the read degraded (a heal is
	// queued); a drive not asked because the others were enough does not.
	for s := range data {
		p := posOf[s]
		notAsked := r.st.metas[p] != nil && p < len(r.st.errs) && errors.Is(r.st.errs[p], errNotCalled)
		if !carried(s) && !notAsked {
			r.degraded = true
		}
	}
	order := make([]int, 0, len(posOf))
	for _, want := range []bool{true, false} {
		for s := range posOf {
			if carried(s) == want {
				order = append(order, s)
			}
		}
	}
	return order
}

// inMemory is true when the shards want are all inline data the records
// already carry.
func (r *objectReader) inMemory(want, posOf []int) bool {
	for _, s := range want {
		p := posOf[s]
		if sr := r.readers[p]; sr != nil {
			if !sr.isInline {
				return false
			}
			continue
		}
		if m := r.st.metas[p]; !m.Inline || m.InlineData == nil {
			return false
		}
	}
	return true
}

// readShard reads one verified chunk of part pi's shard on drive p into dst.
func (r *objectReader) readShard(p, pi int, blockIdx int64, ss int, dst []byte) error {
	sr := r.readers[p]
	if sr == nil {
		m := r.st.metas[p]
		sr = &shardReader{d: r.set.drives[p], algo: r.algo,
			full: int64(r.coder.ShardSize(m.Erasure.BlockSize)), next: -1, direct: true}
		if m.Inline {
			data, err := readInline(r.ctx, sr.d, m)
			if err != nil {
				return err
			}
			sr.inline, sr.isInline = data, true
		} else if len(m.Parts) > 0 {
			sr.ref = drive.ShardRef{ID: m.PartDataID(pi), Part: m.Parts[pi].Number}
		} else {
			return fmt.Errorf("drive %s: no data for %s/%s", r.set.drives[p], r.bucket, r.key)
		}
		r.readers[p] = sr
	}
	return sr.readChunk(r.ctx, blockIdx, ss, dst)
}

// readInline fetches a drive's inline shard data of version m.
func readInline(ctx context.Context, d drive.Drive, m *meta.Object) ([]byte, error) {
	if m.InlineData != nil {
		return m.InlineData, nil
	}
	data, err := d.Get(ctx, drive.TableInline, drive.DataKey(m.DataID, 1))
	if err != nil {
		return nil, fmt.Errorf("drive %s: inline data %s: %w", d, m.DataID, err)
	}
	return data, nil
}

func (r *objectReader) closeReaders() {
	for _, sr := range r.readers {
		if sr != nil && sr.rc != nil {
			sr.rc.Close()
		}
	}
	r.readers = nil
}

// Close unpins the version's data, releases buffers, and queues the object for
// healing if any shard had to be rebuilt.
func (r *objectReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.closeReaders()
	if r.blk != nil {
		r.coder.PutBlock(r.blk)
		r.blk = nil
	}
	if r.plain != nil {
		pb := r.plain[:cap(r.plain)]
		r.e.plainBufs.put(&pb)
		r.plain, r.avail = nil, nil
	}
	r.release()
	if r.degraded {
		r.e.jobs.QueueHeal(r.bucket, r.key)
	}
	return nil
}

// shardReader reads [checksum][chunk] records from one shard file (or
// from inline data) sequentially, reopening only when asked to jump.
type shardReader struct {
	d        drive.Drive
	ref      drive.ShardRef
	inline   []byte
	isInline bool
	algo     bitrot.Algorithm
	full     int64 // shard size of a full block
	rc       io.ReadCloser
	next     int64 // block index rc is positioned at
	// direct reads chunks straight into the caller's buffer (when rc is
	// a drive.DirectReader), so the caller must handle
	// drive.ErrBufferAbandoned: a GET's block buffer is dropped then.
	direct bool
	sum    [32]byte // a chunk's checksum; here, not on the stack, for direct reads
}

func (s *shardReader) readChunk(ctx context.Context, blockIdx int64, ss int, dst []byte) error {
	hs := int64(s.algo.Size())
	off := blockIdx * (hs + s.full)
	sum := s.sum[:]
	if s.isInline {
		end := off + hs + int64(ss)
		if end > int64(len(s.inline)) {
			return fmt.Errorf("drive %s: inline data truncated: %w", s.d, errBitrot)
		}
		copy(sum[:hs], s.inline[off:off+hs])
		copy(dst, s.inline[off+hs:end])
	} else {
		if s.rc == nil || s.next != blockIdx {
			if s.rc != nil {
				s.rc.Close()
			}
			rc, err := s.d.OpenShard(ctx, s.ref, off)
			if err != nil {
				s.rc = nil
				return err
			}
			s.rc = rc
		}
		var err error
		if dr, ok := s.rc.(drive.DirectReader); ok && s.direct {
			// Checksum and data in one drive call, with no staging copy.
			err = dr.ReadFull(sum[:hs], dst[:ss])
		} else if _, err = io.ReadFull(s.rc, sum[:hs]); err == nil {
			_, err = io.ReadFull(s.rc, dst[:ss])
		}
		if err != nil {
			s.next = -1
			return fmt.Errorf("drive %s: shard %s.%d: %w", s.d, s.ref.ID, s.ref.Part, shortRead(err))
		}
		s.next = blockIdx + 1
	}
	if !s.algo.Verify(sum[:hs], dst[:ss]) {
		return fmt.Errorf("drive %s: shard %s.%d block %d: %w", s.d, s.ref.ID, s.ref.Part, blockIdx, errBitrot)
	}
	return nil
}

func shortRead(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("shard file truncated: %w", errBitrot)
	}
	return err
}
