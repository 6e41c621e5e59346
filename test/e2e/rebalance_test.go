package e2e

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/shardstore/shardstore/test/internal/testfs"
)

// rebalStatus is the part of `admin pool rebalance status --json` the
// tests read.
type rebalStatus struct {
	State string
	Mean  float64
	Pools []struct {
		Pool              int
		Source, Done      bool
		Used              float64
		UsedStart         float64 `json:"used_start"`
		Objects, Versions int64
		Bytes             int64
		Failed            int64
		LastError         string `json:"last_error"`
		Uploads           int64
	}
	Threshold float64
}

func rebalState(t *testing.T, s *server) rebalStatus {
	t.Helper()
	var st rebalStatus
	out := poolsCLI(t, s, "rebalance", "status", "--json")
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("rebalance status: %v\n%s", err, out)
	}
	return st
}

func (st rebalStatus) moved() (n int64) {
	for _, p := range st.Pools {
		n += p.Versions
	}
	return n
}

// TestPoolsRebalanceKilled fills one pool of a single node (each drive
// a tmpfs of its own), expands it with an empty pool of the same
// size, starts a rebalance while a writer and a reader run (every read
// must return the bytes written: the reader sees each key once), kills
// the server (SIGKILL) once objects have moved, restarts it (the
// rebalance resumes from its saved state) and waits for it to complete:
// the pools' used fractions are then within the threshold of the mean,
// both pools hold objects, every acknowledged object and every version
// reads back byte-identical, and a listing names every key once.
func TestPoolsRebalanceKilled(t *testing.T) {
	singleNodeOnly(t, "it starts its own single-node server with two pools on tmpfs mounts")
	dir := t.TempDir()
	// Each drive on a tmpfs of its own, as drives are disks of their own.
	for _, p := range []string{"a", "b"} {
		for i := 1; i <= 4; i++ {
			testfs.Tmpfs(t, filepath.Join(dir, p, fmt.Sprintf("d%d", i)), "shardstore-e2e-pool", 128<<20, "a rebalance needs pools on filesystems of their own")
		}
	}
	a, b := filepath.Join(dir, "a", "d")+"{1...4}", filepath.Join(dir, "b", "d")+"{1...4}"
	s := poolServer(t, dir, a)
	c := s.root()
	createBucket(t, c, "pools")
	createBucket(t, c, "pools-v")
	if _, err := c.PutBucketVersioning(ctx(t), &s3.PutBucketVersioningInput{Bucket: aws.String("pools-v"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	fixed := map[string][]byte{}
	for i := 0; i < 80; i++ {
		key := fmt.Sprintf("fill/%03d", i)
		body := pattern(1<<20+i*97, byte(i))
		if i%10 == 0 {
			body = pattern(100+i, byte(i)) // small: inline
		}
		if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("pools"), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
		fixed[key] = body
	}
	type version struct {
		id, etag string
		body     []byte
	}
	versions := map[string][]version{}
	for i := 0; i < 10; i++ {
		key := fmt.Sprintf("v/%02d", i)
		for j := 0; j < 2; j++ {
			body := pattern(128<<10+i*10+j, byte(i+j))
			out, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("pools-v"), Key: aws.String(key), Body: bytes.NewReader(body)})
			if err != nil {
				t.Fatal(err)
			}
			versions[key] = append(versions[key], version{aws.ToString(out.VersionId), aws.ToString(out.ETag), body})
		}
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = poolServer(t, dir, a, b)

	acked := map[string][]byte{}
	var mu sync.Mutex
	load := func(s *server, prefix string) func() {
		stop := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			r, w, err := loadRun(t, s.root(), fixed, acked, &mu, stop, prefix)
			t.Logf("load %s: %d reads, %d acknowledged writes", prefix, r, w)
			done <- err
		}()
		return func() {
			close(stop)
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}
	stopLoad := load(s, "load1")
	// Slow enough that the kill finds it in the middle (and no faster
	// than that when the load lets up: the adaptive throttle off).
	if out := poolsCLI(t, s, "throttle", "--bandwidth", "2MiB", "--adaptive", "off"); !bytes.Contains(out, []byte("adaptive: off")) {
		t.Fatalf("throttle --adaptive off printed:\n%s", out)
	}
	t.Logf("%s", poolsCLI(t, s, "rebalance", "start", "--threshold", "5%"))
	for deadline := time.Now().Add(60 * time.Second); ; {
		st := rebalState(t, s)
		if st.State == "complete" {
			t.Fatalf("the rebalance completed before the kill (or found nothing to move): %+v", st)
		}
		if st.moved() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no progress within 60s: %+v\n%s", st, s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stopLoad()
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
	s.exitErr = nil

	s = poolServer(t, dir, a, b)
	// The switch survived the kill, and setting a limit leaves it be.
	if out := poolsCLI(t, s, "throttle", "--bandwidth", "0"); !bytes.Contains(out, []byte("adaptive: off")) {
		t.Fatalf("after the restart, throttle --bandwidth 0 printed:\n%s", out)
	}
	if out := poolsCLI(t, s, "throttle", "--adaptive", "ON", "--json"); !bytes.Contains(out, []byte(`"adaptive": "on"`)) || !bytes.Contains(out, []byte(`"bandwidth": 0`)) {
		t.Fatalf("throttle --adaptive ON --json printed:\n%s", out)
	}
	stopLoad = load(s, "load2")
	var st rebalStatus
	for deadline := time.Now().Add(120 * time.Second); ; {
		st = rebalState(t, s)
		if st.State == "complete" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rebalance not complete within 120s after the restart:\n%s", poolsCLI(t, s, "rebalance", "status"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	stopLoad()
	t.Logf("%s", poolsCLI(t, s, "rebalance", "status"))
	for _, p := range st.Pools {
		if p.Used > st.Mean+st.Threshold || p.Used < st.Mean-st.Threshold {
			t.Errorf("pool %d uses %.3f of its capacity, more than %.3f from the mean %.3f", p.Pool, p.Used, st.Threshold, st.Mean)
		}
		if p.Pool == 1 && (!p.Source || p.Objects == 0) {
			t.Errorf("pool 1 was not rebalanced from: %+v", p)
		}
	}
	// Both pools hold shards now.
	for _, p := range []string{"a", "b"} {
		if n := countShardFiles(t, filepath.Join(dir, p, "d1")); n == 0 {
			t.Errorf("pool %s holds no shard files after the rebalance", p)
		}
	}
	mu.Lock()
	for k, body := range acked {
		fixed[k] = body
	}
	mu.Unlock()
	c = s.root()
	for key, body := range fixed {
		g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("pools"), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("GET %s after the rebalance: %v", key, err)
		}
		if got := mustRead(t, g.Body); !bytes.Equal(got, body) {
			t.Fatalf("GET %s after the rebalance: %d bytes differ from the %d written", key, len(got), len(body))
		}
	}
	listed := map[string]int{}
	p := s3.NewListObjectsV2Paginator(s.root(), &s3.ListObjectsV2Input{Bucket: aws.String("pools")})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			listed[aws.ToString(o.Key)]++
		}
	}
	for key := range fixed {
		if listed[key] != 1 {
			t.Errorf("%s listed %d times", key, listed[key])
		}
	}
	c = s.root()
	for key, vs := range versions {
		for _, v := range vs {
			g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("pools-v"), Key: aws.String(key), VersionId: aws.String(v.id)})
			if err != nil {
				t.Fatalf("GET %s version %s after the rebalance: %v", key, v.id, err)
			}
			if aws.ToString(g.ETag) != v.etag {
				t.Fatalf("%s version %s: ETag %s, was %s", key, v.id, aws.ToString(g.ETag), v.etag)
			}
			if got := mustRead(t, g.Body); !bytes.Equal(got, v.body) {
				t.Fatalf("%s version %s differs after the rebalance", key, v.id)
			}
		}
		lv, err := c.ListObjectVersions(ctx(t), &s3.ListObjectVersionsInput{Bucket: aws.String("pools-v"), Prefix: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		if len(lv.Versions) != len(vs) {
			t.Fatalf("%s: %d versions listed, want %d", key, len(lv.Versions), len(vs))
		}
	}
}

// TestPoolsMoveThroughput measures a rebalance or a decommission on
// loopback (docs/performance.md): SHARDSTORE_MOVE_OBJECTS objects of
// SHARDSTORE_MOVE_SIZE bytes (default 65536) fill pool 1 of a single
// node (4 drives, each a tmpfs of its own, or with
// SHARDSTORE_MOVE_FS=ext4 a loop-mounted ext4 image on the temporary
// directory's disk), a second pool like it is added, and SHARDSTORE_MOVE_KIND (rebalance, the default, or
// decommission) runs with SHARDSTORE_MOVE_THROTTLE as its bandwidth
// limit (none by default) and SHARDSTORE_MOVE_ADAPTIVE (on, the
// default, or off) as its adaptive switch. With SHARDSTORE_MOVE_CLIENT=1 a probe client
// PUTs 4 KiB objects and GETs filled ones in turn, for 5 s before and
// all through the move. It logs objects/s, MiB/s and the probe's
// p50/p99. Without SHARDSTORE_MOVE_OBJECTS it is skipped.
func TestPoolsMoveThroughput(t *testing.T) {
	singleNodeOnly(t, "it measures a single node's moves")
	n, _ := strconv.Atoi(os.Getenv("SHARDSTORE_MOVE_OBJECTS"))
	if n <= 0 {
		t.Skip("set SHARDSTORE_MOVE_OBJECTS to a count of objects to measure a rebalance or a decommission")
	}
	size := 65536
	if v, err := strconv.Atoi(os.Getenv("SHARDSTORE_MOVE_SIZE")); err == nil && v > 0 {
		size = v
	}
	kind := os.Getenv("SHARDSTORE_MOVE_KIND")
	if kind == "" {
		kind = "rebalance"
	}
	dir := t.TempDir()
	fsSize := int64(n)*int64(size)/2*3/4 + 96<<20 // a quarter of the coded data, twice, and the index
	for _, p := range []string{"a", "b"} {
		for i := 1; i <= 4; i++ {
			if os.Getenv("SHARDSTORE_MOVE_FS") == "ext4" {
				testfs.LoopExt4(t, filepath.Join(dir, p, fmt.Sprintf("d%d", i)), fsSize)
			} else {
				testfs.Tmpfs(t, filepath.Join(dir, p, fmt.Sprintf("d%d", i)), "shardstore-e2e-pool", fsSize, "a rebalance needs pools on filesystems of their own")
			}
		}
	}
	a, b := filepath.Join(dir, "a", "d")+"{1...4}", filepath.Join(dir, "b", "d")+"{1...4}"
	s := poolServer(t, dir, a)
	c := s.root()
	createBucket(t, c, "pools")
	body := pattern(size, 7)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("pools"), Key: aws.String(fmt.Sprintf("o/%06d", i)), Body: bytes.NewReader(body)}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = poolServer(t, dir, a, b)
	c = s.root()
	if th := os.Getenv("SHARDSTORE_MOVE_THROTTLE"); th != "" {
		poolsCLI(t, s, "throttle", "--bandwidth", th)
	}
	if ad := os.Getenv("SHARDSTORE_MOVE_ADAPTIVE"); ad != "" {
		poolsCLI(t, s, "throttle", "--adaptive", ad)
	}
	t.Logf("throttle: %s", bytes.TrimSpace(poolsCLI(t, s, "throttle")))
	probe := func(stop <-chan struct{}, puts, gets *[]time.Duration) {
		small := pattern(4096, 3)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("probe"), Key: aws.String(fmt.Sprintf("p/%06d", i)), Body: bytes.NewReader(small)}); err != nil {
				t.Errorf("probe PUT: %v", err)
				return
			}
			*puts = append(*puts, time.Since(t0))
			t0 = time.Now()
			g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("pools"), Key: aws.String(fmt.Sprintf("o/%06d", i%n))})
			if err != nil {
				t.Errorf("probe GET: %v", err)
				return
			}
			mustRead(t, g.Body)
			*gets = append(*gets, time.Since(t0))
		}
	}
	quantiles := func(d []time.Duration) string {
		if len(d) == 0 {
			return "none"
		}
		slices.Sort(d)
		return fmt.Sprintf("p50 %v p99 %v (%d)", d[len(d)/2].Round(100*time.Microsecond), d[len(d)*99/100].Round(100*time.Microsecond), len(d))
	}
	client := os.Getenv("SHARDSTORE_MOVE_CLIENT") == "1"
	var basePuts, baseGets, puts, gets []time.Duration
	stop, done := make(chan struct{}), make(chan struct{})
	if client {
		// The probe's objects go to a bucket of their own, which the
		// rebalance moves too; its baseline is taken before.
		createBucket(t, c, "probe")
		go func() { probe(stop, &basePuts, &baseGets); close(done) }()
		time.Sleep(5 * time.Second)
		close(stop)
		<-done
		stop, done = make(chan struct{}), make(chan struct{})
		go func() { probe(stop, &puts, &gets); close(done) }()
	}
	start := time.Now()
	var objects, bytesMoved int64
	if kind == "decommission" {
		poolsCLI(t, s, "decommission", "start", "1")
	} else {
		poolsCLI(t, s, "rebalance", "start")
	}
	for {
		var state string
		if kind == "decommission" {
			state, _ = decomState(t, s)
		} else {
			st := rebalState(t, s)
			state = st.State
			objects, bytesMoved = 0, 0
			for _, p := range st.Pools {
				objects += p.Objects
				bytesMoved += p.Bytes
			}
		}
		if state == "complete" {
			break
		}
		if time.Since(start) > 30*time.Minute {
			t.Fatalf("%s not complete within 30 minutes", kind)
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(start)
	if client {
		close(stop)
		<-done
	}
	var report []byte
	if kind == "decommission" {
		report = poolsCLI(t, s, "decommission", "status")
		var reply struct {
			Decommissions []struct{ Objects, Bytes int64 }
		}
		if err := json.Unmarshal(poolsCLI(t, s, "decommission", "status", "--json"), &reply); err == nil && len(reply.Decommissions) == 1 {
			objects, bytesMoved = reply.Decommissions[0].Objects, reply.Decommissions[0].Bytes
		}
	} else {
		report = poolsCLI(t, s, "rebalance", "status")
	}
	t.Logf("%s (%s drives, throttle %q, client %v) of %d objects of %d bytes: moved %d objects, %.1f MiB in %v: %.0f objects/s, %.1f MiB/s (%d CPUs)\n%s",
		kind, cmp.Or(os.Getenv("SHARDSTORE_MOVE_FS"), "tmpfs"), os.Getenv("SHARDSTORE_MOVE_THROTTLE"), client, n, size, objects, float64(bytesMoved)/(1<<20), took.Round(time.Millisecond),
		float64(objects)/took.Seconds(), float64(bytesMoved)/(1<<20)/took.Seconds(), runtime.NumCPU(), report)
	if client {
		t.Logf("client 4 KiB PUT before: %s; during: %s", quantiles(basePuts), quantiles(puts))
		t.Logf("client GET of a filled object before: %s; during: %s", quantiles(baseGets), quantiles(gets))
	}
}
