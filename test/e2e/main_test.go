// Package e2e runs the real shardstore binary and drives it with real S3
// clients (aws-sdk-go-v2, its transfer manager, minio-go) and raw HTTP.
package e2e

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/shardstore/shardstore/test/internal/serverbin"
)

// binary is the shardstore executable built once by TestMain.
var binary string

func TestMain(m *testing.M) { os.Exit(serverbin.Main(m, "shardstore-e2e-", &binary)) }

// Credentials the tests start servers with.
const (
	rootUser = "e2e-root"
	rootPass = "e2e-root-secret"
	bobUser  = "bob-access"
	bobPass  = "bob-secret-key"
	region   = "us-east-1"
)

// server is one running shardstore process.
type server struct {
	t        testing.TB
	endpoint string
	// consoleLine carries the web console's URL once the server prints
	// it (servers started with --console-address).
	consoleLine chan string
	cmd         *exec.Cmd
	stderr      *serverbin.SyncBuffer
	exited      chan struct{}
	exitErr     error
	drives      string
}

// startServer runs the binary on 127.0.0.1:0 with four drives in a temp
// dir and a users file, waits for the endpoint line and readiness, and
// stops it at test end.
func startServer(t testing.TB, extra ...string) *server {
	t.Helper()
	return startIn(t, t.TempDir(), extra...)
}

// startIn is startServer with the drives (dir/drive{1...4}) and users
// file in dir, so a test can restart a server on the same drives.
func startIn(t testing.TB, dir string, extra ...string) *server {
	t.Helper()
	users := filepath.Join(dir, "users.txt")
	if err := os.WriteFile(users, []byte(bobUser+" "+bobPass+" Bob Example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	drives := filepath.Join(dir, "drive")
	args := []string{"server", "--address", "127.0.0.1:0", "--users", users}
	if !hasFlag(extra, "--console-address") {
		// Tests run servers side by side: none takes the console's
		// default port unless it asks for a console.
		args = append(args, "--console-address", "")
	}
	args = append(args, extra...)
	args = append(args, drives+"{1...4}")
	// Temporary drives are usually on the root filesystem, which the
	// server refuses unless told it is intended.
	s := launch(t, dir, serverEnv(), args)
	s.drives = drives
	return s
}

// hasFlag reports whether args hold flag (as "--f v" or "--f=v").
func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// serverEnv is the environment startServer gives the binary.
func serverEnv() []string {
	return []string{"SHARDSTORE_ROOT_USER=" + rootUser, "SHARDSTORE_ROOT_PASSWORD=" + rootPass,
		"SHARDSTORE_ALLOW_ROOT_DRIVES=1"}
}

// startEmbedded runs the server in workdir with no drive arguments and no
// credentials in the environment, so every default applies.
func startEmbedded(t testing.TB, workdir string) *server {
	t.Helper()
	return launch(t, workdir, []string{"SHARDSTORE_ROOT_USER=", "SHARDSTORE_ROOT_PASSWORD="},
		[]string{"server", "--address", "127.0.0.1:0"})
}

// launch starts the binary and waits until it is listening and ready.
func launch(t testing.TB, workdir string, env, args []string) *server {
	t.Helper()
	s := &server{t: t, stderr: &serverbin.SyncBuffer{}, exited: make(chan struct{}), consoleLine: make(chan string, 1)}
	s.cmd = exec.Command(binary, args...)
	s.cmd.Dir = workdir
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stderr = s.stderr
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			if c, ok := strings.CutPrefix(sc.Text(), "Console: "); ok {
				select {
				case s.consoleLine <- c:
				default:
				}
			}
			if ep, ok := strings.CutPrefix(sc.Text(), "S3 endpoint: "); ok && !sent {
				lines <- ep
				sent = true
			}
		}
	}()
	go func() {
		s.exitErr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("server stop: %v\n%s", err, s.stderr)
		}
	})
	select {
	case s.endpoint = <-lines:
	case <-s.exited:
		t.Fatalf("server exited before listening: %v\n%s", s.exitErr, s.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("no endpoint line within 30s\n%s", s.stderr)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.endpoint + "/shardstore/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready within 30s (%v)\n%s", err, s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

// stop sends SIGTERM and waits for a clean exit, killing after 20s.
func (s *server) stop() error {
	select {
	case <-s.exited:
		return s.exitErr
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return errors.New("server did not stop within 20s after SIGTERM")
	}
	return s.exitErr
}

// client returns an aws-sdk-go-v2 S3 client at default settings (request
// checksums on), path-style since there is no DNS for virtual hosts.
func (s *server) client(ak, sk string) *s3.Client {
	return s3.New(s3.Options{
		Region:       region,
		BaseEndpoint: aws.String(s.endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(ak, sk, ""),
		UsePathStyle: true,
	})
}

func (s *server) root() *s3.Client { return s.client(rootUser, rootPass) }

// errCode returns the S3 error code and HTTP status of an SDK error.
func errCode(err error) (string, int) {
	if err == nil {
		return "", 0
	}
	code, status := "", 0
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	return code, status
}

// wantCode fails unless err is an S3 error with code (and status if non-zero).
func wantCode(t *testing.T, err error, code string, status int) {
	t.Helper()
	c, st := errCode(err)
	if err == nil || (code != "" && c != code) || (status != 0 && st != status) {
		t.Fatalf("got error %v (code %q, status %d), want code %q status %d", err, c, st, code, status)
	}
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func mustRead(t testing.TB, r io.ReadCloser) []byte {
	t.Helper()
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pattern returns n deterministic, non-repeating-looking bytes.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// createBucket makes a bucket with the root client.
func createBucket(t testing.TB, c *s3.Client, name string) {
	t.Helper()
	if _, err := c.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
}
