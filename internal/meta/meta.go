// Package meta encodes the per-drive object metadata: a small versioned
// binary record (magic, format version, payload, checksum) that describes
// one object version and this drive's shard of it, and a Record that holds
// every version of one key as a drive's index stores it.
package meta

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
)

// Magic starts every metadata file.
var Magic = [4]byte{'S', 'S', 'M', 'T'}

// FormatVersion is the current encoding version. Version 1 belonged to
// on-disk layout v1 (one metadata file per key directory), which this
// release refuses at the drive level, so decoders accept version 2 only.
const FormatVersion = 2

// ErrCorrupt reports a metadata file that fails its checks.
var ErrCorrupt = errors.New("metadata corrupt")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Erasure records how an object was coded and which shard this drive holds.
type Erasure struct {
	DataShards   int
	ParityShards int
	BlockSize    int
	// Index is this drive's shard number, 1-based (1..Data are data shards).
	Index int
	// Distribution maps set drive position → shard number (1-based).
	Distribution []int
	// Bitrot names the per-chunk checksum algorithm (see package bitrot).
	Bitrot uint8
}

// Part is one part of an object (a single PUT has one, number 1).
type Part struct {
	Number   int
	Size     int64
	ETag     string
	Checksum string
	// DataID names the shard files of this part when they differ from the
	// object's DataID (multipart parts keep the id they were uploaded
	// under); empty means the object's DataID.
	DataID string
}

// Flags on an object version.
const (
	// FlagPrev marks the version readers saw before an overwrite that is
	// still being committed: it is kept until the new version has write
	// quorum, so an interrupted commit leaves it readable.
	FlagPrev uint8 = 1 << iota
	// FlagDeleteMarker marks a delete marker: a version with no data
	// that makes a key read as deleted in a versioned bucket.
	FlagDeleteMarker
	// FlagKeep, on a FlagPrev version, says what happens to it once the
	// commit that replaced it has quorum: it becomes a noncurrent version
	// (moved to the versions table) instead of being dropped with its data.
	FlagKeep
	// FlagHiddenETag marks an encrypted version (or upload) whose ETags
	// are keyed digests, not plaintext MD5s (SSE-KMS and SSE-C).
	FlagHiddenETag
)

// FlagsPending are the flags a version carries only while a commit that
// replaced it is being settled.
const FlagsPending = FlagPrev | FlagKeep

// IsDeleteMarker reports whether o is a delete marker.
func (o *Object) IsDeleteMarker() bool { return o.Flags&FlagDeleteMarker != 0 }

// HoldsInlineShard reports whether o, a drive's record of a version, is
// an inline object, whose shard (data or parity) the drive keeps in its
// index: a GET fetches it with the record. A GET's first wave is the
// data-shard drives on one node, so only their shards travel there; in
// a cluster it is whole nodes (engine.firstReads), whose parity shards
// spare reading the data shards of the nodes not asked.
func (o *Object) HoldsInlineShard() bool {
	return o != nil && o.Inline
}

// Object is the metadata of one object version as stored on one drive.
type Object struct {
	Size         int64
	ModTime      int64 // Unix nanoseconds
	ETag         string
	ContentType  string
	StorageClass string
	Owner        string
	ACL          string
	Headers      map[string]string
	UserMeta     map[string]string
	ChecksumAlgo string
	ChecksumVal  string
	ChecksumType string
	// DataID names this version's shard data on every drive: shard files
	// (id, part) or, when Inline, the index's inline data entry. It is
	// random, never derived from the key.
	DataID string
	// Inline says the data lives in the drive's index (small objects).
	Inline bool
	// VersionID is the S3 version id; empty is the null version.
	VersionID string
	// Flags holds FlagPrev and later per-version flags.
	Flags   uint8
	Erasure Erasure
	Parts   []Part
	// InlineData is this drive's shard data (bitrot-framed) of an inline
	// object. It is not encoded in the record (the index keeps it under
	// its own key so listings never read it); readers fill it in.
	InlineData []byte
	// Bucket and Key are recorded for multipart upload records, whose
	// paths are hashed; plain objects leave them empty.
	Bucket, Key string
	// UploadID names the multipart upload a record belongs to, and on a
	// completed object the upload that made it (so a repeated
	// CompleteMultipartUpload can be answered with the same result).
	UploadID string
	// Tags is the version's S3 tag set (key → value); nil when it has
	// none. It is the record's last field: records written before tags
	// existed end after UploadID and decode with no tags.
	Tags map[string]string
	// LockMode ("", GOVERNANCE or COMPLIANCE) and RetainUntil (Unix
	// nanoseconds) are the version's object lock retention; LegalHold is
	// "", "ON" or "OFF". They follow Tags: records written before object
	// lock existed end after Tags and decode with none.
	LockMode    string
	RetainUntil int64
	LegalHold   string
	// Cipher, when set, says the version's data is encrypted at rest
	// (package sse names the ciphers): Size and Parts[i].Size stay the
	// plaintext sizes, the stored streams are sse.EncryptedSize of them.
	// Sealed is what the S3 layer needs to recover the object key (the
	// scheme, the sealed key, the KMS key id, ...), kept as it gave it.
	// They follow LegalHold: older records end before them.
	Cipher string
	Sealed map[string]string
}

// SameVersion reports whether two drives' records describe the same
// object version (they differ only in shard index and inline data).
func (o *Object) SameVersion(p *Object) bool {
	return o.ModTime == p.ModTime && o.ETag == p.ETag && o.Size == p.Size && o.DataID == p.DataID
}

// PartDataID is the data id of part i's shard files.
func (o *Object) PartDataID(i int) string {
	if o.Parts[i].DataID != "" {
		return o.Parts[i].DataID
	}
	return o.DataID
}

// DataIDs lists every data id the version's data lives under.
func (o *Object) DataIDs() []string {
	ids := []string{}
	if o.DataID != "" {
		ids = append(ids, o.DataID)
	}
	for i := range o.Parts {
		if id := o.Parts[i].DataID; id != "" && id != o.DataID {
			ids = append(ids, id)
		}
	}
	return ids
}

// Marshal encodes o.
func (o *Object) Marshal() []byte {
	var e encoder
	e.buf = make([]byte, 0, 256)
	e.buf = append(e.buf, Magic[:]...)
	e.u16(FormatVersion)
	e.u32(0) // payload length, patched below
	start := len(e.buf)
	e.varint(o.Size)
	e.varint(o.ModTime)
	e.str(o.ETag)
	e.str(o.ContentType)
	e.str(o.StorageClass)
	e.str(o.Owner)
	e.str(o.ACL)
	e.strMap(o.Headers)
	e.strMap(o.UserMeta)
	e.str(o.ChecksumAlgo)
	e.str(o.ChecksumVal)
	e.str(o.ChecksumType)
	e.str(o.DataID)
	e.bool(o.Inline)
	e.str(o.VersionID)
	e.buf = append(e.buf, o.Flags)
	e.uvarint(uint64(o.Erasure.DataShards))
	e.uvarint(uint64(o.Erasure.ParityShards))
	e.uvarint(uint64(o.Erasure.BlockSize))
	e.uvarint(uint64(o.Erasure.Index))
	e.uvarint(uint64(len(o.Erasure.Distribution)))
	for _, v := range o.Erasure.Distribution {
		e.uvarint(uint64(v))
	}
	e.buf = append(e.buf, o.Erasure.Bitrot)
	e.uvarint(uint64(len(o.Parts)))
	for _, p := range o.Parts {
		e.uvarint(uint64(p.Number))
		e.varint(p.Size)
		e.str(p.ETag)
		e.str(p.Checksum)
		e.str(p.DataID)
	}
	e.str(o.Bucket)
	e.str(o.Key)
	e.str(o.UploadID)
	e.strMap(o.Tags)
	e.str(o.LockMode)
	e.varint(o.RetainUntil)
	e.str(o.LegalHold)
	e.str(o.Cipher)
	e.strMap(o.Sealed)
	binary.LittleEndian.PutUint32(e.buf[start-4:], uint32(len(e.buf)-start))
	e.u32(crc32.Checksum(e.buf, castagnoli))
	return e.buf
}

// Unmarshal decodes a metadata file, verifying magic, version and checksum.
func Unmarshal(b []byte) (*Object, error) {
	o := &Object{}
	if err := o.unmarshal(b); err != nil {
		return nil, err
	}
	return o, nil
}

// unmarshal decodes b into o. The version's strings share one copy of
// its payload (one allocation instead of one per field).
func (o *Object) unmarshal(b []byte) error {
	const header = 4 + 2 + 4
	if len(b) < header+4 {
		return fmt.Errorf("%w: %d bytes is too short", ErrCorrupt, len(b))
	}
	if [4]byte(b[:4]) != Magic {
		return fmt.Errorf("%w: bad magic", ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint16(b[4:]); v != FormatVersion {
		return fmt.Errorf("%w: unknown format version %d", ErrCorrupt, v)
	}
	n := int(binary.LittleEndian.Uint32(b[6:]))
	if n != len(b)-header-4 {
		return fmt.Errorf("%w: payload length %d, file holds %d", ErrCorrupt, n, len(b)-header-4)
	}
	if got, want := crc32.Checksum(b[:len(b)-4], castagnoli), binary.LittleEndian.Uint32(b[len(b)-4:]); got != want {
		return fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	payload := b[header : len(b)-4]
	d := decoder{buf: payload, text: string(payload)}
	o.Size = d.varint()
	o.ModTime = d.varint()
	o.ETag = d.str()
	o.ContentType = d.str()
	o.StorageClass = d.str()
	o.Owner = d.str()
	o.ACL = d.str()
	o.Headers = d.strMap()
	o.UserMeta = d.strMap()
	o.ChecksumAlgo = d.str()
	o.ChecksumVal = d.str()
	o.ChecksumType = d.str()
	o.DataID = d.str()
	o.Inline = d.byte() != 0
	o.VersionID = d.str()
	o.Flags = d.byte()
	o.Erasure.DataShards = d.count(256)
	o.Erasure.ParityShards = d.count(256)
	o.Erasure.BlockSize = d.count(1 << 30)
	o.Erasure.Index = d.count(512)
	if nd := d.count(512); nd > 0 {
		o.Erasure.Distribution = make([]int, nd)
		for i := range o.Erasure.Distribution {
			o.Erasure.Distribution[i] = d.count(512)
		}
	}
	o.Erasure.Bitrot = d.byte()
	if np := d.count(10001); np > 0 {
		o.Parts = make([]Part, np)
		for i := range o.Parts {
			o.Parts[i].Number = d.count(10001)
			o.Parts[i].Size = d.varint()
			o.Parts[i].ETag = d.str()
			o.Parts[i].Checksum = d.str()
			o.Parts[i].DataID = d.str()
		}
	}
	o.Bucket = d.str()
	o.Key = d.str()
	o.UploadID = d.str()
	// Optional trailing fields: absent from records of older releases.
	if d.err == nil && len(d.buf) > 0 {
		o.Tags = d.strMap()
	}
	if d.err == nil && len(d.buf) > 0 {
		o.LockMode = d.str()
		o.RetainUntil = d.varint()
		o.LegalHold = d.str()
	}
	if d.err == nil && len(d.buf) > 0 {
		o.Cipher = d.str()
		o.Sealed = d.strMap()
	}
	if d.err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, d.err)
	}
	return nil
}

type encoder struct{ buf []byte }

func (e *encoder) u16(v uint16)     { e.buf = binary.LittleEndian.AppendUint16(e.buf, v) }
func (e *encoder) u32(v uint32)     { e.buf = binary.LittleEndian.AppendUint32(e.buf, v) }
func (e *encoder) uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) varint(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *encoder) str(s string)     { e.uvarint(uint64(len(s))); e.buf = append(e.buf, s...) }
func (e *encoder) bytes(b []byte)   { e.uvarint(uint64(len(b))); e.buf = append(e.buf, b...) }
func (e *encoder) bool(v bool) {
	if v {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

// strMap encodes a map in sorted key order so equal maps encode equally.
func (e *encoder) strMap(m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	e.uvarint(uint64(len(keys)))
	for _, k := range keys {
		e.str(k)
		e.str(m[k])
	}
}

// decoder reads fields, remembering the first error so callers can decode
// a whole record and check once.
type decoder struct {
	buf []byte
	err error
	// text, when set, holds the bytes buf is a suffix of, as a string:
	// str returns substrings of it instead of allocating each string.
	text string
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = errors.New(what)
	}
	d.buf = nil
}

func (d *decoder) uvarint() uint64 {
	// Most numbers are lengths and counts under 128: one byte.
	if len(d.buf) > 0 && d.buf[0] < 0x80 {
		v := uint64(d.buf[0])
		d.buf = d.buf[1:]
		return v
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail("truncated integer")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail("truncated integer")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// count reads a length or small number and bounds it, so a corrupt file
// cannot make the decoder allocate without limit.
func (d *decoder) count(max int) int {
	v := d.uvarint()
	if v > uint64(max) {
		d.overLimit(v, max)
		return 0
	}
	return int(v)
}

// overLimit fails d for count; out of line, so count stays small enough
// to inline.
func (d *decoder) overLimit(v uint64, max int) {
	d.fail(fmt.Sprintf("value %d over limit %d", v, max))
}

func (d *decoder) byte() byte {
	if len(d.buf) < 1 {
		d.fail("truncated byte")
		return 0
	}
	b := d.buf[0]
	d.buf = d.buf[1:]
	return b
}

func (d *decoder) bytes() []byte {
	n := d.count(len(d.buf))
	if d.err != nil || n == 0 {
		return nil
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b
}

func (d *decoder) str() string {
	if d.text == "" {
		return string(d.bytes())
	}
	n := d.count(len(d.buf))
	if d.err != nil || n == 0 {
		return ""
	}
	at := len(d.text) - len(d.buf)
	d.buf = d.buf[n:]
	return d.text[at : at+n]
}

func (d *decoder) strMap() map[string]string {
	n := d.count(len(d.buf))
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for i := 0; i < n && d.err == nil; i++ {
		k := d.str()
		m[k] = d.str()
	}
	return m
}
