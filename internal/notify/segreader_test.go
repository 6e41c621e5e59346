package notify

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSegment writes frames of ds to a file and returns it open, with
// each frame's offset.
func writeSegment(t *testing.T, ds []Delivery, tail []byte) (*os.File, []int64, int64) {
	t.Helper()
	var b []byte
	var offs []int64
	for i := range ds {
		offs = append(offs, int64(len(b)))
		var err error
		if b, err = appendFrame(b, &ds[i]); err != nil {
			t.Fatal(err)
		}
	}
	end := int64(len(b))
	b = append(b, tail...)
	p := filepath.Join(t.TempDir(), "seg")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, offs, end
}

// The buffered reader returns every frame as written, small ones from
// one chunk and ones larger than a chunk whole, in order and from any
// offset, and never reads past the end it is given (a half-written
// tail beyond it is not used even where it is in the file).
func TestSegReaderFrames(t *testing.T) {
	var ds []Delivery
	for i := range 300 {
		d := delivery(i)
		if i%97 == 5 {
			d.Payload = bytes.Repeat([]byte{'x'}, readChunk+i) // larger than a chunk
		}
		ds = append(ds, d)
	}
	f, offs, end := writeSegment(t, ds, []byte{0xff, 0xff, 0xff, 0x7f, 1, 2, 3})
	var r segReader
	off := int64(0)
	for i := range ds {
		d, n, err := r.frameAt(f, off, end)
		if err != nil {
			t.Fatalf("frame %d at %d: %v", i, off, err)
		}
		if d.Key != ds[i].Key || !bytes.Equal(d.Payload, ds[i].Payload) || !d.Time.Equal(ds[i].Time) {
			t.Fatalf("frame %d: got key %q (%d payload bytes), want %q (%d)", i, d.Key, len(d.Payload), ds[i].Key, len(ds[i].Payload))
		}
		off += n
	}
	if off != end {
		t.Fatalf("read to %d, the frames end at %d", off, end)
	}
	// Any frame read alone, out of order, from a fresh or a warm reader.
	for _, i := range []int{299, 0, 150, 5, 6, 102, 101} {
		d, _, err := r.frameAt(f, offs[i], end)
		if err != nil || d.Key != ds[i].Key {
			t.Fatalf("frame %d alone: %v, key %q", i, err, d.Key)
		}
	}
	// An end inside a frame: that frame is refused, not read past end.
	if _, _, err := (&segReader{}).frameAt(f, offs[10], offs[11]-1); err == nil {
		t.Fatal("a frame cut by the end was read")
	}
	// At the end: nothing to read.
	if _, _, err := (&segReader{}).frameAt(f, end, end); err == nil {
		t.Fatal("a frame was read at the end")
	}
}

// A reader whose buffer holds a shorter end than the file has now
// (the open segment grew) reads the new frames, not stale bytes.
func TestSegReaderGrowingSegment(t *testing.T) {
	ds := []Delivery{delivery(1), delivery(2), delivery(3)}
	f, offs, end := writeSegment(t, ds, nil)
	var r segReader
	if _, _, err := r.frameAt(f, 0, offs[1]); err != nil { // only frame 0 synced
		t.Fatal(err)
	}
	for i := 1; i < 3; i++ {
		d, _, err := r.frameAt(f, offs[i], end)
		if err != nil || d.Key != ds[i].Key {
			t.Fatalf("frame %d after the end moved: %v, key %q", i, err, d.Key)
		}
	}
}

// Hostile bytes: every single-byte flip of a segment and every cut of
// it gives either the frames as written (a flip in a field whose value
// stays valid is caught by the CRC) or an error; never a panic, never a
// record that was not written.
func TestSegReaderHostile(t *testing.T) {
	ds := []Delivery{delivery(1), delivery(2)}
	_, _, end := writeSegment(t, ds, nil)
	var good []byte
	for i := range ds {
		good, _ = appendFrame(good, &ds[i])
	}
	dir := t.TempDir()
	check := func(name string, data []byte, end int64) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var r segReader
		off := int64(0)
		for i := 0; off < end; i++ {
			d, n, err := r.frameAt(f, off, end)
			if err != nil {
				return
			}
			if i >= len(ds) || d.Key != ds[i].Key || !bytes.Equal(d.Payload, ds[i].Payload) {
				t.Fatalf("%s: frame %d read as key %q, not as written", name, i, d.Key)
			}
			off += n
		}
	}
	for i := range good {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			b := bytes.Clone(good)
			b[i] ^= x
			check("flip", b, end)
		}
		check("cut", good[:i], int64(i))
		check("cut-end-beyond-file", good[:i], end)
	}
	check("huge-length", append([]byte{0xff, 0xff, 0xff, 0xff}, strings.Repeat("\x00", 64)...), 68)
}

// FuzzSegReader: any file and end gives frames or an error, no panic,
// and a frame only where the bytes hold a valid one.
func FuzzSegReader(f *testing.F) {
	var seed []byte
	for i := range 3 {
		d := delivery(i)
		seed, _ = appendFrame(seed, &d)
	}
	f.Add(seed, int64(len(seed)))
	f.Add(seed[:10], int64(len(seed)))
	f.Add([]byte{}, int64(0))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, end int64) {
		if end < 0 || end > int64(len(data))+16 {
			return
		}
		p := filepath.Join(dir, "seg")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		var r segReader
		for off := int64(0); off < end; {
			_, n, err := r.frameAt(fh, off, end)
			if err != nil {
				return
			}
			if n <= frameHeader || off+n > end {
				t.Fatalf("frame of %d bytes at %d past end %d", n, off, end)
			}
			valid, _ := scanFrames(data[off:min(end, int64(len(data)))])
			if valid < n {
				t.Fatalf("a frame at %d that scanFrames does not accept", off)
			}
			off += n
		}
	})
}
