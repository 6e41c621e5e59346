package engine

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// reservedBucket is the path prefix of the server's own endpoints.
const reservedBucket = "shardstore"

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

// checkObjectName rejects keys that are not valid S3 keys. Layout v2 never
// derives a path from a key, so every key S3 accepts is stored as it is
// ("a//b", "/x", "../y", "./", segments of any length). NUL alone is
// refused: XML 1.0 cannot carry it in a listing, and the index uses it as
// the separator of upload keys.
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
	return nil
}
