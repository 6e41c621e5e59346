package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/test/internal/serverbin"
)

// runBinary runs the binary to completion with extra environment and
// returns its combined output and exit code.
func runBinary(t *testing.T, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	serverbin.DieWithParent(cmd)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v did not finish within 60s:\n%s", args, out)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return string(out), 0
}

// treeEntries lists every path under root.
func treeEntries(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		if err == nil && p != root {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestSecondServerOnSameDrivesRefused starts a second server on drives
// a running one holds: it is refused, naming the drive and the holder's
// pid, and the first server keeps serving writes.
func TestSecondServerOnSameDrivesRefused(t *testing.T) {
	singleNodeOnly(t, "the drive lock of one server process")
	dir := t.TempDir()
	s := startIn(t, dir)
	out, code := runBinary(t, dir, serverEnv(), "server", "--address", "127.0.0.1:0", s.drives+"{1...4}")
	want := fmt.Sprintf("is in use by another process (pid %d)", s.cmd.Process.Pid)
	if code != 1 || !strings.Contains(out, want) || !strings.Contains(out, s.drives+"1") {
		t.Fatalf("second server: exit %d, want 1 and %q:\n%s", code, want, out)
	}
	c := s.root()
	createBucket(t, c, "still-mine")
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("still-mine"), Key: aws.String("k"),
		Body: bytes.NewReader(pattern(100<<10, 3))}); err != nil {
		t.Fatalf("the first server's PUT after a refused second start: %v", err)
	}
}

// TestRefusedStartWritesNothing: a start refused for a bad layout or for
// drives on the root filesystem leaves the drive directories untouched.
func TestRefusedStartWritesNothing(t *testing.T) {
	singleNodeOnly(t, "runs the binary itself with refused arguments; a cluster changes nothing there")
	dir := t.TempDir()
	drives := filepath.Join(dir, "d")
	out, code := runBinary(t, dir, serverEnv(), "server", "--address", "127.0.0.1:0", "--parity", "3", drives+"{1...4}")
	if code != 1 || !strings.Contains(out, "parity 3 is invalid for sets of 4 drives") {
		t.Fatalf("--parity 3 on 4 drives: exit %d:\n%s", code, out)
	}
	if got := treeEntries(t, dir); len(got) != 0 {
		t.Fatalf("refused start wrote %v", got)
	}
	// Existing, empty drive directories stay empty.
	for i := 1; i <= 4; i++ {
		os.Mkdir(fmt.Sprintf("%s%d", drives, i), 0o755)
	}
	if out, code := runBinary(t, dir, serverEnv(), "server", "--address", "127.0.0.1:0", "--set-size", "3", drives+"{1...4}"); code != 1 {
		t.Fatalf("--set-size 3 on 4 drives: exit %d:\n%s", code, out)
	}
	if got := treeEntries(t, dir); len(got) != 4 {
		t.Fatalf("refused start wrote into the drives: %v", got)
	}
	// The root filesystem: refused unless allowed. Only checkable where
	// the test's temporary directory is on the root filesystem.
	if !sameFilesystem(t, dir, "/") {
		t.Logf("skipping the root-filesystem refusal: %s is not on the root filesystem here", dir)
		return
	}
	env := []string{"SHARDSTORE_ROOT_USER=" + rootUser, "SHARDSTORE_ROOT_PASSWORD=" + rootPass, "SHARDSTORE_ALLOW_ROOT_DRIVES="}
	out, code = runBinary(t, dir, env, "server", "--address", "127.0.0.1:0", drives+"{1...4}")
	if code != 1 || !strings.Contains(out, "4 drives are on the root filesystem") || !strings.Contains(out, "--allow-root-drives") {
		t.Fatalf("drives on the root filesystem: exit %d:\n%s", code, out)
	}
	if got := treeEntries(t, dir); len(got) != 4 {
		t.Fatalf("refused start wrote into the drives: %v", got)
	}
}

func sameFilesystem(t *testing.T, a, b string) bool {
	var sa, sb syscall.Stat_t
	if err := syscall.Stat(a, &sa); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(b, &sb); err != nil {
		t.Fatal(err)
	}
	return sa.Dev == sb.Dev
}

// TestMissingDriveOnRestart: a drive directory that is gone at restart
// (a disk that did not mount) is an offline drive, not recreated on the
// parent filesystem; status, metrics and degraded reads show it.
func TestMissingDriveOnRestart(t *testing.T) {
	singleNodeOnly(t, "a single server restarted without a drive; test/cluster restarts nodes with wiped drives")
	dir := t.TempDir()
	s := startIn(t, dir)
	c := s.root()
	createBucket(t, c, "keep")
	body := pattern(300<<10, 9)
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("keep"), Key: aws.String("obj"),
		Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	missing := s.drives + "3"
	if err := os.Rename(missing, filepath.Join(dir, "unmounted")); err != nil {
		t.Fatal(err)
	}
	s = startIn(t, dir)
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the missing drive directory was recreated: %v\n%s", err, s.stderr)
	}
	resp, err := s.root().GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("keep"), Key: aws.String("obj")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("degraded read: %v", err)
	}

	// admin status --json names the drive and why it is offline.
	out, code := runBinary(t, dir, append(serverEnv(), "SHARDSTORE_ENDPOINT="+s.endpoint), "admin", "status", "--json")
	if code != 0 {
		t.Fatalf("admin status --json: exit %d\n%s", code, out)
	}
	var st admin.StatusReply
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("admin status --json: %v\n%s", err, out)
	}
	if st.Layout.Data != 2 || st.Layout.Parity != 2 || len(st.Drives) != 4 || st.Status.DrivesOnline != 3 {
		t.Fatalf("status: %+v", st)
	}
	d3 := st.Drives[2]
	if d3.Path != missing || d3.State != "offline" || !strings.Contains(d3.Error, "does not exist") || st.Drives[0].Free == 0 {
		t.Fatalf("drives: %+v", st.Drives)
	}
	// The human form says the same.
	out, code = runBinary(t, dir, append(serverEnv(), "SHARDSTORE_ENDPOINT="+s.endpoint), "admin", "status")
	if code != 0 || !regexp.MustCompile(`(?m)^1\s+3\s+offline\s.*`+regexp.QuoteMeta(missing)).MatchString(out) ||
		!strings.Contains(out, "drives online      3 of 4") || !strings.Contains(out, "2 data + 2 parity") {
		t.Fatalf("admin status:\n%s", out)
	}

	// The metrics an operator alerts on.
	r := s.metrics(t)
	for _, want := range []string{
		`shardstore_set_drives_offline{set="1"} 1`,
		`shardstore_set_drives_online{set="1"} 3`,
		`shardstore_set_write_quorum_available{set="1"} 1`,
		`shardstore_set_read_quorum_available{set="1"} 1`,
		fmt.Sprintf(`shardstore_drive_online{drive=%q,set="1",slot="3"} 0`, missing),
		fmt.Sprintf(`shardstore_drive_free_bytes{drive=%q,set="1",slot="1"} `, s.drives+"1"),
		`shardstore_heal_queue_length `,
		`shardstore_scanner_running `,
		`shardstore_index_block_cache_capacity_bytes `,
		`shardstore_index_row_cache_hits_total `,
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	// The start says what it runs on: the layout and the missing drive.
	for _, want := range []string{"Layout: 1 erasure set of 4 drives; each object is 2 data + 2 parity shards",
		"Inline data:", "Hashing: --hash-offload auto", "drive directory does not exist"} {
		if !strings.Contains(s.stderr.String(), want) {
			t.Errorf("start log lacks %q:\n%s", want, s.stderr)
		}
	}
}

// slowPut starts a signed PUT whose body is sent only in part, so the
// request stays in flight; it returns a channel with the outcome.
func slowPut(t *testing.T, s *server, bucket, key string) (<-chan error, *io.PipeWriter) {
	t.Helper()
	data := pattern(1<<20, 4)
	pr, pw := io.Pipe()
	req, err := http.NewRequest("PUT", s.endpoint+"/"+bucket+"/"+key, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(data))
	auth.SignRequest(req, auth.Identity{AccessKey: rootUser, SecretKey: rootPass}, region, time.Now(), "")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		done <- err
	}()
	if _, err := pw.Write(data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	return done, pw
}

// waitLog waits until the server's stderr contains want.
func waitLog(t *testing.T, s *server, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(s.stderr.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log within %v:\n%s", want, within, s.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestShutdownSignals: the first signal stops accepting and says what it
// waits for; when the wait is over, or on a second signal, in-flight
// requests are cut, the process says so and exits 0; what was
// acknowledged before is intact after a restart.
func TestShutdownSignals(t *testing.T) {
	singleNodeOnly(t, "the signals of one server process")
	for _, tc := range []struct {
		name, wait, want string
		second           bool
	}{
		{"wait over", "1", "the 1s wait (--shutdown-timeout) is over: cut 1 request", false},
		{"second signal", "60s", "second signal (terminated): cut 1 request", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := startIn(t, dir, "--shutdown-timeout", tc.wait)
			c := s.root()
			createBucket(t, c, "acked")
			acked := pattern(200<<10, 5)
			if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("acked"), Key: aws.String("k"),
				Body: bytes.NewReader(acked)}); err != nil {
				t.Fatal(err)
			}
			done, pw := slowPut(t, s, "acked", "inflight")
			defer pw.Close()
			time.Sleep(200 * time.Millisecond) // the PUT is being served
			start := time.Now()
			if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			waitLog(t, s, "for 1 request in flight to finish", 10*time.Second)
			if tc.second {
				if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case <-s.exited:
			case <-time.After(20 * time.Second):
				t.Fatalf("no exit within 20s:\n%s", s.stderr)
			}
			if s.exitErr != nil {
				t.Fatalf("exit: %v (want 0)\n%s", s.exitErr, s.stderr)
			}
			if tc.second && time.Since(start) > 10*time.Second {
				t.Fatalf("second signal took %v to exit", time.Since(start))
			}
			if !strings.Contains(s.stderr.String(), tc.want) {
				t.Fatalf("log lacks %q:\n%s", tc.want, s.stderr)
			}
			// The client is still waiting to send the rest of the body;
			// ending it makes the transport notice the dropped connection.
			pw.CloseWithError(errors.New("test: body abandoned"))
			if err := <-done; err == nil || strings.Contains(err.Error(), "status 200") {
				t.Fatalf("the cut PUT was answered: %v", err)
			}
			// Nothing acknowledged is lost; the cut PUT is not there.
			s = startIn(t, dir)
			resp, err := s.root().GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("acked"), Key: aws.String("k")})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Equal(got, acked) {
				t.Fatal("acknowledged object changed across the shutdown")
			}
			if _, err := s.root().HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String("acked"), Key: aws.String("inflight")}); err == nil {
				t.Fatal("the cut PUT's object exists")
			}
		})
	}
}

// TestCLIErrorsOnce: the binary reports a bad command line once, with a
// short usage, and exit status 2.
func TestCLIErrorsOnce(t *testing.T) {
	singleNodeOnly(t, "runs the binary itself with bad flags; a cluster changes nothing there")
	dir := t.TempDir()
	out, code := runBinary(t, dir, nil, "server", "--no-such-flag")
	if code != 2 || strings.Count(out, "flag provided but not defined") != 1 || !strings.Contains(out, "usage: shardstore server") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if got := treeEntries(t, dir); len(got) != 0 {
		t.Fatalf("a refused command line wrote %v", got)
	}
	out, code = runBinary(t, dir, nil, "--version")
	if code != 0 || !strings.HasPrefix(out, "shardstore ") || !strings.Contains(out, "go      go1.") {
		t.Fatalf("--version: exit %d:\n%s", code, out)
	}
	out, code = runBinary(t, dir, []string{"SHARDSTORE_ENDPOINT=http://127.0.0.1:1"}, "admin", "status")
	if code != 1 || !strings.Contains(out, "cannot reach the server at http://127.0.0.1:1") || !strings.Contains(out, "SHARDSTORE_ENDPOINT") {
		t.Fatalf("admin against nothing: exit %d:\n%s", code, out)
	}
	out, code = runBinary(t, dir, []string{"SHARDSTORE_ROOT_USER=admin", "SHARDSTORE_ROOT_PASSWORD=short"}, "server")
	if code != 1 || !strings.Contains(out, "SHARDSTORE_ROOT_PASSWORD must be at least 8 characters") {
		t.Fatalf("short password: exit %d:\n%s", code, out)
	}
}
