package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
)

// versionScanHookDrive runs hook (once, through the shared sync.Once; the
// other drives' scans wait for it) before the first scan of the versions
// table, and fails such scans while fail is set.
type versionScanHookDrive struct {
	drive.Drive
	once *sync.Once
	hook *func()
	fail *atomic.Bool
}

var errScanRefused = errors.New("versions scan refused (test)")

func (d versionScanHookDrive) Scan(ctx context.Context, t drive.Table, q drive.ScanQuery) ([]drive.Entry, error) {
	if t == drive.TableVersions {
		d.once.Do(func() {
			if *d.hook != nil {
				(*d.hook)()
			}
		})
		if d.fail.Load() {
			return nil, errScanRefused
		}
	}
	return d.Drive.Scan(ctx, t, q)
}

// hookedVersionEngine is an engine on n local drives wrapped by
// versionScanHookDrive, with versioning on; set *hook before a listing.
func hookedVersionEngine(t *testing.T, n int) (*Engine, *func(), []*atomic.Bool, *sync.Once) {
	t.Helper()
	var hook func()
	once := &sync.Once{}
	fails := make([]*atomic.Bool, n)
	wrapped := make([]drive.Drive, n)
	for i, d := range localDrives(t, n) {
		fails[i] = &atomic.Bool{}
		wrapped[i] = versionScanHookDrive{Drive: d, once: once, hook: &hook, fail: fails[i]}
	}
	e := engineOn(t, wrapped)
	if err := e.MakeBucket(context.Background(), "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	setVersioning(t, e, VersioningEnabled)
	return e, &hook, fails, once
}

// listedBodies lists key's versions in one page and returns their bodies
// (by ETag of the bodies written) newest first, failing the test on a
// version listed twice or a latest flag anywhere but first.
func listedBodies(t *testing.T, e *Engine, key string, etags map[string]string) ([]string, error) {
	t.Helper()
	res, err := e.ListObjectVersions(context.Background(), "bucket", ListVersionsOptions{Prefix: key})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for i, v := range res.Versions {
		body := etags[v.ETag]
		out = append(out, body)
		if seen[v.VersionID] {
			t.Errorf("version %s (%s) listed twice in one answer: %v", versionName(v.VersionID), body, out)
		}
		seen[v.VersionID] = true
		if v.IsLatest != (i == 0) {
			t.Errorf("version %d (%s) of %s: IsLatest %v", i, body, key, v.IsLatest)
		}
	}
	return out, nil
}

// TestListVersionsHeadReplacedDuringListing (finding V2 of
// docs/consistency.md): the key's current version comes from the scan of
// current records, its noncurrent ones from a later scan of the versions
// table. Writes that land between the two move the listed head into the
// table: the listing must not list it twice, nor flag it latest above
// versions newer than it. Deterministic: two PUTs run before the first
// scan of the versions table.
func TestListVersionsHeadReplacedDuringListing(t *testing.T) {
	e, hook, _, _ := hookedVersionEngine(t, 4)
	etags := map[string]string{}
	for _, b := range []string{"v1", "v2", "v3"} {
		etags[vput(t, e, "k", b).ETag] = b
	}
	*hook = func() {
		for _, b := range []string{"v4", "v5"} {
			etags[vput(t, e, "k", b).ETag] = b
		}
	}
	got, err := listedBodies(t, e, "k", etags)
	if err != nil {
		t.Fatal(err)
	}
	// v1..v3 were acknowledged before the listing; v4 and v5 ran
	// during it and may or may not show, but a listing is newest first
	// and the latest is the newest it lists.
	want := map[string]bool{"v1": true, "v2": true, "v3": true}
	for i, b := range got {
		delete(want, b)
		if i > 0 && got[i-1] <= b {
			t.Errorf("listing %v: %s listed before the newer %s", got, got[i-1], b)
		}
	}
	if len(want) > 0 {
		t.Errorf("listing %v misses acknowledged versions %v", got, want)
	}
	if got := strings.Join(got, ","); got != "v5,v4,v3,v2,v1" && got != "v3,v2,v1" {
		t.Errorf("listing %s, want v5,v4,v3,v2,v1 or v3,v2,v1", got)
	}
}

// TestListVersionsScanFailuresRefuseOrReadMore (finding V1): a drive
// whose scan of the versions table fails must not silently drop out of
// the listing. One drive (the only one whose scan succeeds among those
// the listing walks first) missed a version that a write quorum holds:
// the listing reads further drives and lists it, and when too few drives
// can be scanned to meet every write quorum it answers ErrReadQuorum
// (503) rather than a listing without acknowledged versions.
func TestListVersionsScanFailuresRefuseOrReadMore(t *testing.T) {
	e, _, fails, _ := hookedVersionEngine(t, 4)
	ctx := context.Background()
	etags := map[string]string{}
	for _, b := range []string{"v1", "v2", "v3"} {
		etags[vput(t, e, "k", b).ETag] = b
	}
	set := e.setFor("bucket", "k")
	walked := walkedDrives(set)
	if len(walked) < 2 || len(walked) == len(set.drives) {
		t.Fatalf("set of %d drives walks %d: the test needs a drive walked and one not", len(set.drives), len(walked))
	}
	// The first walked drive lacks v1 (it missed that write); every other
	// walked drive's scan fails.
	ents, err := walked[0].Scan(ctx, drive.TableVersions, drive.ScanQuery{Prefix: drive.VersionPrefix("bucket", "k")})
	if err != nil || len(ents) != 2 {
		t.Fatalf("versions on the first walked drive: %d, %v", len(ents), err)
	}
	b := &drive.Batch{}
	b.Delete(drive.TableVersions, ents[1].Key) // oldest: v1
	if err := walked[0].Apply(ctx, b); err != nil {
		t.Fatal(err)
	}
	failing := map[int]bool{}
	for p, d := range set.drives {
		for _, w := range walked[1:] {
			if d == w {
				failing[p] = true
			}
		}
	}
	for p := range failing {
		fails[p].Store(true)
	}
	got, err := listedBodies(t, e, "k", etags)
	if err != nil {
		t.Fatalf("listing with %d of %d drives' scans failing: %v", len(failing), len(set.drives), err)
	}
	if strings.Join(got, ",") != "v3,v2,v1" {
		t.Fatalf("listing with the walked drives' scans failing: %v, want v3,v2,v1", got)
	}
	// Now every drive but the one that missed v1 fails its scan: too few
	// to be sure of every acknowledged version.
	for p := range set.drives {
		fails[p].Store(set.drives[p] != walked[0])
	}
	got, err = listedBodies(t, e, "k", etags)
	if !errors.Is(err, ErrReadQuorum) {
		t.Fatalf("listing with one drive scannable: %v, %v; want ErrReadQuorum", got, err)
	}
}

// TestListVersionsUnreadableVersionRefuses (finding V1): where the
// scanned drives disagree on a version the listing reads it from the
// whole set; when that read fails for want of a quorum (not because the
// version is gone) the listing answers ErrReadQuorum instead of leaving
// the version out.
func TestListVersionsUnreadableVersionRefuses(t *testing.T) {
	drives := localDrives(t, 4)
	getFails := make([]*atomic.Bool, len(drives))
	wrapped := make([]drive.Drive, len(drives))
	for i, d := range drives {
		getFails[i] = &atomic.Bool{}
		wrapped[i] = versionGetFailDrive{Drive: d, fail: getFails[i]}
	}
	e := engineOn(t, wrapped)
	ctx := context.Background()
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	setVersioning(t, e, VersioningEnabled)
	etags := map[string]string{}
	for _, b := range []string{"v1", "v2", "v3"} {
		etags[vput(t, e, "k", b).ETag] = b
	}
	set := e.setFor("bucket", "k")
	walked := walkedDrives(set)
	// The first walked drive missed v1: the scanned drives disagree on it.
	ents, err := walked[0].Scan(ctx, drive.TableVersions, drive.ScanQuery{Prefix: drive.VersionPrefix("bucket", "k")})
	if err != nil || len(ents) != 2 {
		t.Fatalf("versions on the first walked drive: %d, %v", len(ents), err)
	}
	b := &drive.Batch{}
	b.Delete(drive.TableVersions, ents[1].Key)
	if err := walked[0].Apply(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got, err := listedBodies(t, e, "k", etags); err != nil || strings.Join(got, ",") != "v3,v2,v1" {
		t.Fatalf("listing with one drive missing v1: %v, %v; want v3,v2,v1", got, err)
	}
	// Reads of single versions fail on all but one drive.
	for p := range set.drives {
		getFails[p].Store(p != 0)
	}
	got, err := listedBodies(t, e, "k", etags)
	if !errors.Is(err, ErrReadQuorum) {
		t.Fatalf("listing with v1 unreadable: %v, %v; want ErrReadQuorum", got, err)
	}
}

// versionGetFailDrive fails reads of single versions-table entries while
// fail is set.
type versionGetFailDrive struct {
	drive.Drive
	fail *atomic.Bool
}

func (d versionGetFailDrive) Get(ctx context.Context, t drive.Table, key string) ([]byte, error) {
	if t == drive.TableVersions && d.fail.Load() {
		return nil, errScanRefused
	}
	return d.Drive.Get(ctx, t, key)
}

// TestListVersionsNewerNoncurrentThanHeadListed: a noncurrent version
// whose time sorts before the current one in the versions table (an
// imported version keeps its own time) is not a sign of a stale head
// when a quorum read confirms the head: it is listed, once, after the
// head.
func TestListVersionsNewerNoncurrentThanHeadListed(t *testing.T) {
	e, _, _, _ := hookedVersionEngine(t, 4)
	ctx := context.Background()
	etags := map[string]string{}
	for _, b := range []string{"v1", "v2", "v3"} {
		etags[vput(t, e, "k", b).ETag] = b
	}
	set := e.setFor("bucket", "k")
	st, err := e.readObject(ctx, set, "bucket", "k")
	if err != nil {
		t.Fatal(err)
	}
	ents, err := set.drives[0].Scan(ctx, drive.TableVersions, drive.ScanQuery{Prefix: drive.VersionPrefix("bucket", "k")})
	if err != nil || len(ents) != 2 {
		t.Fatalf("versions: %d, %v", len(ents), err)
	}
	m, err := decodeVersion(ents[0].Value) // v2
	if err != nil {
		t.Fatal(err)
	}
	m.ModTime = st.fi.ModTime + 1000
	m.VersionID = newVersionID(m.ModTime)
	for _, d := range set.drives {
		putRaw(t, d, drive.TableVersions, drive.VersionKey("bucket", "k", m.ModTime, m.VersionID), m.Marshal())
	}
	got, err := listedBodies(t, e, "k", etags)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "v3,v2,v2,v1" {
		t.Fatalf("listing %v, want v3 then the newer-timed copy of v2, v2, v1", got)
	}
}
