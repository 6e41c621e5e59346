package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"hash/crc32"
	"hash/crc64"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func sha256b64(b []byte) string {
	s := sha256.Sum256(b)
	return base64.StdEncoding.EncodeToString(s[:])
}

// TestGetObjectAttributes: GetObjectAttributes through aws-sdk-go-v2 on a
// composite SHA256 multipart object and a single PUT, with part paging,
// and GetObject of one part answering with that part's checksum.
func TestGetObjectAttributes(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "attrs")
	bkt := aws.String("attrs")

	up, err := c.CreateMultipartUpload(ctx(t), &s3.CreateMultipartUploadInput{Bucket: bkt, Key: aws.String("multi"),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
	if err != nil {
		t.Fatal(err)
	}
	parts := [][]byte{pattern(5<<20, 1), pattern(5<<20, 2), pattern(1<<20, 3)}
	var done []types.CompletedPart
	for i, p := range parts {
		r, err := c.UploadPart(ctx(t), &s3.UploadPartInput{Bucket: bkt, Key: aws.String("multi"), UploadId: up.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p), ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		done = append(done, types.CompletedPart{ETag: r.ETag, PartNumber: aws.Int32(int32(i + 1)), ChecksumSHA256: r.ChecksumSHA256})
	}
	comp, err := c.CompleteMultipartUpload(ctx(t), &s3.CompleteMultipartUploadInput{Bucket: bkt, Key: aws.String("multi"),
		UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		t.Fatal(err)
	}

	all := []types.ObjectAttributes{types.ObjectAttributesEtag, types.ObjectAttributesChecksum,
		types.ObjectAttributesObjectParts, types.ObjectAttributesStorageClass, types.ObjectAttributesObjectSize}
	a, err := c.GetObjectAttributes(ctx(t), &s3.GetObjectAttributesInput{Bucket: bkt, Key: aws.String("multi"), ObjectAttributes: all})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(a.ETag) != trimQuotes(aws.ToString(comp.ETag)) || aws.ToInt64(a.ObjectSize) != 11<<20 ||
		a.StorageClass != types.StorageClassStandard || a.LastModified == nil {
		t.Fatalf("attributes: etag %q size %d class %q modified %v", aws.ToString(a.ETag), aws.ToInt64(a.ObjectSize), a.StorageClass, a.LastModified)
	}
	if a.Checksum == nil || a.Checksum.ChecksumType != types.ChecksumTypeComposite ||
		aws.ToString(a.Checksum.ChecksumSHA256)+"-3" != aws.ToString(comp.ChecksumSHA256) {
		t.Fatalf("checksum %+v, complete said %q", a.Checksum, aws.ToString(comp.ChecksumSHA256))
	}
	op := a.ObjectParts
	if op == nil || aws.ToInt32(op.TotalPartsCount) != 3 || len(op.Parts) != 3 || aws.ToBool(op.IsTruncated) {
		t.Fatalf("object parts %+v", op)
	}
	for i, p := range op.Parts {
		if aws.ToInt32(p.PartNumber) != int32(i+1) || aws.ToInt64(p.Size) != int64(len(parts[i])) ||
			aws.ToString(p.ChecksumSHA256) != sha256b64(parts[i]) {
			t.Fatalf("part %d: number %d size %d checksum %q", i+1, aws.ToInt32(p.PartNumber), aws.ToInt64(p.Size), aws.ToString(p.ChecksumSHA256))
		}
	}

	// Paging: one part after part 1.
	a, err = c.GetObjectAttributes(ctx(t), &s3.GetObjectAttributesInput{Bucket: bkt, Key: aws.String("multi"),
		ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesObjectParts}, MaxParts: aws.Int32(1), PartNumberMarker: aws.String("1")})
	if err != nil {
		t.Fatal(err)
	}
	op = a.ObjectParts
	if a.ETag != nil || a.Checksum != nil || op == nil || !aws.ToBool(op.IsTruncated) || len(op.Parts) != 1 ||
		aws.ToInt32(op.Parts[0].PartNumber) != 2 || aws.ToString(op.NextPartNumberMarker) != "2" || aws.ToInt32(op.MaxParts) != 1 {
		t.Fatalf("page: %+v", op)
	}

	// GetObject of part 2 with checksum mode answers with part 2's checksum.
	g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: bkt, Key: aws.String("multi"), PartNumber: aws.Int32(2),
		ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	if body := mustRead(t, g.Body); !bytes.Equal(body, parts[1]) || aws.ToString(g.ChecksumSHA256) != sha256b64(parts[1]) ||
		g.ChecksumType != types.ChecksumTypeComposite {
		t.Fatalf("part 2: %d bytes, checksum %q type %q", len(body), aws.ToString(g.ChecksumSHA256), g.ChecksumType)
	}

	// A single PUT with a CRC32C: a FULL_OBJECT checksum, no parts.
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: bkt, Key: aws.String("plain"), Body: bytes.NewReader([]byte("hello")),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c}); err != nil {
		t.Fatal(err)
	}
	a, err = c.GetObjectAttributes(ctx(t), &s3.GetObjectAttributesInput{Bucket: bkt, Key: aws.String("plain"), ObjectAttributes: all})
	if err != nil {
		t.Fatal(err)
	}
	if a.ObjectParts != nil || aws.ToInt64(a.ObjectSize) != 5 || a.Checksum == nil ||
		a.Checksum.ChecksumType != types.ChecksumTypeFullObject || aws.ToString(a.Checksum.ChecksumCRC32C) == "" {
		t.Fatalf("plain: parts %+v size %d checksum %+v", a.ObjectParts, aws.ToInt64(a.ObjectSize), a.Checksum)
	}

	// Errors as S3: a missing key, an unknown attribute, a stranger.
	_, err = c.GetObjectAttributes(ctx(t), &s3.GetObjectAttributesInput{Bucket: bkt, Key: aws.String("nope"), ObjectAttributes: all})
	wantCode(t, err, "NoSuchKey", 404)
	_, err = c.GetObjectAttributes(ctx(t), &s3.GetObjectAttributesInput{Bucket: bkt, Key: aws.String("plain"),
		ObjectAttributes: []types.ObjectAttributes{"Colour"}})
	wantCode(t, err, "InvalidArgument", 400)
	_, err = s.client("nobody", "nobodysecret").GetObjectAttributes(ctx(t), &s3.GetObjectAttributesInput{Bucket: bkt,
		Key: aws.String("plain"), ObjectAttributes: all})
	if err == nil {
		t.Fatal("an unknown caller read the attributes")
	}
}

func trimQuotes(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

func crc32cB64(b []byte) string {
	v := crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
	return base64.StdEncoding.EncodeToString([]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// TestCompleteFullObjectChecksum: an upload created without an algorithm
// whose parts carry CRC32C (as minio-go sends them) and whose completion
// names the whole object's CRC32C as FULL_OBJECT becomes a FULL_OBJECT
// object: the completion answers with the checksum and its type, a wrong
// value is refused, and a partNumber read answers with the part's CRC.
func TestCompleteFullObjectChecksum(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "full")
	bkt := aws.String("full")
	parts := [][]byte{pattern(5<<20, 7), pattern(3<<20, 8)}
	whole := crc32cB64(append(append([]byte{}, parts[0]...), parts[1]...))
	uploads := map[string]*string{}
	upload := func(key string) []types.CompletedPart {
		up, err := c.CreateMultipartUpload(ctx(t), &s3.CreateMultipartUploadInput{Bucket: bkt, Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		var done []types.CompletedPart
		for i, p := range parts {
			r, err := c.UploadPart(ctx(t), &s3.UploadPartInput{Bucket: bkt, Key: aws.String(key), UploadId: up.UploadId,
				PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c})
			if err != nil {
				t.Fatalf("part %d: %v", i+1, err)
			}
			done = append(done, types.CompletedPart{ETag: r.ETag, PartNumber: aws.Int32(int32(i + 1)), ChecksumCRC32C: r.ChecksumCRC32C})
		}
		uploads[key] = up.UploadId
		return done
	}
	done := upload("good")
	comp, err := c.CompleteMultipartUpload(ctx(t), &s3.CompleteMultipartUploadInput{Bucket: bkt, Key: aws.String("good"),
		UploadId: uploads["good"], MultipartUpload: &types.CompletedMultipartUpload{Parts: done},
		ChecksumCRC32C: aws.String(whole), ChecksumType: types.ChecksumTypeFullObject})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(comp.ChecksumCRC32C) != whole || comp.ChecksumType != types.ChecksumTypeFullObject {
		t.Fatalf("complete answered %q %q, want %q FULL_OBJECT", aws.ToString(comp.ChecksumCRC32C), comp.ChecksumType, whole)
	}
	h, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: bkt, Key: aws.String("good"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(h.ChecksumCRC32C) != whole || h.ChecksumType != types.ChecksumTypeFullObject {
		t.Fatalf("head: %q %q", aws.ToString(h.ChecksumCRC32C), h.ChecksumType)
	}
	g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: bkt, Key: aws.String("good"), PartNumber: aws.Int32(2),
		ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	if body := mustRead(t, g.Body); !bytes.Equal(body, parts[1]) || aws.ToString(g.ChecksumCRC32C) != crc32cB64(parts[1]) {
		t.Fatalf("part 2: %d bytes, checksum %q", len(body), aws.ToString(g.ChecksumCRC32C))
	}

	// A wrong whole-object value is refused and stores nothing.
	done = upload("bad")
	_, err = c.CompleteMultipartUpload(ctx(t), &s3.CompleteMultipartUploadInput{Bucket: bkt, Key: aws.String("bad"),
		UploadId: uploads["bad"], MultipartUpload: &types.CompletedMultipartUpload{Parts: done},
		ChecksumCRC32C: aws.String(crc32cB64(parts[0])), ChecksumType: types.ChecksumTypeFullObject})
	wantCode(t, err, "BadDigest", 400)
	if _, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: bkt, Key: aws.String("bad")}); err == nil {
		t.Fatal("an upload with a wrong checksum was completed")
	}
}

func crc64nvmeB64(b []byte) string {
	v := crc64.Checksum(b, crc64.MakeTable(0x9a6c9329ac4bc9b5))
	out := make([]byte, 8)
	for i := range out {
		out[i] = byte(v >> (56 - 8*i))
	}
	return base64.StdEncoding.EncodeToString(out)
}

// TestCopyObjectChecksums: a copy gets a FULL_OBJECT checksum computed
// over the data: CRC64NVME when neither the request nor the source names
// an algorithm, else x-amz-checksum-algorithm's, also for an in-place copy.
func TestCopyObjectChecksums(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "cps")
	bkt := aws.String("cps")
	data := pattern(40000, 5)
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: bkt, Key: aws.String("src"), Body: bytes.NewReader(data)}); err != nil {
		t.Fatal(err)
	}
	head := func(key string) *s3.HeadObjectOutput {
		t.Helper()
		h, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: bkt, Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if h := head("src"); aws.ToString(h.ChecksumCRC32) != "" || aws.ToString(h.ChecksumCRC64NVME) != "" && aws.ToString(h.ChecksumCRC64NVME) != crc64nvmeB64(data) {
		t.Fatalf("source checksum: %+v", h)
	}

	// No algorithm anywhere: CRC64NVME.
	out, err := c.CopyObject(ctx(t), &s3.CopyObjectInput{Bucket: bkt, Key: aws.String("dflt"), CopySource: aws.String("cps/src")})
	if err != nil {
		t.Fatal(err)
	}
	r := out.CopyObjectResult
	if aws.ToString(r.ChecksumCRC64NVME) != crc64nvmeB64(data) || r.ChecksumType != types.ChecksumTypeFullObject {
		t.Fatalf("default copy: %q %q", aws.ToString(r.ChecksumCRC64NVME), r.ChecksumType)
	}
	if h := head("dflt"); aws.ToString(h.ChecksumCRC64NVME) != crc64nvmeB64(data) || h.ChecksumType != types.ChecksumTypeFullObject {
		t.Fatalf("default copy head: %q %q", aws.ToString(h.ChecksumCRC64NVME), h.ChecksumType)
	}

	// A requested algorithm.
	out, err = c.CopyObject(ctx(t), &s3.CopyObjectInput{Bucket: bkt, Key: aws.String("sha"), CopySource: aws.String("cps/src"),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
	if err != nil {
		t.Fatal(err)
	}
	if r := out.CopyObjectResult; aws.ToString(r.ChecksumSHA256) != sha256b64(data) || r.ChecksumType != types.ChecksumTypeFullObject {
		t.Fatalf("sha256 copy: %q %q", aws.ToString(r.ChecksumSHA256), r.ChecksumType)
	}

	// In place, replacing metadata, with a new algorithm: the data is
	// rehashed and the new metadata kept.
	out, err = c.CopyObject(ctx(t), &s3.CopyObjectInput{Bucket: bkt, Key: aws.String("sha"), CopySource: aws.String("cps/sha"),
		MetadataDirective: types.MetadataDirectiveReplace, Metadata: map[string]string{"colour": "blue"},
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c})
	if err != nil {
		t.Fatal(err)
	}
	h := head("sha")
	if aws.ToString(out.CopyObjectResult.ChecksumCRC32C) != crc32cB64(data) || aws.ToString(h.ChecksumCRC32C) != crc32cB64(data) ||
		h.ChecksumType != types.ChecksumTypeFullObject || aws.ToString(h.ChecksumSHA256) != "" || h.Metadata["colour"] != "blue" {
		t.Fatalf("in-place copy: result %q, head %q %q sha %q meta %v", aws.ToString(out.CopyObjectResult.ChecksumCRC32C),
			aws.ToString(h.ChecksumCRC32C), h.ChecksumType, aws.ToString(h.ChecksumSHA256), h.Metadata)
	}
	g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: bkt, Key: aws.String("sha")})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustRead(t, g.Body), data) {
		t.Fatal("in-place copy changed the data")
	}

	// In place, replacing metadata, of an object without a checksum: it
	// gains CRC64NVME.
	if _, err := c.CopyObject(ctx(t), &s3.CopyObjectInput{Bucket: bkt, Key: aws.String("src"), CopySource: aws.String("cps/src"),
		MetadataDirective: types.MetadataDirectiveReplace, Metadata: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	if h := head("src"); aws.ToString(h.ChecksumCRC64NVME) != crc64nvmeB64(data) || h.Metadata["k"] != "v" {
		t.Fatalf("in-place copy of an object without checksum: %q %v", aws.ToString(h.ChecksumCRC64NVME), h.Metadata)
	}
}
