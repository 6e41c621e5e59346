package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/minioformat/miniofixture"
	"github.com/shardstore/shardstore/internal/placement"
	"github.com/shardstore/shardstore/test/internal/serverbin"
)

// The multi-set MinIO fixture: a single-node MinIO on drive{1...32},
// which MinIO split into 2 erasure sets of 16 (internal/minioformat/
// testdata/README.md), and what it answered before it was stopped.
const minioSetsFixture = "../../internal/minioformat/testdata/minio-2sets"

const (
	setsDrives  = 32
	setsSetSize = 16
	setsParity  = 4
)

// minioSetsDrives unpacks the multi-set fixture into dir/drive1..32.
func minioSetsDrives(t *testing.T, dir string) ([]string, *miniofixture.Expected) {
	t.Helper()
	exp, err := miniofixture.Load(minioSetsFixture)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Drives != setsDrives {
		t.Fatalf("fixture of %d drives, want %d", exp.Drives, setsDrives)
	}
	if err := miniofixture.Unpack(minioSetsFixture, dir); err != nil {
		t.Fatalf("unpack fixture: %v", err)
	}
	var drives []string
	for i := 1; i <= setsDrives; i++ {
		drives = append(drives, filepath.Join(dir, fmt.Sprintf("drive%d", i)))
	}
	return drives, exp
}

// TestMigrateFromMinIOSets adopts a MinIO deployment of two erasure sets
// in place and serves it with `shardstore server drive{1...32}`: every
// key's MinIO files are in the set MinIO's placement (SipHash of the
// name) says and nowhere else, and shardstore finds it there; every
// version reads back byte-identical by version id (the S2-compressed
// ones, copied on their set's drives, too) and the listings equal
// MinIO's; the unfinished upload of each set (given with --upload-keys)
// is listed with MinIO's id and its parts, takes a new part and
// completes, one before --finish and one after it; with 4 drives of
// each set gone every version still reads; new objects and overwrites
// of adopted ones go to the same set (one copy each in the listings)
// and read back, across restarts and after --finish, which removes
// MinIO's upload directories in both sets.
func TestMigrateFromMinIOSets(t *testing.T) {
	singleNodeOnly(t, "the fixture is one node's 32 drives")
	dir := t.TempDir()
	drives, exp := minioSetsDrives(t, dir)

	// Every key is where MinIO's placement puts it, and every kind of
	// object is in each set: the fixture tests what it should.
	raw, err := os.ReadFile(filepath.Join(drives[0], ".minio.sys", "format.json"))
	if err != nil {
		t.Fatal(err)
	}
	dep := regexp.MustCompile(`"id":"([^"]+)"`).FindSubmatch(raw)
	if dep == nil {
		t.Fatalf("format.json: %s", raw)
	}
	placer, err := placement.New(placement.MinIOSipMod, string(dep[1]))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]map[int]bool{} // kind -> sets holding one
	for _, b := range exp.Buckets {
		for _, v := range b.Versions {
			set := placer.Set(b.Name, v.Key, 2)
			for i, d := range drives {
				_, err := os.Stat(filepath.Join(d, b.Name, filepath.FromSlash(placement.MinIOName(v.Key)), "xl.meta"))
				if (err == nil) != (i/setsSetSize == set) {
					t.Fatalf("%s/%s: xl.meta on %s: %v; MinIO's placement says set %d", b.Name, v.Key, d, err, set+1)
				}
			}
			kind := strings.Split(strings.TrimSuffix(v.Key, "/"), "-")[0]
			if v.DeleteMarker {
				kind = "delete marker"
			}
			if kinds[kind] == nil {
				kinds[kind] = map[int]bool{}
			}
			kinds[kind][set] = true
		}
	}
	for _, k := range []string{"empty", "small", "inline", "multi", "multipart", "folder", "compressed", "pre", "doc", "gone", "delete marker"} {
		if len(kinds[k]) != 2 {
			t.Errorf("fixture: %q objects in sets %v, want both", k, kinds[k])
		}
	}
	if t.Failed() {
		t.Fatalf("fixture kinds by set: %v", kinds)
	}
	ups := setsUploads(t, drives, exp, placer)

	before := treeSum(t, dir)
	out := runMigrate(t, append([]string{"--dry-run"}, drives...)...)
	if after := treeSum(t, dir); after != before {
		t.Fatalf("--dry-run changed the drives\n%s", out)
	}
	wantVersions := 0
	for _, b := range exp.Buckets {
		wantVersions += len(b.Versions)
	}
	if !strings.Contains(out, "2 erasure set(s) of 16 drives, objects placed by SIPMOD+PARITY") ||
		!strings.Contains(out, fmt.Sprintf(" %d versions,", wantVersions)) || !strings.Contains(out, "refused: 0") {
		t.Fatalf("dry run report, want 2 sets and %d versions, none refused:\n%s", wantVersions, out)
	}

	// The arguments shuffled across the sets: format.json decides, and
	// the report says in which order the server must get them.
	shuffled := append([]string(nil), drives...)
	rand.New(rand.NewSource(11)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	out = runMigrate(t, append([]string{"--upload-keys", uploadKeysFile(t, t.TempDir(), exp)}, shuffled...)...)
	t.Logf("adoption:\n%s", out)
	if !strings.Contains(out, fmt.Sprintf("counted %d keys on one drive of each erasure set", wantKeys(exp))) ||
		!strings.Contains(out, fmt.Sprintf("unfinished multipart uploads adopted: %d (%d parts linked)", len(ups), len(ups))) ||
		!strings.Contains(out, "of them compressed by MinIO (decompressed, written uncompressed): 2 versions") {
		t.Fatalf("adoption report: want every key counted, %d uploads adopted, 2 versions copied:\n%s", len(ups), out)
	}
	if !strings.Contains(out, fmt.Sprintf("adopted %d buckets", len(exp.Buckets))) || !strings.Contains(out, "refused: 0") ||
		!strings.Contains(out, "NOTE: the drives were given in another order") || !strings.Contains(out, "shardstore server "+strings.Join(drives, " ")) {
		t.Fatalf("adoption report:\n%s", out)
	}
	for i, d := range drives {
		f, err := drive.PeekFormat(d)
		if err != nil {
			t.Fatal(err)
		}
		if f.SetCount != 2 || f.SetSize != setsSetSize || f.SetIndex != i/setsSetSize || f.DriveIndex != i%setsSetSize ||
			f.Placement != string(placement.MinIOSipMod) || f.Parity != setsParity {
			t.Fatalf("%s: shardstore format %+v", d, f)
		}
	}

	// In the shuffled order the server would form other sets: it
	// refuses, naming a drive given in another slot.
	cmd := exec.Command(binary, append([]string{"server", "--console-address", "", "--address", "127.0.0.1:0"}, shuffled...)...)
	cmd.Env = append(os.Environ(), serverEnv()...)
	serverbin.DieWithParent(cmd)
	done := make(chan []byte, 1)
	go func() { b, _ := cmd.CombinedOutput(); done <- b }()
	select {
	case b := <-done:
		if !strings.Contains(string(b), "the drive order changed") {
			t.Fatalf("server on the drives in another order than MinIO's:\n%s", b)
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the server started on the drives in another order than MinIO's")
	}

	driveArg := filepath.Join(dir, "drive{1...32}")
	start := func() *server {
		return launch(t, dir, serverEnv(), []string{"server", "--console-address", "", "--address", "127.0.0.1:0", driveArg})
	}
	s := start()
	if !strings.Contains(s.stderr.String(), "Placement: objects go to sets by minio-sipmod") {
		t.Errorf("the server's start-up output does not say MinIO's placement is kept:\n%s", s.stderr.String())
	}
	checkAdopted(t, s, exp, true)
	checkSetsUploadsListed(t, s, ups)
	hcmd := exec.Command(binary, "admin", "heal", "--deep", "--quiet")
	hcmd.Env = append(os.Environ(), "SHARDSTORE_ENDPOINT="+s.endpoint, "SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass)
	if hout, err := hcmd.CombinedOutput(); err != nil || !regexp.MustCompile(`objects damaged\s+0\b`).MatchString(string(hout)) ||
		!regexp.MustCompile(`failed\s+0\b`).MatchString(string(hout)) {
		t.Fatalf("deep heal of the adopted drives: %v\n%s", err, hout)
	}
	if t.Failed() {
		return
	}

	// New objects and overwrites of adopted ones, in both sets.
	c := s.root()
	cx := ctx(t)
	written := map[string][]byte{} // bucket/key -> latest body
	var overwritten []string       // plain keys whose MinIO version is replaced
	put := func(bucket, key string, size int) {
		body := bytes.Repeat([]byte(fmt.Sprintf("%s/%s new %d;", bucket, key, size)), size/20+1)[:size]
		if _, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatalf("PUT %s/%s: %v", bucket, key, err)
		}
		written[bucket+"/"+key] = body
	}
	newBySet := map[int]int{}
	for i := range 8 {
		key := fmt.Sprintf("new/k%d.bin", i)
		put("plain", key, 1000+i*300_000)
		newBySet[placer.Set("plain", key, 2)]++
	}
	if len(newBySet) != 2 {
		t.Fatalf("new keys by set %v: want both sets", newBySet)
	}
	for _, b := range exp.Buckets {
		for _, o := range b.Objects {
			if b.Name == "plain" && (strings.HasPrefix(o.Key, "small-") || strings.HasPrefix(o.Key, "multi-block-") || strings.HasPrefix(o.Key, "folder-")) {
				put("plain", o.Key, 2*1024*1024+17)
				overwritten = append(overwritten, o.Key)
			}
			if b.Name == "versioned" && strings.HasPrefix(o.Key, "doc-") {
				put("versioned", o.Key, 40_000)
			}
		}
	}
	checkWritten := func(s *server) {
		t.Helper()
		c := s.root()
		for bk, body := range written {
			bucket, key, _ := strings.Cut(bk, "/")
			if got := mustRead(t, mustGet(t, c, bucket, key)); !bytes.Equal(got, body) {
				t.Errorf("GET %s after the write: %d bytes, want the %d written", bk, len(got), len(body))
			}
		}
		// Every MinIO version not overwritten still reads by its id.
		replaced := map[string]bool{}
		for _, k := range overwritten {
			replaced[k] = true
		}
		for _, b := range exp.Buckets {
			for _, v := range b.Versions {
				if v.DeleteMarker || (b.Name == "plain" && replaced[v.Key]) {
					continue
				}
				r, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String(b.Name), Key: aws.String(v.Key), VersionId: aws.String(v.VersionID)})
				if err != nil {
					t.Errorf("GET %s/%s?versionId=%s: %v", b.Name, v.Key, v.VersionID, err)
					continue
				}
				if sum := sha256.Sum256(mustRead(t, r.Body)); hex.EncodeToString(sum[:]) != v.SHA256 {
					t.Errorf("GET %s/%s?versionId=%s: content differs", b.Name, v.Key, v.VersionID)
				}
			}
			// One copy of each key: an object put in another set than
			// the adopted one would be listed twice.
			lv, err := c.ListObjectVersions(ctx(t), &s3.ListObjectVersionsInput{Bucket: aws.String(b.Name)})
			if err != nil {
				t.Fatal(err)
			}
			perKey := map[string]int{}
			for _, v := range lv.Versions {
				perKey[aws.ToString(v.Key)]++
			}
			for _, v := range lv.DeleteMarkers {
				perKey[aws.ToString(v.Key)]++
			}
			wantPer := map[string]int{}
			for _, v := range b.Versions {
				wantPer[v.Key]++
			}
			for bk := range written {
				bucket, key, _ := strings.Cut(bk, "/")
				if bucket != b.Name {
					continue
				}
				if b.Versioning == "" {
					wantPer[key] = 1 // unversioned: the overwrite replaced it
				} else {
					wantPer[key]++
				}
			}
			if fmt.Sprint(sortedCounts(perKey)) != fmt.Sprint(sortedCounts(wantPer)) {
				t.Errorf("bucket %s: versions per key\n got %v\nwant %v", b.Name, sortedCounts(perKey), sortedCounts(wantPer))
			}
		}
	}
	// The upload of set 1 completes before --finish, the one of set 2
	// after it (its part file then has shardstore's name only).
	written[ups[0].bucket+"/"+ups[0].up.Key] = completeSetsUpload(t, s, ups[0])
	checkWritten(s)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		return
	}

	// A restart, then 4 drives (the parity) of each set gone.
	s = start()
	checkWritten(s)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	lost := []int{1, 6, 12, 16, 17, 20, 27, 32}
	for _, i := range lost {
		if err := os.Rename(drives[i-1], filepath.Join(gone, filepath.Base(drives[i-1]))); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(drives[i-1], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s = start()
	checkWritten(s)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	for _, i := range lost {
		os.RemoveAll(drives[i-1])
		if err := os.Rename(filepath.Join(gone, filepath.Base(drives[i-1])), drives[i-1]); err != nil {
			t.Fatal(err)
		}
	}
	if t.Failed() {
		return
	}

	// --finish removes MinIO's names of the adopted keys in both sets.
	out = runMigrate(t, append([]string{"--finish"}, drives...)...)
	for _, d := range []int{0, setsSetSize} {
		left := 0
		filepath.WalkDir(filepath.Join(drives[d], "plain"), func(p string, e os.DirEntry, err error) error {
			if err == nil && e.Name() == "xl.meta" {
				left++
			}
			return nil
		})
		if left != 0 {
			t.Fatalf("--finish left %d xl.meta on %s\n%s", left, drives[d], out)
		}
	}
	if !strings.Contains(out, fmt.Sprintf("and %d adopted uploads", len(ups))) {
		t.Fatalf("--finish report, want %d uploads removed:\n%s", len(ups), out)
	}
	noMultipartDirs(t, drives, ups)
	s = start()
	checkWritten(s)
	written[ups[1].bucket+"/"+ups[1].up.Key] = completeSetsUpload(t, s, ups[1])
	checkWritten(s)
}

// wantKeys is the number of keys (names with a version or delete
// marker) of the fixture.
func wantKeys(exp *miniofixture.Expected) int {
	n := 0
	for _, b := range exp.Buckets {
		keys := map[string]bool{}
		for _, v := range b.Versions {
			keys[v.Key] = true
		}
		n += len(keys)
	}
	return n
}

func sortedCounts(m map[string]int) []string {
	var out []string
	for k, n := range m {
		out = append(out, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(out)
	return out
}

// TestMigrateFromMinIOSetsKilled kills the adoption of the two-set
// fixture (SIGKILL from inside, at a chosen write; SHARDSTORE_KILL_SEED
// replays a run) at points spread over both sets' links, copied shard
// files, index batches and upload records, resumes it by running it
// again, and checks that every version reads back from the server and
// both sets' uploads are listed with their parts.
func TestMigrateFromMinIOSetsKilled(t *testing.T) {
	singleNodeOnly(t, "the fixture is one node's 32 drives")
	dir := t.TempDir()
	drives, exp := minioSetsDrives(t, dir)
	ups := setsUploads(t, drives, exp, fixturePlacer(t, drives[0]))
	rng := rand.New(rand.NewSource(migrateKillSeed(t)))
	keys := uploadKeysFile(t, t.TempDir(), exp)
	// The fixture's adoption makes 96 links and a batch per drive and
	// bucket, about 160 writes; a run redoes what its predecessors did.
	out, kills := migrateKilled(t, rng, 10, 40, append([]string{"migrate", "from-minio", "--upload-keys", keys}, drives...), nil)
	t.Logf("%d kills, then:\n%s", kills, out)
	if kills < 2 {
		t.Fatalf("only %d runs were killed: the crash points missed the adoption", kills)
	}
	if !strings.Contains(out, "refused: 0") {
		t.Fatalf("resumed adoption refused something:\n%s", out)
	}
	s := launch(t, dir, serverEnv(), []string{"server", "--console-address", "", "--address", "127.0.0.1:0", filepath.Join(dir, "drive{1...32}")})
	checkAdopted(t, s, exp, true)
	checkSetsUploadsListed(t, s, ups)
}
