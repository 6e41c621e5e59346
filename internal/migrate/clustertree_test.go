package migrate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestTreeServedOnce: a drive's tree is written once and the same bytes
// are sent to every node asking, at once or later (a file added to the
// drive after the first request is not walked again); a tree that could
// not be written is written again at the next request; the packs made
// from it read back.
func TestTreeServedOnce(t *testing.T) {
	drive := t.TempDir()
	writeTreeDrive(t, drive)
	c := &clusterRun{a: &adopter{opts: Options{Out: &bytes.Buffer{}}}, stage: t.TempDir()}
	var direct bytes.Buffer
	if err := writeTree(&direct, drive); err != nil {
		t.Fatal(err)
	}
	outs := make([]bytes.Buffer, 3)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.sendTree(context.Background(), &outs[i], 0, drive); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i := range outs {
		if !bytes.Equal(outs[i].Bytes(), direct.Bytes()) {
			t.Fatalf("request %d: %d bytes, the walk %d", i, outs[i].Len(), direct.Len())
		}
	}
	if err := os.WriteFile(filepath.Join(drive, "bucket", "later"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := c.sendTree(context.Background(), &again, 0, drive); err != nil || !bytes.Equal(again.Bytes(), direct.Bytes()) {
		t.Fatalf("a later request: %v, %d bytes, want the first tree's %d", err, again.Len(), direct.Len())
	}
	var pack bytes.Buffer
	if _, _, err := packTree(bytes.NewReader(again.Bytes()), &pack); err != nil {
		t.Fatal(err)
	}
	if _, err := readPackBytes(pack.Bytes()); err != nil {
		t.Fatal(err)
	}

	// Unwritable staging directory: an error, then written once it is.
	c2 := &clusterRun{a: c.a, stage: filepath.Join(t.TempDir(), "missing")}
	if err := c2.sendTree(context.Background(), &bytes.Buffer{}, 1, drive); err == nil {
		t.Fatal("a tree sent without its file")
	}
	if err := os.Mkdir(c2.stage, 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := c2.sendTree(context.Background(), &b, 1, drive); err != nil || b.Len() == 0 {
		t.Fatalf("after the failure: %v, %d bytes", err, b.Len())
	}
	if _, err := os.Stat(filepath.Join(c2.stage, "served-drive2.tar")); err != nil {
		t.Error(err)
	}
}
