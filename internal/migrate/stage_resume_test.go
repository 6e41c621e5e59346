package migrate

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shardstore/shardstore/internal/cluster"
	"github.com/shardstore/shardstore/internal/peerauth"
)

// TestStageResume: stageAll fetches another node's drive into a pack
// and reads it through the adopter's seam; run again (as after kill -9)
// it keeps a whole pack without fetching, fetches again a damaged pack
// or one cut short (.partial), and reads a drive staged as a file tree
// by an earlier version as it is.
func TestStageResume(t *testing.T) {
	drive := t.TempDir()
	writeTreeDrive(t, drive)
	key := peerauth.Derive("u-key", "s-secret")
	var server *clusterRun
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/tree") {
			fetches.Add(1)
		}
		server.handle(w, r)
	}))
	defer srv.Close()
	top, err := cluster.Parse([]string{"http://127.0.0.2:9000/mine", srv.URL + drive})
	if err != nil {
		t.Fatal(err)
	}
	server = &clusterRun{a: &adopter{opts: Options{PeerKey: key, Out: &bytes.Buffer{}}}, top: top, self: 1,
		slotPath: []string{"", drive}, local: []bool{false, true}, heard: map[int]bool{}, tempStage: true}
	stage := t.TempDir()
	run := func() (*clusterRun, string) {
		t.Helper()
		out := &bytes.Buffer{}
		c := &clusterRun{a: &adopter{opts: Options{PeerKey: key, Out: out, NoSync: true}}, top: top, self: 0, hc: srv.Client(),
			slotPath: []string{t.TempDir(), ""}, local: []bool{true, false}, heard: map[int]bool{}, stage: stage}
		if err := c.stageAll(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.closePacks)
		return c, out.String()
	}
	staged := filepath.Join(stage, "drive2")
	read := func(c *clusterRun) string {
		t.Helper()
		b, err := c.a.readFile(filepath.Join(staged, "bucket", "key", "xl.meta"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	c, _ := run()
	if got := read(c); got != "xl.meta bytes" || fetches.Load() != 1 || c.slotPath[1] != staged {
		t.Fatalf("first run: %q, %d fetches, slot %s", got, fetches.Load(), c.slotPath[1])
	}
	c.closePacks()

	c, _ = run()
	if got := read(c); got != "xl.meta bytes" || fetches.Load() != 1 {
		t.Fatalf("a whole pack fetched again: %q, %d fetches", got, fetches.Load())
	}
	c.closePacks()

	// One byte of the pack changed on disk: fetched again.
	pack := staged + ".pack"
	b, err := os.ReadFile(pack)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(pack, b, 0o644); err != nil {
		t.Fatal(err)
	}
	c, out := run()
	if got := read(c); got != "xl.meta bytes" || fetches.Load() != 2 || !strings.Contains(out, "fetched again") {
		t.Fatalf("damaged pack: %q, %d fetches, %q", got, fetches.Load(), out)
	}
	c.closePacks()

	// Killed while fetching: a .partial, no pack.
	if err := os.Rename(pack, pack+".partial"); err != nil {
		t.Fatal(err)
	}
	c, _ = run()
	if got := read(c); got != "xl.meta bytes" || fetches.Load() != 3 {
		t.Fatalf("cut short: %q, %d fetches", got, fetches.Load())
	}
	c.closePacks()

	// A file tree from an earlier version: read as it is.
	os.Remove(pack)
	if err := os.MkdirAll(filepath.Join(staged, "bucket", "key"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(staged, "bucket", "key", "xl.meta"), []byte("from the tree"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ = run()
	if got := read(c); got != "from the tree" || fetches.Load() != 3 || len(c.a.packs) != 0 {
		t.Fatalf("file tree: %q, %d fetches, %d packs", got, fetches.Load(), len(c.a.packs))
	}
}
