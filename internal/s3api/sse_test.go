package s3api

import (
	"crypto/md5"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

func ssecHeaders(key []byte) []string {
	sum := md5.Sum(key)
	return []string{hdrSSECPrefix + "Algorithm", "AES256",
		hdrSSECPrefix + "Key", base64.StdEncoding.EncodeToString(key),
		hdrSSECPrefix + "Key-Md5", base64.StdEncoding.EncodeToString(sum[:])}
}

// Hostile and malformed encryption headers get S3's answers before
// anything is stored.
func TestSSEHeaderValidation(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.AllowSSECOverHTTP = true })
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	key := []byte(strings.Repeat("k", 32))
	good := ssecHeaders(key)
	b64 := base64.StdEncoding.EncodeToString
	cases := []struct {
		name    string
		headers []string
		status  int
		code    string
	}{
		{"unknown algorithm", []string{hdrSSE, "aes:kms"}, 400, "InvalidArgument"},
		{"lower-case AES256", []string{hdrSSE, "aes256"}, 400, "InvalidArgument"},
		{"kms key without aws:kms", []string{hdrSSEKMSKey, "testkey-2"}, 400, "InvalidArgument"},
		{"kms key with AES256", []string{hdrSSE, "AES256", hdrSSEKMSKey, "k"}, 400, "InvalidArgument"},
		{"SSE-C and SSE-S3", append([]string{hdrSSE, "AES256"}, good...), 400, "InvalidArgument"},
		{"SSE-C and SSE-KMS", append([]string{hdrSSE, "aws:kms"}, good...), 400, "InvalidArgument"},
		{"SSE-C without algorithm", good[2:], 400, "InvalidArgument"},
		{"SSE-C algorithm alone", good[:2], 400, "InvalidArgument"},
		{"SSE-C without MD5", good[:4], 400, "InvalidArgument"},
		{"SSE-C wrong algorithm", append([]string{hdrSSECPrefix + "Algorithm", "AES128"}, good[2:]...), 400, "InvalidEncryptionAlgorithmError"},
		{"SSE-C wrong MD5", append(good[:4:4], hdrSSECPrefix+"Key-Md5", "AAAAAAAAAAAAAAAAAAAAAA=="), 400, "InvalidArgument"},
		{"SSE-C short key", ssecHeaders(key[:16]), 400, "InvalidArgument"},
		{"SSE-C long key", ssecHeaders(append(key, 'x')), 400, "InvalidArgument"},
		{"SSE-C key not base64", []string{hdrSSECPrefix + "Algorithm", "AES256", hdrSSECPrefix + "Key", "%%%%", hdrSSECPrefix + "Key-Md5", "x"}, 400, "InvalidArgument"},
		{"context not base64", []string{hdrSSE, "aws:kms", hdrSSEContext, "{not base64"}, 400, "InvalidArgument"},
		{"context not an object", []string{hdrSSE, "aws:kms", hdrSSEContext, b64([]byte(`["a"]`))}, 400, "InvalidArgument"},
		{"context without kms", []string{hdrSSE, "AES256", hdrSSEContext, b64([]byte(`{"a":"b"}`))}, 400, "InvalidArgument"},
		{"bucket key not a bool", []string{hdrSSE, "aws:kms", hdrSSEBucketKey, "yes"}, 400, "InvalidArgument"},
		{"SSE-S3 without a KMS", []string{hdrSSE, "AES256"}, 501, "NotImplemented"},
		{"SSE-KMS without a KMS", []string{hdrSSE, "aws:kms", hdrSSEKMSKey, "arn:aws:kms:us-east-1:1:key/x"}, 501, "NotImplemented"},
	}
	for _, tc := range cases {
		rec := h.do("alice", "PUT", "/bk1/obj", []byte("data"), tc.headers...)
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), "<Code>"+tc.code+"</Code>") {
			t.Errorf("%s: %d %s; want %d %s", tc.name, rec.Code, rec.Body.String(), tc.status, tc.code)
		}
		if strings.Contains(rec.Body.String(), b64(key)) {
			t.Errorf("%s: the answer echoes the customer key", tc.name)
		}
	}
	h.expect(h.do("alice", "GET", "/bk1/obj", nil), 404, "NoSuchKey") // nothing was stored
	// Reads take no SSE-S3/KMS headers.
	h.expect(h.do("alice", "PUT", "/bk1/plain", []byte("data")), 200, "")
	h.expect(h.do("alice", "GET", "/bk1/plain", nil, hdrSSE, "aws:kms", hdrSSEKMSKey, "testkey-1"), 400, "InvalidArgument")
	// A customer key for an object that has none.
	h.expect(h.do("alice", "GET", "/bk1/plain", nil, good...), 400, "InvalidRequest")
	h.expect(h.do("alice", "HEAD", "/bk1/plain", nil, good...), 400, "")
}

// A customer key over plain HTTP is refused unless the operator allows it.
func TestSSECNeedsTLS(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	good := ssecHeaders([]byte(strings.Repeat("k", 32)))
	h.expect(h.do("alice", "PUT", "/bk1/obj", []byte("data"), good...), 400, "InvalidRequest")
	h.expect(h.do("alice", "GET", "/bk1/obj", nil, good...), 400, "InvalidRequest")
}

func TestKMSKeyName(t *testing.T) {
	for in, want := range map[string]string{
		"testkey-1": "testkey-1",
		"arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab": "1234abcd-12ab",
		"arn:minio:kms::mykey":                                 "mykey",
		"":                                                     "",
	} {
		if got := kmsKeyName(in); got != want {
			t.Errorf("kmsKeyName(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzCustomerKeyHeaders: any header values give a key only when they
// are a valid SSE-C triple, and never panic.
func FuzzCustomerKeyHeaders(f *testing.F) {
	f.Add("AES256", base64.StdEncoding.EncodeToString(make([]byte, 32)), "cKbF8kNq7Iz6jC0hE6BlJg==")
	f.Add("", "", "")
	f.Add("AES256", "====", "====")
	f.Fuzz(func(t *testing.T, alg, key, keyMD5 string) {
		h := http.Header{}
		h.Set(hdrSSECPrefix+"Algorithm", alg)
		h.Set(hdrSSECPrefix+"Key", key)
		h.Set(hdrSSECPrefix+"Key-Md5", keyMD5)
		k, _, _, err := customerKeyHeaders(h, hdrSSECPrefix)
		if err == nil && k != nil {
			sum := md5.Sum(k)
			if alg != "AES256" || len(k) != 32 || base64.StdEncoding.EncodeToString(sum[:]) != h.Get(hdrSSECPrefix+"Key-Md5") {
				t.Fatalf("accepted an invalid triple %q %q %q", alg, key, keyMD5)
			}
		}
	})
}

// A bucket policy can require SSE-C (and a KMS key) by the encryption
// condition keys, as the ceph s3-tests' enforced-SSE-C policies do.
func TestSSEConditionKeys(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.AllowSSECOverHTTP = true })
	h.expect(h.do("alice", "PUT", "/enc", nil), 200, "")
	doc := `{"Version": "2012-10-17", "Statement": [
	  {"Effect": "Allow", "Principal": "*", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::enc/*"},
	  {"Effect": "Deny", "Principal": "*", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::enc/*",
	   "Condition": {"StringNotEquals": {"s3:x-amz-server-side-encryption-customer-algorithm": "AES256"}}},
	  {"Effect": "Deny", "Principal": "*", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::enc/kms/*",
	   "Condition": {"StringNotEquals": {"s3:x-amz-server-side-encryption-aws-kms-key-id": "testkey-1"}}}
	]}`
	h.expect(h.do("alice", "PUT", "/enc?policy", []byte(doc)), 204, "")
	good := ssecHeaders([]byte(strings.Repeat("k", 32)))
	h.expect(h.do("bob", "PUT", "/enc/plain", []byte("x")), 403, "AccessDenied")
	h.expect(h.do("bob", "PUT", "/enc/ssec", []byte("x"), good...), 200, "")
	h.expect(h.do("bob", "PUT", "/enc/kms/a", []byte("x"), good...), 403, "AccessDenied")
}
