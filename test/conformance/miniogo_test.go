// Package conformance runs an independent, public S3 functional suite
// against the real shardstore binary: minio-go's functional tests (the
// suite MinIO's "mint" runs, Apache-2.0, fetched from the Go module proxy
// at the version go.mod pins; nothing of it is in this repository).
// Every test the suite reports as failed or not implemented must be
// listed with its reason in docs/conformance.md, and every test listed
// there must still fail, so the document always says exactly what does
// not work.
package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/test/internal/serverbin"
)

const (
	suiteModule = "github.com/minio/minio-go/v7"
	suiteFile   = "functional_tests.go"
	docPath     = "docs/conformance.md"
	rootUser    = "conformance"
	rootPass    = "conformance-secret"
)

// result is one test's outcome: PASS, FAIL or NA (the suite's word for
// an API the server answered NotImplemented), and the first message of
// a FAIL or NA.
type result struct {
	status, detail string
}

func TestMinioGoFunctional(t *testing.T) {
	if testing.Short() {
		t.Skip("the minio-go functional suite takes about half a minute; skipped with -short")
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	suite := buildSuite(t, root)
	server, cleanup, err := serverbin.Build("shardstore-conformance-")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	endpoint := startServer(t, server)

	cmd := exec.Command(suite)
	cmd.Dir = t.TempDir()
	// The suite writes files of up to 129 MiB to os.TempDir and leaves some
	// behind (FPutObjectTest*, PresignedPostPolicyTest*): keep them in the
	// test's own directory so every run removes them.
	cmd.Env = append(os.Environ(), "TMPDIR="+cmd.Dir, "SERVER_ENDPOINT="+endpoint, "ACCESS_KEY="+rootUser, "SECRET_KEY="+rootPass,
		"ENABLE_HTTPS=0", "ENABLE_KMS=0", "MINT_MODE=full", "RUN_ON_FAIL=1", "MINT_DATA_DIR=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("the suite did not finish: %v\nstderr:\n%s", err, tail(stderr.String(), 4000))
	}
	got := parseResults(t, stdout.Bytes())
	counts := map[string]int{}
	for _, r := range got {
		counts[r.status]++
	}
	t.Logf("minio-go %s functional suite against shardstore in %v: %d tests, %d pass, %d fail, %d not implemented",
		suiteVersion(t, root), time.Since(start).Round(time.Second), len(got), counts["PASS"], counts["FAIL"], counts["NA"])
	if out := os.Getenv("SHARDSTORE_CONFORMANCE_TABLE"); out != "" {
		writeTable(t, out, got)
	}

	known := readKnown(t, filepath.Join(root, docPath))
	names := make([]string, 0, len(got))
	for n := range got {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r := got[n]
		k, listed := known[n]
		switch {
		case r.status == "PASS" && listed:
			t.Errorf("%s now passes: remove it from %s", n, docPath)
		case r.status != "PASS" && !listed:
			t.Errorf("%s: %s (%s); fix it, or list it with the reason in %s", n, r.status, r.detail, docPath)
		case r.status != "PASS" && k != r.status:
			t.Errorf("%s: %s (%s), but %s lists it as %s", n, r.status, r.detail, docPath, k)
		}
	}
	for n := range known {
		if _, ran := got[n]; !ran {
			t.Errorf("%s is listed in %s but the suite did not run it", n, docPath)
		}
	}
}

// buildSuite compiles the suite's single file from the module cache
// inside a temporary directory of this module, so it builds with the
// dependency versions go.mod pins.
func buildSuite(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", suiteModule).Output()
	if err != nil {
		t.Fatalf("locate %s (go mod download needs the module proxy): %v", suiteModule, err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), suiteFile))
	if err != nil {
		t.Fatalf("read the suite: %v", err)
	}
	// The file carries a build constraint that would also select it
	// when the minio-go package itself is compiled; as a lone copy it
	// does not need it.
	src = regexp.MustCompile(`(?m)^//go:build .*\n`).ReplaceAll(src, nil)
	dir, err := os.MkdirTemp(root, ".conformance-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "miniogo-functional")
	build := exec.Command("go", "build", "-o", bin, "./"+filepath.Base(dir))
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the suite: %v\n%s", err, out)
	}
	return bin
}

func suiteVersion(t *testing.T, root string) string {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", suiteModule)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

// startServer runs shardstore on four temporary drives and returns its
// HOST:PORT; it is stopped when the test ends.
func startServer(t *testing.T, binary string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(binary, "server", "--address", "127.0.0.1:0", "--console-address", "", filepath.Join(dir, "d{1...4}"))
	serverbin.DieWithParent(cmd)
	cmd.Env = append(os.Environ(), "SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass,
		"SHARDSTORE_ALLOW_ROOT_DRIVES=1", "SHARDSTORE_CERTS_DIR="+serverbin.NoCertsDir()) // temporary drives, usually on the root filesystem
	var logs bytes.Buffer
	cmd.Stderr = &logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if ep, ok := strings.CutPrefix(sc.Text(), "S3 endpoint: http://"); ok {
				lines <- ep
			}
		}
	}()
	select {
	case ep := <-lines:
		return ep
	case <-time.After(60 * time.Second):
		t.Fatalf("no endpoint line within 60s\n%s", logs.String())
	}
	return ""
}

// parseResults folds the suite's JSON lines into one result per test:
// FAIL if any step failed, else NA if any step was not implemented.
func parseResults(t *testing.T, out []byte) map[string]result {
	t.Helper()
	got := map[string]result{}
	rank := map[string]int{"PASS": 0, "NA": 1, "FAIL": 2}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var line struct {
			Name, Status, Alert, Message, Function string
			Error                                  any
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Status == "" {
			continue
		}
		name := strings.TrimPrefix(line.Name, "minio-go: ")
		detail := strings.TrimSpace(line.Function + ": " + line.Alert + line.Message)
		if line.Error != nil {
			detail += fmt.Sprintf(": %v", line.Error)
		}
		prev, seen := got[name]
		if !seen || rank[line.Status] > rank[prev.status] {
			got[name] = result{status: line.Status, detail: detail}
		}
	}
	if len(got) < 50 {
		t.Fatalf("the suite reported only %d tests:\n%s", len(got), tail(string(out), 4000))
	}
	return got
}

// knownRow matches a table row of docs/conformance.md: | `test` | STATUS | reason |
var knownRow = regexp.MustCompile("^\\|\\s*`(test[A-Za-z0-9]+)`\\s*\\|\\s*(FAIL|NA)\\s*\\|")

func readKnown(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if m := knownRow.FindStringSubmatch(l); m != nil {
			known[m[1]] = m[2]
		}
	}
	return known
}

// writeTable writes the rows of every test that did not pass, to help
// update docs/conformance.md (reasons are for a person to write).
func writeTable(t *testing.T, path string, got map[string]result) {
	var names []string
	for n, r := range got {
		if r.status != "PASS" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", n, got[n].status, strings.ReplaceAll(got[n].detail, "|", "/"))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Error(err)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
}
