package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
)

// reportedDrive is a drive whose health (the Online method the engine
// asks, see reportsOffline) a test sets directly: Health would take a
// failing drive offline only after a deadline or probe, at a moment a
// test cannot pin down.
type reportedDrive struct {
	*drive.Faulty
	offline atomic.Bool
}

func (d *reportedDrive) Online() bool { return !d.offline.Load() }

// listRig is an engine on 16 drives (one 12+4 set: a write quorum of
// 12, so a listing must read 16-12+1 = 5 drives) each wrapped as
// reportedDrive(Faulty(Local)).
type listRig struct {
	t      *testing.T
	e      *Engine
	drives []*reportedDrive
}

func newListRig(t *testing.T) *listRig {
	t.Helper()
	root := t.TempDir()
	r := &listRig{t: t}
	var drives []drive.Drive
	var locals []*drive.Local
	for i := range 16 {
		l, err := drive.OpenLocal(filepath.Join(root, fmt.Sprintf("d%02d", i+1)), drive.LocalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d := &reportedDrive{Faulty: drive.NewFaulty(l)}
		locals = append(locals, l)
		r.drives = append(r.drives, d)
		drives = append(drives, d)
	}
	e, err := New(Config{Drives: drives, Heal: HealConfig{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	t.Cleanup(func() {
		e.Close()
		for i, d := range r.drives {
			d.Clear()
			locals[i].Close()
		}
	})
	if err := e.MakeBucket(context.Background(), "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	return r
}

// cut makes drives [from, to) fail every operation (unreachable, as
// through a partition), also reported offline when reported is set; the
// returned function brings them back.
func (r *listRig) cut(from, to int, reported bool) func() {
	var undo []func()
	for _, d := range r.drives[from:to] {
		undo = append(undo, d.Inject(drive.Fault{Err: drive.ErrInjectedEIO}))
		if reported {
			d.offline.Store(true)
		}
	}
	return func() {
		for i, d := range r.drives[from:to] {
			undo[i]()
			d.offline.Store(false)
		}
	}
}

func (r *listRig) put(key, body string) string {
	r.t.Helper()
	oi, err := r.e.PutObject(context.Background(), "bucket", key, strings.NewReader(body), int64(len(body)), PutOptions{})
	if err != nil {
		r.t.Fatalf("put %s: %v", key, err)
	}
	return oi.ETag
}

// listAll lists the bucket page by page (maxKeys a page) and returns
// key -> ETag, or the first error.
func (r *listRig) listAll(maxKeys int) (map[string]string, error) {
	got := map[string]string{}
	after := ""
	for {
		res, err := r.e.ListObjects(context.Background(), "bucket", ListOptions{After: after, MaxKeys: maxKeys})
		if err != nil {
			return got, err
		}
		for _, o := range res.Objects {
			got[o.Key] = o.ETag
		}
		if !res.IsTruncated {
			return got, nil
		}
		after = res.NextAfter
	}
}

// checkList asserts that every listing (at several page sizes) either
// fails with ErrReadQuorum (503) or shows exactly want; with mustAnswer
// it must answer.
func (r *listRig) checkList(what string, want map[string]string, mustAnswer bool) {
	r.t.Helper()
	for _, maxKeys := range []int{1, 2, 1000} {
		got, err := r.listAll(maxKeys)
		if err != nil {
			if !errors.Is(err, ErrReadQuorum) {
				r.t.Errorf("%s (max-keys %d): error %v, want ErrReadQuorum", what, maxKeys, err)
			} else if mustAnswer {
				r.t.Errorf("%s (max-keys %d): %v, want an answer", what, maxKeys, err)
			}
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			r.t.Errorf("%s (max-keys %d): listed %v, want %v (or a 503)", what, maxKeys, got, want)
		}
	}
}

// TestListAfterWriteWithDrivesCut writes with the first drives (those a
// healthy listing walks) missing the write, then cuts the listing off
// from the drives that took it: a listing must show the acknowledged
// state or fail with ErrReadQuorum, never the stale one (finding L1 of
// docs/consistency.md), whether or not the cut drives are known to be
// offline.
func TestListAfterWriteWithDrivesCut(t *testing.T) {
	for _, reported := range []bool{true, false} {
		t.Run(fmt.Sprintf("overwrite/reported=%v", reported), func(t *testing.T) {
			r := newListRig(t)
			r.put("a", "a1")
			r.put("k", "v1")
			r.put("z", "z1")
			heal := r.cut(0, 4, false)
			v2 := r.put("k", "v2") // on drives 4..15: a write quorum
			heal()
			want := map[string]string{"a": etagOf(t, r, "a"), "k": v2, "z": etagOf(t, r, "z")}
			r.checkList("all drives", want, true)
			heal = r.cut(4, 16, reported)
			r.checkList("drives 4..15 cut", want, false)
			heal()
			r.checkList("healed", want, true)
		})
		t.Run(fmt.Sprintf("new key/reported=%v", reported), func(t *testing.T) {
			r := newListRig(t)
			r.put("a", "a1")
			r.put("z", "z1")
			heal := r.cut(0, 4, false)
			k := r.put("k", "v1")
			heal()
			want := map[string]string{"a": etagOf(t, r, "a"), "k": k, "z": etagOf(t, r, "z")}
			heal = r.cut(4, 16, reported)
			r.checkList("drives 4..15 cut", want, false)
			heal()
			r.checkList("healed", want, true)
		})
		t.Run(fmt.Sprintf("delete/reported=%v", reported), func(t *testing.T) {
			r := newListRig(t)
			r.put("a", "a1")
			r.put("k", "v1")
			r.put("z", "z1")
			heal := r.cut(0, 4, false)
			if err := r.e.DeleteObject(context.Background(), "bucket", "k"); err != nil {
				t.Fatal(err)
			}
			heal()
			want := map[string]string{"a": etagOf(t, r, "a"), "z": etagOf(t, r, "z")}
			r.checkList("all drives", want, true)
			heal = r.cut(4, 16, reported)
			r.checkList("drives 4..15 cut", want, false)
			heal()
			r.checkList("healed", want, true)
		})
	}
}

// TestListWalkedDriveFailsOthersAnswer: a walked drive that fails (its
// scan or reads) while enough other drives answer must not fail the
// listing nor hide a write: another drive takes its place.
func TestListWalkedDriveFailsOthersAnswer(t *testing.T) {
	for _, reported := range []bool{true, false} {
		t.Run(fmt.Sprintf("reported=%v", reported), func(t *testing.T) {
			r := newListRig(t)
			r.put("a", "a1")
			r.put("k", "v1")
			heal := r.cut(1, 4, false)
			v2 := r.put("k", "v2") // on drives 0 and 4..15
			heal()
			want := map[string]string{"a": etagOf(t, r, "a"), "k": v2}
			heal = r.cut(0, 1, reported)
			r.checkList("drive 0 cut", want, true)
			heal()
			// v2 is on 9 of the 12 drives left: a GET of k fails with
			// ErrReadQuorum, and so must the listing (the key may not
			// be left out: it was acknowledged).
			heal = r.cut(12, 16, reported)
			if got, err := r.listAll(1000); !errors.Is(err, ErrReadQuorum) {
				t.Errorf("drives 12..15 cut: listed %v, %v; want ErrReadQuorum", got, err)
			}
			heal()
			// Written everywhere, then drives the listing does not walk
			// cut: nothing to notice.
			want["k"] = r.put("k", "v3")
			heal = r.cut(12, 16, reported)
			r.checkList("drives 12..15 cut after v3", want, true)
			heal()
		})
	}
}

// TestListNoDriveOfSetOnline: with every drive of the set cut, a listing
// fails with ErrReadQuorum rather than answering an empty page.
func TestListNoDriveOfSetOnline(t *testing.T) {
	for _, reported := range []bool{true, false} {
		t.Run(fmt.Sprintf("reported=%v", reported), func(t *testing.T) {
			r := newListRig(t)
			r.put("a", "a1")
			heal := r.cut(0, 16, reported)
			defer heal()
			// BucketInfo itself may fail first; either way not an
			// empty page.
			for _, maxKeys := range []int{1, 1000} {
				res, err := r.e.ListObjects(context.Background(), "bucket", ListOptions{MaxKeys: maxKeys})
				if err == nil {
					t.Fatalf("max-keys %d: listed %+v with no drive reachable, want an error", maxKeys, res)
				}
			}
		})
	}
}

func etagOf(t *testing.T, r *listRig, key string) string {
	t.Helper()
	res, err := r.e.ListObjects(context.Background(), "bucket", ListOptions{Prefix: key, MaxKeys: 1})
	if err != nil || len(res.Objects) != 1 {
		t.Fatalf("etag of %s: %+v %v", key, res, err)
	}
	return res.Objects[0].ETag
}

// TestListLeavesOutUnacknowledgedWrite: a write that failed (on 11 of
// 16 drives, short of its quorum of 12) leaves a key no version of
// which has quorum; with every drive answering, the listing leaves it
// out and still answers (it cannot be an acknowledged write).
func TestListLeavesOutUnacknowledgedWrite(t *testing.T) {
	r := newListRig(t)
	r.put("a", "a1")
	heal := r.cut(0, 5, false)
	if _, err := r.e.PutObject(context.Background(), "bucket", "k", strings.NewReader("v1"), 2, PutOptions{}); err == nil {
		t.Fatal("put on 11 of 16 drives succeeded")
	}
	heal()
	r.checkList("after a failed put", map[string]string{"a": etagOf(t, r, "a")}, true)
}

// TestListDelimiterAfterDelete: a common prefix whose only key was
// deleted (acknowledged without the first walked drives) is not listed
// from the walked drives that missed the delete.
func TestListDelimiterAfterDelete(t *testing.T) {
	r := newListRig(t)
	r.put("a/x", "x1")
	r.put("b/y", "y1")
	heal := r.cut(0, 4, false)
	if err := r.e.DeleteObject(context.Background(), "bucket", "a/x"); err != nil {
		t.Fatal(err)
	}
	heal()
	for _, maxKeys := range []int{1, 1000} {
		var prefixes []string
		after := ""
		for {
			res, err := r.e.ListObjects(context.Background(), "bucket", ListOptions{Delimiter: "/", After: after, MaxKeys: maxKeys})
			if err != nil {
				t.Fatal(err)
			}
			prefixes = append(prefixes, res.CommonPrefixes...)
			if !res.IsTruncated {
				break
			}
			after = res.NextAfter
		}
		if fmt.Sprint(prefixes) != "[b/]" {
			t.Errorf("max-keys %d: common prefixes %v, want [b/]", maxKeys, prefixes)
		}
	}
}
