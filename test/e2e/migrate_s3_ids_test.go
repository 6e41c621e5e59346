package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/shardstore/shardstore/test/internal/serverbin"
)

// gofakes3Version is the S3 server these tests use as a source whose
// version ids are AWS-like ("3/" and 60-odd base32 characters), which
// shardstore cannot keep: github.com/johannesboyne/gofakes3 (MIT), run
// as its own process, never linked into shardstore.
const gofakes3Version = "v1.2.0"

// gofakes3Bin finds the gofakes3 binary: on PATH, else installed (go
// install, from the Go module proxy) into the user's cache directory.
func gofakes3Bin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("gofakes3"); err == nil {
		return p
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "shardstore-e2e", "gofakes3-"+gofakes3Version)
	bin := filepath.Join(dir, "gofakes3")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no gofakes3 on PATH and no go command to install it with (go install github.com/johannesboyne/gofakes3/cmd/gofakes3@" + gofakes3Version + ")")
	}
	t.Logf("installing gofakes3 %s (a real S3 server with AWS-like version ids) into %s: go install github.com/johannesboyne/gofakes3/cmd/gofakes3@%s",
		gofakes3Version, dir, gofakes3Version)
	cmd := exec.Command(goBin, "install", "github.com/johannesboyne/gofakes3/cmd/gofakes3@"+gofakes3Version)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install gofakes3: %v\n%s", err, out)
	}
	return bin
}

// fakeS3 is a running gofakes3 process (in-memory backend).
type fakeS3 struct {
	endpoint string
}

// startFakeS3 runs gofakes3 on a free loopback port until the test ends.
func startFakeS3(t *testing.T) *fakeS3 {
	t.Helper()
	cmd := exec.Command(gofakes3Bin(t), "-backend", "mem", "-host", "127.0.0.1:0", "-quiet")
	serverbin.DieWithParent(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := regexp.MustCompile(`using port: (\d+)`).FindStringSubmatch(sc.Text()); m != nil {
				port <- m[1]
			}
		}
	}()
	select {
	case p := <-port:
		return &fakeS3{endpoint: "http://127.0.0.1:" + p}
	case <-time.After(30 * time.Second):
		t.Fatal("gofakes3 did not say its port")
	}
	return nil
}

func (f *fakeS3) client() *s3.Client {
	return s3.New(s3.Options{Region: region, BaseEndpoint: aws.String(f.endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("fake-access", "fake-secret", "")})
}

// fromFake runs `shardstore migrate from-s3` from the gofakes3 source
// into dst, the id map at idMap.
func fromFake(t *testing.T, src *fakeS3, dst *server, idMap string, extra ...string) string {
	t.Helper()
	cmd := fakeMigrateCmd(src, dst, idMap, extra...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("migrate from-s3: %v\n%s", err, out)
	}
	return string(out)
}

func fakeMigrateCmd(src *fakeS3, dst *server, idMap string, extra ...string) *exec.Cmd {
	args := append([]string{"migrate", "from-s3", "--target", dst.endpoint, "--workers", "4", "--id-map", idMap}, extra...)
	cmd := exec.Command(binary, append(args, src.endpoint)...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=fake-access", "AWS_SECRET_ACCESS_KEY=fake-secret",
		"SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass)
	return cmd
}

type idMapLine struct {
	Bucket, Key string
	SourceID    string `json:"source_version_id"`
	TargetID    string `json:"version_id"`
	ModTime     string `json:"mod_time"`
	Marker      bool   `json:"delete_marker"`
}

func readMap(t *testing.T, path string) map[string]idMapLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]idMapLine{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e idMapLine
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("id map line %q: %v", line, err)
		}
		k := e.Bucket + "\x00" + e.Key + "\x00" + e.SourceID
		if _, dup := out[k]; dup {
			t.Fatalf("id map lists %s/%s %s twice", e.Bucket, e.Key, e.SourceID)
		}
		out[k] = e
	}
	return out
}

// sameVersionsMapped checks that bucket b lists, on the target, the
// source's versions in the same order with the same ETags, sizes, times
// (to the millisecond), kinds and latest flags, each under the id the
// map gives it (or its own), and that every version reads back alike.
// It returns how many versions and delete markers the bucket has.
func sameVersionsMapped(t *testing.T, src, dst *s3.Client, b string, ids map[string]idMapLine) int {
	t.Helper()
	x := ctx(t)
	type row struct {
		key, id, etag string
		latest        bool
		marker        bool
		mod           string
		size          int64
	}
	// A listing gives versions and markers apart: merge them back by
	// time, as they stand (ties keep the listing's order).
	list := func(c *s3.Client, mapIDs bool) []row {
		var out []row
		p := s3.NewListObjectVersionsPaginator(c, &s3.ListObjectVersionsInput{Bucket: aws.String(b)})
		for p.HasMorePages() {
			page, err := p.NextPage(x)
			if err != nil {
				t.Fatalf("list versions of %s: %v", b, err)
			}
			for _, v := range page.Versions {
				out = append(out, row{aws.ToString(v.Key), aws.ToString(v.VersionId), aws.ToString(v.ETag), aws.ToBool(v.IsLatest), false,
					aws.ToTime(v.LastModified).UTC().Format("2006-01-02T15:04:05.000"), aws.ToInt64(v.Size)})
			}
			for _, d := range page.DeleteMarkers {
				out = append(out, row{aws.ToString(d.Key), aws.ToString(d.VersionId), "", aws.ToBool(d.IsLatest), true,
					aws.ToTime(d.LastModified).UTC().Format("2006-01-02T15:04:05.000"), 0})
			}
		}
		for i := range out {
			if out[i].id == "" {
				out[i].id = "null"
			}
			if mapIDs {
				if e, ok := ids[b+"\x00"+out[i].key+"\x00"+out[i].id]; ok {
					out[i].id = e.TargetID
				}
			}
		}
		// Newest first per key, by time then the latest flag.
		sortRows := func(rs []row) {
			for i := 1; i < len(rs); i++ {
				for j := i; j > 0; j-- {
					a, c := rs[j-1], rs[j]
					less := a.key < c.key || (a.key == c.key && (a.mod > c.mod || (a.mod == c.mod && a.latest && !c.latest)))
					if less {
						break
					}
					rs[j-1], rs[j] = c, a
				}
			}
		}
		sortRows(out)
		return out
	}
	want, got := list(src, true), list(dst, false)
	str := func(rs []row) string {
		var s []string
		for _, r := range rs {
			s = append(s, fmt.Sprintf("%+v", r))
		}
		return strings.Join(s, "\n")
	}
	if str(want) != str(got) {
		t.Fatalf("bucket %s: versions differ\nsource (ids mapped):\n%s\ntarget:\n%s", b, str(want), str(got))
	}
	srcRows := list(src, false)
	for i, r := range srcRows {
		if r.marker {
			continue
		}
		g1, err := src.GetObject(x, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(r.key), VersionId: aws.String(r.id)})
		if err != nil {
			t.Fatalf("source get %s %s: %v", r.key, r.id, err)
		}
		g2, err := dst.GetObject(x, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(r.key), VersionId: aws.String(want[i].id)})
		if err != nil {
			t.Fatalf("target get %s %s (source %s): %v", r.key, want[i].id, r.id, err)
		}
		b1, b2 := mustRead(t, g1.Body), mustRead(t, g2.Body)
		if !bytes.Equal(b1, b2) || aws.ToString(g1.ETag) != aws.ToString(g2.ETag) || aws.ToString(g1.ContentType) != aws.ToString(g2.ContentType) ||
			!strings.EqualFold(fmt.Sprint(g1.Metadata), fmt.Sprint(g2.Metadata)) {
			t.Fatalf("%s/%s version %s (target %s) differs: %d/%d bytes, ETag %s/%s, type %s/%s, meta %v/%v", b, r.key, r.id, want[i].id,
				len(b1), len(b2), aws.ToString(g1.ETag), aws.ToString(g2.ETag), aws.ToString(g1.ContentType), aws.ToString(g2.ContentType),
				g1.Metadata, g2.Metadata)
		}
	}
	return len(srcRows)
}

// TestMigrateFromS3NewIDs copies from a real S3 server whose version ids
// shardstore cannot keep (gofakes3's AWS-like ids): the versions arrive
// in order with their times under new ids, the id map records each,
// the run says which buckets kept their ids, and re-runs copy only what
// changed.
func TestMigrateFromS3NewIDs(t *testing.T) {
	singleNodeOnly(t, "one target is enough for the id mapping")
	fake := startFakeS3(t)
	sc := fake.client()
	dst := startServer(t)
	dc := dst.root()
	x := ctx(t)
	for _, b := range []string{"awslike", "flat"} {
		if _, err := sc.CreateBucket(x, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sc.PutBucketVersioning(x, &s3.PutBucketVersioningInput{Bucket: aws.String("awslike"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	// gofakes3 keeps milliseconds and lists versions and delete markers
	// apart: writes 2ms apart keep their order unambiguous (how ties are
	// ordered is TestPlanIDs's).
	put := func(b, k string, body []byte) {
		t.Helper()
		time.Sleep(2 * time.Millisecond)
		if _, err := sc.PutObject(x, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(k), Body: bytes.NewReader(body),
			ContentType: aws.String("application/x-test"), Metadata: map[string]string{"n": fmt.Sprint(len(body))}}); err != nil {
			t.Fatalf("put %s/%s: %v", b, k, err)
		}
	}
	for i := range 3 {
		put("awslike", "k", pattern(1000+i*30000, byte(i)))
	}
	time.Sleep(2 * time.Millisecond)
	if _, err := sc.DeleteObject(x, &s3.DeleteObjectInput{Bucket: aws.String("awslike"), Key: aws.String("k")}); err != nil {
		t.Fatal(err)
	}
	put("awslike", "k", []byte("after the marker"))
	put("awslike", "deep/er/ü key", pattern(70000, 9))
	put("awslike", "deep/er/ü key", nil)
	put("flat", "only", []byte("unversioned"))
	l, err := sc.ListObjectVersions(x, &s3.ListObjectVersionsInput{Bucket: aws.String("awslike")})
	if err != nil || len(l.Versions) != 6 || len(l.DeleteMarkers) != 1 || !strings.HasPrefix(aws.ToString(l.Versions[0].VersionId), "3/") {
		t.Fatalf("the source does not list AWS-like version ids: %v %+v", err, l)
	}

	idMap := filepath.Join(t.TempDir(), "ids.jsonl")
	out := fromFake(t, fake, dst, idMap)
	t.Logf("first run:\n%s", out)
	for _, want := range []string{"bucket awslike: 0 version ids kept, 7 new", "bucket flat: all 1 version ids kept",
		"version ids: 7 versions of buckets awslike have new ids", "versions copied 8,"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not say %q", want)
		}
	}
	ids := readMap(t, idMap)
	if len(ids) != 7 {
		t.Fatalf("the id map has %d entries, want 7", len(ids))
	}
	if n := sameVersionsMapped(t, sc, dc, "awslike", ids); n != 7 {
		t.Fatalf("%d versions in awslike, want 7", n)
	}
	sameVersionsMapped(t, sc, dc, "flat", ids)
	before, _ := os.ReadFile(idMap)

	again := fromFake(t, fake, dst, idMap)
	if copiedCount(t, again) != "0" {
		t.Fatalf("a second run copied something:\n%s", again)
	}
	if after, _ := os.ReadFile(idMap); !bytes.Equal(before, after) {
		t.Fatalf("a second run changed the id map:\n%s\n%s", before, after)
	}
	put("awslike", "k", []byte("newest"))
	if again := fromFake(t, fake, dst, idMap); copiedCount(t, again) != "1" {
		t.Fatalf("the change was not copied alone:\n%s", again)
	}
	ids = readMap(t, idMap)
	if len(ids) != 8 {
		t.Fatalf("the id map has %d entries, want 8", len(ids))
	}
	sameVersionsMapped(t, sc, dc, "awslike", ids)

	// A version deleted on the source goes with --delete, under its new
	// id, and leaves the map.
	l, err = sc.ListObjectVersions(x, &s3.ListObjectVersionsInput{Bucket: aws.String("awslike"), Prefix: aws.String("deep/")})
	if err != nil || len(l.Versions) != 2 {
		t.Fatalf("%v %+v", err, l)
	}
	victim := aws.ToString(l.Versions[0].VersionId)
	if _, err := sc.DeleteObject(x, &s3.DeleteObjectInput{Bucket: aws.String("awslike"), Key: aws.String("deep/er/ü key"), VersionId: aws.String(victim)}); err != nil {
		t.Fatal(err)
	}
	gone := ids["awslike\x00deep/er/ü key\x00"+victim].TargetID
	out = fromFake(t, fake, dst, idMap, "--delete")
	if !strings.Contains(out, "deleted: awslike/deep/er/ü key version "+gone) {
		t.Fatalf("the deletion of %s (source %s) is not printed:\n%s", gone, victim, out)
	}
	ids = readMap(t, idMap)
	if _, still := ids["awslike\x00deep/er/ü key\x00"+victim]; still || len(ids) != 7 {
		t.Fatalf("the id map keeps the deleted version (%d entries)", len(ids))
	}
	sameVersionsMapped(t, sc, dc, "awslike", ids)
}

// TestMigrateFromS3NewIDsKilled kills an import from a source whose ids
// are remapped (SIGKILL) and checks that the re-run completes it with no
// version lost and none imported twice, and an id map naming each once.
func TestMigrateFromS3NewIDsKilled(t *testing.T) {
	singleNodeOnly(t, "one target is enough for the id mapping")
	fake := startFakeS3(t)
	sc := fake.client()
	dst := startServer(t)
	dc := dst.root()
	x := ctx(t)
	if _, err := sc.CreateBucket(x, &s3.CreateBucketInput{Bucket: aws.String("many")}); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.PutBucketVersioning(x, &s3.PutBucketVersioningInput{Bucket: aws.String("many"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < 40; i += 4 {
				for v := range 3 {
					time.Sleep(2 * time.Millisecond) // a key's versions at distinct milliseconds
					if _, err := sc.PutObject(x, &s3.PutObjectInput{Bucket: aws.String("many"), Key: aws.String(fmt.Sprintf("o%03d", i)),
						Body: bytes.NewReader(pattern(100000+i*3+v, byte(i+v)))}); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	idMap := filepath.Join(t.TempDir(), "ids.jsonl")
	killWhen(t, fakeMigrateCmd(fake, dst, idMap), 60*time.Second, 10*time.Millisecond, func() bool {
		l, err := dc.ListObjectVersions(x, &s3.ListObjectVersionsInput{Bucket: aws.String("many")})
		return err == nil && len(l.Versions) >= 10
	})
	l, _ := dc.ListObjectVersions(x, &s3.ListObjectVersionsInput{Bucket: aws.String("many")})
	t.Logf("killed with %d of 120 versions on the target", len(l.Versions))
	out := fromFake(t, fake, dst, idMap, "--progress", "10ms")
	t.Logf("re-run:\n%s", out)
	if !strings.Contains(out, "source: 120 versions and delete markers") {
		t.Errorf("no totals in:\n%s", out)
	}
	if !regexp.MustCompile(`copied \d+ versions .*; \d+ of 120 versions \([0-9.]+%\), [0-9.]+ of [0-9.]+ MiB, ETA (\d[0-9hms.]*|unknown)\n`).MatchString(out) {
		t.Errorf("no progress line with an ETA in:\n%s", out)
	}
	ids := readMap(t, idMap)
	if len(ids) != 120 {
		t.Fatalf("the id map has %d entries, want 120", len(ids))
	}
	seen := map[string]bool{}
	for _, e := range ids {
		if seen[e.TargetID] {
			t.Fatalf("target id %s given twice", e.TargetID)
		}
		seen[e.TargetID] = true
	}
	if n := sameVersionsMapped(t, sc, dc, "many", ids); n != 120 {
		t.Fatalf("%d versions, want 120", n)
	}
}
