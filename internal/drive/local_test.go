package drive

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteBuffers(t *testing.T) {
	d, err := OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := d.MakeVol(ctx, "v"); err != nil {
		t.Fatal(err)
	}
	w, err := d.CreateFile(ctx, "v", "a/b")
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 1<<20)
	want := append(append(append([]byte("sum!"), big...), "tail"...), []byte{}...)
	if err := WriteBuffers(w, [][]byte{[]byte("sum!"), big, nil, []byte("tail")}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(d.String(), "v", "a", "b"))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("writev wrote %d bytes, want %d (%v)", len(got), len(want), err)
	}
}

func TestPathsCannotEscape(t *testing.T) {
	d, err := OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d.MakeVol(ctx, "v")
	for _, p := range []string{"../x", "a/../../x", "/etc/passwd", "a//b", "./a", "a\x00b", ""} {
		if err := d.WriteFile(ctx, "v", p, []byte("x")); err == nil {
			t.Errorf("path %q was accepted", p)
		}
	}
	for _, v := range []string{"..", "a/b", "", "."} {
		if err := d.MakeVol(ctx, v); err == nil {
			t.Errorf("volume %q was accepted", v)
		}
	}
}
