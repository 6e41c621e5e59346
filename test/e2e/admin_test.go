package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// shardFiles maps each shard file under drive's data directory
// (.shardstore.sys/data/<xx>/<dataid>.<part>) to its size.
func shardFiles(t *testing.T, drive string) map[string]int64 {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(drive, ".shardstore.sys", "data", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			t.Fatalf("%s in a data fan-out directory is not a regular file (%v)", p, fi.Mode())
		}
		out[p] = fi.Size()
	}
	return out
}

// `shardstore admin heal` against a running server repairs an object
// whose shard files were removed from a drive, and reports it; other
// credentials are refused.
func TestAdminHeal(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "healme")
	drive1 := s.drives + "1"
	before := shardFiles(t, drive1)
	body := pattern(600<<10, 7) // 300 KiB per drive on 2+2: shard files, not inline
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("healme"), Key: aws.String("dir/obj"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	// The only object's shard files on drive 1 are the ones the PUT added
	// (names are random data ids: nothing on disk is named after the key).
	lost := map[string]int64{}
	for p, size := range shardFiles(t, drive1) {
		if _, ok := before[p]; !ok {
			lost[p] = size
		}
	}
	if len(lost) == 0 {
		t.Fatalf("the PUT of a 600 KiB object added no shard file under %s", filepath.Join(drive1, ".shardstore.sys", "data"))
	}
	lostBytes := map[string][]byte{}
	for p := range lost {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lostBytes[p] = b
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	admin := func(user, pass string, args ...string) (string, error) {
		cmd := exec.Command(binary, append([]string{"admin"}, args...)...)
		cmd.Env = append(os.Environ(), "SHARDSTORE_ENDPOINT="+s.endpoint,
			"SHARDSTORE_ROOT_USER="+user, "SHARDSTORE_ROOT_PASSWORD="+pass)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := admin("nobody", "wrong-secret", "heal", "--quiet"); err == nil {
		t.Fatalf("admin heal with unknown credentials succeeded:\n%s", out)
	}
	out, err := admin(rootUser, rootPass, "heal", "--bucket", "healme", "--deep", "--quiet")
	if err != nil {
		t.Fatalf("admin heal: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`objects scanned\s+1\b`).MatchString(out) || !regexp.MustCompile(`objects damaged\s+1\b`).MatchString(out) {
		t.Fatalf("heal report does not show the damaged object:\n%s", out)
	}
	// Healing rewrites the shards under the same data id, so the same
	// file names come back with the same sizes and (erasure coding and
	// bitrot sums being deterministic) the same bytes.
	for p, size := range lost {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("the removed shard file was not rewritten: %v\n%s", err, out)
		}
		if fi.Size() != size {
			t.Fatalf("rewritten shard file %s is %d bytes, was %d", p, fi.Size(), size)
		}
		if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, lostBytes[p]) {
			t.Fatalf("rewritten shard file %s differs from the removed one (%v)", p, err)
		}
	}
	// A second deep heal finds nothing to do.
	out, err = admin(rootUser, rootPass, "heal", "--deep", "--quiet")
	if err != nil || !regexp.MustCompile(`objects damaged\s+0\b`).MatchString(out) {
		t.Fatalf("second heal: %v\n%s", err, out)
	}
	out, err = admin(rootUser, rootPass, "status")
	if err != nil || !strings.Contains(strings.ToLower(out), "drive") {
		t.Fatalf("admin status: %v\n%s", err, out)
	}
	if got := getBody(t, c, "healme", "dir/obj"); !bytes.Equal(got, body) {
		t.Fatal("object bytes changed by healing")
	}
}
