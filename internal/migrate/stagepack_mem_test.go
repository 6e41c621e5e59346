package migrate

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// synthPack writes a pack of the shape a MinIO drive stages: per key a
// directory and its xl.meta (two records per key), keys of 20 bytes.
func synthPack(tb testing.TB, keys int) []byte {
	tb.Helper()
	var b bytes.Buffer
	pw, err := newPackWriter(&b)
	if err != nil {
		tb.Fatal(err)
	}
	mt := time.Unix(1700000000, 0)
	if err := pw.dir("bucket", mt); err != nil {
		tb.Fatal(err)
	}
	meta := strings.Repeat("m", 300)
	for i := 0; i < keys; i++ {
		k := fmt.Sprintf("bucket/obj-%013d", i) // 20 bytes after "bucket/"
		if err := pw.dir(k, mt); err != nil {
			tb.Fatal(err)
		}
		if err := pw.file(k+"/xl.meta", mt, int64(len(meta)), strings.NewReader(meta)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := pw.close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// TestPackEntrySize: an indexed record holds no pointer and stays 40
// bytes (doc.go's memory figure rests on it).
func TestPackEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(packEntry{}); n != 40 {
		t.Errorf("packEntry is %d bytes, want 40", n)
	}
}

// TestPackListsInOrder: a directory lists its entries in name order,
// skipping deeper ones, whatever the bytes next to '/' in their names.
func TestPackListsInOrder(t *testing.T) {
	var b bytes.Buffer
	pw, _ := newPackWriter(&b)
	mt := time.Unix(0, 0)
	for _, d := range []string{"a", "a/b", "a/b/c", "a/b.x", "a/b-y", "a/b/c/d", "a.z", "a-"} {
		if strings.ContainsAny(d, ".-") && d != "a/b/c" && d != "a/b/c/d" && d != "a/b" && d != "a" {
			if err := pw.file(d, mt, 1, strings.NewReader("x")); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := pw.dir(d, mt); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.close(); err != nil {
		t.Fatal(err)
	}
	pd, err := readPackBytes(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{".": "a a- a.z", "a": "b b-y b.x", "a/b": "c", "a/b/c": "d", "a/b/c/d": ""} {
		ents, err := pd.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		if strings.Join(got, " ") != want {
			t.Errorf("ReadDir(%s) = %q, want %q", dir, got, want)
		}
	}
	for _, p := range []string{"a/b.x", "a-", "a/b/c/d"} {
		if _, err := pd.Stat(p); err != nil {
			t.Errorf("Stat(%s): %v", p, err)
		}
	}
}

// BenchmarkReadPackMemory: the heap a read pack's index holds, per
// record (500,000 keys of 20 bytes, two records each: the path is 27
// or 35 bytes).
func BenchmarkReadPackMemory(b *testing.B) {
	keys := 500000
	pack := synthPack(b, keys)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		pd, err := readPackBytes(pack)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(2*keys+1), "heapB/record")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(2*keys+1), "allocB/record")
		runtime.KeepAlive(pd)
	}
}
