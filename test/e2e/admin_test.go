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

// `shardstore admin heal` against a running server repairs a shard that
// was removed from a drive, and reports it; other credentials are refused.
func TestAdminHeal(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "healme")
	body := pattern(600<<10, 7) // 300 KiB per drive on 2+2: shard files, not inline
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("healme"), Key: aws.String("dir/obj"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	lost := filepath.Join(s.drives+"1", "healme", "dir", "obj")
	if err := os.RemoveAll(lost); err != nil {
		t.Fatal(err)
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
	if _, err := os.Stat(filepath.Join(lost, ".ss.meta")); err != nil {
		t.Fatalf("the removed shard was not rewritten: %v\n%s", err, out)
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
