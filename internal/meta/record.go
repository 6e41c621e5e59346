package meta

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// RecordMagic starts every encoded Record.
var RecordMagic = [4]byte{'S', 'S', 'R', 'C'}

// RecordVersion is the Record encoding version.
const RecordVersion = 1

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

// Marshal encodes r: magic, version, count, each version's own encoding
// (length-prefixed, each with its own checksum), and a CRC32C of all.
func (r *Record) Marshal() []byte {
	var e encoder
	e.buf = make([]byte, 0, 256*len(r.Versions)+16)
	e.buf = append(e.buf, RecordMagic[:]...)
	e.u16(RecordVersion)
	e.uvarint(uint64(len(r.Versions)))
	for _, v := range r.Versions {
		e.bytes(v.Marshal())
	}
	e.u32(crc32.Checksum(e.buf, castagnoli))
	return e.buf
}

// recordBody checks an encoded record's magic, version and checksum and
// returns a decoder over what they frame.
func recordBody(b []byte) (decoder, error) {
	const header = 4 + 2
	if len(b) < header+1+4 {
		return decoder{}, fmt.Errorf("%w: record of %d bytes is too short", ErrCorrupt, len(b))
	}
	if [4]byte(b[:4]) != RecordMagic {
		return decoder{}, fmt.Errorf("%w: bad record magic", ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint16(b[4:]); v != RecordVersion {
		return decoder{}, fmt.Errorf("%w: unknown record version %d", ErrCorrupt, v)
	}
	if got, want := crc32.Checksum(b[:len(b)-4], castagnoli), binary.LittleEndian.Uint32(b[len(b)-4:]); got != want {
		return decoder{}, fmt.Errorf("%w: record checksum mismatch", ErrCorrupt)
	}
	return decoder{buf: b[header : len(b)-4]}, nil
}

// UnmarshalRecord decodes a Record, verifying magic, version and checksums.
func UnmarshalRecord(b []byte) (*Record, error) {
	d, err := recordBody(b)
	if err != nil {
		return nil, err
	}
	n := d.count(maxVersions)
	r := &Record{Versions: make([]*Object, 0, n)}
	for i := 0; i < n && d.err == nil; i++ {
		raw := d.bytes()
		if d.err != nil {
			break
		}
		o, err := Unmarshal(raw)
		if err != nil {
			return nil, fmt.Errorf("version %d: %w", i, err)
		}
		r.Versions = append(r.Versions, o)
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, d.err)
	}
	if len(d.buf) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes in record", ErrCorrupt, len(d.buf))
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
	d, err := recordBody(b)
	if err != nil {
		return s, false, false, err
	}
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
		return Stamp{}, false, false, fmt.Errorf("%w: %v", ErrCorrupt, v.err)
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

// AppendStamp appends to dst a canonical encoding of the stamp of the
// current version of the encoded record b (PeekCurrent): equal for the
// records of one version on any drive, different for different
// versions. ok is false when b is not simple (PeekCurrent) or is
// corrupt; such a record must be compared in full.
func AppendStamp(dst, b []byte) (out []byte, ok bool) {
	s, _, simple, err := PeekCurrent(b)
	if err != nil || !simple {
		return dst, false
	}
	dst = binary.AppendVarint(dst, s.Size)
	dst = binary.AppendVarint(dst, s.ModTime)
	dst = binary.AppendUvarint(dst, uint64(len(s.ETag)))
	dst = append(dst, s.ETag...)
	dst = binary.AppendUvarint(dst, uint64(len(s.DataID)))
	dst = append(dst, s.DataID...)
	return append(dst, s.Flags), true
}
