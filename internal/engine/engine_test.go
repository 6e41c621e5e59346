package engine

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
)

// testEngine starts an engine on n fresh drive directories with small
// blocks so tests cross block edges cheaply.
func testEngine(t testing.TB, n int, cfg Config) (*Engine, []string) {
	t.Helper()
	root := t.TempDir()
	paths := make([]string, n)
	for i := range paths {
		paths[i] = filepath.Join(root, fmt.Sprintf("d%d", i+1))
	}
	cfg.Paths = paths
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.MakeBucket(context.Background(), "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	return e, paths
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	r.Read(b)
	return b
}

func getAll(t testing.TB, e *Engine, key string, opts GetOptions) ([]byte, error) {
	t.Helper()
	rd, err := e.GetObject(context.Background(), "bucket", key, opts)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

func TestPutGetSizes(t *testing.T) {
	const bs = 4096
	e, _ := testEngine(t, 16, Config{BlockSize: bs, InlineLimit: 200})
	r := rand.New(rand.NewSource(1))
	ctx := context.Background()
	for _, size := range []int{0, 1, 11, 12, 13, bs - 1, bs, bs + 1, 3*bs - 1, 3 * bs, 5*bs + 7} {
		for _, known := range []bool{true, false} {
			data := randBytes(r, size)
			key := fmt.Sprintf("obj-%d-%v", size, known)
			sz := int64(size)
			if !known {
				sz = -1
			}
			info, err := e.PutObject(ctx, "bucket", key, bytes.NewReader(data), sz, PutOptions{ContentType: "x/y"})
			if err != nil {
				t.Fatalf("put %d: %v", size, err)
			}
			sum := md5.Sum(data)
			if info.ETag != hex.EncodeToString(sum[:]) || info.Size != int64(size) {
				t.Fatalf("put %d: info %+v", size, info)
			}
			got, err := getAll(t, e, key, GetOptions{})
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("get %d: err %v, equal %v", size, err, bytes.Equal(got, data))
			}
			if size > 2 {
				got, err := getAll(t, e, key, GetOptions{Range: &Range{Start: 1, End: int64(size - 2)}})
				if err != nil || !bytes.Equal(got, data[1:size-1]) {
					t.Fatalf("range %d: err %v", size, err)
				}
			}
		}
	}
}

// Losing or corrupting up to K shards of an object must never change what
// a reader gets; K+1 must never give wrong bytes, and fails with a clear
// error when the read meets them (always, when K+1 records are damaged).
func TestLossAndCorruption(t *testing.T) {
	const bs = 4096
	r := rand.New(rand.NewSource(7))
	ctx := context.Background()
	for trial := 0; trial < 12; trial++ {
		// Background healing off: the test checks that a degraded read
		// queues a heal, and a queue worker could take it first.
		e, paths := testEngine(t, 16, Config{BlockSize: bs, InlineLimit: 100, Heal: HealConfig{Disabled: true}})
		sizes := []int{1, 100, 1000, bs - 1, bs, bs + 1, 3*bs + 5, 7 * bs}
		size := sizes[trial%len(sizes)]
		data := randBytes(r, size)
		if _, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader(data), int64(size), PutOptions{}); err != nil {
			t.Fatal(err)
		}
		k := 4
		damage := k
		if trial%3 == 2 {
			damage = k + 1
		}
		// records counts damaged records, which every read checks (too
		// many fail it). A read fetches only the data shards covering what
		// it returns and parity to replace a bad one, so it notices damage
		// (and queues a heal) only on a drive holding a data shard; a
		// damaged parity shard is left to the scanner. Which drives hold
		// data shards depends on the object's distribution, seeded by the
		// random deployment id.
		records, onData := 0, 0
		for _, i := range r.Perm(16)[:damage] {
			p := drivePos(e, "k", paths[i])
			m := recordOn(t, engineDrive(e, "k", p), "k").Current()
			if m.Erasure.Index <= m.Erasure.DataShards {
				onData++
			}
			switch r.Intn(3) {
			case 0:
				dropRecord(t, engineDrive(e, "k", p), "k")
				records++
			case 1:
				corruptRecord(t, r, engineDrive(e, "k", p), "k")
				records++
			default:
				// Corrupt the shard file, or the inline data.
				if !corruptShardData(t, r, e, paths[i], "k", p) {
					dropRecord(t, engineDrive(e, "k", p), "k")
					records++
				}
			}
		}
		got, err := getAll(t, e, "k", GetOptions{})
		switch {
		case err == nil && !bytes.Equal(got, data):
			t.Fatalf("trial %d size %d: %d damaged shards: wrong bytes", trial, size, damage)
		case damage <= k && err != nil:
			t.Fatalf("trial %d size %d: %d damaged shards: %v", trial, size, damage, err)
		case damage <= k && onData > 0 && e.PendingHeals() == 0:
			t.Fatalf("trial %d: a read that met %d damaged data shards did not queue a heal", trial, onData)
		case damage > k && records > k && err == nil:
			t.Fatalf("trial %d: %d damaged records must fail the read, got %d bytes", trial, records, len(got))
		case damage > k && err != nil && !errors.Is(err, ErrReadQuorum) && !errors.Is(err, ErrObjectNotFound):
			t.Fatalf("trial %d: unexpected error %v", trial, err)
		}
	}
}

func TestFormatChecks(t *testing.T) {
	root := t.TempDir()
	paths := make([]string, 8)
	for i := range paths {
		paths[i] = filepath.Join(root, fmt.Sprintf("d%d", i+1))
	}
	e, err := New(Config{Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	// Swapped order.
	swapped := append([]string(nil), paths...)
	swapped[0], swapped[1] = swapped[1], swapped[0]
	if _, err := New(Config{Paths: swapped}); err == nil || !strings.Contains(err.Error(), "order changed") {
		t.Fatalf("swapped drives: %v", err)
	}
	// Another parity than the drives were formatted with.
	if _, err := New(Config{Paths: paths, Parity: 2}); err == nil || !strings.Contains(err.Error(), "formatted with parity 4") {
		t.Fatalf("changed parity: %v", err)
	}
	// A drive of the previous release (layout v1) is refused with advice.
	old := t.TempDir()
	os.MkdirAll(filepath.Join(old, "d1", ".shardstore.sys", "buckets"), 0o755)
	os.MkdirAll(filepath.Join(old, "d1", "photos", "a.jpg"), 0o755)
	os.WriteFile(filepath.Join(old, "d1", ".shardstore.sys", "format.json"), []byte(`{"version":1,"deploymentID":"x","setCount":1,"setSize":2,"setIndex":0,"driveIndex":0,"driveID":"y"}`), 0o644)
	if _, err := New(Config{Paths: []string{filepath.Join(old, "d1"), filepath.Join(old, "d2")}}); err == nil || !strings.Contains(err.Error(), "layout v1") {
		t.Fatalf("layout v1 drive: %v", err)
	}
	// Changed count.
	if _, err := New(Config{Paths: paths[:4]}); err == nil || !strings.Contains(err.Error(), "drive count") {
		t.Fatalf("changed count: %v", err)
	}
	// A drive from another deployment.
	other := filepath.Join(t.TempDir(), "o")
	oe, err := New(Config{Paths: []string{other + "1", other + "2", other + "3", other + "4"}})
	if err != nil {
		t.Fatal(err)
	}
	oe.Close()
	foreign := append([]string(nil), paths...)
	foreign[3] = other + "1"
	if _, err := New(Config{Paths: foreign}); err == nil || !strings.Contains(err.Error(), "another shardstore") || !strings.Contains(err.Error(), other+"1") {
		t.Fatalf("foreign drive: %v", err)
	}
	// A blank drive (an existing, empty directory) in a known slot is
	// adopted.
	os.RemoveAll(paths[5])
	os.Mkdir(paths[5], 0o755)
	if e, err := New(Config{Paths: paths}); err != nil {
		t.Fatalf("blank replacement refused: %v", err)
	} else {
		e.Close()
	}
	// An unformatted drive with data is refused.
	os.RemoveAll(paths[6])
	os.MkdirAll(filepath.Join(paths[6], "somebucket"), 0o755)
	if _, err := os.Stat(filepath.Join(paths[5], ".shardstore.sys", "format.json")); err != nil {
		t.Fatalf("adopted drive has no format: %v", err)
	}
	if _, err := New(Config{Paths: paths}); err == nil || !strings.Contains(err.Error(), "not blank") {
		t.Fatalf("non-blank unformatted drive: %v", err)
	}
}

func TestNames(t *testing.T) {
	e, _ := testEngine(t, 4, Config{})
	ctx := context.Background()
	for _, key := range []string{"", "x\x00y", "\xff\xfe", strings.Repeat("k", 1025)} {
		if _, err := e.PutObject(ctx, "bucket", key, strings.NewReader("x"), 1, PutOptions{}); !errors.Is(err, ErrInvalidObjectName) {
			t.Errorf("key %q: %v", key, err)
		}
	}
	for _, b := range []string{"ab", "Upper", "a..b", "192.168.1.1", "-abc", "shardstore", "xn--abc"} {
		if err := e.MakeBucket(ctx, b, BucketOptions{}); !errors.Is(err, ErrInvalidBucketName) {
			t.Errorf("bucket %q: %v", b, err)
		}
	}
	// Every key S3 accepts is stored as itself, distinct from its
	// neighbours: layout v2 never turns a key into a path.
	keys := []string{"dir/", "a b/c+d", "ünï/cødé", "a-b", "a", "a/b", "../x", "a/../b", "/abs", "/",
		"//", "a//b", "a/", "a/./b", ".", "..", "./a", ".ss.meta", "a/.ss.d.1/part.1", "a/b/",
		strings.Repeat("s", 300) + "/" + strings.Repeat("t", 300), strings.Repeat("k", 1024)}
	for _, key := range keys {
		if _, err := e.PutObject(ctx, "bucket", key, strings.NewReader(key), int64(len(key)), PutOptions{}); err != nil {
			t.Errorf("key %q: %v", key, err)
		}
	}
	for _, key := range keys {
		if got, err := getAll(t, e, key, GetOptions{}); err != nil || string(got) != key {
			t.Errorf("get %q: %q %v", key, got, err)
		}
	}
	res, err := e.ListObjects(ctx, "bucket", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string(nil), keys...)
	sort.Strings(want)
	var got []string
	for _, o := range res.Objects {
		got = append(got, o.Key)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("listing:\n got %q\nwant %q", got, want)
	}
	for _, key := range keys {
		if err := e.DeleteObject(ctx, "bucket", key); err != nil {
			t.Errorf("delete %q: %v", key, err)
		}
	}
	if res, err := e.ListObjects(ctx, "bucket", ListOptions{}); err != nil || len(res.Objects) != 0 {
		t.Fatalf("after deleting every key: %+v %v", res, err)
	}
}

func TestListing(t *testing.T) {
	e, _ := testEngine(t, 8, Config{})
	ctx := context.Background()
	keys := []string{"a", "a-b", "a/", "a/b", "a/c/d", "a0", "b", "dir/", "dir/x", "dir/y/z", "ü"}
	for _, k := range keys {
		if _, err := e.PutObject(ctx, "bucket", k, strings.NewReader("v"), 1, PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(opts ListOptions) (objs, prefixes []string) {
		for {
			res, err := e.ListObjects(ctx, "bucket", opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range res.Objects {
				objs = append(objs, o.Key)
			}
			prefixes = append(prefixes, res.CommonPrefixes...)
			if !res.IsTruncated {
				return
			}
			opts.After = res.NextAfter
		}
	}
	for _, page := range []int{1, 2, 3, 1000} {
		objs, _ := list(ListOptions{MaxKeys: page})
		if strings.Join(objs, ",") != strings.Join(keys, ",") {
			t.Fatalf("page %d: %v", page, objs)
		}
		objs, prefixes := list(ListOptions{Delimiter: "/", MaxKeys: page})
		if strings.Join(objs, ",") != "a,a-b,a0,b,ü" || strings.Join(prefixes, ",") != "a/,dir/" {
			t.Fatalf("page %d delimiter: %v %v", page, objs, prefixes)
		}
		objs, prefixes = list(ListOptions{Prefix: "a/", Delimiter: "/", MaxKeys: page})
		if strings.Join(objs, ",") != "a/,a/b" || strings.Join(prefixes, ",") != "a/c/" {
			t.Fatalf("page %d prefix a/: %v %v", page, objs, prefixes)
		}
		objs, prefixes = list(ListOptions{Prefix: "a", Delimiter: "-", MaxKeys: page})
		if strings.Join(objs, ",") != "a,a/,a/b,a/c/d,a0" || strings.Join(prefixes, ",") != "a-" {
			t.Fatalf("page %d delimiter '-': %v %v", page, objs, prefixes)
		}
	}
	if err := e.DeleteBucket(ctx, "bucket"); !errors.Is(err, ErrBucketNotEmpty) {
		t.Fatalf("delete non-empty bucket: %v", err)
	}
	for _, k := range keys {
		if err := e.DeleteObject(ctx, "bucket", k); err != nil {
			t.Fatal(err)
		}
	}
	if objs, prefixes := list(ListOptions{Delimiter: "/"}); len(objs)+len(prefixes) != 0 {
		t.Fatalf("after delete: %v %v", objs, prefixes)
	}
	if err := e.DeleteBucket(ctx, "bucket"); err != nil {
		t.Fatal(err)
	}
}

// A PUT's memory is bounded by the blocks in flight, not by the object's
// size: a 48 MiB PUT must allocate about what a 1 MiB PUT does.
func TestPutMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 48 MiB; skipped in -short mode")
	}
	e, _ := testEngine(t, 16, Config{})
	ctx := context.Background()
	measure := func(size int) uint64 {
		data := &patternReader{left: int64(size)}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := e.PutObject(ctx, "bucket", "mem", data, int64(size), PutOptions{}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	measure(1 << 20) // warm the pools
	small := measure(2 << 20)
	large := measure(48 << 20)
	t.Logf("allocated: 2 MiB PUT %d KiB, 48 MiB PUT %d KiB", small>>10, large>>10)
	// Four pooled blocks of 12+4 shards are ~5.6 MiB; allow pool refills
	// after a GC but nothing proportional to 48 MiB.
	if large > 16<<20 {
		t.Fatalf("a 48 MiB PUT allocated %d MiB: memory grows with object size", large>>20)
	}
}

// patternReader yields size bytes without holding them in memory.
type patternReader struct{ left, pos int64 }

func (p *patternReader) Read(b []byte) (int, error) {
	if p.left == 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(b)), p.left))
	for i := range b[:n] {
		b[i] = byte(p.pos + int64(i))
	}
	p.left -= int64(n)
	p.pos += int64(n)
	return n, nil
}

// errAtEOF is a body whose final verification fails only at EOF, like a
// SigV4 payload-hash check: the PUT must fail and store nothing.
type errAtEOF struct {
	r   io.Reader
	err error
}

func (b *errAtEOF) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		return n, b.err
	}
	return n, err
}

func TestBodyVerifiedAtEOF(t *testing.T) {
	e, _ := testEngine(t, 4, Config{BlockSize: 4096})
	ctx := context.Background()
	bad := errors.New("payload hash mismatch")
	for _, size := range []int{0, 10, 4096, 9000} {
		body := &errAtEOF{r: bytes.NewReader(make([]byte, size)), err: bad}
		if _, err := e.PutObject(ctx, "bucket", "v", body, int64(size), PutOptions{}); !errors.Is(err, bad) {
			t.Fatalf("size %d: a body failing at EOF was accepted: %v", size, err)
		}
		if _, err := e.HeadObject(ctx, "bucket", "v", GetOptions{}); !errors.Is(err, ErrObjectNotFound) {
			t.Fatalf("size %d: object visible after a failed PUT: %v", size, err)
		}
	}
	if _, err := e.PutObject(ctx, "bucket", `back\slash`, strings.NewReader("x"), 1, PutOptions{}); err != nil {
		t.Fatalf("backslash key: %v", err)
	}
}

// An overwrite interrupted mid-commit (some drives hold the new record,
// the rest the old) must leave the last acknowledged version readable:
// the previous record kept beside the new one gives the old version its
// quorum back. Inline objects are the hard case, since the record is the
// data.
func TestInterruptedOverwriteKeepsOldVersion(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) {
			limit := int64(-1)
			if inline {
				limit = 0
			}
			e, paths := testEngine(t, 16, Config{BlockSize: 4096, InlineLimit: limit, Heal: HealConfig{Disabled: true}})
			ctx := context.Background()
			old := bytes.Repeat([]byte("old!"), 1000)
			if _, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader(old), int64(len(old)), PutOptions{}); err != nil {
				t.Fatal(err)
			}
			// Snapshot the old per-drive state, overwrite, then put the
			// old state back on 10 drives: as if the commit had reached
			// only 6 drives (fewer than M=12) when the process died,
			// after the new record (with the old version kept as the
			// previous one) was applied there and before the old data
			// was freed.
			set := e.setFor("bucket", "k")
			okey := drive.ObjectKey("bucket", "k")
			oldRaw := make([][]byte, 16)
			oldData := make([][]byte, 16)
			oldVer := make([]*meta.Object, 16)
			for p, d := range set.drives {
				raw, err := d.Get(ctx, drive.TableObjects, okey)
				if err != nil {
					t.Fatal(err)
				}
				oldRaw[p] = raw
				oldVer[p] = recordOn(t, d, "k").Current()
				if inline {
					oldData[p], err = d.Get(ctx, drive.TableInline, drive.DataKey(oldVer[p].DataID, 1))
				} else {
					oldData[p], err = os.ReadFile(drive.ShardPath(paths[p], drive.ShardRef{ID: oldVer[p].DataID, Part: 1}))
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			nv := bytes.Repeat([]byte("new!"), 1000)
			if _, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader(nv), int64(len(nv)), PutOptions{}); err != nil {
				t.Fatal(err)
			}
			newRaw := make([][]byte, 16)
			for p, d := range set.drives {
				if p < 6 {
					rec := recordOn(t, d, "k")
					newRaw[p] = rec.Marshal()
					pv := *oldVer[p]
					pv.Flags |= meta.FlagPrev
					rec.Versions = append(rec.Versions, &pv)
					putRaw(t, d, drive.TableObjects, okey, rec.Marshal())
				} else {
					putRaw(t, d, drive.TableObjects, okey, oldRaw[p])
				}
				if inline {
					putRaw(t, d, drive.TableInline, drive.DataKey(oldVer[p].DataID, 1), oldData[p])
				} else if err := os.WriteFile(drive.ShardPath(paths[p], drive.ShardRef{ID: oldVer[p].DataID, Part: 1}), oldData[p], 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := getAll(t, e, "k", GetOptions{})
			if err != nil || !bytes.Equal(got, old) {
				t.Fatalf("after an interrupted overwrite: err %v, old version intact %v", err, bytes.Equal(got, old))
			}
			// Without the kept versions the old one would have no quorum.
			for p := 0; p < 6; p++ {
				putRaw(t, set.drives[p], drive.TableObjects, okey, newRaw[p])
			}
			if _, err := getAll(t, e, "k", GetOptions{}); err == nil {
				t.Fatal("the test setup does not reproduce an interrupted commit")
			}
		})
	}
}

// After a kill, a commit cut short can leave a key on exactly the drives a
// listing walks but below quorum; until the recovery sweep has run, the
// listing must confirm keys by quorum instead of showing a half-visible
// object.
func TestListingAfterUncleanStartHidesPartialCommits(t *testing.T) {
	root := t.TempDir()
	paths := make([]string, 16)
	for i := range paths {
		paths[i] = filepath.Join(root, fmt.Sprintf("d%d", i+1))
	}
	cfg := Config{Paths: paths, Heal: HealConfig{Disabled: true}}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ctx := context.Background()
	e.MakeBucket(ctx, "bucket", BucketOptions{})
	for _, k := range []string{"whole", "partial"} {
		if _, err := e.PutObject(ctx, "bucket", k, strings.NewReader(k), int64(len(k)), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// "partial" keeps its record only on the 5 drives listings walk.
	for p := 5; p < 16; p++ {
		dropRecord(t, engineDrive(e, "partial", p), "partial")
	}
	keys := func(e *Engine) string {
		res, err := e.ListObjects(ctx, "bucket", ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range res.Objects {
			out = append(out, o.Key)
		}
		return strings.Join(out, ",")
	}
	if got := keys(e); got != "partial,whole" {
		t.Fatalf("setup: a clean engine's fast listing shows %q", got)
	}
	// Simulate a kill: the first engine releases its drives without a
	// clean stop (the running marker stays); a new one starts on the same
	// drives and finds the marker.
	e.closeHealths()
	e2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if got := keys(e2); got != "whole" {
		t.Fatalf("after an unclean start the listing shows %q, want only the readable key", got)
	}
}
