package engine

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math/rand"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/lifecycle"
)

// testClock is a clock a test moves forward.
type testClock struct{ off atomic.Int64 }

func (c *testClock) now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

// set puts the clock days ahead of real time.
func (c *testClock) set(days int) { c.off.Store(int64(time.Duration(days) * 24 * time.Hour)) }

// dataBytes sums the shard files on the drives (.shardstore.sys/data).
func dataBytes(t *testing.T, paths []string) int64 {
	t.Helper()
	var n int64
	for _, p := range paths {
		root := filepath.Join(p, ".shardstore.sys", "data")
		filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // a fan-out directory removed under us
			}
			if !d.IsDir() {
				if fi, err := d.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
	}
	return n
}

func setLifecycle(t *testing.T, e *Engine, body string) {
	t.Helper()
	c, err := lifecycle.Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SetBucketConfig(context.Background(), "bucket", BucketConfigLifecycle, c.Marshal()); err != nil {
		t.Fatal(err)
	}
}

const testLifecycleDoc = `<LifecycleConfiguration>
<Rule><ID>logs</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>
<Rule><ID>tmp</ID><Filter><Tag><Key>class</Key><Value>tmp</Value></Tag></Filter><Status>Enabled</Status><Expiration><Days>2</Days></Expiration></Rule>
<Rule><ID>big</ID><Filter><And><Prefix>big/</Prefix><ObjectSizeGreaterThan>250000</ObjectSizeGreaterThan></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>
<Rule><ID>off</ID><Filter><Prefix>keep/</Prefix></Filter><Status>Disabled</Status><Expiration><Days>1</Days></Expiration><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>
<Rule><ID>mpu</ID><Filter><Prefix>up/</Prefix></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>3</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>
<Rule><ID>versions</ID><Filter/><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration></Rule>
</LifecycleConfiguration>`

func TestLifecycleExpiresAndReclaims(t *testing.T) {
	clock := &testClock{}
	// No inlining: every object's data is in shard files, which the
	// test weighs on the drives.
	e, paths := testEngine(t, 4, Config{InlineLimit: -1, Now: clock.now, Heal: HealConfig{Disabled: true}})
	ctx := context.Background()
	r := rand.New(rand.NewSource(1))
	objects := map[string]struct {
		size int
		tags map[string]string
	}{
		"logs/a":    {200 << 10, nil},
		"logs/b":    {150 << 10, map[string]string{"x": "y"}},
		"tmp/x":     {200 << 10, map[string]string{"class": "tmp"}},
		"tmp/y":     {200 << 10, map[string]string{"class": "keep"}},
		"big/large": {300 << 10, nil},
		"big/small": {100 << 10, nil},
		"keep/a":    {200 << 10, nil},
		"other":     {200 << 10, nil},
	}
	bodies := map[string][]byte{}
	for k, o := range objects {
		bodies[k] = randBytes(r, o.size)
		if _, err := e.PutObject(ctx, "bucket", k, bytes.NewReader(bodies[k]), int64(o.size), PutOptions{Tags: o.tags}); err != nil {
			t.Fatal(err)
		}
	}
	upload := func(key string) string {
		id, err := e.NewMultipartUpload(ctx, "bucket", key, PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 2; n++ {
			if _, err := e.PutObjectPart(ctx, "bucket", key, id, n, bytes.NewReader(randBytes(r, 1<<20)), 1<<20, PartOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	up1 := upload("up/one")
	upKeep := upload("keep/upload")
	upOther := upload("elsewhere")
	setLifecycle(t, e, testLifecycleDoc)

	exists := func(k string) bool {
		_, err := e.HeadObject(ctx, "bucket", k, GetOptions{})
		if err != nil && !errors.Is(err, ErrObjectNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	uploads := func() map[string]bool {
		res, err := e.ListMultipartUploads(ctx, "bucket", ListUploadsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, u := range res.Uploads {
			m[u.UploadID] = true
		}
		return m
	}
	run := func() LifecycleReport {
		t.Helper()
		rep, err := e.RunLifecycle(ctx)
		if err != nil || rep.Failed > 0 {
			t.Fatalf("RunLifecycle: %+v %v", rep, err)
		}
		return rep
	}
	check := func(stage string, gone ...string) {
		t.Helper()
		isGone := map[string]bool{}
		for _, k := range gone {
			isGone[k] = true
		}
		for k := range objects {
			if exists(k) == isGone[k] {
				t.Errorf("%s: %s exists = %v, want %v", stage, k, !isGone[k], !isGone[k])
			}
		}
		for _, k := range []string{"tmp/y", "big/small", "keep/a", "other"} {
			got, err := getAll(t, e, k, GetOptions{})
			if err != nil || !bytes.Equal(got, bodies[k]) {
				t.Errorf("%s: %s unreadable or changed: %v", stage, k, err)
			}
		}
	}

	// Today: nothing is due.
	if rep := run(); rep.Expired != 0 || rep.Aborted != 0 || rep.Buckets != 1 {
		t.Fatalf("first pass acted: %+v", rep)
	}
	check("day 0")
	before := dataBytes(t, paths)

	// Two days on: the Days=1 rules (due at the first midnight after
	// creation + 1 day) have come; the Days=2 tag rule has not.
	clock.set(2)
	if rep := run(); rep.Expired != 3 || rep.Aborted != 0 {
		t.Fatalf("day 2 pass: %+v", rep)
	}
	check("day 2", "logs/a", "logs/b", "big/large")
	mid := dataBytes(t, paths)
	if freed, want := before-mid, int64(200+150+300)<<10; freed < want {
		t.Fatalf("day 2 freed %d bytes on the drives, want at least %d", freed, want)
	}

	// Four days on: the tag rule and the upload rule have come.
	clock.set(4)
	if rep := run(); rep.Expired != 1 || rep.Aborted != 1 {
		t.Fatalf("day 4 pass: %+v", rep)
	}
	check("day 4", "logs/a", "logs/b", "big/large", "tmp/x")
	ups := uploads()
	if ups[up1] || !ups[upKeep] || !ups[upOther] {
		t.Fatalf("uploads after day 4: %v (aborted %s; kept %s %s)", ups, up1, upKeep, upOther)
	}
	after := dataBytes(t, paths)
	if freed, want := mid-after, int64(200<<10)+2<<20; freed < want {
		t.Fatalf("day 4 freed %d bytes, want at least %d (object and upload parts)", freed, want)
	}

	// Much later: the Disabled rule and the versioning-only actions
	// still touch nothing.
	clock.set(400)
	if rep := run(); rep.Expired != 0 || rep.Aborted != 0 {
		t.Fatalf("day 400 pass: %+v", rep)
	}
	check("day 400", "logs/a", "logs/b", "big/large", "tmp/x")
	if ups := uploads(); len(ups) != 2 {
		t.Fatalf("uploads after day 400: %v", ups)
	}
	if got := dataBytes(t, paths); got != after {
		t.Fatalf("drive bytes changed without expiry: %d -> %d", after, got)
	}

	// Removing the configuration stops everything.
	if err := e.SetBucketConfig(ctx, "bucket", BucketConfigLifecycle, ""); err != nil {
		t.Fatal(err)
	}
	if rep := run(); rep.Buckets != 0 {
		t.Fatalf("pass without configuration: %+v", rep)
	}
}

// An object overwritten after the listing saw it is judged as it is now:
// the lock-time check keeps a re-tagged object a tag rule no longer selects.
func TestLifecycleRechecksUnderLock(t *testing.T) {
	clock := &testClock{}
	e, _ := testEngine(t, 4, Config{Now: clock.now, Heal: HealConfig{Disabled: true}})
	ctx := context.Background()
	if _, err := e.PutObject(ctx, "bucket", "k", strings.NewReader("data"), 4, PutOptions{Tags: map[string]string{"class": "tmp"}}); err != nil {
		t.Fatal(err)
	}
	c, err := lifecycle.Parse([]byte(`<LifecycleConfiguration><Rule><ID>tmp</ID><Filter><Tag><Key>class</Key><Value>tmp</Value></Tag></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`))
	if err != nil {
		t.Fatal(err)
	}
	clock.set(3)
	now := e.Now()
	keepOnRecheck := func(cur ObjectInfo) bool { _, due := c.ExpiredAt(lifecycleObject(cur), now); return !due }
	if _, err := e.SetObjectTags(ctx, "bucket", "k", "", map[string]string{"class": "keep"}); err != nil {
		t.Fatal(err)
	}
	if deleted, err := e.deleteObject(ctx, "bucket", "k", keepOnRecheck); err != nil || deleted {
		t.Fatalf("re-tagged object deleted: %v %v", deleted, err)
	}
	if _, err := e.SetObjectTags(ctx, "bucket", "k", "", map[string]string{"class": "tmp"}); err != nil {
		t.Fatal(err)
	}
	if deleted, err := e.deleteObject(ctx, "bucket", "k", keepOnRecheck); err != nil || !deleted {
		t.Fatalf("due object kept: %v %v", deleted, err)
	}
}

// The scanner runs lifecycle passes in the background.
func TestLifecycleRunsFromScanner(t *testing.T) {
	clock := &testClock{}
	clock.set(5)
	e, _ := testEngine(t, 4, Config{Now: clock.now, Heal: HealConfig{ScanInterval: 20 * time.Millisecond}})
	ctx := context.Background()
	if _, err := e.PutObject(ctx, "bucket", "logs/x", strings.NewReader("data"), 4, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	setLifecycle(t, e, `<LifecycleConfiguration><Rule><ID>logs</ID><Prefix>logs/</Prefix><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := e.HeadObject(ctx, "bucket", "logs/x", GetOptions{})
		if errors.Is(err, ErrObjectNotFound) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("scanner did not expire the object: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLifecycleVersionedBucket: in a versioned bucket Expiration makes a
// delete marker current (the data stays), NoncurrentVersionExpiration
// removes versions NoncurrentDays after they became noncurrent, keeping
// the NewerNoncurrentVersions newest, and frees their shard files, and
// ExpiredObjectDeleteMarker removes a marker left alone.
func TestLifecycleVersionedBucket(t *testing.T) {
	clock := &testClock{}
	e, paths := testEngine(t, 4, Config{InlineLimit: -1, Now: clock.now, Heal: HealConfig{Disabled: true}})
	ctx := context.Background()
	setVersioning(t, e, VersioningEnabled)
	body := strings.Repeat("v", 100<<10)
	for i := 0; i < 4; i++ {
		vput(t, e, "keep2/k", body)
	}
	vput(t, e, "exp/k", body)
	vput(t, e, "exp/k", body)
	setLifecycle(t, e, `<LifecycleConfiguration>
<Rule><ID>nc</ID><Filter><Prefix>keep2/</Prefix></Filter><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule>
<Rule><ID>exp</ID><Filter><Prefix>exp/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>
<Rule><ID>exp-nc</ID><Filter><Prefix>exp/</Prefix></Filter><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration><NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays></NoncurrentVersionExpiration></Rule>
</LifecycleConfiguration>`)
	before := dataBytes(t, paths)
	rep, err := e.RunLifecycle(ctx)
	if err != nil || rep.Expired+rep.NoncurrentExpired+rep.MarkersRemoved != 0 {
		t.Fatalf("pass today: %+v %v", rep, err)
	}
	clock.set(2)
	if rep, err = e.RunLifecycle(ctx); err != nil {
		t.Fatal(err)
	}
	// keep2/k: 3 noncurrent, 2 newest kept, 1 removed; exp/k: a marker.
	if rep.NoncurrentExpired != 1 || rep.Expired != 1 {
		t.Fatalf("pass at day 2: %+v", rep)
	}
	if got := len(versionsOf(t, e, "keep2/k")); got != 3 {
		t.Fatalf("keep2/k has %d versions, want 3", got)
	}
	if got := versionsOf(t, e, "exp/k"); len(got) != 3 || !strings.HasSuffix(got[0], ":DM") {
		t.Fatalf("exp/k: %v", bodies(got))
	}
	after := dataBytes(t, paths)
	if after >= before {
		t.Fatalf("drive bytes %d -> %d: nothing reclaimed", before, after)
	}
	// Day 6: exp/k's noncurrent versions (noncurrent since day 2) go,
	// then its marker is alone and goes too.
	clock.set(6)
	if rep, err = e.RunLifecycle(ctx); err != nil {
		t.Fatal(err)
	}
	if rep.NoncurrentExpired != 2 || rep.MarkersRemoved != 1 {
		t.Fatalf("pass at day 6: %+v", rep)
	}
	if got := versionsOf(t, e, "exp/k"); len(got) != 0 {
		t.Fatalf("exp/k left: %v", got)
	}
	if dataBytes(t, paths) >= after {
		t.Fatal("noncurrent versions' data not reclaimed")
	}
}
