package minioformat

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// A small MessagePack reader over a byte slice: just the subset MinIO's
// files use, written for hostile input. Every length is checked against
// the bytes that remain before anything is allocated or sliced, and an
// array or map may not announce more elements than bytes remain (each
// element takes at least one), so what a decode allocates is bounded by
// a small multiple of its input. Nesting is bounded by maxDepth.

// ErrCorrupt is wrapped by every error about malformed input.
var ErrCorrupt = errors.New("minioformat: corrupt")

const maxDepth = 32

type mpReader struct {
	b     []byte
	depth int
}

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

var errTruncated = corruptf("truncated msgpack")

func (r *mpReader) left() int { return len(r.b) }

func (r *mpReader) peek() (byte, error) {
	if len(r.b) == 0 {
		return 0, errTruncated
	}
	return r.b[0], nil
}

func (r *mpReader) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.b) {
		return nil, errTruncated
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p, nil
}

func (r *mpReader) byte1() (byte, error) {
	p, err := r.take(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// uintN reads an n-byte big-endian unsigned number (n = 1, 2, 4, 8).
func (r *mpReader) uintN(n int) (uint64, error) {
	p, err := r.take(n)
	if err != nil {
		return 0, err
	}
	switch n {
	case 1:
		return uint64(p[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(p)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(p)), nil
	}
	return binary.BigEndian.Uint64(p), nil
}

// nilNext consumes a nil and reports whether there was one.
func (r *mpReader) nilNext() bool {
	if len(r.b) > 0 && r.b[0] == 0xc0 {
		r.b = r.b[1:]
		return true
	}
	return false
}

// count checks an announced element count against the bytes left.
func (r *mpReader) count(n uint64, per int) (int, error) {
	if n > uint64(len(r.b)/per) {
		return 0, corruptf("%d elements announced, %d bytes left", n, len(r.b))
	}
	return int(n), nil
}

// arrayLen reads an array header; nil reads as an empty array.
func (r *mpReader) arrayLen() (int, error) {
	c, err := r.byte1()
	if err != nil {
		return 0, err
	}
	var n uint64
	switch {
	case c >= 0x90 && c <= 0x9f:
		n = uint64(c & 0x0f)
	case c == 0xdc:
		n, err = r.uintN(2)
	case c == 0xdd:
		n, err = r.uintN(4)
	case c == 0xc0:
		return 0, nil
	default:
		return 0, corruptf("want array, got 0x%02x", c)
	}
	if err != nil {
		return 0, err
	}
	return r.count(n, 1)
}

// mapLen reads a map header; nil reads as an empty map.
func (r *mpReader) mapLen() (int, error) {
	c, err := r.byte1()
	if err != nil {
		return 0, err
	}
	var n uint64
	switch {
	case c >= 0x80 && c <= 0x8f:
		n = uint64(c & 0x0f)
	case c == 0xde:
		n, err = r.uintN(2)
	case c == 0xdf:
		n, err = r.uintN(4)
	case c == 0xc0:
		return 0, nil
	default:
		return 0, corruptf("want map, got 0x%02x", c)
	}
	if err != nil {
		return 0, err
	}
	return r.count(n, 2)
}

// rawString reads a str or bin and returns its bytes (aliasing the input).
func (r *mpReader) rawString(allowBin bool) ([]byte, error) {
	c, err := r.byte1()
	if err != nil {
		return nil, err
	}
	var n uint64
	switch {
	case c >= 0xa0 && c <= 0xbf:
		n = uint64(c & 0x1f)
	case c == 0xd9:
		n, err = r.uintN(1)
	case c == 0xda:
		n, err = r.uintN(2)
	case c == 0xdb:
		n, err = r.uintN(4)
	case allowBin && c == 0xc4:
		n, err = r.uintN(1)
	case allowBin && c == 0xc5:
		n, err = r.uintN(2)
	case allowBin && c == 0xc6:
		n, err = r.uintN(4)
	default:
		return nil, corruptf("want string, got 0x%02x", c)
	}
	if err != nil {
		return nil, err
	}
	if n > uint64(len(r.b)) {
		return nil, errTruncated
	}
	return r.take(int(n))
}

func (r *mpReader) str() (string, error) {
	p, err := r.rawString(false)
	return string(p), err
}

// key reads a map key: a str, or a bin as MinIO's decoders also accept.
func (r *mpReader) key() (string, error) {
	p, err := r.rawString(true)
	return string(p), err
}

// bin reads a bin (or, leniently, a str) and returns its bytes, aliasing
// the input; nil reads as nil.
func (r *mpReader) bin() ([]byte, error) {
	if r.nilNext() {
		return nil, nil
	}
	c, err := r.peek()
	if err != nil {
		return nil, err
	}
	if c >= 0xc4 && c <= 0xc6 {
		return r.rawString(true)
	}
	return r.rawString(false)
}

// fixedBin reads a bin of exactly len(dst) bytes into dst.
func (r *mpReader) fixedBin(dst []byte) error {
	p, err := r.bin()
	if err != nil {
		return err
	}
	if len(p) != len(dst) {
		return corruptf("want %d bytes, got %d", len(dst), len(p))
	}
	copy(dst, p)
	return nil
}

// int reads any integer encoding as an int64.
func (r *mpReader) int() (int64, error) {
	c, err := r.byte1()
	if err != nil {
		return 0, err
	}
	switch {
	case c <= 0x7f:
		return int64(c), nil
	case c >= 0xe0:
		return int64(int8(c)), nil
	}
	var u uint64
	switch c {
	case 0xcc, 0xcd, 0xce, 0xcf:
		u, err = r.uintN(1 << (c - 0xcc))
		if err != nil {
			return 0, err
		}
		if u > math.MaxInt64 {
			return 0, corruptf("integer %d out of range", u)
		}
		return int64(u), nil
	case 0xd0:
		u, err = r.uintN(1)
		return int64(int8(u)), err
	case 0xd1:
		u, err = r.uintN(2)
		return int64(int16(u)), err
	case 0xd2:
		u, err = r.uintN(4)
		return int64(int32(u)), err
	case 0xd3:
		u, err = r.uintN(8)
		return int64(u), err
	}
	return 0, corruptf("want integer, got 0x%02x", c)
}

// uint reads a non-negative integer.
func (r *mpReader) uint() (uint64, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	if c == 0xcf {
		r.b = r.b[1:]
		return r.uintN(8)
	}
	v, err := r.int()
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, corruptf("negative %d where unsigned expected", v)
	}
	return uint64(v), nil
}

// intRange reads an integer and checks lo <= v <= hi.
func (r *mpReader) intRange(lo, hi int64) (int64, error) {
	v, err := r.int()
	if err != nil {
		return 0, err
	}
	if v < lo || v > hi {
		return 0, corruptf("%d outside [%d, %d]", v, lo, hi)
	}
	return v, nil
}

func (r *mpReader) bool() (bool, error) {
	c, err := r.byte1()
	if err != nil {
		return false, err
	}
	switch c {
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	case 0xc0:
		return false, nil
	}
	return false, corruptf("want bool, got 0x%02x", c)
}

// ext reads an extension and returns its type and payload.
func (r *mpReader) ext() (int8, []byte, error) {
	c, err := r.byte1()
	if err != nil {
		return 0, nil, err
	}
	var n uint64
	switch c {
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
		n = 1 << (c - 0xd4)
	case 0xc7:
		n, err = r.uintN(1)
	case 0xc8:
		n, err = r.uintN(2)
	case 0xc9:
		n, err = r.uintN(4)
	default:
		return 0, nil, corruptf("want extension, got 0x%02x", c)
	}
	if err != nil {
		return 0, nil, err
	}
	t, err := r.byte1()
	if err != nil {
		return 0, nil, err
	}
	if n > uint64(len(r.b)) {
		return 0, nil, errTruncated
	}
	p, err := r.take(int(n))
	return int8(t), p, err
}

// time reads a timestamp: tinylib/msgp's extension 5 (seconds and
// nanoseconds, 12 bytes) or the MessagePack standard extension -1; nil
// reads as the zero time.
func (r *mpReader) time() (time.Time, error) {
	if r.nilNext() {
		return time.Time{}, nil
	}
	t, p, err := r.ext()
	if err != nil {
		return time.Time{}, err
	}
	switch {
	case t == 5 && len(p) == 12:
		sec := int64(binary.BigEndian.Uint64(p))
		nsec := binary.BigEndian.Uint32(p[8:])
		if nsec >= 1e9 {
			return time.Time{}, corruptf("timestamp nanoseconds %d", nsec)
		}
		return time.Unix(sec, int64(nsec)).UTC(), nil
	case t == -1 && len(p) == 4:
		return time.Unix(int64(binary.BigEndian.Uint32(p)), 0).UTC(), nil
	case t == -1 && len(p) == 8:
		v := binary.BigEndian.Uint64(p)
		nsec := v >> 34
		if nsec >= 1e9 {
			return time.Time{}, corruptf("timestamp nanoseconds %d", nsec)
		}
		return time.Unix(int64(v&(1<<34-1)), int64(nsec)).UTC(), nil
	case t == -1 && len(p) == 12:
		nsec := binary.BigEndian.Uint32(p)
		if nsec >= 1e9 {
			return time.Time{}, corruptf("timestamp nanoseconds %d", nsec)
		}
		return time.Unix(int64(binary.BigEndian.Uint64(p[4:])), int64(nsec)).UTC(), nil
	}
	return time.Time{}, corruptf("extension %d of %d bytes is not a timestamp", t, len(p))
}

// skip passes over one value of any type.
func (r *mpReader) skip() error {
	c, err := r.peek()
	if err != nil {
		return err
	}
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		r.b = r.b[1:]
		return nil
	case c >= 0x80 && c <= 0x8f, c == 0xde, c == 0xdf:
		n, err := r.mapLen()
		if err != nil {
			return err
		}
		return r.skipN(2 * n)
	case c >= 0x90 && c <= 0x9f, c == 0xdc, c == 0xdd:
		n, err := r.arrayLen()
		if err != nil {
			return err
		}
		return r.skipN(n)
	case c >= 0xa0 && c <= 0xbf, c == 0xd9, c == 0xda, c == 0xdb, c == 0xc4, c == 0xc5, c == 0xc6:
		_, err := r.rawString(true)
		return err
	case c >= 0xcc && c <= 0xcf:
		_, err := r.take(1 + 1<<(c-0xcc))
		return err
	case c >= 0xd0 && c <= 0xd3:
		_, err := r.take(1 + 1<<(c-0xd0))
		return err
	case c == 0xca:
		_, err := r.take(5)
		return err
	case c == 0xcb:
		_, err := r.take(9)
		return err
	case c == 0xc7, c == 0xc8, c == 0xc9, c >= 0xd4 && c <= 0xd8:
		_, _, err := r.ext()
		return err
	}
	return corruptf("unknown msgpack type 0x%02x", c) // 0xc1
}

func (r *mpReader) skipN(n int) error {
	if r.depth >= maxDepth {
		return corruptf("nested deeper than %d", maxDepth)
	}
	r.depth++
	defer func() { r.depth-- }()
	for range n {
		if err := r.skip(); err != nil {
			return err
		}
	}
	return nil
}
