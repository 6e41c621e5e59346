package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/objectlock"
	"github.com/shardstore/shardstore/internal/sse"
)

// The runner's tests run passes over a real engine on temporary drives,
// moving the engine's clock (engine.Config.Now) instead of waiting days.

// testClock is a clock a test moves forward.
type testClock struct{ off atomic.Int64 }

func (c *testClock) now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

// set puts the clock days ahead of real time.
func (c *testClock) set(days int) { c.off.Store(int64(time.Duration(days) * 24 * time.Hour)) }

// testEngine opens an engine on four drives with a bucket "bucket".
func testEngine(t *testing.T, cfg engine.Config) (*engine.Engine, []string) {
	t.Helper()
	root := t.TempDir()
	cfg.Paths = make([]string, 4)
	for i := range cfg.Paths {
		cfg.Paths[i] = filepath.Join(root, fmt.Sprintf("d%d", i+1))
	}
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.MakeBucket(context.Background(), "bucket", engine.BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	return e, cfg.Paths
}

// run runs one pass without resting; a failure fails the test.
func run(t *testing.T, e *engine.Engine) Report {
	t.Helper()
	rep, err := NewRunner(e, nil).Run(context.Background(), nil)
	if err != nil || rep.Failed > 0 {
		t.Fatalf("lifecycle pass: %+v %v", rep, err)
	}
	return rep
}

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

func setLifecycle(t *testing.T, e *engine.Engine, bucket, body string) {
	t.Helper()
	c, err := Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SetBucketConfig(context.Background(), bucket, engine.BucketConfigLifecycle, c.Marshal()); err != nil {
		t.Fatal(err)
	}
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	r.Read(b)
	return b
}

func get(e *engine.Engine, bucket, key, vid string) ([]byte, error) {
	rd, err := e.GetObject(context.Background(), bucket, key, engine.GetOptions{VersionID: vid})
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

func put(t *testing.T, e *engine.Engine, bucket, key, body string, opts engine.PutOptions) engine.ObjectInfo {
	t.Helper()
	oi, err := e.PutObject(context.Background(), bucket, key, strings.NewReader(body), int64(len(body)), opts)
	if err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
	return oi
}

// versionsOf lists every version of key as "id:body" or "id:DM", newest
// first, reading each body back.
func versionsOf(t *testing.T, e *engine.Engine, bucket, key string) []string {
	t.Helper()
	res, err := e.ListObjectVersions(context.Background(), bucket, engine.ListVersionsOptions{Prefix: key})
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
		body, err := get(e, bucket, key, versionName(v.VersionID))
		if err != nil {
			t.Fatalf("get version %s: %v", versionName(v.VersionID), err)
		}
		out = append(out, versionName(v.VersionID)+":"+string(body))
	}
	return out
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
	e, paths := testEngine(t, engine.Config{InlineLimit: -1, Now: clock.now, Heal: engine.HealConfig{Disabled: true}})
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
		if _, err := e.PutObject(ctx, "bucket", k, bytes.NewReader(bodies[k]), int64(o.size), engine.PutOptions{Tags: o.tags}); err != nil {
			t.Fatal(err)
		}
	}
	upload := func(key string) string {
		id, err := e.NewMultipartUpload(ctx, "bucket", key, engine.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 2; n++ {
			if _, err := e.PutObjectPart(ctx, "bucket", key, id, n, bytes.NewReader(randBytes(r, 1<<20)), 1<<20, engine.PartOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	up1 := upload("up/one")
	upKeep := upload("keep/upload")
	upOther := upload("elsewhere")
	setLifecycle(t, e, "bucket", testLifecycleDoc)

	exists := func(k string) bool {
		_, err := e.HeadObject(ctx, "bucket", k, engine.GetOptions{})
		if err != nil && !errors.Is(err, engine.ErrObjectNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	uploads := func() map[string]bool {
		res, err := e.ListMultipartUploads(ctx, "bucket", engine.ListUploadsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, u := range res.Uploads {
			m[u.UploadID] = true
		}
		return m
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
			got, err := get(e, "bucket", k, "")
			if err != nil || !bytes.Equal(got, bodies[k]) {
				t.Errorf("%s: %s unreadable or changed: %v", stage, k, err)
			}
		}
	}

	// Today: nothing is due.
	if rep := run(t, e); rep.Expired != 0 || rep.Aborted != 0 || rep.Buckets != 1 {
		t.Fatalf("first pass acted: %+v", rep)
	}
	check("day 0")
	before := dataBytes(t, paths)

	// Two days on: the Days=1 rules (due at the first midnight after
	// creation + 1 day) have come; the Days=2 tag rule has not.
	clock.set(2)
	if rep := run(t, e); rep.Expired != 3 || rep.Aborted != 0 {
		t.Fatalf("day 2 pass: %+v", rep)
	}
	check("day 2", "logs/a", "logs/b", "big/large")
	mid := dataBytes(t, paths)
	if freed, want := before-mid, int64(200+150+300)<<10; freed < want {
		t.Fatalf("day 2 freed %d bytes on the drives, want at least %d", freed, want)
	}

	// Four days on: the tag rule and the upload rule have come.
	clock.set(4)
	if rep := run(t, e); rep.Expired != 1 || rep.Aborted != 1 {
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
	if rep := run(t, e); rep.Expired != 0 || rep.Aborted != 0 {
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
	if err := e.SetBucketConfig(ctx, "bucket", engine.BucketConfigLifecycle, ""); err != nil {
		t.Fatal(err)
	}
	if rep := run(t, e); rep.Buckets != 0 {
		t.Fatalf("pass without configuration: %+v", rep)
	}
}

// An object re-tagged after the listing saw it is judged as it is now:
// the runner's condition, checked under the object's lock, keeps an
// object a tag rule no longer selects.
func TestLifecycleRechecksUnderLock(t *testing.T) {
	clock := &testClock{}
	e, _ := testEngine(t, engine.Config{Now: clock.now, Heal: engine.HealConfig{Disabled: true}})
	ctx := context.Background()
	put(t, e, "bucket", "k", "data", engine.PutOptions{Tags: map[string]string{"class": "tmp"}})
	c, err := Parse([]byte(`<LifecycleConfiguration><Rule><ID>tmp</ID><Filter><Tag><Key>class</Key><Value>tmp</Value></Tag></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`))
	if err != nil {
		t.Fatal(err)
	}
	clock.set(3)
	now := e.Now()
	stillDue := func(cur engine.ObjectInfo) bool { _, due := c.ExpiredAt(lifecycleObject(cur), now); return due }
	if _, err := e.SetObjectTags(ctx, "bucket", "k", "", map[string]string{"class": "keep"}); err != nil {
		t.Fatal(err)
	}
	if deleted, err := e.DeleteObjectIf(ctx, "bucket", "k", stillDue); err != nil || deleted {
		t.Fatalf("re-tagged object deleted: %v %v", deleted, err)
	}
	if _, err := e.SetObjectTags(ctx, "bucket", "k", "", map[string]string{"class": "tmp"}); err != nil {
		t.Fatal(err)
	}
	if deleted, err := e.DeleteObjectIf(ctx, "bucket", "k", stillDue); err != nil || !deleted {
		t.Fatalf("due object kept: %v %v", deleted, err)
	}
}

// The scanner runs lifecycle passes in the background, through the hook
// shardstore sets (engine.Config.AfterScanCycle).
func TestLifecycleRunsFromScanner(t *testing.T) {
	clock := &testClock{}
	clock.set(5)
	e, _ := testEngine(t, engine.Config{Now: clock.now, Heal: engine.HealConfig{ScanInterval: 20 * time.Millisecond},
		AfterScanCycle: AfterScanCycle(nil)})
	ctx := context.Background()
	put(t, e, "bucket", "logs/x", "data", engine.PutOptions{})
	setLifecycle(t, e, "bucket", `<LifecycleConfiguration><Rule><ID>logs</ID><Prefix>logs/</Prefix><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := e.HeadObject(ctx, "bucket", "logs/x", engine.GetOptions{})
		if errors.Is(err, engine.ErrObjectNotFound) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("scanner did not expire the object: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLifecycleRests: with a rest, the pass rests after each object it
// acts on, for as long as that took, and a rest that fails ends the pass.
func TestLifecycleRests(t *testing.T) {
	clock := &testClock{}
	e, _ := testEngine(t, engine.Config{Now: clock.now, Heal: engine.HealConfig{Disabled: true}})
	for i := 0; i < 3; i++ {
		put(t, e, "bucket", fmt.Sprintf("logs/%d", i), "data", engine.PutOptions{})
	}
	setLifecycle(t, e, "bucket", `<LifecycleConfiguration><Rule><ID>logs</ID><Prefix>logs/</Prefix><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`)
	clock.set(2)
	stop := errors.New("stop")
	var rests []time.Duration
	rep, err := NewRunner(e, nil).Run(context.Background(), func(took time.Duration) error {
		rests = append(rests, took)
		if len(rests) == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || rep.Expired != 2 || len(rests) != 2 {
		t.Fatalf("pass: %+v %v after %d rests, want 2 expired and the rest's error", rep, err, len(rests))
	}
	for _, took := range rests {
		if took <= 0 {
			t.Fatalf("rest told the step took %v", took)
		}
	}
}

// TestLifecycleVersionedBucket: in a versioned bucket Expiration makes a
// delete marker current (the data stays), NoncurrentVersionExpiration
// removes versions NoncurrentDays after they became noncurrent, keeping
// the NewerNoncurrentVersions newest, and frees their shard files, and
// ExpiredObjectDeleteMarker removes a marker left alone.
func TestLifecycleVersionedBucket(t *testing.T) {
	clock := &testClock{}
	e, paths := testEngine(t, engine.Config{InlineLimit: -1, Now: clock.now, Heal: engine.HealConfig{Disabled: true}})
	ctx := context.Background()
	if err := e.SetBucketConfig(ctx, "bucket", engine.BucketConfigVersioning, engine.VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("v", 100<<10)
	for i := 0; i < 4; i++ {
		put(t, e, "bucket", "keep2/k", body, engine.PutOptions{})
	}
	put(t, e, "bucket", "exp/k", body, engine.PutOptions{})
	put(t, e, "bucket", "exp/k", body, engine.PutOptions{})
	setLifecycle(t, e, "bucket", `<LifecycleConfiguration>
<Rule><ID>nc</ID><Filter><Prefix>keep2/</Prefix></Filter><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule>
<Rule><ID>exp</ID><Filter><Prefix>exp/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>
<Rule><ID>exp-nc</ID><Filter><Prefix>exp/</Prefix></Filter><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration><NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays></NoncurrentVersionExpiration></Rule>
</LifecycleConfiguration>`)
	before := dataBytes(t, paths)
	if rep := run(t, e); rep.Expired+rep.NoncurrentExpired+rep.MarkersRemoved != 0 {
		t.Fatalf("pass today: %+v", rep)
	}
	clock.set(2)
	// keep2/k: 3 noncurrent, 2 newest kept, 1 removed; exp/k: a marker.
	if rep := run(t, e); rep.NoncurrentExpired != 1 || rep.Expired != 1 {
		t.Fatalf("pass at day 2: %+v", rep)
	}
	if got := len(versionsOf(t, e, "bucket", "keep2/k")); got != 3 {
		t.Fatalf("keep2/k has %d versions, want 3", got)
	}
	if got := versionsOf(t, e, "bucket", "exp/k"); len(got) != 3 || !strings.HasSuffix(got[0], ":DM") {
		t.Fatalf("exp/k: %d versions, newest %q", len(got), got[0])
	}
	after := dataBytes(t, paths)
	if after >= before {
		t.Fatalf("drive bytes %d -> %d: nothing reclaimed", before, after)
	}
	// Day 6: exp/k's noncurrent versions (noncurrent since day 2) go,
	// then its marker is alone and goes too.
	clock.set(6)
	if rep := run(t, e); rep.NoncurrentExpired != 2 || rep.MarkersRemoved != 1 {
		t.Fatalf("pass at day 6: %+v", rep)
	}
	if got := versionsOf(t, e, "bucket", "exp/k"); len(got) != 0 {
		t.Fatalf("exp/k left: %v", got)
	}
	if dataBytes(t, paths) >= after {
		t.Fatal("noncurrent versions' data not reclaimed")
	}
}

// TestObjectLockLifecycle: NoncurrentVersionExpiration never removes a
// locked version (the bytes stay on the drives); once the lock ends the
// next pass removes it and reclaims the space.
func TestObjectLockLifecycle(t *testing.T) {
	clock := &testClock{}
	e, paths := testEngine(t, engine.Config{InlineLimit: -1, Now: clock.now, Heal: engine.HealConfig{Disabled: true}})
	ctx := context.Background()
	if err := e.MakeBucket(ctx, "locked", engine.BucketOptions{Owner: "o", ObjectLock: true}); err != nil {
		t.Fatal(err)
	}
	setLifecycle(t, e, "locked", `<LifecycleConfiguration><Rule><ID>nc</ID><Filter/><Status>Enabled</Status>`+
		`<NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration></Rule></LifecycleConfiguration>`)
	days := func(n int) time.Time { return time.Now().Add(time.Duration(n) * 24 * time.Hour) }
	lput := func(key, body string, l objectlock.Lock) engine.ObjectInfo {
		return put(t, e, "locked", key, body, engine.PutOptions{Lock: l})
	}
	big := strings.Repeat("x", 256<<10)
	lput("held", big, objectlock.Lock{LegalHold: objectlock.HoldOn})
	lput("held", "new", objectlock.Lock{})
	ret := lput("ret", big, objectlock.Lock{Mode: objectlock.Governance, RetainUntil: days(5)})
	lput("ret", "new", objectlock.Lock{})
	lput("free", big, objectlock.Lock{})
	lput("free", "new", objectlock.Lock{})
	full := dataBytes(t, paths)
	clock.set(3)
	rep, err := NewRunner(e, nil).Run(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.NoncurrentExpired != 1 || rep.Locked != 2 {
		t.Fatalf("first pass: %+v, want 1 expired (free) and 2 locked", rep)
	}
	if n := len(versionsOf(t, e, "locked", "held")) + len(versionsOf(t, e, "locked", "ret")); n != 4 {
		t.Fatalf("locked keys have %d versions, want 4", n)
	}
	afterFirst := dataBytes(t, paths)
	if afterFirst >= full || full-afterFirst > full/2 {
		t.Fatalf("bytes %d → %d: only the free version's data should go", full, afterFirst)
	}
	clock.set(6) // retention over; the hold stays
	if _, err := e.SetObjectRetention(ctx, "locked", "ret", ret.VersionID, objectlock.Lock{}, false); err != nil {
		t.Fatalf("remove expired retention: %v", err)
	}
	rep, err = NewRunner(e, nil).Run(ctx, nil)
	if err != nil || rep.NoncurrentExpired != 1 || rep.Locked != 1 {
		t.Fatalf("second pass: %+v %v, want 1 expired (ret) and 1 locked (held)", rep, err)
	}
	if dataBytes(t, paths) >= afterFirst {
		t.Fatal("expired retention: space not reclaimed")
	}
}

// Encrypted objects expire as any others: the runner needs no key (it
// never reads object data), and what it keeps stays readable with one.
func TestLifecycleExpiresEncryptedObjects(t *testing.T) {
	clock := &testClock{}
	e, _ := testEngine(t, engine.Config{Now: clock.now, Heal: engine.HealConfig{Disabled: true}})
	ctx := context.Background()
	key := bytes.Repeat([]byte{3}, sse.KeySize)
	enc := &engine.Encryption{Cipher: sse.DefaultCipher(), Key: key, Sealed: map[string]string{"scheme": "test"}, HideETag: true}
	unseal := func(engine.ObjectInfo) ([]byte, error) { return key, nil }
	body := randBytes(rand.New(rand.NewSource(2)), 300<<10)
	for _, k := range []string{"logs/enc", "kept/enc"} {
		if _, err := e.PutObject(ctx, "bucket", k, bytes.NewReader(body), int64(len(body)), engine.PutOptions{Encryption: enc}); err != nil {
			t.Fatal(err)
		}
	}
	setLifecycle(t, e, "bucket", testLifecycleDoc)
	clock.set(2)
	if rep := run(t, e); rep.Expired != 1 {
		t.Fatalf("day 2 pass: %+v", rep)
	}
	if _, err := e.HeadObject(ctx, "bucket", "logs/enc", engine.GetOptions{}); !errors.Is(err, engine.ErrObjectNotFound) {
		t.Fatalf("logs/enc after its rule: %v", err)
	}
	rd, err := e.GetObject(ctx, "bucket", "kept/enc", engine.GetOptions{Unseal: unseal})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rd)
	rd.Close()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("kept/enc: %v", err)
	}
}

// TestLifecycleReportsRemovals: OnRemoved hears of each change a pass
// made (the bucket's s3:LifecycleExpiration:* events): a delete marker
// an expiration made, noncurrent versions and a lone marker removed,
// and an unversioned object deleted.
func TestLifecycleReportsRemovals(t *testing.T) {
	clock := &testClock{}
	e, _ := testEngine(t, engine.Config{InlineLimit: -1, Now: clock.now, Heal: engine.HealConfig{Disabled: true}})
	ctx := context.Background()
	if err := e.SetBucketConfig(ctx, "bucket", engine.BucketConfigVersioning, engine.VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	put(t, e, "bucket", "exp/k", "one", engine.PutOptions{})
	setLifecycle(t, e, "bucket", `<LifecycleConfiguration>
<Rule><ID>exp</ID><Filter><Prefix>exp/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>
<Rule><ID>exp-nc</ID><Filter><Prefix>exp/</Prefix></Filter><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration><NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays></NoncurrentVersionExpiration></Rule>
</LifecycleConfiguration>`)
	var got []string
	r := NewRunner(e, nil)
	r.OnRemoved = func(rm Removal) {
		got = append(got, fmt.Sprintf("%s %s marker=%v versioned=%v size=%d", rm.Bucket.Name, rm.Key, rm.Marker, rm.VersionID != "", rm.Size))
	}
	clock.set(2)
	if _, err := r.Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	clock.set(6)
	if _, err := r.Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"bucket exp/k marker=true versioned=false size=0",
		"bucket exp/k marker=false versioned=true size=3",
		"bucket exp/k marker=false versioned=true size=0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("removals:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
