package durable

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteCopies: every live copy gets buf, a dropped (nil) copy is
// skipped, and a copy that cannot be written reports its own error
// while the others are written.
func TestWriteCopies(t *testing.T) {
	dir := t.TempDir()
	open := func(name string) *os.File {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		return f
	}
	a, b, broken := open("a"), open("b"), open("broken")
	_ = broken.Close()
	for _, datasync := range []bool{true, false} {
		errs := WriteCopies([]*os.File{a, nil, broken, b}, []byte("rec;"), datasync)
		if errs[0] != nil || errs[1] != nil || errs[3] != nil || errs[2] == nil {
			t.Fatalf("datasync=%v: errs %v", datasync, errs)
		}
	}
	if errs := WriteCopies([]*os.File{a}, []byte("one;"), true); errs[0] != nil {
		t.Fatalf("single copy: %v", errs[0])
	}
	if errs := WriteCopies([]*os.File{nil}, []byte("x"), true); errs[0] != nil {
		t.Fatalf("single dropped copy: %v", errs[0])
	}
	for name, want := range map[string]string{"a": "rec;rec;one;", "b": "rec;rec;"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Fatalf("%s holds %q (%v), want %q", name, got, err, want)
		}
	}
}
