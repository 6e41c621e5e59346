package notify

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// segReader reads the sender's frames through a buffer: one pread(2)
// fills it with up to readChunk bytes of the segment, below the synced
// end only (bytes past it may be half-written, and a segment is
// append-only, so what was read below the end never changes), and the
// frames inside it are parsed from memory: about one read per chunk
// instead of two per record (header, then payload).
type segReader struct {
	f    *os.File
	base int64  // file offset of buf[0]
	buf  []byte // the file's bytes [base, base+len(buf))
}

const readChunk = 64 << 10

// frameAt reads the frame at off (below end) of f: the record and the
// frame's length; a frame cut short, corrupt or failing its CRC is an
// error (the sender tries another copy).
func (r *segReader) frameAt(f *os.File, off, end int64) (Delivery, int64, error) {
	if f != r.f {
		r.f, r.buf = f, r.buf[:0]
	}
	h, err := r.bytes(off, frameHeader, end)
	if err != nil {
		return Delivery{}, 0, fmt.Errorf("read frame header: %w", err)
	}
	n, sum, ok := frameLen(h)
	if !ok || off+frameHeader+int64(n) > end {
		return Delivery{}, 0, errors.New("frame header corrupt")
	}
	p, err := r.bytes(off, frameHeader+n, end)
	if err != nil {
		return Delivery{}, 0, fmt.Errorf("read frame: %w", err)
	}
	p = p[frameHeader:]
	if crc32.Checksum(p, castagnoli) != sum {
		return Delivery{}, 0, errors.New("frame checksum mismatch")
	}
	d, ok := decodePayload(p) // copies what it keeps
	if !ok {
		return Delivery{}, 0, errors.New("frame payload corrupt")
	}
	return d, frameHeader + int64(n), nil
}

// bytes returns the n bytes of the file at off (off+n <= end), from
// the buffer, refilled from off when it does not hold them all. The
// slice is valid until the next call.
func (r *segReader) bytes(off int64, n int, end int64) ([]byte, error) {
	if off >= r.base && off+int64(n) <= r.base+int64(len(r.buf)) {
		i := off - r.base
		return r.buf[i : i+int64(n)], nil
	}
	want := int64(max(n, readChunk))
	want = min(want, end-off)
	if want < int64(n) {
		return nil, io.ErrUnexpectedEOF
	}
	if int64(cap(r.buf)) < want {
		r.buf = make([]byte, want)
	}
	r.buf = r.buf[:want]
	m, err := r.f.ReadAt(r.buf, off)
	if m < n {
		r.buf = r.buf[:0]
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	r.base, r.buf = off, r.buf[:m]
	return r.buf[:n], nil
}
