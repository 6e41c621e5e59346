package minioformat

import (
	"archive/tar"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
)

const fixtureName = "testdata/minio-16drives"

// expected mirrors the JSON mkfixture writes (testdata/mkfixture).
type expected struct {
	MinIO struct {
		Version string `json:"version"`
		Source  string `json:"source"`
	} `json:"minio"`
	Drives  int `json:"drives"`
	Buckets []struct {
		Name           string            `json:"name"`
		Created        string            `json:"created"`
		Versioning     string            `json:"versioning"`
		ObjectLock     string            `json:"objectLock"`
		LockDefault    string            `json:"lockDefault"`
		Policy         string            `json:"policy"`
		LifecycleRules []string          `json:"lifecycleRules"`
		Tags           map[string]string `json:"tags"`
		Objects        []struct {
			Key          string `json:"key"`
			ETag         string `json:"etag"`
			Size         int64  `json:"size"`
			LastModified string `json:"lastModified"`
		} `json:"objects"`
		Versions []expVersion `json:"versions"`
		Uploads  []struct {
			Key      string `json:"key"`
			UploadID string `json:"uploadId"`
			Parts    []int  `json:"parts"`
		} `json:"uploads"`
	} `json:"buckets"`
}

type expVersion struct {
	Key          string `json:"key"`
	VersionID    string `json:"versionId"`
	IsLatest     bool   `json:"isLatest"`
	DeleteMarker bool   `json:"deleteMarker"`
	ETag         string `json:"etag"`
	Size         int64  `json:"size"`
	LastModified string `json:"lastModified"`
	Head         *struct {
		ETag               string            `json:"etag"`
		ContentLength      int64             `json:"contentLength"`
		ContentType        string            `json:"contentType"`
		ContentDisposition string            `json:"contentDisposition"`
		ContentEncoding    string            `json:"contentEncoding"`
		ContentLanguage    string            `json:"contentLanguage"`
		CacheControl       string            `json:"cacheControl"`
		Metadata           map[string]string `json:"metadata"`
		PartsCount         int32             `json:"partsCount"`
		LockMode           string            `json:"lockMode"`
		LockRetainUntil    string            `json:"lockRetainUntil"`
		LegalHold          string            `json:"legalHold"`
		TagCount           int32             `json:"tagCount"`
		Tags               map[string]string `json:"tags"`
		Checksums          map[string]string `json:"checksums"`
	} `json:"head"`
	SHA256 string `json:"sha256"`
}

var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixtureErr  error
)

// fixture extracts the drive tarball once per test binary and returns the
// directory holding drive1 ... drive16, and MinIO's recorded answers.
func fixture(t testing.TB) (string, *expected) {
	t.Helper()
	fixtureOnce.Do(func() {
		fixtureDir, fixtureErr = os.MkdirTemp("", "minioformat-fixture-")
		if fixtureErr == nil {
			fixtureErr = extract(fixtureName+".tar.zst", fixtureDir)
		}
	})
	if fixtureErr != nil {
		t.Fatalf("fixture: %v", fixtureErr)
	}
	js, err := os.ReadFile(fixtureName + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var exp expected
	if err := json.Unmarshal(js, &exp); err != nil {
		t.Fatal(err)
	}
	if exp.Drives != 16 || len(exp.Buckets) == 0 {
		t.Fatalf("fixture JSON: %d drives, %d buckets", exp.Drives, len(exp.Buckets))
	}
	return fixtureDir, &exp
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

func extract(src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := zstd.NewReader(f, zstd.WithDecoderMaxWindow(64<<20), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return err
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(strings.TrimSuffix(h.Name, "/"))
		if !filepath.IsLocal(name) {
			return &os.PathError{Op: "extract", Path: h.Name, Err: os.ErrInvalid}
		}
		p := filepath.Join(dst, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			out, err := os.Create(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}
