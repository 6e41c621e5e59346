package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// compressionEnv turns MinIO's S2 compression on for the "compressed"
// fixture, with its default filters: keys ending in .txt, .bin, ... and
// text/* types are compressed (above 4 KiB), .mp4 never is.
func compressionEnv() []string { return []string{"MINIO_COMPRESSION_ENABLE=on"} }

// setsCompressionEnv turns compression on for the multi-set fixture
// (-fill sets) for keys ending in .s2z only (an extension and a type
// nothing else uses), so its other objects stay linked as before.
func setsCompressionEnv() []string {
	return []string{"MINIO_COMPRESSION_ENABLE=on", "MINIO_COMPRESSION_EXTENSIONS=.s2z",
		"MINIO_COMPRESSION_MIME_TYPES=application/x-shardstore-s2z"}
}

// text is compressible content: numbered lines.
func text(name string, size int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "%s line %d: the quick brown fox jumps over the lazy dog\n", name, i)
	}
	return b.Bytes()[:size]
}

// fillCompressed: an unversioned bucket of compressed objects (inline,
// one block, several blocks, multipart), objects MinIO left uncompressed
// (small, .mp4) and two unfinished uploads: upload.mp4 (parts 1 and 2,
// not compressed: adoptable) and upload.txt (compressed parts).
func (f *filler) fillCompressed() error {
	const b = "comp"
	if err := f.mkBucket(b, false); err != nil {
		return err
	}
	objs := []struct {
		key  string
		data []byte
		typ  string
	}{
		{"tiny.txt", text(b+"/tiny.txt", 100), ""},
		{"small.txt", text(b+"/small.txt", 20*kib), "text/plain"},
		{"one-block.bin", body(b+"/one-block.bin", 200*kib), ""},
		{"text-3m.txt", text(b+"/text-3m.txt", 3*mib+1234), ""},
		{"blocks.bin", body(b+"/blocks.bin", 2*mib+300*kib+5), ""},
		{"video.mp4", body(b+"/video.mp4", mib+77), "video/mp4"},
		{"meta/user.txt", text(b+"/meta/user.txt", 9*kib), "text/csv"},
	}
	for _, o := range objs {
		o := o
		_, err := f.put(b, o.key, o.data, func(in *s3.PutObjectInput) {
			if o.typ != "" {
				in.ContentType = aws.String(o.typ)
			}
			if o.key == "meta/user.txt" {
				in.Metadata = map[string]string{"note": "zusammengepreßt, klein"}
				in.Tagging = aws.String("kind=compressed")
			}
		})
		if err != nil {
			return err
		}
	}
	if err := f.compressedMultipart(b, "multi.txt"); err != nil {
		return err
	}
	for _, u := range []struct {
		key   string
		sizes []int
	}{{"upload.mp4", []int{5 * mib, mib + 3}}, {"upload.txt", []int{100 * kib}}} {
		up, err := f.c.CreateMultipartUpload(f.ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(u.key),
			Metadata: map[string]string{"origin": "unfinished"}})
		if err != nil {
			return fmt.Errorf("create multipart: %w", err)
		}
		for i, size := range u.sizes {
			part := body(fmt.Sprintf("%s/%s#%d", b, u.key, i+1), size)
			if strings.HasSuffix(u.key, ".txt") {
				part = text(fmt.Sprintf("%s/%s#%d", b, u.key, i+1), size)
			}
			if _, err := f.c.UploadPart(f.ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: aws.String(u.key), UploadId: up.UploadId,
				PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(part), ContentLength: aws.Int64(int64(len(part)))}); err != nil {
				return fmt.Errorf("upload part: %w", err)
			}
		}
	}
	return nil
}

// compressedMultipart completes a compressed upload of parts 1 and 2.
func (f *filler) compressedMultipart(bucket, key string) error {
	data := text(bucket+"/"+key, 5*mib+400*kib+9)
	cr, err := f.c.CreateMultipartUpload(f.ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return fmt.Errorf("create multipart: %w", err)
	}
	var done []types.CompletedPart
	for i, r := range [][2]int{{0, 5 * mib}, {5 * mib, len(data)}} {
		chunk := data[r[0]:r[1]]
		up, err := f.c.UploadPart(f.ctx, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(chunk), ContentLength: aws.Int64(int64(len(chunk)))})
		if err != nil {
			return fmt.Errorf("upload part %d: %w", i+1, err)
		}
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: up.ETag})
	}
	_, err = f.c.CompleteMultipartUpload(f.ctx, &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		return fmt.Errorf("complete multipart: %w", err)
	}
	return nil
}

// fillCompressedVersioned: a key whose versions are uncompressed (small)
// and compressed, around a delete marker.
func (f *filler) fillCompressedVersioned() error {
	const b = "compver"
	if err := f.mkBucket(b, false); err != nil {
		return err
	}
	if err := f.versioning(b, types.BucketVersioningStatusEnabled); err != nil {
		return err
	}
	for i, size := range []int{200, 50 * kib, -1, 2*mib + 11} {
		if size < 0 {
			if err := f.del(b, "doc.txt"); err != nil {
				return err
			}
			continue
		}
		if _, err := f.put(b, "doc.txt", text(fmt.Sprintf("%s/doc.txt@%d", b, i), size)); err != nil {
			return err
		}
	}
	return nil
}
