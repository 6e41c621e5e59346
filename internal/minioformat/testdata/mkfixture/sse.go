package main

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// -fill sse: MinIO with a static KMS key (MINIO_KMS_SECRET_KEY), over TLS
// (sse_tls.go), objects
// stored SSE-S3 and SSE-KMS (that key, with and without an encryption
// context; single-part, empty, of several blocks, multipart) beside plain
// ones, so the adoption of encrypted versions is tested on what MinIO
// really writes, and an SSE-C one (sse-c.txt) whose adoption is refused.
// The keys are fixed and given here: the fixture holds no secret of
// anyone's.

// sseKMSKey is the static KMS key MinIO runs with for -fill sse.
const sseKMSKey = "fixture-key:" + "c2hhcmRzdG9yZSBtaW5pbyBmaXh0dXJlIGttcyBrZXk="

// sseCKey is the client key of the SSE-C objects (32 bytes).
var sseCKey = []byte("shardstore minio fixture sse-c k")

// sseEnv: the KMS key, and parity 1 (3+1 on the 4 drives) so the 5 MiB
// part of the multipart object (MinIO's least part size but for the
// last) costs 6.7 MB of drive files rather than 10: encrypted bytes do
// not compress.
func sseEnv() []string {
	return []string{"MINIO_KMS_SECRET_KEY=" + sseKMSKey, "MINIO_STORAGE_CLASS_STANDARD=EC:1"}
}

func (f *filler) fillSSE() error {
	const b = "enc"
	if err := f.mkBucket(b, false); err != nil {
		return err
	}
	puts := []struct {
		key  string
		size int
		opt  putOpt
	}{
		{"plain.txt", 300, nil},
		{"sse-s3.txt", 500, func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 }},
		{"sse-kms.txt", 700, func(in *s3.PutObjectInput) {
			in.ServerSideEncryption = types.ServerSideEncryptionAwsKms
			in.SSEKMSKeyId = aws.String("fixture-key")
		}},
		{"sse-s3-empty", 0, func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 }},
		// several DARE packages (64 KiB), with part files
		{"sse-s3-big.bin", 300*kib + 7, func(in *s3.PutObjectInput) {
			in.ServerSideEncryption = types.ServerSideEncryptionAes256
		}},
		// S3 checksums, which MinIO seals with the object key (as
		// clients send them by default now)
		{"sse-s3-crc.txt", 600, func(in *s3.PutObjectInput) {
			in.ServerSideEncryption = types.ServerSideEncryptionAes256
			in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32c
		}},
		{"sse-kms-sha.txt", 650, func(in *s3.PutObjectInput) {
			in.ServerSideEncryption = types.ServerSideEncryptionAwsKms
			in.SSEKMSKeyId = aws.String("fixture-key")
			in.ChecksumAlgorithm = types.ChecksumAlgorithmSha256
		}},
		// an SSE-KMS encryption context (MinIO binds it to the data key)
		{"sse-kms-ctx.txt", 900, func(in *s3.PutObjectInput) {
			in.ServerSideEncryption = types.ServerSideEncryptionAwsKms
			in.SSEKMSKeyId = aws.String("fixture-key")
			in.SSEKMSEncryptionContext = aws.String(base64.StdEncoding.EncodeToString([]byte(`{"project":"fixture <&>"}`)))
		}},
	}
	for _, p := range puts {
		var opts []putOpt
		if p.opt != nil {
			opts = append(opts, p.opt)
		}
		if _, err := f.put(b, p.key, body(b+"/"+p.key, p.size), opts...); err != nil {
			return err
		}
	}
	// Multipart: each part is its own DARE stream under a key derived
	// from the object key and the part number.
	if err := f.sseMultipart(b, "sse-s3-multi.bin", func(in *s3.CreateMultipartUploadInput) {
		in.ServerSideEncryption = types.ServerSideEncryptionAes256
	}, 5*mib); err != nil {
		return err
	}
	if err := f.sseMultipart(b, "sse-kms-multi.bin", func(in *s3.CreateMultipartUploadInput) {
		in.ServerSideEncryption = types.ServerSideEncryptionAwsKms
		in.SSEKMSKeyId = aws.String("fixture-key")
	}, 0); err != nil {
		return err
	}
	// SSE-C (the client's key; MinIO takes it over TLS only, so -fill
	// sse runs MinIO over TLS): its adoption is refused.
	alg, ckey, ckeyMD5 := sseCFor("sse-c.txt")
	if _, err := f.put(b, "sse-c.txt", body(b+"/sse-c.txt", 400), func(in *s3.PutObjectInput) {
		in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = alg, ckey, ckeyMD5
	}); err != nil {
		return err
	}
	// A versioned bucket: a key with a plain version and an encrypted
	// one (refused whole), and a plain key.
	const v = "encver"
	if err := f.mkBucket(v, false); err != nil {
		return err
	}
	if err := f.versioning(v, types.BucketVersioningStatusEnabled); err != nil {
		return fmt.Errorf("versioning: %w", err)
	}
	if _, err := f.put(v, "mixed.txt", body(v+"/mixed.txt#1", 100)); err != nil {
		return err
	}
	if _, err := f.put(v, "mixed.txt", body(v+"/mixed.txt#2", 200), func(in *s3.PutObjectInput) {
		in.ServerSideEncryption = types.ServerSideEncryptionAes256
	}); err != nil {
		return err
	}
	if _, err := f.put(v, "plain.txt", body(v+"/plain.txt", 150)); err != nil {
		return err
	}
	// part files (a versioned bucket inlines up to 16 KiB per shard)
	if _, err := f.put(v, "sse-kms-big.bin", body(v+"/sse-kms-big.bin", 40*kib), func(in *s3.PutObjectInput) {
		in.ServerSideEncryption = types.ServerSideEncryptionAwsKms
		in.SSEKMSKeyId = aws.String("fixture-key")
	}); err != nil {
		return err
	}
	return nil
}

// sseMultipart writes a multipart object encrypted as opt asks: parts 1
// (first bytes) and 3 (70 KiB + 3 B), uneven; with first 0, part 2 of
// 70 KiB + 3 B only.
func (f *filler) sseMultipart(bucket, key string, opt func(*s3.CreateMultipartUploadInput), first int) error {
	data := body(bucket+"/"+key, first+70*kib+3)
	in := &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key}
	opt(in)
	cr, err := f.c.CreateMultipartUpload(f.ctx, in)
	if err != nil {
		return fmt.Errorf("create multipart %s: %w", key, err)
	}
	var done []types.CompletedPart
	ranges := [][3]int{{1, 0, first}, {3, first, len(data)}}
	if first == 0 {
		ranges = [][3]int{{2, 0, len(data)}}
	}
	for i, r := range ranges {
		chunk := data[r[1]:r[2]]
		up, err := f.c.UploadPart(f.ctx, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
			PartNumber: aws.Int32(int32(r[0])), Body: bytes.NewReader(chunk), ContentLength: aws.Int64(int64(len(chunk)))})
		if err != nil {
			return fmt.Errorf("upload part %d of %s: %w", i+1, key, err)
		}
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(r[0])), ETag: up.ETag})
	}
	_, err = f.c.CompleteMultipartUpload(f.ctx, &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		return fmt.Errorf("complete multipart %s: %w", key, err)
	}
	return nil
}

// sseCFor gives the SSE-C headers for a key of -fill sse stored with
// SSE-C (its name starts with "sse-c"), nil for the others.
func sseCFor(key string) (alg, ckey, ckeyMD5 *string) {
	if contents != "sse" || len(key) < 5 || key[:5] != "sse-c" {
		return nil, nil, nil
	}
	sum := md5.Sum(sseCKey)
	return aws.String("AES256"), aws.String(base64.StdEncoding.EncodeToString(sseCKey)), aws.String(base64.StdEncoding.EncodeToString(sum[:]))
}
