package minioformat

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/minioformat/miniofixture"
)

// TestFixtureUploads finds every unfinished upload MinIO listed, in both
// fixtures, where its id and key say (ParseUploadID, the SHA-256 of
// bucket/key), and reads its xl.meta and part.N.meta files back as
// MinIO's ListParts answered (ETag, size); the compressed fixture's
// upload.txt has S2-compressed parts (stored size below the actual one).
func TestFixtureUploads(t *testing.T) {
	for _, name := range []string{fixtureName, "testdata/minio-compressed"} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			dir := t.TempDir()
			if err := miniofixture.Unpack(name, dir); err != nil {
				t.Fatal(err)
			}
			exp, err := miniofixture.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, "drive1", ".minio.sys", "format.json"))
			if err != nil {
				t.Fatal(err)
			}
			f, err := ParseFormat(raw)
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, b := range exp.Buckets {
				for _, u := range b.Uploads {
					found++
					id, err := ParseUploadID(u.UploadID)
					if err != nil || id.Deployment != f.DeploymentID {
						t.Fatalf("%s/%s: upload id %s: %+v %v (deployment %s)", b.Name, u.Key, u.UploadID, id, err, f.DeploymentID)
					}
					sum := sha256.Sum256([]byte(b.Name + "/" + u.Key))
					updir := filepath.Join(dir, "drive1", ".minio.sys", "multipart", hex.EncodeToString(sum[:]), id.Dir)
					xl, err := os.ReadFile(filepath.Join(updir, "xl.meta"))
					if err != nil {
						t.Fatalf("%s/%s: %v", b.Name, u.Key, err)
					}
					m, err := Decode(xl)
					if err != nil || len(m.Versions) != 1 || m.Versions[0].Object == nil {
						t.Fatalf("%s/%s: upload xl.meta: %v", b.Name, u.Key, err)
					}
					o := m.Versions[0].Object
					compressed := strings.HasSuffix(u.Key, ".txt") && strings.Contains(name, "compressed")
					if o.Compressed() != compressed || len(o.Parts) != 0 {
						t.Errorf("%s/%s: compressed %v, %d parts", b.Name, u.Key, o.Compressed(), len(o.Parts))
					}
					for i, n := range u.Parts {
						pm, err := os.ReadFile(filepath.Join(updir, o.DataDirString(), "part."+strconv.Itoa(n)+".meta"))
						if err != nil {
							t.Fatal(err)
						}
						p, err := DecodePartMeta(pm)
						if err != nil || p.Number != n || len(p.Unknown) != 0 {
							t.Fatalf("%s/%s part %d: %+v %v", b.Name, u.Key, n, p, err)
						}
						if len(u.PartETags) > i && (`"`+p.ETag+`"` != u.PartETags[i] || p.ActualSize != u.PartSizes[i]) {
							t.Errorf("%s/%s part %d: ETag %s size %d, MinIO listed %s %d", b.Name, u.Key, n, p.ETag, p.ActualSize, u.PartETags[i], u.PartSizes[i])
						}
						fi, err := os.Stat(filepath.Join(updir, o.DataDirString(), "part."+strconv.Itoa(n)))
						if err != nil || fi.Size() != o.ShardFileSize(p.Size) {
							t.Errorf("%s/%s part %d: file %v %v, want %d bytes", b.Name, u.Key, n, fi, err, o.ShardFileSize(p.Size))
						}
						if compressed != (p.Size != p.ActualSize) {
							t.Errorf("%s/%s part %d: stored %d of %d bytes", b.Name, u.Key, n, p.Size, p.ActualSize)
						}
					}
				}
			}
			if found == 0 {
				t.Fatal("no uploads in the fixture")
			}
		})
	}
}
