package e2e

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
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
// versions (single PUTs, an empty one, multipart ones, one with an
// SSE-KMS context) beside plain ones.
const minioSSEFixture = "../../internal/minioformat/testdata/minio-sse"

// minioSSEKey is the static KMS key that MinIO ran with
// (mkfixture/sse.go): a fixed test key, no one's secret.
const minioSSEKey = "fixture-key:c2hhcmRzdG9yZSBtaW5pbyBmaXh0dXJlIGttcyBrZXk="

// TestMigrateFromMinIOSSE: versions MinIO stored encrypted (SSE-S3,
// SSE-KMS) are refused and listed with their kind and KMS key while the
// key MinIO ran with is not given, or a wrong one is (and the dry run
// writes nothing); given MINIO_KMS_SECRET_KEY as MinIO had it, the
// adoption, killed -9 at random writes and resumed, adopts every key but
// the SSE-C one (refused with its reason whatever key is given, MinIO's
// files of it left byte for byte, by --finish too);
// the server (given the same key) answers every version byte-identical
// with MinIO's ETag and SSE headers, a range across the parts of a
// multipart object too; no plaintext of an encrypted object is on the
// drives; --finish leaves them readable.
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
	// The SSE-C key stays refused whatever key is given; MinIO's files of
	// it are left byte for byte.
	const sseC = "enc/sse-c.txt"
	const sseCWhy = "refused " + sseC + ": version null: encrypted (SSE-C): its key is the client's"
	sseCSums := map[string]string{}
	for i := 1; i <= 4; i++ {
		d := filepath.Join(dir, "drive"+string(rune('0'+i)), "enc", placement.MinIOName("sse-c.txt"))
		sseCSums[d] = treeSum(t, d)
	}
	adopted := withoutKey(exp, sseC)
	encrypted := map[string]string{} // bucket/key -> kind, for keys with an encrypted version
	keys := map[string]bool{}
	versions := 0 // encrypted ones
	for _, b := range adopted.Buckets {
		for _, v := range b.Versions {
			keys[b.Name+"/"+v.Key] = true
			if v.Head == nil || v.Head.SSE == "" {
				continue
			}
			versions++
			kind := "SSE-S3"
			if v.Head.SSE == "aws:kms" {
				kind = "SSE-KMS"
			}
			encrypted[b.Name+"/"+v.Key] = kind
		}
	}
	if len(encrypted) < 8 {
		t.Fatalf("fixture: %d keys with encrypted versions, want at least 8", len(encrypted))
	}

	before := treeSum(t, dir)
	wrongKey := "fixture-key:" + "d3Jvbmcgd3Jvbmcgd3Jvbmcgd3Jvbmcgd3Jvbmcgd3I=" // 32 other bytes
	for _, c := range []struct{ name, env, why string }{
		{"no key", "", "no KMS key given"},
		{"another key name", "MINIO_KMS_SECRET_KEY=other-key:c2hhcmRzdG9yZSBtaW5pbyBmaXh0dXJlIGttcyBrZXk=", "that key was not given"},
		{"a wrong secret", "MINIO_KMS_SECRET_KEY=" + wrongKey, "the key given does not open its data key"},
	} {
		cmd := exec.Command(binary, "migrate", "from-minio", "--dry-run", arg)
		cmd.Env = withoutKMSEnv(os.Environ())
		if c.env != "" {
			cmd.Env = append(cmd.Env, c.env)
		}
		b, err := cmd.CombinedOutput()
		out := string(b)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		for name, kind := range encrypted {
			want := fmt.Sprintf("refused %s: version ", name)
			what := fmt.Sprintf("encrypted (%s, MinIO KMS key %q): %s", kind, "fixture-key", c.why)
			if !strings.Contains(out, want) || !strings.Contains(out, what) {
				t.Errorf("%s: %s not refused as %q:\n%s", c.name, name, what, out)
			}
		}
		if !strings.Contains(out, fmt.Sprintf("refused: %d\n", len(encrypted)+1)) || !strings.Contains(out, sseCWhy) {
			t.Errorf("%s: want %d keys refused, SSE-C's too:\n%s", c.name, len(encrypted)+1, out)
		}
		if strings.Contains(out, "c2hhcmRzdG9yZSBtaW5pbyBmaXh0dXJlIGttcyBrZXk") || strings.Contains(out, "d3Jvbmcg") {
			t.Errorf("%s: the output shows the secret key", c.name)
		}
	}
	t.Setenv("MINIO_KMS_SECRET_KEY", minioSSEKey)
	dry := runMigrate(t, "--dry-run", arg)
	if !strings.Contains(dry, "refused: 1\n") || !strings.Contains(dry, sseCWhy) || !strings.Contains(dry, fmt.Sprintf("%d keys, ", len(keys))) ||
		!strings.Contains(dry, fmt.Sprintf("of them encrypted by MinIO (decrypted with the KMS key given, encrypted again by shardstore): %d versions", versions)) {
		t.Fatalf("dry run with the key:\n%s", dry)
	}
	if treeSum(t, dir) != before {
		t.Fatal("a dry run wrote to the drives")
	}

	rng := rand.New(rand.NewSource(migrateKillSeed(t)))
	// Every run writes the same bytes under a name (the new object key
	// is derived, not random): a shard file a killed run left is never
	// different in a later run, whose records may meet it.
	shardSums := map[string]string{}
	noteShards := func(when string) {
		for i := 1; i <= 4; i++ {
			root := filepath.Join(dir, "drive"+string(rune('0'+i)), ".shardstore.sys", "data")
			_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || strings.HasSuffix(path, ".migrate-tmp") {
					return nil
				}
				b, err := os.ReadFile(path)
				if err != nil {
					return nil
				}
				sum := fmt.Sprintf("%x", sha256.Sum256(b))
				if old, ok := shardSums[path]; ok && old != sum {
					t.Errorf("%s: %s holds other bytes than an earlier run wrote", when, path)
				}
				shardSums[path] = sum
				return nil
			})
		}
	}
	out, kills := migrateKilled(t, rng, 6, 6, []string{"migrate", "from-minio", arg}, func(kills int) {
		noteShards(fmt.Sprintf("after kill %d", kills))
	})
	noteShards("after the completed run")
	if len(shardSums) == 0 {
		t.Error("no shard files written: the encrypted copies were all inline?")
	}
	t.Logf("%d kills, then:\n%s", kills, out)
	if kills < 2 {
		t.Fatalf("only %d runs were killed: the crash points missed the adoption", kills)
	}
	if !strings.Contains(out, "refused: 1\n") || !strings.Contains(out, sseCWhy) {
		t.Fatalf("resumed adoption:\n%s", out)
	}

	env := append(serverEnv(), "MINIO_KMS_SECRET_KEY="+minioSSEKey)
	serve := []string{"server", "--console-address", "", "--address", "127.0.0.1:0", arg}
	s := launch(t, dir, env, serve)
	checkAdopted(t, s, adopted, true)
	plains := checkSSEHeaders(t, s, adopted)
	checkNoPlaintext(t, dir, plains)
	_, err = s.root().HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String("enc"), Key: aws.String("sse-c.txt")})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "NotFound" && ae.ErrorCode() != "NoSuchKey" {
		t.Errorf("HEAD of the refused SSE-C key: %v, want NotFound", err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	fin := runMigrate(t, "--finish", arg)
	t.Logf("finish:\n%s", fin)
	s = launch(t, dir, env, serve)
	checkAdopted(t, s, adopted, false)
	for d, sum := range sseCSums {
		if _, err := os.Stat(d); err != nil || treeSum(t, d) != sum {
			t.Errorf("MinIO's files of the refused SSE-C key changed: %s: %v", d, err)
		}
	}
}

// withoutKey is exp without bucket/key.
func withoutKey(exp *miniofixture.Expected, name string) *miniofixture.Expected {
	bucket, key, _ := strings.Cut(name, "/")
	out := *exp
	out.Buckets = nil
	for _, b := range exp.Buckets {
		if b.Name == bucket {
			var objs []miniofixture.ListEntry
			for _, o := range b.Objects {
				if o.Key != key {
					objs = append(objs, o)
				}
			}
			var vs []miniofixture.Version
			for _, v := range b.Versions {
				if v.Key != key {
					vs = append(vs, v)
				}
			}
			b.Objects, b.Versions = objs, vs
		}
		out.Buckets = append(out.Buckets, b)
	}
	return &out
}

// withoutKMSEnv drops the KMS settings from env.
func withoutKMSEnv(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "MINIO_KMS_") && !strings.HasPrefix(e, "SHARDSTORE_KMS_") {
			out = append(out, e)
		}
	}
	return out
}

// checkSSEHeaders checks that every encrypted version MinIO served is
// served with the same SSE headers (MinIO shows an SSE-KMS key as
// arn:aws:kms:NAME, shardstore as NAME), and a range across the parts of
// a multipart one. It returns the encrypted versions' plaintexts.
func checkSSEHeaders(t *testing.T, s *server, exp *miniofixture.Expected) map[string][]byte {
	t.Helper()
	c := s.root()
	cx := ctx(t)
	plains := map[string][]byte{}
	for _, b := range exp.Buckets {
		for _, v := range b.Versions {
			if v.Head == nil || v.Head.SSE == "" {
				continue
			}
			name := b.Name + "/" + v.Key + "@" + v.VersionID
			g, err := c.GetObject(cx, &s3.GetObjectInput{Bucket: aws.String(b.Name), Key: aws.String(v.Key), VersionId: aws.String(v.VersionID)})
			if err != nil {
				t.Errorf("GET %s: %v", name, err)
				continue
			}
			data, err := io.ReadAll(g.Body)
			g.Body.Close()
			if err != nil {
				t.Fatalf("GET %s: %v", name, err)
			}
			plains[name] = data
			if string(g.ServerSideEncryption) != v.Head.SSE || strings.TrimPrefix(aws.ToString(g.SSEKMSKeyId), "arn:aws:kms:") != strings.TrimPrefix(v.Head.SSEKMSKeyID, "arn:aws:kms:") {
				t.Errorf("GET %s: SSE %q key %q, MinIO said %q key %q", name, g.ServerSideEncryption, aws.ToString(g.SSEKMSKeyId), v.Head.SSE, v.Head.SSEKMSKeyID)
			}
			if aws.ToString(g.ETag) != v.ETag {
				t.Errorf("GET %s: ETag %s, MinIO's %s", name, aws.ToString(g.ETag), v.ETag)
			}
			if v.Head.PartsCount < 2 {
				continue
			}
			// A range across the first part's end (5 MiB).
			from, to := 5<<20-100, 5<<20+100
			r, err := c.GetObject(cx, &s3.GetObjectInput{Bucket: aws.String(b.Name), Key: aws.String(v.Key), VersionId: aws.String(v.VersionID),
				Range: aws.String(fmt.Sprintf("bytes=%d-%d", from, to))})
			if err != nil {
				t.Errorf("ranged GET %s: %v", name, err)
				continue
			}
			got := mustRead(t, r.Body)
			if !bytes.Equal(got, data[from:to+1]) {
				t.Errorf("ranged GET %s across its parts: wrong bytes", name)
			}
		}
	}
	return plains
}

// checkNoPlaintext: no file under dir holds 32 bytes of an encrypted
// version's plaintext (its first, and from its middle).
func checkNoPlaintext(t *testing.T, dir string, plains map[string][]byte) {
	t.Helper()
	probes := map[string][]byte{}
	for name, p := range plains {
		if len(p) < 64 {
			continue
		}
		probes[name+" (start)"] = p[:32]
		probes[name+" (middle)"] = p[len(p)/2 : len(p)/2+32]
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for name, p := range probes {
			if bytes.Contains(b, p) {
				t.Errorf("%s: plaintext of %s at rest", path, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(probes) == 0 {
		t.Fatal("no encrypted version to look for")
	}
}
