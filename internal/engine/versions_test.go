package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
)

func vput(t *testing.T, e *Engine, key, body string) ObjectInfo {
	t.Helper()
	oi, err := e.PutObject(context.Background(), "bucket", key, strings.NewReader(body), int64(len(body)), PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return oi
}

func vget(t *testing.T, e *Engine, key, vid string) (string, error) {
	t.Helper()
	b, err := getAll(t, e, key, GetOptions{VersionID: vid})
	return string(b), err
}

func setVersioning(t *testing.T, e *Engine, state string) {
	t.Helper()
	if err := e.SetBucketConfig(context.Background(), "bucket", BucketConfigVersioning, state); err != nil {
		t.Fatal(err)
	}
}

// versionsOf lists every version of key as "id:body-or-DM", newest first.
func versionsOf(t *testing.T, e *Engine, key string) []string {
	t.Helper()
	res, err := e.ListObjectVersions(context.Background(), "bucket", ListVersionsOptions{Prefix: key})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, v := range res.Versions {
		if v.Key != key {
			continue
		}
		if v.IsLatest != (i == 0) {
			t.Fatalf("version %d of %s: IsLatest %v", i, key, v.IsLatest)
		}
		if v.DeleteMarker {
			out = append(out, versionName(v.VersionID)+":DM")
			continue
		}
		body, err := vget(t, e, key, versionName(v.VersionID))
		if err != nil {
			t.Fatalf("get version %s: %v", versionName(v.VersionID), err)
		}
		out = append(out, versionName(v.VersionID)+":"+body)
	}
	return out
}

func bodies(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v[strings.IndexByte(v, ':')+1:]
	}
	return strings.Join(out, ",")
}

// TestVersioningLifecycleOfAKey walks one key through the documented S3
// states: versions kept on overwrite, a delete marker as the current
// version (404 without a version id, 405 for its own id), removing the
// marker restores the previous version, permanent deletes of current
// and noncurrent versions.
func TestVersioningLifecycleOfAKey(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) {
			limit := int64(-1)
			if inline {
				limit = 1 << 20
			}
			e, _ := testEngine(t, 16, Config{BlockSize: 4096, InlineLimit: limit, Heal: HealConfig{Disabled: true}})
			ctx := context.Background()
			if err := e.SetBucketConfig(ctx, "bucket", BucketConfigVersioning, ""); !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("setting versioning to \"\": %v", err)
			}
			// An object from before versioning is the null version.
			vput(t, e, "k", "v0-"+strings.Repeat("x", 9000))
			setVersioning(t, e, VersioningEnabled)
			v1 := vput(t, e, "k", "v1")
			v2 := vput(t, e, "k", "v2")
			if v1.VersionID == "" || v2.VersionID == "" || v1.VersionID == v2.VersionID {
				t.Fatalf("version ids %q %q", v1.VersionID, v2.VersionID)
			}
			if got := bodies(versionsOf(t, e, "k")); got != "v2,v1,v0-"+strings.Repeat("x", 9000) {
				t.Fatalf("versions: %s", got)
			}
			if b, err := vget(t, e, "k", ""); err != nil || b != "v2" {
				t.Fatalf("current: %q %v", b, err)
			}
			hi, err := e.HeadObject(ctx, "bucket", "k", GetOptions{VersionID: v1.VersionID})
			if err != nil || hi.IsLatest || hi.VersionID != v1.VersionID || hi.Size != 2 {
				t.Fatalf("head v1: %+v %v", hi, err)
			}
			// A delete without a version id makes a delete marker current.
			dr, err := e.DeleteObjectVersion(ctx, "bucket", "k", DeleteOptions{})
			if err != nil || !dr.DeleteMarker || dr.VersionID == "" {
				t.Fatalf("delete: %+v %v", dr, err)
			}
			var dme *DeleteMarkerError
			if _, err := vget(t, e, "k", ""); !errors.As(err, &dme) || !errors.Is(err, ErrObjectNotFound) || dme.Marker.VersionID != dr.VersionID {
				t.Fatalf("get after delete: %v", err)
			}
			if _, err := vget(t, e, "k", dr.VersionID); !errors.As(err, &dme) || !errors.Is(err, ErrMethodNotAllowed) {
				t.Fatalf("get of the marker's version: %v", err)
			}
			lr, err := e.ListObjects(ctx, "bucket", ListOptions{})
			if err != nil || len(lr.Objects) != 0 {
				t.Fatalf("listing shows a deleted key: %+v %v", lr, err)
			}
			if got := versionsOf(t, e, "k"); len(got) != 4 || got[0] != dr.VersionID+":DM" {
				t.Fatalf("versions after delete: %v", got)
			}
			// Removing the marker makes v2 current again.
			dr2, err := e.DeleteObjectVersion(ctx, "bucket", "k", DeleteOptions{VersionID: dr.VersionID})
			if err != nil || !dr2.DeleteMarker || dr2.VersionID != dr.VersionID {
				t.Fatalf("delete marker removal: %+v %v", dr2, err)
			}
			if b, err := vget(t, e, "k", ""); err != nil || b != "v2" {
				t.Fatalf("current after removing the marker: %q %v", b, err)
			}
			// Delete the current version for good: v1 takes its place.
			if _, err := e.DeleteObjectVersion(ctx, "bucket", "k", DeleteOptions{VersionID: v2.VersionID}); err != nil {
				t.Fatal(err)
			}
			if b, err := vget(t, e, "k", ""); err != nil || b != "v1" {
				t.Fatalf("current after deleting v2: %q %v", b, err)
			}
			if _, err := vget(t, e, "k", v2.VersionID); !errors.Is(err, ErrNoSuchVersion) {
				t.Fatalf("deleted version: %v", err)
			}
			// Delete the noncurrent null version.
			if _, err := e.DeleteObjectVersion(ctx, "bucket", "k", DeleteOptions{VersionID: NullVersionID}); err != nil {
				t.Fatal(err)
			}
			if got := bodies(versionsOf(t, e, "k")); got != "v1" {
				t.Fatalf("versions: %s", got)
			}
			if _, err := e.DeleteObjectVersion(ctx, "bucket", "k", DeleteOptions{VersionID: NullVersionID}); !errors.Is(err, ErrNoSuchVersion) {
				t.Fatalf("deleting a missing null version: %v", err)
			}
			if _, err := vget(t, e, "k", "not-a-version"); !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("malformed id: %v", err)
			}
			if err := e.DeleteBucket(ctx, "bucket"); !errors.Is(err, ErrBucketNotEmpty) {
				t.Fatalf("delete bucket with a version: %v", err)
			}
			// The last version goes: the key is gone, the bucket empty.
			if _, err := e.DeleteObjectVersion(ctx, "bucket", "k", DeleteOptions{VersionID: v1.VersionID}); err != nil {
				t.Fatal(err)
			}
			if _, err := vget(t, e, "k", ""); !errors.Is(err, ErrObjectNotFound) {
				t.Fatalf("after the last version: %v", err)
			}
			if got := versionsOf(t, e, "k"); len(got) != 0 {
				t.Fatalf("versions left: %v", got)
			}
			if err := e.DeleteBucket(ctx, "bucket"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSuspendedVersioningNullVersion pins S3's suspended-bucket rules: a
// write makes the null version current and replaces any earlier null
// version (current or not); versions with ids stay.
func TestSuspendedVersioningNullVersion(t *testing.T) {
	e, paths := testEngine(t, 16, Config{BlockSize: 4096, InlineLimit: -1, Heal: HealConfig{Disabled: true}})
	ctx := context.Background()
	setVersioning(t, e, VersioningEnabled)
	a := vput(t, e, "k", "A")
	setVersioning(t, e, VersioningSuspended)
	n1 := vput(t, e, "k", "N1")
	if n1.VersionID != "" {
		t.Fatalf("suspended put got version %q", n1.VersionID)
	}
	vput(t, e, "k", "N2")
	if got := strings.Join(versionsOf(t, e, "k"), ","); got != "null:N2,"+a.VersionID+":A" {
		t.Fatalf("versions: %s", got)
	}
	setVersioning(t, e, VersioningEnabled)
	b := vput(t, e, "k", "B")
	setVersioning(t, e, VersioningSuspended)
	// The noncurrent null version N2 is replaced by the new one.
	vput(t, e, "k", "N3")
	if got := strings.Join(versionsOf(t, e, "k"), ","); got != "null:N3,"+b.VersionID+":B,"+a.VersionID+":A" {
		t.Fatalf("versions: %s", got)
	}
	// A delete in a suspended bucket makes a null delete marker, which
	// replaces the null version.
	dr, err := e.DeleteObjectVersion(ctx, "bucket", "k", DeleteOptions{})
	if err != nil || !dr.DeleteMarker || dr.VersionID != "" {
		t.Fatalf("suspended delete: %+v %v", dr, err)
	}
	if got := strings.Join(versionsOf(t, e, "k"), ","); got != "null:DM,"+b.VersionID+":B,"+a.VersionID+":A" {
		t.Fatalf("versions: %s", got)
	}
	// Replaced null versions left no shard files behind: three versions
	// with data (A, B) are two shard files per drive.
	for _, p := range paths {
		n := 0
		filepath.Walk(filepath.Join(p, ".shardstore.sys", "data"), func(path string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				n++
			}
			return nil
		})
		if n != 2 {
			t.Fatalf("drive %s holds %d shard files, want 2", p, n)
		}
	}
}

// TestListObjectVersionsPaging walks versions of several keys one entry
// per page with key and version-id markers, and checks delimiters and
// that keys whose current version is a delete marker stay out of
// ListObjects (and prefixes made only of them).
func TestListObjectVersionsPaging(t *testing.T) {
	e, _ := testEngine(t, 8, Config{BlockSize: 4096, Heal: HealConfig{Disabled: true}})
	ctx := context.Background()
	vput(t, e, "a", "a0") // null version from before versioning
	setVersioning(t, e, VersioningEnabled)
	var want []string
	for _, k := range []string{"a", "b", "dir/x", "dir/y", "gone/z"} {
		for i := 1; i <= 3; i++ {
			vput(t, e, k, fmt.Sprintf("%s%d", k, i))
		}
	}
	if err := e.DeleteObject(ctx, "bucket", "gone/z"); err != nil {
		t.Fatal(err)
	}
	full, err := e.ListObjectVersions(ctx, "bucket", ListVersionsOptions{})
	if err != nil || full.IsTruncated || len(full.Versions) != 17 {
		t.Fatalf("full listing: %d versions, truncated %v, %v", len(full.Versions), full.IsTruncated, err)
	}
	for _, v := range full.Versions {
		want = append(want, v.Key+"@"+versionName(v.VersionID))
	}
	for i := 1; i < len(full.Versions); i++ {
		p, c := full.Versions[i-1], full.Versions[i]
		if p.Key > c.Key || (p.Key == c.Key && !p.ModTime.After(c.ModTime) && !p.ModTime.Equal(c.ModTime)) {
			t.Fatalf("order: %s@%s before %s@%s", p.Key, p.VersionID, c.Key, c.VersionID)
		}
	}
	var got []string
	opts := ListVersionsOptions{MaxKeys: 1}
	for pages := 0; ; pages++ {
		if pages > 40 {
			t.Fatal("paging does not end")
		}
		res, err := e.ListObjectVersions(ctx, "bucket", opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range res.Versions {
			got = append(got, v.Key+"@"+versionName(v.VersionID))
		}
		if !res.IsTruncated {
			break
		}
		opts.KeyMarker, opts.VersionIDMarker = res.NextKeyMarker, res.NextVersionIDMarker
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("paged:\n%v\nwant\n%v", got, want)
	}
	d, err := e.ListObjectVersions(ctx, "bucket", ListVersionsOptions{Delimiter: "/"})
	if err != nil || strings.Join(d.CommonPrefixes, ",") != "dir/,gone/" || len(d.Versions) != 7 {
		t.Fatalf("delimiter listing: %v %d %v", d.CommonPrefixes, len(d.Versions), err)
	}
	lo, err := e.ListObjects(ctx, "bucket", ListOptions{Delimiter: "/"})
	if err != nil || strings.Join(lo.CommonPrefixes, ",") != "dir/" || len(lo.Objects) != 2 {
		t.Fatalf("ListObjects: prefixes %v, %d objects, %v", lo.CommonPrefixes, len(lo.Objects), err)
	}
	if _, err := e.ListObjectVersions(ctx, "bucket", ListVersionsOptions{VersionIDMarker: "null"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("version-id-marker without key-marker: %v", err)
	}
}

// TestVersionTaggingAndCopy: tags are per version, and a copy can take
// any version as its source.
func TestVersionTaggingAndCopy(t *testing.T) {
	e, _ := testEngine(t, 8, Config{BlockSize: 4096, Heal: HealConfig{Disabled: true}})
	ctx := context.Background()
	setVersioning(t, e, VersioningEnabled)
	v1 := vput(t, e, "k", "one")
	vput(t, e, "k", "two")
	if _, err := e.SetObjectTags(ctx, "bucket", "k", v1.VersionID, map[string]string{"old": "yes"}); err != nil {
		t.Fatal(err)
	}
	cur, _ := e.HeadObject(ctx, "bucket", "k", GetOptions{})
	old, _ := e.HeadObject(ctx, "bucket", "k", GetOptions{VersionID: v1.VersionID})
	if len(cur.Tags) != 0 || old.Tags["old"] != "yes" {
		t.Fatalf("tags: current %v, v1 %v", cur.Tags, old.Tags)
	}
	c, err := e.CopyObject(ctx, "bucket", "k", "bucket", "copy", CopyOptions{SourceVersionID: v1.VersionID})
	if err != nil || c.VersionID == "" {
		t.Fatalf("copy: %+v %v", c, err)
	}
	if b, err := vget(t, e, "copy", ""); err != nil || b != "one" {
		t.Fatalf("copy of v1: %q %v", b, err)
	}
	// A copy onto itself makes a new version in a versioned bucket.
	if _, err := e.CopyObject(ctx, "bucket", "k", "bucket", "k", CopyOptions{ReplaceMetadata: true, SourceVersionID: v1.VersionID}); err != nil {
		t.Fatal(err)
	}
	if got := bodies(versionsOf(t, e, "k")); got != "one,two,one" {
		t.Fatalf("versions after self-copy: %s", got)
	}
}

// TestHealRebuildsEveryVersion wipes a drive and checks that healing the
// key brings back every version's record and shard there.
func TestHealRebuildsEveryVersion(t *testing.T) {
	e, _ := testEngine(t, 16, Config{BlockSize: 4096, InlineLimit: 64, Heal: HealConfig{Disabled: true}})
	ctx := context.Background()
	setVersioning(t, e, VersioningEnabled)
	small := vput(t, e, "k", "tiny")
	big := strings.Repeat("B", 20000)
	vput(t, e, "k", big)
	dm, err := e.DeleteObjectVersion(ctx, "bucket", "k", DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vput(t, e, "k", "last")
	set := e.setFor("bucket", "k")
	// Drop everything of the key from two drives' indexes.
	for _, p := range []int{0, 5} {
		d := set.drives[p]
		ents, err := d.Scan(ctx, drive.TableVersions, drive.ScanQuery{Prefix: drive.VersionPrefix("bucket", "k"), KeysOnly: true})
		if err != nil || len(ents) != 3 {
			t.Fatalf("drive %d holds %d noncurrent versions (%v), want 3", p, len(ents), err)
		}
		b := &drive.Batch{}
		for _, ent := range ents {
			b.Delete(drive.TableVersions, ent.Key)
		}
		b.Delete(drive.TableObjects, drive.ObjectKey("bucket", "k"))
		if err := d.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.HealObject(ctx, "bucket", "k", HealOptions{Deep: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Versions != 3 || res.Healed != 8 {
		t.Fatalf("heal: %+v, want 3 versions and 8 positions healed", res)
	}
	for _, p := range []int{0, 5} {
		ents, _ := set.drives[p].Scan(ctx, drive.TableVersions, drive.ScanQuery{Prefix: drive.VersionPrefix("bucket", "k"), KeysOnly: true})
		if len(ents) != 3 || recordOn(t, set.drives[p], "k") == nil {
			t.Fatalf("drive %d after heal: %d versions", p, len(ents))
		}
	}
	// Every version reads back with more drives gone than the two healed.
	if got := versionsOf(t, e, "k"); bodies(got) != "last,DM,"+big+",tiny" || !strings.HasPrefix(got[1], dm.VersionID) {
		t.Fatalf("versions after heal: %v", bodies(got))
	}
	if b, err := vget(t, e, "k", small.VersionID); err != nil || b != "tiny" {
		t.Fatalf("small version: %q %v", b, err)
	}
	again, err := e.HealObject(ctx, "bucket", "k", HealOptions{Deep: true})
	if err != nil || again.Damaged() {
		t.Fatalf("second heal: %+v %v", again, err)
	}
}

// TestInterruptedVersionedOverwrite: a versioned PUT whose settling batch
// never ran (a crash right after the commit reached quorum) leaves the
// replaced version in the key's record only; it must still be readable
// by its id and end up in the versions table after a heal.
func TestInterruptedVersionedOverwrite(t *testing.T) {
	e, _ := testEngine(t, 8, Config{BlockSize: 4096, Heal: HealConfig{Disabled: true}})
	ctx := context.Background()
	setVersioning(t, e, VersioningEnabled)
	v1 := vput(t, e, "k", "first")
	set := e.setFor("bucket", "k")
	okey := drive.ObjectKey("bucket", "k")
	v2 := vput(t, e, "k", "second")
	// Undo the settling on every drive: [v2, v1 prev+keep], no entry.
	for p, d := range set.drives {
		rec := recordOn(t, d, "k")
		ents, _ := d.Scan(ctx, drive.TableVersions, drive.ScanQuery{Prefix: drive.VersionPrefix("bucket", "k")})
		if len(ents) != 1 {
			t.Fatalf("drive %d: %d entries", p, len(ents))
		}
		old, err := decodeVersion(ents[0].Value)
		if err != nil {
			t.Fatal(err)
		}
		old.Flags |= flagsPendingKeep
		rec.Versions = append(rec.Versions, old)
		b := &drive.Batch{}
		b.Delete(drive.TableVersions, ents[0].Key)
		b.Put(drive.TableObjects, okey, rec.Marshal())
		if err := d.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := vget(t, e, "k", v1.VersionID); err != nil || b != "first" {
		t.Fatalf("pending version by id: %q %v", b, err)
	}
	if e.PendingHeals() == 0 {
		t.Fatal("reading an unsettled record queued no heal")
	}
	if got := bodies(versionsOf(t, e, "k")); got != "second,first" {
		t.Fatalf("versions listed before the heal: %s", got)
	}
	if _, err := e.HealObject(ctx, "bucket", "k", HealOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := bodies(versionsOf(t, e, "k")); got != "second,first" {
		t.Fatalf("versions after heal: %s", got)
	}
	for _, d := range set.drives {
		if r := recordOn(t, d, "k"); len(r.Versions) != 1 || r.Versions[0].VersionID != v2.VersionID {
			t.Fatalf("record not settled on %s", d)
		}
	}
}

const flagsPendingKeep = meta.FlagPrev | meta.FlagKeep

func decodeVersion(raw []byte) (*meta.Object, error) { return meta.Unmarshal(raw) }

// TestListVersionsPendingDiffersAcrossDrives: a drive that missed a
// commit (a kill after write quorum answered, before the lagging drive
// applied it) holds a different pending version than the others once the
// next commit replaces its stale current version. Drives then disagree
// on which version is pending, and neither pending version is in any
// drive's versions table yet; the listing must list both (it used to
// list only the pending version of the last drive it read).
func TestListVersionsPendingDiffersAcrossDrives(t *testing.T) {
	e, _ := testEngine(t, 8, Config{BlockSize: 4096, Heal: HealConfig{Disabled: true}})
	ctx := context.Background()
	setVersioning(t, e, VersioningEnabled)
	vput(t, e, "k", "first")
	vput(t, e, "k", "second")
	vput(t, e, "k", "third")
	set := e.setFor("bucket", "k")
	okey := drive.ObjectKey("bucket", "k")
	stale := set.parity // the last drive the listing walks
	for p, d := range set.drives {
		rec := recordOn(t, d, "k")
		ents, _ := d.Scan(ctx, drive.TableVersions, drive.ScanQuery{Prefix: drive.VersionPrefix("bucket", "k")})
		if len(ents) != 2 {
			t.Fatalf("drive %d: %d entries", p, len(ents))
		}
		// ents[0] is "second" (newest first), ents[1] is "first".
		b := &drive.Batch{}
		pend := ents[0]
		if p == stale {
			// Never got "second": its record went [first] -> [third, first].
			pend = ents[1]
			b.Delete(drive.TableVersions, ents[0].Key)
		}
		old, err := decodeVersion(pend.Value)
		if err != nil {
			t.Fatal(err)
		}
		old.Flags |= flagsPendingKeep
		rec.Versions = append(rec.Versions, old)
		b.Delete(drive.TableVersions, pend.Key)
		b.Put(drive.TableObjects, okey, rec.Marshal())
		if err := d.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if got := bodies(versionsOf(t, e, "k")); got != "third,second,first" {
		t.Fatalf("versions listed: %s, want third,second,first", got)
	}
	// Page by page, one version a page, through the markers.
	var got []string
	opts := ListVersionsOptions{Prefix: "k", MaxKeys: 1}
	for {
		res, err := e.ListObjectVersions(ctx, "bucket", opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range res.Versions {
			got = append(got, versionName(v.VersionID))
		}
		if !res.IsTruncated {
			break
		}
		opts.KeyMarker, opts.VersionIDMarker = res.NextKeyMarker, res.NextVersionIDMarker
		if len(got) > 10 {
			t.Fatalf("paging does not end: %v", got)
		}
	}
	all := versionsOf(t, e, "k")
	if len(got) != len(all) {
		t.Fatalf("paged listing %v, want %d versions", got, len(all))
	}
	for i := range all {
		if !strings.HasPrefix(all[i], got[i]+":") {
			t.Fatalf("paged listing %v differs from %v", got, all)
		}
	}
	if _, err := e.HealObject(ctx, "bucket", "k", HealOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := bodies(versionsOf(t, e, "k")); got != "third,second,first" {
		t.Fatalf("versions after heal: %s", got)
	}
}
