package hashing

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// MultipartETag computes the ETag S3 gives a completed multipart upload:
// the hex MD5 of the concatenated raw part digests, then "-<parts>". Part
// ETags may be given with or without quotes; in ETagFast mode they are
// XXH3 rather than MD5 digests, which works the same since both are 16
// bytes of hex.
func MultipartETag(partETags []string) (string, error) {
	if len(partETags) == 0 {
		return "", fmt.Errorf("hashing: multipart ETag of zero parts")
	}
	h := md5.New()
	for i, e := range partETags {
		raw, err := hex.DecodeString(strings.Trim(e, `"`))
		if err != nil || len(raw) != md5.Size {
			return "", fmt.Errorf("hashing: multipart ETag: part %d ETag %q is not 32 hex characters", i+1, e)
		}
		h.Write(raw)
	}
	return hex.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(partETags)), nil
}
