package md5lanes

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The checked-in kernels must be exactly what the generator writes, so a
// change to gen/main.go cannot ship without the assembly it implies.
func TestGeneratedKernelsAreCurrent(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH, so the generator cannot run")
	}
	out := filepath.Join(t.TempDir(), "block_amd64.s")
	cmd := exec.Command(goBin, "run", "gen/main.go", "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run gen/main.go: %v\n%s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("block_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("block_amd64.s is stale: run go generate ./internal/md5lanes")
	}
}
