package engine

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/hashing"
)

// TestAdoptedVersionIDs: a UUID (a version id adopted from MinIO) is a
// version reference whose time comes from its versions-table key, while
// ids that are neither ours nor UUIDs stay invalid.
func TestAdoptedVersionIDs(t *testing.T) {
	const id = "5bfa2865-0dbe-4e67-87b6-27b05911f90e"
	ref, err := parseVersionID(id)
	if err != nil || !ref.adopted || ref.id != id || ref.time != 0 {
		t.Fatalf("parseVersionID(%q) = %+v, %v", id, ref, err)
	}
	if _, err := parseVersionID("5BFA2865-0DBE-4E67-87B6-27B05911F90E"); !errors.Is(err, ErrNoSuchVersion) {
		t.Errorf("an upper-case UUID: %v, want ErrNoSuchVersion", err)
	}
	for _, bad := range []string{"{5bfa2865-0dbe-4e67-87b6-27b05911f90e}", "not-a-version"} {
		if _, err := parseVersionID(bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("parseVersionID(%q): %v, want ErrInvalidArgument", bad, err)
		}
	}
	const mod = int64(1795832466804000000)
	prefix := drive.VersionPrefix("b", "k")
	ref, ok := refOfVersionKey(prefix, drive.VersionKey("b", "k", mod, id))
	if !ok || ref.adopted || ref.time != mod || ref.id != id {
		t.Fatalf("refOfVersionKey of an adopted version = %+v, %v; want time %d", ref, ok, mod)
	}
}

// TestImportOutOfOrder: imported versions keep their ids and times and
// take their place by time, whatever order they arrive in: an older one
// goes under the current version without disturbing it, a newer one
// becomes current; importing a version again changes nothing; a shard-
// store id must carry its own time.
func TestImportOutOfOrder(t *testing.T) {
	e, _ := testEngine(t, 4, Config{})
	setVersioning(t, e, VersioningEnabled)
	ctx := context.Background()
	base := time.Date(2023, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
	own := func(t int64) string { return fmt.Sprintf("%016x", t) + "00112233aabbccdd" }
	ids := []string{own(base), "5bfa2865-0dbe-4e67-87b6-27b05911f90e", "", own(base + 3e9)}
	bodies := [][]byte{[]byte("first"), bytes.Repeat([]byte("second"), 20000), []byte("third, the null version"), []byte("fourth")}
	put := func(i int, marker bool) {
		t.Helper()
		imp := &ImportVersion{VersionID: ids[i], ModTime: base + int64(i)*1e9, DeleteMarker: marker}
		var body []byte
		if !marker {
			body = bodies[i]
		}
		if _, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader(body), int64(len(body)), PutOptions{Import: imp}); err != nil {
			t.Fatalf("import %d: %v", i, err)
		}
	}
	put(3, false) // the newest first
	put(0, false)
	put(2, true) // a delete marker in between
	put(1, false)
	put(0, false) // again: noncurrent ones and the current one
	put(1, false)
	put(2, true)
	put(3, false)
	res, err := e.ListObjectVersions(ctx, "bucket", ListVersionsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range res.Versions {
		got = append(got, fmt.Sprintf("%s %d %v", v.VersionID, v.ModTime.UnixNano(), v.DeleteMarker))
	}
	want := []string{
		fmt.Sprintf("%s %d false", ids[3], base+3e9), fmt.Sprintf(" %d true", base+2e9),
		fmt.Sprintf("%s %d false", ids[1], base+1e9), fmt.Sprintf("%s %d false", ids[0], base),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("versions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, i := range []int{0, 1, 3} {
		b, err := getAll(t, e, "k", GetOptions{VersionID: ids[i]})
		if err != nil || !bytes.Equal(b, bodies[i]) {
			t.Fatalf("version %d: %q, %v", i, b, err)
		}
	}
	if b, err := getAll(t, e, "k", GetOptions{}); err != nil || !bytes.Equal(b, bodies[3]) {
		t.Fatalf("current: %q, %v", b, err)
	}
	for _, bad := range []*ImportVersion{
		{VersionID: own(base), ModTime: base + 1},
		{VersionID: "null", ModTime: base},
		{VersionID: "x", ModTime: base},
		{ModTime: 0},
	} {
		if _, err := e.PutObject(ctx, "bucket", "k2", bytes.NewReader(nil), 0, PutOptions{Import: bad}); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("import %+v: %v, want ErrInvalidArgument", bad, err)
		}
	}
	// A plain ETag must be the body's; a multipart one is kept.
	if _, err := e.PutObject(ctx, "bucket", "k3", strings.NewReader("x"), 1, PutOptions{Import: &ImportVersion{ModTime: base, ETag: "00000000000000000000000000000000"}}); !errors.Is(err, ErrBadDigest) {
		t.Errorf("a wrong import ETag: %v, want ErrBadDigest", err)
	}
	oi, err := e.PutObject(ctx, "bucket", "k3", strings.NewReader("x"), 1, PutOptions{Import: &ImportVersion{ModTime: base, ETag: "00000000000000000000000000000000-2"}})
	if err != nil || oi.ETag != "00000000000000000000000000000000-2" {
		t.Errorf("a multipart import ETag: %+v, %v", oi, err)
	}
}

// TestImportNullVersions: an imported version with an id keeps the null
// version it replaces, in a Suspended bucket too; an imported null
// version replaces the null version, in an Enabled bucket too.
func TestImportNullVersions(t *testing.T) {
	for _, state := range []string{VersioningEnabled, VersioningSuspended} {
		t.Run(state, func(t *testing.T) {
			e, _ := testEngine(t, 4, Config{})
			setVersioning(t, e, state)
			ctx := context.Background()
			base := time.Date(2023, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
			id := "5bfa2865-0dbe-4e67-87b6-27b05911f90e"
			for i, vid := range []string{"", id, ""} {
				body := fmt.Sprint("body ", i)
				if _, err := e.PutObject(ctx, "bucket", "k", strings.NewReader(body), int64(len(body)),
					PutOptions{Import: &ImportVersion{VersionID: vid, ModTime: base + int64(i)*1e9}}); err != nil {
					t.Fatal(err)
				}
			}
			res, err := e.ListObjectVersions(ctx, "bucket", ListVersionsOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range res.Versions {
				got = append(got, fmt.Sprintf("%q %d", v.VersionID, v.ModTime.UnixNano()-base))
			}
			want := fmt.Sprintf("%q %d\n%q %d", "", int64(2e9), id, int64(1e9))
			if strings.Join(got, "\n") != want {
				t.Fatalf("versions:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
			}
		})
	}
}

// TestImportParts: a body imported with its parts is stored as those
// parts (read back by partNumber), its multipart ETag and composite
// checksum computed from them; a wrong ETag, checksum or total size is
// refused and leaves no version.
func TestImportParts(t *testing.T) {
	e, _ := testEngine(t, 4, Config{})
	setVersioning(t, e, VersioningEnabled)
	ctx := context.Background()
	base := time.Date(2023, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
	parts := [][]byte{bytes.Repeat([]byte("a"), 70000), []byte("bc"), bytes.Repeat([]byte("d"), 100)}
	body := bytes.Join(parts, nil)
	var sums []byte
	var raw [][]byte
	for _, p := range parts {
		s := md5.Sum(p)
		sums = append(sums, s[:]...)
		h, _ := hashing.NewChecksum(hashing.CRC32C)
		h.Write(p)
		raw = append(raw, h.Sum(nil))
	}
	all := md5.Sum(sums)
	etag := hex.EncodeToString(all[:]) + "-3"
	composite, err := hashing.CompositeChecksum(hashing.CRC32C, raw)
	if err != nil {
		t.Fatal(err)
	}
	id := "5bfa2865-0dbe-4e67-87b6-27b05911f90e"
	imp := func(etag string, sizes []int64, sum string) *ImportVersion {
		return &ImportVersion{VersionID: id, ModTime: base, ETag: etag, Parts: sizes,
			Checksum: ImportChecksum{Algorithm: hashing.CRC32C, Type: hashing.Composite, Value: sum}}
	}
	for name, bad := range map[string]*ImportVersion{
		"wrong ETag":         imp(strings.Repeat("0", 32)+"-3", []int64{70000, 2, 100}, composite),
		"wrong checksum":     imp(etag, []int64{70000, 2, 100}, "AAAAAA==-3"),
		"other cut":          imp(etag, []int64{70001, 1, 100}, composite),
		"sizes not the body": imp(etag, []int64{70000, 2, 99}, composite),
	} {
		if _, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader(body), int64(len(body)), PutOptions{Import: bad}); err == nil {
			t.Fatalf("%s: imported", name)
		}
		if _, err := e.ListObjectVersions(ctx, "bucket", ListVersionsOptions{}); err != nil {
			t.Fatal(err)
		}
		if res, _ := e.ListObjectVersions(ctx, "bucket", ListVersionsOptions{}); len(res.Versions) != 0 {
			t.Fatalf("%s: a refused import left %d versions", name, len(res.Versions))
		}
	}
	oi, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader(body), int64(len(body)), PutOptions{Import: imp(etag, []int64{70000, 2, 100}, composite)})
	if err != nil || oi.ETag != etag || oi.VersionID != id {
		t.Fatalf("import: %+v, %v", oi, err)
	}
	for i, p := range parts {
		b, err := getAll(t, e, "k", GetOptions{VersionID: id, PartNumber: i + 1})
		if err != nil || !bytes.Equal(b, p) {
			t.Fatalf("part %d: %d bytes, %v", i+1, len(b), err)
		}
	}
	if b, err := getAll(t, e, "k", GetOptions{}); err != nil || !bytes.Equal(b, body) {
		t.Fatalf("whole: %d bytes, %v", len(b), err)
	}
	st, err := e.HeadObject(ctx, "bucket", "k", GetOptions{})
	if err != nil || st.Checksum.Value != composite || st.Checksum.Type != hashing.Composite || len(st.Parts) != 3 {
		t.Fatalf("stat: %+v, %v", st, err)
	}
	// Again: nothing written, the same answer.
	if oi, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader(body), int64(len(body)), PutOptions{Import: imp(etag, []int64{70000, 2, 100}, composite)}); err != nil || oi.VersionID != id {
		t.Fatalf("again: %+v, %v", oi, err)
	}
	if res, _ := e.ListObjectVersions(ctx, "bucket", ListVersionsOptions{}); len(res.Versions) != 1 {
		t.Fatalf("%d versions after importing one twice", len(res.Versions))
	}
}

// An import in parts may be larger than one PUT (a multipart object's
// parts are kept, each at most MaxPutSize); a plain PUT or import may
// not, and nothing may exceed MaxObjectSize. The body fails after a
// few bytes: what matters is which error the size check gives before
// anything is read, and that no version is left.
func TestImportPartsLargerThanOnePut(t *testing.T) {
	e, _ := testEngine(t, 4, Config{})
	setVersioning(t, e, VersioningEnabled)
	ctx := context.Background()
	errBody := errors.New("the body ends here")
	failing := func() io.Reader { return io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(errBody)) }
	parts := []int64{MaxPutSize, MaxPutSize, 1 << 20}
	var size int64
	for _, n := range parts {
		size += n
	}
	imp := &ImportVersion{VersionID: "5bfa2865-0dbe-4e67-87b6-27b05911f90e", ModTime: time.Date(2023, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano(),
		ETag: strings.Repeat("a", 32) + "-3", Parts: parts}
	if _, err := e.PutObject(ctx, "bucket", "big", failing(), size, PutOptions{Import: imp}); !errors.Is(err, errBody) {
		t.Fatalf("import of %d bytes in parts: want the body's error (no size refusal), got %v", size, err)
	}
	if _, err := e.PutObject(ctx, "bucket", "big", failing(), size, PutOptions{}); !errors.Is(err, ErrEntityTooLarge) {
		t.Fatalf("plain PUT of %d bytes: %v", size, err)
	}
	whole := *imp
	whole.Parts, whole.ETag = nil, strings.Repeat("a", 32)
	if _, err := e.PutObject(ctx, "bucket", "big", failing(), size, PutOptions{Import: &whole}); !errors.Is(err, ErrEntityTooLarge) {
		t.Fatalf("import of %d bytes without parts: %v", size, err)
	}
	over := *imp
	over.Parts = []int64{MaxPutSize + 1, 1}
	over.ETag = strings.Repeat("a", 32) + "-2"
	if _, err := e.PutObject(ctx, "bucket", "big", failing(), MaxPutSize+2, PutOptions{Import: &over}); err == nil || errors.Is(err, errBody) {
		t.Fatalf("an import part over %d bytes: %v", int64(MaxPutSize), err)
	}
	if _, err := e.PutObject(ctx, "bucket", "big", failing(), MaxObjectSize+1, PutOptions{Import: imp}); !errors.Is(err, ErrEntityTooLarge) {
		t.Fatalf("import over %d bytes: %v", int64(MaxObjectSize), err)
	}
	if res, err := e.ListObjectVersions(ctx, "bucket", ListVersionsOptions{}); err != nil || len(res.Versions) != 0 {
		t.Fatalf("refused imports left versions: %+v %v", res.Versions, err)
	}
}
