package migrate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// samplePack writes a small pack: the shape of a MinIO drive.
func samplePack(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	pw, err := newPackWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	mt := time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(pw.dir(".minio.sys", mt))
	must(pw.file(".minio.sys/format.json", mt, 15, strings.NewReader(`{"format":"xl"}`)))
	must(pw.dir("bucket", mt))
	must(pw.dir("bucket/key", mt))
	must(pw.file("bucket/key/xl.meta", mt, 13, strings.NewReader("xl.meta bytes")))
	must(pw.dir("bucket/key/d", mt))
	must(pw.sized("bucket/key/d/part.1", mt, 1<<20))
	must(pw.file("bucket/empty", mt, 0, strings.NewReader("")))
	must(pw.close())
	return b.Bytes()
}

func readPackBytes(b []byte) (*packedDrive, error) {
	return readPack(bytes.NewReader(b), int64(len(b)), "test")
}

// TestPackRoundTrip: what is written reads back, as an fs.FS that
// passes the standard library's checks.
func TestPackRoundTrip(t *testing.T) {
	pd, err := readPackBytes(samplePack(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(pd, ".minio.sys/format.json", "bucket/key/xl.meta", "bucket/empty"); err != nil {
		// fstest reads every file: the size-only one cannot be read.
		for _, line := range strings.Split(err.Error(), "\n")[1:] {
			if !strings.Contains(line, "part.1") {
				t.Error(line)
			}
		}
	}
	if b, err := pd.ReadFile("bucket/key/xl.meta"); err != nil || string(b) != "xl.meta bytes" {
		t.Errorf("xl.meta: %q %v", b, err)
	}
	if b, err := pd.ReadFile("bucket/empty"); err != nil || len(b) != 0 {
		t.Errorf("empty: %q %v", b, err)
	}
	fi, err := pd.Stat("bucket/key/d/part.1")
	if err != nil || fi.Size() != 1<<20 || fi.IsDir() {
		t.Fatalf("part.1: %v %v", fi, err)
	}
	if fi, err := pd.Stat("bucket"); err != nil || !fi.IsDir() || !fi.ModTime().Equal(time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC)) {
		t.Errorf("bucket: %v %v", fi, err)
	}
	ents, err := pd.ReadDir("bucket")
	if err != nil || len(ents) != 2 || ents[0].Name() != "empty" || ents[1].Name() != "key" || !ents[1].IsDir() {
		t.Errorf("ReadDir(bucket): %v %v", ents, err)
	}
	for _, bad := range []string{"nothing", "bucket/key/xl.meta/x", "../x", "/bucket", "bucket/"} {
		if _, err := pd.Stat(bad); err == nil {
			t.Errorf("Stat(%q) found", bad)
		}
	}
	if _, err := pd.ReadFile("bucket/key/d/part.1"); err == nil {
		t.Error("content read from a size-only entry")
	}
	if _, err := pd.ReadDir("bucket/key/xl.meta"); err == nil {
		t.Error("ReadDir of a file")
	}
}

// TestPackHostile: a pack cut anywhere, with any byte changed, with
// bytes after its end, a name twice, an entry before its directory or
// under a file, or a size beyond the file, is refused.
func TestPackHostile(t *testing.T) {
	good := samplePack(t)
	for i := 0; i < len(good); i++ {
		if _, err := readPackBytes(good[:i]); !errors.Is(err, errBadPack) {
			t.Fatalf("cut at %d of %d: %v", i, len(good), err)
		}
		bad := bytes.Clone(good)
		bad[i] ^= 0x40
		if _, err := readPackBytes(bad); !errors.Is(err, errBadPack) {
			t.Fatalf("byte %d changed: %v", i, err)
		}
	}
	if _, err := readPackBytes(append(bytes.Clone(good), 0)); !errors.Is(err, errBadPack) {
		t.Errorf("a byte after the end: %v", err)
	}

	// Records the writer would refuse, written by hand with valid
	// checksums: the reader refuses them too.
	rec := func(kind byte, name string, size uint64, data string) []byte {
		h := []byte{kind}
		h = binary.AppendUvarint(h, uint64(len(name)))
		h = append(h, name...)
		h = binary.AppendVarint(h, 0)
		h = binary.AppendUvarint(h, size)
		h = binary.LittleEndian.AppendUint32(h, crc32.Checksum(h, castagnoli))
		if kind == packFile {
			h = append(h, data...)
			h = binary.LittleEndian.AppendUint32(h, crc32.Checksum([]byte(data), castagnoli))
		}
		return h
	}
	pack := func(count int, recs ...[]byte) []byte {
		b := []byte(packMagic)
		for _, r := range recs {
			b = append(b, r...)
		}
		b = append(b, packEnd)
		b = binary.AppendUvarint(b, uint64(count))
		return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	}
	if _, err := readPackBytes(pack(2, rec(packDir, "b", 0, ""), rec(packFile, "b/x", 1, "x"))); err != nil {
		t.Fatalf("a hand-made good pack: %v", err)
	}
	for name, b := range map[string][]byte{
		"duplicate file":      pack(2, rec(packFile, "a", 1, "x"), rec(packFile, "a", 1, "y")),
		"duplicate dir":       pack(2, rec(packDir, "a", 0, ""), rec(packDir, "a", 0, "")),
		"dir over a file":     pack(2, rec(packFile, "a", 1, "x"), rec(packDir, "a", 0, "")),
		"no parent":           pack(1, rec(packFile, "a/b", 1, "x")),
		"under a file":        pack(2, rec(packFile, "a", 1, "x"), rec(packFile, "a/b", 1, "x")),
		"dot dot":             pack(1, rec(packFile, "..", 1, "x")),
		"escape":              pack(2, rec(packDir, "a", 0, ""), rec(packFile, "a/../../x", 1, "x")),
		"absolute":            pack(1, rec(packFile, "/etc", 1, "x")),
		"dot":                 pack(1, rec(packDir, ".", 0, "")),
		"trailing slash":      pack(1, rec(packDir, "a/", 0, "")),
		"empty name":          pack(1, rec(packFile, "", 1, "x")),
		"unknown kind":        pack(1, rec(9, "a", 0, "")),
		"dir with a size":     pack(1, rec(packDir, "a", 5, "")),
		"sized too large":     pack(1, rec(packSized, "a", maxShardFile+1, "")),
		"count too small":     pack(1, rec(packDir, "a", 0, ""), rec(packDir, "b", 0, "")),
		"count too large":     pack(3, rec(packDir, "a", 0, "")),
		"content beyond file": append([]byte(packMagic), rec(packFile, "a", 1<<40, "")[:20]...),
		"name beyond file":    append(append([]byte(packMagic), packDir), binary.AppendUvarint(nil, 1<<20)...),
		"huge varint":         append(append([]byte(packMagic), packDir), bytes.Repeat([]byte{0xff}, 11)...),
		"no magic":            pack(0)[len(packMagic):],
		"other magic":         append([]byte("SSSTAGE9"), pack(0)[len(packMagic):]...),
		"nothing":             nil,
	} {
		if _, err := readPackBytes(b); !errors.Is(err, errBadPack) {
			t.Errorf("%s: %v, want a damaged staged drive", name, err)
		}
	}

	// The writer refuses what the reader would.
	var b bytes.Buffer
	pw, _ := newPackWriter(&b)
	if err := pw.file("a", time.Time{}, 1, strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"duplicate":    pw.file("a", time.Time{}, 1, strings.NewReader("x")),
		"under a file": pw.dir("a/b", time.Time{}),
		"no parent":    pw.sized("c/d", time.Time{}, 1),
		"escape":       pw.dir("../x", time.Time{}),
		"negative":     pw.sized("n", time.Time{}, -1),
		"too large":    pw.sized("n", time.Time{}, maxShardFile+1),
	} {
		if !errors.Is(err, errBadEntry) {
			t.Errorf("writer, %s: %v", name, err)
		}
	}
	if err := pw.file("short", time.Time{}, 5, strings.NewReader("abc")); err == nil {
		t.Error("writer: a file shorter than its size")
	}
}

// TestPackContentChecked: content damaged after the pack was read (the
// disk, not the stream) is refused when read.
func TestPackContentChecked(t *testing.T) {
	good := samplePack(t)
	buf := bytes.Clone(good)
	pd, err := readPack(bytes.NewReader(buf), int64(len(buf)), "test")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(buf, []byte("xl.meta bytes"))
	buf[i] ^= 1
	if _, err := pd.ReadFile("bucket/key/xl.meta"); !errors.Is(err, errBadPack) {
		t.Errorf("damaged content read: %v", err)
	}
	if _, err := pd.Open("bucket/key/xl.meta"); !errors.Is(err, errBadPack) {
		t.Errorf("damaged content opened: %v", err)
	}
	var _ fs.ReadDirFS = pd
}

// FuzzReadPack: any bytes are read as a pack or refused, without a
// panic; a pack that reads walks whole and its files read back.
func FuzzReadPack(f *testing.F) {
	f.Add(samplePack(f))
	f.Add([]byte(packMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		pd, err := readPackBytes(b)
		if err != nil {
			if !errors.Is(err, errBadPack) {
				t.Fatalf("not a damaged-pack error: %v", err)
			}
			return
		}
		walked := int64(0)
		fs.WalkDir(pd, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Fatalf("walk %s: %v", p, err)
			}
			if p != "." {
				walked++
				if fi, err := pd.Stat(p); err != nil || fi.IsDir() != d.IsDir() || fi.Name() != d.Name() {
					t.Fatalf("Stat(%q) = %v, %v; walked as %v", p, fi, err, d)
				}
			}
			if fi, _ := d.Info(); !d.IsDir() && fi != nil {
				pd.ReadFile(p)
			}
			return nil
		})
		// Every record is reached once by listing directories.
		if walked != pd.index.records {
			t.Fatalf("walked %d of %d records", walked, pd.index.records)
		}
	})
}
