//go:build tools

// Package deps pins modules the project uses so `go mod tidy` keeps them
// while the packages that import them are being written.
package deps

import (
	_ "github.com/aws/aws-sdk-go-v2/config"
	_ "github.com/aws/aws-sdk-go-v2/credentials"
	_ "github.com/aws/aws-sdk-go-v2/service/s3"
	_ "github.com/google/uuid"
	_ "github.com/klauspost/reedsolomon"
	_ "github.com/minio/highwayhash"
	_ "github.com/minio/md5-simd"
	_ "github.com/minio/minio-go/v7"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/zeebo/xxh3"
	_ "golang.org/x/sys/unix"
	_ "gonum.org/v1/plot"
)
