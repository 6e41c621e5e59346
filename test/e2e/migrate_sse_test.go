package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/shardstore/shardstore/internal/minioformat/miniofixture"
	"github.com/shardstore/shardstore/internal/placement"
)

// The SSE fixture (internal/minioformat/testdata/README.md): a MinIO of
// 4 drives run with a static KMS key, holding SSE-S3 and SSE-KMS
// versions beside plain ones.
const minioSSEFixture = "../../internal/minioformat/testdata/minio-sse"

// TestMigrateFromMinIOSSE: versions MinIO stored encrypted (SSE-S3,
// SSE-KMS; their object keys sealed by MinIO's KMS) are refused and
// listed with the kind and KMS key, by the dry run and the adoption
// alike, their keys whole (a key with a plain and an encrypted version
// too); their MinIO files are left byte for byte, by --finish too; the
// server does not serve them (NoSuchKey, never other bytes), and serves
// the plain keys byte-identical to MinIO's answers.
func TestMigrateFromMinIOSSE(t *testing.T) {
	singleNodeOnly(t, "the fixture is one node's 4 drives")
	dir := t.TempDir()
	exp, err := miniofixture.Load(minioSSEFixture)
	if err != nil {
		t.Fatal(err)
	}
	if err := miniofixture.Unpack(minioSSEFixture, dir); err != nil {
		t.Fatalf("unpack fixture: %v", err)
	}
	arg := filepath.Join(dir, "drive{1...4}")
	refused := map[string]string{ // bucket/key -> the refusal's words
		"enc/sse-s3.txt":         `encrypted (SSE-S3, MinIO KMS key "fixture-key")`,
		"enc/sse-kms.txt":        `encrypted (SSE-KMS, MinIO KMS key "fixture-key")`,
		"encver/mixed.txt":       `encrypted (SSE-S3, MinIO KMS key "fixture-key")`,
		"encver/sse-kms-big.bin": `encrypted (SSE-KMS, MinIO KMS key "fixture-key")`,
	}
	// What MinIO holds of the refused keys, to find it untouched.
	sums := map[string]string{}
	for name := range refused {
		bucket, key, _ := strings.Cut(name, "/")
		for i := 1; i <= 4; i++ {
			d := filepath.Join(dir, "drive"+string(rune('0'+i)), bucket, placement.MinIOName(key))
			sums[d] = treeSum(t, d)
		}
	}
	for _, args := range [][]string{{"--dry-run", arg}, {arg}} {
		out := runMigrate(t, args...)
		t.Logf("%v:\n%s", args, out)
		for name, why := range refused {
			if !strings.Contains(out, "refused "+name+": version ") || !strings.Contains(out, why) {
				t.Errorf("%v: %s not refused as %q", args, name, why)
			}
		}
		if !strings.Contains(out, "refused: 4\n") || !strings.Contains(out, "2 keys, 2 versions") {
			t.Errorf("%v: want 2 keys adopted and 4 refused:\n%s", args, out)
		}
	}
	s := launch(t, dir, serverEnv(), []string{"server", "--console-address", "", "--address", "127.0.0.1:0", arg})
	c := s.root()
	cx := ctx(t)
	for _, b := range exp.Buckets {
		for _, v := range b.Versions {
			name := b.Name + "/" + v.Key
			in := &s3.GetObjectInput{Bucket: aws.String(b.Name), Key: aws.String(v.Key)}
			if v.VersionID != "null" {
				in.VersionId = aws.String(v.VersionID)
			}
			g, err := c.GetObject(cx, in)
			if _, no := refused[name]; no {
				var ae smithy.APIError
				if err == nil {
					g.Body.Close()
					t.Errorf("%s %s: served, but its adoption was refused", name, v.VersionID)
				} else if !errors.As(err, &ae) || (ae.ErrorCode() != "NoSuchKey" && ae.ErrorCode() != "NoSuchVersion") {
					t.Errorf("%s %s: %v, want NoSuchKey", name, v.VersionID, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %s: %v", name, v.VersionID, err)
				continue
			}
			h := sha256.New()
			_, err = io.Copy(h, g.Body)
			g.Body.Close()
			if err != nil || hex.EncodeToString(h.Sum(nil)) != v.SHA256 {
				t.Errorf("%s %s: read %v, sha256 %x, MinIO's %s", name, v.VersionID, err, h.Sum(nil), v.SHA256)
			}
		}
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	runMigrate(t, "--finish", arg)
	for d, sum := range sums {
		if _, err := os.Stat(d); err != nil || treeSum(t, d) != sum {
			t.Errorf("MinIO's files of a refused key changed: %s: %v", d, err)
		}
	}
}
