package migrate

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"time"
)

// A staged drive (another node's MinIO metadata, cluster.go) is one
// packed file, driveN.pack, instead of a file tree: a file per key and
// drive, created and removed on every node, was most of a cluster
// adoption's time (doc.go). The format:
//
//	magic    packMagic (8 bytes)
//	records  each: kind (1 byte: packDir, packFile or packSized),
//	         uvarint name length, name (slash-separated, relative to the
//	         drive, fs.ValidPath, its parent a directory record before it),
//	         varint modification time (Unix nanoseconds), uvarint size,
//	         CRC-32C of the header so far (4 bytes, little endian); then,
//	         for packFile only, the size bytes of content and their CRC-32C
//	end      kind packEnd, uvarint record count, CRC-32C of the
//	         header and of every byte of the file before it.
//
// packSized stands for a shard file by its size only (the adoption reads
// only the size of another node's part files). A pack is written once
// (to driveN.pack.partial, synced, renamed into place: a pack present
// is whole), read once into an index in memory (readPack: every record
// checked, a name twice, a record without its parent directory, bytes
// after the end or a file cut short refused), and its files' content
// is read from it by offset when asked for, checked again.

const packMagic = "SSSTAGE1"

const (
	packEnd   = 0
	packDir   = 1
	packFile  = 2
	packSized = 3
)

// maxPackName bounds a record's name (a key is at most 1024 bytes).
const maxPackName = 16 << 10

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// packEntry is one record of a pack, as indexed.
type packEntry struct {
	name  string // base name
	kind  byte
	mtime int64
	size  int64
	off   int64 // the content's offset in the pack (packFile)
	crc   uint32
	kids  []*packEntry
}

// packIndex checks names as records are added: valid, new, their
// parent a directory already there.
type packIndex struct {
	root    *packEntry
	byName  map[string]*packEntry
	records int64
}

func newPackIndex() *packIndex {
	root := &packEntry{name: ".", kind: packDir}
	return &packIndex{root: root, byName: map[string]*packEntry{".": root}}
}

func (x *packIndex) add(name string, e *packEntry) error {
	if name == "." || !fs.ValidPath(name) || len(name) > maxPackName {
		return fmt.Errorf("%w %q: not a path within the drive", errBadEntry, name)
	}
	if _, dup := x.byName[name]; dup {
		return fmt.Errorf("%w %q twice", errBadEntry, name)
	}
	parent := x.byName[path.Dir(name)]
	if parent == nil || parent.kind != packDir {
		return fmt.Errorf("%w %q: its directory is not staged before it (or is a file)", errBadEntry, name)
	}
	e.name = path.Base(name)
	x.byName[name] = e
	parent.kids = append(parent.kids, e)
	x.records++
	return nil
}

// packWriter writes a pack.
type packWriter struct {
	w     *bufio.Writer
	all   crc32Writer // every byte so far, for the end record
	index *packIndex
	hdr   []byte
}

type crc32Writer struct {
	w   io.Writer
	sum uint32
	n   int64
}

func (c *crc32Writer) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.sum = crc32.Update(c.sum, castagnoli, p[:n])
	c.n += int64(n)
	return n, err
}

func newPackWriter(w io.Writer) (*packWriter, error) {
	pw := &packWriter{w: bufio.NewWriterSize(w, 1<<20), index: newPackIndex()}
	pw.all.w = pw.w
	_, err := io.WriteString(&pw.all, packMagic)
	return pw, err
}

// header writes a record's header.
func (pw *packWriter) header(kind byte, name string, mtime time.Time, size int64) error {
	h := append(pw.hdr[:0], kind)
	h = binary.AppendUvarint(h, uint64(len(name)))
	h = append(h, name...)
	h = binary.AppendVarint(h, mtime.UnixNano())
	h = binary.AppendUvarint(h, uint64(size))
	h = binary.LittleEndian.AppendUint32(h, crc32.Checksum(h, castagnoli))
	pw.hdr = h
	_, err := pw.all.Write(h)
	return err
}

// dir adds a directory.
func (pw *packWriter) dir(name string, mtime time.Time) error {
	if err := pw.index.add(name, &packEntry{kind: packDir}); err != nil {
		return err
	}
	return pw.header(packDir, name, mtime, 0)
}

// sized adds a file standing for one of size bytes.
func (pw *packWriter) sized(name string, mtime time.Time, size int64) error {
	if size < 0 || size > maxShardFile {
		return fmt.Errorf("%w %q: size %d", errBadEntry, name, size)
	}
	if err := pw.index.add(name, &packEntry{kind: packSized, size: size}); err != nil {
		return err
	}
	return pw.header(packSized, name, mtime, size)
}

// file adds a file of size bytes read from r (fewer is an error).
func (pw *packWriter) file(name string, mtime time.Time, size int64, r io.Reader) error {
	if size < 0 {
		return fmt.Errorf("%w %q: size %d", errBadEntry, name, size)
	}
	if err := pw.index.add(name, &packEntry{kind: packFile, size: size}); err != nil {
		return err
	}
	if err := pw.header(packFile, name, mtime, size); err != nil {
		return err
	}
	h := crc32.New(castagnoli)
	n, err := io.CopyN(io.MultiWriter(&pw.all, h), r, size)
	if err != nil {
		return fmt.Errorf("staged entry %q: %d of %d bytes: %w", name, n, size, err)
	}
	_, err = pw.all.Write(binary.LittleEndian.AppendUint32(nil, h.Sum32()))
	return err
}

// close writes the end record and flushes (the caller syncs).
func (pw *packWriter) close() error {
	h := binary.AppendUvarint([]byte{packEnd}, uint64(pw.index.records))
	if _, err := pw.all.Write(h); err != nil {
		return err
	}
	if _, err := pw.w.Write(binary.LittleEndian.AppendUint32(nil, pw.all.sum)); err != nil {
		return err
	}
	return pw.w.Flush()
}

// errBadEntry is an entry a pack may not hold.
var errBadEntry = errors.New("staged entry")

// errBadPack is any damage readPack finds.
var errBadPack = errors.New("damaged staged drive")

// packedDrive is a pack read into its index: an fs.FS of the drive's
// staged files (fs.ReadDirFS, fs.StatFS, fs.ReadFileFS).
type packedDrive struct {
	r     io.ReaderAt
	name  string
	index *packIndex
}

// countingReader reads r sequentially, keeping the offset and the
// CRC-32C of every byte read.
type countingReader struct {
	r   *bufio.Reader
	off int64
	sum uint32
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.sum = crc32.Update(c.sum, castagnoli, p[:n])
	c.off += int64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return 0, err
	}
	return b[0], nil
}

// readPack reads and checks a whole pack of size bytes, building its
// index; name is for messages.
func readPack(r io.ReaderAt, size int64, name string) (*packedDrive, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %s: "+format, append([]any{errBadPack, name}, args...)...)
	}
	cr := &countingReader{r: bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 1<<20)}
	magic := make([]byte, len(packMagic))
	if _, err := io.ReadFull(cr, magic); err != nil || string(magic) != packMagic {
		return nil, bad("not a staged drive")
	}
	x := newPackIndex()
	hdr := &bytes.Buffer{}
	uvarint := func() (uint64, error) {
		v, err := binary.ReadUvarint(cr)
		hdr.Write(binary.AppendUvarint(nil, v))
		return v, err
	}
	crc := func() (uint32, error) {
		var b [4]byte
		_, err := io.ReadFull(cr, b[:])
		return binary.LittleEndian.Uint32(b[:]), err
	}
	for {
		hdr.Reset()
		before := cr.sum
		kind, err := cr.ReadByte()
		if err != nil {
			return nil, bad("cut short after %d records", x.records)
		}
		hdr.WriteByte(kind)
		if kind == packEnd {
			n, err := uvarint()
			if err != nil {
				return nil, bad("end record cut short")
			}
			sum := crc32.Update(before, castagnoli, hdr.Bytes())
			got, err := crc()
			if err != nil || got != sum {
				return nil, bad("end record checksum")
			}
			if n != uint64(x.records) {
				return nil, bad("end record says %d records, %d read", n, x.records)
			}
			if cr.off != size {
				return nil, bad("%d bytes after the end record", size-cr.off)
			}
			break
		}
		if kind != packDir && kind != packFile && kind != packSized {
			return nil, bad("record %d: kind %d", x.records+1, kind)
		}
		nl, err := uvarint()
		if err != nil || nl == 0 || nl > maxPackName || int64(nl) > size-cr.off {
			return nil, bad("record %d: name length", x.records+1)
		}
		nb := make([]byte, nl)
		if _, err := io.ReadFull(cr, nb); err != nil {
			return nil, bad("record %d: cut short", x.records+1)
		}
		hdr.Write(nb)
		mt, err := binary.ReadVarint(cr)
		if err != nil {
			return nil, bad("record %d: cut short", x.records+1)
		}
		hdr.Write(binary.AppendVarint(nil, mt))
		sz, err := uvarint()
		if err != nil {
			return nil, bad("record %d: cut short", x.records+1)
		}
		if got, err := crc(); err != nil || got != crc32.Checksum(hdr.Bytes(), castagnoli) {
			return nil, bad("record %d: header checksum", x.records+1)
		}
		e := &packEntry{kind: kind, mtime: mt}
		switch kind {
		case packDir:
			if sz != 0 {
				return nil, bad("record %d: a directory of size %d", x.records+1, sz)
			}
		case packSized:
			if sz > maxShardFile {
				return nil, bad("record %d: size %d", x.records+1, sz)
			}
			e.size = int64(sz)
		case packFile:
			if sz > uint64(size-cr.off) {
				return nil, bad("record %d: %d bytes of content, %d left", x.records+1, sz, size-cr.off)
			}
			e.size, e.off = int64(sz), cr.off
			h := crc32.New(castagnoli)
			if _, err := io.CopyN(h, cr, e.size); err != nil {
				return nil, bad("record %d: cut short", x.records+1)
			}
			e.crc = h.Sum32()
			if got, err := crc(); err != nil || got != e.crc {
				return nil, bad("record %d: content checksum", x.records+1)
			}
		}
		if err := x.add(string(nb), e); err != nil {
			return nil, bad("%v", err)
		}
	}
	for _, e := range x.byName {
		if e.kind == packDir {
			sort.Slice(e.kids, func(i, j int) bool { return e.kids[i].name < e.kids[j].name })
		}
	}
	return &packedDrive{r: r, name: name, index: x}, nil
}

// openPack opens and reads the pack at path.
func openPack(p string) (*packedDrive, *os.File, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	pd, err := readPack(f, fi.Size(), p)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return pd, f, nil
}

func (pd *packedDrive) lookup(op, name string) (*packEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	e := pd.index.byName[name]
	if e == nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return e, nil
}

// content reads a file's content, checked against its checksum.
func (pd *packedDrive) content(name string, e *packEntry) ([]byte, error) {
	if e.kind != packFile {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("only the size of this file is staged")}
	}
	b := make([]byte, e.size)
	if _, err := pd.r.ReadAt(b, e.off); err != nil && !(err == io.EOF && e.size == 0) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if crc32.Checksum(b, castagnoli) != e.crc {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w %s: content checksum", errBadPack, pd.name)}
	}
	return b, nil
}

func (pd *packedDrive) ReadFile(name string) ([]byte, error) {
	e, err := pd.lookup("read", name)
	if err != nil {
		return nil, err
	}
	if e.kind == packDir {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	return pd.content(name, e)
}

func (pd *packedDrive) Stat(name string) (fs.FileInfo, error) {
	e, err := pd.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return packInfo{e}, nil
}

func (pd *packedDrive) ReadDir(name string) ([]fs.DirEntry, error) {
	e, err := pd.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if e.kind != packDir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	out := make([]fs.DirEntry, len(e.kids))
	for i, k := range e.kids {
		out[i] = fs.FileInfoToDirEntry(packInfo{k})
	}
	return out, nil
}

func (pd *packedDrive) Open(name string) (fs.File, error) {
	e, err := pd.lookup("open", name)
	if err != nil {
		return nil, err
	}
	f := &packFileHandle{info: packInfo{e}}
	if e.kind == packDir {
		f.kids = e.kids
	} else {
		b, err := pd.content(name, e)
		if err != nil {
			return nil, err
		}
		f.Reader = bytes.NewReader(b)
	}
	return f, nil
}

// packFileHandle is an open staged file or directory (fs.File,
// fs.ReadDirFile).
type packFileHandle struct {
	*bytes.Reader
	info packInfo
	kids []*packEntry // a directory's entries not listed yet
}

func (f *packFileHandle) ReadDir(n int) ([]fs.DirEntry, error) {
	if !f.info.IsDir() {
		return nil, errors.New("not a directory")
	}
	k := len(f.kids)
	if n > 0 && n < k {
		k = n
	}
	out := make([]fs.DirEntry, k)
	for i, e := range f.kids[:k] {
		out[i] = fs.FileInfoToDirEntry(packInfo{e})
	}
	f.kids = f.kids[k:]
	if n > 0 && k == 0 {
		return nil, io.EOF
	}
	return out, nil
}

func (f *packFileHandle) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *packFileHandle) Close() error               { return nil }
func (f *packFileHandle) Read(p []byte) (int, error) {
	if f.Reader == nil {
		return 0, errors.New("is a directory")
	}
	return f.Reader.Read(p)
}

// packInfo is a staged entry's fs.FileInfo.
type packInfo struct{ e *packEntry }

func (i packInfo) Name() string       { return i.e.name }
func (i packInfo) Size() int64        { return i.e.size }
func (i packInfo) ModTime() time.Time { return time.Unix(0, i.e.mtime) }
func (i packInfo) IsDir() bool        { return i.e.kind == packDir }
func (i packInfo) Sys() any           { return nil }
func (i packInfo) Mode() fs.FileMode {
	if i.e.kind == packDir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
