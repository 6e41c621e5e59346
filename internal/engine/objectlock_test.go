package engine

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/objectlock"
)

// testClock is a clock a test moves forward (Config.Now).
type testClock struct{ off atomic.Int64 }

func (c *testClock) now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

// set puts the clock days ahead of real time.
func (c *testClock) set(days int) { c.off.Store(int64(time.Duration(days) * 24 * time.Hour)) }

// lockEngine starts an engine whose clock the test moves, with a bucket
// "locked" created with object lock (and so versioning) enabled.
func lockEngine(t *testing.T, cfg Config) (*Engine, *testClock, []string) {
	t.Helper()
	clock := &testClock{}
	cfg.Now = clock.now
	cfg.Heal.Disabled = true
	e, paths := testEngine(t, 4, cfg)
	if err := e.MakeBucket(context.Background(), "locked", BucketOptions{Owner: "o", ObjectLock: true}); err != nil {
		t.Fatal(err)
	}
	return e, clock, paths
}

func lput(t *testing.T, e *Engine, key, body string, l objectlock.Lock) ObjectInfo {
	t.Helper()
	oi, err := e.PutObject(context.Background(), "locked", key, strings.NewReader(body), int64(len(body)), PutOptions{Lock: l})
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return oi
}

func lhead(t *testing.T, e *Engine, key, vid string) (ObjectInfo, error) {
	t.Helper()
	return e.HeadObject(context.Background(), "locked", key, GetOptions{VersionID: vid})
}

func ldelete(e *Engine, key, vid string, bypass bool) error {
	_, err := e.DeleteObjectVersion(context.Background(), "locked", key, DeleteOptions{VersionID: vid, BypassGovernance: bypass})
	return err
}

// lversions lists every version of key in "locked" as "id:body" or
// "id:DM", newest first, reading each body back.
func lversions(t *testing.T, e *Engine, key string) []string {
	t.Helper()
	ctx := context.Background()
	res, err := e.ListObjectVersions(ctx, "locked", ListVersionsOptions{Prefix: key})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range res.Versions {
		if v.Key != key {
			continue
		}
		if v.DeleteMarker {
			out = append(out, versionName(v.VersionID)+":DM")
			continue
		}
		body, err := lget(e, key, versionName(v.VersionID))
		if err != nil {
			t.Fatalf("get version %s: %v", versionName(v.VersionID), err)
		}
		out = append(out, versionName(v.VersionID)+":"+body)
	}
	return out
}

func lget(e *Engine, key, vid string) (string, error) {
	rd, err := e.GetObject(context.Background(), "locked", key, GetOptions{VersionID: vid})
	if err != nil {
		return "", err
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	return string(b), err
}

func days(n int) time.Time { return time.Now().Add(time.Duration(n) * 24 * time.Hour) }

// TestObjectLockBucketState pins S3's bucket rules: a bucket created with
// object lock has versioning Enabled and can never suspend it; object lock
// can be turned on later only on a bucket with versioning Enabled, and
// never off; retention or legal hold in a bucket without object lock is
// refused; the configuration and the default retention survive a restart.
func TestObjectLockBucketState(t *testing.T) {
	e, _, paths := lockEngine(t, Config{})
	ctx := context.Background()
	info, err := e.BucketInfo(ctx, "locked")
	if err != nil || info.Versioning != VersioningEnabled || info.ObjectLock == "" {
		t.Fatalf("lock bucket: %+v %v", info, err)
	}
	if err := e.SetBucketConfig(ctx, "locked", BucketConfigVersioning, VersioningSuspended); !errors.Is(err, ErrInvalidBucketState) {
		t.Fatalf("suspend on a lock bucket: %v, want ErrInvalidBucketState", err)
	}
	if err := e.SetBucketConfig(ctx, "locked", BucketConfigObjectLock, ""); !errors.Is(err, ErrInvalidBucketState) {
		t.Fatalf("turning object lock off: %v, want ErrInvalidBucketState", err)
	}
	// "bucket" (from testEngine) has no versioning: object lock is refused.
	cfg := objectlock.Config{DefaultMode: objectlock.Governance, Days: 3}
	if err := e.SetBucketConfig(ctx, "bucket", BucketConfigObjectLock, cfg.Marshal("")); !errors.Is(err, ErrInvalidBucketState) {
		t.Fatalf("object lock on an unversioned bucket: %v, want ErrInvalidBucketState", err)
	}
	_, err = e.PutObject(ctx, "bucket", "k", strings.NewReader("x"), 1,
		PutOptions{Lock: objectlock.Lock{Mode: objectlock.Governance, RetainUntil: days(1)}})
	if !errors.Is(err, ErrObjectLockNotEnabled) {
		t.Fatalf("retention in a bucket without object lock: %v", err)
	}
	if _, err := e.PutObject(ctx, "bucket", "k", strings.NewReader("x"), 1, PutOptions{Lock: objectlock.Lock{LegalHold: objectlock.HoldOn}}); !errors.Is(err, ErrObjectLockNotEnabled) {
		t.Fatalf("legal hold in a bucket without object lock: %v", err)
	}
	if _, err := e.SetObjectLegalHold(ctx, "bucket", "k", "", objectlock.HoldOn); !errors.Is(err, ErrObjectLockNotEnabled) {
		t.Fatalf("SetObjectLegalHold in a bucket without object lock: %v", err)
	}
	// Versioning first, then object lock: allowed, and kept.
	setVersioning(t, e, VersioningEnabled)
	if err := e.SetBucketConfig(ctx, "bucket", BucketConfigObjectLock, cfg.Marshal("")); err != nil {
		t.Fatal(err)
	}
	if err := e.SetBucketConfig(ctx, "bucket", BucketConfigObjectLock, "<ObjectLockConfiguration/>"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("invalid configuration: %v", err)
	}
	e.Close()
	e2, err := New(Config{Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	info, err = e2.BucketInfo(ctx, "bucket")
	if err != nil {
		t.Fatal(err)
	}
	got, enabled, err := info.ObjectLockConfig()
	if err != nil || !enabled || got != cfg {
		t.Fatalf("after restart: %+v enabled=%v %v, want %+v", got, enabled, err, cfg)
	}
}

// TestObjectLockRetentionOnWrite: explicit retention and legal hold are
// recorded on PUT, multipart and copy; without them the bucket's default
// retention applies from the write's time; a copy never takes its
// source's lock; delete markers get none; bad values are refused.
func TestObjectLockRetentionOnWrite(t *testing.T) {
	e, clock, paths := lockEngine(t, Config{})
	ctx := context.Background()
	until := days(10).UTC().Truncate(time.Second)
	oi := lput(t, e, "explicit", "a", objectlock.Lock{Mode: objectlock.Compliance, RetainUntil: until, LegalHold: objectlock.HoldOn})
	if oi.Lock.Mode != objectlock.Compliance || !oi.Lock.RetainUntil.Equal(until) || oi.Lock.LegalHold != objectlock.HoldOn {
		t.Fatalf("put lock: %+v", oi.Lock)
	}
	no := lput(t, e, "none", "b", objectlock.Lock{})
	if no.Lock != (objectlock.Lock{}) {
		t.Fatalf("no default: got lock %+v", no.Lock)
	}
	for _, bad := range []objectlock.Lock{
		{Mode: objectlock.Governance},                        // no date
		{RetainUntil: until},                                 // no mode
		{Mode: "FOREVER", RetainUntil: until},                // unknown mode
		{Mode: objectlock.Governance, RetainUntil: days(-1)}, // in the past
		{LegalHold: "MAYBE"},                                 // unknown hold
	} {
		if _, err := e.PutObject(ctx, "locked", "bad", strings.NewReader("x"), 1, PutOptions{Lock: bad}); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("put with lock %+v: %v, want ErrInvalidArgument", bad, err)
		}
	}

	cfg := objectlock.Config{DefaultMode: objectlock.Governance, Days: 2}
	if err := e.SetBucketConfig(ctx, "locked", BucketConfigObjectLock, cfg.Marshal("")); err != nil {
		t.Fatal(err)
	}
	clock.set(5) // the default counts from the write's time on the engine clock
	before := clock.now()
	d := lput(t, e, "default", "c", objectlock.Lock{LegalHold: objectlock.HoldOff})
	want := before.Add(48 * time.Hour)
	if d.Lock.Mode != objectlock.Governance || d.Lock.RetainUntil.Before(want) || d.Lock.RetainUntil.After(want.Add(time.Minute)) ||
		d.Lock.LegalHold != objectlock.HoldOff {
		t.Fatalf("default retention: %+v, want GOVERNANCE until ~%v", d.Lock, want)
	}
	// An explicit retention wins over the default.
	ex := lput(t, e, "default", "d", objectlock.Lock{Mode: objectlock.Compliance, RetainUntil: days(30)})
	if ex.Lock.Mode != objectlock.Compliance {
		t.Fatalf("explicit over default: %+v", ex.Lock)
	}
	// A copy takes the default (or its own request's lock), not the source's.
	cp, err := e.CopyObject(ctx, "locked", "explicit", "locked", "copy", CopyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cp.Lock.Mode != objectlock.Governance || cp.Lock.LegalHold != "" {
		t.Fatalf("copy lock: %+v, want the bucket default and no hold", cp.Lock)
	}
	// Multipart: the lock named at creation, else the default at completion.
	for _, tc := range []struct {
		key  string
		lock objectlock.Lock
		mode string
	}{{"mpu-explicit", objectlock.Lock{Mode: objectlock.Compliance, RetainUntil: days(20), LegalHold: objectlock.HoldOn}, objectlock.Compliance},
		{"mpu-default", objectlock.Lock{}, objectlock.Governance}} {
		id, err := e.NewMultipartUpload(ctx, "locked", tc.key, PutOptions{Lock: tc.lock})
		if err != nil {
			t.Fatal(err)
		}
		pi, err := e.PutObjectPart(ctx, "locked", tc.key, id, 1, strings.NewReader("part"), 4, PartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		oi, err := e.CompleteMultipartUpload(ctx, "locked", tc.key, id, []CompletePart{{Number: 1, ETag: pi.ETag}}, PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if oi.Lock.Mode != tc.mode || oi.Lock.LegalHold != tc.lock.LegalHold {
			t.Fatalf("%s: lock %+v, want mode %s hold %q", tc.key, oi.Lock, tc.mode, tc.lock.LegalHold)
		}
	}
	if _, err := e.NewMultipartUpload(ctx, "bucket", "k", PutOptions{Lock: objectlock.Lock{LegalHold: objectlock.HoldOn}}); !errors.Is(err, ErrObjectLockNotEnabled) {
		t.Fatalf("multipart with a hold in a bucket without object lock: %v", err)
	}
	// A delete marker carries no retention.
	res, err := e.DeleteObjectVersion(ctx, "locked", "default", DeleteOptions{})
	if err != nil || !res.DeleteMarker {
		t.Fatalf("delete marker: %+v %v", res, err)
	}
	vs, err := e.ListObjectVersions(ctx, "locked", ListVersionsOptions{Prefix: "default"})
	if err != nil || len(vs.Versions) != 3 || !vs.Versions[0].DeleteMarker || vs.Versions[0].Lock != (objectlock.Lock{}) {
		t.Fatalf("versions of default: %+v %v", vs.Versions, err)
	}
	// Recorded on the drives: a restarted engine reads the same lock.
	e.Close()
	e2, err := New(Config{Paths: paths, Now: clock.now, Heal: HealConfig{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	got, err := e2.HeadObject(ctx, "locked", "explicit", GetOptions{})
	if err != nil || got.Lock != oi.Lock {
		t.Fatalf("after restart: %+v %v, want %+v", got.Lock, err, oi.Lock)
	}
}

// TestObjectLockRefusesDeletes tries every delete path on locked
// versions: the current and a noncurrent version by id, COMPLIANCE
// (bypass or not), GOVERNANCE (only with bypass), legal hold (never, until
// released), and checks each refused version still reads back. A delete
// without a version id only adds a delete marker, as S3 does. Once the
// clock passes the retain-until date the version can go.
func TestObjectLockRefusesDeletes(t *testing.T) {
	for _, inline := range []bool{true, false} {
		limit := int64(-1)
		if inline {
			limit = 1 << 20
		}
		e, clock, _ := lockEngine(t, Config{InlineLimit: limit})
		body := strings.Repeat("z", 300<<10)
		comp := lput(t, e, "k", body, objectlock.Lock{Mode: objectlock.Compliance, RetainUntil: days(3)})
		gov := lput(t, e, "k", body+"g", objectlock.Lock{Mode: objectlock.Governance, RetainUntil: days(3)})
		held := lput(t, e, "k", body+"h", objectlock.Lock{LegalHold: objectlock.HoldOn})
		// held is current, gov and comp noncurrent.
		for _, tc := range []struct {
			name   string
			vid    string
			bypass bool
		}{{"compliance noncurrent", comp.VersionID, false}, {"compliance noncurrent, bypass", comp.VersionID, true},
			{"governance noncurrent", gov.VersionID, false}, {"legal hold current", held.VersionID, false},
			{"legal hold current, bypass", held.VersionID, true}} {
			if err := ldelete(e, "k", tc.vid, tc.bypass); !errors.Is(err, ErrObjectLocked) {
				t.Fatalf("%s: delete = %v, want ErrObjectLocked", tc.name, err)
			}
		}
		if got := bodies(lversions(t, e, "k")); got != strings.Join([]string{body + "h", body + "g", body}, ",") {
			t.Fatalf("versions after refused deletes: %d bytes listed", len(got))
		}
		// No version id: a delete marker on top, nothing removed.
		res, err := e.DeleteObjectVersion(context.Background(), "locked", "k", DeleteOptions{})
		if err != nil || !res.DeleteMarker {
			t.Fatalf("plain delete: %+v %v", res, err)
		}
		if n := len(lversions(t, e, "k")); n != 4 {
			t.Fatalf("%d versions after the marker, want 4", n)
		}
		// GOVERNANCE yields to a bypass.
		if err := ldelete(e, "k", gov.VersionID, true); err != nil {
			t.Fatalf("governance with bypass: %v", err)
		}
		// A legal hold yields only to its release.
		if _, err := e.SetObjectLegalHold(context.Background(), "locked", "k", held.VersionID, objectlock.HoldOff); err != nil {
			t.Fatal(err)
		}
		if err := ldelete(e, "k", held.VersionID, false); err != nil {
			t.Fatalf("released hold: %v", err)
		}
		// COMPLIANCE yields to time only.
		clock.set(2)
		if err := ldelete(e, "k", comp.VersionID, true); !errors.Is(err, ErrObjectLocked) {
			t.Fatalf("compliance before its date: %v", err)
		}
		if _, err := lget(e, "k", comp.VersionID); err != nil {
			t.Fatalf("compliance version unreadable: %v", err)
		}
		clock.set(4)
		if err := ldelete(e, "k", comp.VersionID, false); err != nil {
			t.Fatalf("compliance after its date: %v", err)
		}
		if got := lversions(t, e, "k"); len(got) != 1 || !strings.HasSuffix(got[0], ":DM") {
			t.Fatalf("left: %v", got)
		}
		// The current version, locked, by id.
		cur := lput(t, e, "c", "cur", objectlock.Lock{Mode: objectlock.Compliance, RetainUntil: days(10)})
		if err := ldelete(e, "c", cur.VersionID, true); !errors.Is(err, ErrObjectLocked) {
			t.Fatalf("current compliance: %v", err)
		}
		if got, err := lget(e, "c", ""); err != nil || got != "cur" {
			t.Fatalf("current after refused delete: %q %v", got, err)
		}
		// The bucket cannot go while it holds them.
		if err := e.DeleteBucket(context.Background(), "locked"); !errors.Is(err, ErrBucketNotEmpty) {
			t.Fatalf("delete bucket: %v", err)
		}
	}
}

// TestObjectLockRetentionChanges pins PutObjectRetention's rules:
// COMPLIANCE can be extended but never shortened, removed or changed to
// GOVERNANCE (bypass or not); GOVERNANCE can be extended or made
// COMPLIANCE freely, shortened or removed only with bypass; expired
// retention no longer binds.
func TestObjectLockRetentionChanges(t *testing.T) {
	e, clock, _ := lockEngine(t, Config{})
	ctx := context.Background()
	set := func(vid string, l objectlock.Lock, bypass bool) error {
		_, err := e.SetObjectRetention(ctx, "locked", "k", vid, l, bypass)
		return err
	}
	c := lput(t, e, "k", "c", objectlock.Lock{Mode: objectlock.Compliance, RetainUntil: days(5)})
	g := lput(t, e, "k", "g", objectlock.Lock{Mode: objectlock.Governance, RetainUntil: days(5)})
	for _, tc := range []struct {
		name   string
		vid    string
		lock   objectlock.Lock
		bypass bool
	}{
		{"shorten compliance", c.VersionID, objectlock.Lock{Mode: objectlock.Compliance, RetainUntil: days(1)}, true},
		{"remove compliance", c.VersionID, objectlock.Lock{}, true},
		{"compliance to governance", c.VersionID, objectlock.Lock{Mode: objectlock.Governance, RetainUntil: days(9)}, true},
		{"shorten governance", g.VersionID, objectlock.Lock{Mode: objectlock.Governance, RetainUntil: days(1)}, false},
		{"remove governance", g.VersionID, objectlock.Lock{}, false},
	} {
		if err := set(tc.vid, tc.lock, tc.bypass); !errors.Is(err, ErrObjectLocked) {
			t.Fatalf("%s: %v, want ErrObjectLocked", tc.name, err)
		}
	}
	if oi, _ := lhead(t, e, "k", c.VersionID); oi.Lock != c.Lock {
		t.Fatalf("compliance changed by refused requests: %+v", oi.Lock)
	}
	// Extending is always allowed; turning GOVERNANCE into COMPLIANCE
	// needs the bypass (it alters the lock settings).
	if err := set(c.VersionID, objectlock.Lock{Mode: objectlock.Compliance, RetainUntil: days(8)}, false); err != nil {
		t.Fatalf("extend compliance: %v", err)
	}
	if err := set(g.VersionID, objectlock.Lock{Mode: objectlock.Governance, RetainUntil: days(2)}, true); err != nil {
		t.Fatalf("shorten governance with bypass: %v", err)
	}
	if err := set(g.VersionID, objectlock.Lock{}, true); err != nil {
		t.Fatalf("remove governance with bypass: %v", err)
	}
	if oi, _ := lhead(t, e, "k", ""); oi.Lock.Mode != "" {
		t.Fatalf("removed retention still there: %+v", oi.Lock)
	}
	if err := set("", objectlock.Lock{Mode: objectlock.Governance, RetainUntil: days(3)}, false); err != nil {
		t.Fatal(err)
	}
	if err := set("", objectlock.Lock{Mode: objectlock.Compliance, RetainUntil: days(4)}, false); !errors.Is(err, ErrObjectLocked) {
		t.Fatalf("governance to compliance without bypass: %v, want ErrObjectLocked", err)
	}
	if err := set("", objectlock.Lock{Mode: objectlock.Compliance, RetainUntil: days(3)}, true); err != nil {
		t.Fatalf("governance to compliance with bypass: %v", err)
	}
	if err := set("", objectlock.Lock{Mode: objectlock.Governance, RetainUntil: days(-1)}, true); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("date in the past: %v", err)
	}
	// A legal hold is kept across retention changes.
	if _, err := e.SetObjectLegalHold(ctx, "locked", "k", c.VersionID, objectlock.HoldOn); err != nil {
		t.Fatal(err)
	}
	if err := set(c.VersionID, objectlock.Lock{Mode: objectlock.Compliance, RetainUntil: days(9)}, false); err != nil {
		t.Fatal(err)
	}
	if oi, _ := lhead(t, e, "k", c.VersionID); oi.Lock.LegalHold != objectlock.HoldOn {
		t.Fatalf("hold lost: %+v", oi.Lock)
	}
	// After the date, the retention can be removed.
	clock.set(10)
	if err := set(c.VersionID, objectlock.Lock{}, false); err != nil {
		t.Fatalf("expired compliance: %v", err)
	}
}

// TestObjectLockHealKeepsRemnants: the healer removes the remnants of a
// noncurrent version that too few drives hold to read, unless object
// lock protects it (the same damage on an unlocked version is removed,
// so the test can tell the difference).
func TestObjectLockHealKeepsRemnants(t *testing.T) {
	e, _, _ := lockEngine(t, Config{})
	ctx := context.Background()
	for _, tc := range []struct {
		key  string
		lock objectlock.Lock
		kept bool
	}{{"plain", objectlock.Lock{}, false}, {"retained", objectlock.Lock{Mode: objectlock.Compliance, RetainUntil: days(3)}, true},
		{"held", objectlock.Lock{LegalHold: objectlock.HoldOn}, true}} {
		old := lput(t, e, tc.key, "old", tc.lock)
		lput(t, e, tc.key, "new", objectlock.Lock{})
		vkey := drive.VersionKey("locked", tc.key, old.ModTime.UnixNano(), old.VersionID)
		set := e.setFor("locked", tc.key)
		// Leave the version on one drive of four: below read quorum.
		for p := 1; p < len(set.drives); p++ {
			b := &drive.Batch{}
			b.Delete(drive.TableVersions, vkey)
			if err := set.drives[p].Apply(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.HealObject(ctx, "locked", tc.key, HealOptions{}); err != nil {
			t.Fatalf("%s: heal: %v", tc.key, err)
		}
		ents, err := set.drives[0].Scan(ctx, drive.TableVersions, drive.ScanQuery{Prefix: vkey})
		if err != nil {
			t.Fatal(err)
		}
		if kept := len(ents) == 1; kept != tc.kept {
			t.Fatalf("%s: remnant kept = %v, want %v", tc.key, kept, tc.kept)
		}
	}
}
