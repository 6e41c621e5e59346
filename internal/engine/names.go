package engine

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// Reserved names inside a bucket's directory tree. Object keys may not
// contain a segment that starts with reservedPrefix, so user keys can
// never collide with the engine's own files.
const (
	reservedPrefix = ".ss."
	metaFile       = ".ss.meta"    // metadata of key "a/b" lives in a/b/.ss.meta
	dirMetaFile    = ".ss.dirmeta" // metadata of key "a/b/" lives in a/b/.ss.dirmeta
	dataDirPrefix  = ".ss.d."      // data directories: a/b/.ss.d.<uuid>/part.N
	reservedBucket = "shardstore"
)

// checkBucketName applies S3's bucket naming rules.
func checkBucketName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: %q %s", ErrInvalidBucketName, name, why)
	}
	if len(name) < 3 || len(name) > 63 {
		return bad("must be 3 to 63 characters long")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return bad("may contain only lowercase letters, digits, dots and hyphens")
		}
	}
	if !isAlnum(name[0]) || !isAlnum(name[len(name)-1]) {
		return bad("must begin and end with a letter or digit")
	}
	if strings.Contains(name, "..") || strings.Contains(name, ".-") || strings.Contains(name, "-.") {
		return bad("must not contain adjacent dots or a dot next to a hyphen")
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return bad("must not be formatted as an IP address")
	}
	if strings.HasPrefix(name, "xn--") || strings.HasPrefix(name, "sthree-") ||
		strings.HasSuffix(name, "-s3alias") || strings.HasSuffix(name, "--ol-s3") {
		return bad("uses a prefix or suffix S3 reserves")
	}
	if name == reservedBucket {
		return bad("is reserved by shardstore")
	}
	return nil
}

func isAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// checkObjectName rejects keys that are not valid S3 keys or that could
// escape the bucket directory or collide with engine files.
func checkObjectName(key string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: %s", ErrInvalidObjectName, why)
	}
	if key == "" {
		return bad("key is empty")
	}
	if len(key) > MaxKeyLength {
		return bad(fmt.Sprintf("key is %d bytes, longer than %d", len(key), MaxKeyLength))
	}
	if !utf8.ValidString(key) {
		return bad("key is not valid UTF-8")
	}
	if strings.ContainsRune(key, 0) {
		return bad("key contains a NUL byte")
	}
	trimmed := strings.TrimSuffix(key, "/")
	if trimmed == "" {
		return bad("key has no name before its trailing slash")
	}
	for _, seg := range strings.Split(trimmed, "/") {
		switch {
		case seg == "":
			return bad("key has an empty path segment (leading or double slash)")
		case seg == "." || seg == "..":
			return bad(fmt.Sprintf("key has a %q path segment", seg))
		case strings.HasPrefix(seg, reservedPrefix):
			return bad(fmt.Sprintf("key segment %q uses the reserved prefix %q", seg, reservedPrefix))
		case len(seg) > 255:
			return bad("key has a path segment longer than 255 bytes")
		}
	}
	return nil
}

// objectDir is the directory that holds a key's metadata and data.
func objectDir(key string) string { return strings.TrimSuffix(key, "/") }

// prevMetaPath is where a drive keeps a key's previous metadata while a
// replacing commit is in flight.
func prevMetaPath(key string) string { return objectMetaPath(key) + ".prev" }

// objectMetaPath is the metadata file of a key.
func objectMetaPath(key string) string {
	if strings.HasSuffix(key, "/") {
		return objectDir(key) + "/" + dirMetaFile
	}
	return key + "/" + metaFile
}
