package driverpc

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
)

// A node restarted without the first pool numbers its drives from 0
// while another node, not restarted yet, calls them by their old slots:
// a client naming the path reaches the right drive whatever the slot; an
// unknown path, or a slot alone that the server does not hold, is a
// faulty drive, not another drive's data.
func TestDriveFoundByPath(t *testing.T) {
	mk := func() drive.Drive {
		d, err := drive.OpenLocal(t.TempDir(), drive.LocalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	b1, b2 := mk(), mk()
	f1, f2 := testFormat, testFormat
	f1.DriveIndex, f2.DriveIndex = 0, 4
	if err := b1.WriteFormat(ctx, f1); err != nil {
		t.Fatal(err)
	}
	if err := b2.WriteFormat(ctx, f2); err != nil {
		t.Fatal(err)
	}
	// The server's list after the removal: b1 at slot 0, b2 at slot 4.
	mux := http.NewServeMux()
	mux.Handle(PathPrefix, NewServer(map[int]drive.Drive{0: b1, 4: b2}, testKey, nil).WithPaths(map[int]string{0: "/d/b1", 4: "/d/b2"}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	hc := NewHTTPClient(nil, nil)

	// The caller's old list: b1 at slot 8, b2 at slot 12 (and slot 4
	// is another node's drive there).
	for _, tc := range []struct {
		slot int
		path string
		want int // the DriveIndex read, -1: faulty
	}{
		{8, "/d/b1", 0},
		{12, "/d/b2", 4},
		{4, "/d/b1", 0},          // the path wins over a slot the server also has
		{8, "/d/b3", -1},         // no such path
		{8, "", -1},              // a slot alone the server does not hold
		{0, "", 0},               // a slot alone (a release before paths)
		{0, "/d/../d/b1", -1},    // paths are matched exactly, never resolved
		{0, "/d/b1\x00x", -1},    // hostile bytes
		{0, "/d/b1?drive=4", -1}, // query characters are part of the value
	} {
		c := NewClient(srv.URL, tc.slot, "test", testKey, hc).WithPath(tc.path)
		f, err := c.ReadFormat(ctx)
		switch {
		case tc.want < 0 && !errors.Is(err, drive.ErrDriveFaulty):
			t.Errorf("slot %d path %q: %+v, %v; want a faulty drive", tc.slot, tc.path, f, err)
		case tc.want >= 0 && (err != nil || f.DriveIndex != tc.want):
			t.Errorf("slot %d path %q: index %d, %v; want %d", tc.slot, tc.path, f.DriveIndex, err, tc.want)
		}
	}

	// One request for several drives of the node (a record read on
	// each, a batch applied on each) finds each by its path too.
	var b1b, b2b drive.Batch
	b1b.Put(drive.TableObjects, "k", []byte("one"))
	b2b.Put(drive.TableObjects, "k", []byte("two"))
	m1 := NewClient(srv.URL, 8, "b1", testKey, hc).WithPath("/d/b1")
	m2 := NewClient(srv.URL, 12, "b2", testKey, hc).WithPath("/d/b2")
	errs := make([]error, 2)
	m1.ApplyBatches(ctx, []drive.NodeApplier{m1, m2}, []*drive.Batch{&b1b, &b2b}, func(i int, err error) { errs[i] = err })
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("applies by path: %v", errs)
	}
	for d, want := range map[drive.Drive]string{b1: "one", b2: "two"} {
		if v, err := d.Get(ctx, drive.TableObjects, "k"); err != nil || string(v) != want {
			t.Fatalf("applied by path: %q %v, want %q", v, err, want)
		}
	}
	// Without paths, the old slots reach no drive: faulty, nothing applied.
	s1, s2 := NewClient(srv.URL, 8, "b1", testKey, hc), NewClient(srv.URL, 12, "b2", testKey, hc)
	s1.ApplyBatches(ctx, []drive.NodeApplier{s1, s2}, []*drive.Batch{&b2b, &b1b}, func(i int, err error) { errs[i] = err })
	if !errors.Is(errs[0], drive.ErrDriveFaulty) || !errors.Is(errs[1], drive.ErrDriveFaulty) {
		t.Fatalf("applies by stale slots: %v", errs)
	}
	if v, _ := b1.Get(ctx, drive.TableObjects, "k"); string(v) != "one" {
		t.Fatalf("a stale slot's batch reached b1: %q", v)
	}
}
