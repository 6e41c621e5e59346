package e2e

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/shardstore/shardstore/internal/minioformat/miniofixture"
)

// The second MinIO fixture: MINIO_COMPRESSION_ENABLE=on, with compressed
// objects and versions (adopted by copy), objects MinIO left
// uncompressed (linked), an unfinished upload of plain parts (adopted)
// and one of compressed parts (refused).
const minioCompressedFixture = "../../internal/minioformat/testdata/minio-compressed"

func minioDrivesOf(t *testing.T, fixture, dir string) ([]string, *miniofixture.Expected) {
	t.Helper()
	exp, err := miniofixture.Load(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if err := miniofixture.Unpack(fixture, dir); err != nil {
		t.Fatalf("unpack fixture: %v", err)
	}
	var drives []string
	for i := 1; i <= exp.Drives; i++ {
		drives = append(drives, filepath.Join(dir, fmt.Sprintf("drive%d", i)))
	}
	return drives, exp
}

// uploadKeysFile writes the fixture's unfinished uploads' keys as an
// operator would list them (--upload-keys).
func uploadKeysFile(t *testing.T, dir string, exp *miniofixture.Expected) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# keys of unfinished uploads, from mc ls --incomplete before MinIO was stopped\n")
	for _, bk := range exp.Buckets {
		for _, u := range bk.Uploads {
			fmt.Fprintf(&b, "%s/%s\n", bk.Name, u.Key)
		}
	}
	p := filepath.Join(dir, "upload-keys")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// migrateKillSeed is the seed of a kill test's random crash points:
// SHARDSTORE_KILL_SEED (as in test/faults) to replay a run, else the
// time; it is logged either way.
func migrateKillSeed(t *testing.T) int64 {
	seed := time.Now().UnixNano()
	if v := os.Getenv("SHARDSTORE_KILL_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("SHARDSTORE_KILL_SEED=%q: %v", v, err)
		}
		seed = n
	}
	t.Logf("seed %d (replay with SHARDSTORE_KILL_SEED=%d)", seed, seed)
	return seed
}

func deepHeal(t *testing.T, s *server) string {
	t.Helper()
	cmd := exec.Command(binary, "admin", "heal", "--deep", "--quiet")
	cmd.Env = append(os.Environ(), "SHARDSTORE_ENDPOINT="+s.endpoint,
		"SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("admin heal --deep: %v\n%s", err, out)
	}
	return string(out)
}

func healClean(t *testing.T, s *server) {
	t.Helper()
	out := deepHeal(t, s)
	if !regexp.MustCompile(`objects damaged\s+0\b`).MatchString(out) || !regexp.MustCompile(`failed\s+0\b`).MatchString(out) {
		t.Fatalf("deep heal of the adopted drives is not clean:\n%s", out)
	}
}

// TestMigrateFromMinIOCompressed adopts the compressed fixture: the
// compressed versions are copied (and read back byte-identical, with
// MinIO's ETags, ids and times), the plain ones linked, the upload of
// plain parts is adopted with MinIO's upload id (listed, its parts with
// ETags and sizes, a part added, completed, read back), the compressed
// upload is refused and left; then degraded reads with 4 drives gone,
// a clean deep heal, and --finish.
func TestMigrateFromMinIOCompressed(t *testing.T) {
	singleNodeOnly(t, "the fixture is one node's 16 drives")
	dir := t.TempDir()
	drives, exp := minioDrivesOf(t, minioCompressedFixture, dir)
	keys := uploadKeysFile(t, dir, exp)

	before := treeSum(t, dir)
	out := runMigrate(t, append([]string{"--dry-run", "--upload-keys", keys}, drives...)...)
	if after := treeSum(t, dir); after != before {
		t.Fatalf("--dry-run changed the drives\n%s", out)
	}
	if !strings.Contains(out, "of them compressed by MinIO (decompressed, written uncompressed): 8 versions") {
		t.Fatalf("dry run report:\n%s", out)
	}
	out = runMigrate(t, append([]string{"--upload-keys", keys}, drives...)...)
	t.Logf("adoption:\n%s", out)
	checkCompressedReport(t, out)

	driveArg := filepath.Join(dir, "drive{1...16}")
	s := launch(t, dir, serverEnv(), []string{"server", "--console-address", "", "--address", "127.0.0.1:0", driveArg})
	checkAdopted(t, s, exp, true)
	healClean(t, s)
	checkAdoptedUploads(t, s, exp)
	exp = withCompleted(t, s, exp)
	checkAdopted(t, s, exp, true)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	// Four drives gone: every version, the copied ones included, still
	// reads, and so does the completed upload.
	gone := filepath.Join(dir, "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	lost := []int{1, 6, 9, 14}
	for _, i := range lost {
		if err := os.Rename(drives[i-1], filepath.Join(gone, filepath.Base(drives[i-1]))); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(drives[i-1], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s = launch(t, dir, serverEnv(), []string{"server", "--console-address", "", "--address", "127.0.0.1:0", driveArg})
	checkAdopted(t, s, exp, false)
	checkCompleted(t, s, exp)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	for _, i := range lost {
		os.RemoveAll(drives[i-1])
		if err := os.Rename(filepath.Join(gone, filepath.Base(drives[i-1])), drives[i-1]); err != nil {
			t.Fatal(err)
		}
	}

	// --finish removes MinIO's names of the adopted keys and upload, and
	// leaves the refused upload.
	out = runMigrate(t, append([]string{"--finish"}, drives...)...)
	if !strings.Contains(out, "and 1 adopted uploads") {
		t.Fatalf("--finish report:\n%s", out)
	}
	left, _ := filepath.Glob(filepath.Join(drives[0], ".minio.sys", "multipart", "*", "*"))
	if len(left) != 1 {
		t.Fatalf("after --finish, MinIO upload directories %v, want only the refused one", left)
	}
	s = launch(t, dir, serverEnv(), []string{"server", "--console-address", "", "--address", "127.0.0.1:0", driveArg})
	checkAdopted(t, s, exp, true)
	checkCompleted(t, s, exp)
	healClean(t, s)
}

func checkCompressedReport(t *testing.T, out string) {
	t.Helper()
	for _, want := range []string{
		"refused: 1\n",
		"refused comp/upload.txt: unfinished upload",
		"compressed: its parts are S2 streams",
		"uploads: unfinished multipart uploads adopted: 1 (2 parts linked)",
		"of them compressed by MinIO (decompressed, written uncompressed): 8 versions",
		"counted 9 keys",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("adoption report lacks %q:\n%s", want, out)
		}
	}
}

// checkAdoptedUploads: the plain upload is listed with MinIO's id and
// its parts; a third part is uploaded and the upload completed; the
// compressed one is not listed.
func checkAdoptedUploads(t *testing.T, s *server, exp *miniofixture.Expected) {
	t.Helper()
	c := s.root()
	cx := ctx(t)
	want := plainUpload(t, exp)
	lu, err := c.ListMultipartUploads(cx, &s3.ListMultipartUploadsInput{Bucket: aws.String("comp")})
	if err != nil {
		t.Fatalf("ListMultipartUploads: %v", err)
	}
	if len(lu.Uploads) != 1 || aws.ToString(lu.Uploads[0].Key) != "upload.mp4" || aws.ToString(lu.Uploads[0].UploadId) != want.UploadID {
		var got []string
		for _, u := range lu.Uploads {
			got = append(got, aws.ToString(u.Key)+" "+aws.ToString(u.UploadId))
		}
		t.Fatalf("uploads %v, want upload.mp4 %s only", got, want.UploadID)
	}
	lp, err := c.ListParts(cx, &s3.ListPartsInput{Bucket: aws.String("comp"), Key: aws.String("upload.mp4"), UploadId: aws.String(want.UploadID)})
	if err != nil {
		t.Fatalf("ListParts: %v", err)
	}
	var got, wantParts []string
	for _, p := range lp.Parts {
		got = append(got, fmt.Sprintf("%d %s %d", aws.ToInt32(p.PartNumber), aws.ToString(p.ETag), aws.ToInt64(p.Size)))
	}
	for i, n := range want.Parts {
		wantParts = append(wantParts, fmt.Sprintf("%d %s %d", n, want.PartETags[i], want.PartSizes[i]))
	}
	if fmt.Sprint(got) != fmt.Sprint(wantParts) {
		t.Fatalf("ListParts\n got %v\nwant %v", got, wantParts)
	}
	third := bytes.Repeat([]byte("part three, uploaded to shardstore\n"), 1000)
	up, err := c.UploadPart(cx, &s3.UploadPartInput{Bucket: aws.String("comp"), Key: aws.String("upload.mp4"), UploadId: aws.String(want.UploadID),
		PartNumber: aws.Int32(3), Body: bytes.NewReader(third)})
	if err != nil {
		t.Fatalf("UploadPart 3 of the adopted upload: %v", err)
	}
	// Part 2 is 1 MiB: too small for a middle part, so the object is
	// parts 1 and 3 (the adopted part 1 first) and part 2 is dropped.
	done := []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: aws.String(want.PartETags[0])}, {PartNumber: aws.Int32(3), ETag: up.ETag}}
	res, err := c.CompleteMultipartUpload(cx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("comp"), Key: aws.String("upload.mp4"),
		UploadId: aws.String(want.UploadID), MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		t.Fatalf("CompleteMultipartUpload of the adopted upload: %v", err)
	}
	if etag := aws.ToString(res.ETag); etag != completedETag(t, want.PartETags[0], aws.ToString(up.ETag)) {
		t.Errorf("completed ETag %s", etag)
	}
	checkCompleted(t, s, exp)
}

// plainUpload is the fixture's unfinished upload of plain parts.
func plainUpload(t *testing.T, exp *miniofixture.Expected) miniofixture.Upload {
	t.Helper()
	for _, b := range exp.Buckets {
		for _, u := range b.Uploads {
			if b.Name == "comp" && u.Key == "upload.mp4" && len(u.PartETags) == 2 {
				return u
			}
		}
	}
	t.Fatal("fixture lacks comp/upload.mp4 with two parts")
	return miniofixture.Upload{}
}

// withCompleted is exp with the completed upload comp/upload.mp4 among
// the objects and versions.
func withCompleted(t *testing.T, s *server, exp *miniofixture.Expected) *miniofixture.Expected {
	t.Helper()
	h, err := s.root().HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String("comp"), Key: aws.String("upload.mp4")})
	if err != nil {
		t.Fatalf("HEAD the completed upload: %v", err)
	}
	r, err := s.root().GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("comp"), Key: aws.String("upload.mp4")})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(mustRead(t, r.Body))
	out := *exp
	out.Buckets = append([]miniofixture.Bucket(nil), exp.Buckets...)
	for i := range out.Buckets {
		b := &out.Buckets[i]
		if b.Name != "comp" {
			continue
		}
		lo, err := s.root().ListObjectsV2(ctx(t), &s3.ListObjectsV2Input{Bucket: aws.String("comp"), Prefix: aws.String("upload.mp4")})
		if err != nil || len(lo.Contents) != 1 {
			t.Fatalf("list the completed upload: %v", err)
		}
		mod := lo.Contents[0].LastModified.UTC().Format("2006-01-02T15:04:05.000Z")
		b.Objects = append(append([]miniofixture.ListEntry(nil), b.Objects...), miniofixture.ListEntry{Key: "upload.mp4",
			ETag: aws.ToString(h.ETag), Size: aws.ToInt64(h.ContentLength), LastModified: mod})
		sort.Slice(b.Objects, func(i, j int) bool { return b.Objects[i].Key < b.Objects[j].Key })
		b.Versions = append(append([]miniofixture.Version(nil), b.Versions...), miniofixture.Version{Key: "upload.mp4", VersionID: "null",
			IsLatest: true, ETag: aws.ToString(h.ETag), Size: aws.ToInt64(h.ContentLength), LastModified: mod, SHA256: hex.EncodeToString(sum[:])})
	}
	return &out
}

func completedETag(t *testing.T, etags ...string) string {
	h := md5.New()
	for _, e := range etags {
		b, err := hex.DecodeString(strings.Trim(e, `"`))
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	return fmt.Sprintf(`"%x-%d"`, h.Sum(nil), len(etags))
}

// checkCompleted reads the completed upload back: part 1 (adopted from
// MinIO) has its ETag's MD5, part 3 the bytes uploaded.
func checkCompleted(t *testing.T, s *server, exp *miniofixture.Expected) {
	t.Helper()
	c := s.root()
	r, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("comp"), Key: aws.String("upload.mp4")})
	if err != nil {
		t.Fatalf("GET the completed upload: %v", err)
	}
	body := mustRead(t, r.Body)
	third := bytes.Repeat([]byte("part three, uploaded to shardstore\n"), 1000)
	if len(body) != 5<<20+len(third) {
		t.Fatalf("completed upload: %d bytes", len(body))
	}
	sum := md5.Sum(body[:5<<20])
	if got, want := `"`+hex.EncodeToString(sum[:])+`"`, plainUpload(t, exp).PartETags[0]; got != want {
		t.Errorf("part 1 of the completed upload has MD5 %s, its ETag is %s", got, want)
	}
	if !bytes.Equal(body[5<<20:], third) {
		t.Errorf("part 3 of the completed upload differs")
	}
}

// TestMigrateFromMinIOCompressedKilled kills the adoption of the
// compressed fixture at random writes (links, copied shard files, index
// batches, upload records; the seed is logged), resumes it, and checks
// that nothing was lost: every version reads back, the upload is there
// and the deep heal is clean.
func TestMigrateFromMinIOCompressedKilled(t *testing.T) {
	singleNodeOnly(t, "the fixture is one node's 16 drives")
	dir := t.TempDir()
	drives, exp := minioDrivesOf(t, minioCompressedFixture, dir)
	keys := uploadKeysFile(t, dir, exp)
	seed := migrateKillSeed(t)
	rng := rand.New(rand.NewSource(seed))
	// The adoption makes about 16 shard files per copied part, 32 links
	// for the upload, a batch per drive and bucket and 16 upload
	// batches: ~250 writes. Each run dies at a later random one.
	out, kills := migrateKilled(t, rng, 20, 60, append([]string{"migrate", "from-minio", "--upload-keys", keys}, drives...), nil)
	t.Logf("%d kills, then:\n%s", kills, out)
	if kills < 2 {
		t.Fatalf("only %d runs were killed: the crash points missed the adoption", kills)
	}
	checkCompressedReport(t, out)
	s := launch(t, dir, serverEnv(), []string{"server", "--console-address", "", "--address", "127.0.0.1:0", filepath.Join(dir, "drive{1...16}")})
	checkAdopted(t, s, exp, true)
	healClean(t, s)
	checkAdoptedUploads(t, s, exp)
	checkAdopted(t, s, withCompleted(t, s, exp), true)
}
