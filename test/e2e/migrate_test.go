package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/shardstore/shardstore/internal/minioformat/miniofixture"
	"github.com/shardstore/shardstore/test/internal/serverbin"
)

// The MinIO fixture: 16 drives of a single-node MinIO and what it
// answered over S3 before it was stopped (internal/minioformat/testdata).
const minioFixture = "../../internal/minioformat/testdata/minio-16drives"

// minioDrives unpacks the fixture into dir/drive1..16 and returns the
// drive paths (in name order) and MinIO's answers.
func minioDrives(t *testing.T, dir string) ([]string, *miniofixture.Expected) {
	t.Helper()
	exp, err := miniofixture.Load(minioFixture)
	if err != nil {
		t.Fatal(err)
	}
	if err := miniofixture.Unpack(minioFixture, dir); err != nil {
		t.Fatalf("unpack fixture: %v", err)
	}
	var drives []string
	for i := 1; i <= exp.Drives; i++ {
		drives = append(drives, filepath.Join(dir, fmt.Sprintf("drive%d", i)))
	}
	return drives, exp
}

// treeSum fingerprints every entry under dir: path, type, size, mode,
// modification time and content.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %d %d\n", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func runMigrate(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(binary, append([]string{"migrate", "from-minio"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("migrate %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestMigrateFromMinIO adopts the MinIO fixture's drives in place with
// the binary, starts shardstore on them and checks every version and
// listing against MinIO's recorded answers, degraded reads with 4 drives
// gone, a clean deep heal, and --finish.
func TestMigrateFromMinIO(t *testing.T) {
	singleNodeOnly(t, "the fixture is one node's 16 drives")
	dir := t.TempDir()
	drives, exp := minioDrives(t, dir)

	// A dry run writes nothing.
	before := treeSum(t, dir)
	out := runMigrate(t, append([]string{"--dry-run"}, drives...)...)
	if after := treeSum(t, dir); after != before {
		t.Fatalf("--dry-run changed the drives\n%s", out)
	}
	wantVersions := 0
	for _, b := range exp.Buckets {
		wantVersions += len(b.Versions)
	}
	if !strings.Contains(out, fmt.Sprintf("would adopt %d buckets", len(exp.Buckets))) ||
		!strings.Contains(out, fmt.Sprintf(" %d versions,", wantVersions)) || !strings.Contains(out, "refused: 0") {
		t.Fatalf("dry run report, want %d buckets and %d versions, none refused:\n%s", len(exp.Buckets), wantVersions, out)
	}

	// The arguments in another order: format.json decides positions.
	shuffled := append([]string(nil), drives...)
	rand.New(rand.NewSource(7)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	out = runMigrate(t, shuffled...)
	t.Logf("adoption:\n%s", out)
	if !strings.Contains(out, fmt.Sprintf("adopted %d buckets", len(exp.Buckets))) || !strings.Contains(out, "refused: 0") {
		t.Fatalf("adoption report:\n%s", out)
	}
	// MinIO's files are still there until --finish.
	if _, err := os.Stat(filepath.Join(drives[0], "plain", "small.txt", "xl.meta")); err != nil {
		t.Fatalf("MinIO's xl.meta gone before --finish: %v", err)
	}

	driveArg := filepath.Join(dir, "drive{1...16}")
	s := launch(t, dir, serverEnv(), []string{"server", "--console-address", "", "--address", "127.0.0.1:0", driveArg})
	checkAdopted(t, s, exp, true)
	// The adopted bucket policy is enforced: it lets anyone read
	// plain/public/*, and nothing else.
	for path, want := range map[string]int{"/plain/public/readme.txt": 200, "/plain/small.txt": 403} {
		resp, err := http.Get(s.endpoint + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("anonymous GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	heal := func(s *server) string {
		cmd := exec.Command(binary, "admin", "heal", "--deep", "--quiet")
		cmd.Env = append(os.Environ(), "SHARDSTORE_ENDPOINT="+s.endpoint,
			"SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("admin heal --deep: %v\n%s", err, out)
		}
		return string(out)
	}
	out = heal(s)
	if !regexp.MustCompile(`objects damaged\s+0\b`).MatchString(out) || !regexp.MustCompile(`failed\s+0\b`).MatchString(out) {
		t.Fatalf("deep heal of the adopted drives is not clean:\n%s", out)
	}
	// The deep check verifies the adopted chunks with MinIO's checksum:
	// a flipped byte in an adopted part file is found and healed.
	ents, err := os.ReadDir(filepath.Join(drives[0], "plain", "multi-block.bin"))
	if err != nil || len(ents) != 2 {
		t.Fatalf("plain/multi-block.bin on drive1: %v %v", ents, err)
	}
	dataID := ""
	for _, e := range ents {
		if e.IsDir() {
			dataID = e.Name()
		}
	}
	shard := filepath.Join(drives[0], ".shardstore.sys", "data", dataID[:2], dataID+".1")
	raw, err := os.ReadFile(shard)
	if err != nil {
		t.Fatalf("adopted shard file: %v", err)
	}
	raw[32+100] ^= 0x01
	if err := os.Remove(shard); err != nil { // keep MinIO's name of it intact
		t.Fatal(err)
	}
	if err := os.WriteFile(shard, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out = heal(s)
	if !regexp.MustCompile(`objects damaged\s+1\b`).MatchString(out) {
		t.Fatalf("deep heal did not find the corrupted adopted chunk:\n%s", out)
	}
	out = heal(s)
	if !regexp.MustCompile(`objects damaged\s+0\b`).MatchString(out) {
		t.Fatalf("second deep heal not clean:\n%s", out)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	// Four drives gone: every version still reads.
	gone := filepath.Join(dir, "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{2, 5, 11, 16} {
		if err := os.Rename(drives[i-1], filepath.Join(gone, filepath.Base(drives[i-1]))); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(drives[i-1], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s = launch(t, dir, serverEnv(), []string{"server", "--console-address", "", "--address", "127.0.0.1:0", driveArg})
	checkAdopted(t, s, exp, false)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{2, 5, 11, 16} {
		os.RemoveAll(drives[i-1])
		if err := os.Rename(filepath.Join(gone, filepath.Base(drives[i-1])), drives[i-1]); err != nil {
			t.Fatal(err)
		}
	}

	// --finish removes MinIO's names; the data stays readable.
	out = runMigrate(t, append([]string{"--finish"}, drives...)...)
	if _, err := os.Stat(filepath.Join(drives[0], "plain", "small.txt")); err == nil {
		t.Fatalf("--finish left MinIO's key directory\n%s", out)
	}
	s = launch(t, dir, serverEnv(), []string{"server", "--console-address", "", "--address", "127.0.0.1:0", driveArg})
	checkAdopted(t, s, exp, true)
}

// checkAdopted compares what s serves with MinIO's answers: every
// version byte-identical by version id, ListObjectVersions, HEAD, and
// (when full) listings and bucket configuration.
func checkAdopted(t *testing.T, s *server, exp *miniofixture.Expected, full bool) {
	t.Helper()
	c := s.root()
	cx := ctx(t)
	if full {
		lb, err := c.ListBuckets(cx, &s3.ListBucketsInput{})
		if err != nil {
			t.Fatalf("ListBuckets: %v", err)
		}
		var got, want []string
		for _, b := range lb.Buckets {
			got = append(got, aws.ToString(b.Name)+" "+b.CreationDate.UTC().Format("2006-01-02T15:04:05Z"))
		}
		for _, b := range exp.Buckets {
			created, err := time.Parse(time.RFC3339Nano, b.Created)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, b.Name+" "+created.UTC().Format("2006-01-02T15:04:05Z"))
		}
		sort.Strings(want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("ListBuckets %v, want %v", got, want)
		}
	}
	for _, b := range exp.Buckets {
		lv, err := c.ListObjectVersions(cx, &s3.ListObjectVersionsInput{Bucket: aws.String(b.Name)})
		if err != nil {
			t.Fatalf("ListObjectVersions %s: %v", b.Name, err)
		}
		type row struct {
			key, id, etag string
			latest, dm    bool
			size          int64
			mod           string
		}
		var got, want []row
		for _, v := range lv.Versions {
			got = append(got, row{aws.ToString(v.Key), aws.ToString(v.VersionId), aws.ToString(v.ETag), aws.ToBool(v.IsLatest), false,
				aws.ToInt64(v.Size), v.LastModified.UTC().Format("2006-01-02T15:04:05.000Z")})
		}
		for _, v := range lv.DeleteMarkers {
			got = append(got, row{aws.ToString(v.Key), aws.ToString(v.VersionId), "", aws.ToBool(v.IsLatest), true, 0,
				v.LastModified.UTC().Format("2006-01-02T15:04:05.000Z")})
		}
		for _, v := range b.Versions {
			etag := v.ETag
			if v.DeleteMarker {
				etag = ""
			}
			want = append(want, row{v.Key, v.VersionID, etag, v.IsLatest, v.DeleteMarker, v.Size, v.LastModified})
		}
		order := func(rs []row) {
			sort.Slice(rs, func(i, j int) bool {
				if rs[i].key != rs[j].key {
					return rs[i].key < rs[j].key
				}
				return rs[i].mod > rs[j].mod
			})
		}
		order(got)
		order(want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("bucket %s: ListObjectVersions\n got %v\nwant %v", b.Name, got, want)
		}
		for _, v := range b.Versions {
			if v.DeleteMarker {
				continue
			}
			in := &s3.GetObjectInput{Bucket: aws.String(b.Name), Key: aws.String(v.Key), VersionId: aws.String(v.VersionID)}
			r, err := c.GetObject(cx, in)
			if err != nil {
				t.Errorf("GET %s/%s?versionId=%s: %v", b.Name, v.Key, v.VersionID, err)
				continue
			}
			sum := sha256.Sum256(mustRead(t, r.Body))
			if hex.EncodeToString(sum[:]) != v.SHA256 {
				t.Errorf("GET %s/%s?versionId=%s: content differs (sha256 %x, want %s)", b.Name, v.Key, v.VersionID, sum, v.SHA256)
			}
			if !full || v.Head == nil {
				continue
			}
			h, err := c.HeadObject(cx, &s3.HeadObjectInput{Bucket: aws.String(b.Name), Key: aws.String(v.Key), VersionId: aws.String(v.VersionID)})
			if err != nil {
				t.Errorf("HEAD %s/%s: %v", b.Name, v.Key, err)
				continue
			}
			w := v.Head
			retain := ""
			if h.ObjectLockRetainUntilDate != nil {
				retain = h.ObjectLockRetainUntilDate.UTC().Format("2006-01-02T15:04:05.000Z")
			}
			gotHead := fmt.Sprintf("etag=%s len=%d mod=%s type=%s disp=%s enc=%s lang=%s cache=%s meta=%v lock=%s/%s hold=%s tags=%d",
				aws.ToString(h.ETag), aws.ToInt64(h.ContentLength), h.LastModified.UTC().Format("2006-01-02T15:04:05.000Z"),
				aws.ToString(h.ContentType), aws.ToString(h.ContentDisposition), aws.ToString(h.ContentEncoding),
				aws.ToString(h.ContentLanguage), aws.ToString(h.CacheControl), h.Metadata, h.ObjectLockMode, retain,
				h.ObjectLockLegalHoldStatus, aws.ToInt32(h.TagCount))
			wantHead := fmt.Sprintf("etag=%s len=%d mod=%s type=%s disp=%s enc=%s lang=%s cache=%s meta=%v lock=%s/%s hold=%s tags=%d",
				w.ETag, w.ContentLength, w.LastModified, w.ContentType, w.ContentDisposition, w.ContentEncoding,
				w.ContentLanguage, w.CacheControl, lowerKeys(w.Metadata), w.LockMode, w.LockRetainUntil, w.LegalHold, w.TagCount)
			if gotHead != wantHead {
				t.Errorf("HEAD %s/%s?versionId=%s\n got %s\nwant %s", b.Name, v.Key, v.VersionID, gotHead, wantHead)
			}
			if len(w.Checksums) > 0 {
				hc, err := c.HeadObject(cx, &s3.HeadObjectInput{Bucket: aws.String(b.Name), Key: aws.String(v.Key),
					VersionId: aws.String(v.VersionID), ChecksumMode: types.ChecksumModeEnabled})
				if err != nil {
					t.Errorf("HEAD %s/%s with checksums: %v", b.Name, v.Key, err)
					continue
				}
				got := map[string]string{"type": string(hc.ChecksumType)}
				for name, val := range map[string]*string{"CRC32": hc.ChecksumCRC32, "CRC32C": hc.ChecksumCRC32C,
					"CRC64NVME": hc.ChecksumCRC64NVME, "SHA1": hc.ChecksumSHA1, "SHA256": hc.ChecksumSHA256} {
					if val != nil {
						got[name] = *val
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(w.Checksums) {
					t.Errorf("HEAD %s/%s checksums %v, want %v", b.Name, v.Key, got, w.Checksums)
				}
			}
		}
		if !full {
			continue
		}
		lo, err := c.ListObjectsV2(cx, &s3.ListObjectsV2Input{Bucket: aws.String(b.Name)})
		if err != nil {
			t.Fatalf("ListObjectsV2 %s: %v", b.Name, err)
		}
		var gotKeys, wantKeys []string
		for _, o := range lo.Contents {
			gotKeys = append(gotKeys, fmt.Sprintf("%s %s %d", aws.ToString(o.Key), aws.ToString(o.ETag), aws.ToInt64(o.Size)))
		}
		for _, o := range b.Objects {
			wantKeys = append(wantKeys, fmt.Sprintf("%s %s %d", o.Key, o.ETag, o.Size))
		}
		if fmt.Sprint(gotKeys) != fmt.Sprint(wantKeys) {
			t.Errorf("bucket %s: ListObjectsV2\n got %v\nwant %v", b.Name, gotKeys, wantKeys)
		}
		vr, err := c.GetBucketVersioning(cx, &s3.GetBucketVersioningInput{Bucket: aws.String(b.Name)})
		if err != nil {
			t.Fatalf("GetBucketVersioning %s: %v", b.Name, err)
		}
		if string(vr.Status) != b.Versioning {
			t.Errorf("bucket %s: versioning %q, want %q", b.Name, vr.Status, b.Versioning)
		}
		if b.Policy != "" {
			p, err := c.GetBucketPolicy(cx, &s3.GetBucketPolicyInput{Bucket: aws.String(b.Name)})
			if err != nil || !jsonEqual(aws.ToString(p.Policy), b.Policy) {
				t.Errorf("bucket %s: policy %v (%v), want %s", b.Name, aws.ToString(p.Policy), err, b.Policy)
			}
		}
		if len(b.Tags) > 0 {
			tg, err := c.GetBucketTagging(cx, &s3.GetBucketTaggingInput{Bucket: aws.String(b.Name)})
			if err != nil {
				t.Errorf("bucket %s: tagging: %v", b.Name, err)
			} else {
				got := map[string]string{}
				for _, tag := range tg.TagSet {
					got[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
				}
				if fmt.Sprint(got) != fmt.Sprint(b.Tags) {
					t.Errorf("bucket %s: tags %v, want %v", b.Name, got, b.Tags)
				}
			}
		}
		if len(b.LifecycleRules) > 0 {
			lc, err := c.GetBucketLifecycleConfiguration(cx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(b.Name)})
			var ids []string
			if err == nil {
				for _, r := range lc.Rules {
					ids = append(ids, aws.ToString(r.ID))
				}
			}
			if fmt.Sprint(ids) != fmt.Sprint(b.LifecycleRules) {
				t.Errorf("bucket %s: lifecycle rules %v (%v), want %v", b.Name, ids, err, b.LifecycleRules)
			}
		}
		if b.ObjectLock != "" {
			ol, err := c.GetObjectLockConfiguration(cx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String(b.Name)})
			if err != nil || string(ol.ObjectLockConfiguration.ObjectLockEnabled) != b.ObjectLock {
				t.Errorf("bucket %s: object lock %v, want %s", b.Name, err, b.ObjectLock)
			}
		}
	}
}

func lowerKeys(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// TestMigrateFromMinIOKilled kills the adoption (SIGKILL, from inside
// the process at a chosen write: a hard link, a shard file or an index
// batch, SHARDSTORE_TEST_MIGRATE_CRASH_AT) at random points, resumes it
// by running it again, and checks that every version was adopted and
// reads back, and that the deep heal is clean.
func TestMigrateFromMinIOKilled(t *testing.T) {
	singleNodeOnly(t, "the fixture is one node's 16 drives")
	dir := t.TempDir()
	drives, exp := minioDrives(t, dir)
	rng := rand.New(rand.NewSource(migrateKillSeed(t)))
	// Each run is killed at a later write than the one before, until a
	// run completes: the fixture's adoption makes 96 links, 16 shard
	// files (inline shards over shardstore's limit) and a batch per drive
	// and bucket, about 170 writes, and a run redoes what its
	// predecessors did.
	out, kills := migrateKilled(t, rng, 10, 30, append([]string{"migrate", "from-minio"}, drives...), func(kills int) {
		if kills == 1 {
			serverRefuses(t, dir)
		}
	})
	t.Logf("%d kills, then:\n%s", kills, out)
	if kills < 3 {
		t.Fatalf("only %d runs were killed: the crash points missed the adoption", kills)
	}
	if !strings.Contains(out, "refused: 0") {
		t.Fatalf("resumed adoption refused something:\n%s", out)
	}
	if again := runMigrate(t, drives...); !strings.Contains(again, "already adopted") {
		t.Fatalf("a completed adoption was redone:\n%s", again)
	}
	s := launch(t, dir, serverEnv(), []string{"server", "--console-address", "", "--address", "127.0.0.1:0", filepath.Join(dir, "drive{1...16}")})
	checkAdopted(t, s, exp, true)
	cmd := exec.Command(binary, "admin", "heal", "--deep", "--quiet")
	cmd.Env = append(os.Environ(), "SHARDSTORE_ENDPOINT="+s.endpoint,
		"SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass)
	hout, err := cmd.CombinedOutput()
	if err != nil || !regexp.MustCompile(`objects damaged\s+0\b`).MatchString(string(hout)) {
		t.Fatalf("deep heal after the interrupted adoption: %v\n%s", err, hout)
	}
}

// TestMigrateFromMinIORefuses checks what adoption refuses: a set given
// in part (before anything is written), and a key whose xl.meta is of a
// format version it does not know, which is listed and left untouched
// (by --finish too) while the rest is adopted.
func TestMigrateFromMinIORefuses(t *testing.T) {
	singleNodeOnly(t, "the fixture is one node's 16 drives")
	dir := t.TempDir()
	drives, _ := minioDrives(t, dir)
	before := treeSum(t, dir)
	out, err := exec.Command(binary, append([]string{"migrate", "from-minio"}, drives[:15]...)...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "give every drive of it") {
		t.Fatalf("adopting 15 of 16 drives: %v\n%s", err, out)
	}
	if treeSum(t, dir) != before {
		t.Fatal("a refused adoption wrote to the drives")
	}
	var metas [][]byte
	for _, d := range drives {
		p := filepath.Join(d, "plain", "small.txt", "xl.meta")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[4] = 2 // major version 2: newer than any this release knows
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		metas = append(metas, b)
	}
	out2 := runMigrate(t, drives...)
	if !strings.Contains(out2, "refused: 1\n") || !strings.Contains(out2, "refused plain/small.txt:") {
		t.Fatalf("adoption with one unknown xl.meta:\n%s", out2)
	}
	// The refused key is not served; a client writes it through
	// shardstore, and --finish still leaves MinIO's files of it alone.
	s := launch(t, dir, serverEnv(), []string{"server", "--console-address", "", "--address", "127.0.0.1:0", filepath.Join(dir, "drive{1...16}")})
	c := s.root()
	if _, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String("plain"), Key: aws.String("small.txt")}); err == nil {
		t.Fatal("the refused key is served")
	}
	if _, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String("plain"), Key: aws.String("empty")}); err != nil {
		t.Fatalf("an adopted key beside the refused one: %v", err)
	}
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("plain"), Key: aws.String("small.txt"), Body: strings.NewReader("new")}); err != nil {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	out3 := runMigrate(t, append([]string{"--finish"}, drives...)...)
	for i, d := range drives {
		b, err := os.ReadFile(filepath.Join(d, "plain", "small.txt", "xl.meta"))
		if err != nil || string(b) != string(metas[i]) {
			t.Fatalf("refused key's xl.meta on %s changed or removed by adoption or --finish: %v\n%s", d, err, out3)
		}
	}
	if _, err := os.Stat(filepath.Join(drives[0], "plain", "empty")); err == nil {
		t.Fatalf("--finish left MinIO's files of an adopted key\n%s", out3)
	}
	s = launch(t, dir, serverEnv(), []string{"server", "--console-address", "", "--address", "127.0.0.1:0", filepath.Join(dir, "drive{1...16}")})
	if got := string(mustRead(t, mustGet(t, s.root(), "plain", "small.txt"))); got != "new" {
		t.Fatalf("the key written through shardstore reads %q", got)
	}
}

func mustGet(t *testing.T, c *s3.Client, bucket, key string) io.ReadCloser {
	t.Helper()
	r, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("GET %s/%s: %v", bucket, key, err)
	}
	return r.Body
}

// serverRefuses checks that the server does not start on dir's drives
// while an adoption is interrupted.
func serverRefuses(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command(binary, "server", "--console-address", "", "--address", "127.0.0.1:0", filepath.Join(dir, "drive{1...16}"))
	cmd.Env = append(os.Environ(), serverEnv()...)
	serverbin.DieWithParent(cmd)
	done := make(chan []byte, 1)
	go func() { b, _ := cmd.CombinedOutput(); done <- b }()
	select {
	case b := <-done:
		if !strings.Contains(string(b), "adoption of MinIO's drives") {
			t.Fatalf("server on an interrupted adoption:\n%s", b)
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the server started on an interrupted adoption")
	}
}

// migrateKilled runs `shardstore ARGS...` killed at a chosen write
// (SHARDSTORE_TEST_MIGRATE_CRASH_AT) until a run completes: the first at
// a random write in 1..firstMax, each next one 1..stepMax later, so that
// every run gets further than the one before. onKill, when not nil, runs
// after each kill with the kills so far. It returns the completing run's
// output and how many runs were killed.
func migrateKilled(t *testing.T, rng *rand.Rand, firstMax, stepMax int, args []string, onKill func(kills int)) (string, int) {
	t.Helper()
	kills := 0
	for at := 1 + rng.Intn(firstMax); ; at += 1 + rng.Intn(stepMax) {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), fmt.Sprintf("SHARDSTORE_TEST_MIGRATE_CRASH_AT=%d", at))
		b, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
			kills++
			t.Logf("killed at write %d", at)
			if onKill != nil {
				onKill(kills)
			}
			continue
		}
		if err != nil {
			t.Fatalf("migrate (crash at %d): %v\n%s", at, err, b)
		}
		return string(b), kills
	}
}
