package s3api

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/hashing"
)

// hdr builds a header from name, value pairs, keeping names as given
// (canonical or not) the way a server receives them.
func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h[http.CanonicalHeaderKey(kv[i])] = append(h[http.CanonicalHeaderKey(kv[i])], kv[i+1])
	}
	return h
}

func wantAPIError(t *testing.T, what string, err error, code, msg string) {
	t.Helper()
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != code || ae.Status != http.StatusBadRequest || (msg != "" && ae.Message != msg) {
		t.Errorf("%s: %v, want 400 %s %q", what, err, code, msg)
	}
}

// TestParseCreateChecksum: CreateMultipartUpload's algorithm and type,
// with S3's messages for what it refuses.
func TestParseCreateChecksum(t *testing.T) {
	unsupported := errUnsupportedChecksum().(*Error).Message
	for _, tc := range []struct {
		h        http.Header
		alg, typ string
		msg      string // "" for success
	}{
		{hdr(), "", "", ""},
		{hdr("X-Amz-Checksum-Algorithm", "crc32"), "CRC32", "COMPOSITE", ""},
		{hdr("X-Amz-Checksum-Algorithm", "CRC64NVME"), "CRC64NVME", "FULL_OBJECT", ""},
		{hdr("X-Amz-Checksum-Algorithm", "CRC32C", "X-Amz-Checksum-Type", "full_object"), "CRC32C", "FULL_OBJECT", ""},
		{hdr("X-Amz-Checksum-Algorithm", "SHA256", "X-Amz-Checksum-Type", "COMPOSITE"), "SHA256", "COMPOSITE", ""},
		{hdr("X-Amz-Checksum-Algorithm", "XXHASH3"), "XXHASH3", "COMPOSITE", ""},
		{hdr("X-Amz-Checksum-Type", "COMPOSITE"), "", "",
			"The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header."},
		{hdr("X-Amz-Checksum-Algorithm", "SHA1", "X-Amz-Checksum-Type", "FULL_OBJECT"), "", "",
			"The FULL_OBJECT checksum type cannot be used with the sha1 checksum algorithm."},
		{hdr("X-Amz-Checksum-Algorithm", "crc64nvme", "X-Amz-Checksum-Type", "composite"), "", "",
			"The COMPOSITE checksum type cannot be used with the crc64nvme checksum algorithm."},
		{hdr("X-Amz-Checksum-Algorithm", "CRC32", "X-Amz-Checksum-Type", "PARTIAL"), "", "", "Value for x-amz-checksum-type header is invalid."},
		{hdr("X-Amz-Checksum-Algorithm", "CRC32", "X-Amz-Checksum-Type", ""), "", "", "Value for x-amz-checksum-type header is invalid."},
		{hdr("X-Amz-Checksum-Algorithm", "CRC32", "X-Amz-Checksum-Type", "COMPOSITE", "X-Amz-Checksum-Type", "FULL_OBJECT"), "", "",
			"Value for x-amz-checksum-type header is invalid."},
		{hdr("X-Amz-Checksum-Algorithm", "CRC32", "X-Amz-Checksum-Type", "FULL_OBJECT\x00"), "", "", "Value for x-amz-checksum-type header is invalid."},
		{hdr("X-Amz-Checksum-Algorithm", "CRC16"), "", "", unsupported},
		{hdr("X-Amz-Checksum-Algorithm", "../CRC32"), "", "", unsupported},
		{hdr("X-Amz-Checksum-Algorithm", "CRC32\r\nX-Evil: 1"), "", "", unsupported},
		{hdr("X-Amz-Checksum-Algorithm", strings.Repeat("A", 8192)), "", "", unsupported},
	} {
		alg, typ, err := parseCreateChecksum(tc.h)
		switch {
		case tc.msg != "":
			wantAPIError(t, "create", err, "InvalidRequest", tc.msg)
		case err != nil || alg != tc.alg || typ != tc.typ:
			t.Errorf("parseCreateChecksum(%v) = %q %q %v, want %q %q", tc.h, alg, typ, err, tc.alg, tc.typ)
		}
	}
}

// TestCompleteChecksumHeaderParsing: the whole-object checksum header of
// a CompleteMultipartUpload, which may carry a COMPOSITE "-N".
func TestCompleteChecksumHeaderParsing(t *testing.T) {
	crc := hashing.EncodeChecksum([]byte{1, 2, 3, 4})
	for _, tc := range []struct {
		h          http.Header
		alg, value string
		code       string
	}{
		{hdr(), "", "", ""},
		{hdr("X-Amz-Checksum-Crc32", crc), "CRC32", crc, ""},
		{hdr("X-Amz-Checksum-Crc32c", crc+"-3"), "CRC32C", crc + "-3", ""},
		{hdr("X-Amz-Checksum-Crc32", crc+"-0"), "", "", "InvalidRequest"},
		{hdr("X-Amz-Checksum-Crc32", crc+"-10001"), "", "", "InvalidRequest"},
		{hdr("X-Amz-Checksum-Crc32", crc+"-3-3"), "", "", "InvalidRequest"},
		{hdr("X-Amz-Checksum-Crc32", "not-base64"), "", "", "InvalidRequest"},
		{hdr("X-Amz-Checksum-Crc64nvme", crc), "", "", "InvalidRequest"},
		{hdr("X-Amz-Checksum-Crc32", crc, "X-Amz-Checksum-Sha1", hashing.EncodeChecksum(make([]byte, 20))), "", "", "InvalidRequest"},
		{hdr("X-Amz-Checksum-Crc16", crc), "", "", "InvalidRequest"},
		{hdr("X-Amz-Checksum-Type", "COMPOSITE", "X-Amz-Checksum-Mode", "ENABLED"), "", "", ""},
	} {
		alg, value, err := checksumHeaderValue(tc.h, validObjectChecksum)
		if tc.code != "" {
			wantAPIError(t, "complete", err, tc.code, "")
			continue
		}
		if err != nil || alg != tc.alg || value != tc.value {
			t.Errorf("checksumHeaderValue(%v) = %q %q %v", tc.h, alg, value, err)
		}
	}
	// A body's checksum never takes a part count.
	if _, _, err := checksumHeaderValue(hdr("X-Amz-Checksum-Crc32", crc+"-1"), validChecksumValue); err == nil {
		t.Error("a PUT checksum with a part count was accepted")
	}
}

// FuzzChecksumHeaders: whatever the checksum headers, the parsers answer
// a 400 S3 error or a result that is well formed: a known algorithm, a
// type it allows, a value of the algorithm's size.
func FuzzChecksumHeaders(f *testing.F) {
	f.Add("CRC32", "COMPOSITE", "x-amz-checksum-crc32", "AQIDBA==-2")
	f.Add("crc64nvme", "composite", "x-amz-checksum-crc64nvme", "AAAAAAAAAAA=")
	f.Add("", "FULL_OBJECT", "x-amz-checksum-sha256", "")
	f.Add("SHA1", "", "x-amz-checksum-foo", "AQIDBA==")
	f.Fuzz(func(t *testing.T, alg, typ, name, value string) {
		h := http.Header{}
		if alg != "" {
			h.Set("X-Amz-Checksum-Algorithm", alg)
		}
		if typ != "" {
			h.Set("X-Amz-Checksum-Type", typ)
		}
		if name != "" {
			h[http.CanonicalHeaderKey(name)] = []string{value}
		}
		check := func(what string, err error) bool {
			t.Helper()
			if err == nil {
				return true
			}
			var ae *Error
			if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
				t.Fatalf("%s: %v is not a 400 S3 error", what, err)
			}
			return false
		}
		if a, ty, err := parseCreateChecksum(h); check("create", err) && a != "" {
			if _, ok := checksumAlgorithms[a]; !ok || !hashing.SupportsChecksumType(a, ty) {
				t.Fatalf("create accepted %q %q", a, ty)
			}
		}
		if a, v, err := checksumHeaderValue(h, validObjectChecksum); check("complete", err) && a != "" {
			if _, _, err := hashing.ParseObjectChecksum(a, v); err != nil {
				t.Fatalf("complete accepted %s %q: %v", a, v, err)
			}
		}
		if cs, err := parseChecksum(h); check("put", err) && cs.value != "" && !validChecksumValue(cs.alg, cs.value) {
			t.Fatalf("put accepted %s %q", cs.alg, cs.value)
		}
	})
}

// TestChecksumErrorMessages: the engine's checksum errors reach the
// client with S3's codes and messages.
func TestChecksumErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		err       error
		code, msg string
	}{
		{&engine.ChecksumError{Algorithm: "CRC32"}, "BadDigest", "The CRC32 you specified did not match the calculated checksum."},
		{&engine.ChecksumError{Algorithm: "CRC32C", Complete: true}, "BadDigest", "The crc32c you specified did not match the calculated checksum."},
		{&engine.ChecksumError{Algorithm: "SHA256", Part: 1}, "BadDigest", "The sha256 you specified for part 1 did not match what we received."},
		{&engine.UploadChecksumError{Reason: engine.ChecksumPartAlgorithm, Algorithm: "SHA256", Sent: "CRC32"}, "InvalidRequest",
			"Checksum Type mismatch occurred, expected checksum Type: sha256, actual checksum Type: crc32"},
		{&engine.UploadChecksumError{Reason: engine.ChecksumCompleteType, Type: "COMPOSITE", Sent: "FULL_OBJECT"}, "InvalidRequest",
			"The upload was created using the COMPOSITE checksum mode. The complete request must use the same checksum mode."},
		{&engine.UploadChecksumError{Reason: engine.ChecksumCompleteType, Sent: "FULL_OBJECT"}, "InvalidRequest",
			"The upload was created using the null checksum mode. The complete request must use the same checksum mode."},
		{&engine.UploadChecksumError{Reason: engine.ChecksumPartMissing, Algorithm: "SHA256", Part: 2}, "InvalidRequest",
			"The upload was created using a sha256 checksum. The complete request must include the checksum for each part. It was missing for part 2 in the request."},
	} {
		ae := toAPIError(errors.Join(errors.New("wrapped"), tc.err))
		if ae.Code != tc.code || ae.Status != http.StatusBadRequest || ae.Message != tc.msg {
			t.Errorf("%v: %s %d %q", tc.err, ae.Code, ae.Status, ae.Message)
		}
	}
}
