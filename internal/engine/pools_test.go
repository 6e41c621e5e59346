package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// poolPaths makes drive paths under root: one pool of n drives per size.
func poolPaths(root string, sizes ...int) []string {
	var paths []string
	for p, n := range sizes {
		for i := 0; i < n; i++ {
			paths = append(paths, filepath.Join(root, fmt.Sprintf("p%d", p+1), fmt.Sprintf("d%d", i+1)))
		}
	}
	return paths
}

// holdersOf counts the pools holding a record of key (by raw drive reads).
func holdersOf(t *testing.T, e *Engine, key string) []int {
	t.Helper()
	found, err := e.keyHolders(context.Background(), "bucket", key)
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func poolsHolding(found []int) int {
	n := 0
	for _, f := range found {
		if f > 0 {
			n++
		}
	}
	return n
}

func TestPoolsGeometryAndPlacement(t *testing.T) {
	root := t.TempDir()
	e, err := New(Config{Paths: poolPaths(root, 4, 6), Pools: []int{4, 6}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if len(e.pools) != 2 || len(e.pools[0].sets[0].drives) != 4 || len(e.pools[1].sets[0].drives) != 6 {
		t.Fatalf("pools: %d, set sizes %d and %d, want 2 pools of sets of 4 and 6", len(e.pools), len(e.pools[0].sets[0].drives), len(e.pools[1].sets[0].drives))
	}
	if e.pools[0].id == "" || e.pools[1].id == "" || e.pools[0].id == e.pools[1].id {
		t.Fatalf("pool ids %q %q: want two different non-empty ids", e.pools[0].id, e.pools[1].id)
	}
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	const n = 120
	perPool := make([]int, 2)
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("k/%03d", i)
		if _, err := e.PutObject(ctx, "bucket", key, strings.NewReader("v1-"+key), int64(len("v1-"+key)), PutOptions{}); err != nil {
			t.Fatal(err)
		}
		found := holdersOf(t, e, key)
		if poolsHolding(found) != 1 {
			t.Fatalf("%s is in %d pools (%v) after its first PUT", key, poolsHolding(found), found)
		}
		perPool[e.heldBy(found)]++
	}
	if perPool[0] == 0 || perPool[1] == 0 {
		t.Fatalf("new keys per pool %v: both pools have free space, both should get keys", perPool)
	}
	// Overwrites stay in the key's pool, and reads see the last write.
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("k/%03d", i)
		before := e.heldBy(holdersOf(t, e, key))
		body := "v2-" + key
		if _, err := e.PutObject(ctx, "bucket", key, strings.NewReader(body), int64(len(body)), PutOptions{}); err != nil {
			t.Fatal(err)
		}
		found := holdersOf(t, e, key)
		if poolsHolding(found) != 1 || e.heldBy(found) != before {
			t.Fatalf("%s moved from pool %d to %v on overwrite", key, before+1, found)
		}
		got, err := getAll(t, e, key, GetOptions{})
		if err != nil || string(got) != body {
			t.Fatalf("GET %s = %q, %v; want %q", key, got, err, body)
		}
	}
	// A listing merges the pools and names every key once.
	seen := map[string]int{}
	after := ""
	for {
		res, err := e.ListObjects(ctx, "bucket", ListOptions{Prefix: "k/", After: after, MaxKeys: 50})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range res.Objects {
			seen[o.Key]++
		}
		if !res.IsTruncated {
			break
		}
		after = res.NextAfter
	}
	if len(seen) != n {
		t.Fatalf("listing found %d keys, want %d", len(seen), n)
	}
	for k, c := range seen {
		if c != 1 {
			t.Fatalf("listing names %s %d times", k, c)
		}
	}
	// Deletes reach the key's pool.
	if err := e.DeleteObject(ctx, "bucket", "k/000"); err != nil {
		t.Fatal(err)
	}
	if _, err := getAll(t, e, "k/000", GetOptions{}); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("GET after DELETE: %v, want not found", err)
	}
	if poolsHolding(holdersOf(t, e, "k/000")) != 0 {
		t.Fatalf("k/000 still held after DELETE")
	}
}

// A multipart upload stays in the pool it started in, and the object is
// committed there.
func TestPoolsMultipartStays(t *testing.T) {
	root := t.TempDir()
	e, err := New(Config{Paths: poolPaths(root, 4, 4), Pools: []int{4, 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		key := fmt.Sprintf("mp/%d", i)
		id, err := e.NewMultipartUpload(ctx, "bucket", key, PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		upPool := e.uploadSet(ctx, "bucket", key, id).pool.index
		part := bytes.Repeat([]byte{byte(i)}, 1000)
		pi, err := e.PutObjectPart(ctx, "bucket", key, id, 1, bytes.NewReader(part), int64(len(part)), PartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.CompleteMultipartUpload(ctx, "bucket", key, id, []CompletePart{{Number: 1, ETag: pi.ETag}}, PutOptions{}); err != nil {
			t.Fatal(err)
		}
		found := holdersOf(t, e, key)
		if poolsHolding(found) != 1 || e.heldBy(found) != upPool {
			t.Fatalf("%s: upload in pool %d, object in %v", key, upPool+1, found)
		}
		got, err := getAll(t, e, key, GetOptions{})
		if err != nil || !bytes.Equal(got, part) {
			t.Fatalf("GET %s: %v", key, err)
		}
	}
}

// Two first writes of a key racing to different pools: the second commit
// finds the key in the other pool and is refused as busy, never making a
// second copy.
func TestPoolsCommitRefusesSecondPool(t *testing.T) {
	root := t.TempDir()
	e, err := New(Config{Paths: poolPaths(root, 4, 4), Pools: []int{4, 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutObject(ctx, "bucket", "race", strings.NewReader("a"), 1, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	held := e.heldBy(holdersOf(t, e, "race"))
	other := e.setIn(e.pools[1-held], "bucket", "race")
	if err := e.checkSole(ctx, other, "bucket", "race"); !errors.Is(err, ErrBusy) {
		t.Fatalf("commit to the other pool: %v, want ErrBusy", err)
	}
	if err := e.checkSole(ctx, e.setIn(e.pools[held], "bucket", "race"), "bucket", "race"); err != nil {
		t.Fatalf("commit to the key's pool: %v", err)
	}
}

// An expansion: the deployment restarted with a pool appended keeps its
// objects and buckets, formats the new pool with its deployment id, and
// places new keys in both.
func TestPoolsExpansion(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	one := poolPaths(root, 4)
	e, err := New(Config{Paths: one})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.WriteConfig(ctx, "doc", 0, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		key := fmt.Sprintf("old/%d", i)
		if _, err := e.PutObject(ctx, "bucket", key, strings.NewReader(key), int64(len(key)), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dep := e.DeploymentID()
	e.Close()

	two := poolPaths(root, 4, 6)
	if _, err := New(Config{Paths: two, Pools: []int{4, 6}}); err == nil || !strings.Contains(err.Error(), "create them as empty directories") {
		t.Fatalf("a new pool whose directories do not exist: %v, want refused with advice", err)
	}
	for _, p := range two[4:] {
		if err := os.MkdirAll(p, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	e, err = New(Config{Paths: two, Pools: []int{4, 6}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.DeploymentID() != dep || len(e.pools) != 2 {
		t.Fatalf("after expansion: deployment %s, %d pools; want %s, 2", e.DeploymentID(), len(e.pools), dep)
	}
	for _, path := range two[4:] {
		f, err := drive.PeekFormat(path)
		if err != nil || f.DeploymentID != dep || f.PoolID == "" || f.PoolID != e.pools[1].id {
			t.Fatalf("new drive %s: format %+v, %v", path, f, err)
		}
	}
	if _, err := e.BucketInfo(ctx, "bucket"); err != nil {
		t.Fatalf("bucket after expansion: %v", err)
	}
	if data, _, err := e.ReadConfig(ctx, "doc"); err != nil || string(data) != "kept" {
		t.Fatalf("config after expansion: %q, %v", data, err)
	}
	for i := 0; i < 20; i++ {
		key := fmt.Sprintf("old/%d", i)
		if got, err := getAll(t, e, key, GetOptions{}); err != nil || string(got) != key {
			t.Fatalf("GET %s after expansion: %q, %v", key, got, err)
		}
	}
	newPool := 0
	for i := 0; i < 60; i++ {
		key := fmt.Sprintf("new/%d", i)
		if _, err := e.PutObject(ctx, "bucket", key, strings.NewReader(key), int64(len(key)), PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if e.heldBy(holdersOf(t, e, key)) == 1 {
			newPool++
		}
	}
	if newPool == 0 {
		t.Fatal("no new key went to the new pool")
	}
}

// A pool formatted for another deployment is refused, naming it; so is a
// changed pool order.
func TestPoolsRefuseForeignAndReordered(t *testing.T) {
	ctx := context.Background()
	rootA, rootB := t.TempDir(), t.TempDir()
	a, err := New(Config{Paths: poolPaths(rootA, 4)})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	b, err := New(Config{Paths: poolPaths(rootB, 4)})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	_, err = New(Config{Paths: append(poolPaths(rootA, 4), poolPaths(rootB, 4)...), Pools: []int{4, 4}})
	if err == nil || !strings.Contains(err.Error(), "belongs to deployment") {
		t.Fatalf("a pool of another deployment: %v, want refused", err)
	}

	root := t.TempDir()
	e, err := New(Config{Paths: poolPaths(root, 4, 4), Pools: []int{4, 4}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	e.Close()
	paths := poolPaths(root, 4, 4)
	swapped := append(append([]string{}, paths[4:]...), paths[:4]...)
	// Swapped pools are still each one pool: allowed (a pool is its id).
	e, err = New(Config{Paths: swapped, Pools: []int{4, 4}})
	if err != nil {
		t.Fatalf("pools given in another order: %v", err)
	}
	e.Close()
	mixed := append(append([]string{}, paths[:2]...), paths[4:6]...)
	mixed = append(mixed, paths[2:4]...)
	mixed = append(mixed, paths[6:]...)
	if _, err = New(Config{Paths: mixed, Pools: []int{4, 4}}); err == nil {
		t.Fatal("drives of two pools mixed in one argument: started")
	}
}

// A deployment formatted before pools, as one pool of all its drives,
// started with the same drives written as two arguments stays one pool.
func TestPoolsLegacyOnePool(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	paths := poolPaths(root, 4, 4)
	e, err := New(Config{Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	e.Close()
	// Make the formats look like a release before pools: no pool id.
	for _, p := range paths {
		d, err := drive.OpenLocal(p, drive.LocalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f, err := d.ReadFormat(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f.PoolID = ""
		if err := d.WriteFormat(ctx, f); err != nil {
			t.Fatal(err)
		}
		d.Close()
	}
	e, err = New(Config{Paths: paths, Pools: []int{4, 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if len(e.pools) != 1 || len(e.sets[0].drives) != 8 {
		t.Fatalf("legacy deployment: %d pools, sets of %d; want 1 pool, sets of 8", len(e.pools), len(e.sets[0].drives))
	}
}

func TestMergeLegacyPools(t *testing.T) {
	f := func(setCount, setSize int, id string) drive.Format {
		return drive.Format{SetCount: setCount, SetSize: setSize, PoolID: id}
	}
	cases := []struct {
		groups []int
		first  drive.Format
		err    error
		want   []int
	}{
		{[]int{4, 4}, f(1, 8, ""), nil, []int{8}},
		{[]int{4, 4, 8}, f(2, 4, ""), nil, []int{8, 8}},
		{[]int{4, 4}, f(1, 4, ""), nil, []int{4, 4}},
		{[]int{4, 4}, f(1, 8, "x"), nil, []int{4, 4}},
		{[]int{4, 4}, f(1, 6, ""), nil, []int{4, 4}},
		{[]int{4, 4}, f(0, 0, ""), nil, []int{4, 4}},
		{[]int{4, 4}, f(-1, 8, ""), nil, []int{4, 4}},
		{[]int{4}, f(1, 8, ""), nil, []int{4}},
		{[]int{4, 4}, f(1, 8, ""), drive.ErrUnformatted, []int{4, 4}},
	}
	for _, c := range cases {
		n := 0
		for _, g := range c.groups {
			n += g
		}
		formats := make([]drive.Format, n)
		errs := make([]error, n)
		for i := range formats {
			formats[i], errs[i] = c.first, c.err
		}
		got := mergeLegacyPools(c.groups, formats, errs)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("mergeLegacyPools(%v, %+v) = %v, want %v", c.groups, c.first, got, c.want)
		}
	}
	for _, g := range [][]int{{0, 4}, {-1, 5}, {3, 3}} {
		if checkGroups(g, 4) == nil {
			t.Errorf("checkGroups(%v, 4) accepted", g)
		}
	}
}

// Concurrent first writes of the same keys: every key ends in exactly one
// pool, and a write either succeeds or is refused as busy (retryable).
func TestPoolsConcurrentFirstWrites(t *testing.T) {
	root := t.TempDir()
	e, err := New(Config{Paths: poolPaths(root, 4, 4), Pools: []int{4, 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	const keys, writers = 20, 4
	var wg sync.WaitGroup
	errs := make(chan error, keys*writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < keys; k++ {
				body := fmt.Sprintf("w%d-k%d", w, k)
				_, err := e.PutObject(ctx, "bucket", fmt.Sprintf("c/%d", k), strings.NewReader(body), int64(len(body)), PutOptions{})
				if err != nil && !errors.Is(err, ErrBusy) {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent PUT: %v (only success or ErrBusy are allowed)", err)
	}
	for k := 0; k < keys; k++ {
		key := fmt.Sprintf("c/%d", k)
		if n := poolsHolding(holdersOf(t, e, key)); n != 1 {
			t.Fatalf("%s is in %d pools", key, n)
		}
		got, err := getAll(t, e, key, GetOptions{})
		if err != nil || !strings.HasSuffix(string(got), fmt.Sprintf("-k%d", k)) {
			t.Fatalf("GET %s = %q, %v", key, got, err)
		}
	}
}

// A decommission moves every version of every key (delete markers,
// multipart objects, encrypted-looking data included as stored) off the
// pool, keeping ids, times and ETags, and completes once the pool is
// empty; new keys do not go to the draining pool.
func TestPoolsDecommission(t *testing.T) {
	root := t.TempDir()
	e, err := New(Config{Paths: poolPaths(root, 4, 6), Pools: []int{4, 6}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	for _, b := range []string{"bucket", "vbucket"} {
		if err := e.MakeBucket(ctx, b, BucketOptions{Owner: "o"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.SetBucketConfig(ctx, "vbucket", BucketConfigVersioning, VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	type version struct {
		id, etag string
		mod      int64
		body     []byte
		marker   bool
	}
	want := map[string][]version{} // bucket/key -> versions, newest first
	for i := 0; i < 40; i++ {
		key := fmt.Sprintf("k/%02d", i)
		body := bytes.Repeat([]byte{byte(i)}, 100+i*4000)
		oi, err := e.PutObject(ctx, "bucket", key, bytes.NewReader(body), int64(len(body)), PutOptions{UserMeta: map[string]string{"n": key}})
		if err != nil {
			t.Fatal(err)
		}
		want["bucket/"+key] = []version{{id: oi.VersionID, etag: oi.ETag, mod: oi.ModTime.UnixNano(), body: body}}
	}
	for i := 0; i < 10; i++ {
		key := fmt.Sprintf("v/%02d", i)
		var vs []version
		for j := 0; j < 3; j++ {
			body := bytes.Repeat([]byte{byte(i*10 + j)}, 1000+j*50000)
			oi, err := e.PutObject(ctx, "vbucket", key, bytes.NewReader(body), int64(len(body)), PutOptions{})
			if err != nil {
				t.Fatal(err)
			}
			vs = append([]version{{id: oi.VersionID, etag: oi.ETag, mod: oi.ModTime.UnixNano(), body: body}}, vs...)
		}
		if i%3 == 0 {
			res, err := e.DeleteObjectVersion(ctx, "vbucket", key, DeleteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			vs = append([]version{{id: res.VersionID, marker: true}}, vs...)
		}
		want["vbucket/"+key] = vs
	}
	// A multipart object keeps its parts and ETag.
	id, err := e.NewMultipartUpload(ctx, "bucket", "mp", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var cparts []CompletePart
	var mpBody []byte
	for n := 1; n <= 2; n++ {
		part := bytes.Repeat([]byte{byte(n)}, 5<<20)
		pi, err := e.PutObjectPart(ctx, "bucket", "mp", id, n, bytes.NewReader(part), int64(len(part)), PartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cparts = append(cparts, CompletePart{Number: n, ETag: pi.ETag})
		mpBody = append(mpBody, part...)
	}
	mp, err := e.CompleteMultipartUpload(ctx, "bucket", "mp", id, cparts, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want["bucket/mp"] = []version{{id: mp.VersionID, etag: mp.ETag, mod: mp.ModTime.UnixNano(), body: mpBody}}

	// Encrypted versions move as stored: no key is needed to move them,
	// and they open with their own key afterwards.
	keys := &testKeys{}
	encrypted := map[string][]byte{}
	for i, n := range []int{10, 300 << 10, 3<<20 + 5} {
		name := fmt.Sprintf("enc/%d", i)
		body := recognisable(n)
		if _, err := e.PutObject(ctx, "bucket", name, bytes.NewReader(body), int64(n), PutOptions{Encryption: keys.encryption(name, false)}); err != nil {
			t.Fatal(err)
		}
		encrypted[name] = body
	}

	if _, err := e.StartDecommission(ctx, "1"); err != nil {
		t.Fatal(err)
	}
	if p := e.pickPool(ctx); p.index != 1 {
		t.Fatalf("a new key went to pool %d while pool 1 is drained", p.index+1)
	}
	// The loop runs a pass every few seconds; wait for it to complete.
	deadline := time.Now().Add(2 * time.Minute)
	var st []DecomStatus
	for {
		if st, err = e.DecommissionStatus(ctx); err != nil {
			t.Fatal(err)
		}
		if len(st) == 1 && st[0].State == DecomComplete {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("decommission not complete: %+v", st)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st[0].Failed != 0 || st[0].Versions == 0 {
		t.Fatalf("decommission status %+v", st[0])
	}
	for bk, vs := range want {
		bucket, key, _ := strings.Cut(bk, "/")
		found, err := e.keyHolders(ctx, bucket, key)
		if err != nil || found[0] != 0 || found[1] == 0 {
			t.Fatalf("%s after the decommission: holders %v, %v", bk, found, err)
		}
		for i, v := range vs {
			opts := GetOptions{VersionID: v.id}
			if bucket == "bucket" {
				opts.VersionID = ""
			}
			info, err := e.HeadObject(ctx, bucket, key, opts)
			if v.marker {
				if !errors.Is(err, ErrMethodNotAllowed) {
					t.Fatalf("%s delete marker %s: %v", bk, v.id, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s version %d (%s): %v", bk, i, v.id, err)
			}
			if info.ETag != v.etag || info.ModTime.UnixNano() != v.mod || info.VersionID != v.id {
				t.Fatalf("%s version %s: etag %s time %d id %s; want %s %d %s", bk, v.id, info.ETag, info.ModTime.UnixNano(), info.VersionID, v.etag, v.mod, v.id)
			}
			got, err := getAll(t, e, key, opts)
			if bucket != "bucket" {
				rd, gerr := e.GetObject(ctx, bucket, key, opts)
				if gerr != nil {
					t.Fatal(gerr)
				}
				got, err = io.ReadAll(rd)
				rd.Close()
			}
			if err != nil || !bytes.Equal(got, v.body) {
				t.Fatalf("%s version %s: %d bytes, %v; want the %d written", bk, v.id, len(got), err, len(v.body))
			}
		}
	}
	for name, body := range encrypted {
		if found := holdersOf(t, e, name); found[0] != 0 || found[1] == 0 {
			t.Fatalf("%s after the decommission: holders %v", name, found)
		}
		got, err := getAll(t, e, name, GetOptions{Unseal: keys.unseal})
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("encrypted %s after the move: %d bytes, %v; want the %d written", name, len(got), err, len(body))
		}
	}
	if info, err := e.HeadObject(ctx, "bucket", "k/01", GetOptions{}); err != nil || info.UserMeta["n"] != "k/01" {
		t.Fatalf("user metadata after the move: %+v, %v", info.UserMeta, err)
	}
}

// A pool left off the command line before its decommission completed is
// refused; after, it may go.
func TestPoolsRemoval(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	paths := poolPaths(root, 4, 4)
	e, err := New(Config{Paths: paths, Pools: []int{4, 4}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		key := fmt.Sprintf("k%d", i)
		if _, err := e.PutObject(ctx, "bucket", key, strings.NewReader(key), int64(len(key)), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()
	if _, err := New(Config{Paths: paths[4:]}); err == nil || !strings.Contains(err.Error(), "not on the command line") {
		t.Fatalf("a pool left off without a decommission: %v, want refused", err)
	}
	e, err = New(Config{Paths: paths, Pools: []int{4, 4}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.StartDecommission(ctx, "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.StartDecommission(ctx, "2"); err == nil {
		t.Fatal("both pools drained at once")
	}
	for {
		st, err := e.DecommissionStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st[0].State == DecomComplete {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.Close()
	e, err = New(Config{Paths: paths[4:]})
	if err != nil {
		t.Fatalf("the decommissioned pool removed: %v", err)
	}
	defer e.Close()
	if _, err := e.BucketInfo(ctx, "bucket"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		key := fmt.Sprintf("k%d", i)
		if got, err := getAll(t, e, key, GetOptions{}); err != nil || string(got) != key {
			t.Fatalf("GET %s after the pool's removal: %q, %v", key, got, err)
		}
	}
}
