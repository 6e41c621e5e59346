package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"hash/crc32"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"
	mcreds "github.com/minio/minio-go/v7/pkg/credentials"
)

func crc32B64(b []byte) string {
	v := crc32.ChecksumIEEE(b)
	return base64.StdEncoding.EncodeToString([]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// fullObjectCRC picks the completion field and answer field of alg.
func fullObjectCRC(alg types.ChecksumAlgorithm, in *s3.CompleteMultipartUploadInput, v string) {
	switch alg {
	case types.ChecksumAlgorithmCrc32:
		in.ChecksumCRC32 = aws.String(v)
	case types.ChecksumAlgorithmCrc32c:
		in.ChecksumCRC32C = aws.String(v)
	default:
		in.ChecksumCRC64NVME = aws.String(v)
	}
}

func crcOf(alg types.ChecksumAlgorithm, crc32v, crc32cv, crc64v *string) string {
	switch alg {
	case types.ChecksumAlgorithmCrc32:
		return aws.ToString(crc32v)
	case types.ChecksumAlgorithmCrc32c:
		return aws.ToString(crc32cv)
	}
	return aws.ToString(crc64v)
}

// TestMultipartFullObjectCRCs: aws-sdk-go-v2 with the three CRCs and
// ChecksumType FULL_OBJECT (CRC64NVME's default): the parts' CRCs are
// computed by the SDK, the completion's whole-object CRC is verified
// against the CRC the server combines from the parts (a wrong one is
// BadDigest and stores nothing), and HEAD, GET (which the SDK validates)
// and GetObjectAttributes answer it with type FULL_OBJECT, the parts
// only counted.
func TestMultipartFullObjectCRCs(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "crcs")
	bkt := aws.String("crcs")
	parts := [][]byte{pattern(5<<20, 11), pattern(5<<20+3, 12), pattern(4097, 13)}
	var all []byte
	for _, p := range parts {
		all = append(all, p...)
	}
	wholeOf := map[types.ChecksumAlgorithm]string{
		types.ChecksumAlgorithmCrc32: crc32B64(all), types.ChecksumAlgorithmCrc32c: crc32cB64(all), types.ChecksumAlgorithmCrc64nvme: crc64nvmeB64(all),
	}
	for alg, whole := range wholeOf {
		t.Run(string(alg), func(t *testing.T) {
			key := aws.String("obj-" + strings.ToLower(string(alg)))
			create := &s3.CreateMultipartUploadInput{Bucket: bkt, Key: key, ChecksumAlgorithm: alg}
			if alg != types.ChecksumAlgorithmCrc64nvme {
				create.ChecksumType = types.ChecksumTypeFullObject
			}
			up, err := c.CreateMultipartUpload(ctx(t), create)
			if err != nil {
				t.Fatal(err)
			}
			if up.ChecksumType != types.ChecksumTypeFullObject || up.ChecksumAlgorithm != alg {
				t.Fatalf("create answered %q %q", up.ChecksumAlgorithm, up.ChecksumType)
			}
			var done []types.CompletedPart
			for i, p := range parts {
				r, err := c.UploadPart(ctx(t), &s3.UploadPartInput{Bucket: bkt, Key: key, UploadId: up.UploadId,
					PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p), ChecksumAlgorithm: alg})
				if err != nil {
					t.Fatalf("part %d: %v", i+1, err)
				}
				if crcOf(alg, r.ChecksumCRC32, r.ChecksumCRC32C, r.ChecksumCRC64NVME) == "" {
					t.Fatalf("part %d answered no %s", i+1, alg)
				}
				done = append(done, types.CompletedPart{ETag: r.ETag, PartNumber: aws.Int32(int32(i + 1))})
			}
			complete := func(v string) (*s3.CompleteMultipartUploadOutput, error) {
				in := &s3.CompleteMultipartUploadInput{Bucket: bkt, Key: key, UploadId: up.UploadId,
					MultipartUpload: &types.CompletedMultipartUpload{Parts: done}, ChecksumType: types.ChecksumTypeFullObject}
				fullObjectCRC(alg, in, v)
				return c.CompleteMultipartUpload(ctx(t), in)
			}
			// Of the right size, but not the object's: the first part's CRC.
			wrong := map[types.ChecksumAlgorithm]string{types.ChecksumAlgorithmCrc32: crc32B64(parts[0]),
				types.ChecksumAlgorithmCrc32c: crc32cB64(parts[0]), types.ChecksumAlgorithmCrc64nvme: crc64nvmeB64(parts[0])}
			_, err = complete(wrong[alg])
			wantCode(t, err, "BadDigest", 400)
			if !strings.Contains(err.Error(), "The "+strings.ToLower(string(alg))+" you specified did not match the calculated checksum.") {
				t.Fatalf("message: %v", err)
			}
			if _, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: bkt, Key: key}); err == nil {
				t.Fatal("a completion with a wrong checksum stored the object")
			}
			comp, err := complete(whole)
			if err != nil {
				t.Fatal(err)
			}
			if got := crcOf(alg, comp.ChecksumCRC32, comp.ChecksumCRC32C, comp.ChecksumCRC64NVME); got != whole || comp.ChecksumType != types.ChecksumTypeFullObject {
				t.Fatalf("complete answered %q %q, want %q", got, comp.ChecksumType, whole)
			}
			h, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: bkt, Key: key, ChecksumMode: types.ChecksumModeEnabled})
			if err != nil {
				t.Fatal(err)
			}
			if got := crcOf(alg, h.ChecksumCRC32, h.ChecksumCRC32C, h.ChecksumCRC64NVME); got != whole || h.ChecksumType != types.ChecksumTypeFullObject {
				t.Fatalf("head: %q %q", got, h.ChecksumType)
			}
			g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: bkt, Key: key, ChecksumMode: types.ChecksumModeEnabled})
			if err != nil {
				t.Fatal(err)
			}
			if body := mustRead(t, g.Body); !bytes.Equal(body, all) {
				t.Fatal("the object's bytes differ")
			}
			a, err := c.GetObjectAttributes(ctx(t), &s3.GetObjectAttributesInput{Bucket: bkt, Key: key,
				ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesChecksum, types.ObjectAttributesObjectParts}})
			if err != nil {
				t.Fatal(err)
			}
			if a.Checksum == nil || crcOf(alg, a.Checksum.ChecksumCRC32, a.Checksum.ChecksumCRC32C, a.Checksum.ChecksumCRC64NVME) != whole ||
				a.Checksum.ChecksumType != types.ChecksumTypeFullObject {
				t.Fatalf("attributes checksum %+v", a.Checksum)
			}
			if op := a.ObjectParts; op == nil || aws.ToInt32(op.TotalPartsCount) != 3 || len(op.Parts) != 0 || op.MaxParts != nil || op.IsTruncated != nil {
				t.Fatalf("attributes parts %+v", op)
			}
		})
	}
}

// TestMultipartChecksumRefusals: what aws-sdk-go-v2 callers get for the
// checksum combinations S3 refuses, with S3's codes and messages.
func TestMultipartChecksumRefusals(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "refuse")
	bkt := aws.String("refuse")
	_, err := c.CreateMultipartUpload(ctx(t), &s3.CreateMultipartUploadInput{Bucket: bkt, Key: aws.String("k"),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc64nvme, ChecksumType: types.ChecksumTypeComposite})
	wantCode(t, err, "InvalidRequest", 400)
	if !strings.Contains(err.Error(), "The COMPOSITE checksum type cannot be used with the crc64nvme checksum algorithm.") {
		t.Fatalf("message: %v", err)
	}
	_, err = c.CreateMultipartUpload(ctx(t), &s3.CreateMultipartUploadInput{Bucket: bkt, Key: aws.String("k"),
		ChecksumType: types.ChecksumTypeFullObject})
	wantCode(t, err, "InvalidRequest", 400)

	// A CRC32C upload: a part the SDK sends with its default CRC32 is
	// refused before it is stored.
	up, err := c.CreateMultipartUpload(ctx(t), &s3.CreateMultipartUploadInput{Bucket: bkt, Key: aws.String("k"),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c})
	if err != nil {
		t.Fatal(err)
	}
	if up.ChecksumType != types.ChecksumTypeComposite {
		t.Fatalf("CRC32C upload type %q, want COMPOSITE", up.ChecksumType)
	}
	body := []byte("a part")
	_, err = c.UploadPart(ctx(t), &s3.UploadPartInput{Bucket: bkt, Key: aws.String("k"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader(body), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
	wantCode(t, err, "InvalidRequest", 400)
	if !strings.Contains(err.Error(), "expected checksum Type: crc32c, actual checksum Type: crc32") {
		t.Fatalf("message: %v", err)
	}
	lp, err := c.ListParts(ctx(t), &s3.ListPartsInput{Bucket: bkt, Key: aws.String("k"), UploadId: up.UploadId})
	if err != nil || len(lp.Parts) != 0 || lp.ChecksumType != types.ChecksumTypeComposite {
		t.Fatalf("list parts: %+v %v", lp, err)
	}
	r, err := c.UploadPart(ctx(t), &s3.UploadPartInput{Bucket: bkt, Key: aws.String("k"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader(body), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c})
	if err != nil {
		t.Fatal(err)
	}
	// The completion must name each part's checksum; a composite value
	// sent with it is verified, with its "-N".
	_, err = c.CompleteMultipartUpload(ctx(t), &s3.CompleteMultipartUploadInput{Bucket: bkt, Key: aws.String("k"), UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: r.ETag, PartNumber: aws.Int32(1)}}}})
	wantCode(t, err, "InvalidRequest", 400)
	raw, _ := base64.StdEncoding.DecodeString(aws.ToString(r.ChecksumCRC32C))
	want := crc32cB64(raw) + "-1"
	parts := []types.CompletedPart{{ETag: r.ETag, PartNumber: aws.Int32(1), ChecksumCRC32C: r.ChecksumCRC32C}}
	_, err = c.CompleteMultipartUpload(ctx(t), &s3.CompleteMultipartUploadInput{Bucket: bkt, Key: aws.String("k"), UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}, ChecksumCRC32C: aws.String(crc32cB64(raw) + "-2")})
	wantCode(t, err, "BadDigest", 400)
	comp, err := c.CompleteMultipartUpload(ctx(t), &s3.CompleteMultipartUploadInput{Bucket: bkt, Key: aws.String("k"), UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}, ChecksumCRC32C: aws.String(want), ChecksumType: types.ChecksumTypeComposite})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(comp.ChecksumCRC32C) != want || comp.ChecksumType != types.ChecksumTypeComposite {
		t.Fatalf("complete answered %q %q, want %q COMPOSITE", aws.ToString(comp.ChecksumCRC32C), comp.ChecksumType, want)
	}
	// One part of a COMPOSITE object: its own checksum, type COMPOSITE.
	g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: bkt, Key: aws.String("k"), PartNumber: aws.Int32(1),
		ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	if b := mustRead(t, g.Body); !bytes.Equal(b, body) || aws.ToString(g.ChecksumCRC32C) != aws.ToString(r.ChecksumCRC32C) ||
		g.ChecksumType != types.ChecksumTypeComposite {
		t.Fatalf("part 1: %q %q %q", b, aws.ToString(g.ChecksumCRC32C), g.ChecksumType)
	}
}

// TestMinioGoMultipartChecksums: minio-go with a checksum asked for (it
// needs trailing checksums for that) creates the upload with the
// algorithm (and FULL_OBJECT for its full-object CRCs), sends each
// part's checksum and completes with the object's, a composite one
// without its "-N": the server verifies it and keeps it.
func TestMinioGoMultipartChecksums(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "mgo")
	mc, err := minio.New(strings.TrimPrefix(s.endpoint, "http://"), &minio.Options{
		Creds: mcreds.NewStaticV4(rootUser, rootPass, ""), Region: region, TrailingHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	const partSize = 5 << 20
	data := pattern(2*partSize+4321, 21)
	var chunks [][]byte
	for rest := data; len(rest) > 0; {
		n := min(partSize, len(rest))
		chunks = append(chunks, rest[:n])
		rest = rest[n:]
	}
	compositeOf := func(sum func([]byte) string) string {
		var raw []byte
		for _, ch := range chunks {
			b, _ := base64.StdEncoding.DecodeString(sum(ch))
			raw = append(raw, b...)
		}
		return sum(raw) + "-3"
	}
	sha := func(b []byte) string { s := sha256.Sum256(b); return base64.StdEncoding.EncodeToString(s[:]) }
	for _, tc := range []struct {
		cs    minio.ChecksumType
		typ   types.ChecksumType
		want  string
		value func(*s3.HeadObjectOutput) *string
	}{
		{minio.ChecksumCRC32C, types.ChecksumTypeComposite, compositeOf(crc32cB64), func(h *s3.HeadObjectOutput) *string { return h.ChecksumCRC32C }},
		{minio.ChecksumFullObjectCRC32C, types.ChecksumTypeFullObject, crc32cB64(data), func(h *s3.HeadObjectOutput) *string { return h.ChecksumCRC32C }},
		{minio.ChecksumSHA256, types.ChecksumTypeComposite, compositeOf(sha), func(h *s3.HeadObjectOutput) *string { return h.ChecksumSHA256 }},
	} {
		key := "obj-" + tc.cs.String() + "-" + string(tc.typ)
		// A reader without ReadAt: minio-go's path sending checksums in
		// part headers rather than trailers.
		if _, err := mc.PutObject(ctx(t), "mgo", key, io.MultiReader(bytes.NewReader(data)), int64(len(data)),
			minio.PutObjectOptions{Checksum: tc.cs, PartSize: partSize}); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		h, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String("mgo"), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToString(tc.value(h)); got != tc.want || h.ChecksumType != tc.typ || aws.ToInt64(h.ContentLength) != int64(len(data)) {
			t.Fatalf("%s: checksum %q type %q, want %q %q", key, got, h.ChecksumType, tc.want, tc.typ)
		}
	}
}
