package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

const (
	testS3User = "bench-root"
	testS3Pass = "bench-root-secret"
)

// testServer is a real shardstore process on 127.0.0.1 with four drives.
type testServer struct {
	endpoint string
	pid      int
}

// lockedBuffer collects the server's stderr for failure messages.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startShardstore builds the real binary and runs it until the test ends.
func startShardstore(t *testing.T) testServer {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "shardstore")
	build := exec.Command("go", "build", "-o", bin, "./cmd/shardstore")
	build.Dir = moduleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building shardstore: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "server", "--address", "127.0.0.1:0", "--console-address", "", filepath.Join(dir, "d{1...4}"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // not left running if the test binary is killed
	// The test's drives are directories in a temp dir, usually on the
	// root filesystem, which the server refuses unless told it is meant.
	cmd.Env = append(os.Environ(), "SHARDSTORE_ROOT_USER="+testS3User, "SHARDSTORE_ROOT_PASSWORD="+testS3Pass,
		"SHARDSTORE_ALLOW_ROOT_DRIVES=1")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("server did not stop within 20s of SIGTERM\n%s", stderr)
		}
	})
	endpoints := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if ep, ok := strings.CutPrefix(sc.Text(), "S3 endpoint: "); ok {
				endpoints <- ep
				break
			}
		}
		for sc.Scan() { // keep draining so the server never blocks on stdout
		}
	}()
	var ep string
	select {
	case ep = <-endpoints:
	case <-exited:
		t.Fatalf("server exited before listening: %v\n%s", waitErr, stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("no endpoint line within 30s\n%s", stderr)
	}
	if !strings.HasPrefix(ep, "http://127.0.0.1:") {
		t.Fatalf("server listens on %q, want 127.0.0.1 only", ep)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(ep + "/shardstore/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready within 30s (%v)\n%s", err, stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return testServer{endpoint: ep, pid: cmd.Process.Pid}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", wd)
		}
	}
}

func testEnv(key string) string {
	switch key {
	case "SHARDSTORE_ROOT_USER":
		return testS3User
	case "SHARDSTORE_ROOT_PASSWORD":
		return testS3Pass
	}
	return ""
}

// runS3 runs the command with the test server's credentials from the
// (fake) environment and returns stdout, stderr and the error.
func runS3(t *testing.T, bar bool, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := runS3Command(ctx, args, CLI{Stdout: &out, Stderr: &errb, ProgressBar: bar}, testEnv)
	return out.String(), errb.String(), err
}

func runS3JSON(t *testing.T, args ...string) S3Report {
	t.Helper()
	out, stderr, err := runS3(t, false, append(args, "-json")...)
	if err != nil {
		t.Fatalf("bench s3 %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, out, stderr)
	}
	var rep S3Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}
	return rep
}

func rootClient(endpoint string) *s3.Client {
	return s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(testS3User, testS3Pass, ""), UsePathStyle: true})
}

// countObjects lists what is left under prefix in bucket.
func countObjects(t *testing.T, c *s3.Client, bucket, prefix string) int {
	t.Helper()
	out, err := c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	if err != nil {
		t.Fatalf("list %s/%s: %v", bucket, prefix, err)
	}
	return len(out.Contents)
}

// checkOp holds one operation row to what must be true of any honest run.
func checkOp(t *testing.T, phase string, op S3OpResult, size int, seconds float64) {
	t.Helper()
	if op.Count < 1 || op.Errors != 0 {
		t.Errorf("%s %s: %d ok, %d errors; want some and none", phase, op.Op, op.Count, op.Errors)
	}
	if op.Bytes != op.Count*int64(size) {
		t.Errorf("%s %s: %d bytes for %d ops of %d", phase, op.Op, op.Bytes, op.Count, size)
	}
	wantOps := float64(op.Count) / seconds
	if d := op.OpsPerSec - wantOps; d > 1e-6*wantOps || -d > 1e-6*wantOps {
		t.Errorf("%s %s: %.3f ops/s, want count/seconds %.3f", phase, op.Op, op.OpsPerSec, wantOps)
	}
	l := op.Latency
	if !(0 < l.MinMS && l.MinMS <= l.P50MS && l.P50MS <= l.P90MS && l.P90MS <= l.P99MS && l.P99MS <= l.MaxMS) {
		t.Errorf("%s %s: latencies not ordered or zero: %+v", phase, op.Op, l)
	}
	// No single op can outlast the phase plus its grace period.
	if l.MaxMS > seconds*1000+1 {
		t.Errorf("%s %s: max latency %.1fms beyond the %.2fs phase", phase, op.Op, l.MaxMS, seconds)
	}
	switch op.Op {
	case "GET":
		if op.TTFB == nil {
			t.Fatalf("%s GET: no TTFB", phase)
		}
		if !(0 < op.TTFB.MinMS && op.TTFB.P50MS <= op.TTFB.P99MS && op.TTFB.MaxMS <= l.MaxMS && op.TTFB.MinMS <= l.MinMS) {
			t.Errorf("%s GET: TTFB %+v not within latency %+v", phase, *op.TTFB, l)
		}
	case "PUT":
		if op.TTFB != nil {
			t.Errorf("%s PUT: has a TTFB", phase)
		}
	default:
		t.Errorf("%s: unknown op %q", phase, op.Op)
	}
}

func TestS3AgainstShardstore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the real server; skipped in -short")
	}
	srv := startShardstore(t)
	client := rootClient(srv.endpoint)
	common := []string{"-endpoint", srv.endpoint, "-concurrency", "3", "-pid", fmt.Sprint(srv.pid), "-verify"}

	for _, c := range []struct {
		mode   string
		size   int
		extra  []string
		phases []string
		ops    map[string][]string
	}{
		{"put", 16 << 10, nil, []string{"put"}, map[string][]string{"put": {"PUT"}}},
		{"get", 200 << 10, []string{"-objects", "5"}, []string{"get"}, map[string][]string{"get": {"GET"}}},
		{"mixed", 8 << 10, []string{"-get-fraction", "0.7"}, []string{"mixed"}, map[string][]string{"mixed": {"PUT", "GET"}}},
		{"small", 0, nil, []string{"put", "get"}, map[string][]string{"put": {"PUT"}, "get": {"GET"}}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			args := append(append([]string{}, common...), "-mode", c.mode, "-duration", "700ms", "-bucket", "b-"+c.mode)
			if c.size > 0 {
				args = append(args, "-size", fmt.Sprint(c.size))
			}
			rep := runS3JSON(t, append(args, c.extra...)...)
			size := c.size
			if size == 0 {
				size = DefaultS3SmallSize
			}
			if rep.Mode != S3Mode(c.mode) || rep.Size != size || rep.Concurrency != 3 || !slices.Equal(rep.PIDs, []int{srv.pid}) || rep.Seed == 0 {
				t.Errorf("report describes a different run: %+v", rep)
			}
			if len(rep.Phases) != len(c.phases) {
				t.Fatalf("%d phases, want %v", len(rep.Phases), c.phases)
			}
			written := int64(0)
			for i, ph := range rep.Phases {
				if ph.Name != c.phases[i] {
					t.Errorf("phase %d is %q, want %q", i, ph.Name, c.phases[i])
				}
				// The phase issues ops for 700ms and lets the last finish.
				if ph.Seconds < 0.7 || ph.Seconds > 30 {
					t.Errorf("%s: %.2fs, want 0.7s plus at most one op", ph.Name, ph.Seconds)
				}
				if len(ph.Ops) != len(c.ops[ph.Name]) {
					t.Fatalf("%s: ops %+v, want %v", ph.Name, ph.Ops, c.ops[ph.Name])
				}
				var sum int64
				for j, op := range ph.Ops {
					if op.Op != c.ops[ph.Name][j] {
						t.Errorf("%s: op %d is %s, want %s", ph.Name, j, op.Op, c.ops[ph.Name][j])
					}
					checkOp(t, ph.Name, op, size, ph.Seconds)
					sum += op.Count
					if op.Op == "PUT" {
						written += op.Count
					}
				}
				if ph.Count != sum || !ph.Complete || ph.FirstError != "" {
					t.Errorf("%s: count %d (ops sum %d), complete %v, error %q", ph.Name, ph.Count, sum, ph.Complete, ph.FirstError)
				}
				if ph.ServerCPUSeconds <= 0 || ph.ServerCPUPerGiB <= 0 || ph.ServerCPUPerOpMS <= 0 {
					t.Errorf("%s: server CPU %+v: the server did work, it must show", ph.Name, ph)
				}
				gib := float64(ph.Bytes) / (1 << 30)
				if d := ph.ServerCPUPerGiB*gib - ph.ServerCPUSeconds; d > 1e-9 || d < -1e-9 {
					t.Errorf("%s: %.3f s/GiB x %.6f GiB != %.3f s", ph.Name, ph.ServerCPUPerGiB, gib, ph.ServerCPUSeconds)
				}
			}
			if c.mode == "mixed" {
				ph := rep.Phases[0]
				gets := float64(ph.Ops[1].Count) / float64(ph.Count)
				if gets < 0.4 || gets > 0.95 {
					t.Errorf("mixed: %.2f of ops are GETs, asked for 0.7", gets)
				}
			}
			written += int64(rep.Objects)
			if want := fmt.Sprintf("deleted %d objects and bucket b-%s", written, c.mode); rep.Cleanup != want {
				t.Errorf("cleanup %q, want %q", rep.Cleanup, want)
			}
			if _, err := client.HeadBucket(context.Background(), &s3.HeadBucketInput{Bucket: aws.String("b-" + c.mode)}); err == nil {
				t.Errorf("bucket b-%s created by the run is still there", c.mode)
			}
		})
	}

	t.Run("exact ops, existing bucket kept, table and progress bar", func(t *testing.T) {
		if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String("mine")}); err != nil {
			t.Fatal(err)
		}
		out, stderr, err := runS3(t, true, "-endpoint", srv.endpoint, "-bucket", "mine", "-mode", "put",
			"-size", "1KiB", "-ops", "25", "-concurrency", "4", "-keep")
		if err != nil {
			t.Fatalf("%v\n%s\n%s", err, out, stderr)
		}
		for _, want := range []string{"S3 load: mode put, 1 KiB objects, concurrency 4, 25 ops per phase",
			"PHASE", "\nput    PUT  25   0 ", "cleanup: kept: objects under s3://mine/shardstore-bench/"} {
			if !strings.Contains(out, want) {
				t.Errorf("table lacks %q:\n%s", want, out)
			}
		}
		if !strings.Contains(stderr, "bench s3 put") {
			t.Errorf("no progress bar on stderr: %q", stderr)
		}
		if n := countObjects(t, client, "mine", "shardstore-bench/"); n != 25 {
			t.Errorf("-keep left %d objects, want 25", n)
		}
		// Without -keep a later run removes only its own objects and
		// leaves the bucket it did not create.
		rep := runS3JSON(t, "-endpoint", srv.endpoint, "-bucket", "mine", "-mode", "small", "-ops", "10", "-concurrency", "2")
		if rep.Phases[0].Count != 10 || rep.Phases[1].Count != 10 || !rep.Phases[0].Complete || !rep.Phases[1].Complete {
			t.Errorf("small -ops 10: phases %+v", rep.Phases)
		}
		if rep.Cleanup != "deleted 10 objects" {
			t.Errorf("cleanup %q", rep.Cleanup)
		}
		if n := countObjects(t, client, "mine", "shardstore-bench/"); n != 25 {
			t.Errorf("%d objects left, want the 25 kept earlier", n)
		}
	})

	t.Run("list, then list again what it kept", func(t *testing.T) {
		rep := runS3JSON(t, "-endpoint", srv.endpoint, "-bucket", "lst", "-mode", "list", "-objects", "250",
			"-page-size", "40", "-listings", "2", "-concurrency", "4", "-keep", "-pid", fmt.Sprint(srv.pid))
		if rep.Mode != S3List || rep.Size != 1 || rep.Objects != 250 || rep.Listings != 2 || rep.PageSize != 40 {
			t.Errorf("report describes a different run: %+v", rep)
		}
		if len(rep.Phases) != 2 || rep.Phases[0].Name != "put" || rep.Phases[1].Name != "list" {
			t.Fatalf("phases %+v, want put then list", rep.Phases)
		}
		if put := rep.Phases[0]; put.Count != 250 || !put.Complete {
			t.Errorf("put phase wrote %d keys (complete %v), want 250", put.Count, put.Complete)
		}
		checkListPhase(t, rep.Phases[1], 250, 40, 2)
		if !strings.HasPrefix(rep.Cleanup, "kept: ") {
			t.Errorf("cleanup %q with -keep", rep.Cleanup)
		}
		// Listing what the first run kept writes and deletes nothing.
		again := runS3JSON(t, "-endpoint", srv.endpoint, "-bucket", "lst", "-mode", "list", "-prefix", rep.Prefix,
			"-page-size", "1000", "-listings", "1", "-pid", fmt.Sprint(srv.pid))
		if len(again.Phases) != 1 || again.Objects != 0 || again.Prefix != rep.Prefix {
			t.Fatalf("with -prefix: %+v, want one list phase of the kept prefix", again)
		}
		checkListPhase(t, again.Phases[0], 250, 1000, 1)
		if !strings.HasPrefix(again.Cleanup, "nothing written") {
			t.Errorf("cleanup %q with -prefix", again.Cleanup)
		}
		if n := countObjects(t, client, "lst", rep.Prefix); n != 250 {
			t.Errorf("%d objects under the kept prefix after listing it, want 250", n)
		}
	})

	t.Run("wrong secret fails fast", func(t *testing.T) {
		out, _, err := runS3(t, false, "-endpoint", srv.endpoint, "-access-key", testS3User, "-secret-key", "wrong",
			"-mode", "put", "-size", "1KiB", "-duration", "20s", "-bucket", "mine")
		if err == nil || !strings.Contains(err.Error(), "403") {
			t.Fatalf("got %v, want a 403 from the bucket check\n%s", err, out)
		}
	})

	t.Run("pid must exist", func(t *testing.T) {
		_, _, err := runS3(t, false, "-endpoint", srv.endpoint, "-pid", "999999999", "-ops", "1")
		if err == nil || !strings.Contains(err.Error(), "pid 999999999") {
			t.Errorf("got %v, want an error about the pid", err)
		}
	})
}

// checkListPhase holds a list phase to what an honest run of listings
// listings of keys keys in pages of pageSize must show.
func checkListPhase(t *testing.T, ph S3Phase, keys, pageSize, listings int) {
	t.Helper()
	pages := (keys + pageSize - 1) / pageSize
	if len(ph.Listings) != listings || !ph.Complete || ph.FirstError != "" {
		t.Fatalf("list phase: %d listings (complete %v, error %q), want %d", len(ph.Listings), ph.Complete, ph.FirstError, listings)
	}
	sum := 0.0
	for i, ls := range ph.Listings {
		if ls.Keys != keys || ls.Pages != pages || ls.Seconds <= 0 || ls.KeysPerSec <= 0 {
			t.Errorf("listing %d: %+v, want %d keys in %d pages", i, ls, keys, pages)
		}
		sum += ls.Seconds
	}
	if len(ph.Ops) != 1 || ph.Ops[0].Op != "LIST" || ph.Ops[0].Count != int64(pages*listings) || ph.Count != ph.Ops[0].Count {
		t.Errorf("list phase ops %+v, want %d LIST pages", ph.Ops, pages*listings)
	}
	if want := float64(keys*listings) / ph.Seconds; ph.KeysPerSec <= 0 || ph.KeysPerSec > want*1.000001 || ph.Seconds < sum {
		t.Errorf("list phase: %.0f keys/s over %.3f s (listings took %.3f s), want %.0f", ph.KeysPerSec, ph.Seconds, sum, want)
	}
	// A small listing can take less than one 10 ms CPU tick of the
	// server: the figures need only be consistent.
	if want := ph.ServerCPUSeconds * 1000 / float64(ph.Count); ph.ServerCPUSeconds < 0 || math.Abs(ph.ServerCPUPerOpMS-want) > 1e-9 {
		t.Errorf("list phase: server CPU %.3f s but %.3f ms per page of %d", ph.ServerCPUSeconds, ph.ServerCPUPerOpMS, ph.Count)
	}
}

// TestS3ListRefusesABrokenListing: a server whose listing repeats or
// drops keys fails list mode instead of reporting its speed.
func TestS3ListRefusesABrokenListing(t *testing.T) {
	for _, c := range []struct {
		name, keys, want string
	}{
		{"out of order", "<Contents><Key>p/b</Key></Contents><Contents><Key>p/a</Key></Contents>", "not in ascending order"},
		{"repeated", "<Contents><Key>p/a</Key></Contents><Contents><Key>p/a</Key></Contents>", "not in ascending order"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.Method == http.MethodHead:
					w.WriteHeader(http.StatusOK)
				case r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2":
					_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>b</Name><IsTruncated>false</IsTruncated>`+
						c.keys+`</ListBucketResult>`)
				default:
					http.Error(w, "unexpected "+r.Method+" "+r.URL.String(), http.StatusBadRequest)
				}
			}))
			defer fake.Close()
			out, _, err := runS3(t, false, "-endpoint", fake.URL, "-bucket", "b", "-mode", "list", "-prefix", "p/")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q\n%s", err, c.want, out)
			}
			if !strings.Contains(out, "list   LIST") || !strings.Contains(out, "cleanup: nothing written") {
				t.Errorf("table lacks the list row or the cleanup:\n%s", out)
			}
		})
	}
}

// TestS3StopsAfterMaxErrors runs against a fake endpoint on 127.0.0.1
// that accepts the bucket check but refuses every PUT: the phase must
// stop at -max-errors, still print what it measured, and return the
// first error.
func TestS3StopsAfterMaxErrors(t *testing.T) {
	var puts atomic.Int64
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodHead:
			w.WriteHeader(http.StatusOK)
		case r.Method == http.MethodPut:
			puts.Add(1)
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>no</Message></Error>`)
		case r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2":
			_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>b</Name><IsTruncated>false</IsTruncated></ListBucketResult>`)
		default:
			http.Error(w, "unexpected "+r.Method+" "+r.URL.String(), http.StatusBadRequest)
		}
	}))
	defer fake.Close()
	start := time.Now()
	out, _, err := runS3(t, false, "-endpoint", fake.URL, "-bucket", "b", "-size", "1KiB",
		"-concurrency", "2", "-duration", "30s", "-max-errors", "3")
	if err == nil || !strings.Contains(err.Error(), "AccessDenied") || !strings.Contains(err.Error(), "stopped after") {
		t.Fatalf("got %v, want a stop after AccessDenied\n%s", err, out)
	}
	if time.Since(start) > 15*time.Second {
		t.Errorf("took %v to stop on errors", time.Since(start))
	}
	// Both workers may each have one PUT in flight when the third fails.
	if n := puts.Load(); n < 3 || n > 4 {
		t.Errorf("%d PUTs reached the server, want 3 or 4", n)
	}
	for _, want := range []string{"put    PUT", "failed; first: PUT shardstore-bench/", "cleanup: deleted 0 objects"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestS3Credentials(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		env          func(string) string
		access, secr string
	}{
		{env(), defaultS3Key, defaultS3Key},
		{env("SHARDSTORE_ROOT_USER", "u", "SHARDSTORE_ROOT_PASSWORD", "p"), "u", "p"},
		{env("AWS_ACCESS_KEY_ID", "ak", "AWS_SECRET_ACCESS_KEY", "sk", "SHARDSTORE_ROOT_USER", "u",
			"SHARDSTORE_ROOT_PASSWORD", "p"), "ak", "sk"},
	} {
		a, s, src := s3Credentials(c.env)
		if a != c.access || s != c.secr || src == "" {
			t.Errorf("got %q %q (%s), want %q %q", a, s, src, c.access, c.secr)
		}
	}
}

// TestS3PIDList: -pid takes every node of a local cluster.
func TestS3PIDList(t *testing.T) {
	f := &s3Flags{pids: "12, 34,56", mode: "put", accessKey: "a", secretKey: "b", concurrency: 1, endpoint: "http://127.0.0.1:1", maxErrors: 1}
	opts, err := f.options(func(string) string { return "" })
	if err != nil || !slices.Equal(opts.PIDs, []int{12, 34, 56}) {
		t.Fatalf("-pid 12, 34,56: %v, %v", opts.PIDs, err)
	}
}

// TestS3SSEFlag: -sse takes none, s3, kms and kms:KEYID (a key id may
// hold colons, as an ARN does) and refuses anything else.
func TestS3SSEFlag(t *testing.T) {
	for _, c := range []struct {
		in   string
		want S3SSE
	}{
		{"", S3SSE{}},
		{"none", S3SSE{}},
		{"s3", S3SSE{Algorithm: "AES256"}},
		{"S3", S3SSE{Algorithm: "AES256"}},
		{"kms", S3SSE{Algorithm: "aws:kms"}},
		{"kms:my-key", S3SSE{Algorithm: "aws:kms", KMSKeyID: "my-key"}},
		{"kms:arn:aws:kms:us-east-1:1:key/k", S3SSE{Algorithm: "aws:kms", KMSKeyID: "arn:aws:kms:us-east-1:1:key/k"}},
	} {
		got, err := ParseS3SSE(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseS3SSE(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		f := &s3Flags{sse: c.in, mode: "put", accessKey: "a", secretKey: "b", concurrency: 1, endpoint: "http://127.0.0.1:1", maxErrors: 1}
		if opts, err := f.options(func(string) string { return "" }); err != nil || opts.SSE != c.want {
			t.Errorf("-sse %q: %+v, %v; want %+v", c.in, opts.SSE, err, c.want)
		}
	}
	for _, in := range []string{"aes", "AES256", "s3:k", "kms:", "none:x", "c", "sse-c"} {
		if got, err := ParseS3SSE(in); err == nil {
			t.Errorf("ParseS3SSE(%q) = %+v, want an error", in, got)
		}
	}
	if err := (&S3Options{AccessKey: "a", SecretKey: "b", SSE: S3SSE{Algorithm: "AES256", KMSKeyID: "k"}}).fill(); err == nil {
		t.Error("fill took a KMS key id with AES256")
	}
}

// TestS3SSEHeaders runs against a fake endpoint that records the
// encryption headers: every PUT (the prepared objects included) carries
// them, no GET does, and the report names them.
func TestS3SSEHeaders(t *testing.T) {
	for _, c := range []struct{ flag, alg, keyID string }{
		{"none", "", ""},
		{"s3", "AES256", ""},
		{"kms:bench-key", "aws:kms", "bench-key"},
	} {
		t.Run(c.flag, func(t *testing.T) {
			var mu sync.Mutex
			var puts, gets int
			var bad []string
			fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				alg, keyID := r.Header.Get("X-Amz-Server-Side-Encryption"), r.Header.Get("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id")
				mu.Lock()
				defer mu.Unlock()
				switch {
				case r.Method == http.MethodHead:
					w.WriteHeader(http.StatusOK)
				case r.Method == http.MethodPut:
					puts++
					if alg != c.alg || keyID != c.keyID {
						bad = append(bad, fmt.Sprintf("PUT with %q %q", alg, keyID))
					}
					_, _ = io.Copy(io.Discard, r.Body)
					w.Header().Set("ETag", `"e"`)
				case r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2":
					_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>b</Name><IsTruncated>false</IsTruncated></ListBucketResult>`)
				case r.Method == http.MethodGet:
					gets++
					if alg != "" || keyID != "" {
						bad = append(bad, fmt.Sprintf("GET with %q %q", alg, keyID))
					}
					w.Header().Set("Content-Length", "1024")
					_, _ = w.Write(make([]byte, 1024))
				default:
					http.Error(w, "unexpected "+r.Method+" "+r.URL.String(), http.StatusBadRequest)
				}
			}))
			defer fake.Close()
			rep := runS3JSON(t, "-endpoint", fake.URL, "-bucket", "b", "-mode", "get", "-size", "1KiB",
				"-concurrency", "1", "-objects", "2", "-ops", "3", "-sse", c.flag)
			mu.Lock()
			defer mu.Unlock()
			if puts != 2 || gets != 3 || len(bad) > 0 {
				t.Errorf("%d PUTs, %d GETs (want 2, 3); wrong headers: %v", puts, gets, bad)
			}
			if got := rep.SSE; (c.alg == "") != (got == nil) || (got != nil && (string(got.Algorithm) != c.alg || got.KMSKeyID != c.keyID)) {
				t.Errorf("report's sse %+v, want %q %q", got, c.alg, c.keyID)
			}
		})
	}
}

func TestS3CommandRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-mode", "delete"},
		{"-access-key", "a"},
		{"-size", "0"},
		{"-concurrency", "0"},
		{"-mode", "mixed", "-get-fraction", "0"},
		{"-mode", "mixed", "-get-fraction", "1.5"},
		{"-endpoint", "ftp://127.0.0.1:1"},
		{"-endpoint", "http://127.0.0.1:1/some/path"},
		{"-max-errors", "0"},
		{"-pid", "abc"},
		{"-pid", "1,x"},
		{"-pid", "0"},
		{"-sse", "aes"},
		{"-sse", "kms:"},
		{"-pid", "999999999"}, // no such process
		{"-prefix", "p/"},     // only list mode reads a kept prefix
		{"-mode", "list", "-ops", "5"},
		{"-mode", "list", "-page-size", "1001"},
		{"-mode", "list", "-listings", "0"},
		{"-mode", "list", "-prefix", "no-slash"},
		{"extra"},
	} {
		// Every one of these must fail before any request: the endpoint
		// is a closed port, so a request would fail differently (and
		// slowly, through the SDK's retries).
		args = append([]string{"-endpoint", "http://127.0.0.1:1"}, args...)
		out, _, err := runS3(t, false, args...)
		if err == nil {
			t.Errorf("%v: no error", args)
		} else if strings.Contains(err.Error(), "connect") {
			t.Errorf("%v: reached the network: %v", args, err)
		}
		if out != "" {
			t.Errorf("%v: printed a report:\n%s", args, out)
		}
	}
	if _, _, err := runS3(t, false, "-h"); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
}
