package minioformat

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/google/uuid"
)

// ErrUnsupported is wrapped by errors about input that is well formed but
// of a kind this package does not decode (a newer format version, the
// pre-2020 JSON metadata, a legacy version entry).
var ErrUnsupported = errors.New("minioformat: unsupported")

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnsupported}, args...)...)
}

// MaxMetaSize is the largest xl.meta Decode accepts. MinIO refuses to
// write more than 1000 versions of an object by default and inlines at
// most 128 KiB per version; a file over this size is not one of its.
const MaxMetaSize = 256 << 20

// Kind is a version entry's type, as MinIO numbers it on disk.
type Kind uint8

// The version kinds.
const (
	KindObject       Kind = 1 // an object version (PUT, multipart, copy)
	KindDeleteMarker Kind = 2 // a delete marker (or a tiering "free version")
	KindLegacy       Kind = 3 // a pre-2020 object kept inside xl.meta
)

func (k Kind) String() string {
	switch k {
	case KindObject:
		return "object"
	case KindDeleteMarker:
		return "delete-marker"
	case KindLegacy:
		return "legacy"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Header flags of a version entry.
const (
	FlagFreeVersion uint8 = 1 << 0 // tiering bookkeeping; not an S3 version
	FlagUsesDataDir uint8 = 1 << 1 // the data is (also) in the version's data dir
	FlagInlineData  uint8 = 1 << 2 // the data is inline in xl.meta
)

// Meta is one decoded xl.meta: one drive's copy of every version of one
// object key.
type Meta struct {
	Major, Minor  uint16 // file format version, 1.0 to 1.3
	HeaderVersion uint8  // version of the per-version index entries (v1.3 only)
	MetaVersion   uint8  // version of the version entries (v1.3 only)
	// Versions, newest first: in v1.3 in the order stored; older files
	// are sorted by modification time as MinIO does when it loads them.
	Versions []Version
	// Inline holds the inline data section, one entry per version that
	// has its shard inline, keyed by version id ("null" for the null
	// version), in stored order. Each value is this drive's shard in the
	// HighwayHash framing of part files.
	Inline []InlineEntry
}

// InlineEntry is one version's inline shard stream.
type InlineEntry struct {
	Key  string
	Data []byte
}

// InlineData returns the inline shard of the version with id key
// ("null" for the null version), or nil.
func (m *Meta) InlineData(key string) []byte {
	for _, e := range m.Inline {
		if e.Key == key {
			return e.Data
		}
	}
	return nil
}

// Version is one entry of the versions array.
type Version struct {
	Kind Kind
	// Header is the index entry MinIO keeps beside each version (v1.3);
	// for older files it is derived from the version itself.
	Header       Header
	WrittenBy    uint64 // MinIO release of the writer as a Unix time; 0 for development builds and before 2022
	Object       *Object
	DeleteMarker *DeleteMarker
	// Legacy is the raw msgpack of a KindLegacy entry (not decoded).
	Legacy []byte
	// Unknown lists map keys of the entry that this package does not know;
	// a caller that must not lose information should refuse the version.
	Unknown []string
}

// Header is a version's index entry.
type Header struct {
	VersionID [16]byte
	ModTime   int64 // Unix nanoseconds
	Signature [4]byte
	Kind      Kind
	Flags     uint8
	EcN, EcM  uint8 // parity and data shards; 0 in headers before version 3
}

// ID returns the version id as S3 shows it: "null" for the all-zero id.
func (v *Version) ID() string { return VersionIDString(v.Header.VersionID) }

// ModTime returns the version's modification time.
func (v *Version) ModTime() time.Time { return time.Unix(0, v.Header.ModTime).UTC() }

// VersionIDString formats a version id: "null" for the all-zero id, else
// the UUID.
func VersionIDString(id [16]byte) string {
	if id == ([16]byte{}) {
		return "null"
	}
	return uuid.UUID(id).String()
}

// Object is an object version.
type Object struct {
	VersionID        [16]byte
	DataDir          [16]byte // directory of the part files, a UUID
	ErasureAlgorithm uint8    // 1: Reed-Solomon
	DataBlocks       int      // M
	ParityBlocks     int      // N (K in shardstore's terms)
	BlockSize        int64
	Index            int     // this drive's shard, 1..M+N
	Distribution     []uint8 // shard index held by each drive of the set, in set order
	ChecksumAlgo     uint8   // 1: HighwayHash-256, streaming
	Parts            []Part
	Size             int64 // stored size (after compression or encryption)
	ModTime          int64 // Unix nanoseconds
	MetaSys          map[string][]byte
	MetaUser         map[string]string
	Unknown          []string
}

// Part is one part of an object version (a single PUT has part 1).
type Part struct {
	Number     int
	ETag       string // empty for a single PUT
	Size       int64  // stored size
	ActualSize int64  // size before compression or encryption; -1 if unknown
	Index      []byte // compression index, if any
}

// DeleteMarker is a delete marker (or free version).
type DeleteMarker struct {
	VersionID [16]byte
	ModTime   int64
	MetaSys   map[string][]byte
	Unknown   []string
}

// Reserved metadata keys (MinIO writes them lower case in MetaSys).
const (
	MetaPrefix           = "x-minio-internal-"
	MetaInlineData       = MetaPrefix + "inline-data"
	MetaActualSize       = MetaPrefix + "actual-size"
	MetaCompression      = MetaPrefix + "compression"
	MetaChecksums        = MetaPrefix + "crc"
	MetaTransitionStatus = MetaPrefix + "transition-status"
	MetaEncryptionPrefix = MetaPrefix + "server-side-encryption-"
	MetaEncryptedMP      = MetaPrefix + "encrypted-multipart"
)

// sys looks a reserved key up case-insensitively (MinIO keeps whatever
// case the writer used).
func (o *Object) sys(key string) ([]byte, bool) {
	if v, ok := o.MetaSys[key]; ok {
		return v, true
	}
	for k, v := range o.MetaSys {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return nil, false
}

// ETag returns the version's ETag as stored (without quotes).
func (o *Object) ETag() string { return o.MetaUser["etag"] }

// Inline reports whether the version's shards are inline in xl.meta.
func (o *Object) Inline() bool { _, ok := o.sys(MetaInlineData); return ok }

// Compressed reports whether MinIO compressed the data (S2).
func (o *Object) Compressed() bool { _, ok := o.sys(MetaCompression); return ok }

// Transitioned reports whether the data was moved to a remote tier.
func (o *Object) Transitioned() bool {
	v, _ := o.sys(MetaTransitionStatus)
	return string(v) == "complete"
}

// Encrypted reports whether the version is server-side encrypted.
func (o *Object) Encrypted() bool {
	for k := range o.MetaSys {
		if len(k) >= len(MetaEncryptionPrefix) && strings.EqualFold(k[:len(MetaEncryptionPrefix)], MetaEncryptionPrefix) ||
			strings.EqualFold(k, MetaEncryptedMP) {
			return true
		}
	}
	return false
}

// Encryption names how an encrypted version was encrypted, from the
// keys MinIO seals its object key under: "SSE-C" (the client's key),
// "SSE-S3" or "SSE-KMS" (its KMS's key, keyID: the KMS key's name), or
// "SSE" when the metadata says neither; "" when not encrypted.
func (o *Object) Encryption() (kind, keyID string) {
	if !o.Encrypted() {
		return "", ""
	}
	id, _ := o.sys(metaKMSKeyID)
	switch {
	case o.hasSys(metaSealedKeyS3):
		return "SSE-S3", string(id)
	case o.hasSys(metaSealedKeyKMS):
		return "SSE-KMS", string(id)
	case o.hasSys(metaSealedKeySSEC):
		return "SSE-C", ""
	}
	return "SSE", string(id)
}

// The object-key seals MinIO records (internal/crypto of its source).
const (
	metaSealedKeySSEC = "X-Minio-Internal-Server-Side-Encryption-Sealed-Key"
	metaSealedKeyS3   = "X-Minio-Internal-Server-Side-Encryption-S3-Sealed-Key"
	metaSealedKeyKMS  = "X-Minio-Internal-Server-Side-Encryption-Kms-Sealed-Key"
	metaKMSKeyID      = "X-Minio-Internal-Server-Side-Encryption-S3-Kms-Key-Id"
)

func (o *Object) hasSys(key string) bool {
	_, ok := o.sys(key)
	return ok
}

// ActualSize returns the size S3 clients see: the actual-size metadata of
// a compressed or encrypted version, else Size.
func (o *Object) ActualSize() (int64, error) {
	v, ok := o.sys(MetaActualSize)
	if !ok {
		return o.Size, nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < 0 {
		return 0, corruptf("actual size %q", v)
	}
	return n, nil
}

// ShardSize is the length of one shard of a full block: ceil(BlockSize/M).
func (o *Object) ShardSize() int64 {
	return (o.BlockSize + int64(o.DataBlocks) - 1) / int64(o.DataBlocks)
}

// ShardDataSize is the number of shard bytes (without checksums) one
// drive holds for a part of the given stored size: whole blocks give
// ShardSize each, the last partial block ceil(rest/M).
func (o *Object) ShardDataSize(partSize int64) int64 {
	full := partSize / o.BlockSize
	rest := partSize % o.BlockSize
	return full*o.ShardSize() + (rest+int64(o.DataBlocks)-1)/int64(o.DataBlocks)
}

// ShardFileSize is the length of a part file (or inline shard stream):
// the shard bytes plus one checksum per ShardSize chunk.
func (o *Object) ShardFileSize(partSize int64) int64 {
	return StreamSize(o.ShardDataSize(partSize), o.ShardSize())
}

// DataDirString returns the data directory name (a UUID).
func (o *Object) DataDirString() string { return uuid.UUID(o.DataDir).String() }

// Validate checks what reading the data relies on: the erasure geometry,
// the distribution, the checksum algorithm and the parts.
func (o *Object) Validate() error {
	if o.ErasureAlgorithm != 1 {
		return unsupportedf("erasure algorithm %d", o.ErasureAlgorithm)
	}
	if o.ChecksumAlgo != 1 {
		return unsupportedf("bitrot algorithm %d", o.ChecksumAlgo)
	}
	m, n := o.DataBlocks, o.ParityBlocks
	if m <= 0 || n < 0 || m+n > 256 || n > m {
		return corruptf("erasure %d+%d", m, n)
	}
	if o.BlockSize <= 0 || o.BlockSize > MaxBlockSize {
		return corruptf("block size %d", o.BlockSize)
	}
	if o.Index < 1 || o.Index > m+n {
		return corruptf("erasure index %d of %d", o.Index, m+n)
	}
	if len(o.Distribution) != m+n {
		return corruptf("distribution of %d drives for %d shards", len(o.Distribution), m+n)
	}
	var seen [257]bool
	for _, d := range o.Distribution {
		if d < 1 || int(d) > m+n || seen[d] {
			return corruptf("distribution %v is not a permutation", o.Distribution)
		}
		seen[d] = true
	}
	if o.Size < 0 {
		return corruptf("size %d", o.Size)
	}
	var sum int64
	prev := 0
	for _, p := range o.Parts {
		if p.Number <= prev || p.Number > 10000 {
			return corruptf("part numbers not ascending in 1..10000")
		}
		prev = p.Number
		if p.Size < 0 || sum > o.Size-p.Size {
			return corruptf("part sizes do not add up to %d", o.Size)
		}
		sum += p.Size
	}
	if sum != o.Size {
		return corruptf("part sizes add up to %d, size %d", sum, o.Size)
	}
	if len(o.Parts) == 0 && o.Size != 0 {
		return corruptf("no parts for %d bytes", o.Size)
	}
	return nil
}

// Decode decodes an xl.meta file (XL2 format 1.0 to 1.3). It checks the
// metadata CRC of 1.2 and 1.3, decodes every version, cross-checks the
// v1.3 index entries against the versions and validates object versions.
// Inline and Legacy alias buf; everything else is copied.
func Decode(buf []byte) (*Meta, error) {
	if len(buf) > MaxMetaSize {
		return nil, corruptf("xl.meta of %d bytes", len(buf))
	}
	if len(buf) >= 1 && buf[0] == '{' {
		return nil, unsupportedf("xl.json-style JSON metadata (MinIO before mid-2020)")
	}
	if len(buf) < 8 || string(buf[:4]) != "XL2 " {
		return nil, corruptf("no XL2 header")
	}
	m := &Meta{}
	if string(buf[4:8]) == "1   " {
		m.Major, m.Minor = 1, 0
	} else {
		m.Major, m.Minor = binary.LittleEndian.Uint16(buf[4:6]), binary.LittleEndian.Uint16(buf[6:8])
	}
	if m.Major != 1 || m.Minor > 3 {
		return nil, unsupportedf("xl.meta version %d.%d", m.Major, m.Minor)
	}
	r := &mpReader{b: buf[8:]}
	var meta []byte
	if m.Minor == 0 {
		meta, r.b = r.b, nil
	} else {
		var err error
		if meta, err = r.bin(); err != nil {
			return nil, fmt.Errorf("metadata: %w", err)
		}
		if m.Minor >= 2 {
			crc, err := r.uint()
			if err != nil {
				return nil, fmt.Errorf("metadata CRC: %w", err)
			}
			if got := uint32(xxhash.Sum64(meta)); uint64(got) != crc {
				return nil, corruptf("metadata CRC 0x%08x, stored 0x%08x", got, crc)
			}
		}
		if err := m.decodeInline(r.b); err != nil {
			return nil, err
		}
	}
	if m.Minor == 3 {
		if err := m.decodeIndexed(meta); err != nil {
			return nil, err
		}
	} else if err := m.decodeListed(meta); err != nil {
		return nil, err
	}
	for i := range m.Versions {
		v := &m.Versions[i]
		if v.Object != nil {
			if err := v.Object.Validate(); err != nil {
				return nil, fmt.Errorf("version %s: %w", v.ID(), err)
			}
			if err := m.checkInline(v); err != nil {
				return nil, fmt.Errorf("version %s: %w", v.ID(), err)
			}
		}
	}
	return m, nil
}

// checkInline: a version marked inline has its shard in the inline
// section, of the length its size gives (a file cut short right after the
// CRC would otherwise read as one without inline data).
func (m *Meta) checkInline(v *Version) error {
	o := v.Object
	if !o.Inline() {
		return nil
	}
	if len(o.Parts) > 1 {
		return corruptf("inline data for %d parts", len(o.Parts))
	}
	for _, e := range m.Inline {
		if e.Key == v.ID() {
			if int64(len(e.Data)) != o.ShardFileSize(o.Size) {
				return corruptf("inline shard of %d bytes, want %d", len(e.Data), o.ShardFileSize(o.Size))
			}
			return nil
		}
	}
	return corruptf("inline shard missing")
}

func (m *Meta) decodeInline(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if b[0] != 1 {
		return unsupportedf("inline data version %d", b[0])
	}
	r := &mpReader{b: b[1:]}
	n, err := r.mapLen()
	if err != nil {
		return fmt.Errorf("inline data: %w", err)
	}
	m.Inline = make([]InlineEntry, 0, n)
	for range n {
		k, err := r.key()
		if err != nil {
			return fmt.Errorf("inline data: %w", err)
		}
		if k == "" {
			return corruptf("inline data: empty key")
		}
		d, err := r.bin()
		if err != nil {
			return fmt.Errorf("inline data %s: %w", k, err)
		}
		m.Inline = append(m.Inline, InlineEntry{Key: k, Data: d})
	}
	if r.left() != 0 {
		return corruptf("inline data: %d bytes after the last entry", r.left())
	}
	return nil
}

// decodeIndexed decodes the v1.3 layout: header version, meta version,
// count, then per version an index entry and the version, both as bin.
func (m *Meta) decodeIndexed(meta []byte) error {
	r := &mpReader{b: meta}
	hv, err := r.intRange(1, 255)
	if err != nil {
		return fmt.Errorf("header version: %w", err)
	}
	mv, err := r.intRange(0, 255)
	if err != nil {
		return fmt.Errorf("meta version: %w", err)
	}
	if hv > 3 || mv > 3 {
		return unsupportedf("header version %d, meta version %d", hv, mv)
	}
	m.HeaderVersion, m.MetaVersion = uint8(hv), uint8(mv)
	cnt, err := r.int()
	if err != nil {
		return fmt.Errorf("version count: %w", err)
	}
	if cnt < 0 || cnt > int64(r.left()/2) {
		return corruptf("%d versions announced in %d bytes", cnt, r.left())
	}
	m.Versions = make([]Version, 0, cnt)
	for i := range int(cnt) {
		hb, err := r.bin()
		if err != nil {
			return fmt.Errorf("version %d header: %w", i, err)
		}
		vb, err := r.bin()
		if err != nil {
			return fmt.Errorf("version %d: %w", i, err)
		}
		h, err := decodeHeader(hb, m.HeaderVersion)
		if err != nil {
			return fmt.Errorf("version %d header: %w", i, err)
		}
		v, err := decodeVersion(&mpReader{b: vb}, true)
		if err != nil {
			return fmt.Errorf("version %d: %w", i, err)
		}
		if err := v.checkHeader(h); err != nil {
			return fmt.Errorf("version %d: %w", i, err)
		}
		v.Header = h
		m.Versions = append(m.Versions, v)
	}
	if r.left() != 0 {
		return corruptf("%d bytes after the last version", r.left())
	}
	return nil
}

// decodeListed decodes the layout before v1.3: a map whose "Versions" is
// an array of versions.
func (m *Meta) decodeListed(meta []byte) error {
	r := &mpReader{b: meta}
	n, err := r.mapLen()
	if err != nil {
		return err
	}
	for range n {
		k, err := r.key()
		if err != nil {
			return err
		}
		if k != "Versions" {
			if err := r.skip(); err != nil {
				return err
			}
			continue
		}
		cnt, err := r.arrayLen()
		if err != nil {
			return fmt.Errorf("versions: %w", err)
		}
		m.Versions = make([]Version, 0, cnt)
		for i := range cnt {
			v, err := decodeVersion(r, false)
			if err != nil {
				return fmt.Errorf("version %d: %w", i, err)
			}
			v.Header = v.derivedHeader()
			m.Versions = append(m.Versions, v)
		}
	}
	sort.SliceStable(m.Versions, func(i, j int) bool { return m.Versions[i].Header.ModTime > m.Versions[j].Header.ModTime })
	return nil
}

func decodeHeader(b []byte, hv uint8) (Header, error) {
	var h Header
	r := &mpReader{b: b}
	n, err := r.arrayLen()
	if err != nil {
		return h, err
	}
	want := map[uint8]int{1: 4, 2: 5, 3: 7}[hv]
	if n != want {
		return h, corruptf("index entry of %d fields, version %d has %d", n, hv, want)
	}
	if err := r.fixedBin(h.VersionID[:]); err != nil {
		return h, err
	}
	if h.ModTime, err = r.int(); err != nil {
		return h, err
	}
	if hv >= 2 {
		if err := r.fixedBin(h.Signature[:]); err != nil {
			return h, err
		}
	}
	t, err := r.intRange(0, 255)
	if err != nil {
		return h, err
	}
	h.Kind = Kind(t)
	f, err := r.intRange(0, 255)
	if err != nil {
		return h, err
	}
	h.Flags = uint8(f)
	if hv >= 3 {
		en, err := r.intRange(0, 255)
		if err != nil {
			return h, err
		}
		em, err := r.intRange(0, 255)
		if err != nil {
			return h, err
		}
		h.EcN, h.EcM = uint8(en), uint8(em)
	}
	if r.left() != 0 {
		return h, corruptf("%d bytes after the index entry", r.left())
	}
	return h, nil
}

// derivedHeader builds the index entry of a version read from a file
// older than v1.3 (signature left zero).
func (v *Version) derivedHeader() Header {
	h := Header{Kind: v.Kind}
	switch {
	case v.Object != nil:
		o := v.Object
		h.VersionID, h.ModTime = o.VersionID, o.ModTime
		h.EcM, h.EcN = uint8(o.DataBlocks), uint8(o.ParityBlocks)
		if !o.Transitioned() {
			h.Flags |= FlagUsesDataDir
		}
		if o.Inline() {
			h.Flags |= FlagInlineData
		}
	case v.DeleteMarker != nil:
		h.VersionID, h.ModTime = v.DeleteMarker.VersionID, v.DeleteMarker.ModTime
		if _, ok := v.DeleteMarker.MetaSys[MetaPrefix+"free-version"]; ok {
			h.Flags |= FlagFreeVersion
		}
	}
	return h
}

func (v *Version) checkHeader(h Header) error {
	if h.Kind != v.Kind {
		return corruptf("index says %s, entry is %s", h.Kind, v.Kind)
	}
	var id [16]byte
	var mt int64
	switch {
	case v.Object != nil:
		id, mt = v.Object.VersionID, v.Object.ModTime
		if h.EcM != 0 && (int(h.EcM) != v.Object.DataBlocks || int(h.EcN) != v.Object.ParityBlocks) {
			return corruptf("index says %d+%d, entry %d+%d", h.EcM, h.EcN, v.Object.DataBlocks, v.Object.ParityBlocks)
		}
	case v.DeleteMarker != nil:
		id, mt = v.DeleteMarker.VersionID, v.DeleteMarker.ModTime
	default:
		return nil // legacy: not decoded
	}
	if id != h.VersionID || mt != h.ModTime {
		return corruptf("index entry (%s, %d) does not match the version (%s, %d)",
			VersionIDString(h.VersionID), h.ModTime, VersionIDString(id), mt)
	}
	return nil
}

// decodeVersion decodes one version map. whole: the reader holds exactly
// this version.
func decodeVersion(r *mpReader, whole bool) (Version, error) {
	var v Version
	n, err := r.mapLen()
	if err != nil {
		return v, err
	}
	for range n {
		k, err := r.key()
		if err != nil {
			return v, err
		}
		switch k {
		case "Type":
			t, err := r.intRange(0, 255)
			if err != nil {
				return v, fmt.Errorf("Type: %w", err)
			}
			v.Kind = Kind(t)
		case "V2Obj":
			if r.nilNext() {
				continue
			}
			o, err := decodeObject(r)
			if err != nil {
				return v, fmt.Errorf("V2Obj: %w", err)
			}
			v.Object = o
		case "DelObj":
			if r.nilNext() {
				continue
			}
			d, err := decodeDeleteMarker(r)
			if err != nil {
				return v, fmt.Errorf("DelObj: %w", err)
			}
			v.DeleteMarker = d
		case "V1Obj":
			if r.nilNext() {
				continue
			}
			start := r.b
			if err := r.skip(); err != nil {
				return v, fmt.Errorf("V1Obj: %w", err)
			}
			v.Legacy = start[:len(start)-len(r.b)]
		case "v":
			if v.WrittenBy, err = r.uint(); err != nil {
				return v, fmt.Errorf("v: %w", err)
			}
		default:
			v.Unknown = append(v.Unknown, k)
			if err := r.skip(); err != nil {
				return v, err
			}
		}
	}
	if whole && r.left() != 0 {
		return v, corruptf("%d bytes after the version", r.left())
	}
	switch v.Kind {
	case KindObject:
		if v.Object == nil {
			return v, corruptf("object version without V2Obj")
		}
		v.DeleteMarker, v.Legacy = nil, nil
	case KindDeleteMarker:
		if v.DeleteMarker == nil {
			return v, corruptf("delete marker without DelObj")
		}
		v.Object, v.Legacy = nil, nil
	case KindLegacy:
		if v.Legacy == nil {
			return v, corruptf("legacy version without V1Obj")
		}
		v.Object, v.DeleteMarker = nil, nil
	default:
		return v, corruptf("version type %d", v.Kind)
	}
	return v, nil
}

func decodeObject(r *mpReader) (*Object, error) {
	o := &Object{}
	n, err := r.mapLen()
	if err != nil {
		return nil, err
	}
	var nums []int
	var etags []string
	var sizes, asizes []int64
	var idx [][]byte
	for range n {
		k, err := r.key()
		if err != nil {
			return nil, err
		}
		var v int64
		switch k {
		case "ID":
			err = r.fixedBin(o.VersionID[:])
		case "DDir":
			err = r.fixedBin(o.DataDir[:])
		case "EcAlgo":
			v, err = r.intRange(0, 255)
			o.ErasureAlgorithm = uint8(v)
		case "EcM":
			v, err = r.intRange(0, 256)
			o.DataBlocks = int(v)
		case "EcN":
			v, err = r.intRange(0, 256)
			o.ParityBlocks = int(v)
		case "EcBSize":
			o.BlockSize, err = r.int()
		case "EcIndex":
			v, err = r.intRange(0, 256)
			o.Index = int(v)
		case "EcDist":
			o.Distribution, err = r.uint8s()
		case "CSumAlgo":
			v, err = r.intRange(0, 255)
			o.ChecksumAlgo = uint8(v)
		case "PartNums":
			nums, err = r.ints(1, 10000)
		case "PartETags":
			etags, err = r.strs()
		case "PartSizes":
			sizes, err = r.int64s(0)
		case "PartASizes":
			asizes, err = r.int64s(-1)
		case "PartIdx":
			idx, err = r.bins()
		case "Size":
			o.Size, err = r.int()
		case "MTime":
			o.ModTime, err = r.int()
		case "MetaSys":
			o.MetaSys, err = r.binMap()
		case "MetaUsr":
			o.MetaUser, err = r.strMap()
		default:
			o.Unknown = append(o.Unknown, k)
			err = r.skip()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	if len(sizes) != len(nums) || (len(etags) != 0 && len(etags) != len(nums)) ||
		(len(asizes) != 0 && len(asizes) != len(nums)) || (len(idx) != 0 && len(idx) != len(nums)) {
		return nil, corruptf("part arrays of different lengths (%d numbers, %d sizes, %d etags, %d actual sizes, %d indexes)",
			len(nums), len(sizes), len(etags), len(asizes), len(idx))
	}
	o.Parts = make([]Part, len(nums))
	for i := range nums {
		p := &o.Parts[i]
		p.Number, p.Size, p.ActualSize = nums[i], sizes[i], -1
		if len(etags) > 0 {
			p.ETag = etags[i]
		}
		if len(asizes) > 0 {
			p.ActualSize = asizes[i]
		}
		if len(idx) > 0 && len(idx[i]) > 0 {
			p.Index = bytes.Clone(idx[i])
		}
	}
	return o, nil
}

func decodeDeleteMarker(r *mpReader) (*DeleteMarker, error) {
	d := &DeleteMarker{}
	n, err := r.mapLen()
	if err != nil {
		return nil, err
	}
	for range n {
		k, err := r.key()
		if err != nil {
			return nil, err
		}
		switch k {
		case "ID":
			err = r.fixedBin(d.VersionID[:])
		case "MTime":
			d.ModTime, err = r.int()
		case "MetaSys":
			d.MetaSys, err = r.binMap()
		default:
			d.Unknown = append(d.Unknown, k)
			err = r.skip()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	return d, nil
}

// uint8s reads an array of small integers, or (as an older encoder may
// have written it) a bin.
func (r *mpReader) uint8s() ([]uint8, error) {
	c, err := r.peek()
	if err != nil {
		return nil, err
	}
	if c >= 0xc4 && c <= 0xc6 {
		b, err := r.bin()
		return bytes.Clone(b), err
	}
	n, err := r.arrayLen()
	if err != nil {
		return nil, err
	}
	out := make([]uint8, n)
	for i := range out {
		v, err := r.intRange(0, 255)
		if err != nil {
			return nil, err
		}
		out[i] = uint8(v)
	}
	return out, nil
}

func (r *mpReader) ints(lo, hi int64) ([]int, error) {
	n, err := r.arrayLen()
	if err != nil {
		return nil, err
	}
	out := make([]int, n)
	for i := range out {
		v, err := r.intRange(lo, hi)
		if err != nil {
			return nil, err
		}
		out[i] = int(v)
	}
	return out, nil
}

func (r *mpReader) int64s(lo int64) ([]int64, error) {
	n, err := r.arrayLen()
	if err != nil {
		return nil, err
	}
	out := make([]int64, n)
	for i := range out {
		v, err := r.int()
		if err != nil {
			return nil, err
		}
		if v < lo {
			return nil, corruptf("%d below %d", v, lo)
		}
		out[i] = v
	}
	return out, nil
}

func (r *mpReader) strs() ([]string, error) {
	n, err := r.arrayLen()
	if err != nil {
		return nil, err
	}
	out := make([]string, n)
	for i := range out {
		if out[i], err = r.str(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *mpReader) bins() ([][]byte, error) {
	n, err := r.arrayLen()
	if err != nil {
		return nil, err
	}
	out := make([][]byte, n)
	for i := range out {
		if out[i], err = r.bin(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *mpReader) binMap() (map[string][]byte, error) {
	n, err := r.mapLen()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, n)
	for range n {
		k, err := r.key()
		if err != nil {
			return nil, err
		}
		v, err := r.bin()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = bytes.Clone(v)
	}
	return out, nil
}

func (r *mpReader) strMap() (map[string]string, error) {
	n, err := r.mapLen()
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, n)
	for range n {
		k, err := r.key()
		if err != nil {
			return nil, err
		}
		if out[k], err = r.str(); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	return out, nil
}
