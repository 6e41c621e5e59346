package minioformat

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Unfinished multipart uploads live on each drive under
// .minio.sys/multipart/<hex sha256 of "bucket/key">/<upload dir>/: an
// xl.meta (one null version: the upload's erasure layout, data dir and
// metadata), and in <data dir>/ the part files part.N with their
// part.N.meta (PartMeta). The key is not stored anywhere, only its hash.

// UploadID is MinIO's multipart upload id, decoded: S3 clients see
// base64url("<deployment id>.<upload dir>") without padding, the upload
// dir being "<uuid>x<initiation time, Unix ns>" (older releases: "<uuid>").
type UploadID struct {
	Deployment string    // the deployment id (a UUID)
	Dir        string    // the upload's directory name
	Initiated  time.Time // from Dir; zero for an old-form id
}

// UploadIDString is the id S3 clients saw for an upload of deployment
// stored under dir.
func UploadIDString(deployment, dir string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(deployment + "." + dir))
}

// ParseUploadID decodes an upload id MinIO made. It accepts only the
// exact forms above (canonical base64, lower-case UUIDs, a time of 1 to
// 19 digits: one id per upload), so a
// name derived from it cannot be a path trick.
func ParseUploadID(id string) (UploadID, error) {
	if len(id) > 200 {
		return UploadID{}, corruptf("upload id of %d bytes", len(id))
	}
	for i := 0; i < len(id); i++ {
		// The decoder would skip \r and \n: only the alphabet counts.
		if c := id[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return UploadID{}, corruptf("upload id %q: byte %q", id, c)
		}
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(id)
	if err != nil {
		return UploadID{}, corruptf("upload id %q: %v", id, err)
	}
	dep, dir, ok := strings.Cut(string(raw), ".")
	if !ok || !isUUID(dep) {
		return UploadID{}, corruptf("upload id %q: not <deployment>.<upload>", id)
	}
	u, err := ParseUploadDir(dir)
	if err != nil {
		return UploadID{}, err
	}
	u.Deployment = dep
	return u, nil
}

// ParseUploadDir checks the name of an upload's directory and reads the
// initiation time it carries.
func ParseUploadDir(dir string) (UploadID, error) {
	id, nanos, timed := strings.Cut(dir, "x")
	if !isUUID(id) {
		return UploadID{}, corruptf("upload directory %q", dir)
	}
	u := UploadID{Dir: dir}
	if timed {
		if len(nanos) == 0 || len(nanos) > 19 || strings.TrimLeft(nanos, "0123456789") != "" {
			return UploadID{}, corruptf("upload directory %q: time", dir)
		}
		n, err := strconv.ParseInt(nanos, 10, 64)
		if err != nil {
			return UploadID{}, corruptf("upload directory %q: %v", dir, err)
		}
		u.Initiated = time.Unix(0, n).UTC()
	}
	return u, nil
}

func isUUID(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && len(s) == 36 && u.String() == s
}

// PartMeta is a part.N.meta file: what PutObjectPart recorded of part N.
type PartMeta struct {
	Number     int
	ETag       string
	Size       int64 // stored size (compressed or encrypted if so)
	ActualSize int64 // size the client sent; -1 when unknown
	ModTime    time.Time
	Index      []byte            // compression index
	Checksums  map[string]string // S3 checksums by algorithm name ("CRC32C": base64)
	Error      string
	Unknown    []string
}

// MaxPartMetaSize bounds a part.N.meta file (they are under 1 KiB).
const MaxPartMetaSize = 64 << 10

// DecodePartMeta decodes a part.N.meta file (a msgpack map).
func DecodePartMeta(data []byte) (*PartMeta, error) {
	if len(data) > MaxPartMetaSize {
		return nil, corruptf("part meta of %d bytes", len(data))
	}
	r := &mpReader{b: data}
	n, err := r.mapLen()
	if err != nil {
		return nil, err
	}
	p := &PartMeta{ActualSize: -1}
	for range n {
		k, err := r.key()
		if err != nil {
			return nil, err
		}
		switch k {
		case "e":
			p.ETag, err = r.str()
		case "n":
			var v int64
			v, err = r.intRange(0, 10000)
			p.Number = int(v)
		case "s":
			p.Size, err = r.intRange(0, 1<<50)
		case "as":
			p.ActualSize, err = r.intRange(-1, 1<<50)
		case "mt":
			p.ModTime, err = r.time()
		case "i":
			var v []byte
			v, err = r.bin()
			p.Index = bytes.Clone(v)
		case "crc":
			p.Checksums, err = r.strMap()
		case "err":
			p.Error, err = r.str()
		default:
			p.Unknown = append(p.Unknown, k)
			err = r.skip()
		}
		if err != nil {
			return nil, corruptf("part meta %s: %v", k, err)
		}
	}
	if r.left() != 0 {
		return nil, corruptf("%d bytes after the part meta", r.left())
	}
	if p.Number < 1 {
		return nil, corruptf("part number %d", p.Number)
	}
	return p, nil
}
