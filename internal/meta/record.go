package meta

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/zeebo/xxh3"
)

// RecordMagic starts every encoded Record.
var RecordMagic = [4]byte{'S', 'S', 'R', 'C'}

// RecordVersion is the Record encoding version written. Version 2 added
// the stamp after the header (stampSize bytes: see AppendStamp);
// version 1 records, without it, are still read.
const RecordVersion = 2

// stampSize is the stamp a version 2 record carries after its header: a
// 16-byte hash of its version's stamp and a byte saying whether the
// record is simple (1) or not (0, hash zero).
const stampSize = 16 + 1

// maxVersions bounds a decoded record so a corrupt length cannot make the
// decoder allocate without limit.
const maxVersions = 1 << 20

// Record is what one drive's index holds for one key: every version of it
// that this drive knows, newest first. Today a key has its current version
// and, while an overwrite is being committed, the previous one (FlagPrev);
// versioned buckets will keep more without a format change.
type Record struct {
	Versions []*Object
}

// Current is the newest version not kept as a previous record, or nil.
func (r *Record) Current() *Object {
	for _, v := range r.Versions {
		if v.Flags&FlagPrev == 0 {
			return v
		}
	}
	return nil
}

// Prev is the version kept as the previous record, or nil.
func (r *Record) Prev() *Object {
	for _, v := range r.Versions {
		if v.Flags&FlagPrev != 0 {
			return v
		}
	}
	return nil
}

// Marshal encodes r: magic, version, the record's stamp (stampOf), the
// count, each version's own encoding (length-prefixed, each with its own
// checksum), and a CRC32C of all.
func (r *Record) Marshal() []byte {
	var e encoder
	e.buf = make([]byte, 0, 256*len(r.Versions)+16+stampSize)
	e.buf = append(e.buf, RecordMagic[:]...)
	e.u16(RecordVersion)
	e.buf = r.appendStampField(e.buf)
	e.uvarint(uint64(len(r.Versions)))
	for _, v := range r.Versions {
		e.bytes(v.Marshal())
	}
	e.u32(crc32.Checksum(e.buf, castagnoli))
	return e.buf
}

// simple reports whether r is what PeekCurrent calls simple: one version,
// not kept for the versions table.
func (r *Record) simple() bool {
	return len(r.Versions) == 1 && r.Versions[0].Flags&FlagKeep == 0
}

// appendStampField appends the stamp field of a version 2 record.
func (r *Record) appendStampField(dst []byte) []byte {
	if !r.simple() {
		return append(dst, make([]byte, stampSize)...)
	}
	o := r.Versions[0]
	dst = stampHash(dst, o.Size, o.ModTime, o.ETag, o.DataID, o.Flags)
	return append(dst, 1)
}

// stampHash appends the 16-byte hash of a version's stamp fields.
func stampHash[S string | []byte](dst []byte, size, modTime int64, etag, dataID S, flags uint8) []byte {
	var buf [128]byte
	b := binary.AppendVarint(buf[:0], size)
	b = binary.AppendVarint(b, modTime)
	b = binary.AppendUvarint(b, uint64(len(etag)))
	b = append(b, etag...)
	b = binary.AppendUvarint(b, uint64(len(dataID)))
	b = append(b, dataID...)
	b = append(b, flags)
	h := xxh3.Hash128(b).Bytes()
	return append(dst, h[:]...)
}

// recordBody checks an encoded record's magic, version and checksum and
// returns a decoder over what they frame (after the stamp of a version 2
// record) and the stamp field (nil in version 1).
func recordBody(b []byte) (decoder, []byte, error) {
	const header = 4 + 2
	if len(b) < header+1+4 {
		return decoder{}, nil, fmt.Errorf("%w: record of %d bytes is too short", ErrCorrupt, len(b))
	}
	if [4]byte(b[:4]) != RecordMagic {
		return decoder{}, nil, fmt.Errorf("%w: bad record magic", ErrCorrupt)
	}
	v := binary.LittleEndian.Uint16(b[4:])
	if v != 1 && v != 2 {
		return decoder{}, nil, fmt.Errorf("%w: unknown record version %d", ErrCorrupt, v)
	}
	if got, want := crc32.Checksum(b[:len(b)-4], castagnoli), binary.LittleEndian.Uint32(b[len(b)-4:]); got != want {
		return decoder{}, nil, fmt.Errorf("%w: record checksum mismatch", ErrCorrupt)
	}
	body := b[header : len(b)-4]
	if v == 1 {
		return decoder{buf: body}, nil, nil
	}
	if len(body) < stampSize+1 {
		return decoder{}, nil, fmt.Errorf("%w: record of %d bytes is too short", ErrCorrupt, len(b))
	}
	return decoder{buf: body[stampSize:]}, body[:stampSize], nil
}

// UnmarshalRecord decodes a Record, verifying magic, version and checksums.
func UnmarshalRecord(b []byte) (*Record, error) {
	d, stamp, err := recordBody(b)
	if err != nil {
		return nil, err
	}
	n := d.count(maxVersions)
	var r *Record
	if n == 1 {
		// The common record, of one version, in one allocation.
		one := &struct {
			r Record
			v [1]*Object
			o Object
		}{}
		one.v[0] = &one.o
		one.r.Versions = one.v[:0]
		r = &one.r
	} else {
		r = &Record{Versions: make([]*Object, 0, n)}
	}
	for i := 0; i < n && d.err == nil; i++ {
		raw := d.bytes()
		if d.err != nil {
			break
		}
		var o *Object
		if n == 1 {
			o = r.Versions[:1][0]
		} else {
			o = &Object{}
		}
		if err := o.unmarshal(raw); err != nil {
			return nil, fmt.Errorf("version %d: %w", i, err)
		}
		r.Versions = append(r.Versions, o)
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, d.err)
	}
	if len(d.buf) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes in record", ErrCorrupt, len(d.buf))
	}
	// A stamp that does not describe the record would make listings
	// trust a drive they should check: refuse it like any corruption.
	var want [stampSize]byte
	if stamp != nil && string(r.appendStampField(want[:0])) != string(stamp) {
		return nil, fmt.Errorf("%w: record stamp does not match its versions", ErrCorrupt)
	}
	return r, nil
}

// Stamp is what tells one version from another (see SameVersion), read
// from an encoded record without decoding the rest of it. ETag and DataID
// alias the encoded bytes.
type Stamp struct {
	Size, ModTime int64
	ETag, DataID  []byte
	Flags         uint8
}

// Matches reports whether s stamps the same version as o: the comparison
// of Object.SameVersion, on a stamp PeekCurrent read without allocating.
func (s *Stamp) Matches(o *Object) bool {
	return s.ModTime == o.ModTime && s.Size == o.Size && string(s.ETag) == o.ETag && string(s.DataID) == o.DataID
}

// PeekCurrent reads the stamp of a record's current version (see
// Current), checking the record's frame as UnmarshalRecord does
// (recordBody) but decoding only the fields a stamp needs and
// allocating nothing: listings compare the records of several drives
// and need the whole of only one. ok is false when no version is
// current; simple is false when a version carries FlagKeep or the record
// holds more than one version, cases a caller decodes in full.
func PeekCurrent(b []byte) (s Stamp, ok, simple bool, err error) {
	d, _, err := recordBody(b)
	if err != nil {
		return s, false, false, err
	}
	return peekVersion(d)
}

// peekVersion is PeekCurrent on a record's checked body.
func peekVersion(d decoder) (s Stamp, ok, simple bool, err error) {
	if n := d.count(maxVersions); n != 1 {
		return s, false, false, d.err
	}
	raw := d.bytes()
	// The record's checksum covers the version's bytes; its own header is
	// checked for shape only.
	const vheader = 4 + 2 + 4
	if d.err != nil || len(raw) < vheader+4 || [4]byte(raw[:4]) != Magic || binary.LittleEndian.Uint16(raw[4:]) != FormatVersion {
		return s, false, false, fmt.Errorf("%w: version header", ErrCorrupt)
	}
	v := decoder{buf: raw[vheader : len(raw)-4]}
	s.Size = v.varint()
	s.ModTime = v.varint()
	s.ETag = v.bytes()
	for range 4 { // ContentType, StorageClass, Owner, ACL
		v.bytes()
	}
	v.skipStrMap() // Headers
	v.skipStrMap() // UserMeta
	for range 3 {  // ChecksumAlgo, ChecksumVal, ChecksumType
		v.bytes()
	}
	s.DataID = v.bytes()
	v.byte()  // Inline
	v.bytes() // VersionID
	s.Flags = v.byte()
	if v.err != nil {
		return Stamp{}, false, false, fmt.Errorf("%w: %w", ErrCorrupt, v.err)
	}
	return s, s.Flags&FlagPrev == 0, s.Flags&FlagKeep == 0, nil
}

// skipStrMap reads past a map written by strMap.
func (d *decoder) skipStrMap() {
	n := d.count(len(d.buf))
	for i := 0; i < n && d.err == nil; i++ {
		d.bytes()
		d.bytes()
	}
}

// AppendStamp appends to dst the 16-byte stamp of the encoded record b:
// a hash of its version's size, time, ETag, data id and flags, equal for
// the records of one version on any drive (they differ in shard index
// and inline shard), different for different versions, and the same
// for a record encoded in version 1 or 2. ok is false when b is not
// simple (PeekCurrent) or not readable as a record; such a record must
// be compared in full.
//
// A version 2 record carries its stamp after the header, so this checks
// the record's checksum (a CRC32C: ~25 ns for a small record) and reads
// 17 bytes instead of parsing the version. A record whose checksum fails
// has no stamp: damage anywhere in it, not only in the stamp, must make
// the drive look different, so that a listing reads and judges it.
func AppendStamp(dst, b []byte) (out []byte, ok bool) {
	d, stamp, err := recordBody(b)
	if err != nil {
		return dst, false
	}
	if stamp != nil {
		if stamp[16] != 1 {
			return dst, false
		}
		return append(dst, stamp[:16]...), true
	}
	s, _, simple, err := peekVersion(d)
	if err != nil || !simple {
		return dst, false
	}
	return stampHash(dst, s.Size, s.ModTime, s.ETag, s.DataID, s.Flags), true
}
