package jepsen

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/shardstore/shardstore/test/internal/serverbin"
)

// lastModifiedWithOffset starts bin as a one-node server with
// SHARDSTORE_TEST_CLOCK_OFFSET=offset, PUTs an object and returns its
// LastModified (HEAD) and the server's log.
func lastModifiedWithOffset(t *testing.T, bin string, offset time.Duration) (time.Time, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	cmd := exec.Command(bin, "server", "--address", addr, "--console-address", "", filepath.Join(dir, "d{1...4}"))
	serverbin.DieWithParent(cmd)
	cmd.Env = append(os.Environ(), "SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass,
		"SHARDSTORE_ALLOW_ROOT_DRIVES=1", "SHARDSTORE_CERTS_DIR="+serverbin.NoCertsDir(), clockEnv(offset))
	var log serverbin.SyncBuffer
	cmd.Stderr, cmd.Stdout = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	url := "http://" + addr
	hc := &http.Client{Timeout: 2 * time.Second}
	for i := 0; ; i++ {
		resp, err := hc.Get(url + "/shardstore/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if i > 300 {
			t.Fatalf("server not ready: %v\n%s", err, log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	cl := s3.New(s3.Options{BaseEndpoint: aws.String(url), Region: region, UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(rootUser, rootPass, "")})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("clock")}); err != nil {
		t.Fatalf("create bucket: %v\n%s", err, log.String())
	}
	if _, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("clock"), Key: aws.String("k"), Body: bytes.NewReader([]byte("v"))}); err != nil {
		t.Fatalf("put: %v\n%s", err, log.String())
	}
	h, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("clock"), Key: aws.String("k")})
	if err != nil {
		t.Fatalf("head: %v", err)
	}
	return aws.ToTime(h.LastModified), log.String()
}

// TestReleaseIgnoresClockOffset: the release binary (no build tags)
// ignores SHARDSTORE_TEST_CLOCK_OFFSET; the harness's testhooks build
// honours it (which shows the check can fail). The offset, 10 minutes,
// stays inside SigV4's 15-minute window so the client's requests pass;
// an object's LastModified is the server's clock at the PUT.
func TestReleaseIgnoresClockOffset(t *testing.T) {
	const offset = 10 * time.Minute
	release, cleanup, err := serverbin.Build("shardstore-release-")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	for _, tc := range []struct {
		name, bin string
		hooked    bool
	}{{"release", release, false}, {"testhooks", binary, true}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.hooked && os.Getenv("SHARDSTORE_BIN") != "" {
				t.Skip("SHARDSTORE_BIN is set: the harness runs that binary, not its testhooks build")
			}
			before := time.Now()
			lm, log := lastModifiedWithOffset(t, tc.bin, offset)
			ahead := lm.Sub(before)
			t.Logf("LastModified %v, %v from the test's clock before the PUT", lm, ahead.Round(time.Second))
			if honoured := ahead > offset/2; honoured != tc.hooked {
				t.Errorf("%s build: LastModified %v ahead of the real clock with %s=%v: honoured %v, want %v",
					tc.name, ahead.Round(time.Second), "SHARDSTORE_TEST_CLOCK_OFFSET", offset, honoured, tc.hooked)
			}
			if says := strings.Contains(log, "testhooks build"); says != tc.hooked {
				t.Errorf("%s build: log says testhooks build = %v, want %v:\n%s", tc.name, says, tc.hooked, tail(log, 10))
			}
		})
	}
}

// TestBrokenBuildCaught builds shardstore with -tags
// jepsen_broken_readquorum (internal/quorum: one drive's record is taken
// for the current version, no read quorum) and runs CI's slice against
// it: the checker must report anomalies. Nightly only (about 2.5 min):
// SHARDSTORE_JEPSEN_MINUTES or SHARDSTORE_JEPSEN_BROKEN=1.
func TestBrokenBuildCaught(t *testing.T) {
	if os.Getenv("SHARDSTORE_JEPSEN_MINUTES") == "" && os.Getenv("SHARDSTORE_JEPSEN_BROKEN") != "1" {
		t.Skip("the broken-build run is scripts/nightly's (SHARDSTORE_JEPSEN_BROKEN=1 runs it here)")
	}
	broken, cleanup, err := serverbin.BuildTags("shardstore-broken-", "jepsen_broken_readquorum")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	cfg := Config{Seed: seed(t), Duration: 75 * time.Second, Nemeses: []string{NemIsolate, NemKill, NemHalves},
		Binary: broken, Dir: t.TempDir(), Network: os.Getenv("SHARDSTORE_JEPSEN_NET"), OutDir: os.Getenv("SHARDSTORE_JEPSEN_OUT"),
		Log: func(f string, a ...any) { t.Logf(f, a...) }}
	t.Logf("seed %d, binary built with -tags jepsen_broken_readquorum", cfg.Seed)
	res, err := Run(cfg)
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	var b bytes.Buffer
	Report(&b, []*Result{res})
	t.Log("\n" + b.String())
	types := map[string]int{}
	for _, a := range res.Anomalies {
		types[a.Checker+"/"+a.Type]++
	}
	if len(res.Anomalies) == 0 {
		t.Fatalf("the checker found nothing wrong with a build that reads without read quorum (seed %d)", cfg.Seed)
	}
	t.Logf("caught: %s", fmt.Sprint(types))
}
