// Package miniofixture opens the real MinIO drives saved under
// internal/minioformat/testdata (see its README: 16 drives of a
// single-node MinIO, and what MinIO answered over S3 before it was
// stopped) for the tests that read them: internal/minioformat's decoders
// and test/e2e's adoption by `shardstore migrate from-minio`. It is test
// support, used by tests only.
package miniofixture

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Expected is MinIO's recorded answers, the JSON testdata/mkfixture writes
// beside the drive tarball.
type Expected struct {
	MinIO struct {
		Version string `json:"version"`
		Source  string `json:"source"`
	} `json:"minio"`
	Drives  int      `json:"drives"`
	Buckets []Bucket `json:"buckets"`
}

// Bucket is one bucket's recorded configuration, listing and versions.
type Bucket struct {
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
	Versions []Version `json:"versions"`
	Uploads  []struct {
		Key      string `json:"key"`
		UploadID string `json:"uploadId"`
		Parts    []int  `json:"parts"`
	} `json:"uploads"`
}

// Version is one version (or delete marker) as ListObjectVersions listed
// it, with its HEAD answer and the SHA-256 of its body.
type Version struct {
	Key          string `json:"key"`
	VersionID    string `json:"versionId"`
	IsLatest     bool   `json:"isLatest"`
	DeleteMarker bool   `json:"deleteMarker"`
	ETag         string `json:"etag"`
	Size         int64  `json:"size"`
	LastModified string `json:"lastModified"`
	Head         *Head  `json:"head"`
	SHA256       string `json:"sha256"`
}

// Head is a version's recorded HEAD answer.
type Head struct {
	ETag               string            `json:"etag"`
	ContentLength      int64             `json:"contentLength"`
	LastModified       string            `json:"lastModified"`
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
}

// Load reads the recorded answers of the fixture named base (the path
// without ".json" / ".tar.zst").
func Load(base string) (*Expected, error) {
	js, err := os.ReadFile(base + ".json")
	if err != nil {
		return nil, fmt.Errorf("fixture answers: %w", err)
	}
	var exp Expected
	if err := json.Unmarshal(js, &exp); err != nil {
		return nil, fmt.Errorf("fixture answers %s.json: %w", base, err)
	}
	return &exp, nil
}

// Unpack extracts the drives of the fixture named base into dst
// (dst/drive1 ... dst/driveN). Only directories and regular files are
// written, and only below dst.
func Unpack(base, dst string) error {
	f, err := os.Open(base + ".tar.zst")
	if err != nil {
		return fmt.Errorf("fixture drives: %w", err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f, zstd.WithDecoderMaxWindow(64<<20), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return fmt.Errorf("fixture drives %s: %w", f.Name(), err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("fixture drives %s: %w", f.Name(), err)
		}
		name := filepath.FromSlash(strings.TrimSuffix(h.Name, "/"))
		if !filepath.IsLocal(name) {
			return &os.PathError{Op: "unpack", Path: h.Name, Err: os.ErrInvalid}
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
