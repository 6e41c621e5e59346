package migrate

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
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
//	         drive, fs.ValidPath, its parent a directory record: the
//	         writer puts it before, the reader finds it anywhere),
//	         varint modification time (Unix nanoseconds), uvarint size,
//	         CRC-32C of the header so far (4 bytes, little endian); then,
//	         for packFile only, the size bytes of content and their CRC-32C
//	end      kind packEnd, uvarint record count, CRC-32C of the
//	         header and of every byte of the file before it.
//
// packSized stands for a shard file by its size only (the adoption reads
// only the size of another node's part files). A pack is written once
// (to driveN.pack.partial, synced, renamed into place: a pack present
// is whole), read once into a compact index in memory (packIndex: every
// record checked, a name twice, a record without its parent directory,
// bytes after the end or a file cut short refused), and its files' content
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

// packEntry is one record of a pack, as indexed: no pointers, its name
// an offset into the index's one name block (the memory a staged drive
// costs is 40 bytes per record plus its path, doc.go).
type packEntry struct {
	mtime int64
	size  int64
	off   int64 // the content's offset in the pack (packFile)
	name  int64 // the path's offset in packIndex.names
	nlen  uint16
	kind  byte
	crc   uint32
}

// packIndex is a read pack's records sorted by path, compared a
// component at a time (comparePath): a directory's whole subtree
// follows it, its entries in name order, so a name is found by binary
// search and a directory is listed by skipping its entries' subtrees.
type packIndex struct {
	ents    []packEntry
	names   []byte
	records int64
}

// comparePath orders slash-separated paths component by component ('/'
// before every other byte).
func comparePath(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x == '/' {
			return -1
		}
		if y == '/' {
			return 1
		}
		return int(x) - int(y)
	}
	return len(a) - len(b)
}

func (x *packIndex) nameOf(e *packEntry) []byte { return x.names[e.name : e.name+int64(e.nlen)] }

// find returns the index of the entry named p among ents[:hi], or -1.
func (x *packIndex) find(p []byte, hi int) int {
	i := sort.Search(hi, func(i int) bool { return comparePath(x.nameOf(&x.ents[i]), p) >= 0 })
	if i < hi && bytes.Equal(x.nameOf(&x.ents[i]), p) {
		return i
	}
	return -1
}

// seal sorts the records read and checks them as a tree: no name twice,
// each one's parent a directory in the pack.
func (x *packIndex) seal() error {
	slices.SortFunc(x.ents, func(a, b packEntry) int { return comparePath(x.nameOf(&a), x.nameOf(&b)) })
	for i := range x.ents {
		name := x.nameOf(&x.ents[i])
		if i > 0 && bytes.Equal(name, x.nameOf(&x.ents[i-1])) {
			return fmt.Errorf("%w %q twice", errBadEntry, name)
		}
		slash := bytes.LastIndexByte(name, '/')
		if slash < 0 {
			continue
		}
		// The parent sorts before its entries.
		if j := x.find(name[:slash], i); j < 0 || x.ents[j].kind != packDir {
			return fmt.Errorf("%w %q: its directory is not staged (or is a file)", errBadEntry, name)
		}
	}
	return nil
}

// kids returns the entries directly in directory i (-1: the root).
func (x *packIndex) kids(i int) []int {
	var prefix []byte
	if i >= 0 {
		prefix = append(bytes.Clone(x.nameOf(&x.ents[i])), '/')
	}
	var out []int
	for j := i + 1; j < len(x.ents) && bytes.HasPrefix(x.nameOf(&x.ents[j]), prefix); {
		out = append(out, j)
		if x.ents[j].kind != packDir {
			j++
			continue
		}
		sub := append(bytes.Clone(x.nameOf(&x.ents[j])), '/')
		rest := x.ents[j+1:]
		j += 1 + sort.Search(len(rest), func(k int) bool { return !bytes.HasPrefix(x.nameOf(&rest[k]), sub) })
	}
	return out
}

// packSeen is what a packWriter keeps to refuse what readPack would: a
// hash of each path written and its kind, no names (a 64-bit hash: two
// paths sharing one would be refused as one named twice, or a missing
// directory taken as present; readPack, which compares the paths
// themselves, then refuses the pack: never a pack read wrong).
type packSeen struct {
	seed    maphash.Seed
	kinds   map[uint64]byte
	records int64
}

func newPackSeen() *packSeen {
	return &packSeen{seed: maphash.MakeSeed(), kinds: map[uint64]byte{}}
}

// validPackName reports whether name may name a record.
func validPackName(name string) error {
	if name == "." || !fs.ValidPath(name) || len(name) > maxPackName {
		return fmt.Errorf("%w %q: not a path within the drive", errBadEntry, name)
	}
	return nil
}

func (x *packSeen) has(name string) bool {
	_, ok := x.kinds[maphash.String(x.seed, name)]
	return ok
}

func (x *packSeen) add(name string, kind byte) error {
	if err := validPackName(name); err != nil {
		return err
	}
	h := maphash.String(x.seed, name)
	if _, dup := x.kinds[h]; dup {
		return fmt.Errorf("%w %q twice", errBadEntry, name)
	}
	if dir := path.Dir(name); dir != "." {
		if k, ok := x.kinds[maphash.String(x.seed, dir)]; !ok || k != packDir {
			return fmt.Errorf("%w %q: its directory is not staged before it (or is a file)", errBadEntry, name)
		}
	}
	x.kinds[h] = kind
	x.records++
	return nil
}

// packWriter writes a pack.
type packWriter struct {
	w    *bufio.Writer
	all  crc32Writer // every byte so far, for the end record
	seen *packSeen
	hdr  []byte
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
	pw := &packWriter{w: bufio.NewWriterSize(w, 1<<20), seen: newPackSeen()}
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
	if err := pw.seen.add(name, packDir); err != nil {
		return err
	}
	return pw.header(packDir, name, mtime, 0)
}

// sized adds a file standing for one of size bytes.
func (pw *packWriter) sized(name string, mtime time.Time, size int64) error {
	if size < 0 || size > maxShardFile {
		return fmt.Errorf("%w %q: size %d", errBadEntry, name, size)
	}
	if err := pw.seen.add(name, packSized); err != nil {
		return err
	}
	return pw.header(packSized, name, mtime, size)
}

// file adds a file of size bytes read from r (fewer is an error).
func (pw *packWriter) file(name string, mtime time.Time, size int64, r io.Reader) error {
	if size < 0 {
		return fmt.Errorf("%w %q: size %d", errBadEntry, name, size)
	}
	if err := pw.seen.add(name, packFile); err != nil {
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
	h := binary.AppendUvarint([]byte{packEnd}, uint64(pw.seen.records))
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
	x := &packIndex{}
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
		at := int64(len(x.names))
		x.names = slices.Grow(x.names, int(nl))[:at+int64(nl)]
		nb := x.names[at:]
		if _, err := io.ReadFull(cr, nb); err != nil {
			return nil, bad("record %d: cut short", x.records+1)
		}
		if err := validPackName(string(nb)); err != nil {
			return nil, bad("%v", err)
		}
		hdr.Write(nb)
		nameAt := at
		if n := len(x.ents); n > 0 {
			// A record under the one before it (a walk's order: a
			// key's directory, then its xl.meta) shares its bytes:
			// only "/xl.meta" is added to the name block.
			p := &x.ents[n-1]
			if pl := int64(p.nlen); p.name+pl == at && int64(nl) > pl && nb[pl] == '/' && bytes.Equal(nb[:pl], x.names[p.name:at]) {
				copy(x.names[at:], nb[pl:])
				x.names = x.names[:at+int64(nl)-pl]
				nameAt = p.name
			}
		}
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
		e := packEntry{kind: kind, mtime: mt, name: nameAt, nlen: uint16(nl)}
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
		x.ents = append(x.ents, e)
		x.records++
	}
	if err := x.seal(); err != nil {
		return nil, bad("%v", err)
	}
	x.ents = slices.Clip(x.ents)
	x.names = slices.Clip(x.names)
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

// lookup finds name: its entry's index, -1 for the root.
func (pd *packedDrive) lookup(op, name string) (int, error) {
	if !fs.ValidPath(name) {
		return 0, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return -1, nil
	}
	i := pd.index.find([]byte(name), len(pd.index.ents))
	if i < 0 {
		return 0, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return i, nil
}

// info is entry i's fs.FileInfo (-1: the root).
func (pd *packedDrive) info(i int) packInfo {
	if i < 0 {
		return packInfo{name: ".", kind: packDir}
	}
	e := &pd.index.ents[i]
	return packInfo{name: path.Base(string(pd.index.nameOf(e))), kind: e.kind, size: e.size, mtime: e.mtime}
}

// content reads a file's content, checked against its checksum.
func (pd *packedDrive) content(name string, i int) ([]byte, error) {
	e := pd.index.ents[i]
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

func (pd *packedDrive) isDir(i int) bool { return i < 0 || pd.index.ents[i].kind == packDir }

func (pd *packedDrive) ReadFile(name string) ([]byte, error) {
	i, err := pd.lookup("read", name)
	if err != nil {
		return nil, err
	}
	if pd.isDir(i) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	return pd.content(name, i)
}

func (pd *packedDrive) Stat(name string) (fs.FileInfo, error) {
	i, err := pd.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return pd.info(i), nil
}

// entries lists directory i.
func (pd *packedDrive) entries(i int) []fs.DirEntry {
	kids := pd.index.kids(i)
	out := make([]fs.DirEntry, len(kids))
	for k, j := range kids {
		out[k] = fs.FileInfoToDirEntry(pd.info(j))
	}
	return out
}

func (pd *packedDrive) ReadDir(name string) ([]fs.DirEntry, error) {
	i, err := pd.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !pd.isDir(i) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	return pd.entries(i), nil
}

func (pd *packedDrive) Open(name string) (fs.File, error) {
	i, err := pd.lookup("open", name)
	if err != nil {
		return nil, err
	}
	f := &packFileHandle{info: pd.info(i)}
	if pd.isDir(i) {
		f.kids = pd.entries(i)
	} else {
		b, err := pd.content(name, i)
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
	kids []fs.DirEntry // a directory's entries not listed yet
}

func (f *packFileHandle) ReadDir(n int) ([]fs.DirEntry, error) {
	if !f.info.IsDir() {
		return nil, errors.New("not a directory")
	}
	k := len(f.kids)
	if n > 0 && n < k {
		k = n
	}
	out := f.kids[:k:k]
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
type packInfo struct {
	name        string
	kind        byte
	size, mtime int64
}

func (i packInfo) Name() string       { return i.name }
func (i packInfo) Size() int64        { return i.size }
func (i packInfo) ModTime() time.Time { return time.Unix(0, i.mtime) }
func (i packInfo) IsDir() bool        { return i.kind == packDir }
func (i packInfo) Sys() any           { return nil }
func (i packInfo) Mode() fs.FileMode {
	if i.kind == packDir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
