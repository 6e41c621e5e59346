package main

import (
	"crypto/md5"
	"encoding/base64"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// -fill sse: MinIO with a static KMS key (MINIO_KMS_SECRET_KEY), objects
// stored SSE-S3 and SSE-KMS (that key) beside plain ones, so the
// adoption's refusal of encrypted versions is tested on what MinIO
// really writes. The key is fixed and given here: the fixture holds no
// secret of anyone's. (SSE-C is not written: MinIO takes it over TLS
// only, and the filler talks plain HTTP on loopback; sseCFor is kept for
// a filler that does.)

// sseKMSKey is the static KMS key MinIO runs with for -fill sse.
const sseKMSKey = "fixture-key:" + "c2hhcmRzdG9yZSBtaW5pbyBmaXh0dXJlIGttcyBrZXk="

// sseCKey is the client key of the SSE-C objects (32 bytes).
var sseCKey = []byte("shardstore minio fixture sse-c k")

func sseEnv() []string { return []string{"MINIO_KMS_SECRET_KEY=" + sseKMSKey} }

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

// sseCFor gives the SSE-C headers for a key of -fill sse stored with
// SSE-C (its name starts with "sse-c"), nil for the others.
func sseCFor(key string) (alg, ckey, ckeyMD5 *string) {
	if contents != "sse" || len(key) < 5 || key[:5] != "sse-c" {
		return nil, nil, nil
	}
	sum := md5.Sum(sseCKey)
	return aws.String("AES256"), aws.String(base64.StdEncoding.EncodeToString(sseCKey)), aws.String(base64.StdEncoding.EncodeToString(sum[:]))
}
