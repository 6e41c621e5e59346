// Package miniofixture opens the real MinIO drives saved under
// internal/minioformat/testdata (see its README: 16 drives of a
// single-node MinIO, 32 drives in 2 erasure sets, 8 drives in 2 pools,
// and what MinIO answered over S3 before it was stopped) for the tests
// that read them: internal/minioformat's decoders
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

// Expected is what MinIO answered over S3 before it was stopped: the JSON
// testdata/mkfixture writes beside the drive tarball.
type Expected struct {
	MinIO struct {
		Version string `json:"version"`
		Source  string `json:"source,omitempty"`
	} `json:"minio"`
	Drives  int      `json:"drives"`
	Buckets []Bucket `json:"buckets"`
}

// Bucket is one bucket's configuration and contents.
type Bucket struct {
	Name           string            `json:"name"`
	Created        string            `json:"created"`
	Versioning     string            `json:"versioning,omitempty"`
	ObjectLock     string            `json:"objectLock,omitempty"`
	LockDefault    string            `json:"lockDefault,omitempty"`
	Policy         string            `json:"policy,omitempty"`
	LifecycleRules []string          `json:"lifecycleRules,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
	Objects        []ListEntry       `json:"objects"`
	Uploads        []Upload          `json:"uploads,omitempty"`
	Versions       []Version         `json:"versions"`
}

// Upload is an unfinished multipart upload.
type Upload struct {
	Key      string `json:"key"`
	UploadID string `json:"uploadId"`
	Parts    []int  `json:"parts"`
	// PartETags and PartSizes are ListParts' answers, part by part
	// (fixtures made before they were recorded lack them).
	PartETags []string `json:"partETags,omitempty"`
	PartSizes []int64  `json:"partSizes,omitempty"`
}

// ListEntry is one entry of ListObjectsV2.
type ListEntry struct {
	Key          string `json:"key"`
	ETag         string `json:"etag"`
	Size         int64  `json:"size"`
	LastModified string `json:"lastModified"`
}

// Version is one entry of ListObjectVersions, with HEAD, tags and body of
// object versions.
type Version struct {
	Key          string `json:"key"`
	VersionID    string `json:"versionId"`
	IsLatest     bool   `json:"isLatest"`
	DeleteMarker bool   `json:"deleteMarker"`
	ETag         string `json:"etag,omitempty"`
	Size         int64  `json:"size"`
	LastModified string `json:"lastModified"`
	Head         *Head  `json:"head,omitempty"`
	SHA256       string `json:"sha256,omitempty"`
}

// Head is what HEAD of a version said.
type Head struct {
	ETag               string            `json:"etag"`
	ContentLength      int64             `json:"contentLength"`
	LastModified       string            `json:"lastModified"`
	ContentType        string            `json:"contentType,omitempty"`
	ContentDisposition string            `json:"contentDisposition,omitempty"`
	ContentEncoding    string            `json:"contentEncoding,omitempty"`
	ContentLanguage    string            `json:"contentLanguage,omitempty"`
	CacheControl       string            `json:"cacheControl,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	PartsCount         int32             `json:"partsCount,omitempty"`
	LockMode           string            `json:"lockMode,omitempty"`
	LockRetainUntil    string            `json:"lockRetainUntil,omitempty"`
	LegalHold          string            `json:"legalHold,omitempty"`
	TagCount           int32             `json:"tagCount,omitempty"`
	Tags               map[string]string `json:"tags,omitempty"`
	Checksums          map[string]string `json:"checksums,omitempty"`
	// SSE and SSEKMSKeyID are the x-amz-server-side-encryption headers
	// (AES256 or aws:kms, and the KMS key id) of an encrypted version.
	SSE         string `json:"sse,omitempty"`
	SSEKMSKeyID string `json:"sseKmsKeyId,omitempty"`
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
