package e2e

import (
	"bytes"
	"crypto/md5"
	"crypto/sha512"
	"encoding/base64"
	"hash"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/cespare/xxhash/v2"
	"github.com/zeebo/xxh3"
)

// newerChecksums are the algorithms S3 added in 2025, with an
// independent implementation of each to compute expected values.
var newerChecksums = map[types.ChecksumAlgorithm]func() hash.Hash{
	types.ChecksumAlgorithmMd5:       md5.New,
	types.ChecksumAlgorithmSha512:    sha512.New,
	types.ChecksumAlgorithmXxhash64:  func() hash.Hash { return xxhash.New() },
	types.ChecksumAlgorithmXxhash3:   func() hash.Hash { return xxh3.New() },
	types.ChecksumAlgorithmXxhash128: func() hash.Hash { return xxh3.New128() },
}

func sum64(h func() hash.Hash, b []byte) string {
	x := h()
	x.Write(b)
	return base64.StdEncoding.EncodeToString(x.Sum(nil))
}

// TestNewerChecksumAlgorithms: aws-sdk-go-v2 at default settings sends
// each newer algorithm on PutObject and multipart; the server verifies,
// stores and returns it; a wrong value is BadDigest and stores nothing.
func TestNewerChecksumAlgorithms(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "sums")
	body := pattern(300<<10, 11)
	for alg, newHash := range newerChecksums {
		t.Run(string(alg), func(t *testing.T) {
			key := "single-" + strings.ToLower(string(alg))
			want := sum64(newHash, body)
			// The SDK names these algorithms but computes only SHA512
			// itself: send the value, as an application would.
			in := &s3.PutObjectInput{Bucket: aws.String("sums"), Key: aws.String(key), Body: bytes.NewReader(body)}
			setPutChecksum(in, alg, want)
			put, err := c.PutObject(ctx(t), in)
			if err != nil {
				t.Fatalf("put: %v", err)
			}
			if got := responseChecksum(alg, put.ChecksumMD5, put.ChecksumSHA512, put.ChecksumXXHASH64, put.ChecksumXXHASH3, put.ChecksumXXHASH128); got != want {
				t.Fatalf("PUT answered %s %q, want %q", alg, got, want)
			}
			get, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("sums"), Key: aws.String(key),
				ChecksumMode: types.ChecksumModeEnabled})
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(get.Body) // the SDK verifies the checksum as it reads
			get.Body.Close()
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("get: %v", err)
			}
			if v := responseChecksum(alg, get.ChecksumMD5, get.ChecksumSHA512, get.ChecksumXXHASH64, get.ChecksumXXHASH3, get.ChecksumXXHASH128); v != want {
				t.Fatalf("GET returned %s %q, want %q", alg, v, want)
			}

			// A wrong value: BadDigest, nothing stored.
			in = &s3.PutObjectInput{Bucket: aws.String("sums"), Key: aws.String(key + "-wrong"), Body: bytes.NewReader(body)}
			setPutChecksum(in, alg, sum64(newHash, append([]byte("x"), body...)))
			_, err = c.PutObject(ctx(t), in)
			if code, st := errCode(err); code != "BadDigest" || st != 400 {
				t.Fatalf("wrong %s: %v", alg, err)
			}
			if _, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String("sums"), Key: aws.String(key + "-wrong")}); err == nil {
				t.Fatal("an object with a wrong checksum was stored")
			}

			// Multipart: parts carry the algorithm; the object gets the
			// composite checksum of the part checksums.
			mkey := "multi-" + strings.ToLower(string(alg))
			up, err := c.CreateMultipartUpload(ctx(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("sums"),
				Key: aws.String(mkey), ChecksumAlgorithm: alg})
			if err != nil {
				t.Fatal(err)
			}
			part1, part2 := pattern(5<<20, 1), pattern(1<<20, 2)
			var done []types.CompletedPart
			var raw []byte
			for i, p := range [][]byte{part1, part2} {
				n := int32(i + 1)
				pin := &s3.UploadPartInput{Bucket: aws.String("sums"), Key: aws.String(mkey),
					UploadId: up.UploadId, PartNumber: aws.Int32(n), Body: bytes.NewReader(p)}
				setPartUploadChecksum(pin, alg, sum64(newHash, p))
				r, err := c.UploadPart(ctx(t), pin)
				if err != nil {
					t.Fatalf("part %d: %v", n, err)
				}
				v := responseChecksum(alg, r.ChecksumMD5, r.ChecksumSHA512, r.ChecksumXXHASH64, r.ChecksumXXHASH3, r.ChecksumXXHASH128)
				if v != sum64(newHash, p) {
					t.Fatalf("part %d checksum %q", n, v)
				}
				cp := types.CompletedPart{ETag: r.ETag, PartNumber: aws.Int32(n)}
				setPartChecksum(&cp, alg, v)
				done = append(done, cp)
				b, _ := base64.StdEncoding.DecodeString(v)
				raw = append(raw, b...)
			}
			comp, err := c.CompleteMultipartUpload(ctx(t), &s3.CompleteMultipartUploadInput{Bucket: aws.String("sums"),
				Key: aws.String(mkey), UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
			if err != nil {
				t.Fatal(err)
			}
			composite := sum64(newHash, raw) + "-2"
			if v := responseChecksum(alg, comp.ChecksumMD5, comp.ChecksumSHA512, comp.ChecksumXXHASH64, comp.ChecksumXXHASH3, comp.ChecksumXXHASH128); v != composite {
				t.Fatalf("complete answered %q, want composite %q", v, composite)
			}
		})
	}
}

// checksumField picks, among the newer algorithms' fields of an SDK
// struct (given in the order MD5, SHA512, XXHASH64, XXHASH3, XXHASH128),
// the one alg names; nil for any other algorithm.
func checksumField(alg types.ChecksumAlgorithm, md5v, sha512v, x64, x3, x128 **string) **string {
	switch alg {
	case types.ChecksumAlgorithmMd5:
		return md5v
	case types.ChecksumAlgorithmSha512:
		return sha512v
	case types.ChecksumAlgorithmXxhash64:
		return x64
	case types.ChecksumAlgorithmXxhash3:
		return x3
	case types.ChecksumAlgorithmXxhash128:
		return x128
	}
	return nil
}

// responseChecksum is the value of alg's field among the newer algorithms'.
func responseChecksum(alg types.ChecksumAlgorithm, md5v, sha512v, x64, x3, x128 *string) string {
	if f := checksumField(alg, &md5v, &sha512v, &x64, &x3, &x128); f != nil {
		return aws.ToString(*f)
	}
	return ""
}

func setChecksum(v string, f **string) {
	if f != nil {
		*f = aws.String(v)
	}
}

func setPutChecksum(in *s3.PutObjectInput, alg types.ChecksumAlgorithm, v string) {
	setChecksum(v, checksumField(alg, &in.ChecksumMD5, &in.ChecksumSHA512, &in.ChecksumXXHASH64, &in.ChecksumXXHASH3, &in.ChecksumXXHASH128))
}

func setPartUploadChecksum(in *s3.UploadPartInput, alg types.ChecksumAlgorithm, v string) {
	setChecksum(v, checksumField(alg, &in.ChecksumMD5, &in.ChecksumSHA512, &in.ChecksumXXHASH64, &in.ChecksumXXHASH3, &in.ChecksumXXHASH128))
}

func setPartChecksum(cp *types.CompletedPart, alg types.ChecksumAlgorithm, v string) {
	setChecksum(v, checksumField(alg, &cp.ChecksumMD5, &cp.ChecksumSHA512, &cp.ChecksumXXHASH64, &cp.ChecksumXXHASH3, &cp.ChecksumXXHASH128))
}
