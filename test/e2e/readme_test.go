package e2e

import (
	"bufio"
	"bytes"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The credentials the README's examples use: the server's development
// defaults, which startEmbedded leaves in force.
const (
	defaultUser = "shardstoreadmin"
	defaultPass = "shardstoreadmin"
)

// TestReadmeGoExample builds the Go program of README.md's Quickstart as
// it is written there and runs it, twice, against a server started the
// Quickstart's way (no drive arguments, default credentials). Only the
// endpoint differs, through the SHARDSTORE_ENDPOINT variable the program
// reads.
func TestReadmeGoExample(t *testing.T) {
	root := moduleRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	goBlocks := readmeBlocks(t, readme, "### Go", "go")
	if len(goBlocks) != 1 {
		t.Fatalf("README.md: want exactly one ```go block in the \"### Go\" section, found %d", len(goBlocks))
	}
	src := []byte(goBlocks[0])
	if formatted, err := format.Source(src); err != nil {
		t.Fatalf("README.md's Go example does not parse: %v\n%s", err, src)
	} else if !bytes.Equal(formatted, src) {
		t.Errorf("README.md's Go example is not gofmt-formatted; gofmt gives:\n%s", formatted)
	}

	// Build inside the module, so that go.mod's aws-sdk-go-v2 resolves
	// the imports; the dot prefix keeps the directory out of ./... .
	dir, err := os.MkdirTemp(root, ".readme-example-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "quickstart")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("README.md's Go example does not build: %v\n%s\n--- program ---\n%s", err, out, src)
	}

	s := startEmbedded(t, t.TempDir())
	// The README promises what `go run .` prints; hold it to that.
	var promised string
	for _, block := range readmeBlocks(t, readme, "### Go", "sh") {
		for _, line := range strings.Split(block, "\n") {
			if _, after, ok := strings.Cut(line, "# prints: "); ok {
				promised = strings.TrimSpace(after)
			}
		}
	}
	// The second run finds its bucket from the first and must carry on.
	for run := 1; run <= 2; run++ {
		cmd := exec.CommandContext(ctx(t), bin)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "SHARDSTORE_ENDPOINT="+s.endpoint)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("run %d of the README's Go example: %v\nstdout:\n%s\nstderr:\n%s\nserver log:\n%s",
				run, err, stdout.String(), stderr.String(), s.stderr)
		}
		got := strings.TrimSpace(stdout.String())
		if !strings.HasSuffix(got, ": hello, shardstore") {
			t.Fatalf("run %d printed %q, want the object read back (\"…: hello, shardstore\")", run, got)
		}
		if promised != "" && got != promised {
			t.Errorf("run %d printed %q; README.md says it prints %q", run, got, promised)
		}
	}

	// Check with a client of our own that the object really is stored.
	c := s.client(defaultUser, defaultPass)
	lb, err := c.ListBuckets(ctx(t), &s3.ListBucketsInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lb.Buckets) != 1 {
		t.Fatalf("after the README's Go example: %d buckets, want the one it created", len(lb.Buckets))
	}
	bucket := aws.ToString(lb.Buckets[0].Name)
	lo, err := c.ListObjectsV2(ctx(t), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(lo.Contents) != 1 {
		t.Fatalf("bucket %s holds %d objects, want the one the example wrote", bucket, len(lo.Contents))
	}
	key := aws.ToString(lo.Contents[0].Key)
	obj, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	if body := string(mustRead(t, obj.Body)); body != "hello, shardstore" {
		t.Fatalf("%s/%s holds %q, want %q", bucket, key, body, "hello, shardstore")
	}
}

// readmeBlocks returns the bodies of the fenced code blocks of language
// lang inside the first section of md whose heading line starts with
// heading; the section ends at the next heading of the same or a higher
// level. Lines inside fences are never taken for headings.
func readmeBlocks(t *testing.T, md []byte, heading, lang string) []string {
	t.Helper()
	level := len(heading) - len(strings.TrimLeft(heading, "#"))
	var (
		blocks         []string
		in, found      bool
		fence, current string
		body           strings.Builder
	)
	sc := bufio.NewScanner(bytes.NewReader(md))
	for sc.Scan() {
		line := sc.Text()
		if fence != "" { // inside a fenced block
			if strings.TrimSpace(line) == fence {
				if in && current == lang {
					blocks = append(blocks, body.String())
				}
				fence = ""
				continue
			}
			body.WriteString(line + "\n")
			continue
		}
		if f, info, ok := strings.Cut(line, "```"); ok && strings.TrimSpace(f) == "" {
			fence, current = "```", strings.TrimSpace(info)
			body.Reset()
			continue
		}
		if strings.HasPrefix(line, "#") {
			l := len(line) - len(strings.TrimLeft(line, "#"))
			switch {
			case strings.HasPrefix(line, heading) && !found:
				in, found = true, true
			case in && l <= level:
				in = false
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("README.md has no section headed %q", heading)
	}
	return blocks
}

// moduleRoot is the directory holding go.mod, above the test's directory.
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
