package e2e

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// BenchmarkPutObject measures single-PUT throughput of the real binary
// (4 drives in a temp dir) through aws-sdk-go-v2, payload signed.
func BenchmarkPutObject(b *testing.B) {
	for _, size := range []int{64 << 10, 4 << 20, 32 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			s := startServer(b)
			c := s.root()
			createBucket(b, c, "bench")
			data := pattern(size, 1)
			b.SetBytes(int64(size))
			i := 0
			for b.Loop() {
				if _, err := c.PutObject(ctx(b), &s3.PutObjectInput{Bucket: aws.String("bench"),
					Key: aws.String(fmt.Sprint("k", i%8)), Body: bytes.NewReader(data)}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkGetObject measures GET throughput of the real binary.
func BenchmarkGetObject(b *testing.B) {
	for _, size := range []int{64 << 10, 4 << 20, 32 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			s := startServer(b)
			c := s.root()
			createBucket(b, c, "bench")
			data := pattern(size, 2)
			if _, err := c.PutObject(ctx(b), &s3.PutObjectInput{Bucket: aws.String("bench"), Key: aws.String("obj"), Body: bytes.NewReader(data)}); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size))
			for b.Loop() {
				g, err := c.GetObject(ctx(b), &s3.GetObjectInput{Bucket: aws.String("bench"), Key: aws.String("obj")})
				if err != nil {
					b.Fatal(err)
				}
				if n := len(mustRead(b, g.Body)); n != size {
					b.Fatalf("read %d bytes", n)
				}
			}
		})
	}
}
